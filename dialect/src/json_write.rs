//! Writing translated bodies as JSON, byte for byte what serde_json writes, with strings escaped
//! a block at a time: serde_json escapes byte by byte (about 12 instructions a byte), which made
//! a translated 1 KB prompt cost more to write than the whole plain request.

use serde_json::Value;

use crate::json_plain::{is_special, plain_blocks};

/// Appends `value` as compact JSON (members in the map's order, as serde_json writes them).
pub(crate) fn push_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // A Vec's writer never fails, and a number always serialises.
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => push_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_str(out, key);
                out.push(b':');
                push_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Appends `text` as a JSON string: plain runs copied whole, and serde_json's escapes (`\"`, `\\`,
/// `\b \f \n \r \t`, `\u00xx` for the other control characters).
pub(crate) fn push_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut at = 0;
    loop {
        let run = plain_blocks(&bytes[at..]);
        let special = bytes[at + run..].iter().position(|&b| is_special(b)).map_or(bytes.len(), |i| at + run + i);
        out.extend_from_slice(&bytes[at..special]);
        let Some(&b) = bytes.get(special) else { break };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
            }
        }
        at = special + 1;
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        push_value(&mut out, value);
        out
    }

    #[test]
    fn every_escape_as_serde_json_writes_it() {
        let all: String = (0u8..0x80).map(char::from).chain("é€😀".chars()).collect();
        for text in [all.clone(), all.repeat(3), String::new(), "x".repeat(100) + "\"", "\\".repeat(70)] {
            let value = Value::String(text);
            assert_eq!(ours(&value), serde_json::to_vec(&value).unwrap());
        }
        let value = serde_json::json!({"a\n": [1, -2, 3.5, 1e300, null, true, false, {"": "\u{1f}"}], "b": {}});
        assert_eq!(ours(&value), serde_json::to_vec(&value).unwrap());
    }

    fn value() -> impl Strategy<Value = Value> {
        let text = prop::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\n'),
                Just('\u{1}'),
                Just('\u{7f}'),
                Just('é'),
                Just('😀'),
                Just('a')
            ],
            0..80,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((text.clone(), inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn writes_what_serde_json_writes(value in value()) {
            prop_assert_eq!(ours(&value), serde_json::to_vec(&value).unwrap());
        }
    }
}
