//! One attempt at a managed model group: the strict gate, then the walk's choice against what
//! the shards know now — the provider to pin (wildcard mode), or the deployments to narrow to
//! (pinned mode) — or the refusal (`all_hot`, `declined`), each with its reason, logged.

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::pareto::{
    availability, choose, narrow, region_allows, region_of, ParetoRule, ParetoTelemetry, Reason, RegionVerdict,
};
use pointwork_core::{DeploymentIdx, GroupIdx, Resolution, State};

use crate::clock::unix_seconds;
use crate::errors::typed_error;
use crate::pipeline::parameters::TopKeys;
use crate::respond::Reply;
use crate::routers::pareto::body::{carries_provider_only, ProviderEdit};
use crate::routers::pareto::Pin;
use crate::routes::Routes;
use crate::shard::Shard;

/// What the walk decided for an attempt that goes ahead.
pub(crate) struct Steered<'r> {
    /// The rule key (`z-ai/glm-5.2`).
    pub(crate) key: &'r str,
    pub(crate) rule: &'r ParetoRule,
    pub(crate) reason: Reason,
    /// The provider pinned (`None`: unpinned, or the group as it is).
    pub(crate) slug: Option<String>,
    /// Its region verdict under the rule (`None`: the rule excludes no region).
    pub(crate) region: Option<RegionVerdict>,
    /// Pinned mode: the group's deployments the walk narrowed away.
    pub(crate) excluded: Vec<DeploymentIdx>,
}

impl Steered<'_> {
    /// What to do with deployment `pin`'s `provider` block: a wildcard deployment, or a pin
    /// naming more than the winner, is rewritten to the winner alone (with the zero-retention,
    /// no-fallback posture); a pin on exactly the winner goes as written.
    pub(crate) fn edit(&self, pin: &Pin) -> ProviderEdit {
        match (&self.slug, self.reason) {
            (_, Reason::Unpinned) => ProviderEdit::Unpin,
            (None, _) => ProviderEdit::AsIs,
            (Some(slug), _) if !self.rule.wildcard && pin.slugs.len() == 1 && *pin.slugs[0] == **slug => {
                ProviderEdit::AsIs
            }
            (Some(slug), _) => ProviderEdit::Pin(slug.clone()),
        }
    }

    /// The provider an attempt on deployment `pin` went to, when it is one provider.
    pub(crate) fn attempt_slug<'p>(&'p self, pin: &'p Pin) -> Option<&'p str> {
        match (&self.slug, self.reason) {
            (_, Reason::Unpinned) => None,
            (Some(slug), _) => Some(slug),
            (None, _) => (pin.slugs.len() == 1).then(|| &*pin.slugs[0]),
        }
    }

    /// `openrouter-pareto winner novita/fp8`, for `x-pointwork-route` and the access log.
    pub(crate) fn describe(&self) -> String {
        format!("openrouter-pareto {} {}", self.reason.as_str(), self.slug.as_deref().unwrap_or("-"))
    }
}

/// An attempt the walk refuses to route.
pub(crate) struct Refusal<'r> {
    pub(crate) key: &'r str,
    pub(crate) rule: &'r ParetoRule,
    pub(crate) reason: Reason,
    status: u16,
    kind: &'static str,
    message: String,
}

impl Refusal<'_> {
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

/// The refusal in the OpenAI error shape.
pub(crate) fn refusal_reply(r: &Refusal<'_>) -> Reply {
    let param = (r.kind == STRICT_PROVIDER_CONFLICT).then_some("provider");
    Reply::json(r.status, typed_error(r.status, r.kind, &r.message, param))
}

const STRICT_PROVIDER_CONFLICT: &str = "strict_provider_conflict";
const ALL_PROVIDERS_ON_COOLDOWN: &str = "all_providers_on_cooldown";
const DECLINED: &str = "openrouter_pareto_declined";

/// The walk for an attempt at `target` on this shard, logged and counted; `None` when no
/// rule manages it.
pub(crate) fn steer<'r>(
    shard: &Shard,
    routes: &'r Arc<Routes>,
    body: &[u8],
    target: &str,
    failed: &[DeploymentIdx],
    now: Instant,
) -> Option<Result<Steered<'r>, Refusal<'r>>> {
    let pareto = routes.pareto.as_ref()?;
    let managed = managed(routes, target)?;
    // A guard, not a clone: no counter the shards share is written per request.
    let telemetry = shard.hub.pareto.telemetry.load();
    let decided =
        shard.with_state(routes, |state| decide_for(routes, managed, state, &telemetry, body, failed, now))?;
    let (key, rule, reason, slug, region) = match &decided {
        Ok(s) => (s.key, s.rule, s.reason, s.slug.as_deref(), s.region),
        Err(r) => (r.key, r.rule, r.reason, None, None),
    };
    if rule.log_decisions {
        let mode = if rule.wildcard { "wildcard" } else { "pinned" };
        pareto.routing_log.line(&format!(
            "model={key} mode={mode} slug={} decision={} region={}",
            slug.unwrap_or("-"),
            reason.as_str(),
            region.map_or("-", RegionVerdict::as_str)
        ));
    }
    shard.metrics.borrow_mut().pareto_decision(key, reason);
    Some(decided)
}

/// The walk for an attempt at `target` against `state` and `telemetry` (the dry run's too);
/// `None` when no rule manages it.
pub(crate) fn decide<'r>(
    routes: &'r Routes,
    state: &State,
    telemetry: &ParetoTelemetry,
    body: &[u8],
    target: &str,
    failed: &[DeploymentIdx],
    now: Instant,
) -> Option<Result<Steered<'r>, Refusal<'r>>> {
    decide_for(routes, managed(routes, target)?, state, telemetry, body, failed, now)
}

/// A managed group: its index, the rule key and the rule.
type Managed<'r> = (GroupIdx, &'r str, &'r ParetoRule);

/// The rule that manages `target`: by the requested name, else by its group's name.
fn managed<'r>(routes: &'r Routes, target: &str) -> Option<Managed<'r>> {
    let pareto = routes.pareto.as_ref().filter(|p| p.may_manage(target))?;
    let settings = &pareto.settings;
    let snap = &routes.snapshot;
    let Resolution::Group { group, .. } = snap.resolve(target) else { return None };
    let (key, rule) = settings.rule(target).or_else(|| settings.rule(&snap.group(group).name))?;
    Some((group, key, rule))
}

fn decide_for<'r>(
    routes: &'r Routes,
    (group, key, rule): Managed<'r>,
    state: &State,
    telemetry: &ParetoTelemetry,
    body: &[u8],
    failed: &[DeploymentIdx],
    now: Instant,
) -> Option<Result<Steered<'r>, Refusal<'r>>> {
    let pareto = routes.pareto.as_ref()?;
    let snap = &routes.snapshot;
    let refuse = |reason, status, kind, message| Some(Err(Refusal { key, rule, reason, status, kind, message }));
    // The body's top level is read only for a strict rule.
    if rule.strict_provider && carries_provider_only(&TopKeys::read(body)) {
        let message = format!(
            "openrouter-pareto: {key} is configured strict_provider, but the request carries its own \
             provider.only; refusing to route rather than let it override the gateway's provider choice"
        );
        return refuse(Reason::Declined, 400, STRICT_PROVIDER_CONFLICT, message);
    }
    let unix = unix_seconds();
    let retention = pareto.settings.telemetry.cache_retention.as_secs_f64();
    let verdict =
        telemetry.model(key, rule.fingerprint()).filter(|m| unix - m.polled_at < retention).map(|m| &m.verdict);
    let allow = telemetry.fresh_allow_list(unix, pareto.settings.cooldown.allowlist_ttl_s);
    let available = availability(state.providers().model(key), allow, now);
    let (reason, slug, excluded) = if rule.wildcard {
        let c = choose(verdict, rule, &available, &|s| region_allows(rule, verdict, s));
        (c.reason, c.slug.map(str::to_string), Vec::new())
    } else {
        let members = &snap.group(group).members;
        let healthy: Vec<DeploymentIdx> =
            members.iter().copied().filter(|&m| !failed.contains(&m) && !state.is_cooling_down(m, now)).collect();
        if healthy.is_empty() {
            // Nothing to narrow: the pick says which deployments cool down.
            return None;
        }
        let pins: Vec<&[Box<str>]> = healthy.iter().map(|m| &pareto.pins[m.get()].slugs[..]).collect();
        let n = narrow(verdict, rule, &pins, &available);
        let excluded = healthy.iter().zip(&n.keep).filter(|(_, &keep)| !keep).map(|(&m, _)| m).collect();
        (n.reason, n.slug.map(str::to_string), excluded)
    };
    match reason {
        Reason::AllHot => {
            let slugs: Vec<&str> = match verdict {
                Some(v) => v.selection.points.iter().map(|p| &*p.slug).collect(),
                None => rule.cold_start_fallback.iter().map(String::as_str).collect(),
            };
            let hot: Vec<&str> = slugs.iter().copied().filter(|s| available(s).hot).collect();
            let disallowed: Vec<&str> = slugs.iter().copied().filter(|s| available(s).disallowed).collect();
            refuse(reason, 429, ALL_PROVIDERS_ON_COOLDOWN, all_hot_message(key, &hot, &disallowed))
        }
        Reason::Declined => {
            let why = declined_because(rule, verdict.is_some());
            refuse(reason, 503, DECLINED, format!("openrouter-pareto: no provider of {key} may be routed to: {why}"))
        }
        _ => {
            let region = slug.as_deref().and_then(|s| region_of(rule, verdict, s));
            Some(Ok(Steered { key, rule, reason, slug, region, excluded }))
        }
    }
}

/// Why a managed model routes nowhere.
fn declined_because(rule: &ParetoRule, warm: bool) -> String {
    let policy = rule.unverified_region_policy.as_str();
    match (warm, rule.exclude_regions.is_empty()) {
        (false, false) => format!("no region-verified provider yet (unverified_region_policy={policy})"),
        (true, false) => format!("every usable provider is in an excluded region (unverified_region_policy={policy})"),
        (_, true) => "no telemetry yet and no usable cold_start_fallback provider".to_string(),
    }
}

/// The `all_hot` refusal's message: which providers are hot and which are not allowed.
fn all_hot_message(key: &str, hot: &[&str], disallowed: &[&str]) -> String {
    let detail = match (hot.is_empty(), disallowed.is_empty()) {
        (false, true) => "every provider is on a 429 cooldown; declining to route until one clears",
        (true, false) => "every provider is disallowed by the account's allowed-providers setting",
        _ => "every provider is on a 429 cooldown or disallowed by the account's allowed-providers setting",
    };
    format!(
        "openrouter-pareto: {detail} for {key} (hot: [{}]; disallowed: [{}])",
        hot.join(", "),
        disallowed.join(", ")
    )
}
