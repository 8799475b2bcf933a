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
