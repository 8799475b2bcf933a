//! `litellm_params.extra_body`: members the gateway adds at the top level of every request body
//! sent to the deployment (an OpenRouter `provider` block pins providers this way). Each member
//! is kept as its name and its value's JSON text, in config order, `os.environ/` substituted.

use crate::check::{Checker, Fields};
use crate::node::Node;

/// The `litellm_params` key.
pub(crate) const EXTRA_BODY: &str = "extra_body";

/// Members the gateway writes itself from the request: an `extra_body` value would fight it.
const GATEWAY_MEMBERS: [&str; 3] = ["model", "messages", "stream"];

/// `extra_body` of one entry's `litellm_params` (empty when absent or `null`).
pub(crate) fn read_extra_body(c: &mut Checker, params: &mut Fields) -> Vec<(Box<str>, Box<str>)> {
    let Some(members) = c.optional_map(params, EXTRA_BODY) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value, path) in members.untaken() {
        if GATEWAY_MEMBERS.contains(&name) {
            c.error(&path, format!("the gateway sets {name:?} from the request; extra_body must not set it"));
            continue;
        }
        if let Some(value) = c.resolved(value, &path) {
            out.push((name.into(), json_text(&value).into()));
        }
    }
    out
}

fn json_text(value: &Node) -> String {
    // `Value`'s Display is its compact JSON text, and cannot fail.
    value.to_json().to_string()
}

#[cfg(test)]
mod tests {
    use crate::load_str;
    use std::path::Path;

    fn env(name: &str) -> Option<String> {
        (name == "ZDR").then(|| "true".to_string())
    }

    fn entry(extra_body: &str) -> String {
        format!(
            "model_list:\n  - model_name: g\n    litellm_params:\n      model: openrouter/z-ai/glm-5.2\n      extra_body: {extra_body}\n"
        )
    }

    fn members(extra_body: &str) -> Vec<(String, String)> {
        let loaded = load_str(&entry(extra_body), Path::new(""), &env).expect("compiles");
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        loaded.config.deployments[0].extra_body.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn errors(extra_body: &str) -> Vec<String> {
        let errors = load_str(&entry(extra_body), Path::new(""), &env).expect_err("refused").0;
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn members_keep_config_order_as_json_text_with_env_substituted() {
        assert_eq!(
            members("{provider: {only: [novita/fp8], zdr: os.environ/ZDR}, transforms: [], top_k: 3}"),
            [
                ("provider".to_string(), r#"{"only":["novita/fp8"],"zdr":"true"}"#.to_string()),
                ("transforms".to_string(), "[]".to_string()),
                ("top_k".to_string(), "3".to_string()),
            ]
        );
        assert_eq!(members("null"), []);
    }

    #[test]
    fn a_non_map_and_the_gateways_own_members_are_errors() {
        assert_eq!(errors("[provider]"), ["model_list[0].litellm_params.extra_body: expected a map, got a list"]);
        assert_eq!(
            errors("{model: x, stream: true, messages: [], provider: {zdr: os.environ/NOPE}}"),
            [
                r#"model_list[0].litellm_params.extra_body.model: the gateway sets "model" from the request; extra_body must not set it"#,
                r#"model_list[0].litellm_params.extra_body.stream: the gateway sets "stream" from the request; extra_body must not set it"#,
                r#"model_list[0].litellm_params.extra_body.messages: the gateway sets "messages" from the request; extra_body must not set it"#,
                "model_list[0].litellm_params.extra_body.provider.zdr: environment variable NOPE is not set (os.environ/NOPE)",
            ]
        );
    }
}
