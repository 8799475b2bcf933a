use super::*;

fn members(body: &str) -> Option<Vec<(String, String)>> {
    let mut found = Vec::new();
    top_level_members(body.as_bytes(), |key, span| {
        found.push((String::from_utf8(key.to_vec()).unwrap(), body[span].to_string()));
        true
    })?;
    Some(found)
}

#[test]
fn finds_each_member_and_its_value() {
    let body = r#" { "model" : "gpt-4o" ,"messages":[{"role":"user","content":"a \"quoted\" \u00e9 \\ word"}],
        "n": -0.5e+3, "stream":true, "x": null, "o": {"a": [1, {"b": false}], "c\n": {}} , "e": [] } "#;
    let found = members(body).unwrap();
    let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["model", "messages", "n", "stream", "x", "o", "e"]);
    assert_eq!(found[0].1, r#""gpt-4o""#);
    assert_eq!(found[2].1, "-0.5e+3");
    assert_eq!(found[5].1, r#"{"a": [1, {"b": false}], "c\n": {}}"#);
    assert_eq!(members("{}").unwrap(), vec![]);
}

#[test]
fn gives_up_where_serde_json_must_decide() {
    for body in [
        "",
        "[]",
        "{",
        r#"{"a":1,}"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":-}"#,
        r#"{"a":1e}"#,
        r#"{"a":tru}"#,
        r#"{"a":nullx}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12g4"}"#,
        "{\"a\":\"tab\there\"}",
        r#"{"a":[1 2]}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":{"b"}}"#,
        r#"{"a":{"b":1]}"#,
        r#"{"a":[1}"#,
        r#"{"a":1} x"#,
        r#"{"a\u0062":1}"#,
        r#"{a:1}"#,
    ] {
        assert_eq!(members(body), None, "{body:?}");
    }
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(65), "]".repeat(65));
    assert_eq!(members(&deep), None);
    let shallow = format!("{{\"a\":{}1{}}}", "[".repeat(64), "]".repeat(64));
    assert!(members(&shallow).is_some());
}

#[test]
fn long_strings_end_at_their_quote_in_every_position() {
    for len in 0..70 {
        for special in ["", "\\\"", "\\u00e9", "é"] {
            let text = format!("{}{special}{}", "x".repeat(len), "y".repeat(len % 17));
            let body = format!(r#"{{"k":"{text}","z":1}}"#);
            let found = members(&body).unwrap();
            assert_eq!(found[0].1, format!("\"{text}\""), "{body:?}");
            assert_eq!(found[1].1, "1");
        }
    }
}

/// The differential check: on random documents and their mutations, the scanner accepts only
/// what serde_json accepts, and finds the members serde_json finds.
mod against_serde_json {
    use super::*;
    use proptest::prelude::*;

    fn json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
            "\"([a-z é/]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}){0,40}\"",
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..5).prop_map(|m| {
                    let m: Vec<String> = m.into_iter().map(|(k, v)| format!(" \"{k}\" :{v}")).collect();
                    format!("{{{}}}", m.join(", "))
                }),
            ]
        })
    }

    fn document() -> impl Strategy<Value = String> {
        prop::collection::vec(("[a-z]{1,3}", json()), 0..6).prop_map(|m| {
            let m: Vec<String> = m.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", m.join(","))
        })
    }

    /// What serde_json makes of a body read as a map of raw values (`None`: refused).
    fn by_serde(body: &str) -> Option<Vec<(String, String)>> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de serde_json::value::RawValue>()? {
                    out.push((k, v.get().to_string()));
                }
                Ok(out)
            }
        }
        let mut de = serde_json::Deserializer::from_str(body);
        let out = serde::Deserializer::deserialize_map(&mut de, Visit).ok()?;
        de.end().ok()?;
        Some(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn valid_documents_agree(body in document()) {
            let serde = by_serde(&body);
            prop_assert!(serde.is_some(), "the generator made invalid JSON: {body:?}");
            if let Some(found) = members(&body) {
                prop_assert_eq!(Some(found), serde);
            } else {
                // Only escaped keys may be left to serde_json among valid documents.
                prop_assert!(body.contains('\\'), "{body:?}");
            }
        }

        #[test]
        fn mutated_documents_are_never_accepted_alone(body in document(), at in any::<prop::sample::Index>(),
                                                     byte in prop::sample::select(b"{}[],:\"\\ 0-.eE+tfnu\x01x".to_vec()),
                                                     cut in any::<bool>()) {
            let mut bytes = body.into_bytes();
            if bytes.is_empty() { return Ok(()); }
            let i = at.index(bytes.len());
            if cut { bytes.remove(i); } else { bytes.insert(i, byte); }
            let Ok(body) = String::from_utf8(bytes) else { return Ok(()) };
            if let Some(found) = members(&body) {
                prop_assert_eq!(Some(found), by_serde(&body), "{:?}", body);
            }
        }
    }
}
