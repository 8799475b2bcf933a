//! The value tables the Gemini translators share: finish reasons, reasoning effort → thinking
//! budget, MIME types told from a URL, usage, logprobs, tool-call ids and the parts of a
//! candidate.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Map, Value};

/// The target dialect's name in refusals.
pub(crate) const GEMINI: &str = "Gemini generateContent API";

/// What joins a tool call id and the Gemini `thoughtSignature` of its `functionCall` part
/// (LiteLLM's convention, so that histories written through either gateway replay the same).
pub(crate) const THOUGHT_SEPARATOR: &str = "__thought__";

/// Gemini `finishReason` → OpenAI `finish_reason`. Blocked output of any kind is
/// `content_filter`; everything else (STOP, MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE,
/// FINISH_REASON_UNSPECIFIED and reasons a later API version adds) is `stop`.
pub(crate) fn finish_reason_for(reason: &str) -> &'static str {
    match reason {
        "MAX_TOKENS" => "length",
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => "content_filter",
        _ => "stop",
    }
}

/// The finish reason of a choice: `tool_calls` when it called functions and stopped normally.
pub(crate) fn choice_finish_reason(reason: &str, called_functions: bool) -> &'static str {
    match finish_reason_for(reason) {
        "stop" if called_functions => "tool_calls",
        other => other,
    }
}

/// OpenAI `reasoning_effort` → Gemini 2.5 `thinkingConfig.thinkingBudget` (LiteLLM's budgets;
/// `minimal` is 512, the smallest budget every Gemini 2.5 model accepts). `None` for an unknown
/// effort; `none` is budget 0 (thinking off).
pub(crate) fn thinking_budget_for(effort: &str) -> Option<u64> {
    match effort {
        "none" => Some(0),
        "minimal" => Some(512),
        "low" => Some(1024),
        "medium" => Some(2048),
        "high" => Some(4096),
        "xhigh" => Some(8192),
        _ => None,
    }
}

/// Where the Gemini API's Files API keeps uploads: such a URI needs no MIME type.
pub(crate) const FILES_API_PREFIX: &str = "https://generativelanguage.googleapis.com/";

/// The MIME type of a media URL told from its path's extension (LiteLLM's table), `None` when
/// the extension says nothing. The query and fragment are not part of the path.
pub(crate) fn mime_type_for_url(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    let mime = match extension.as_str() {
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        "mp4" => "video/mp4",
        "mov" => "video/mov",
        "mpeg" | "mpg" => "video/mpeg",
        "mp3" => "audio/mp3",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "txt" => "text/plain",
        _ => return None,
    };
    Some(mime)
}

/// A suffix unique in this process for ids the upstream did not give (`chatcmpl-…`, `call_…`).
pub(crate) fn fresh_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{:x}{:04x}", nanos as u64, COUNTER.fetch_add(1, Ordering::Relaxed) & 0xffff)
}

/// The `n`-th tool call id of a response: `call_<base>_<n>`, with `__thought__<signature>` when
/// the `functionCall` part was signed (Gemini 3 refuses a replayed call without its signature).
pub(crate) fn tool_call_id(base: &str, n: usize, signature: Option<&str>) -> String {
    match signature.filter(|s| !s.is_empty()) {
        Some(signature) => format!("call_{base}_{n}{THOUGHT_SEPARATOR}{signature}"),
        None => format!("call_{base}_{n}"),
    }
}

/// The parts of one candidate's content, read.
#[derive(Debug, Default)]
pub(crate) struct CandidateParts {
    /// Text parts joined; `None` when there was none (empty ones, e.g. a part holding only a
    /// `thoughtSignature`, do not count).
    pub text: Option<String>,
    /// `thought: true` text parts joined.
    pub reasoning: Option<String>,
    pub calls: Vec<FunctionCall>,
}

#[derive(Debug)]
pub(crate) struct FunctionCall {
    pub name: String,
    /// `args` as a JSON string (`{}` when absent).
    pub arguments: String,
    pub signature: Option<String>,
}

/// Reads `candidate.content.parts`. Parts other than text and functionCall (inline data, code
/// execution results: never asked for by a translated request) carry nothing OpenAI can show.
pub(crate) fn read_parts(candidate: &Value) -> CandidateParts {
    let mut read = CandidateParts::default();
    let parts = candidate.pointer("/content/parts").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for part in parts {
        if let Some(call) = part.get("functionCall") {
            let arguments = match call.get("args") {
                None | Some(Value::Null) => "{}".to_string(),
                Some(args) => args.to_string(),
            };
            let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let signature = part.get("thoughtSignature").and_then(Value::as_str).map(str::to_string);
            read.calls.push(FunctionCall { name, arguments, signature });
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            let into =
                if part.get("thought") == Some(&Value::Bool(true)) { &mut read.reasoning } else { &mut read.text };
            if !text.is_empty() {
                into.get_or_insert_with(String::new).push_str(text);
            }
        }
    }
    read
}

/// A candidate's `logprobsResult` as OpenAI's `logprobs` (`{"content":[…]}`), `None` without.
pub(crate) fn logprobs_to_openai(candidate: &Value) -> Option<Value> {
    let result = candidate.get("logprobsResult")?;
    let chosen = result.get("chosenCandidates")?.as_array()?;
    let top = result.get("topCandidates").and_then(Value::as_array);
    let entry = |c: &Value| {
        let token = c.get("token").and_then(Value::as_str).unwrap_or("");
        json!({"token": token, "logprob": c.get("logProbability").cloned().unwrap_or(json!(0.0)),
            "bytes": token.as_bytes()})
    };
    let content: Vec<Value> = chosen
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut e = entry(c);
            let alternatives = top.and_then(|t| t.get(i)).and_then(|t| t.get("candidates")).and_then(Value::as_array);
            e["top_logprobs"] = Value::Array(alternatives.map_or_else(Vec::new, |a| a.iter().map(entry).collect()));
            e
        })
        .collect();
    Some(json!({"content": content}))
}

/// Token counts from Gemini's `usageMetadata`, in OpenAI's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// `promptTokenCount` + `toolUsePromptTokenCount` (cached tokens included, as OpenAI counts).
    pub prompt: u64,
    /// Answer and thinking tokens.
    pub completion: u64,
    /// `cachedContentTokenCount`.
    pub cached: u64,
    /// `thoughtsTokenCount`.
    pub reasoning: u64,
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl Usage {
    pub(crate) fn from_gemini(meta: &Value) -> Usage {
        let prompt = count(meta, "promptTokenCount").saturating_add(count(meta, "toolUsePromptTokenCount"));
        let (answer, thoughts, total) =
            (count(meta, "candidatesTokenCount"), count(meta, "thoughtsTokenCount"), count(meta, "totalTokenCount"));
        // Some Vertex versions count thoughts inside candidatesTokenCount; the total then adds up
        // without them (LiteLLM's check).
        let thoughts_included = thoughts > 0 && total > 0 && prompt.saturating_add(answer) == total;
        let completion = if thoughts_included { answer } else { answer.saturating_add(thoughts) };
        Usage { prompt, completion, cached: count(meta, "cachedContentTokenCount"), reasoning: thoughts }
    }

    pub(crate) fn to_openai(self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt.saturating_add(self.completion),
            "prompt_tokens_details": {"cached_tokens": self.cached},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning},
        })
    }
}

/// Merges a chunk's `usageMetadata` into what the stream saw so far (later counts win).
pub(crate) fn merge_usage(seen: &mut Option<Map<String, Value>>, meta: Option<&Value>) {
    if let Some(Value::Object(fields)) = meta {
        let merged = seen.get_or_insert_with(Map::new);
        for (key, value) in fields {
            if value.is_number() {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons() {
        let want = [
            ("STOP", "stop"),
            ("MAX_TOKENS", "length"),
            ("SAFETY", "content_filter"),
            ("RECITATION", "content_filter"),
            ("BLOCKLIST", "content_filter"),
            ("PROHIBITED_CONTENT", "content_filter"),
            ("SPII", "content_filter"),
            ("IMAGE_SAFETY", "content_filter"),
            ("MALFORMED_FUNCTION_CALL", "stop"),
            ("OTHER", "stop"),
            ("SOMETHING_NEW", "stop"),
        ];
        for (gemini, openai) in want {
            assert_eq!(finish_reason_for(gemini), openai, "{gemini}");
        }
        assert_eq!(choice_finish_reason("STOP", true), "tool_calls");
        assert_eq!(choice_finish_reason("MAX_TOKENS", true), "length");
        assert_eq!(choice_finish_reason("SAFETY", true), "content_filter");
    }

    #[test]
    fn mime_types_from_urls() {
        assert_eq!(mime_type_for_url("https://x.test/a/b.JPG?sig=1.png"), Some("image/jpeg"));
        assert_eq!(mime_type_for_url("gs://bucket/doc.pdf"), Some("application/pdf"));
        assert_eq!(mime_type_for_url("https://x.test/image"), None);
        assert_eq!(mime_type_for_url("https://x.test/a.exe"), None);
    }

    #[test]
    fn usage_with_thoughts_apart_and_included() {
        let apart = json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 7,
            "cachedContentTokenCount": 4, "totalTokenCount": 22});
        let u = Usage::from_gemini(&apart);
        assert_eq!(u, Usage { prompt: 10, completion: 12, cached: 4, reasoning: 7 });
        assert_eq!(u.to_openai()["total_tokens"], 22);
        let included =
            json!({"promptTokenCount": 10, "candidatesTokenCount": 12, "thoughtsTokenCount": 7, "totalTokenCount": 22});
        assert_eq!(Usage::from_gemini(&included).completion, 12);
        let tools = json!({"promptTokenCount": 10, "toolUsePromptTokenCount": 3, "candidatesTokenCount": 1});
        assert_eq!(Usage::from_gemini(&tools).prompt, 13);
    }

    #[test]
    fn ids_carry_signatures() {
        assert_eq!(tool_call_id("r1", 0, None), "call_r1_0");
        assert_eq!(tool_call_id("r1", 2, Some("c2ln")), "call_r1_2__thought__c2ln");
        assert_eq!(tool_call_id("r1", 2, Some("")), "call_r1_2");
        assert_ne!(fresh_suffix(), fresh_suffix());
    }
}
