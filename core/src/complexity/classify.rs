//! The scan and the score: LiteLLM's `ComplexityRouter._score_and_classify` and
//! `_lexical_tier_override` (v1.110.2) over one prompt, in one pass and without allocating.

use super::lexicon::{hash_step, is_word, matches_at, Entry, Lexicon, RULE};
use super::signals::{Signal, Signals};
use super::{ClassifierSettings, Tier};

/// The four scored keyword lists, in the lexicon's list ids.
const CODE: usize = 0;
const REASONING: usize = 1;
const TECHNICAL: usize = 2;
const SIMPLE: usize = 3;
/// How many distinct matches settle each list's score (the high threshold of LiteLLM's
/// `_score_keyword_match`: code 2, reasoning 2, technical 4, simple 1); matches past it change
/// nothing, so the scan stops trying that list's keywords.
const SATURATION: [usize; 4] = [2, 2, 4, 1];

/// The settings with their keywords indexed for the scan; build once per configuration.
#[derive(Clone, Debug)]
pub struct Classifier {
    settings: ClassifierSettings,
    lexicon: Lexicon,
}

/// One prompt's classification.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Classification<'s> {
    pub tier: Tier,
    /// The weighted score (0 when a keyword rule decided).
    pub score: f64,
    pub signals: Signals,
    /// The keyword rule's keyword that decided the tier, as configured.
    pub keyword: Option<&'s str>,
}

impl Classifier {
    pub fn new(settings: ClassifierSettings) -> Classifier {
        let rule_words: Vec<String> = settings.keyword_tier_rules.iter().map(|(k, _)| k.clone()).collect();
        let lexicon = Lexicon::new([
            (CODE as u8, &settings.code_keywords[..]),
            (REASONING as u8, &settings.reasoning_keywords[..]),
            (TECHNICAL as u8, &settings.technical_keywords[..]),
            (SIMPLE as u8, &settings.simple_keywords[..]),
            (RULE, &rule_words[..]),
        ]);
        Classifier { settings, lexicon }
    }

    pub fn settings(&self) -> &ClassifierSettings {
        &self.settings
    }

    /// Classifies `text`, the caller's own ask (the last user turn). The system prompt is not
    /// scored, as in LiteLLM: it is constant across a session, so it says nothing about how one
    /// request differs from the next, and an agent's identity prompt alone saturates the code list.
    pub fn classify(&self, text: &str) -> Classification<'_> {
        let facts = self.scan(text.as_bytes());
        if let Some(rule) = facts.rule {
            let (keyword, tier) = &self.settings.keyword_tier_rules[rule];
            return Classification {
                tier: *tier,
                score: 0.0,
                signals: Signals::EMPTY.with(Signal::KeywordRule),
                keyword: Some(keyword.as_str()),
            };
        }
        self.score(&facts)
    }

    fn score(&self, f: &Facts) -> Classification<'_> {
        let s = &self.settings;
        let w = &s.weights;
        let mut signals = Signals::EMPTY;
        let mut score = 0.0;
        let mut add = |fired: bool, signal: Signal, value: f64, weight: f64| {
            if fired {
                signals = signals.with(signal);
                score += value * weight;
            }
        };
        // LiteLLM estimates tokens as characters / 4 (`_estimate_tokens`).
        let tokens = f.chars / 4;
        add(tokens < s.token_thresholds.simple, Signal::Short, -1.0, w.token_count);
        add(tokens > s.token_thresholds.complex, Signal::Long, 1.0, w.token_count);
        let [code, reasoning, technical, simple] = f.counts;
        add(code >= 1, Signal::Code, if code >= 2 { 1.0 } else { 0.5 }, w.code_presence);
        add(reasoning >= 1, Signal::Reasoning, if reasoning >= 2 { 1.0 } else { 0.7 }, w.reasoning_markers);
        add(technical >= 2, Signal::Technical, if technical >= 4 { 1.0 } else { 0.5 }, w.technical_terms);
        add(simple >= 1, Signal::Simple, -1.0, w.simple_indicators);
        add(f.multi_step, Signal::MultiStep, 0.5, w.multi_step_patterns);
        add(f.questions > 3, Signal::Questions, 0.5, w.question_complexity);

        let b = &s.boundaries;
        let tier = if reasoning >= 2 && score >= s.effective_reasoning_override_min_score() {
            signals = signals.with(Signal::ReasoningOverride);
            Tier::Reasoning
        } else if score < b.simple_medium {
            Tier::Simple
        } else if score < b.medium_complex {
            Tier::Medium
        } else if score < b.complex_reasoning {
            Tier::Complex
        } else {
            Tier::Reasoning
        };
        Classification { tier, score, signals, keyword: None }
    }

    fn scan(&self, text: &[u8]) -> Facts {
        let mut f = Facts::default();
        let mut found = Found { rules: &self.settings.keyword_tier_rules, ..Found::default() };
        // `first.*?then`: where the earliest "first" of the current line ends.
        let mut first_end: Option<usize> = None;
        // Counted apart from the scan so the compiler can vectorise them.
        f.chars = text.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        f.questions = text.iter().filter(|&&b| b == b'?').count();
        let mut prev_word = false;
        let mut i = 0;
        while i < text.len() {
            let b = text[i];
            if b == b'\n' {
                first_end = None;
            }
            if !f.multi_step {
                f.multi_step = multi_step_at(text, i, &mut first_end);
            }
            let word = is_word(b);
            if word && !prev_word {
                let mut end = i;
                let mut h = 0;
                while end < text.len() && is_word(text[end]) {
                    h = hash_step(h, text[end]);
                    end += 1;
                }
                let len = end - i;
                for &id in self.lexicon.whole_words(h) {
                    let e = self.lexicon.entry(id);
                    found.offer(e, || len == e.bytes.len() && text[i..end].eq_ignore_ascii_case(&e.bytes));
                }
                for &id in self.lexicon.at_word_start(b) {
                    let e = self.lexicon.entry(id);
                    found.offer(e, || matches_at(e, text, i));
                }
                // Nothing else can start inside the word once the multi-step patterns (which
                // match inside words) are settled: jump to its last byte.
                if f.multi_step && !self.lexicon.has_anywhere() {
                    i = end - 1;
                }
            }
            prev_word = word;
            if b == b' ' {
                for &id in self.lexicon.at_space(text, i) {
                    let e = self.lexicon.entry(id);
                    if let Some(k) = e.space_at.filter(|&k| k <= i) {
                        found.offer(e, || matches_at(e, text, i - k));
                    }
                }
            }
            for &id in self.lexicon.anywhere(text, i) {
                let e = self.lexicon.entry(id);
                found.offer(e, || matches_at(e, text, i));
            }
            i += 1;
        }
        f.counts = found.counts;
        f.rule = found.best_rule.map(|(_, at)| at);
        f
    }
}

/// The keywords found so far: distinct matches per scored list (up to its saturation) and the
/// best keyword rule.
#[derive(Default)]
struct Found<'r> {
    rules: &'r [(String, Tier)],
    counts: [usize; 4],
    seen: [[u16; 4]; 4],
    /// (tier, index in `rules`) of the most severe matched rule keyword, the first among equals.
    best_rule: Option<(Tier, usize)>,
}

impl Found<'_> {
    /// Counts `e` if it can still change the outcome and `is_match` says it occurs.
    fn offer(&mut self, e: &Entry, is_match: impl FnOnce() -> bool) {
        let list = usize::from(e.list);
        let index = usize::from(e.index);
        if list == usize::from(RULE) {
            let tier = self.rules[index].1;
            let better = self.best_rule.is_none_or(|(t, at)| tier > t || (tier == t && index < at));
            if better && is_match() {
                self.best_rule = Some((tier, index));
            }
            return;
        }
        let n = self.counts[list];
        if n >= SATURATION[list] || self.seen[list][..n].contains(&e.index) || !is_match() {
            return;
        }
        self.seen[list][n] = e.index;
        self.counts[list] = n + 1;
    }
}

/// Classifies `text` (the last user turn) under `classifier`'s settings: keyword rules first,
/// then the weighted score.
pub fn classify<'s>(text: &str, classifier: &'s Classifier) -> Classification<'s> {
    classifier.classify(text)
}

#[derive(Default)]
struct Facts {
    chars: usize,
    questions: usize,
    counts: [usize; 4],
    multi_step: bool,
    /// The index in `keyword_tier_rules` of the deciding rule keyword.
    rule: Option<usize>,
}

/// Python's `\s`, ASCII part (the Unicode spaces beyond it are a documented deviation).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r' | 0x1C..=0x1F)
}

fn starts_with_ci(text: &[u8], at: usize, word: &[u8]) -> bool {
    text.len() >= at + word.len() && text[at..at + word.len()].eq_ignore_ascii_case(word)
}

/// LiteLLM's multi-step patterns, each tried where it can end or start: `first.*?then`,
/// `step\s*\d`, `\d+\.\s`, `[a-z]\)\s` (case-insensitive).
fn multi_step_at(text: &[u8], i: usize, first_end: &mut Option<usize>) -> bool {
    let b = text[i];
    let next_is_space = text.get(i + 1).is_some_and(|&n| is_space(n));
    match b.to_ascii_lowercase() {
        b'f' if first_end.is_none() && starts_with_ci(text, i, b"first") => *first_end = Some(i + 5),
        b't' => return first_end.is_some_and(|end| end <= i) && starts_with_ci(text, i, b"then"),
        b's' if starts_with_ci(text, i, b"step") => {
            let rest = &text[i + 4..];
            return rest.iter().find(|&&c| !is_space(c)).is_some_and(u8::is_ascii_digit);
        }
        b'.' => return i > 0 && text[i - 1].is_ascii_digit() && next_is_space,
        b')' => return i > 0 && text[i - 1].is_ascii_alphabetic() && next_is_space,
        _ => {}
    }
    false
}
