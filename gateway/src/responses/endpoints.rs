//! `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
//! `GET /v1/responses/{id}/input_items`: answered from the kept conversation for a translated
//! response, asked of the deployment that holds a native one.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Conversation, Stored};
use crate::http::write;
use crate::respond::Reply;
use crate::shard::Shard;
use crate::upstream::fetch::{self, Client, FetchError};

/// What a path under `/responses/` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ask {
    Retrieve,
    Delete,
    InputItems,
}

/// `rest`, the path after `/responses/`: the id and what is asked of it by `delete` or not.
pub(crate) fn parse(rest: &str, delete: bool) -> Option<(&str, Ask)> {
    let (id, ask) = match rest.strip_suffix("/input_items") {
        Some(id) if !delete => (id, Ask::InputItems),
        Some(_) => return None,
        None if delete => (rest, Ask::Delete),
        None => (rest, Ask::Retrieve),
    };
    (!id.is_empty() && !id.contains('/')).then_some((id, ask))
}

/// Answers `ask` of response `id`.
pub(crate) async fn answer(shard: &Shard, id: &str, ask: Ask) -> Reply {
    match (shard.hub.responses.find(id).await, ask) {
        (None, _) => not_found(id),
        (Some(Stored::Translated(c)), Ask::Retrieve) => Reply::json(200, c.response.to_string().into_bytes()),
        (Some(Stored::Translated(c)), Ask::InputItems) => Reply::json(200, input_items(&c).to_string().into_bytes()),
        (Some(Stored::Translated(_)), Ask::Delete) => {
            shard.hub.responses.forget(id);
            deleted(id)
        }
        (Some(Stored::Native(deployment)), ask) => ask_native(shard, id, &deployment, ask).await,
    }
}

/// OpenAI's list of a response's input items, newest first (its default order).
fn input_items(c: &Conversation) -> Value {
    let data: Vec<&Value> = c.input_items.iter().rev().collect();
    let id_of = |item: Option<&&Value>| item.and_then(|i| i.get("id")).cloned().unwrap_or(Value::Null);
    json!({"object": "list", "data": data, "first_id": id_of(data.first()), "last_id": id_of(data.last()),
        "has_more": false})
}

fn deleted(id: &str) -> Reply {
    Reply::json(200, json!({"id": id, "object": "response.deleted", "deleted": true}).to_string().into_bytes())
}

/// OpenAI's answer for a response it does not hold.
fn not_found(id: &str) -> Reply {
    let message = format!("Response with id '{id}' not found.");
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": Value::Null,
        "code": Value::Null}});
    Reply::json(404, body.to_string().into_bytes())
}

/// How long asking a provider for a stored response may take.
const NATIVE_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks the deployment `deployment` (by id) that holds native response `id`.
async fn ask_native(shard: &Shard, id: &str, deployment: &str, ask: Ask) -> Reply {
    let routes = shard.sync();
    let Some(idx) = routes.snapshot.deployments.iter().position(|d| d.id == deployment) else {
        return not_found(id);
    };
    let upstream = &routes.upstreams[idx];
    let Some(request) = native_request(&upstream.responses_head, id, ask) else {
        return not_found(id);
    };
    let request = match &upstream.auth {
        Some(auth) => match auth.authorize(request, deployment) {
            Ok(request) => request,
            Err(err) => return Reply::json(err.status, err.body),
        },
        None => request,
    };
    let client = Client { tls: Ok(shard.upstream.tls.clone()), timeout: NATIVE_TIMEOUT, max_body: fetch::MAX_BODY };
    match fetch::send(&client, &upstream.target, request).await {
        Ok(body) => {
            if ask == Ask::Delete {
                shard.hub.responses.forget(id);
            }
            Reply::json(200, body)
        }
        Err(FetchError::Status(404)) => not_found(id),
        Err(e) => Reply::json(502, crate::errors::openai_error(502, &format!("deployment {deployment}: {e}"), None)),
    }
}

/// The request for `ask` of `id`, made from the deployment's `POST …/responses` head: the
/// method and path changed, the same host and credential, no body.
fn native_request(responses_head: &[u8], id: &str, ask: Ask) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(responses_head).ok()?;
    let (line, headers) = head.split_once("\r\n")?;
    let target = line.strip_prefix("POST ")?.strip_suffix(" HTTP/1.1")?;
    let (path, query) = target.split_once('?').map_or((target, None), |(p, q)| (p, Some(q)));
    let method = if ask == Ask::Delete { "DELETE" } else { "GET" };
    let suffix = if ask == Ask::InputItems { "/input_items" } else { "" };
    let mut out = format!("{method} {path}/{id}{suffix}").into_bytes();
    if let Some(query) = query {
        out.extend_from_slice(format!("?{query}").as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let kept = headers.split("\r\n").filter(|h| !h.is_empty() && !h.to_ascii_lowercase().starts_with("content-type:"));
    for header in kept {
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    write::header_decimal(&mut out, "content-length", 0);
    write::end_head(&mut out);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_responses() {
        assert_eq!(parse("resp_1", false), Some(("resp_1", Ask::Retrieve)));
        assert_eq!(parse("resp_1", true), Some(("resp_1", Ask::Delete)));
        assert_eq!(parse("resp_1/input_items", false), Some(("resp_1", Ask::InputItems)));
        assert_eq!(parse("resp_1/input_items", true), None);
        assert_eq!(parse("", false), None);
        assert_eq!(parse("a/b", false), None);
    }

    #[test]
    fn a_native_request_keeps_the_host_and_credential() {
        let head = b"POST /openai/responses?api-version=v HTTP/1.1\r\nhost: x\r\napi-key: k\r\ncontent-type: application/json\r\n";
        let out = String::from_utf8(native_request(head, "resp_9", Ask::InputItems).unwrap()).unwrap();
        assert_eq!(
            out,
            "GET /openai/responses/resp_9/input_items?api-version=v HTTP/1.1\r\nhost: x\r\napi-key: k\r\ncontent-length: 0\r\n\r\n"
        );
        let out =
            String::from_utf8(native_request(b"POST /v1/responses HTTP/1.1\r\nhost: y\r\n", "r", Ask::Delete).unwrap());
        assert!(out.unwrap().starts_with("DELETE /v1/responses/r HTTP/1.1\r\nhost: y\r\n"));
    }
}
