//! A database key's rules, in LiteLLM's order and words: blocked, the key's models, expiry,
//! the key's budget, the key's and the user's `model_max_budget`; the team's block, models,
//! budget and `model_max_budget`; the user's budget (keys without a team); then the key's and
//! the team's rpm, tpm and parallel requests. Each refusal is the status, `type`, `param` and
//! message LiteLLM answers with.

use std::sync::Arc;

use pointwork_core::{KeyLimits, KeyRefusal, Snapshot};
use pointwork_db::{means_every_model, Account, KeyEntry};

use super::model_budgets::{self, Owner};
use super::texts::{py_datetime, py_float, utc_minute};
use crate::errors::typed_error;
use crate::keys::{allows, VirtualKey};
use crate::respond::Reply;

/// LiteLLM's status for a budget exceeded (`litellm.budget_exceeded_status_code`).
const BUDGET_STATUS: u16 = 422;

/// Requests in flight for accounts with `max_parallel_requests`; one fewer when dropped.
pub struct InFlight(Vec<Arc<Account>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        for account in &self.0 {
            account.leave();
        }
    }
}

/// Admits a request for `model` (renamed first by the key's `aliases`), or LiteLLM's refusal.
pub(crate) fn admit(
    key: &VirtualKey,
    entry: &KeyEntry,
    snap: &Snapshot,
    model: &mut String,
    now: f64,
) -> Result<Option<InFlight>, Reply> {
    let r = &entry.record;
    if let Some(target) = r.aliases.get(model.as_str()) {
        *model = target.clone();
    }
    if r.blocked {
        return Err(auth_error("Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin."));
    }
    if !key.may_use(model, snap) {
        return Err(model_denied("key_model_access_denied", model));
    }
    if let Some(expires) = r.expires.filter(|e| *e < now) {
        let message = format!(
            "Authentication Error - Expired Key. Key Expiry time {} and current time {}",
            py_datetime(expires),
            py_datetime(now)
        );
        return Err(Reply::json(401, typed_error(401, "expired_key", &message, r.key_name.as_deref())));
    }
    if let Some(max) = r.max_budget.filter(|m| m.is_finite()) {
        let spend = entry.key.spend();
        if spend >= max {
            let name = r.key_alias.as_deref().unwrap_or("key");
            let suffix = r.key_name.as_deref().filter(|n| n.starts_with("sk-...")).map(|n| format!(" ({n})"));
            let message = format!(
                "Budget has been exceeded! Key={name}{} Current cost: {}, Max budget: {}",
                suffix.unwrap_or_default(),
                py_float(spend),
                py_float(max)
            );
            return Err(budget_exceeded(&message));
        }
    }
    for owner in [Owner::Key, Owner::User] {
        if let Some(message) = model_budgets::refusal(entry, owner, model, snap, now as u64) {
            return Err(budget_exceeded(&message));
        }
    }
    if let (Some(team), Some(account)) = (&r.team, &entry.team) {
        if team.blocked {
            return Err(auth_error(&format!(
                "Authentication Error, Team={} is blocked. Update via `/team/unblock` if you're an admin.",
                team.team_id
            )));
        }
        if !means_every_model(&team.models) && !allows(&team.models, model, snap) {
            return Err(model_denied("team_model_access_denied", model));
        }
        if let Some(max) = team.max_budget.filter(|m| m.is_finite()) {
            // LiteLLM lets a team reach its budget; only more than it is refused.
            let spend = account.spend();
            if spend > max {
                let message = format!(
                    "Budget has been exceeded! Team={} Current cost: {}, Max budget: {}",
                    team.team_id,
                    py_float(spend),
                    py_float(max)
                );
                return Err(budget_exceeded(&message));
            }
        }
        if let Some(message) = model_budgets::refusal(entry, Owner::Team, model, snap, now as u64) {
            return Err(budget_exceeded(&message));
        }
    }
    if let (None, Some(user_id), Some(max), Some(account)) = (&r.team, &r.user_id, r.user_max_budget, &entry.user) {
        let spend = account.spend();
        if max.is_finite() && spend >= max {
            let message = format!(
                "ExceededBudget: User={user_id} over budget. Spend={}, Budget={}",
                py_float(spend),
                py_float(max)
            );
            return Err(budget_exceeded(&message));
        }
    }
    let now_secs = now as u64;
    key.meter.admit(&key.limits, now_secs).map_err(|refusal| rate_limited("api_key", &r.token, &refusal, now_secs))?;
    if let (Some(team), Some(account)) = (&r.team, &entry.team) {
        let limits = KeyLimits { rpm: team.rpm_limit, tpm: team.tpm_limit, ..KeyLimits::default() };
        if limits.rpm.is_some() || limits.tpm.is_some() {
            account
                .meter
                .admit(&limits, now_secs)
                .map_err(|refusal| rate_limited("team", &team.team_id, &refusal, now_secs))?;
        }
    }
    parallel(entry, now_secs)
}

/// Takes a place among each capped account's requests in flight, or refuses.
fn parallel(entry: &KeyEntry, now: u64) -> Result<Option<InFlight>, Reply> {
    let r = &entry.record;
    let team = r.team.as_ref().and_then(|t| Some((t.max_parallel_requests?, entry.team.as_ref()?, t.team_id.as_str())));
    let capped = [
        r.max_parallel_requests.map(|m| (m, &entry.key, ("api_key", r.token.as_str()))),
        team.map(|(m, a, id)| (m, a, ("team", id))),
    ];
    if capped.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut held = InFlight(Vec::new());
    for (max, account, (descriptor, value)) in capped.into_iter().flatten() {
        if !account.enter(Some(max)) {
            return Err(limit_reply(descriptor, value, "max_parallel_requests", max, now));
        }
        held.0.push(account.clone());
    }
    Ok(Some(held))
}

fn auth_error(message: &str) -> Reply {
    Reply::json(401, typed_error(401, "auth_error", message, None))
}

fn model_denied(kind: &str, model: &str) -> Reply {
    let message = format!(
        "The requested model '{model}' is not available for this API key, or the model name is invalid. Check the models available to you and try again."
    );
    Reply::json(403, typed_error(403, kind, &message, Some("model")))
}

fn budget_exceeded(message: &str) -> Reply {
    Reply::json(BUDGET_STATUS, typed_error(BUDGET_STATUS, "budget_exceeded", message, None))
}

fn rate_limited(descriptor: &str, value: &str, refusal: &KeyRefusal, now: u64) -> Reply {
    match refusal {
        KeyRefusal::Rpm { limit, .. } => limit_reply(descriptor, value, "requests", *limit, now),
        KeyRefusal::Tpm { limit, .. } => limit_reply(descriptor, value, "tokens", *limit, now),
        // Database keys' budgets are their accounts', checked above.
        KeyRefusal::Budget { .. } => budget_exceeded("Budget has been exceeded!"),
    }
}

/// LiteLLM's rate limiter's 429: its window is a minute.
fn limit_reply(descriptor: &str, value: &str, limit_type: &str, limit: u64, now: u64) -> Reply {
    let resets = utc_minute(now + 60);
    let message = format!(
        "Rate limit exceeded for {descriptor}: {value}. Limit type: {limit_type}. Current limit: {limit}, Remaining: 0. Limit resets at: {resets}"
    );
    let mut reply = Reply::json(429, typed_error(429, "throttling_error", &message, None));
    reply.header("retry-after", b"60");
    reply.header("rate_limit_type", limit_type.as_bytes());
    reply.header("reset_at", resets.as_bytes());
    reply
}
