//! The LLM classifier (`classifier_type: llm`): a small chat call to a model group of the
//! model list, asking which tier the ask needs, within `classifier_llm_config.timeout_ms`. Its
//! deployment is chosen by the pick (cooldowns and all); the call goes on a connection of its
//! own and its answer is read whole. Any failure — nothing to pick, a timeout, an error status,
//! an answer that names no tier — is the caller's cue to fall back (`classifier_fallback`).

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::complexity::{LlmClassifier, Tier};
use pointwork_core::{Dialect, PickRequest, RequestFacts, RouteKind};
use serde::Deserialize;
use serde_json::json;

use crate::http::write;
use crate::request::ANTHROPIC_VERSION;
use crate::routes::Routes;
use crate::shard::Shard;
use crate::upstream::fetch::{send, Client, FetchError};

/// The most of the ask the classifier is shown (LiteLLM's context budget is 8 000 characters).
const MAX_ASK_CHARS: usize = 8_000;
/// The largest answer read.
const MAX_ANSWER: usize = 1 << 20;
/// Enough for `{"tier": "REASONING"}`.
const MAX_TOKENS: u32 = 32;

const INSTRUCTIONS: &str = "You route requests to language models. Classify how demanding the user's \
request is. Answer with JSON only: {\"tier\": \"SIMPLE\"} for greetings, small talk and short factual \
questions; \"MEDIUM\" for ordinary explanations, summaries and small code changes; \"COMPLEX\" for \
system design, debugging, substantial code and technical analysis; \"REASONING\" for proofs, \
multi-step reasoning, planning and hard trade-offs.";

/// Why the classifier gave no tier (LiteLLM's `classifier_failure_reason` values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    Timeout,
    /// Nothing to pick, a connection or status failure.
    Error(String),
    /// An answer that names no tier.
    InvalidResponse,
}

impl Failure {
    pub fn reason(&self) -> &'static str {
        match self {
            Failure::Timeout => "timeout",
            Failure::Error(_) => "classifier_error",
            Failure::InvalidResponse => "invalid_response",
        }
    }
}

/// Asks `llm.model` for the tier of `ask`.
pub async fn classify(shard: &Shard, routes: &Arc<Routes>, llm: &LlmClassifier, ask: &str) -> Result<Tier, Failure> {
    let facts = RequestFacts::new(RouteKind::ChatCompletions, llm.model.clone());
    let picked = shard.pick(routes, &PickRequest::new(&llm.model, &facts), Instant::now());
    let idx = picked.map_err(|e| Failure::Error(e.to_string()))?.deployment;
    let d = routes.snapshot.deployment(idx);
    let upstream = &routes.upstreams[idx.get()];
    let ask = cut(ask, MAX_ASK_CHARS);
    let dialect = d.dialect();
    let (route, body) = match dialect {
        Dialect::OpenAiChat => (
            RouteKind::ChatCompletions,
            json!({"model": d.upstream_model, "max_tokens": MAX_TOKENS, "temperature": 0,
                "messages": [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": ask}]}),
        ),
        Dialect::AnthropicMessages => (
            RouteKind::Messages,
            json!({"model": d.upstream_model, "max_tokens": MAX_TOKENS, "system": INSTRUCTIONS,
                "messages": [{"role": "user", "content": ask}]}),
        ),
        Dialect::Gemini | Dialect::BedrockConverse | Dialect::OpenAiResponses => {
            let why = format!("the classifier model's deployment {} is not OpenAI-compatible or Anthropic", d.id);
            return Err(Failure::Error(why));
        }
    };
    let body = body.to_string();
    let mut request = upstream.head_for(route).to_vec();
    if dialect == Dialect::AnthropicMessages {
        write::header(&mut request, "anthropic-version", ANTHROPIC_VERSION.as_bytes());
    }
    write::header_decimal(&mut request, "content-length", body.len() as u64);
    write::header(&mut request, "connection", b"close");
    write::end_head(&mut request);
    request.extend_from_slice(body.as_bytes());
    let client = Client { tls: Ok(shard.upstream.tls.clone()), timeout: llm.timeout, max_body: MAX_ANSWER };
    let answer = send(&client, &upstream.target, request).await.map_err(|e| match e {
        FetchError::Timeout(_) => Failure::Timeout,
        other => Failure::Error(other.to_string()),
    })?;
    tier_of_answer(dialect, &answer).ok_or(Failure::InvalidResponse)
}

/// The first `max` characters of `s`.
fn cut(s: &str, max: usize) -> &str {
    s.char_indices().nth(max).map_or(s, |(at, _)| &s[..at])
}

#[derive(Deserialize)]
struct ChatAnswer {
    choices: Vec<Choice>,
}
#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}
#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}
#[derive(Deserialize)]
struct MessagesAnswer {
    content: Vec<Block>,
}
#[derive(Deserialize)]
struct Block {
    text: Option<String>,
}
#[derive(Deserialize)]
struct Verdict {
    tier: String,
}

/// The tier an answer names: a JSON object's `tier` (also inside surrounding text or a code
/// fence), else the whole text as a tier name.
fn tier_of_answer(dialect: Dialect, answer: &[u8]) -> Option<Tier> {
    let text = match dialect {
        Dialect::OpenAiChat => {
            serde_json::from_slice::<ChatAnswer>(answer).ok()?.choices.into_iter().next()?.message.content?
        }
        Dialect::AnthropicMessages => {
            serde_json::from_slice::<MessagesAnswer>(answer).ok()?.content.into_iter().find_map(|b| b.text)?
        }
        Dialect::Gemini | Dialect::BedrockConverse | Dialect::OpenAiResponses => return None,
    };
    tier_of_text(&text)
}

fn tier_of_text(text: &str) -> Option<Tier> {
    if let (Some(open), Some(close)) = (text.find('{'), text.rfind('}')) {
        if open < close {
            if let Ok(v) = serde_json::from_str::<Verdict>(&text[open..=close]) {
                return Tier::parse(&v.tier);
            }
        }
    }
    Tier::parse(text.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == '`'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_name_a_tier_or_none() {
        assert_eq!(tier_of_text(r#"{"tier": "COMPLEX"}"#), Some(Tier::Complex));
        assert_eq!(tier_of_text("```json\n{\"tier\":\"simple\",\"why\":\"greeting\"}\n```"), Some(Tier::Simple));
        assert_eq!(tier_of_text(" REASONING. "), Some(Tier::Reasoning));
        assert_eq!(tier_of_text(r#"{"tier": "EXPERT"}"#), None);
        assert_eq!(tier_of_text("I think it is quite hard"), None);
        let chat = br#"{"choices":[{"message":{"role":"assistant","content":"{\"tier\":\"MEDIUM\"}"}}]}"#;
        assert_eq!(tier_of_answer(Dialect::OpenAiChat, chat), Some(Tier::Medium));
        let messages = br#"{"content":[{"type":"text","text":"COMPLEX"}]}"#;
        assert_eq!(tier_of_answer(Dialect::AnthropicMessages, messages), Some(Tier::Complex));
        assert_eq!(tier_of_answer(Dialect::OpenAiChat, b"<html>"), None);
    }

    #[test]
    fn the_ask_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "hé");
        assert_eq!(cut("hi", 8), "hi");
    }
}
