//! The scan and the score: LiteLLM's `ComplexityRouter._score_and_classify` and
//! `_lexical_tier_override` (v1.110.2) over one prompt, in one pass and without allocating.

use super::lexicon::{matches_at, Entry, Lexicon, Maybe, WordLists, RULE};
use super::scan::{count_chars_and_questions, for_each_word, has_multi_step};
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
        let lexicon = &self.lexicon;
        let mut found = Found { rules: &self.settings.keyword_tier_rules, ..Found::default() };
        let mut live = found.live();
        // Cleared where a word is settled, so its later occurrences cost one test.
        let mut word_lists = *lexicon.word_lists();
        for_each_word(text, |start, end, first| {
            let maybe = lexicon.may_match(&word_lists, text, first, start, end, live);
            if maybe.any() {
                live = offer_word(lexicon, &mut found, &mut word_lists, text, start, end, maybe);
            }
            live != 0
        });
        if lexicon.has_rare() {
            for i in 0..text.len() {
                for &id in lexicon.rare(text, i) {
                    let e = lexicon.entry(id);
                    found.offer(e, || matches_at(e, text, i));
                }
            }
        }
        // Counted apart from the scan so the compiler can vectorise them.
        let (chars, questions) = count_chars_and_questions(text);
        Facts {
            chars,
            questions,
            counts: found.counts,
            multi_step: has_multi_step(text),
            rule: found.best_rule.map(|(_, at)| at),
        }
    }
}

/// A word the lexicon's filter let through: offers its keywords and the phrases whose first
/// space follows it, and returns the lists still live. Kept out of line so the loop over the
/// words stays small.
#[inline(never)]
fn offer_word(
    lexicon: &Lexicon,
    found: &mut Found,
    word_lists: &mut WordLists,
    text: &[u8],
    start: usize,
    end: usize,
    maybe: Maybe,
) -> u8 {
    if maybe.keyword() {
        let (ids, settled) = lexicon.at_word(text, start, end);
        for &id in ids {
            let e = lexicon.entry(id);
            found.offer(e, || e.whole_word || matches_at(e, text, start));
        }
        if let Some(class) = settled {
            word_lists[class] = 0;
        }
    }
    let phrases = if maybe.phrase() { lexicon.before_space(text, end) } else { &[] };
    for &id in phrases {
        let e = lexicon.entry(id);
        if let Some(k) = e.space_at.filter(|&k| k <= end) {
            found.offer(e, || matches_at(e, text, end - k));
        }
    }
    found.live()
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
    /// The lists (a bit per list id) whose matches can still change the outcome: the scored
    /// lists not yet saturated, and the keyword rules if there are any.
    fn live(&self) -> u8 {
        let scored = (0..4).filter(|&l| self.counts[l] < SATURATION[l]).fold(0, |bits, l| bits | 1 << l);
        scored | u8::from(!self.rules.is_empty()) << RULE
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every keyword tried at every byte: what the indexed scan must agree with.
    fn naive(c: &Classifier, text: &[u8]) -> ([usize; 4], Option<usize>) {
        let mut found = Found { rules: &c.settings.keyword_tier_rules, ..Found::default() };
        for e in c.lexicon.entries() {
            found.offer(e, || (0..text.len()).any(|i| matches_at(e, text, i)));
        }
        (found.counts, found.best_rule.map(|(_, at)| at))
    }

    #[test]
    fn the_indexed_scan_agrees_with_trying_every_keyword_everywhere() {
        let odd =
            ["c++", ".net", "a b", "x, y", "node.js", "发票", "what's", "Hello World", "foo_bar", "step 1.", "é", "z"];
        let settings = ClassifierSettings {
            simple_keywords: odd.iter().map(|w| (*w).to_owned()).collect(),
            keyword_tier_rules: vec![("API".into(), Tier::Complex), ("x, y".into(), Tier::Reasoning)],
            ..ClassifierSettings::default()
        };
        let classifiers = [Classifier::new(ClassifierSettings::default()), Classifier::new(settings)];
        let pieces = [
            "what is",
            "What's",
            "somewhat",
            "is",
            " ",
            "  ",
            ", ",
            ".",
            "\n",
            "API",
            "capital",
            "step",
            "by",
            "Step",
            "c++",
            "C++x",
            ".NET",
            "a",
            "b",
            "x,",
            "y",
            "node.js",
            "发票",
            "é",
            "z",
            "foo_bar",
            "Hello",
            "World",
            "1.",
            "pull request",
            "thank you",
            "let's think",
            "error",
            "terrorism",
            "latency",
            "CPU",
            "(",
            ")",
            "?",
            "kubernetes",
            "Kubernetes-like",
            "_",
            "0",
            "analyze this",
            "break down",
            "hi",
            "hey",
            "okay",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..3000 {
            let mut text = String::new();
            for _ in 0..(round % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
                if seed >> 40 & 1 == 0 {
                    text.push(' ');
                }
            }
            for c in &classifiers {
                let facts = c.scan(text.as_bytes());
                let (counts, rule) = naive(c, text.as_bytes());
                assert_eq!((facts.counts, facts.rule), (counts, rule), "{text:?}");
            }
        }
    }
}
