//! What the database tests share: LiteLLM's database on a real PostgreSQL, a gateway in front
//! of the mock with its master key, and the requests and answers they exchange.

#![allow(dead_code)]

use crate::common::{chat_body, config, deployment, priced, Gateway, GatewayOptions, Mock, Response};
use crate::postgres::Postgres;

pub const MASTER: &str = "sk-master-3141";

/// Each test its own server, stopped when the test ends (a static one would outlive the test
/// binary).
pub fn server() -> Postgres {
    Postgres::start()
}

// `priced`: 0.001 per token; the mock reports 30 for `chat_body`, so 0.03 a request.

pub fn yaml(mock: &Mock, url: &str, extra: &str) -> String {
    config(
        &[priced(mock), deployment("big", "dep-big", "openai/gpt-4o", mock, "")],
        &format!("general_settings:\n  master_key: {MASTER}\n  database_url: {url}\n{extra}"),
    )
}

pub fn start(yaml: &str) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() })
}

pub fn chat(gateway: &Gateway, key: &str, model: &str) -> Response {
    let bearer = format!("Bearer {key}");
    let body = chat_body(model, false);
    gateway.client().request("POST", "/v1/chat/completions", &[("authorization", &bearer)], body.as_bytes())
}

pub fn error(response: &Response) -> (u16, String, String) {
    let e = &response.json()["error"];
    (response.status, e["type"].as_str().unwrap_or("").to_string(), e["message"].as_str().unwrap_or("").to_string())
}

pub fn scalar(pg: &Postgres, db: &str, sql: &str) -> f64 {
    pg.psql(db, sql).parse().unwrap_or_else(|_| panic!("{sql}: not a number"))
}

pub fn manage(gateway: &Gateway, method: &str, path: &str, body: &str) -> Response {
    let bearer = format!("Bearer {MASTER}");
    gateway.client().request(method, path, &[("authorization", &bearer)], body.as_bytes())
}
