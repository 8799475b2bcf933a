//! A database key's request, once its usage is known: the cost charged at once to the key's,
//! team's and user's accounts (budgets hold from the next request), and a `LiteLLM_SpendLogs`
//! row kept by the shard, which hands its rows to the database thread together — every
//! [`HAND_OVER_AT`] rows, and with its periodic report (a quarter of a second) — so that the
//! thread wakes once for many rows, not once per request. The thread writes them within a
//! second or two.

use std::borrow::Cow;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use pointwork_core::{DeploymentIdx, KeyLimits, RouteKind};
use pointwork_db::{SpendPlace, SpendRow};

use crate::clock::unix_now;
use crate::routers::Cx;
use crate::usage::Usage;

/// Charges and logs what a database key's answer cost (`cost`, as the router priced it;
/// nothing for any other caller).
pub(crate) fn spent(cx: &Cx<'_>, idx: DeploymentIdx, started: Instant, usage: Usage, cost: Option<f64>) {
    let Some(entry) = cx.key.and_then(|k| k.db.as_ref()) else { return };
    if cx.shard.hub.database.get().is_none() {
        return;
    }
    let snap = &cx.routes.snapshot;
    let dollars = cost.unwrap_or(0.0);
    entry.charge(dollars);
    super::model_budgets::charge(entry, &cx.extracted.facts.model, snap, dollars);
    let r = &entry.record;
    // The key's tokens are its meter's already (`record`); a team's tpm counts them here.
    if let (Some(team), Some(account)) = (&r.team, &entry.team) {
        if team.tpm_limit.is_some() {
            account.meter.record(&KeyLimits::default(), usage.total_tokens, None, unix_now());
        }
    }
    log(cx, entry, started, usage, dollars, &cx.routes.spend_places[idx.get()], false);
}

/// Logs an answer the response cache gave a database key: its usage as first answered, and no
/// cost (as in LiteLLM, a hit costs the caller nothing). Its model is the group asked for.
pub(crate) fn from_cache(cx: &Cx<'_>, started: Instant, usage: Usage) {
    let Some(entry) = cx.key.and_then(|k| k.db.as_ref()) else { return };
    let group: std::sync::Arc<str> = cx.extracted.facts.model.as_str().into();
    let place = SpendPlace {
        model: group.clone(),
        model_id: "".into(),
        model_group: group,
        custom_llm_provider: "".into(),
        api_base: "".into(),
    };
    log(cx, entry, started, usage, 0.0, &place, true);
}

/// Keeps the spend row of a database key's request, and hands the rows over when enough are
/// kept.
fn log(
    cx: &Cx<'_>,
    entry: &std::sync::Arc<pointwork_db::KeyEntry>,
    started: Instant,
    usage: Usage,
    dollars: f64,
    place: &SpendPlace,
    cache_hit: bool,
) {
    let Some(db) = cx.shard.hub.database.get() else { return };
    let end = SystemTime::now();
    let start = end.checked_sub(started.elapsed()).unwrap_or(end);
    // The key's and the deployment's names are shared, not copied.
    let who = &entry.names;
    let row = SpendRow {
        // Drawn by the database thread as it takes the row in.
        request_id: String::new(),
        call_type: Cow::Borrowed(call_type(cx.route)),
        api_key: who.api_key.clone(),
        key_alias: who.key_alias.clone(),
        spend: dollars,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        start_ms: unix_ms(start),
        end_ms: unix_ms(end),
        model: place.model.clone(),
        model_id: place.model_id.clone(),
        model_group: place.model_group.clone(),
        custom_llm_provider: place.custom_llm_provider.clone(),
        api_base: place.api_base.clone(),
        end_user: String::new(),
        team_id: who.team_id.clone(),
        user_id: who.user_id.clone(),
        tags: cx.extracted.facts.tags.clone(),
        status: Cow::Borrowed("success"),
        session_id: None,
        cache_hit,
        entry: Some(entry.clone()),
    };
    let mut kept = cx.shard.db_spend.borrow_mut();
    kept.push(row);
    if kept.len() >= HAND_OVER_AT {
        db.spend(std::mem::take(&mut *kept));
    }
}

/// How many rows a shard keeps before it hands them over between its reports.
const HAND_OVER_AT: usize = 128;

/// Hands the rows the shard kept to the database thread (with its periodic report, and when
/// it has drained).
pub(crate) fn hand_over(shard: &crate::shard::Shard) {
    let mut kept = shard.db_spend.borrow_mut();
    if let (false, Some(db)) = (kept.is_empty(), shard.hub.database.get()) {
        db.spend(std::mem::take(&mut *kept));
    }
}

/// LiteLLM's `call_type` for each API.
fn call_type(route: RouteKind) -> &'static str {
    match route {
        RouteKind::ChatCompletions => "acompletion",
        RouteKind::Embeddings => "aembedding",
        RouteKind::Messages => "anthropic_messages",
        RouteKind::Responses => "aresponses",
    }
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
