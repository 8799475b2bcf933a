//! Whole responses Pointwork writes itself (errors, health, model lists), each in one write.

use crate::http::write;
use crate::tcp_or_tls::ClientConn;

/// A complete response: status, JSON body, extra header lines.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub content_type: &'static str,
    headers: Vec<u8>,
    /// The answer to a HEAD request: the head a GET would get, without the body (RFC 9110 §9.3.2).
    pub head_only: bool,
}

impl Reply {
    pub fn json(status: u16, body: Vec<u8>) -> Reply {
        Reply { status, body, content_type: "application/json", headers: Vec::new(), head_only: false }
    }

    pub fn header(&mut self, name: &str, value: &[u8]) {
        write::header(&mut self.headers, name, value);
    }

    /// The rendered header lines (`name: value\r\n`…), for a writer that renders its own line.
    pub(crate) fn header_lines(&mut self) -> &mut Vec<u8> {
        &mut self.headers
    }

    pub fn header_decimal(&mut self, name: &str, value: u64) {
        write::header_decimal(&mut self.headers, name, value);
    }

    pub fn encode(&self, close: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.headers.len() + self.body.len());
        write::status_line(&mut out, self.status);
        write::header(&mut out, "content-type", self.content_type.as_bytes());
        write::header_decimal(&mut out, "content-length", self.body.len() as u64);
        out.extend_from_slice(&self.headers);
        if close {
            write::header(&mut out, "connection", b"close");
        }
        write::end_head(&mut out);
        if !self.head_only {
            out.extend_from_slice(&self.body);
        }
        out
    }
}

/// Writes `reply`; returns whether the connection stays usable.
pub async fn send(client: &mut ClientConn, reply: Reply, keep_alive: bool) -> bool {
    let (res, _) = client.write_all(reply.encode(!keep_alive)).await;
    res.is_ok() && keep_alive
}

/// `reply` as the API surface of `route` shapes it: an error body (the gateway's own, or an
/// upstream's in the other dialect) in that API's error shape — Anthropic's
/// `{"type":"error","error":{…}}` on the Messages API, OpenAI's elsewhere; success as it is.
pub fn for_route(route: pointwork_core::RouteKind, mut reply: Reply) -> Reply {
    if reply.status < 400 {
        return reply;
    }
    reply.body = match route.dialect() {
        pointwork_core::Dialect::AnthropicMessages => crate::dialect::error_to_anthropic(reply.status, &reply.body),
        _ => crate::dialect::error_to_openai(reply.status, &reply.body),
    };
    reply
}
