//! InvokeModel for Bedrock's embedding models: Amazon Titan (`amazon.titan-embed-text-v1`,
//! `…-v2:0`: `{"inputText"}` → `{"embedding", "inputTextTokenCount"}`) and Cohere
//! (`cohere.embed-*`: `{"texts", "input_type"}` → `{"embeddings", "id", "response_type", "texts"}`),
//! their bodies checked with Bedrock's `Malformed input request` sentences.

use serde_json::{json, Value};

use crate::dispatch::call::{embedding_vector, Call};

const COHERE_INPUT_TYPES: [&str; 4] = ["search_document", "search_query", "classification", "clustering"];

fn malformed(detail: &str) -> String {
    format!("Malformed input request: {detail}, please reformat your input and try again.")
}

/// Writes InvokeModel's answer for `model` (decoded): the embedding or a `ValidationException`.
pub(crate) fn invoke(call: &Call<'_>, model: &str, out: &mut Vec<u8>) {
    let answer = match serde_json::from_slice::<Value>(call.body) {
        Err(_) => Err(malformed("#: expected type: JSONObject")),
        Ok(body) if model.starts_with("amazon.titan-embed") => titan(model, &body),
        Ok(body) if model.starts_with("cohere.embed") => cohere(call.number, &body),
        Ok(_) => Err(format!(
            "The mock serves InvokeModel for embedding models only (amazon.titan-embed-*, cohere.embed-*), not {model}."
        )),
    };
    match answer {
        Ok(body) => call.bedrock_write(out, 200, body.to_string().as_bytes(), ""),
        Err(message) => call.bedrock_error(out, 400, "ValidationException", &message),
    };
}

/// Titan: one embedding of `dimensions` floats (v2: 256, 512 or 1024, default 1024; v1: 1536).
fn titan(model: &str, body: &Value) -> Result<Value, String> {
    let text = match body.get("inputText") {
        None => return Err(malformed("#: required key [inputText] not found")),
        Some(Value::String(text)) => text,
        Some(_) => return Err(malformed("#/inputText: expected type: String, found: JSONObject")),
    };
    if text.is_empty() {
        return Err(malformed("#/inputText: expected minLength: 1, actual: 0"));
    }
    let v2 = model.contains("-v2");
    let dimensions = match body.get("dimensions") {
        None => {
            if v2 {
                1024
            } else {
                1536
            }
        }
        Some(value) if v2 => match value.as_u64() {
            Some(dimensions @ (256 | 512 | 1024)) => dimensions as usize,
            _ => return Err(malformed(&format!("#/dimensions: {value} is not a valid enum value"))),
        },
        Some(_) => return Err(malformed("extraneous key [dimensions] is not permitted")),
    };
    let embedding = embedding_vector(0, dimensions);
    let tokens = text.len().div_ceil(4);
    let mut answer = json!({"embedding": embedding, "inputTextTokenCount": tokens});
    if v2 {
        answer["embeddingsByType"] = json!({"float": embedding});
    }
    Ok(answer)
}

/// Cohere: one 1024-float embedding per text, `input_type` required.
fn cohere(number: u64, body: &Value) -> Result<Value, String> {
    let Some(texts) = body.get("texts") else {
        return Err(malformed("#: required key [texts] not found"));
    };
    let Some(texts) = texts.as_array().filter(|texts| texts.iter().all(Value::is_string)) else {
        return Err(malformed("#/texts: expected type: JSONArray"));
    };
    if texts.is_empty() || texts.len() > 96 {
        return Err(malformed(&format!(
            "#/texts: expected minimum item count: 1, maximum: 96, found: {}",
            texts.len()
        )));
    }
    match body.get("input_type").and_then(Value::as_str) {
        None => return Err(malformed("#: required key [input_type] not found")),
        Some(kind) if !COHERE_INPUT_TYPES.contains(&kind) => {
            return Err(malformed(&format!("#/input_type: {kind} is not a valid enum value")))
        }
        Some(_) => {}
    }
    let embeddings: Vec<Vec<f64>> = (0..texts.len()).map(|index| embedding_vector(index, 1024)).collect();
    Ok(json!({
        "embeddings": embeddings,
        "id": format!("00000000-0000-4000-9000-{number:012x}"),
        "response_type": "embeddings_floats",
        "texts": texts,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titan_and_cohere_shapes_and_refusals() {
        let v2 = titan("amazon.titan-embed-text-v2:0", &json!({"inputText": "hello", "dimensions": 256})).expect("ok");
        assert_eq!(v2["embedding"].as_array().map(Vec::len), Some(256));
        assert_eq!(v2["inputTextTokenCount"], 2);
        assert_eq!(v2["embeddingsByType"]["float"], v2["embedding"]);
        let v1 = titan("amazon.titan-embed-text-v1", &json!({"inputText": "hello"})).expect("ok");
        assert_eq!(v1["embedding"].as_array().map(Vec::len), Some(1536));
        assert!(v1.get("embeddingsByType").is_none());
        assert_eq!(
            titan("amazon.titan-embed-text-v1", &json!({})),
            Err("Malformed input request: #: required key [inputText] not found, please reformat your input and try again."
                .to_owned())
        );
        assert!(titan("amazon.titan-embed-text-v2:0", &json!({"inputText": "x", "dimensions": 7})).is_err());

        let answer = cohere(5, &json!({"texts": ["a", "b"], "input_type": "search_document"})).expect("ok");
        assert_eq!(answer["embeddings"].as_array().map(Vec::len), Some(2));
        assert_eq!(answer["embeddings"][1].as_array().map(Vec::len), Some(1024));
        assert_eq!(answer["response_type"], "embeddings_floats");
        assert_eq!(answer["texts"], json!(["a", "b"]));
        assert!(cohere(5, &json!({"texts": ["a"]})).expect_err("input_type").contains("[input_type]"));
        assert!(cohere(5, &json!({"texts": [], "input_type": "clustering"})).is_err());
    }
}
