//! The request every connection sends, built once per target (and per key with `--keys`): head
//! and body in one buffer, so each send is a single write of shared bytes.

use std::fmt::Write as _;

use serde_json::json;

use super::options::{BodySource, LoadOptions, Target};

/// A chat completion body whose single user message is `prompt_bytes` bytes of text.
pub fn chat_body(model: &str, prompt_bytes: usize, stream: bool) -> Vec<u8> {
    // Printable ASCII that needs no JSON escaping, so the message is exactly `prompt_bytes` long.
    const WORDS: &[u8] = b"the quick brown fox jumps over the lazy dog ";
    let content: String = WORDS.iter().cycle().take(prompt_bytes).map(|&byte| byte as char).collect();
    let mut body = json!({
        "model": model,
        "messages": [{"role": "user", "content": content}],
    });
    if stream {
        body["stream"] = json!(true);
    }
    serde_json::to_vec(&body).expect("a JSON value always serialises")
}

/// The body of `options`: the `--body` file as it is, or the generated chat body.
pub fn body(options: &LoadOptions) -> Result<Vec<u8>, String> {
    match &options.body {
        BodySource::File(path) => std::fs::read(path).map_err(|error| format!("--body {}: {error}", path.display())),
        BodySource::Chat { model, prompt_bytes } => Ok(chat_body(model, *prompt_bytes, options.stream)),
    }
}

/// The keys of `--keys FILE`: one per line, surrounding whitespace and blank lines left out.
pub fn keys(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|error| format!("--keys {}: {error}", path.display()))?;
    let keys: Vec<String> = text.lines().map(str::trim).filter(|key| !key.is_empty()).map(str::to_owned).collect();
    match keys.iter().position(|key| key.bytes().any(|byte| byte.is_ascii_control())) {
        _ if keys.is_empty() => Err(format!("--keys {}: no key in it", path.display())),
        Some(line) => Err(format!("--keys {}: key {} has a control character", path.display(), line + 1)),
        None => Ok(keys),
    }
}

/// The requests of one target: one per key (`authorization: Bearer KEY`), or one without keys.
pub fn requests(options: &LoadOptions, target: &Target, body: &[u8], keys: &[String]) -> Vec<Vec<u8>> {
    match keys {
        [] => vec![request_bytes(options, target, body, None)],
        keys => keys.iter().map(|key| request_bytes(options, target, body, Some(key))).collect(),
    }
}

/// `POST PATH HTTP/1.1` to `target` with `Host`, `Content-Type: application/json` (unless a
/// `--header` sets it), `Connection: close` with `--new-connection` (unless a `--header` sets
/// it), the extra headers, `Authorization: Bearer KEY` with a key, `Content-Length`, then the body.
pub fn request_bytes(options: &LoadOptions, target: &Target, body: &[u8], key: Option<&str>) -> Vec<u8> {
    let mut head = String::with_capacity(256);
    let has = |name: &str| options.headers.iter().any(|(header, _)| header.eq_ignore_ascii_case(name));
    // Writing into a String cannot fail.
    let _ = write!(head, "POST {} HTTP/1.1\r\n", target.path);
    if !has("host") {
        let _ = write!(head, "host: {}\r\n", target.authority);
    }
    if !has("content-type") {
        head.push_str("content-type: application/json\r\n");
    }
    if options.new_connection && !has("connection") {
        head.push_str("connection: close\r\n");
    }
    if options.stream && !has("accept") {
        head.push_str("accept: text/event-stream\r\n");
    }
    for (name, value) in &options.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    if let Some(key) = key {
        let _ = write!(head, "authorization: Bearer {key}\r\n");
    }
    let _ = write!(head, "content-length: {}\r\n\r\n", body.len());
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::cli::{parse_args, Command};

    fn parsed(line: &str) -> LoadOptions {
        match parse_args(line.split_whitespace().map(str::to_owned)) {
            Ok(Command::Run(options)) => options,
            _ => panic!("bad test options"),
        }
    }

    #[test]
    fn chat_body_has_the_exact_prompt_size() {
        let body = chat_body("m", 1000, true);
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["messages"][0]["content"].as_str().unwrap().len(), 1000);
        assert_eq!(value["stream"], true);
        assert_eq!(value["model"], "m");
        let value: serde_json::Value = serde_json::from_slice(&chat_body("m", 0, false)).unwrap();
        assert!(value.get("stream").is_none());
    }

    #[test]
    fn request_head() {
        let options = parsed("--url http://127.0.0.1:9/v1/chat/completions --header x-k:v --stream");
        let bytes = request_bytes(&options, &options.targets[0], b"{}", None);
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:9\r\ncontent-type: application/json\r\n\
             accept: text/event-stream\r\nx-k: v\r\ncontent-length: 2\r\n\r\n{}"
        );
        let options = parsed("--url http://h:9/ --header Content-Type:text/plain --header HOST:x");
        let text = String::from_utf8(request_bytes(&options, &options.targets[0], b"", None)).unwrap();
        assert!(!text.contains("application/json") && !text.contains("host: h:9"));
        // Several URLs: each target's request names its own path and host.
        let options = parsed("--url http://a:1/x --url http://b:2/y -c 2");
        let second = String::from_utf8(request_bytes(&options, &options.targets[1], b"", None)).unwrap();
        assert!(second.starts_with("POST /y HTTP/1.1\r\nhost: b:2\r\n"), "{second}");
        // A fresh connection per request says so.
        let options = parsed("--url http://h:9/ --new-connection");
        let text = String::from_utf8(request_bytes(&options, &options.targets[0], b"", None)).unwrap();
        assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
        let options = parsed("--url http://h:9/ --new-connection --header Connection:keep-alive");
        let text = String::from_utf8(request_bytes(&options, &options.targets[0], b"", None)).unwrap();
        assert!(!text.contains("close"), "{text}");
    }

    #[test]
    fn one_request_per_key() {
        let options = parsed("--url http://h:9/ --header x-k:v");
        let keys = ["sk-a".to_owned(), "sk-b".to_owned()];
        let built = requests(&options, &options.targets[0], b"{}", &keys);
        let texts: Vec<_> = built.into_iter().map(|bytes| String::from_utf8(bytes).unwrap()).collect();
        assert_eq!(
            texts[1],
            "POST / HTTP/1.1\r\nhost: h:9\r\ncontent-type: application/json\r\nx-k: v\r\n\
             authorization: Bearer sk-b\r\ncontent-length: 2\r\n\r\n{}"
        );
        assert!(texts[0].contains("\r\nauthorization: Bearer sk-a\r\n") && texts.len() == 2);
        // Without keys: the one request, with no authorization.
        let plain = requests(&options, &options.targets[0], b"{}", &[]);
        assert_eq!(plain, [request_bytes(&options, &options.targets[0], b"{}", None)]);
        assert!(!String::from_utf8_lossy(&plain[0]).contains("authorization"));
    }

    #[test]
    fn keys_file() {
        let dir = std::env::temp_dir().join(format!("pointwork-load-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("keys");
        std::fs::write(&file, "sk-1\n  sk-2 \r\n\nsk-3").unwrap();
        assert_eq!(keys(&file).unwrap(), ["sk-1", "sk-2", "sk-3"]);
        std::fs::write(&file, "\n \n").unwrap();
        assert!(keys(&file).unwrap_err().contains("no key"));
        std::fs::write(&file, "sk-1\nsk\x002\n").unwrap();
        assert!(keys(&file).unwrap_err().contains("key 2 has a control character"));
        assert!(keys(&dir.join("absent")).unwrap_err().starts_with("--keys "));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
