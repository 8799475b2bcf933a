//! What each setting changes, keyword rules, signals and the multi-step patterns.

use super::*;

fn run(settings: ClassifierSettings, text: &str) -> (Tier, f64, Signals) {
    let classifier = Classifier::new(settings);
    let c = classify(text, &classifier);
    (c.tier, c.score, c.signals)
}

impl Signals {
    fn without_override(self) -> Signals {
        Signal::ALL
            .into_iter()
            .filter(|s| self.contains(*s) && *s != Signal::ReasoningOverride)
            .fold(Signals::EMPTY, Signals::with)
    }
}

fn default(text: &str) -> (Tier, f64, Signals) {
    run(ClassifierSettings::default(), text)
}

const CODE_PROMPT: &str = "Write a Python function to merge two sorted lists and return the result";

#[test]
fn defaults_are_litellms() {
    let s = ClassifierSettings::default();
    assert_eq!(s.weights.token_count + s.weights.code_presence + s.weights.reasoning_markers, 0.65);
    assert_eq!(
        (s.boundaries.simple_medium, s.boundaries.medium_complex, s.boundaries.complex_reasoning),
        (0.15, 0.35, 0.60)
    );
    assert_eq!((s.token_thresholds.simple, s.token_thresholds.complex), (15, 400));
    assert_eq!(s.effective_reasoning_override_min_score(), 0.15);
    assert_eq!((s.code_keywords.len(), s.reasoning_keywords.len(), s.technical_keywords.len()), (45, 19, 28));
    assert_eq!(s.simple_keywords.len(), 26);
    assert!(s.keyword_tier_rules.is_empty());
}

#[test]
fn a_weight_moves_the_score_and_the_tier() {
    // Two code keywords and a medium length: 1.0 × 0.30.
    let (tier, score, signals) = default(CODE_PROMPT);
    assert_eq!((tier, score), (Tier::Medium, 0.3));
    assert!(signals.contains(Signal::Code));
    let mut s = ClassifierSettings::default();
    s.weights.code_presence = 0.5;
    assert_eq!(run(s.clone(), CODE_PROMPT).0, Tier::Complex);
    s.weights.code_presence = 0.1;
    assert_eq!(run(s, CODE_PROMPT).0, Tier::Simple);
}

#[test]
fn a_cut_off_moves_the_tier_not_the_score() {
    let mut s = ClassifierSettings::default();
    s.boundaries.medium_complex = 0.30;
    assert_eq!(run(s.clone(), CODE_PROMPT), (Tier::Complex, 0.3, default(CODE_PROMPT).2));
    s.boundaries.complex_reasoning = 0.30;
    assert_eq!(run(s, CODE_PROMPT).0, Tier::Reasoning);
}

#[test]
fn token_thresholds_decide_short_and_long() {
    assert!(default("Tell me a joke about cats.").2.contains(Signal::Short));
    let mut s = ClassifierSettings::default();
    s.token_thresholds.simple = 2;
    assert!(!run(s.clone(), "Tell me a joke about cats.").2.contains(Signal::Short));
    s.token_thresholds.complex = 5;
    let (_, score, signals) = run(s, "Tell me a joke about cats, a long one please.");
    assert!(signals.contains(Signal::Long));
    assert!((score - 0.1).abs() < 1e-12);
}

#[test]
fn keyword_lists_replace_the_defaults() {
    let mut s = ClassifierSettings { code_keywords: vec!["merge".into(), "sorted".into()], ..Default::default() };
    assert_eq!(run(s.clone(), CODE_PROMPT).1, 0.3);
    s.code_keywords = vec!["cobol".into()];
    assert_eq!(run(s, CODE_PROMPT).0, Tier::Simple);
}

#[test]
fn two_reasoning_markers_override_unless_below_the_floor() {
    // "step by step" and "logical": REASONING though the score is only COMPLEX-sized.
    let text = "Explain step by step why this is logical, in detail for the whole team please.";
    let (tier, score, signals) = default(text);
    assert_eq!(tier, Tier::Reasoning);
    assert!((score - 0.25).abs() < 1e-12 && signals.contains(Signal::ReasoningOverride));
    let s = ClassifierSettings { reasoning_override_min_score: Some(0.9), ..Default::default() };
    assert_eq!(run(s, text), (Tier::Medium, score, signals.without_override()));
}

#[test]
fn keyword_rules_come_first_and_the_most_severe_wins() {
    let s = ClassifierSettings {
        keyword_tier_rules: vec![
            ("sorted".into(), Tier::Simple),
            ("Python".into(), Tier::Complex),
            ("merge".into(), Tier::Complex),
            ("haskell".into(), Tier::Reasoning),
        ],
        ..Default::default()
    };
    let classifier = Classifier::new(s);
    let c = classify(CODE_PROMPT, &classifier);
    assert_eq!((c.tier, c.score, c.keyword), (Tier::Complex, 0.0, Some("Python")));
    assert!(c.signals.contains(Signal::KeywordRule));
    // No rule matches: the score decides.
    let c = classify("hello", &classifier);
    assert_eq!((c.tier, c.keyword), (Tier::Simple, None));
    assert_eq!(classify("in Haskell, hello", &classifier).keyword, Some("haskell"));
}

#[test]
fn multi_step_patterns() {
    for text in ["first a, then b", "Step 3 now", "step\t\n7", "see 1. here", "pick a) or b)\n"] {
        assert!(default(text).2.contains(Signal::MultiStep), "{text:?}");
    }
    for text in ["first a\nthen b", "then first", "steps", "v1.2", "f(x)"] {
        assert!(!default(text).2.contains(Signal::MultiStep), "{text:?}");
    }
}

#[test]
fn more_than_three_questions() {
    assert!(!default("a? b? c?").2.contains(Signal::Questions));
    assert!(default("a? b? c? d?").2.contains(Signal::Questions));
}

#[test]
fn classification_is_deterministic() {
    let classifier = Classifier::new(ClassifierSettings::default());
    let a = classify(CODE_PROMPT, &classifier);
    assert_eq!(a, classify(CODE_PROMPT, &classifier));
    assert_eq!(a.signals.iter().map(Signal::as_str).collect::<Vec<_>>(), ["code"]);
}
