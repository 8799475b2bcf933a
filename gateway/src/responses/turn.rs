//! One Responses request's place in its conversation: the id its translated answer gets, the
//! items of the response it continues (`previous_response_id`), where a native follow-up must
//! go, and what is kept of its answer.

use std::cell::OnceCell;
use std::ops::Range;
use std::sync::Arc;

use pointwork_core::{Deployment, DeploymentIdx, Snapshot};
use serde_json::Value;

use super::{Conversation, ResponsesShared, Stored};
use crate::dialect::responses::ResponseEcho;
use crate::facts::Extracted;
use crate::respond::Reply;
use crate::upstream::exchange::ResponsesTurn;

/// The prefix of the ids the gateway gives translated responses (`resp_pw…`): an id with it that
/// is not kept is expired, not a provider's.
const OWN_ID_PREFIX: &str = "resp_pw";

pub struct Turn<'a> {
    /// The request's body and the model it asked for, for the echo.
    body: &'a [u8],
    model: &'a str,
    /// The translated answer's id and what it echoes of the request: made for the first
    /// translated answer (a native one needs neither).
    echo: OnceCell<ResponseEcho>,
    /// The kept conversation this request continues, as items, and its size.
    pub(crate) history: Vec<Value>,
    history_bytes: usize,
    /// Where the request may go: anywhere, only to the deployment that holds its native
    /// previous response, or to any native deployment (a previous response the gateway never
    /// saw: the provider's to find).
    pub(crate) goes: Goes,
    /// `store` is not `false`: the answer is kept.
    store: bool,
    /// This request's input as items, from the first translated attempt.
    input_items: OnceCell<Vec<Value>>,
    shared: Arc<ResponsesShared>,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Goes {
    Anywhere,
    To(Arc<str>),
    Native,
}

impl<'a> Turn<'a> {
    /// The turn of a request for `model` with `body`, or the error answer: a
    /// `previous_response_id` of the wrong type, or one of the gateway's own that is no longer
    /// kept.
    pub(crate) async fn new(
        shared: &Arc<ResponsesShared>,
        body: &'a [u8],
        extracted: &'a Extracted,
    ) -> Result<Turn<'a>, Reply> {
        // Found by the facts' extraction; decoded only when the request names them.
        let member = |span: &Option<Range<usize>>| {
            span.clone().map_or(Value::Null, |span| serde_json::from_slice(&body[span]).unwrap_or(Value::Null))
        };
        let model = &extracted.facts.model;
        let store = match member(&extracted.store) {
            Value::Null => true,
            Value::Bool(store) => store,
            _ => return Err(invalid("store", "Invalid type for 'store': expected a boolean.")),
        };
        let (mut history, mut history_bytes, mut goes) = (Vec::new(), 0, Goes::Anywhere);
        match member(&extracted.previous_response_id) {
            Value::Null => {}
            Value::String(id) => match shared.find(&id).await {
                Some(Stored::Translated(conversation)) => {
                    (history, history_bytes) = (conversation.items(), conversation.bytes);
                }
                Some(Stored::Native(deployment)) => goes = Goes::To(deployment),
                None if id.starts_with(OWN_ID_PREFIX) => return Err(previous_not_found(&id)),
                None => goes = Goes::Native,
            },
            _ => {
                let why = "Invalid type for 'previous_response_id': expected a string.";
                return Err(invalid("previous_response_id", why));
            }
        }
        let (echo, input_items, shared) = (OnceCell::new(), OnceCell::new(), shared.clone());
        Ok(Turn { body, model, echo, history, history_bytes, goes, store, input_items, shared })
    }

    /// Whether `d` may serve this request.
    pub(crate) fn allows(&self, d: &Deployment) -> bool {
        match &self.goes {
            Goes::Anywhere => true,
            Goes::To(id) => d.id == **id,
            Goes::Native => self.shared.native(d),
        }
    }

    /// The deployments of `snap` this request may not go to (none for most).
    pub(crate) fn excluded(&self, snap: &Snapshot) -> Vec<DeploymentIdx> {
        if self.goes == Goes::Anywhere {
            return Vec::new();
        }
        let all = snap.deployments.iter().enumerate();
        all.filter(|(_, d)| !self.allows(d)).map(|(i, _)| DeploymentIdx(i as u32)).collect()
    }

    /// Whether a native answer is worth reading for its id: only when it is kept.
    pub(crate) fn remembers(&self) -> bool {
        self.store
    }

    /// Keeps this request's input items (from its first translation).
    pub(crate) fn input_read(&self, items: Vec<Value>) {
        let _ = self.input_items.set(items);
    }
}

impl ResponsesTurn for Turn<'_> {
    fn echo(&self) -> &ResponseEcho {
        self.echo.get_or_init(|| ResponseEcho::new(self.body, &new_id(), crate::clock::unix_now(), self.model))
    }

    fn remember(&self, response: Value, response_bytes: usize) {
        if !self.store {
            return;
        }
        let mut input_items = self.history.clone();
        input_items.extend(self.input_items.get().into_iter().flatten().cloned());
        // The input is in the request body (and the history was a kept conversation's).
        let bytes = response_bytes + self.body.len() + self.history_bytes;
        let conversation = Conversation { response, input_items, bytes };
        self.shared.keep(self.echo().id(), Stored::Translated(Arc::new(conversation)), bytes);
    }

    fn remember_native(&self, response_id: &str, d: &str) {
        if !self.store || response_id.is_empty() {
            return;
        }
        self.shared.keep(response_id, Stored::Native(d.into()), response_id.len() + d.len() + 64);
    }
}

/// A response id of the gateway's own: [`OWN_ID_PREFIX`] and 48 random hex digits.
fn new_id() -> String {
    let mut bytes = [0u8; 24];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(OWN_ID_PREFIX.len() + 48);
    id.push_str(OWN_ID_PREFIX);
    for b in bytes {
        id.push(HEX[usize::from(b >> 4)].into());
        id.push(HEX[usize::from(b & 15)].into());
    }
    id
}

/// OpenAI's answer to a `previous_response_id` it does not hold.
pub(crate) fn previous_not_found(id: &str) -> Reply {
    let message = format!("Previous response with id '{id}' not found.");
    let body = serde_json::json!({"error": {"message": message, "type": "invalid_request_error",
        "param": "previous_response_id", "code": "previous_response_not_found"}});
    Reply::json(404, body.to_string().into_bytes())
}

fn invalid(param: &str, message: &str) -> Reply {
    Reply::json(400, crate::errors::openai_error(400, message, Some(param)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_ids_are_the_prefix_and_48_hex_digits_each_new() {
        let (a, b) = (new_id(), new_id());
        assert!(a.starts_with(OWN_ID_PREFIX) && a.len() == OWN_ID_PREFIX.len() + 48, "{a}");
        assert!(a[OWN_ID_PREFIX.len()..].bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
