//! The id of a deployment without `model_info.id`: stable across restarts and reloads, so state
//! keyed by it (cooldowns, latency windows) survives, and independent of `api_key`, so rotating a
//! key keeps it.
//!
//! id = hex of the first 8 bytes of SHA-256 over the `model_name` as written, a NUL byte, and the
//! canonical JSON (keys sorted, no spaces) of `litellm_params` as written (before `os.environ/`
//! substitution, anchors resolved) without its `api_key`.

use sha2::{Digest, Sha256};

use crate::node::Node;

const KEY_EXCLUDED_FROM_ID: &str = "api_key";

/// Entries that differ only in `api_key` (LiteLLM's way to pool several keys for one model)
/// derive the same id: the second and later get `-2`, `-3`, … in file order, so each is its own
/// deployment, and a key rotated on one of them keeps every id. `ids` yields each entry's id
/// and whether it was derived.
pub(crate) fn number_pooled_ids<'a>(ids: impl Iterator<Item = (&'a mut String, bool)>) {
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for id in ids.filter(|(_, derived)| *derived).map(|(id, _)| id) {
        let count = seen.entry(id.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            *id = format!("{id}-{count}");
        }
    }
}
const ID_BYTES: usize = 8;

pub(crate) fn derive_id(model_name: &str, litellm_params: &Node) -> String {
    let mut json = String::new();
    match litellm_params {
        Node::Map(entries) => {
            let kept: Vec<&(String, Node)> = entries.iter().filter(|(k, _)| k != KEY_EXCLUDED_FROM_ID).collect();
            write_map(&mut json, &kept);
        }
        other => write_canonical(&mut json, other),
    }
    let mut hasher = Sha256::new();
    hasher.update(model_name.as_bytes());
    hasher.update([0]);
    hasher.update(json.as_bytes());
    let digest = hasher.finalize();
    digest[..ID_BYTES].iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `node` as canonical JSON: map keys sorted, no whitespace.
fn write_canonical(out: &mut String, node: &Node) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => out.push_str(&i.to_string()),
        Node::Float(_) | Node::Str(_) => out.push_str(&node.to_json().to_string()),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            let all: Vec<&(String, Node)> = entries.iter().collect();
            write_map(out, &all);
        }
    }
}

fn write_map(out: &mut String, entries: &[&(String, Node)]) {
    let mut sorted = entries.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    out.push('{');
    for (i, (key, value)) in sorted.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::Value::String(key.clone()).to_string());
        out.push(':');
        write_canonical(out, value);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(yaml: &str) -> Node {
        crate::yaml::parse_yaml(yaml, "test.yaml").expect("valid YAML")
    }

    fn canonical(node: &Node) -> String {
        let mut s = String::new();
        write_canonical(&mut s, node);
        s
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let n = params("b: 1\na: {z: [1, 'x'], y: 1.5}\nc: ~\n");
        assert_eq!(canonical(&n), r#"{"a":{"y":1.5,"z":[1,"x"]},"b":1,"c":null}"#);
    }

    #[test]
    fn the_id_ignores_api_key_and_key_order() {
        let a = derive_id("gpt", &params("model: openai/gpt-4o\napi_key: sk-one\nrpm: 10\n"));
        let b = derive_id("gpt", &params("rpm: 10\napi_key: sk-two\nmodel: openai/gpt-4o\n"));
        let c = derive_id("gpt", &params("rpm: 10\nmodel: openai/gpt-4o\n"));
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|ch| ch.is_ascii_hexdigit()));
    }

    #[test]
    fn the_id_depends_on_the_group_and_the_other_params() {
        let p = params("model: openai/gpt-4o\n");
        assert_ne!(derive_id("a", &p), derive_id("b", &p));
        assert_ne!(derive_id("a", &p), derive_id("a", &params("model: openai/gpt-4o\nrpm: 1\n")));
    }

    #[test]
    fn the_id_is_pinned() {
        // sha256(b"gpt-4o\0{\"model\":\"openai/gpt-4o\"}")[..8]: ids must never change between
        // releases by accident, or every deployment's state is lost on upgrade.
        let p = params("model: openai/gpt-4o\napi_key: sk-anything\n");
        assert_eq!(derive_id("gpt-4o", &p), "2f4f36c35076b68f");
    }
}
