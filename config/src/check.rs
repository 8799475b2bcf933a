//! The path-tracking validator: walks the [`Node`] tree by hand, reading typed values through
//! [`Kind`]s and recording every problem with its key path, so one run reports them all.

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use crate::env::{env_reference, Env};
use crate::kinds::Kind;
use crate::node::Node;
use crate::{ConfigError, ConfigWarning};

/// The warning for a LiteLLM key that Pointwork parses past.
pub(crate) const IGNORED: &str = "ignored: not implemented by Pointwork yet";

/// Where a value sits: the included file it came from (`None` = the main file) and its keys,
/// e.g. `models.yaml: model_list[0].litellm_params.model`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyPath {
    file: Option<Rc<str>>,
    keys: String,
}

impl KeyPath {
    pub(crate) fn root(file: Option<Rc<str>>) -> KeyPath {
        KeyPath { file, keys: String::new() }
    }

    pub(crate) fn key(&self, key: &str) -> KeyPath {
        let mut keys = self.keys.clone();
        if !keys.is_empty() {
            keys.push('.');
        }
        keys.push_str(key);
        KeyPath { file: self.file.clone(), keys }
    }

    pub(crate) fn index(&self, index: usize) -> KeyPath {
        KeyPath { file: self.file.clone(), keys: format!("{}[{index}]", self.keys) }
    }

    pub(crate) fn file(&self) -> Option<&Rc<str>> {
        self.file.as_ref()
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.keys.is_empty()) {
            (Some(file), false) => write!(f, "{file}: {}", self.keys),
            (Some(file), true) => f.write_str(file),
            (None, false) => f.write_str(&self.keys),
            (None, true) => f.write_str("(top level)"),
        }
    }
}

/// The entries of one map, remembering which keys the schema has read so the rest can be
/// warned about or refused.
pub(crate) struct Fields<'n> {
    pub(crate) path: KeyPath,
    entries: &'n [(String, Node)],
    taken: Vec<bool>,
}

impl<'n> Fields<'n> {
    /// The value under `key` and its path; the key counts as read even when its value is bad.
    pub(crate) fn take(&mut self, key: &str) -> Option<(&'n Node, KeyPath)> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        self.taken[i] = true;
        Some((&self.entries[i].1, self.path.key(key)))
    }

    /// The value under `key` without reading it (it stays to be read, warned about or refused).
    pub(crate) fn peek(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present with a value other than `null` (read or not).
    pub(crate) fn is_set(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, v)| k == key && !matches!(v, Node::Null))
    }

    /// The keys the schema did not read, in document order.
    pub(crate) fn untaken(&self) -> impl Iterator<Item = (&'n str, &'n Node, KeyPath)> + '_ {
        self.entries
            .iter()
            .zip(&self.taken)
            .filter(|(_, taken)| !**taken)
            .map(|((k, v), _)| (k.as_str(), v, self.path.key(k)))
    }
}

/// Collects errors and warnings while the schema walks the tree, and resolves `os.environ/`.
pub(crate) struct Checker<'e> {
    pub(crate) env: Env<'e>,
    errors: Vec<ConfigError>,
    warnings: Vec<ConfigWarning>,
}

impl<'e> Checker<'e> {
    pub(crate) fn new(env: Env<'e>) -> Checker<'e> {
        Checker { env, errors: Vec::new(), warnings: Vec::new() }
    }

    pub(crate) fn error(&mut self, path: impl fmt::Display, message: impl Into<String>) {
        self.errors.push(ConfigError { path: path.to_string(), message: message.into() });
    }

    pub(crate) fn warn(&mut self, path: impl fmt::Display, message: impl Into<String>) {
        self.warnings.push(ConfigWarning { path: path.to_string(), message: message.into() });
    }

    /// How many errors so far (to tell whether a part added any).
    pub(crate) fn error_count(&self) -> usize {
        self.errors.len()
    }

    pub(crate) fn finish(self) -> (Vec<ConfigError>, Vec<ConfigWarning>) {
        (self.errors, self.warnings)
    }

    /// The node with every `os.environ/NAME` string inside it replaced by the variable's value;
    /// `None` (and an error per missing variable) when a variable is not set.
    pub(crate) fn resolved<'n>(&mut self, node: &'n Node, path: &KeyPath) -> Option<Cow<'n, Node>> {
        if !mentions_env(node) {
            return Some(Cow::Borrowed(node));
        }
        let before = self.errors.len();
        let node = self.substitute(node, path);
        (self.errors.len() == before).then_some(Cow::Owned(node))
    }

    fn substitute(&mut self, node: &Node, path: &KeyPath) -> Node {
        match node {
            Node::Str(s) => match env_reference(s) {
                Some("") => {
                    self.error(path, "os.environ/ must be followed by a variable name");
                    Node::Null
                }
                Some(name) => match self.env.lookup(name) {
                    Some(value) => Node::Str(value),
                    None => {
                        self.error(path, format!("environment variable {name} is not set (os.environ/{name})"));
                        Node::Null
                    }
                },
                None => node.clone(),
            },
            Node::List(items) => {
                Node::List(items.iter().enumerate().map(|(i, item)| self.substitute(item, &path.index(i))).collect())
            }
            Node::Map(entries) => {
                Node::Map(entries.iter().map(|(k, v)| (k.clone(), self.substitute(v, &path.key(k)))).collect())
            }
            Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) => node.clone(),
        }
    }

    /// Reads a value of the given kind, after `os.environ/` substitution.
    pub(crate) fn read<T>(&mut self, node: &Node, path: &KeyPath, kind: &Kind<T>) -> Option<T> {
        let node = self.resolved(node, path)?;
        match (kind.parse)(&node) {
            Some(value) => Some(value),
            None => {
                let got = if kind.secret { node.describe_kind().to_string() } else { node.describe() };
                self.error(path, format!("expected {}, got {got}", kind.expected));
                None
            }
        }
    }

    /// The value of an optional key; an absent key and an explicit `null` both mean "not set".
    pub(crate) fn optional<T>(&mut self, fields: &mut Fields, key: &str, kind: &Kind<T>) -> Option<T> {
        match fields.take(key) {
            None | Some((Node::Null, _)) => None,
            Some((node, path)) => self.read(node, &path, kind),
        }
    }

    /// The value of a required key, or an error naming what was expected.
    pub(crate) fn required<T>(&mut self, fields: &mut Fields, key: &str, kind: &Kind<T>) -> Option<T> {
        match fields.take(key) {
            None | Some((Node::Null, _)) => {
                let path = fields.path.key(key);
                self.error(path, format!("required key is missing (expected {})", kind.expected));
                None
            }
            Some((node, path)) => self.read(node, &path, kind),
        }
    }

    /// The entries of a map, or an error when the node is something else.
    pub(crate) fn map<'n>(&mut self, node: &'n Node, path: KeyPath) -> Option<Fields<'n>> {
        match node {
            Node::Map(entries) => Some(Fields { path, entries, taken: vec![false; entries.len()] }),
            other => {
                self.error(&path, format!("expected a map, got {}", other.describe()));
                None
            }
        }
    }

    /// The entries of a map under `key`, if the key is present and not null.
    pub(crate) fn optional_map<'n>(&mut self, fields: &mut Fields<'n>, key: &str) -> Option<Fields<'n>> {
        match fields.take(key) {
            None | Some((Node::Null, _)) => None,
            Some((node, path)) => self.map(node, path),
        }
    }

    /// The items of a list, or an error when the node is something else.
    pub(crate) fn list<'n>(&mut self, node: &'n Node, path: &KeyPath) -> Option<&'n [Node]> {
        match node {
            Node::List(items) => Some(items),
            other => {
                self.error(path, format!("expected a list, got {}", other.describe()));
                None
            }
        }
    }

    /// Warns about every key of a LiteLLM section that Pointwork does not act on.
    pub(crate) fn warn_ignored(&mut self, fields: &Fields) {
        for (_, _, path) in fields.untaken() {
            self.warn(path, IGNORED);
        }
    }

    /// Refuses every key the schema did not read (Pointwork's own section is strict).
    pub(crate) fn refuse_unknown(&mut self, fields: &Fields, valid: &[&str]) {
        for (key, _, path) in fields.untaken() {
            let hint = match closest(key, valid) {
                Some(close) => format!("did you mean {close:?}? "),
                None => String::new(),
            };
            self.error(path, format!("unknown key; {hint}valid keys: {}", valid.join(", ")));
        }
    }
}

fn mentions_env(node: &Node) -> bool {
    match node {
        Node::Str(s) => env_reference(s).is_some(),
        Node::List(items) => items.iter().any(mentions_env),
        Node::Map(entries) => entries.iter().any(|(_, v)| mentions_env(v)),
        Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) => false,
    }
}

/// The valid key a misspelt one most likely meant: at most two edits away.
fn closest<'v>(key: &str, valid: &[&'v str]) -> Option<&'v str> {
    const MAX_EDITS: usize = 2;
    valid
        .iter()
        .map(|v| (edit_distance(key, v), *v))
        .filter(|(d, _)| *d <= MAX_EDITS)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = Vec::with_capacity(b.len() + 1);
        row.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != *cb);
            row.push(substitution.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn key_paths_name_file_keys_and_indices() {
        let main = KeyPath::root(None).key("model_list").index(3).key("litellm_params");
        assert_eq!(main.to_string(), "model_list[3].litellm_params");
        let inc = KeyPath::root(Some("models.yaml".into())).key("model_list").index(0);
        assert_eq!(inc.to_string(), "models.yaml: model_list[0]");
        assert_eq!(KeyPath::root(Some("m.yaml".into())).to_string(), "m.yaml");
    }

    #[test]
    fn type_errors_say_what_was_expected_and_got() {
        let mut c = Checker::new(Env::new(&no_env));
        let path = KeyPath::root(None).key("weight");
        assert_eq!(c.read(&Node::Str("high".into()), &path, &kinds::POSITIVE_INT), None);
        assert_eq!(c.read(&Node::Int(3), &path, &kinds::POSITIVE_INT), Some(3));
        let (errors, _) = c.finish();
        assert_eq!(errors[0].to_string(), r#"weight: expected a positive integer, got "high""#);
    }

    #[test]
    fn secrets_are_not_shown_in_type_errors() {
        let mut c = Checker::new(Env::new(&no_env));
        let path = KeyPath::root(None).key("api_key");
        assert_eq!(c.read(&Node::Int(12345678901), &path, &kinds::SECRET), None);
        let (errors, _) = c.finish();
        assert_eq!(errors[0].message, "expected a string, got an integer");
    }

    #[test]
    fn env_references_are_substituted_deeply_and_missing_ones_reported() {
        let process = |n: &str| (n == "SET").then(|| "value".to_string());
        let mut c = Checker::new(Env::new(&process));
        let node = crate::yaml::parse_yaml("a: os.environ/SET\nb: [os.environ/UNSET]\n", "t.yaml").unwrap();
        let path = KeyPath::root(None).key("x");
        assert_eq!(c.resolved(&node, &path), None);
        let ok = crate::yaml::parse_yaml("a: os.environ/SET\n", "t.yaml").unwrap();
        let resolved = c.resolved(&ok, &path).unwrap();
        assert_eq!(resolved.get("a"), Some(&Node::Str("value".into())));
        let (errors, _) = c.finish();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].to_string(), "x.b[0]: environment variable UNSET is not set (os.environ/UNSET)");
    }

    #[test]
    fn unknown_keys_get_a_suggestion() {
        assert_eq!(closest("listn", &["listen", "shards"]), Some("listen"));
        assert_eq!(closest("zzzzzz", &["listen", "shards"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
