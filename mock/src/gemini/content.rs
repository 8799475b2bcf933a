//! One generateContent answer, whole or streamed.

use serde_json::{json, Value};

use crate::anthropic::messages::ToolCall;

/// One generateContent answer, whole or streamed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeminiAnswer {
    pub number: u64,
    pub model: String,
    pub text: String,
    pub function: Option<ToolCall>,
    /// The prompt was blocked (`--refuse`): `promptFeedback` and no candidates.
    pub blocked: bool,
    pub prompt_tokens: u64,
    pub candidates_tokens: u64,
}

impl GeminiAnswer {
    /// `usageMetadata`: the whole count once the answer is complete, the prompt's before.
    pub(crate) fn usage(&self, complete: bool) -> Value {
        let mut usage = json!({"promptTokenCount": self.prompt_tokens});
        if complete && !self.blocked {
            usage["candidatesTokenCount"] = json!(self.candidates_tokens);
            usage["totalTokenCount"] = json!(self.prompt_tokens + self.candidates_tokens);
        } else {
            usage["totalTokenCount"] = json!(self.prompt_tokens);
        }
        usage["promptTokensDetails"] = json!([{"modality": "TEXT", "tokenCount": self.prompt_tokens}]);
        usage
    }

    /// A response object with `parts` (the last one carries `finishReason` and the full usage).
    pub(crate) fn response(&self, parts: Vec<Value>, last: bool) -> Value {
        let mut response = if self.blocked {
            json!({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
                {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
                {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
                {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true},
            ]}})
        } else {
            let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
            if last {
                candidate["finishReason"] = json!("STOP");
            }
            json!({ "candidates": [candidate] })
        };
        response["usageMetadata"] = self.usage(last);
        response["modelVersion"] = json!(self.model);
        response["responseId"] = json!(format!("mock-{}", self.number));
        response
    }

    /// The answer's parts: the text, then the function call.
    pub(crate) fn function_part(&self) -> Option<Value> {
        let function = self.function.as_ref()?;
        let args: Value = serde_json::from_str(&function.input).unwrap_or_else(|_| json!({}));
        Some(json!({"functionCall": {"name": function.name, "args": args}}))
    }

    pub(crate) fn whole(&self) -> Value {
        let text = (!self.text.is_empty() || self.function.is_none()).then(|| json!({ "text": self.text }));
        self.response(text.into_iter().chain(self.function_part()).collect(), true)
    }
}
