//! OpenAI's Responses API (`POST /v1/responses`, the Codex CLI's and the `openai` SDK's
//! `client.responses`): passed through to a deployment whose server serves it, translated to chat
//! completions for every other (and from there to Anthropic, Gemini and Bedrock as a chat
//! request is).
//!
//! - **Native**: OpenAI and Azure OpenAI, or any deployment whose `model_info.supported_endpoints`
//!   lists `/v1/responses` (LiteLLM's opt-in). The bytes go through as they are, the
//!   deployment's key injected. A server that answers 404/405 on `/responses` (a self-hosted
//!   server behind `openai/`) is learned to have none, and the same attempt is sent again
//!   translated: the request does not fail. `supported_endpoints` without `/v1/responses`
//!   says so up front.
//! - **Translated**: `crate::dialect::responses`; what chat completions cannot say is dropped
//!   and named in `x-pointwork-dropped`.
//! - **Conversation state**: a translated response is kept (`store` not `false`) in
//!   [`Conversations`], bounded in bytes and time, so that `previous_response_id`, `GET` and
//!   `DELETE /v1/responses/{id}` and `/input_items` work on any deployment; a native response's
//!   id is remembered with its deployment, where its follow-ups go ([`Turn`]).

mod conversations;
pub(crate) mod endpoints;
mod redis_copy;
mod turn;

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, RwLock};
use std::time::Instant;

use pointwork_core::Deployment;

use crate::upstream::attempt_error::AttemptError;
pub(crate) use conversations::{Conversation, Conversations, Stored};
use redis_copy::{Lookup, RedisCopy};
pub use turn::Turn;

/// What every shard shares of the Responses API.
#[derive(Default)]
pub struct ResponsesShared {
    /// Translated conversations, and the deployment of each native response.
    conversations: Mutex<Conversations>,
    /// The same in Redis, shared with the other instances, when the cluster is configured.
    redis: OnceLock<RedisCopy>,
    /// Deployments (by id) whose server was found to have no `/responses`.
    chat_only: RwLock<HashSet<String>>,
}

impl ResponsesShared {
    /// Shares the kept conversations through Redis (the cluster's `client`, its key prefix).
    pub fn share_through(&self, client: redis::Client, key_prefix: &str) -> std::io::Result<()> {
        let copy = RedisCopy::start(client, key_prefix)?;
        let _ = self.redis.set(copy);
        Ok(())
    }

    /// Keeps `stored` as `id` (`bytes` its size), here and in Redis.
    pub(crate) fn keep(&self, id: &str, stored: Stored, bytes: usize) {
        if let Some(redis) = self.redis.get() {
            redis.put(id, stored.to_json());
        }
        if let Ok(mut c) = self.conversations.lock() {
            c.put(id, stored, bytes, Instant::now());
        }
    }

    /// The response `id`: as Redis has it when the cluster is configured (another instance may
    /// have answered it, or deleted it), else — or with Redis out of reach — as kept here.
    pub(crate) async fn find(&self, id: &str) -> Option<Stored> {
        let lookup = match self.redis.get() {
            Some(redis) => redis.get(id).await,
            None => Lookup::Unknown,
        };
        let mut kept = self.conversations.lock().ok()?;
        match lookup {
            Lookup::Found(json) => {
                let stored = Stored::from_json(&json)?;
                kept.put(id, stored.clone(), json.len(), Instant::now());
                Some(stored)
            }
            Lookup::Missing => {
                kept.remove(id);
                None
            }
            Lookup::Unknown => kept.get(id, Instant::now()),
        }
    }

    /// Forgets the response `id`, here and in Redis.
    pub(crate) fn forget(&self, id: &str) {
        if let Some(redis) = self.redis.get() {
            redis.delete(id);
        }
        if let Ok(mut c) = self.conversations.lock() {
            c.remove(id);
        }
    }

    /// Whether a Responses request goes to `d`'s own `/responses`.
    pub(crate) fn native(&self, d: &Deployment) -> bool {
        match d.native_responses {
            Some(stated) => stated,
            None => d.provider.serves_responses() && !self.chat_only.read().is_ok_and(|set| set.contains(&d.id)),
        }
    }

    /// Whether `err`, the answer of `d`'s `/responses`, says the server has none — then it is
    /// learned (only where the config did not state it), and the caller sends the attempt again
    /// translated.
    pub(crate) fn learn_from(&self, d: &Deployment, err: &AttemptError) -> bool {
        if d.native_responses.is_some() || !has_no_responses_endpoint(err.status, &err.body) {
            return false;
        }
        if let Ok(mut set) = self.chat_only.write() {
            if set.insert(d.id.clone()) {
                crate::output::print_err(format_args!(
                    "pointwork: deployment {}: its server has no /responses (HTTP {}); Responses requests to it are \
                     translated to chat completions from now on",
                    d.id, err.status
                ));
            }
        }
        true
    }
}

/// Whether an error answer of `/responses` says the path does not exist there: a 405, or a 404
/// that is not one of the Responses API's own (an unknown model or previous response, which
/// name their `code`).
fn has_no_responses_endpoint(status: u16, body: &[u8]) -> bool {
    match status {
        405 => true,
        404 => {
            let code = serde_json::from_slice::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v.pointer("/error/code").and_then(|c| c.as_str()).map(str::to_owned));
            !matches!(code.as_deref(), Some("model_not_found" | "previous_response_not_found" | "not_found"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_path_is_told_from_the_apis_own_404s() {
        assert!(has_no_responses_endpoint(404, br#"{"detail":"Not Found"}"#));
        assert!(has_no_responses_endpoint(404, b"404 page not found"));
        assert!(has_no_responses_endpoint(405, b""));
        let model = br#"{"error":{"message":"The model `x` does not exist","code":"model_not_found"}}"#;
        assert!(!has_no_responses_endpoint(404, model));
        let previous =
            br#"{"error":{"message":"Previous response with id 'r' not found.","code":"previous_response_not_found"}}"#;
        assert!(!has_no_responses_endpoint(404, previous));
        assert!(!has_no_responses_endpoint(400, b""));
    }
}
