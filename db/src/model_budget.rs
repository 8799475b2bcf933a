//! `model_max_budget` of a key, a team or a user (LiteLLM's `{"gpt-4o": {"budget_limit": 0.5,
//! "time_period": "1d"}}`): what it may spend on one model per period. LiteLLM enforces an entry only with a
//! `time_period` (`model_max_budget_limiter._usable_budget_config`); so does Pointwork.
//!
//! Each entry's spend is a [`KeyMeter`]'s budget counter, shared by every shard of the instance
//! and, with Redis, reconciled across instances like the config keys' budgets (see
//! [`crate::LimitedMeters`]). Periods are aligned to the Unix epoch (`1d` is a UTC day);
//! LiteLLM's start at the first spend.

use std::sync::Arc;
use std::time::Duration;

use pointwork_core::{KeyLimits, KeyMeter};
use serde_json::Value;

/// One enforced entry of `model_max_budget`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelBudget {
    /// The entry's name: a model, a model group, or a `prefix*` pattern.
    pub model: String,
    /// US dollars per period (`budget_limit`).
    pub limit: f64,
    /// `time_period` as written (`1d`).
    pub time_period: String,
    pub period: Duration,
}

impl ModelBudget {
    /// The meter's limits: the budget over its period.
    pub fn limits(&self) -> KeyLimits {
        KeyLimits { max_budget: Some(self.limit), budget_duration: Some(self.period), ..KeyLimits::default() }
    }

    /// The entry's meter's id in Redis, beside its owner's (`key:<token>`, `team:<id>`,
    /// `user:<id>`).
    pub(crate) fn meter_id(&self, owner: &str) -> String {
        format!("{owner}:model:{}:{}", self.model, self.time_period)
    }
}

/// A key's model budget with its spend counter.
#[derive(Debug)]
pub struct ModelMeter {
    pub budget: ModelBudget,
    pub meter: Arc<KeyMeter>,
}

impl ModelMeter {
    /// US dollars spent in the period `now` (Unix seconds) falls in.
    pub fn spent(&self, now: u64) -> f64 {
        self.meter.usage(&self.budget.limits(), now).spend
    }

    pub fn charge(&self, dollars: f64, now: u64) {
        self.meter.record(&self.budget.limits(), 0, Some(dollars), now);
    }
}

/// The enforced entries of a `model_max_budget` column, in name order.
pub(crate) fn parse(value: Option<Value>) -> Vec<ModelBudget> {
    let Some(Value::Object(map)) = value else { return Vec::new() };
    let mut budgets: Vec<ModelBudget> = map
        .into_iter()
        .filter_map(|(model, v)| {
            let limit = v.get("budget_limit").and_then(Value::as_f64).filter(|l| *l >= 0.0)?;
            let time_period = v.get("time_period").and_then(Value::as_str)?.trim().to_string();
            let period = crate::duration::to_seconds(&time_period).map(Duration::from_secs)?;
            Some(ModelBudget { model, limit, time_period, period })
        })
        .collect();
    budgets.sort_by(|a, b| a.model.cmp(&b.model));
    budgets
}

/// The entry that governs `model` (`group`: the model group it resolves to): one named after
/// the model, else after its group, else the longest `prefix*` matching either — LiteLLM's
/// order (`resolve_model_budget`), without its access groups. An entry named `yields` is
/// passed over.
pub fn governing_model_meter<'a>(
    meters: &'a [ModelMeter],
    model: &str,
    group: Option<&str>,
    yields: Option<&str>,
) -> Option<&'a ModelMeter> {
    let candidates = || meters.iter().filter(|m| Some(m.budget.model.as_str()) != yields);
    let named = |name: &str| candidates().find(|m| m.budget.model == name);
    named(model).or_else(|| group.and_then(named)).or_else(|| {
        candidates()
            .filter(|m| {
                m.budget
                    .model
                    .strip_suffix('*')
                    .is_some_and(|prefix| model.starts_with(prefix) || group.is_some_and(|g| g.starts_with(prefix)))
            })
            .max_by_key(|m| m.budget.model.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_entries_with_a_period_are_enforced() {
        let budgets = parse(Some(json!({
            "gpt-4o": {"budget_limit": 0.5, "time_period": "1d"},
            "no-period": {"budget_limit": 1.0},
            "bad-period": {"budget_limit": 1.0, "time_period": "1y"},
            "claude*": {"budget_limit": 2, "time_period": "1h"},
        })));
        let names: Vec<&str> = budgets.iter().map(|b| b.model.as_str()).collect();
        assert_eq!(names, ["claude*", "gpt-4o"]);
        assert_eq!(budgets[1].period, Duration::from_secs(86_400));
        assert_eq!(budgets[0].limit, 2.0);
    }

    #[test]
    fn the_model_then_its_group_then_the_longest_pattern_governs() {
        let meter = |model: &str| ModelMeter {
            budget: ModelBudget {
                model: model.into(),
                limit: 1.0,
                time_period: "1d".into(),
                period: Duration::from_secs(86_400),
            },
            meter: Arc::default(),
        };
        let meters = [meter("gpt"), meter("gpt-4o"), meter("claude*"), meter("claude-3*")];
        let name = |m: Option<&ModelMeter>| m.map(|m| m.budget.model.clone());
        assert_eq!(name(governing_model_meter(&meters, "gpt-4o", Some("gpt"), None)), Some("gpt-4o".into()));
        assert_eq!(name(governing_model_meter(&meters, "my-alias", Some("gpt"), None)), Some("gpt".into()));
        assert_eq!(name(governing_model_meter(&meters, "claude-3-haiku", None, None)), Some("claude-3*".into()));
        assert_eq!(name(governing_model_meter(&meters, "mistral", Some("mistral"), None)), None);
        let yielded = governing_model_meter(&meters, "gpt-4o", Some("gpt"), Some("gpt-4o"));
        assert_eq!(name(yielded), Some("gpt".into()), "an entry that yields is passed over");
    }

    #[test]
    fn spend_is_per_period() {
        let m = ModelMeter {
            budget: ModelBudget {
                model: "gpt".into(),
                limit: 1.0,
                time_period: "1h".into(),
                period: Duration::from_secs(3600),
            },
            meter: Arc::default(),
        };
        let t = 1_800_000_000 / 3600 * 3600;
        m.charge(0.25, t + 10);
        m.charge(0.5, t + 20);
        assert_eq!(m.spent(t + 30), 0.75);
        assert_eq!(m.spent(t + 3600), 0.0, "the next hour starts over");
    }
}
