//! One Converse answer: the same for the whole body and for the stream.

use serde_json::{json, Value};

use crate::anthropic::messages::ToolCall;

/// One Converse answer: the same for the whole body and for the stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConverseAnswer {
    pub number: u64,
    /// The text block; none when empty.
    pub text: String,
    pub tool: Option<ToolCall>,
    pub stop_reason: &'static str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
}

impl ConverseAnswer {
    pub(crate) fn tool_use_id(&self) -> String {
        format!("tooluse_mock_{}", self.number)
    }

    pub(crate) fn usage(&self) -> Value {
        json!({
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "totalTokens": self.input_tokens + self.output_tokens,
        })
    }

    /// Converse's whole answer.
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(json!({"text": self.text}));
        }
        if let Some(tool) = &self.tool {
            let input: Value = serde_json::from_str(&tool.input).unwrap_or_else(|_| json!({}));
            content.push(json!({"toolUse": {"toolUseId": self.tool_use_id(), "name": tool.name, "input": input}}));
        }
        json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": self.stop_reason,
            "usage": self.usage(),
            "metrics": {"latencyMs": self.latency_ms},
        })
        .to_string()
        .into_bytes()
    }
}
