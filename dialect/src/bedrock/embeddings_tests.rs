//! Unit tests of the embeddings translation for Titan and Cohere on Bedrock.

use super::*;

fn request(body: Value, model_id: &str) -> Result<Value, Untranslatable> {
    embeddings_request_to_bedrock(body.to_string().as_bytes(), model_id)
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
}

fn answer(body: Value, model_id: &str, base64: bool, header_tokens: Option<u64>) -> Value {
    let bytes = bedrock_embeddings_to_openai_with(
        body.to_string().as_bytes(),
        "text-embedding",
        model_id,
        base64,
        header_tokens,
    )
    .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn titan_requests() {
    let v2 = "amazon.titan-embed-text-v2:0";
    let out = request(
        json!({"model": "emb", "input": "hello", "dimensions": 512, "encoding_format": "float", "user": "u"}),
        v2,
    );
    assert_eq!(out.unwrap(), json!({"inputText": "hello", "dimensions": 512}));
    let out = request(json!({"input": ["one"]}), "amazon.titan-embed-text-v1");
    assert_eq!(out.unwrap(), json!({"inputText": "one"}));
    let arn = "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0";
    assert_eq!(request(json!({"input": "x", "encoding_format": "base64"}), arn).unwrap(), json!({"inputText": "x"}));
    let many = request(json!({"input": ["a", "b"]}), v2).unwrap_err();
    assert_eq!(many.field, "input");
    assert!(many.message.contains("2 inputs"), "{}", many.message);
    assert_eq!(
        request(json!({"input": "x", "dimensions": 256}), "amazon.titan-embed-text-v1").unwrap_err().field,
        "dimensions"
    );
    assert_eq!(request(json!({"input": "x", "input_type": "search_query"}), v2).unwrap_err().field, "input_type");
}

#[test]
fn cohere_requests() {
    let out = request(json!({"input": ["a", "b"], "model": "m"}), "us.cohere.embed-english-v3");
    assert_eq!(out.unwrap(), json!({"texts": ["a", "b"], "input_type": "search_document"}));
    let out =
        request(json!({"input": "q", "input_type": "search_query", "truncate": "END"}), "cohere.embed-multilingual-v3");
    assert_eq!(out.unwrap(), json!({"texts": ["q"], "input_type": "search_query", "truncate": "END"}));
    let out = request(json!({"input": "q", "dimensions": 256}), "cohere.embed-v4:0");
    assert_eq!(out.unwrap()["output_dimension"], 256);
    assert_eq!(
        request(json!({"input": "q", "dimensions": 256}), "cohere.embed-english-v3").unwrap_err().field,
        "dimensions"
    );
}

#[test]
fn embedding_refusals() {
    let titan = "amazon.titan-embed-text-v2:0";
    assert_eq!(request(json!({"input": [[1, 2, 3]]}), titan).unwrap_err().field, "input[0]");
    assert_eq!(request(json!({"input": []}), titan).unwrap_err().field, "input");
    assert_eq!(request(json!({}), titan).unwrap_err().field, "input");
    assert_eq!(request(json!({"input": "x", "encoding_format": "int8"}), titan).unwrap_err().field, "encoding_format");
    assert_eq!(request(json!({"input": "x", "extra": 1}), titan).unwrap_err().field, "extra");
    let other = request(json!({"input": "x"}), "amazon.titan-embed-image-v1").unwrap_err();
    assert_eq!(other.field, "model");
    assert!(other.message.contains("amazon.titan-embed-image-v1"));
    assert!(bedrock_embeddings_to_openai(b"{}", "m", "meta.llama3").is_err());
}

#[test]
fn titan_answers() {
    let body = json!({"embedding": [0.5, -0.25, 0.125], "inputTextTokenCount": 4, "embeddingsByType": {"float": [0.5, -0.25, 0.125]}});
    let out = answer(body.clone(), "amazon.titan-embed-text-v2:0", false, None);
    assert_eq!(
        out,
        json!({"object": "list", "model": "text-embedding",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.5, -0.25, 0.125]}],
            "usage": {"prompt_tokens": 4, "total_tokens": 4}})
    );
    let by_type = answer(
        json!({"embeddingsByType": {"float": [1.0]}, "inputTextTokenCount": 1}),
        "amazon.titan-embed-text-v2:0",
        false,
        None,
    );
    assert_eq!(by_type["data"][0]["embedding"], json!([1.0]));
    // base64: little-endian f32, as OpenAI sends it.
    let out = answer(body, "amazon.titan-embed-text-v2:0", true, None);
    let bytes = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        out["data"][0]["embedding"].as_str().unwrap(),
    )
    .unwrap();
    let floats: Vec<f32> = bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(floats, vec![0.5, -0.25, 0.125]);
}

#[test]
fn cohere_answers() {
    let body = json!({"embeddings": [[0.1, 0.2], [0.3, 0.4]], "id": "e1", "response_type": "embeddings_floats", "texts": ["a", "b"]});
    let out = answer(body, "cohere.embed-english-v3", false, Some(7));
    assert_eq!(out["data"][1], json!({"object": "embedding", "index": 1, "embedding": [0.3, 0.4]}));
    assert_eq!(out["usage"], json!({"prompt_tokens": 7, "total_tokens": 7}));
    let by_type = json!({"embeddings": {"float": [[1.5]]}, "response_type": "embeddings_by_type"});
    let out = answer(by_type, "cohere.embed-v4:0", false, None);
    assert_eq!((out["data"][0]["embedding"].clone(), out["usage"]["prompt_tokens"].clone()), (json!([1.5]), json!(0)));
    assert!(bedrock_embeddings_to_openai(br#"{"embeddings":{"int8":[[1]]}}"#, "m", "cohere.embed-english-v3").is_err());
    assert!(bedrock_embeddings_to_openai(br#"{"embedding":"x"}"#, "m", "amazon.titan-embed-text-v1").is_err());
    assert!(bedrock_embeddings_to_openai(b"nope", "m", "amazon.titan-embed-text-v1").is_err());
}
