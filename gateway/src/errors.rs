//! Error bodies in the OpenAI shape: `{"error":{"message","type","param","code"}}`.

use serde_json::json;

/// The OpenAI `type` for a status Pointwork itself answers with (the dialects' own, which their
/// translated errors use too).
pub use crate::dialect::openai_error_type as error_type;

/// An OpenAI-shaped error body.
pub fn openai_error(status: u16, message: &str, param: Option<&str>) -> Vec<u8> {
    typed_error(status, error_type(status), message, param)
}

/// The same with a `type` more precise than the status's (`budget_exceeded`, …).
pub fn typed_error(status: u16, kind: &str, message: &str, param: Option<&str>) -> Vec<u8> {
    let body = json!({
        "error": {
            "message": message,
            "type": kind,
            "param": param,
            "code": status.to_string(),
        }
    });
    body.to_string().into_bytes()
}

/// An upstream error body as the client should see it: passed through when it already is an
/// OpenAI-shaped JSON error, wrapped otherwise.
pub fn upstream_error_body(status: u16, provider: &str, body: &[u8]) -> Vec<u8> {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        if v.get("error").is_some_and(serde_json::Value::is_object) {
            return body.to_vec();
        }
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(2048)]);
    let message = format!("{provider} returned HTTP {status}: {}", text.trim());
    openai_error(status, &message, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_shape() {
        let v: serde_json::Value = serde_json::from_slice(&openai_error(429, "slow down", None)).unwrap();
        assert_eq!(v["error"]["message"], "slow down");
        assert_eq!(v["error"]["type"], "rate_limit_error");
        assert_eq!(v["error"]["code"], "429");
        assert!(v["error"]["param"].is_null());
    }

    #[test]
    fn upstream_errors_pass_through_or_wrap() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/openai_error_429_rate_limit.json");
        let real = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(upstream_error_body(429, "openai", &real), real);
        let wrapped: serde_json::Value =
            serde_json::from_slice(&upstream_error_body(502, "openai", b"<html>bad gateway</html>")).unwrap();
        assert_eq!(wrapped["error"]["message"], "openai returned HTTP 502: <html>bad gateway</html>");
    }
}
