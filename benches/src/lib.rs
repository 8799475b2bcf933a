//! Shared helpers for the benches: request bodies built from the repository's fixtures, the JSON
//! extraction done with each candidate library, pick and pareto-walk set-ups, and the wire
//! samples for the codec benches. Each helper is tested here so that a bench never measures a
//! wrong answer.

pub mod bodies;
pub mod json;
pub mod pareto_setup;
pub mod pick_setup;
pub mod wire;

// The gateway binary runs on mimalloc; the benches measure with the same allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A file under `tests/fixtures/` at the repository root, read at run time.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading fixture {path}: {e}"))
}

/// A Claude model id as Bedrock deployments name it (an inference profile).
pub const BEDROCK_CLAUDE: &str = "us.anthropic.claude-sonnet-4-20250514-v1:0";

/// The seven-turn chat request of `benches/fixtures/gemini_chat_request.json` as a Bedrock Claude
/// deployment takes it: less `seed` (Converse has none), `max_completion_tokens` 4096 (its 1024
/// leaves no room for the thinking budget `reasoning_effort: low` asks).
pub fn bedrock_chat_request() -> Vec<u8> {
    let mut request: serde_json::Value =
        serde_json::from_slice(&bench_fixture("gemini_chat_request.json")).expect("the fixture is JSON");
    let object = request.as_object_mut().expect("an object");
    object.remove("seed");
    object.insert("max_completion_tokens".into(), 4096.into());
    request.to_string().into_bytes()
}

/// A file under `benches/fixtures/` (the benches' own copies of provider samples), read at run
/// time.
pub fn bench_fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading fixture {path}: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bedrock_request_translates() {
        let converse = pointwork_dialect::bedrock::chat_request_to_converse_for(
            &super::bedrock_chat_request(),
            super::BEDROCK_CLAUDE,
        )
        .unwrap();
        let text = String::from_utf8(converse).unwrap();
        assert!(text.contains("toolUse") && text.contains("toolResult") && text.contains("thinking"), "{text}");
    }
}
