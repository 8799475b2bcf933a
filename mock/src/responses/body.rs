//! The response object of the Responses API and its output items, in the shape of the official
//! SDK's `openai.types.responses` (`Response`, `ResponseOutputMessage`,
//! `ResponseFunctionToolCall`, `ResponseUsage`).

use serde_json::{json, Map, Value};

/// One output item of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OutputItem {
    /// An assistant message with one `output_text` part.
    Message { id: String, text: String },
    /// A call of a function tool; `arguments` is a JSON object text.
    FunctionCall { id: String, call_id: String, name: String, arguments: String },
}

impl OutputItem {
    /// The item whole (`done`), or as `response.output_item.added` shows it: in progress, no
    /// content, empty arguments.
    pub(crate) fn json(&self, done: bool) -> Value {
        let status = if done { "completed" } else { "in_progress" };
        match self {
            OutputItem::Message { id, text } => {
                let content = if done { vec![output_text(text)] } else { Vec::new() };
                json!({"id": id, "type": "message", "status": status, "content": content, "role": "assistant"})
            }
            OutputItem::FunctionCall { id, call_id, name, arguments } => json!({
                "id": id, "type": "function_call", "status": status,
                "arguments": if done { arguments.as_str() } else { "" }, "call_id": call_id, "name": name,
            }),
        }
    }

    /// The text a message's part ends as, or a call's arguments.
    pub(crate) fn content(&self) -> &str {
        match self {
            OutputItem::Message { text, .. } => text,
            OutputItem::FunctionCall { arguments, .. } => arguments,
        }
    }

    pub(crate) fn id(&self) -> &str {
        match self {
            OutputItem::Message { id, .. } | OutputItem::FunctionCall { id, .. } => id,
        }
    }
}

/// An `output_text` content part.
pub(crate) fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text})
}

/// An answer: the same for the whole body, the stream's events and what is kept.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResponseAnswer {
    /// `resp_mock_N`.
    pub id: String,
    pub created_at: u64,
    pub model: String,
    pub previous_response_id: Option<String>,
    pub store: bool,
    pub output: Vec<OutputItem>,
    /// Prompt tokens: the body's bytes / 4 (the mock's estimate).
    pub input_tokens: u64,
    /// The request fields a response repeats (see `request.rs`).
    pub echoed: Map<String, Value>,
}

impl ResponseAnswer {
    /// Output tokens: the output's bytes / 4, rounded up.
    pub(crate) fn output_tokens(&self) -> u64 {
        let bytes: usize = self.output.iter().map(|item| item.content().len()).sum();
        bytes.div_ceil(4) as u64
    }

    /// The response object: `completed` with its output and usage, or (`completed` false) as
    /// `response.created` shows it, in progress with neither.
    pub(crate) fn json(&self, completed: bool) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), Value::from(self.id.as_str()));
        object.insert("object".into(), Value::from("response"));
        object.insert("created_at".into(), Value::from(self.created_at));
        object.insert("status".into(), Value::from(if completed { "completed" } else { "in_progress" }));
        object.insert("background".into(), Value::Bool(false));
        object.insert("completed_at".into(), if completed { Value::from(self.created_at) } else { Value::Null });
        object.insert("error".into(), Value::Null);
        object.insert("incomplete_details".into(), Value::Null);
        object.insert("model".into(), Value::from(self.model.as_str()));
        let output = if completed { self.output.iter().map(|item| item.json(true)).collect() } else { Vec::new() };
        object.insert("output".into(), Value::Array(output));
        object.insert(
            "previous_response_id".into(),
            self.previous_response_id.as_deref().map_or(Value::Null, Value::from),
        );
        object.insert("store".into(), Value::Bool(self.store));
        object.extend(self.echoed.clone());
        object.insert("usage".into(), if completed { self.usage() } else { Value::Null });
        object.insert("user".into(), Value::Null);
        Value::Object(object)
    }

    fn usage(&self) -> Value {
        let output_tokens = self.output_tokens();
        json!({
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": self.input_tokens + output_tokens,
        })
    }
}
