//! What the complexity router reads from a request body, beside the pick's facts: the newest
//! human ask (the text of the last `user` message that has text; a user turn of tool results
//! only is not an ask) and the session id (`metadata.session_id`; on `/v1/messages` also
//! Anthropic's `metadata.user_id`). The system prompt and earlier turns are not read: they are
//! constant across a session and say nothing about how hard this ask is (as in LiteLLM).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use pointwork_core::RouteKind;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The ask and the session of one request.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ask<'b> {
    pub text: Cow<'b, str>,
    pub session: Option<Cow<'b, str>>,
}

// One pass over the body, every member read where it is: a value of an unexpected type is read
// as absent (never an error that would hide the rest).

#[derive(Deserialize)]
struct Body<'b> {
    #[serde(borrow, default)]
    messages: Lenient<LastAsk<'b>>,
    /// The Responses API's: a string, or items (its messages read as `messages` are).
    #[serde(borrow, default)]
    input: Lenient<InputAsk<'b>>,
    #[serde(borrow, default)]
    metadata: Lenient<Metadata<'b>>,
}

#[derive(Default, Deserialize)]
struct Metadata<'b> {
    #[serde(borrow, default)]
    session_id: Lenient<Id<'b>>,
    #[serde(borrow, default)]
    user_id: Lenient<Id<'b>>,
}

#[derive(Deserialize)]
struct Message<'b> {
    #[serde(borrow, default)]
    role: Lenient<Text<'b>>,
    #[serde(borrow, default)]
    content: Lenient<Content<'b>>,
}

#[derive(Deserialize)]
struct Part<'b> {
    #[serde(borrow, rename = "type", default)]
    kind: Lenient<Text<'b>>,
    #[serde(borrow, default)]
    text: Lenient<Text<'b>>,
}

/// A value of the kind `T` reads; any other value (skipped) is `None`.
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

/// What a lenient value does with each JSON kind; the defaults skip it.
trait Kind<'de>: Sized {
    fn text(_: Cow<'de, str>) -> Option<Self> {
        None
    }
    fn number(_: String) -> Option<Self> {
        None
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl<'de, T: Kind<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData)).map(Lenient)
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Kind<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(T::text(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(T::text(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(T::text(Cow::Owned(s)))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(T::number(n.to_string()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(T::number(n.to_string()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok(T::number(n.to_string()))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        T::seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::map(map)
    }
}

/// A string.
struct Text<'b>(Cow<'b, str>);

impl<'de: 'b, 'b> Kind<'de> for Text<'b> {
    fn text(s: Cow<'de, str>) -> Option<Self> {
        Some(Text(s))
    }
}

/// A session id: a string as written, a number as its text (LiteLLM `str()`s it).
struct Id<'b>(Cow<'b, str>);

impl<'de: 'b, 'b> Kind<'de> for Id<'b> {
    fn text(s: Cow<'de, str>) -> Option<Self> {
        Some(Id(s))
    }
    fn number(n: String) -> Option<Self> {
        Some(Id(Cow::Owned(n)))
    }
}

/// An object read with its derived reader (its members are lenient themselves).
macro_rules! object_kind {
    ($t:ident) => {
        impl<'de: 'b, 'b> Kind<'de> for $t<'b> {
            fn map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
                $t::deserialize(MapAccessDeserializer::new(map)).map(Some)
            }
        }
    };
}
object_kind!(Metadata);
object_kind!(Message);
object_kind!(Part);

/// A message's text: a string, or its `text` parts joined by newlines (none when it has no text
/// at all, e.g. only tool results).
struct Content<'b>(Cow<'b, str>);

impl<'de: 'b, 'b> Kind<'de> for Content<'b> {
    fn text(s: Cow<'de, str>) -> Option<Self> {
        Some(Content(s))
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut joined: Option<Cow<'b, str>> = None;
        while let Some(Lenient(part)) = seq.next_element::<Lenient<Part<'b>>>()? {
            let Some(Part { kind: Lenient(Some(kind)), text: Lenient(Some(text)) }) = part else { continue };
            if kind.0 != "text" && kind.0 != "input_text" {
                continue;
            }
            joined = Some(match joined {
                None => text.0,
                Some(before) => Cow::Owned(format!("{before}\n{}", text.0)),
            });
        }
        Ok(joined.map(Content))
    }
}

/// The newest user message's text, found while the list is read (no list is built).
struct LastAsk<'b>(Cow<'b, str>);

/// The Responses API's `input`: a string is the ask; items are read as `messages` are.
struct InputAsk<'b>(Cow<'b, str>);

impl<'de: 'b, 'b> Kind<'de> for InputAsk<'b> {
    fn text(s: Cow<'de, str>) -> Option<Self> {
        Some(InputAsk(s))
    }
    fn seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        Ok(LastAsk::seq(seq)?.map(|last| InputAsk(last.0)))
    }
}

impl<'de: 'b, 'b> Kind<'de> for LastAsk<'b> {
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut last = None;
        while let Some(Lenient(message)) = seq.next_element::<Lenient<Message<'b>>>()? {
            let Some(Message { role: Lenient(Some(role)), content: Lenient(Some(content)) }) = message else {
                continue;
            };
            if role.0 == "user" {
                last = Some(LastAsk(content.0));
            }
        }
        Ok(last)
    }
}

/// Reads the ask of `body` (already known to be a JSON object with a `model`); a body it
/// cannot read has an empty ask and no session.
pub fn read(route: RouteKind, body: &[u8]) -> Ask<'_> {
    let Ok(body) = serde_json::from_slice::<Body<'_>>(body) else { return Ask::default() };
    let metadata = body.metadata.0.unwrap_or_default();
    let user_id = metadata.user_id.0.filter(|_| route == RouteKind::Messages);
    let session = metadata.session_id.0.or(user_id).map(|id| id.0).filter(|id| !id.is_empty());
    let last = body.messages.0.map(|a| a.0).or(body.input.0.map(|i| i.0));
    Ask { text: last.unwrap_or_default(), session }
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
    fn odd_members_are_absent_and_hide_nothing_else() {
        let body = r#"{"model":"a","metadata":"x","messages":[{"role":"user","content":"hello"},
            {"role":5,"content":"x"},{"role":"user","content":7},{"role":"user","content":[3,{"type":"text","text":null}]}]}"#;
        assert_eq!(ask(RouteKind::ChatCompletions, body), ("hello".into(), None));
    }

    #[test]
    fn a_responses_input_is_the_ask() {
        assert_eq!(ask(RouteKind::Responses, r#"{"model":"m","input":"plain"}"#).0, "plain");
        let items = r#"{"model":"m","instructions":"sys","input":[{"role":"user","content":"first"},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},
            {"type":"function_call_output","call_id":"c","output":"42"},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}]}"#;
        assert_eq!(ask(RouteKind::Responses, items).0, "second");
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
