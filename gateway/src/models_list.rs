//! The `GET /v1/models` body: every model a caller may ask for, in OpenAI's list shape.

/// The `GET /v1/models` body listing `names`.
pub fn models_list<'a>(names: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let data: Vec<serde_json::Value> = names
        .map(|name| serde_json::json!({"id": name, "object": "model", "created": 1677610602, "owned_by": "openai"}))
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string().into_bytes()
}
