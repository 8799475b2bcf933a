//! What the shards share of a database key: its row as read ([`KeyRecord`]), and the live
//! counters of the key, its team and its user ([`Account`]), one of each per instance, shared by
//! every key that names the same team or user.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use pointwork_core::KeyMeter;

use crate::model_budget::{ModelBudget, ModelMeter};

const MICROS: f64 = 1_000_000.0;

/// The spend and limits' counters of one key, team or user on this instance.
#[derive(Debug, Default)]
pub struct Account {
    /// Requests and tokens this minute (rpm / tpm), shared with the gateway's view of the key.
    pub meter: Arc<KeyMeter>,
    /// The spend the database holds, as last read or written (micro-dollars).
    db_micros: AtomicU64,
    /// What this instance charged and has not written yet.
    unwritten_micros: AtomicU64,
    in_flight: AtomicU64,
    /// The other instances' requests in flight, as the cluster's last reconcile saw them (0
    /// without Redis).
    others_in_flight: AtomicU64,
}

impl Account {
    pub(crate) fn with_spend(dollars: f64) -> Account {
        let account = Account::default();
        account.set_db_spend(dollars);
        account
    }

    /// US dollars spent: the database's figure plus what is not written yet.
    pub fn spend(&self) -> f64 {
        let micros = self.db_micros.load(Ordering::Relaxed) + self.unwritten_micros.load(Ordering::Relaxed);
        micros as f64 / MICROS
    }

    /// Charges a request's cost at once (budgets hold before the database hears of it).
    pub fn charge(&self, dollars: f64) {
        self.unwritten_micros.fetch_add(to_micros(dollars), Ordering::Relaxed);
    }

    /// A batch wrote `dollars` of this account's charges; the database now holds `db_total`.
    pub(crate) fn written(&self, dollars: f64, db_total: f64) {
        let micros = to_micros(dollars);
        let _ = self
            .unwritten_micros
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_sub(micros)));
        self.set_db_spend(db_total);
    }

    /// What the database holds now (a read, a budget reset).
    pub(crate) fn set_db_spend(&self, dollars: f64) {
        self.db_micros.store(to_micros(dollars), Ordering::Relaxed);
    }

    /// One more request in flight, unless `max` are already (here and, as last seen, on the
    /// other instances).
    pub fn enter(&self, max: Option<u64>) -> bool {
        match max {
            None => {
                self.in_flight.fetch_add(1, Ordering::Relaxed);
                true
            }
            Some(max) => {
                let others = self.others_in_flight.load(Ordering::Relaxed);
                self.in_flight
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n + others < max).then_some(n + 1))
                    .is_ok()
            }
        }
    }

    /// What the cluster's reconcile saw in flight on the other instances.
    pub fn set_others_in_flight(&self, n: u64) {
        self.others_in_flight.store(n, Ordering::Relaxed);
    }

    pub fn others_in_flight(&self) -> u64 {
        self.others_in_flight.load(Ordering::Relaxed)
    }

    pub fn leave(&self) {
        let _ = self.in_flight.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_sub(1)));
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }
}

fn to_micros(dollars: f64) -> u64 {
    if dollars.is_finite() && dollars > 0.0 {
        (dollars * MICROS).round() as u64
    } else {
        0
    }
}

/// A key's row of `LiteLLM_VerificationToken` (with its team's and user's), as read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyRecord {
    /// The SHA-256 of the key in hex (`token`).
    pub token: String,
    /// `key_alias`, else `key_name` (`sk-...abcd`): what logs and errors call the key.
    pub name: String,
    pub key_alias: Option<String>,
    /// `key_name`: the key abbreviated, `sk-...abcd`.
    pub key_name: Option<String>,
    /// Empty = every model (LiteLLM's meaning), `all-proxy-models` too.
    pub models: Vec<String>,
    pub blocked: bool,
    /// Unix seconds.
    pub expires: Option<f64>,
    pub max_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub rpm_limit: Option<u64>,
    pub tpm_limit: Option<u64>,
    pub max_parallel_requests: Option<u64>,
    /// `model_max_budget`'s enforced entries (those with a `time_period`).
    pub model_max_budget: Vec<ModelBudget>,
    /// `model_spend`: what the key spent per model, as the database holds it.
    pub model_spend: HashMap<String, f64>,
    /// `aliases`: a model name the key asks for → the model it means.
    pub aliases: HashMap<String, String>,
    /// `metadata.tags`: added to every request's tags.
    pub tags: Vec<String>,
    pub user_id: Option<String>,
    pub user_max_budget: Option<f64>,
    /// The user's `model_max_budget` (enforced entries).
    pub user_model_max_budget: Vec<ModelBudget>,
    pub team: Option<TeamRecord>,
    /// The MCP servers the key may use (`LiteLLM_ObjectPermissionTable`'s `mcp_servers`,
    /// `mcp_access_groups` and the servers of `mcp_tool_permissions`: server ids, names or
    /// access groups); `None` = every server, `Some([])` = none (`no-mcp-servers`).
    pub mcp_servers: Option<Vec<String>>,
    /// `mcp_tool_permissions`: per server (id, name or alias), the only tools the key may call
    /// on it (`*` = all); a server not named here is not limited by tool.
    pub mcp_tools: Vec<(String, Vec<String>)>,
    /// `allowed_cache_controls`: the members of a request's `cache` the key may set; empty
    /// (or NULL) = any, as LiteLLM reads it.
    pub allowed_cache_controls: Vec<String>,
    /// The spend figures the row held when read.
    pub spend: f64,
    pub team_spend: f64,
    pub user_spend: f64,
}

/// The key's team (`LiteLLM_TeamTable`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TeamRecord {
    pub team_id: String,
    pub team_alias: Option<String>,
    /// Empty = every model.
    pub models: Vec<String>,
    pub blocked: bool,
    pub max_budget: Option<f64>,
    pub rpm_limit: Option<u64>,
    pub tpm_limit: Option<u64>,
    pub max_parallel_requests: Option<u64>,
    /// The team's `model_max_budget` (enforced entries).
    pub model_max_budget: Vec<ModelBudget>,
}

/// A key as every shard shares it: its record and its accounts. Immutable but for `stale`: a
/// change to the key, its team or its user makes a new entry (with the same accounts) and marks
/// the old one stale, so that a shard holding it asks the database thread again.
#[derive(Debug)]
pub struct KeyEntry {
    pub record: KeyRecord,
    pub key: Arc<Account>,
    pub team: Option<Arc<Account>>,
    pub user: Option<Arc<Account>>,
    /// `model_max_budget` of the key, its user and its team: each entry with its spend this
    /// period (the user's and team's shared by all their keys).
    pub model_meters: ModelMeters,
    /// The key's names as its spend rows carry them.
    pub names: KeyNames,
    stale: AtomicBool,
}

/// A key's names as its spend rows carry them.
#[derive(Clone, Debug, Default)]
pub struct KeyNames {
    pub api_key: Arc<str>,
    pub key_alias: Option<Arc<str>>,
    pub team_id: Option<Arc<str>>,
    pub user_id: Option<Arc<str>>,
}

/// The `model_max_budget` meters of a key, its user and its team.
#[derive(Debug, Default)]
pub struct ModelMeters {
    pub key: Vec<ModelMeter>,
    pub user: Vec<ModelMeter>,
    pub team: Vec<ModelMeter>,
}

impl ModelMeters {
    pub fn is_empty(&self) -> bool {
        self.key.is_empty() && self.user.is_empty() && self.team.is_empty()
    }
}

impl KeyEntry {
    pub(crate) fn new(
        record: KeyRecord,
        key: Arc<Account>,
        team: Option<Arc<Account>>,
        user: Option<Arc<Account>>,
        model_meters: ModelMeters,
    ) -> KeyEntry {
        let names = KeyNames {
            api_key: record.token.as_str().into(),
            key_alias: record.key_alias.as_deref().map(Arc::from),
            team_id: record.team.as_ref().map(|t| t.team_id.as_str().into()),
            user_id: record.user_id.as_deref().map(Arc::from),
        };
        KeyEntry { record, key, team, user, model_meters, names, stale: AtomicBool::new(false) }
    }

    pub fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    pub(crate) fn retire(&self) {
        self.stale.store(true, Ordering::Relaxed);
    }

    /// Charges a request's cost to the key, its team and its user.
    pub fn charge(&self, dollars: f64) {
        for account in [Some(&self.key), self.team.as_ref(), self.user.as_ref()].into_iter().flatten() {
            account.charge(dollars);
        }
    }
}

/// The models LiteLLM reads as "every model" in a key's or team's list.
pub fn means_every_model(models: &[String]) -> bool {
    models.is_empty() || models.iter().any(|m| m == "all-proxy-models" || m == "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spend_is_the_database_figure_plus_what_is_not_written() {
        let a = Account::with_spend(1.5);
        a.charge(0.25);
        assert_eq!(a.spend(), 1.75);
        // The batch wrote our 0.25, and another instance had spent 1.0 meanwhile.
        a.written(0.25, 2.75);
        assert_eq!(a.spend(), 2.75);
    }

    #[test]
    fn in_flight_is_capped() {
        let a = Account::default();
        assert!(a.enter(Some(2)) && a.enter(Some(2)));
        assert!(!a.enter(Some(2)));
        a.leave();
        assert!(a.enter(Some(2)));
        assert_eq!(a.in_flight(), 2);
    }

    #[test]
    fn the_other_instances_requests_in_flight_count_against_the_cap() {
        let a = Account::default();
        a.set_others_in_flight(2);
        assert!(a.enter(Some(3)));
        assert!(!a.enter(Some(3)), "1 here and 2 elsewhere");
        assert!(a.enter(None), "no cap, no limit");
    }
}
