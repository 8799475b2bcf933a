//! What the complexity router reads from a request body, beside the pick's facts: the newest
//! human ask (the text of the last `user` message that has text; a user turn of tool results
//! only is not an ask) and the session id (`metadata.session_id`; on `/v1/messages` also
//! Anthropic's `metadata.user_id`). The system prompt and earlier turns are not read: they are
//! constant across a session and say nothing about how hard this ask is (as in LiteLLM).

use std::borrow::Cow;
use std::fmt;

use pointwork_core::RouteKind;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The ask and the session of one request.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ask<'b> {
    pub text: Cow<'b, str>,
    pub session: Option<Cow<'b, str>>,
}

#[derive(Deserialize)]
struct Body<'b> {
    #[serde(borrow, default)]
    messages: LastAsk<'b>,
    #[serde(borrow, default)]
    metadata: Option<Metadata<'b>>,
}

#[derive(Deserialize)]
struct Metadata<'b> {
    #[serde(borrow, default)]
    session_id: Option<&'b RawValue>,
    #[serde(borrow, default)]
    user_id: Option<&'b RawValue>,
}

#[derive(Deserialize)]
struct Message<'b> {
    #[serde(borrow, default)]
    role: Option<Cow<'b, str>>,
    #[serde(borrow, default)]
    content: Option<&'b RawValue>,
}

#[derive(Deserialize)]
struct Part<'b> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'b, str>>,
    #[serde(borrow)]
    text: Option<Cow<'b, str>>,
}

/// The newest user message's text, found while the list is read (no list is built).
#[derive(Default)]
struct LastAsk<'b>(Option<Cow<'b, str>>);

impl<'de: 'b, 'b> Deserialize<'de> for LastAsk<'b> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Scan(std::marker::PhantomData))
    }
}

/// Scans a list of messages; any other value (a malformed `messages`) is no ask.
struct Scan<'b>(std::marker::PhantomData<&'b ()>);

impl<'de: 'b, 'b> Visitor<'de> for Scan<'b> {
    type Value = LastAsk<'b>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut last = None;
        // Each element on its own: one odd message does not hide the others.
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            let Ok(m) = serde_json::from_str::<Message<'b>>(raw.get()) else { continue };
            if m.role.as_deref() == Some("user") {
                if let Some(text) = m.content.and_then(text_of) {
                    last = Some(text);
                }
            }
        }
        Ok(LastAsk(last))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LastAsk(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(LastAsk(None))
    }
}

/// A message's text: a string, or its `text` parts joined by newlines (`None` when it has no
/// text at all, e.g. only tool results).
fn text_of(content: &RawValue) -> Option<Cow<'_, str>> {
    if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(content.get()) {
        return Some(s);
    }
    let parts: Vec<Part<'_>> = serde_json::from_str(content.get()).ok()?;
    let mut texts = parts.into_iter().filter(|p| p.kind.as_deref() == Some("text")).filter_map(|p| p.text);
    let first = texts.next()?;
    match texts.next() {
        None => Some(first),
        Some(second) => {
            let mut joined = first.into_owned();
            for t in std::iter::once(second).chain(texts) {
                joined.push('\n');
                joined.push_str(&t);
            }
            Some(Cow::Owned(joined))
        }
    }
}

/// A session id: a string as written, any other scalar as its JSON text (LiteLLM `str()`s it);
/// empty is none.
fn session_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    let id = match serde_json::from_str::<Cow<'_, str>>(raw.get()) {
        Ok(s) => s,
        Err(_) if raw.get() != "null" && !raw.get().starts_with(['{', '[']) => Cow::Borrowed(raw.get()),
        Err(_) => return None,
    };
    (!id.is_empty()).then_some(id)
}

/// Reads the ask of `body` (already known to be a JSON object with a `model`); a body it
/// cannot read has an empty ask and no session.
pub fn read(route: RouteKind, body: &[u8]) -> Ask<'_> {
    let Ok(body) = serde_json::from_slice::<Body<'_>>(body) else { return Ask::default() };
    let session = body.metadata.and_then(|m| {
        let user_id = m.user_id.filter(|_| route == RouteKind::Messages);
        m.session_id.and_then(session_of).or_else(|| user_id.and_then(session_of))
    });
    Ask { text: body.messages.0.unwrap_or_default(), session }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(route: RouteKind, body: &str) -> (String, Option<String>) {
        let a = read(route, body.as_bytes());
        (a.text.into_owned(), a.session.map(Cow::into_owned))
    }

    #[test]
    fn the_newest_user_text_and_the_session() {
        let body = r#"{"model":"auto","messages":[{"role":"system","content":"You are a compiler"},
            {"role":"user","content":"write a parser"},{"role":"assistant","content":"ok"},
            {"role":"user","content":"say \"hi\""}],"metadata":{"session_id":"p1"}}"#;
        assert_eq!(ask(RouteKind::ChatCompletions, body), ("say \"hi\"".into(), Some("p1".into())));
    }

    #[test]
    fn parts_join_and_tool_results_are_not_an_ask() {
        let body = r#"{"model":"a","messages":[
            {"role":"user","content":[{"type":"text","text":"explain"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"this"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"42"}]}]}"#;
        assert_eq!(ask(RouteKind::Messages, body), ("explain\nthis".into(), None));
    }

    #[test]
    fn anthropic_user_id_is_a_session_on_messages_only() {
        let body = r#"{"model":"a","messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"u-7"}}"#;
        assert_eq!(ask(RouteKind::Messages, body).1, Some("u-7".into()));
        assert_eq!(ask(RouteKind::ChatCompletions, body).1, None);
        let both = r#"{"model":"a","metadata":{"user_id":"u","session_id":12}}"#;
        assert_eq!(ask(RouteKind::Messages, both).1, Some("12".into()));
    }

    #[test]
    fn odd_bodies_have_no_ask() {
        for body in [
            r#"{"model":"a","messages":"hi"}"#,
            r#"{"model":"a","messages":[null,1,{"role":"user"}],"metadata":{"session_id":""}}"#,
            r#"{"model":"a","messages":{"role":"user","content":"x"},"metadata":null}"#,
            r#"{"model":"a","metadata":{"session_id":{"a":1}}}"#,
        ] {
            assert_eq!(ask(RouteKind::ChatCompletions, body), (String::new(), None), "{body}");
        }
    }
}
