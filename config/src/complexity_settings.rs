//! The heuristic classifier's knobs in a complexity router's `complexity_router_config`:
//! `keyword_tier_rules`, `tier_boundaries`, `token_thresholds`, `dimension_weights`,
//! `reasoning_override_min_score` and the keyword lists. What is not set keeps LiteLLM's default
//! ([`ClassifierSettings::default`]); partial maps merge with the defaults, as in LiteLLM.

use pointwork_core::complexity::{ClassifierSettings, Tier};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::node::Node;

/// The keys of `complexity_router_config` read here.
pub(crate) const SETTINGS_KEYS: [&str; 10] = [
    "keyword_tier_rules",
    "tier_boundaries",
    "token_thresholds",
    "dimension_weights",
    "reasoning_override_min_score",
    "code_keywords",
    "reasoning_keywords",
    "technical_keywords",
    "custom_technical_keywords",
    "simple_keywords",
];
const BOUNDARY_KEYS: [&str; 3] = ["simple_medium", "medium_complex", "complex_reasoning"];
const THRESHOLD_KEYS: [&str; 2] = ["simple", "complex"];
const WEIGHT_KEYS: [&str; 7] = [
    "tokenCount",
    "codePresence",
    "reasoningMarkers",
    "technicalTerms",
    "simpleIndicators",
    "multiStepPatterns",
    "questionComplexity",
];
const RULE_KEYS: [&str; 2] = ["keywords", "tier"];

/// Reads the classifier's knobs out of `config` (the keys of [`SETTINGS_KEYS`]).
pub(crate) fn read_classifier_settings(c: &mut Checker, config: &mut Fields) -> ClassifierSettings {
    let mut s = ClassifierSettings::default();
    if let Some(rules) = read_keyword_rules(c, config) {
        s.keyword_tier_rules = rules;
    }
    if let Some(mut map) = c.optional_map(config, "tier_boundaries") {
        let b = &mut s.boundaries;
        set(c, &mut map, "simple_medium", &kinds::FINITE_NUMBER, &mut b.simple_medium);
        set(c, &mut map, "medium_complex", &kinds::FINITE_NUMBER, &mut b.medium_complex);
        set(c, &mut map, "complex_reasoning", &kinds::FINITE_NUMBER, &mut b.complex_reasoning);
        c.refuse_unknown(&map, &BOUNDARY_KEYS);
        if !(b.simple_medium < b.medium_complex && b.medium_complex < b.complex_reasoning) {
            c.error(
                &map.path,
                format!(
                    "the boundaries must ascend: simple_medium ({}) < medium_complex ({}) < complex_reasoning ({})",
                    b.simple_medium, b.medium_complex, b.complex_reasoning
                ),
            );
        }
    }
    if let Some(mut map) = c.optional_map(config, "token_thresholds") {
        let t = &mut s.token_thresholds;
        let mut read = |c: &mut Checker, key: &str, slot: &mut usize| {
            if let Some(v) = c.optional(&mut map, key, &kinds::NON_NEGATIVE_INT) {
                *slot = usize::try_from(v).unwrap_or(usize::MAX);
            }
        };
        read(c, "simple", &mut t.simple);
        read(c, "complex", &mut t.complex);
        c.refuse_unknown(&map, &THRESHOLD_KEYS);
        if t.simple >= t.complex {
            c.error(&map.path, format!("simple ({}) must be less than complex ({})", t.simple, t.complex));
        }
    }
    if let Some(mut map) = c.optional_map(config, "dimension_weights") {
        let w = &mut s.weights;
        let slots = [
            &mut w.token_count,
            &mut w.code_presence,
            &mut w.reasoning_markers,
            &mut w.technical_terms,
            &mut w.simple_indicators,
            &mut w.multi_step_patterns,
            &mut w.question_complexity,
        ];
        for (key, slot) in WEIGHT_KEYS.into_iter().zip(slots) {
            set(c, &mut map, key, &kinds::NON_NEGATIVE_NUMBER, slot);
        }
        c.refuse_unknown(&map, &WEIGHT_KEYS);
    }
    s.reasoning_override_min_score = c.optional(config, "reasoning_override_min_score", &kinds::FINITE_NUMBER);
    for (key, list) in [
        ("code_keywords", &mut s.code_keywords),
        ("reasoning_keywords", &mut s.reasoning_keywords),
        ("technical_keywords", &mut s.technical_keywords),
        ("simple_keywords", &mut s.simple_keywords),
    ] {
        if let Some(keywords) = read_keywords(c, config, key) {
            *list = keywords;
        }
    }
    if let Some(extra) = read_keywords(c, config, "custom_technical_keywords") {
        append_new(&mut s.technical_keywords, extra);
    }
    s
}

fn set<T>(c: &mut Checker, fields: &mut Fields, key: &str, kind: &Kind<T>, slot: &mut T) {
    if let Some(value) = c.optional(fields, key, kind) {
        *slot = value;
    }
}

/// A keyword list with its blank entries dropped; `None` when not set, or when nothing is left
/// (LiteLLM then keeps its default list).
fn read_keywords(c: &mut Checker, config: &mut Fields, key: &str) -> Option<Vec<String>> {
    let (node, path) = config.take(key).filter(|(n, _)| !matches!(n, Node::Null))?;
    let list = c.read(node, &path, &kinds::STRING_LIST)?;
    let kept: Vec<String> = list.into_iter().filter(|k| !k.trim().is_empty()).collect();
    if kept.is_empty() && key != "custom_technical_keywords" {
        c.warn(&path, "no keywords: LiteLLM's default list applies");
        return None;
    }
    Some(kept)
}

/// LiteLLM's `custom_technical_keywords`: appended in order, skipping any the list has (ignoring
/// case) or that came before.
fn append_new(list: &mut Vec<String>, extra: Vec<String>) {
    for keyword in extra {
        let lower = keyword.to_lowercase();
        if !list.iter().any(|k| k.to_lowercase() == lower) {
            list.push(keyword);
        }
    }
}

/// `keyword_tier_rules`: a list of `{keywords: [...], tier: TIER}`, flattened to (keyword, tier)
/// in order. Keywords are stripped and blank ones dropped; a rule needs one left.
fn read_keyword_rules(c: &mut Checker, config: &mut Fields) -> Option<Vec<(String, Tier)>> {
    let (node, path) = config.take("keyword_tier_rules").filter(|(n, _)| !matches!(n, Node::Null))?;
    let items = c.list(node, &path)?;
    let mut rules = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(mut rule) = c.map(item, path.index(i)) else { continue };
        let keywords = c.required(&mut rule, "keywords", &kinds::STRING_LIST);
        let tier = match rule.take("tier") {
            None | Some((Node::Null, _)) => {
                c.error(rule.path.key("tier"), format!("required key is missing (expected {})", TIER_EXPECTED));
                None
            }
            Some((node, tier_path)) => read_tier(c, node, &tier_path),
        };
        c.refuse_unknown(&rule, &RULE_KEYS);
        let Some(keywords) = keywords else { continue };
        let kept: Vec<String> =
            keywords.iter().map(|k| k.trim()).filter(|k| !k.is_empty()).map(str::to_string).collect();
        if kept.is_empty() {
            c.error(rule.path.key("keywords"), "needs at least one non-blank keyword");
            continue;
        }
        if let Some(tier) = tier {
            rules.extend(kept.into_iter().map(|k| (k, tier)));
        }
    }
    Some(rules)
}

const TIER_EXPECTED: &str = "one of SIMPLE, MEDIUM, COMPLEX, REASONING";

/// A tier name (any case, surrounding spaces ignored), or an error naming the four.
pub(crate) fn read_tier(c: &mut Checker, node: &Node, path: &KeyPath) -> Option<Tier> {
    let name = c.read(node, path, &kinds::STRING)?;
    let tier = Tier::parse(name.trim());
    if tier.is_none() {
        c.error(path, unknown_tier(&name));
    }
    tier
}

/// LiteLLM also has NON_REASONING and `tier_definitions`' own tiers; Pointwork has the four.
pub(crate) fn unknown_tier(name: &str) -> String {
    format!(
        "unknown tier {name:?}: Pointwork supports the four tiers SIMPLE, MEDIUM, COMPLEX, REASONING \
         (not LiteLLM's NON_REASONING nor tier_definitions' own tiers)"
    )
}
