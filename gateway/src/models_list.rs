//! The `GET /v1/models` body: every model a caller may ask for, in OpenAI's list shape — or,
//! for an Anthropic client, in Anthropic's, with each model's context window.

use pointwork_core::{Resolution, Snapshot};
use serde_json::{json, Value};

/// The `GET /v1/models` body listing `names`.
pub fn models_list<'a>(names: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let data: Vec<serde_json::Value> = names
        .map(|name| serde_json::json!({"id": name, "object": "model", "created": 1677610602, "owned_by": "openai"}))
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string().into_bytes()
}

/// The models of `openai_list` (a [`models_list`] body) in Anthropic's list shape, each with
/// `max_input_tokens` and `max_tokens` (its output: the deployments' `max_output_tokens`) as
/// the smallest of its group's deployments
/// state them, so that an agent (Claude Code) knows the window of a gateway model name.
pub fn anthropic_models_list(openai_list: &[u8], snap: &Snapshot) -> Vec<u8> {
    let listed: Value = serde_json::from_slice(openai_list).unwrap_or(Value::Null);
    let names = listed["data"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str());
    let data: Vec<Value> = names
        .map(|name| {
            let mut model = json!({"type": "model", "id": name, "display_name": name,
                "created_at": "2024-01-01T00:00:00Z"});
            let (input, output) = window(snap, name);
            if let Some(input) = input {
                model["max_input_tokens"] = input.into();
            }
            if let Some(output) = output {
                model["max_tokens"] = output.into();
            }
            model
        })
        .collect();
    let id_at = |i: Option<&Value>| i.map_or(Value::Null, |m| m["id"].clone());
    let body = json!({"data": data, "has_more": false, "first_id": id_at(data.first()), "last_id": id_at(data.last())});
    body.to_string().into_bytes()
}

/// The smallest input window and output limit the deployments of `name`'s group state.
fn window(snap: &Snapshot, name: &str) -> (Option<u64>, Option<u64>) {
    let Resolution::Group { group, .. } = snap.resolve(name) else { return (None, None) };
    let members = snap.group(group).members.iter().map(|&idx| snap.deployment(idx));
    members.fold((None, None), |(input, output), d| {
        let least = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (least(input, d.max_input_tokens), least(output, d.max_output_tokens))
    })
}
