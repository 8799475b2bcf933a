//! What a Responses `response` object repeats from its request, read once per request.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::tools::ToolKinds;

/// The request's fields a response echoes, its id, creation time and model, and its tool kinds
/// (which answer tool calls are custom or local-shell calls).
#[derive(Debug, Clone)]
pub struct ResponseEcho {
    id: String,
    /// The id without its `resp_` prefix: the stem of the item ids.
    id_stem: String,
    created_at: u64,
    model: String,
    /// The echoed request fields, defaults filled in.
    fields: Map<String, Value>,
    pub(crate) tool_kinds: ToolKinds,
}

/// Echoed request fields, always present.
const ECHOED: [&str; 12] = [
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "max_output_tokens",
    "previous_response_id",
    "metadata",
    "text",
    "reasoning",
    "truncation",
];

/// An echoed field's value when the request did not set it (OpenAI's defaults).
fn echoed_default(key: &str) -> Value {
    match key {
        "tools" => json!([]),
        "tool_choice" => json!("auto"),
        "parallel_tool_calls" => json!(true),
        "metadata" => json!({}),
        "text" => json!({"format": {"type": "text"}}),
        "reasoning" => json!({"effort": null, "summary": null}),
        "truncation" => json!("disabled"),
        _ => Value::Null,
    }
}

/// Echoed when the request set them, absent otherwise.
const ECHOED_IF_SET: [&str; 5] = ["store", "user", "safety_identifier", "prompt_cache_key", "service_tier"];

impl ResponseEcho {
    /// `id` ("resp_…", chosen by the gateway), `created_at` in Unix seconds, `model` the name
    /// the client asked for. A body that is not a JSON object echoes the defaults.
    pub fn new(request_body: &[u8], id: &str, created_at: u64, model: &str) -> ResponseEcho {
        // The members as they are written: only the echoed ones are decoded (not `input`).
        let members: HashMap<Cow<'_, str>, &RawValue> = serde_json::from_slice(request_body).unwrap_or_default();
        let member = |key: &str| {
            let raw = members.get(key)?;
            serde_json::from_str::<Value>(raw.get()).ok().filter(|v| !v.is_null())
        };
        let mut fields = Map::new();
        for key in ECHOED {
            fields.insert(key.into(), member(key).unwrap_or_else(|| echoed_default(key)));
        }
        for key in ECHOED_IF_SET {
            if let Some(value) = member(key) {
                fields.insert(key.into(), value);
            }
        }
        if !fields["instructions"].is_string() {
            fields.insert("instructions".into(), Value::Null);
        }
        let tool_kinds = ToolKinds::of_request_tools(fields.get("tools"));
        ResponseEcho {
            id: id.to_string(),
            id_stem: id.strip_prefix("resp_").unwrap_or(id).to_string(),
            created_at,
            model: model.to_string(),
            fields,
            tool_kinds,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id of the item at `output_index`, e.g. `msg_<stem>_0`.
    pub(crate) fn item_id(&self, prefix: &str, output_index: usize) -> String {
        format!("{prefix}_{}_{output_index}", self.id_stem)
    }

    /// A `call_id` for a tool call the upstream sent without an id.
    pub(crate) fn call_id(&self, output_index: usize) -> String {
        format!("call_{}_{output_index}", self.id_stem)
    }

    /// The `response` object: `status`, `output`, `usage` (`None`: absent, as while in progress),
    /// `error` and `incomplete_details` as given, the rest echoed.
    pub(crate) fn response(
        &self,
        status: &str,
        output: Vec<Value>,
        usage: Option<Value>,
        error: Value,
        incomplete: Value,
    ) -> Value {
        let mut response = self.fields.clone();
        response.insert("id".into(), self.id.clone().into());
        response.insert("object".into(), "response".into());
        response.insert("created_at".into(), self.created_at.into());
        response.insert("status".into(), status.into());
        response.insert("background".into(), false.into());
        response.insert("model".into(), self.model.clone().into());
        response.insert("output".into(), Value::Array(output));
        response.insert("error".into(), error);
        response.insert("incomplete_details".into(), incomplete);
        if let Some(usage) = usage {
            response.insert("usage".into(), usage);
        }
        Value::Object(response)
    }
}
