//! Google Cloud Vertex AI: Gemini models through `generateContent` (paths as the Gemini API's,
//! under `…/publishers/google`), Anthropic's models through the Messages API on `:rawPredict` /
//! `:streamRawPredict` (under `…/publishers/anthropic`) with the model in the path and
//! Vertex's `anthropic_version` in the body. Its credential is a service account's token,
//! obtained and refreshed off the hot path (`crate::credentials::tokens`).

use pointwork_core::{Deployment, Dialect, RouteKind};

use super::anthropic::x_api_key;
use super::gemini::{generate_content_path, x_goog_api_key};
use super::{model_path, ProviderAdapter};
use crate::dialect::Untranslatable;
use crate::upstream::target::Target;

/// Vertex AI's version of Anthropic's Messages API.
const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

pub(super) struct VertexAi;

impl ProviderAdapter for VertexAi {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, model: &str, route: RouteKind, stream: bool) {
        if d.dialect() != Dialect::AnthropicMessages {
            return generate_content_path(out, model, route, stream);
        }
        let method = if stream { ":streamRawPredict" } else { ":rawPredict" };
        model_path(out, "/models/", model, method);
    }

    fn names_model_in_path(&self) -> bool {
        true
    }

    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        match d.dialect() {
            Dialect::AnthropicMessages => x_api_key(out, d),
            _ => x_goog_api_key(out, d),
        }
    }

    fn streams_elsewhere(&self) -> bool {
        true
    }

    fn betas(&self) -> Option<crate::request::BetaFilter> {
        Some(vertex_beta)
    }

    fn rewrite_body(&self, d: &Deployment, body: Vec<u8>) -> Result<Vec<u8>, Untranslatable> {
        match d.dialect() {
            Dialect::AnthropicMessages => anthropic_body(&body),
            _ => Ok(body),
        }
    }
}

/// The betas Vertex AI's Messages API takes as `anthropic-beta` (LiteLLM's
/// `anthropic_beta_headers_config.json`, its `vertex_ai` and `vertex_ai_header_only` columns):
/// each by the name Vertex takes it by. Any other is not sent (Vertex refuses a request with a
/// beta it does not know; Claude Code sends several).
fn vertex_beta(beta: &str) -> Option<&'static str> {
    const RENAMED: [(&str, &str); 1] = [("advanced-tool-use-2025-11-20", "tool-search-tool-2025-10-19")];
    const TAKEN: &[&str] = &[
        "afk-mode-2026-01-31",
        "claude-code-20250219",
        "compact-2026-01-12",
        "compact-2026-09-04",
        "computer-use-2025-01-24",
        "computer-use-2025-11-24",
        "context-1m-2025-08-07",
        "context-management-2025-06-27",
        "dangerous-tool-use-2026-09-03",
        "effort-2025-11-24",
        "extended-cache-ttl-2025-04-11",
        "fallback-credit-2026-06-01",
        "fallback-credit-2026-07-01",
        "fine-grained-tool-streaming-2025-05-14",
        "inline-tools-2026-09-15",
        "interleaved-thinking-2025-05-14",
        "mid-conversation-output-config-2026-07-01",
        "mid-conversation-system-clear-at-2026-08-21",
        "mid-conversation-tool-changes-2026-07-01",
        "model-context-window-exceeded-2025-08-26",
        "oauth-2025-04-20",
        "output-128k-2025-02-19",
        "pdfs-2024-09-25",
        "per-turn-control-2026-07-01",
        "prompt-caching-2024-07-31",
        "prompt-caching-scope-2026-01-05",
        "redact-thinking-2026-02-12",
        "server-side-fallback-2026-06-01",
        "structured-outputs-2025-11-13",
        "structured-outputs-2025-12-15",
        "task-budgets-2026-03-13",
        "thinking-binding-controls-2026-08-01",
        "thinking-display-updates-2026-08-18",
        "thinking-token-count-2026-05-13",
        "token-counting-2024-11-01",
        "token-efficient-tools-2025-02-19",
        "tool-examples-2025-10-29",
        "tool-search-tool-2025-10-19",
        "web-search-2025-03-05",
    ];
    RENAMED
        .iter()
        .find(|(from, _)| *from == beta)
        .map(|(_, to)| *to)
        .or_else(|| TAKEN.iter().find(|taken| **taken == beta).copied())
}

/// A Messages body as Vertex AI takes it: no `model` (it is in the path), `anthropic_version`
/// set.
fn anthropic_body(body: &[u8]) -> Result<Vec<u8>, Untranslatable> {
    let mut map = crate::dialect::parse_request(body)?;
    map.remove("model");
    map.insert("anthropic_version".into(), VERTEX_ANTHROPIC_VERSION.into());
    Ok(crate::dialect::json_bytes(&serde_json::Value::Object(map)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::UpstreamHead;

    fn written(betas: &'static [u8]) -> String {
        let head = UpstreamHead {
            fixed: b"",
            extra: [Some(("anthropic-beta", betas)), None],
            betas: Some(vertex_beta),
            trace: None,
        };
        let mut out = Vec::new();
        head.write_to(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn vertex_gets_only_the_betas_it_takes_by_its_names() {
        let claude_code = b"claude-code-20250219, advanced-tool-use-2025-11-20,files-api-2025-04-14,made-up-2030-01-01";
        assert_eq!(written(claude_code), "anthropic-beta: claude-code-20250219,tool-search-tool-2025-10-19\r\n");
        assert_eq!(written(b"files-api-2025-04-14"), "", "no header when none is taken");
    }
}
