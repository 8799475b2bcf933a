//! The value tables both directions share: stop reasons, reasoning effort ⇄ thinking budget,
//! `data:` URIs and token usage.

use serde_json::{json, Value};

/// Anthropic `stop_reason` → OpenAI `finish_reason` (LiteLLM's table).
pub(crate) fn finish_reason_for(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        // end_turn, stop_sequence, pause_turn and whatever a later API version adds.
        _ => "stop",
    }
}

/// OpenAI `finish_reason` → Anthropic `stop_reason`. OpenAI does not say whether `stop` came from
/// a stop sequence, so it is always `end_turn`.
pub(crate) fn stop_reason_for(finish_reason: &str) -> &'static str {
    match finish_reason {
        "length" => "max_tokens",
        "tool_calls" | "function_call" => "tool_use",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

/// The smallest thinking budget Anthropic accepts.
pub(crate) const MIN_THINKING_BUDGET: u64 = 1024;

/// Anthropic `thinking.budget_tokens` → OpenAI `reasoning_effort` (LiteLLM's thresholds).
pub(crate) fn effort_for_budget(budget: u64) -> &'static str {
    match budget {
        4096.. => "high",
        2048.. => "medium",
        1024.. => "low",
        _ => "minimal",
    }
}

/// OpenAI `reasoning_effort` → Anthropic `thinking.budget_tokens`; `None` for an unknown effort.
/// `none` is handled by the caller (thinking disabled).
pub(crate) fn budget_for_effort(effort: &str) -> Option<u64> {
    match effort {
        "minimal" | "low" => Some(MIN_THINKING_BUDGET),
        "medium" => Some(2048),
        "high" => Some(4096),
        "xhigh" => Some(8192),
        _ => None,
    }
}

/// `data:<media type>;base64,<data>` → (media type, data); `None` for anything else.
pub(crate) fn parse_data_uri(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    (!media_type.is_empty()).then_some((media_type, data))
}

/// Token counts in the terms both sides can express.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// All prompt tokens (OpenAI's `prompt_tokens`): Anthropic's input, cache-write and
    /// cache-read tokens together.
    pub prompt: u64,
    /// Prompt tokens read from the cache.
    pub cached: u64,
    /// Prompt tokens written to the cache (Anthropic only).
    pub cache_written: u64,
    pub completion: u64,
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl Tokens {
    /// From an OpenAI `usage` object.
    pub(crate) fn from_openai(usage: &Value) -> Tokens {
        let cached = usage.get("prompt_tokens_details").map_or(0, |d| count(d, "cached_tokens"));
        Tokens {
            prompt: count(usage, "prompt_tokens"),
            cached,
            cache_written: 0,
            completion: count(usage, "completion_tokens"),
        }
    }

    /// From an Anthropic `usage` object.
    pub(crate) fn from_anthropic(usage: &Value) -> Tokens {
        let (read, written) = (count(usage, "cache_read_input_tokens"), count(usage, "cache_creation_input_tokens"));
        Tokens {
            prompt: count(usage, "input_tokens").saturating_add(read).saturating_add(written),
            cached: read,
            cache_written: written,
            completion: count(usage, "output_tokens"),
        }
    }

    /// Anthropic's uncached input tokens.
    pub(crate) fn input(&self) -> u64 {
        self.prompt.saturating_sub(self.cached).saturating_sub(self.cache_written)
    }

    pub(crate) fn to_openai(self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt.saturating_add(self.completion),
            "prompt_tokens_details": {"cached_tokens": self.cached},
        })
    }

    pub(crate) fn to_anthropic(self) -> Value {
        json!({
            "input_tokens": self.input(),
            "cache_creation_input_tokens": self.cache_written,
            "cache_read_input_tokens": self.cached,
            "output_tokens": self.completion,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_both_ways() {
        for (anthropic, openai) in
            [("end_turn", "stop"), ("max_tokens", "length"), ("tool_use", "tool_calls"), ("refusal", "content_filter")]
        {
            assert_eq!(finish_reason_for(anthropic), openai);
            assert_eq!(stop_reason_for(openai), anthropic);
        }
        assert_eq!(finish_reason_for("stop_sequence"), "stop");
        assert_eq!(finish_reason_for("something_new"), "stop");
        assert_eq!(stop_reason_for("function_call"), "tool_use");
    }

    #[test]
    fn efforts_and_budgets() {
        for effort in ["low", "medium", "high"] {
            assert_eq!(effort_for_budget(budget_for_effort(effort).unwrap()), effort);
        }
        assert_eq!(effort_for_budget(100), "minimal");
        assert_eq!(effort_for_budget(50_000), "high");
        assert_eq!(budget_for_effort("minimal"), Some(MIN_THINKING_BUDGET));
        assert_eq!(budget_for_effort("none"), None);
    }

    #[test]
    fn data_uris() {
        assert_eq!(parse_data_uri("data:image/png;base64,AAAA"), Some(("image/png", "AAAA")));
        assert_eq!(parse_data_uri("data:;base64,AAAA"), None);
        assert_eq!(parse_data_uri("data:image/png,AAAA"), None);
        assert_eq!(parse_data_uri("https://x/y.png"), None);
    }

    #[test]
    fn usage_both_ways() {
        let anthropic = json!({"input_tokens": 100, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5, "output_tokens": 7});
        let t = Tokens::from_anthropic(&anthropic);
        assert_eq!((t.prompt, t.cached, t.input(), t.completion), (125, 20, 100, 7));
        let openai = t.to_openai();
        assert_eq!(openai["total_tokens"], 132);
        assert_eq!(openai["prompt_tokens_details"]["cached_tokens"], 20);
        let back = Tokens::from_openai(&openai).to_anthropic();
        assert_eq!(back["input_tokens"], 105);
        assert_eq!(back["cache_read_input_tokens"], 20);
        assert_eq!(Tokens::from_openai(&json!({"prompt_tokens": "x"})), Tokens::default());
    }
}
