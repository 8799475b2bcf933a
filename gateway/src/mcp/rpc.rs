//! JSON-RPC 2.0 as MCP uses it: the messages a client sends, and the errors the gateway
//! answers with (the standard codes, and MCP's for a session it does not know).

use serde_json::{json, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Not JSON-RPC's: the gateway's for a request it refuses before any method runs (no key, a
/// session it does not know).
pub const REFUSED: i64 = -32001;

/// One message from a client.
#[derive(Debug)]
pub enum Message {
    /// A request: it gets a response.
    Request { id: Value, method: String, params: Option<Value> },
    /// A notification: no response.
    Notification { method: String, params: Option<Value> },
    /// A response to a request of ours (the gateway sends clients none): ignored.
    Response,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: String) -> RpcError {
        RpcError { code, message, data: None }
    }
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
    pub fn invalid_params(message: String) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }
    pub fn internal(message: String) -> RpcError {
        RpcError::new(INTERNAL_ERROR, message)
    }
    /// A server's error object, passed on as it is.
    pub fn from_upstream(error: Value) -> RpcError {
        RpcError {
            code: error["code"].as_i64().unwrap_or(INTERNAL_ERROR),
            message: error["message"].as_str().unwrap_or("the MCP server answered with an error").to_string(),
            data: error.get("data").cloned(),
        }
    }
    fn to_value(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            e["data"] = data.clone();
        }
        e
    }
}

/// The response to request `id`.
pub fn response(id: &Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_value()}),
    }
}

/// An error response that answers no request in particular (`id: null`).
pub fn error_body(code: i64, message: &str) -> Vec<u8> {
    response(&Value::Null, Err(RpcError::new(code, message.to_string()))).to_string().into_bytes()
}

/// The most messages one batch may hold: each may ask every server.
pub const MAX_BATCH: usize = 100;

/// A message, or the error response an invalid one gets.
pub type Parsed = Result<Message, Value>;

/// The messages of a POST body and whether they came as a batch, or the error response to
/// send instead.
pub fn parse(body: &[u8]) -> Result<(Vec<Parsed>, bool), Vec<u8>> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| error_body(PARSE_ERROR, &format!("Parse error: the body is not JSON ({e})")))?;
    match value {
        Value::Array(items) if items.is_empty() => Err(error_body(INVALID_REQUEST, "Invalid Request: an empty batch")),
        Value::Array(items) if items.len() > MAX_BATCH => Err(error_body(
            INVALID_REQUEST,
            &format!("Invalid Request: a batch of {} messages (at most {MAX_BATCH})", items.len()),
        )),
        Value::Array(items) => Ok((items.into_iter().map(message).collect(), true)),
        one => Ok((vec![message(one)], false)),
    }
}

/// One message, or the error response an invalid one gets.
fn message(mut v: Value) -> Result<Message, Value> {
    let id = v.get("id").cloned();
    let answered = id.clone().unwrap_or(Value::Null);
    let invalid =
        |why: &str| response(&answered, Err(RpcError::new(INVALID_REQUEST, format!("Invalid Request: {why}"))));
    if !v.is_object() {
        return Err(invalid("a message is a JSON object"));
    }
    if v["jsonrpc"] != "2.0" {
        return Err(invalid("jsonrpc must be \"2.0\""));
    }
    if matches!(&id, Some(id) if !(id.is_string() || id.is_i64() || id.is_u64())) {
        return Err(invalid("id must be a string or an integer"));
    }
    let params = v.get_mut("params").map(Value::take);
    if matches!(&params, Some(p) if !p.is_object() && !p.is_array()) {
        return Err(invalid("params must be an object"));
    }
    match (v["method"].as_str(), id) {
        (Some(method), Some(id)) => Ok(Message::Request { id, method: method.to_string(), params }),
        (Some(method), None) => Ok(Message::Notification { method: method.to_string(), params }),
        (None, Some(_)) if v.get("result").is_some() || v.get("error").is_some() => Ok(Message::Response),
        (None, _) => Err(invalid("no method")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_batches_and_bad_messages() {
        let (m, batch) = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        assert!(!batch);
        assert!(matches!(&m[0], Ok(Message::Request { method, .. }) if method == "tools/list"));
        let (m, batch) = parse(br#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"a","result":{}},{"id":2}]"#).unwrap();
        assert!(batch);
        assert!(matches!(&m[0], Ok(Message::Notification { .. })));
        assert!(matches!(&m[1], Ok(Message::Response)));
        let bad = m[2].as_ref().unwrap_err();
        assert_eq!(bad["id"], 2);
        assert_eq!(bad["error"]["code"], INVALID_REQUEST);
        let not_json: Value = serde_json::from_slice(&parse(b"{oops").unwrap_err()).unwrap();
        assert_eq!(not_json["error"]["code"], PARSE_ERROR);
        assert_eq!(not_json["id"], Value::Null);
        let (m, _) = parse(br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#).unwrap();
        assert!(m[0].is_err());
        let (m, _) = parse(br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":7}"#).unwrap();
        assert!(m[0].is_err());
        let big = format!("[{}]", vec![r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#; MAX_BATCH + 1].join(","));
        let refused: Value = serde_json::from_slice(&parse(big.as_bytes()).unwrap_err()).unwrap();
        assert_eq!(refused["error"]["code"], INVALID_REQUEST);
        let most = format!("[{}]", vec![r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#; MAX_BATCH].join(","));
        assert_eq!(parse(most.as_bytes()).unwrap().0.len(), MAX_BATCH);
    }
}
