//! Parsing one YAML text into a [`Node`] tree, with syntax errors reported as `file:line:column`.

use crate::node::Node;
use crate::ConfigError;

/// Parses `text`; `label` names the file in a syntax error (`config.yaml:3:7: …`).
///
/// Booleans follow YAML 1.2 (`true`/`false` only), so `y`, `n` and the "Norway problem" `no` stay
/// strings; the schema's boolean keys still accept `yes`/`no`/`on`/`off` as PyYAML (LiteLLM's
/// parser) does.
pub(crate) fn parse_yaml(text: &str, label: &str) -> Result<Node, ConfigError> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
    };
    serde_saphyr::from_str_with_options::<Node>(text, options).map_err(|e| syntax_error(&e, label))
}

/// Parses a config file as LiteLLM's parser (PyYAML) reads it: a key written twice in one map is
/// read as its later value, and the error that names the first duplicate comes back as a
/// warning to give (a section or setting silently lost is the likelier mistake).
pub(crate) fn parse_config_yaml(text: &str, label: &str) -> Result<(Node, Option<ConfigError>), ConfigError> {
    let strict = match parse_yaml(text, label) {
        Ok(node) => return Ok((node, None)),
        Err(e) if e.message.starts_with(DUPLICATE_KEY) => e,
        Err(e) => return Err(e),
    };
    let options = serde_saphyr::options! {
        strict_booleans: true,
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    let node = serde_saphyr::from_str_with_options::<Node>(text, options).map_err(|e| syntax_error(&e, label))?;
    let message = strict.message.replacen("invalid YAML: ", "", 1);
    let message = message.split(", set DuplicateKeyPolicy").next().unwrap_or(&message).to_string();
    Ok((
        node,
        Some(ConfigError { path: strict.path, message: format!("{message}: the later value is read, as in LiteLLM") }),
    ))
}

/// How the parser's error for a key written twice starts.
const DUPLICATE_KEY: &str = "invalid YAML: duplicate mapping key";

fn syntax_error(error: &serde_saphyr::Error, label: &str) -> ConfigError {
    // The plain message, without the source snippet the default Display renders.
    let message = error.without_snippet().to_string();
    match error.location() {
        Some(at) if at.line() > 0 => {
            let suffix = format!(" at line {}, column {}", at.line(), at.column());
            let message = message.strip_suffix(&suffix).unwrap_or(&message);
            ConfigError {
                path: format!("{label}:{}:{}", at.line(), at.column()),
                message: format!("invalid YAML: {message}"),
            }
        }
        _ => ConfigError { path: label.to_string(), message: format!("invalid YAML: {message}") },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let err = parse_yaml("a: [1, 2\nb: 3\n", "config.yaml").unwrap_err();
        assert_eq!(err.path, "config.yaml:2:2");
        assert_eq!(err.message, "invalid YAML: illegal placement of ':' indicator");
    }

    #[test]
    fn duplicate_keys_are_syntax_errors() {
        let err = parse_yaml("a: 1\na: 2\n", "c.yaml").unwrap_err();
        assert_eq!(err.path, "c.yaml:2:1");
        assert!(err.message.starts_with("invalid YAML: duplicate mapping key: a"), "{err}");
    }

    #[test]
    fn a_config_file_reads_a_duplicate_key_as_its_later_value_with_a_warning() {
        let (node, warning) = parse_config_yaml("a: 1\nb: {c: 1, c: 2}\na: 3\n", "c.yaml").unwrap();
        assert_eq!(node.get("a"), Some(&Node::Int(3)));
        assert_eq!(node.get("b").and_then(|b| b.get("c")), Some(&Node::Int(2)));
        let warning = warning.unwrap();
        assert_eq!(warning.path, "c.yaml:2:11");
        assert_eq!(warning.message, "duplicate mapping key: c: the later value is read, as in LiteLLM");
        assert_eq!(parse_config_yaml("a: 1\n", "c.yaml").unwrap().1, None);
        assert!(parse_config_yaml("a: [1\n", "c.yaml").is_err());
    }

    #[test]
    fn only_yaml_1_2_booleans_are_inferred() {
        let n = parse_yaml("a: true\nb: no\nc: y\nd: False\n", "c.yaml").unwrap();
        assert_eq!(n.get("a"), Some(&Node::Bool(true)));
        assert_eq!(n.get("b"), Some(&Node::Str("no".into())));
        assert_eq!(n.get("c"), Some(&Node::Str("y".into())));
        assert_eq!(n.get("d"), Some(&Node::Bool(false)));
    }

    #[test]
    fn empty_text_is_null() {
        assert_eq!(parse_yaml("", "c.yaml"), Ok(Node::Null));
        assert_eq!(parse_yaml("# only a comment\n", "c.yaml"), Ok(Node::Null));
    }
}
