//! The upstream request heads each adapter builds: the model and the key where the provider
//! expects them.

use pointwork_core::{Deployment, Provider, RouteKind};

use super::request_head;
use crate::upstream::target::Target;

#[test]
fn each_dialect_puts_the_model_and_the_key_where_its_provider_expects_them() {
    let head = |provider, model: &str, base: &str, key: Option<&str>, route, stream| {
        let mut d = Deployment::new("d", "g", provider, model, base);
        d.api_key = key.map(str::to_string);
        let target = Target::parse(&d.api_base).unwrap();
        String::from_utf8(request_head(&target, &d, &d.upstream_model, route, stream)).unwrap()
    };
    let gemini = "https://generativelanguage.googleapis.com/v1beta";
    let chat = head(Provider::Gemini, "gemini-2.5-flash", gemini, Some("g"), RouteKind::ChatCompletions, false);
    assert!(chat.starts_with("POST /v1beta/models/gemini-2.5-flash:generateContent HTTP/1.1\r\n"), "{chat}");
    assert!(chat.contains("x-goog-api-key: g\r\n") && !chat.contains("authorization"), "{chat}");
    let stream = head(Provider::Gemini, "gemini-2.5-flash", gemini, Some("g"), RouteKind::Messages, true);
    assert!(stream.starts_with("POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse "), "{stream}");
    let embed = head(Provider::Gemini, "text-embedding-004", gemini, Some("g"), RouteKind::Embeddings, false);
    assert!(embed.starts_with("POST /v1beta/models/text-embedding-004:batchEmbedContents "), "{embed}");

    let bedrock = "https://bedrock-runtime.us-east-1.amazonaws.com";
    let id = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    let converse = head(Provider::Bedrock, id, bedrock, None, RouteKind::ChatCompletions, false);
    assert!(converse.starts_with(&format!("POST /model/{}/converse HTTP/1.1\r\n", id.replace(':', "%3A"))));
    assert!(converse.contains("accept: application/json\r\n") && !converse.contains("authorization"));
    let stream = head(Provider::Bedrock, id, bedrock, None, RouteKind::ChatCompletions, true);
    assert!(
        stream.contains("/converse-stream HTTP/1.1") && stream.contains("accept: application/vnd.amazon.eventstream")
    );
    let titan = head(Provider::Bedrock, "amazon.titan-embed-text-v2:0", bedrock, None, RouteKind::Embeddings, false);
    assert!(titan.starts_with("POST /model/amazon.titan-embed-text-v2%3A0/invoke "), "{titan}");

    let vertex = "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic";
    let claude = head(Provider::VertexAi, "claude-sonnet-4@20250514", vertex, None, RouteKind::Messages, true);
    assert!(
        claude.starts_with("POST /v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4%4020250514:streamRawPredict "),
        "{claude}"
    );

    // Azure AI: Azure's own hosts take `api-key`, a serverless endpoint a bearer token.
    let foundry = head(
        Provider::AzureAi,
        "mistral-large",
        "https://p.services.ai.azure.com/models",
        Some("k"),
        RouteKind::ChatCompletions,
        false,
    );
    assert!(
        foundry.starts_with("POST /models/chat/completions HTTP/1.1") && foundry.contains("api-key: k\r\n"),
        "{foundry}"
    );
    let serverless = head(
        Provider::AzureAi,
        "m",
        "https://m.eastus2.inference.ai.azure.com/v1",
        Some("k"),
        RouteKind::ChatCompletions,
        false,
    );
    assert!(serverless.contains("authorization: Bearer k\r\n"), "{serverless}");
    let ollama =
        head(Provider::OllamaChat, "llama3.1", "http://localhost:11434/v1", None, RouteKind::ChatCompletions, false);
    assert!(ollama.starts_with("POST /v1/chat/completions HTTP/1.1") && !ollama.contains("authorization"), "{ollama}");
}

#[test]
fn an_xai_head_goes_to_its_chat_completions_with_its_key_as_a_bearer_token() {
    let mut d = Deployment::new("d", "grok", Provider::Xai, "grok-3-mini", "https://api.x.ai/v1");
    d.api_key = Some("xai-key".into());
    let target = Target::parse(&d.api_base).unwrap();
    let head = |route, stream| String::from_utf8(request_head(&target, &d, &d.upstream_model, route, stream)).unwrap();
    let chat = head(RouteKind::ChatCompletions, false);
    assert_eq!(
        chat,
        concat!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: api.x.ai\r\nauthorization: Bearer xai-key\r\n",
            "content-type: application/json\r\nuser-agent: pointwork/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        )
    );
    // A Messages request is translated to chat completions; a stream goes to the same path.
    assert_eq!(head(RouteKind::Messages, false), chat);
    assert_eq!(head(RouteKind::ChatCompletions, true), chat);
    assert!(!super::streams_elsewhere(&d));
}
