//! The auto-router around the classifier (issue 15, spec 002): a router's configuration, its
//! tiers resolved to model groups, the tier pick, session pins and the health gate.
//!
//! A decision goes: a live session pin, else a classification (keyword rule, heuristic, LLM or a
//! fallback) whose tier's pool the tier pick draws a group from; then the health gate asks the
//! real pick whether that group can serve this request and, when it cannot and a peer of the same
//! tier can, takes the peer ([`Cause::HealthFailover`], never pinned, never another tier).

use std::time::{Duration, Instant};

use super::{Classifier, ClassifierSettings, Signals, Tier};
use crate::affinity::{affinity_hash, pin_key};
use crate::{pick_with_scratch, DeploymentIdx, GroupIdx, PickRequest, PickScratch, RequestFacts, Rng, Snapshot, State};

/// How a tier's groups are chosen among (`complexity_router_config.tier_selection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TierSelection {
    /// Uniformly at random, as LiteLLM picks from a tier's list.
    #[default]
    Shuffle,
    /// The first listed group (that can serve, where the gate asks).
    InOrder,
    /// At random, in proportion to each group's capacity: the sum of its deployments'
    /// `weight` (1 each when unset).
    Weighted,
}

impl TierSelection {
    pub const NAMES: [&'static str; 3] = ["shuffle", "in_order", "weighted"];

    pub fn parse(name: &str) -> Option<TierSelection> {
        match name {
            "shuffle" => Some(TierSelection::Shuffle),
            "in_order" => Some(TierSelection::InOrder),
            "weighted" => Some(TierSelection::Weighted),
            _ => None,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            TierSelection::Shuffle => "shuffle",
            TierSelection::InOrder => "in_order",
            TierSelection::Weighted => "weighted",
        }
    }
}

/// The LLM classifier (`classifier_type: llm`, `classifier_llm_config`).
#[derive(Clone, Debug, PartialEq)]
pub struct LlmClassifier {
    /// A model group of `model_list` that answers the classification call.
    pub model: String,
    pub timeout: Duration,
}

/// What classifies when the LLM classifier fails (`classifier_fallback`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClassifierFallback {
    #[default]
    Heuristic,
    DefaultModel,
}

/// One `auto_router/complexity_router` entry, as configured.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterConfig {
    /// The entry's `model_name`: what clients ask for.
    pub name: String,
    /// By [`Tier`] order; an empty pool is a tier not configured (its requests go to
    /// `default_model`, else to MEDIUM's pool, as in LiteLLM).
    pub tiers: [Vec<String>; 4],
    pub default_model: Option<String>,
    pub selection: TierSelection,
    pub session_affinity: bool,
    pub session_ttl: Duration,
    pub classifier: ClassifierSettings,
    pub llm: Option<LlmClassifier>,
    pub fallback: ClassifierFallback,
}

/// Why the decided group serves: LiteLLM's `RoutingDecisionCause` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The heuristic score's tier.
    HeuristicScorer,
    /// Two reasoning markers promoted the request to REASONING.
    ReasoningOverride,
    /// A `keyword_tier_rules` keyword decided the tier.
    KeywordMatch,
    /// The LLM classifier's answer.
    LlmClassifier,
    /// The LLM classifier failed; the heuristic classified.
    ClassifierFallback,
    /// The LLM classifier failed; `default_model` serves.
    DefaultModelFallback,
    /// The tier has no pool: `default_model` (or MEDIUM's pool) serves.
    DefaultFallback,
    /// The session's pin replayed.
    SessionAffinityPin,
    /// The decided group could not serve; a peer of its tier does.
    HealthFailover,
}

impl Cause {
    pub const fn as_str(self) -> &'static str {
        match self {
            Cause::HeuristicScorer => "heuristic_scorer",
            Cause::ReasoningOverride => "reasoning_override",
            Cause::KeywordMatch => "literal_keyword_match",
            Cause::LlmClassifier => "llm_classifier",
            Cause::ClassifierFallback => "classifier_fallback",
            Cause::DefaultModelFallback => "default_model_fallback",
            Cause::DefaultFallback => "default_fallback",
            Cause::SessionAffinityPin => "session_affinity_pin",
            Cause::HealthFailover => "health_failover",
        }
    }

    pub const ALL: [Cause; 9] = [
        Cause::HeuristicScorer,
        Cause::ReasoningOverride,
        Cause::KeywordMatch,
        Cause::LlmClassifier,
        Cause::ClassifierFallback,
        Cause::DefaultModelFallback,
        Cause::DefaultFallback,
        Cause::SessionAffinityPin,
        Cause::HealthFailover,
    ];
}

/// What classified a fresh request: a tier and how it was reached, or the default model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// `None`: the default model serves without a tier ([`Cause::DefaultModelFallback`]).
    pub tier: Option<Tier>,
    pub cause: Cause,
    pub score: Option<f64>,
    pub signals: Signals,
}

/// A router's decision for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Routed {
    pub group: GroupIdx,
    pub tier: Option<Tier>,
    pub cause: Cause,
    /// What decided before the gate when it failed over (the pin, the classification).
    pub decided_by: Option<Cause>,
    pub score: Option<f64>,
    pub signals: Signals,
    /// The group the gate took the request away from.
    pub displaced: Option<GroupIdx>,
    /// A session pin to set (group marker deployment, tier) when the decision is pinnable and
    /// the session had none.
    pub pin: Option<(DeploymentIdx, Option<Tier>)>,
}

/// A router over one snapshot: its tiers as group indices.
#[derive(Clone, Debug)]
pub struct AutoRouter {
    pub config: RouterConfig,
    pub classifier: Classifier,
    pools: [Vec<GroupIdx>; 4],
    default_group: Option<GroupIdx>,
    name_hash: u64,
}

impl AutoRouter {
    /// Resolves the configured groups in `snap`; a group it does not have is an error naming it
    /// (the config's own check names the key path first).
    pub fn new(config: RouterConfig, snap: &Snapshot) -> Result<AutoRouter, String> {
        let group = |name: &str| {
            snap.group_by_name(name)
                .ok_or_else(|| format!("complexity router {:?}: no model group {name:?}", config.name))
        };
        let mut pools: [Vec<GroupIdx>; 4] = Default::default();
        for (pool, names) in pools.iter_mut().zip(&config.tiers) {
            for name in names {
                let g = group(name)?;
                if !pool.contains(&g) {
                    pool.push(g);
                }
            }
        }
        let default_group = config.default_model.as_deref().map(group).transpose()?;
        let unserved = Tier::ALL.into_iter().find(|&t| pools[t as usize].is_empty());
        if let (Some(t), None, true) = (unserved, default_group, pools[Tier::Medium as usize].is_empty()) {
            return Err(format!(
                "complexity router {:?}: tier {t} has no model and there is no default_model",
                config.name
            ));
        }
        if config.fallback == ClassifierFallback::DefaultModel && default_group.is_none() {
            return Err(format!(
                "complexity router {:?}: classifier_fallback default_model needs a default_model",
                config.name
            ));
        }
        let classifier = Classifier::new(config.classifier.clone());
        let name_hash = affinity_hash(config.name.as_bytes());
        Ok(AutoRouter { config, classifier, pools, default_group, name_hash })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The groups `tier` draws from: its pool, else the default model, else MEDIUM's pool.
    pub fn pool(&self, tier: Tier) -> &[GroupIdx] {
        let pool = &self.pools[tier as usize];
        match (&self.default_group, pool.is_empty()) {
            (_, false) => pool,
            (Some(g), true) => std::slice::from_ref(g),
            (None, true) => &self.pools[Tier::Medium as usize],
        }
    }

    /// Every group the router can send to (for `GET /v1/models`, the dry run, checks).
    pub fn groups(&self) -> impl Iterator<Item = GroupIdx> + '_ {
        self.pools.iter().flatten().chain(self.default_group.iter()).copied()
    }

    /// The key a session's pin is kept under: the router, the caller's credentials (so that two
    /// callers reusing one session id do not share a pin, as in LiteLLM) and the session id.
    pub fn pin_key(&self, session: &[u8], caller: u64) -> u64 {
        pin_key(affinity_hash(session) ^ caller.rotate_left(29), true, self.name_hash)
    }

    /// The group and tier a live pin holds, when the group is still one of this router's.
    pub fn replay(&self, snap: &Snapshot, state: &State, key: u64, now: Instant) -> Option<(GroupIdx, Option<Tier>)> {
        let pin = state.pin_of(key, now)?;
        let group = snap.group_of(pin.deployment);
        self.groups().any(|g| g == group).then_some((group, pin.tier))
    }

    /// Places a fresh request: the verdict's pool through the tier pick, then the gate.
    pub fn place(
        &self,
        gate: &Gate<'_>,
        verdict: Verdict,
        pin: bool,
        rng: &mut Rng,
        scratch: &mut PickScratch,
    ) -> Routed {
        let pool = match verdict.tier {
            Some(tier) => self.pool(tier),
            None => self.default_group.as_slice(),
        };
        // Invariant of `new`: every tier's pool, and the default model when used, has a group.
        let group = tier_pick(gate.snap, pool, self.config.selection, rng, |_| true).unwrap_or(pool[0]);
        let marker = gate.snap.group(group).members[0];
        let cause = match verdict.tier {
            Some(t) if self.pools[t as usize].is_empty() => Cause::DefaultFallback,
            _ => verdict.cause,
        };
        let decided = Routed {
            group,
            tier: verdict.tier,
            cause,
            decided_by: None,
            score: verdict.score,
            signals: verdict.signals,
            displaced: None,
            pin: pin.then_some((marker, verdict.tier)),
        };
        self.gated(gate, decided, pool, rng, scratch)
    }

    /// A replayed pin's decision, through the gate over its tier's pool.
    pub fn replayed(
        &self,
        gate: &Gate<'_>,
        (group, tier): (GroupIdx, Option<Tier>),
        rng: &mut Rng,
        scratch: &mut PickScratch,
    ) -> Routed {
        let pool = match tier {
            Some(t) => self.pool(t),
            None => self.pools.iter().find(|p| p.contains(&group)).map_or(&[][..], Vec::as_slice),
        };
        let decided = Routed {
            group,
            tier,
            cause: Cause::SessionAffinityPin,
            decided_by: None,
            score: None,
            signals: Signals::EMPTY,
            displaced: None,
            pin: None,
        };
        self.gated(gate, decided, pool, rng, scratch)
    }

    fn gated(
        &self,
        gate: &Gate<'_>,
        decided: Routed,
        pool: &[GroupIdx],
        rng: &mut Rng,
        scratch: &mut PickScratch,
    ) -> Routed {
        match gate.failover(pool, decided.group, self.config.selection, rng, scratch) {
            None => decided,
            Some(peer) => Routed {
                group: peer,
                cause: Cause::HealthFailover,
                decided_by: Some(decided.cause),
                displaced: Some(decided.group),
                // A failover describes the fleet, not the session: never pinned.
                pin: None,
                ..decided
            },
        }
    }
}

/// The most groups a tier lists (`complexity_router_config.tiers`, checked at load).
pub const MAX_POOL: usize = 64;

/// The tier pick: one group of `pool` that `eligible` accepts, by `selection`. Every group a
/// router chooses is chosen here (a fresh decision, the gate's peer). `eligible` is asked at
/// most once per group; groups past [`MAX_POOL`] are never chosen.
pub fn tier_pick(
    snap: &Snapshot,
    pool: &[GroupIdx],
    selection: TierSelection,
    rng: &mut Rng,
    mut eligible: impl FnMut(GroupIdx) -> bool,
) -> Option<GroupIdx> {
    let pool = &pool[..pool.len().min(MAX_POOL)];
    if selection == TierSelection::InOrder {
        return pool.iter().copied().find(|&g| eligible(g));
    }
    let weight = |g: GroupIdx| match selection {
        TierSelection::Weighted => {
            snap.group(g).members.iter().map(|&d| snap.deployment(d).weight.unwrap_or(1)).sum::<u64>().max(1)
        }
        _ => 1,
    };
    let mut chosen = 0u64;
    let mut total = 0u64;
    for (i, &g) in pool.iter().enumerate() {
        if eligible(g) {
            chosen |= 1 << i;
            total += weight(g);
        }
    }
    let mut draw = rng.below(total);
    for (_, &g) in pool.iter().enumerate().filter(|&(i, _)| chosen & (1 << i) != 0) {
        let w = weight(g);
        if draw < w {
            return Some(g);
        }
        draw -= w;
    }
    None
}

/// The health gate's view: the request's facts and the shard's state at one instant.
pub struct Gate<'a> {
    pub snap: &'a Snapshot,
    pub state: &'a State,
    pub facts: &'a RequestFacts,
    pub now: Instant,
}

impl Gate<'_> {
    /// Whether the pick would find a deployment of `group` for this request: the same filter
    /// chain (health, cooldowns, blocked, budgets, context window, tags, usage limits, …), run
    /// without side effects (the state is only read; the strategy's draw uses a throwaway rng).
    pub fn can_serve(&self, group: GroupIdx, scratch: &mut PickScratch) -> bool {
        let req = PickRequest::new(&self.snap.group(group).name, self.facts);
        pick_with_scratch(self.snap, self.state, &req, self.now, &mut Rng::new(0), scratch).is_ok()
    }

    /// The peer to take instead of `decided`, when `decided` cannot serve and a peer of `pool`
    /// can; `None` (keep `decided`: fail open) otherwise. A single-group pool costs nothing.
    pub fn failover(
        &self,
        pool: &[GroupIdx],
        decided: GroupIdx,
        selection: TierSelection,
        rng: &mut Rng,
        scratch: &mut PickScratch,
    ) -> Option<GroupIdx> {
        if pool.len() < 2 || self.can_serve(decided, scratch) {
            return None;
        }
        tier_pick(self.snap, pool, selection, rng, |g| g != decided && self.can_serve(g, scratch))
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
