//! Realistic chat-completion bodies of an exact size, built from the OpenAI request fixture
//! (`tests/fixtures/openai_chat_request.json`): its developer message and its sampling parameters, then a chat history of user and
//! assistant turns (prose with newlines, quotes and some non-ASCII text) until the size is met.
//!
//! Keys come in the order the OpenAI Python SDK sends them: `messages` first, then `model`,
//! then the parameters. So an extractor cannot stop early: `model` sits after the long part.

use serde_json::Value;

/// The body sizes every facts bench runs.
pub const SIZES: [(&str, usize); 4] = [("1KB", 1024), ("8KB", 8 * 1024), ("100KB", 100 * 1024), ("1MB", 1024 * 1024)];

/// The requested model in every body.
pub const MODEL: &str = "gpt-4o";

/// Top-level parameters copied from the fixture, in this order.
const PARAMS: [&str; 11] = [
    "temperature",
    "top_p",
    "n",
    "stop",
    "max_tokens",
    "response_format",
    "seed",
    "stream",
    "user",
    "metadata",
    "store",
];

const WORDS: [&str; 40] = [
    "the",
    "request",
    "routing",
    "gateway",
    "latency",
    "deployment",
    "model",
    "answer",
    "please",
    "summarise",
    "following",
    "document",
    "and",
    "list",
    "three",
    "risks",
    "café",
    "naïve",
    "résumé",
    "—",
    "…",
    "日本語",
    "quarterly",
    "revenue",
    "grew",
    "by",
    "12%",
    "while",
    "costs",
    "fell",
    "\"quoted\"",
    "C:\\path",
    "a",
    "of",
    "to",
    "in",
    "for",
    "with",
    "tokens",
    "context",
];

/// A deterministic generator of prose, so that every run measures the same bytes.
struct Prose {
    state: u64,
}

impl Prose {
    fn next(&mut self) -> u64 {
        // 64-bit LCG (Knuth's MMIX constants); only used to vary the text.
        self.state = self.state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.state >> 33
    }

    /// About `chars` bytes of text.
    fn text(&mut self, chars: usize) -> String {
        let mut out = String::with_capacity(chars + 16);
        let mut since_break = 0;
        while out.len() < chars {
            let word = WORDS[(self.next() % WORDS.len() as u64) as usize];
            out.push_str(word);
            since_break += 1;
            if since_break > 30 && self.next().is_multiple_of(8) {
                out.push_str(".\n\n");
                since_break = 0;
            } else {
                out.push(' ');
            }
        }
        out
    }
}

fn message(role: &str, content: &str) -> String {
    format!(r#"{{"role":"{role}","content":{}}}"#, serde_json::to_string(content).expect("a string serialises"))
}

/// A chat body of exactly `target` bytes (compact JSON, like the SDKs send).
pub fn chat_body(target: usize) -> Vec<u8> {
    let template: Value =
        serde_json::from_slice(&crate::fixture("openai_chat_request.json")).expect("the fixture is JSON");
    let developer = &template["messages"][0];
    let mut messages = vec![message("developer", developer["content"].as_str().expect("developer content"))];
    let mut suffix = format!(r#"],"model":"{MODEL}""#);
    for key in PARAMS {
        let value = serde_json::to_string(&template[key]).expect("a value serialises");
        suffix.push_str(&format!(r#","{key}":{value}"#));
    }
    suffix.push('}');
    let assemble = |messages: &[String]| format!(r#"{{"messages":[{}{suffix}"#, messages.join(","));

    let average = (target / 12).clamp(150, 16 * 1024);
    let mut prose = Prose { state: target as u64 };
    let mut roles = ["user", "assistant"].into_iter().cycle();
    loop {
        let len = average / 2 + (prose.next() as usize % average);
        // Room for this turn (escapes included) and a last user turn of at least 32 bytes.
        if assemble(&messages).len() + len * 5 / 4 + 100 > target {
            break;
        }
        messages.push(message(roles.next().expect("cycle"), &prose.text(len)));
    }
    messages.push(message("user", ""));
    let base = assemble(&messages).len();
    assert!(base <= target, "a {target}-byte body cannot hold its parameters ({base} bytes)");
    // Plain ASCII filler: serialises to exactly its own length.
    let filler: String = "Answer in one paragraph, citing the document. ".chars().cycle().take(target - base).collect();
    *messages.last_mut().expect("pushed above") = message("user", &filler);
    let body = assemble(&messages).into_bytes();
    debug_assert_eq!(body.len(), target);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_have_the_exact_size_and_are_chat_requests() {
        for (_, size) in SIZES {
            let body = chat_body(size);
            assert_eq!(body.len(), size);
            let v: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(v["model"], MODEL);
            assert_eq!(v["stream"], false);
            let messages = v["messages"].as_array().unwrap();
            assert!(messages.len() >= 3, "{size}: {} messages", messages.len());
            assert!(body.starts_with(br#"{"messages":[{"role":"developer""#));
        }
    }

    #[test]
    fn bodies_are_deterministic() {
        assert_eq!(chat_body(8 * 1024), chat_body(8 * 1024));
    }
}
