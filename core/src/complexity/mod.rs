//! The complexity auto-router (issue 15): its rule-based classifier — LiteLLM's heuristic scorer
//! (`litellm/router_strategy/complexity_router/complexity_router.py`, `classifier_type:
//! heuristic`, v1.110.2), rewritten to scan the prompt once without allocating — and, in
//! `router.rs`, the router around it: the tiers as model groups, the tier pick, session pins and
//! the health gate (see that module; the request's way is `gateway/src/complexity/`).
//!
//! ```text
//! let classifier = Classifier::new(ClassifierSettings::default()); // once per configuration
//! let c: Classification<'_> = classify(last_user_turn, &classifier);
//! c.tier /* Tier::Simple.. */; c.score; c.signals.iter(); c.keyword /* the rule keyword */
//! ```
//!
//! What it reads: only the caller's ask (the caller extracts the last user turn; the system
//! prompt is deliberately not scored, as in LiteLLM — see [`Classifier::classify`]).
//!
//! How it decides:
//! 1. `keyword_tier_rules`: if any rule keyword matches, the most severe matched tier wins (its
//!    first matching keyword is reported) and nothing is scored.
//! 2. Otherwise seven dimensions, each a score times its weight ([`Weights`]): length (estimated
//!    tokens = characters / 4: below `token_thresholds.simple` -1, above `.complex` +1); code
//!    keywords (1 match 0.5, 2+ 1.0); reasoning markers (1: 0.7, 2+: 1.0); technical terms
//!    (2: 0.5, 4+: 1.0); simple/greeting markers (1+: -1); a multi-step pattern (0.5); more than
//!    three `?` (0.5).
//! 3. Two or more reasoning markers with a score at least `reasoning_override_min_score`
//!    (default: the SIMPLE/MEDIUM cut-off) give REASONING; otherwise the score against the
//!    [`TierBoundaries`] gives the tier.
//!
//! Not in the scorer: the LLM classifier (the gateway calls it, `gateway/src/complexity/llm.rs`).
//! Not at all (warned about at load): LiteLLM's `escalation_keywords` ("LITELLM ESCALATE"),
//! custom dimensions, `heuristic_v2`.

mod classify;
mod lexicon;
mod router;
mod scan;
mod settings;
mod signals;
#[cfg(test)]
mod tests;

pub use crate::tier::Tier;
pub use classify::{classify, Classification, Classifier};
pub use router::{
    tier_pick, AutoRouter, Cause, ClassifierFallback, Gate, LlmClassifier, Routed, RouterConfig, TierSelection,
    Verdict, MAX_POOL,
};
pub use settings::{
    ClassifierSettings, TierBoundaries, TokenThresholds, Weights, DEFAULT_CODE_KEYWORDS, DEFAULT_REASONING_KEYWORDS,
    DEFAULT_SIMPLE_KEYWORDS, DEFAULT_TECHNICAL_KEYWORDS,
};
pub use signals::{Signal, Signals};
