//! The generic YAML tree the config is parsed into before it is walked by hand. Maps keep their
//! keys in document order (anchors and `<<:` merge keys are already resolved by the parser), so
//! errors and warnings come out in the order a reader meets them.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    /// Wide enough for every YAML integer serde hands over (`i64` and `u64`).
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The value under `key` when this is a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// How a type error names this value: scalars as written, collections by kind.
    pub(crate) fn describe(&self) -> String {
        match self {
            Node::Null => "null".to_string(),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            Node::Float(x) => x.to_string(),
            Node::Str(s) => format!("{s:?}"),
            Node::List(_) => "a list".to_string(),
            Node::Map(_) => "a map".to_string(),
        }
    }

    /// The kind of value, for type errors about values that must not be shown (secrets).
    pub(crate) fn describe_kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a number",
            Node::Str(_) => "a string",
            Node::List(_) => "a list",
            Node::Map(_) => "a map",
        }
    }

    /// The value as JSON. Map keys keep document order when `serde_json` preserves order.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => int_to_json(*i),
            Node::Float(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
            Node::Str(s) => Value::String(s.clone()),
            Node::List(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Node::Map(entries) => Value::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }
}

impl From<&serde_json::Value> for Node {
    /// A JSON document (a model stored in the database) as the tree the config walks.
    fn from(value: &serde_json::Value) -> Node {
        use serde_json::Value;
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Node::Int(i.into()),
                (None, Some(u)) => Node::Int(u.into()),
                _ => Node::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Node::Str(s.clone()),
            Value::Array(items) => Node::List(items.iter().map(Node::from).collect()),
            Value::Object(map) => Node::Map(map.iter().map(|(k, v)| (k.clone(), Node::from(v))).collect()),
        }
    }
}

fn int_to_json(i: i128) -> serde_json::Value {
    if let Ok(v) = i64::try_from(i) {
        v.into()
    } else if let Ok(v) = u64::try_from(i) {
        v.into()
    } else {
        // Out of range for JSON numbers; only reachable for hand-built nodes.
        serde_json::Value::String(i.to_string())
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<Node>()? {
            let key = match key {
                Node::Str(s) => s,
                Node::Bool(b) => b.to_string(),
                Node::Int(i) => i.to_string(),
                Node::Float(x) => x.to_string(),
                Node::Null => return Err(de::Error::custom("a mapping key must not be null")),
                Node::List(_) | Node::Map(_) => return Err(de::Error::custom("a mapping key must be a scalar")),
            };
            let value = map.next_value::<Node>()?;
            // A key written twice reaches here only when the parser lets it (`parse_config_yaml`):
            // the later value wins in the first one's place, as in a Python dict.
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key, value)),
            }
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Node {
        crate::yaml::parse_yaml(yaml, "test.yaml").expect("valid YAML")
    }

    fn map(entries: &[(&str, Node)]) -> Node {
        Node::Map(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn scalars_keep_their_types() {
        let n = parse("a: 1\nb: -2\nc: 1.5\nd: true\ne: hi\nf: ~\ng: '3'\n");
        assert_eq!(
            n,
            map(&[
                ("a", Node::Int(1)),
                ("b", Node::Int(-2)),
                ("c", Node::Float(1.5)),
                ("d", Node::Bool(true)),
                ("e", Node::Str("hi".into())),
                ("f", Node::Null),
                ("g", Node::Str("3".into())),
            ])
        );
    }

    #[test]
    fn maps_keep_document_order() {
        let n = parse("z: 1\na: 2\nm: 3\n");
        let keys: Vec<&str> = match &n {
            Node::Map(e) => e.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!("not a map"),
        };
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn anchors_and_merge_keys_are_resolved() {
        let n = parse("base: &b {k: 1, j: 2}\ncopy: *b\nmerged:\n  <<: *b\n  j: 3\n");
        assert_eq!(n.get("copy"), n.get("base"));
        let merged = n.get("merged").expect("merged");
        assert_eq!(merged.get("k"), Some(&Node::Int(1)));
        assert_eq!(merged.get("j"), Some(&Node::Int(3)));
        assert_eq!(merged.get("<<"), None);
    }

    #[test]
    fn scalar_keys_become_strings() {
        let n = parse("1: a\ntrue: b\n");
        assert_eq!(n.get("1"), Some(&Node::Str("a".into())));
        assert_eq!(n.get("true"), Some(&Node::Str("b".into())));
        assert!(serde_saphyr::from_str::<Node>("? [a]\n: b\n").is_err());
    }

    #[test]
    fn describes_values_for_type_errors() {
        assert_eq!(Node::Str("high".into()).describe(), "\"high\"");
        assert_eq!(Node::Int(-3).describe(), "-3");
        assert_eq!(Node::Map(vec![]).describe(), "a map");
        assert_eq!(Node::List(vec![]).describe(), "a list");
    }
}
