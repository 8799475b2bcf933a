//! `model_max_budget` on the request path: the entries of the key, its user and its team that
//! govern the model asked for, refused once spent (LiteLLM's `model_max_budget_limiter`: 422
//! `budget_exceeded`, its texts) and charged with the answer's price. A key without any entry
//! costs one emptiness check.
//!
//! As in LiteLLM, the spend per model is kept apart from the database's `spend` (in memory,
//! and through Redis with a cluster), not written to `model_spend`.

use pointwork_core::Snapshot;
use pointwork_db::{governing_model_meter, KeyEntry, ModelMeter};

use crate::clock::unix_now;
use crate::keys::group_name;

/// Whose `model_max_budget` an entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    Key,
    User,
    Team,
}

/// The entry of `owner` that governs `model`: named after the model, its group, or a pattern.
/// The team's entry named after the model yields to the key's own (LiteLLM's
/// `team_model_budget_entries`).
fn governing<'e>(entry: &'e KeyEntry, owner: Owner, model: &str, snap: &Snapshot) -> Option<&'e ModelMeter> {
    let meters = &entry.model_meters;
    let (list, yields) = match owner {
        Owner::Key => (&meters.key, None),
        Owner::User => (&meters.user, None),
        Owner::Team => (&meters.team, meters.key.iter().any(|m| m.budget.model == model).then_some(model)),
    };
    if list.is_empty() {
        return None;
    }
    governing_model_meter(list, model, group_name(model, snap), yields)
}

/// LiteLLM's words when `owner`'s entry for `model` is spent at `now` (Unix seconds): the
/// message of its `budget_exceeded` refusal.
pub(crate) fn refusal(entry: &KeyEntry, owner: Owner, model: &str, snap: &Snapshot, now: u64) -> Option<String> {
    let m = governing(entry, owner, model, snap).filter(|m| m.spent(now) >= m.budget.limit)?;
    let r = &entry.record;
    let mut message = match owner {
        Owner::Key => format!(
            "LiteLLM Virtual Key: {}, key_alias: {}, exceeded budget for model={model}",
            r.token,
            r.key_alias.as_deref().unwrap_or("None")
        ),
        Owner::User => format!("LiteLLM User: {}, exceeded budget for model={model}", r.user_id.as_deref()?),
        Owner::Team => format!("LiteLLM Team: {}, exceeded budget for model={model}", r.team.as_ref()?.team_id),
    };
    // LiteLLM names the entry when it is not the model's own.
    if m.budget.model != model {
        message.push_str(&format!(", budget_model={}", m.budget.model));
    }
    Some(message)
}

/// Charges an answer's cost to every entry that governs `model`.
pub(crate) fn charge(entry: &KeyEntry, model: &str, snap: &Snapshot, dollars: f64) {
    if entry.model_meters.is_empty() {
        return;
    }
    let now = unix_now();
    for owner in [Owner::Key, Owner::User, Owner::Team] {
        if let Some(m) = governing(entry, owner, model, snap) {
            m.charge(dollars, now);
        }
    }
}
