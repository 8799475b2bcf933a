//! `openrouter_pareto_rules`: the walk's rules by model, read as the plugin's `RuleSpec` reads
//! them (an unknown field or an out-of-range value is an error), with its defaults.

use pointwork_core::pareto::{rule_key, ParetoRule, UnverifiedRegionPolicy};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::node::Node;

/// A rule's fields, as the plugin names them.
const RULE_FIELDS: [&str; 14] = [
    "precision",
    "min_context",
    "min_stats_requests",
    "promotion_polls",
    "value_regression_tolerance",
    "cold_start_fallback",
    "wildcard",
    "log_errors",
    "log_decisions",
    "exclude_regions",
    "allow_unknown_region",
    "unverified_region_policy",
    "strict_provider",
    "max_price",
];

/// One quantization or a non-empty list of them; no empty names.
const PRECISION: Kind<Vec<String>> = Kind {
    expected: "a quantization or a non-empty list of them, like fp8 or [fp8, bf16]",
    parse: |n| {
        let names: Vec<String> = match n {
            Node::Str(s) => vec![s.clone()],
            Node::List(items) => items
                .iter()
                .map(|i| if let Node::Str(s) = i { Some(s.clone()) } else { None })
                .collect::<Option<_>>()?,
            _ => return None,
        };
        (!names.is_empty() && names.iter().all(|s| !s.trim().is_empty())).then_some(names)
    },
    secret: false,
};

/// A rule read, with where it is written (for the checks against the model list).
pub(crate) struct ReadRule {
    /// The rule key: the bare OpenRouter id (`z-ai/glm-5.2`).
    pub(crate) key: String,
    pub(crate) rule: ParetoRule,
    /// The rule's own path, e.g. `litellm_settings.openrouter_pareto_rules."z-ai/glm-5.2"`.
    pub(crate) path: KeyPath,
}

/// The rules of a map of rule key → rule fields, sorted by key. An empty map is an error (the
/// plugin's: leave the key out for the built-in rule).
pub(crate) fn read_rules(c: &mut Checker, node: &Node, path: KeyPath) -> Vec<ReadRule> {
    let Some(rules) = c.map(node, path) else {
        return Vec::new();
    };
    let mut out: Vec<ReadRule> = Vec::new();
    let mut any = false;
    for (written, value, _) in rules.untaken() {
        any = true;
        let rule_path = rules.path.key(&format!("{written:?}"));
        let key = rule_key(written);
        if key.is_empty() || key.chars().any(char::is_whitespace) {
            c.error(&rule_path, "a rule key is a bare OpenRouter model id, like z-ai/glm-5.2");
            continue;
        }
        if key != written {
            c.warn(
                &rule_path,
                format!(
                    "read as {key:?}: rules are looked up by the bare OpenRouter id (the LiteLLM plugin \
                     matches a key written otherwise to no request); write {key:?}"
                ),
            );
        }
        if let Some(first) = out.iter().find(|r| r.key == key) {
            c.error(&rule_path, format!("the same model as {} (both are {key:?} once normalised)", first.path));
            continue;
        }
        let Some(fields) = c.map(value, rule_path.clone()) else { continue };
        let rule = read_rule(c, fields);
        out.push(ReadRule { key: key.to_string(), rule, path: rule_path });
    }
    if !any {
        c.error(
            &rules.path,
            "expected at least one rule (model → rule fields); leave the key out for the built-in rule",
        );
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// One rule: every field optional, defaulting as the plugin's `RuleSpec`; another key is an
/// error.
fn read_rule(c: &mut Checker, mut f: Fields) -> ParetoRule {
    let mut r = ParetoRule::default();
    set(c, &mut f, "precision", &PRECISION, &mut r.precision);
    set(c, &mut f, "min_context", &kinds::POSITIVE_INT, &mut r.min_context);
    set(c, &mut f, "min_stats_requests", &kinds::POSITIVE_INT, &mut r.min_stats_requests);
    set(c, &mut f, "promotion_polls", &kinds::POSITIVE_U32, &mut r.promotion_polls);
    set(c, &mut f, "value_regression_tolerance", &kinds::NON_NEGATIVE_NUMBER, &mut r.value_regression_tolerance);
    set(c, &mut f, "cold_start_fallback", &kinds::STRING_LIST, &mut r.cold_start_fallback);
    set(c, &mut f, "wildcard", &kinds::BOOL, &mut r.wildcard);
    set(c, &mut f, "log_errors", &kinds::BOOL, &mut r.log_errors);
    set(c, &mut f, "log_decisions", &kinds::BOOL, &mut r.log_decisions);
    if let Some(regions) = c.optional(&mut f, "exclude_regions", &kinds::STRING_LIST) {
        r.exclude_regions = normalise_regions(&regions);
    }
    set(c, &mut f, "allow_unknown_region", &kinds::BOOL, &mut r.allow_unknown_region);
    let policy_path = f.path.key("unverified_region_policy");
    if let Some(name) = c.optional(&mut f, "unverified_region_policy", &kinds::STRING) {
        match UnverifiedRegionPolicy::from_name(name.trim()) {
            Some(policy) => r.unverified_region_policy = policy,
            None => {
                let valid: Vec<&str> = UnverifiedRegionPolicy::ALL.iter().map(|p| p.as_str()).collect();
                c.error(policy_path, format!("unknown policy {name:?}; valid: {}", valid.join(", ")));
            }
        }
    }
    set(c, &mut f, "strict_provider", &kinds::BOOL, &mut r.strict_provider);
    r.max_price = c.optional(&mut f, "max_price", &kinds::POSITIVE_NUMBER);
    c.refuse_unknown(&f, &RULE_FIELDS);
    r
}

fn set<T>(c: &mut Checker, f: &mut Fields, key: &str, kind: &Kind<T>, target: &mut T) {
    if let Some(v) = c.optional(f, key, kind) {
        *target = v;
    }
}

/// Region codes as the plugin compares them: trimmed, upper-cased, blanks dropped, first
/// occurrence kept.
fn normalise_regions(regions: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(regions.len());
    for code in regions.iter().map(|r| r.trim().to_uppercase()).filter(|r| !r.is_empty()) {
        if !out.contains(&code) {
            out.push(code);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Env;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// The rules of `yaml` (a map of rules) and every message, as `path: message` lines.
    fn read(yaml: &str) -> (Vec<ReadRule>, Vec<String>, Vec<String>) {
        let node = crate::yaml::parse_yaml(yaml, "t.yaml").expect("valid YAML");
        let mut c = Checker::new(Env::new(&no_env));
        let rules = read_rules(&mut c, &node, KeyPath::root(None).key("rules"));
        let (errors, warnings) = c.finish();
        (rules, errors.iter().map(ToString::to_string).collect(), warnings.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn every_field_defaults_as_the_plugin_documents() {
        let (rules, errors, warnings) = read("z-ai/glm-5.2: {}\n");
        assert_eq!((errors.len(), warnings.len()), (0, 0));
        let r = &rules[0].rule;
        assert_eq!(rules[0].key, "z-ai/glm-5.2");
        assert_eq!(r, &ParetoRule::default());
        assert_eq!(r.precision, ["fp8"]);
        assert_eq!((r.min_context, r.min_stats_requests, r.promotion_polls), (1_000_000, 100, 1));
        assert_eq!(r.value_regression_tolerance, 0.0);
        assert!(!r.wildcard && !r.log_errors && !r.log_decisions && !r.allow_unknown_region && !r.strict_provider);
        assert!(r.exclude_regions.is_empty() && r.cold_start_fallback.is_empty());
        assert_eq!(r.unverified_region_policy, UnverifiedRegionPolicy::NoRoute);
        assert_eq!(r.max_price, None);
    }

    #[test]
    fn every_field_is_read() {
        let (rules, errors, _) = read(
            "m/x:\n  precision: bf16\n  min_context: 131072\n  min_stats_requests: 5\n  promotion_polls: 3\n  \
             value_regression_tolerance: 0.25\n  cold_start_fallback: [novita/fp8]\n  wildcard: true\n  \
             log_errors: true\n  log_decisions: yes\n  exclude_regions: [' cn', SG, cn, '']\n  \
             allow_unknown_region: true\n  unverified_region_policy: trust_fallback\n  strict_provider: true\n  \
             max_price: 1.5\n",
        );
        assert_eq!(errors, Vec::<String>::new());
        let expected = ParetoRule {
            precision: vec!["bf16".into()],
            min_context: 131_072,
            min_stats_requests: 5,
            promotion_polls: 3,
            value_regression_tolerance: 0.25,
            wildcard: true,
            log_errors: true,
            log_decisions: true,
            exclude_regions: vec!["CN".into(), "SG".into()],
            allow_unknown_region: true,
            unverified_region_policy: UnverifiedRegionPolicy::TrustFallback,
            cold_start_fallback: vec!["novita/fp8".into()],
            strict_provider: true,
            max_price: Some(1.5),
        };
        assert_eq!(rules[0].rule, expected);
    }

    #[test]
    fn out_of_range_and_unknown_fields_are_errors_with_their_paths() {
        let (rules, errors, _) = read(
            "z-ai/glm-5.2:\n  precison: fp8\n  precision: []\n  min_context: 0\n  min_stats_requests: -1\n  \
             promotion_polls: 0\n  value_regression_tolerance: -0.1\n  wildcard: maybe\n  \
             unverified_region_policy: open\n  max_price: 0\n  exclude_regions: CN\n",
        );
        assert_eq!(rules.len(), 1);
        let p = r#"rules."z-ai/glm-5.2""#;
        assert_eq!(
            errors,
            [
                format!("{p}.precision: expected a quantization or a non-empty list of them, like fp8 or [fp8, bf16], got a list"),
                format!("{p}.min_context: expected a positive integer, got 0"),
                format!("{p}.min_stats_requests: expected a positive integer, got -1"),
                format!("{p}.promotion_polls: expected a positive integer (at most 4294967295), got 0"),
                format!("{p}.value_regression_tolerance: expected a number (0 or more), got -0.1"),
                format!("{p}.wildcard: expected true or false, got \"maybe\""),
                format!("{p}.exclude_regions: expected a list of strings, got \"CN\""),
                format!("{p}.unverified_region_policy: unknown policy \"open\"; valid: no_route, unpinned, trust_fallback"),
                format!("{p}.max_price: expected a number greater than 0, got 0"),
                format!("{p}.precison: unknown key; did you mean \"precision\"? valid keys: {}", RULE_FIELDS.join(", ")),
            ]
        );
    }

    #[test]
    fn keys_are_normalised_sorted_and_unique() {
        let (rules, errors, warnings) =
            read("z-ai/glm-5.2: {}\nopenrouter/deepseek/v4[1m]: {}\nopenrouter/z-ai/glm-5.2: {}\n' ': {}\n");
        let keys: Vec<&str> = rules.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["deepseek/v4", "z-ai/glm-5.2"]);
        assert_eq!(
            errors,
            [
                r#"rules."openrouter/z-ai/glm-5.2": the same model as rules."z-ai/glm-5.2" (both are "z-ai/glm-5.2" once normalised)"#,
                r#"rules." ": a rule key is a bare OpenRouter model id, like z-ai/glm-5.2"#,
            ]
        );
        assert!(
            warnings[0].starts_with(r#"rules."openrouter/deepseek/v4[1m]": read as "deepseek/v4": "#),
            "{warnings:?}"
        );
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn an_empty_map_or_a_non_map_is_an_error() {
        assert_eq!(
            read("{}\n").1,
            ["rules: expected at least one rule (model → rule fields); leave the key out for the built-in rule"]
        );
        assert_eq!(read("[a]\n").1, ["rules: expected a map, got a list"]);
        assert_eq!(read("m/x: 3\n").1, [r#"rules."m/x": expected a map, got 3"#]);
    }
}
