//! LiteLLM's gauges, read when `/metrics` is scraped: each deployment's state and configured
//! limits, what is left of provider, key, team and user budgets.

use std::collections::BTreeMap;
use std::time::Instant;

use pointwork_core::{DeploymentIdx, Provider, State};

use super::counts::LiteLlmReport;
use super::labels::Where;
use super::render::{gauge, labels};
use crate::clock::unix_now;
use crate::keys::VirtualKey;
use crate::routes::Routes;

/// LiteLLM's `litellm_deployment_state` values.
const HEALTHY: f64 = 0.0;
const PARTIAL_OUTAGE: f64 = 1.0;
const COMPLETE_OUTAGE: f64 = 2.0;

pub(super) fn render(out: &mut String, routes: &Routes, state: &State, report: &LiteLlmReport, now: Instant) {
    deployments(out, routes, state, report, now);
    provider_budgets(out, routes, state, now);
    key_budgets(out, routes, report);
}

/// A deployment cooling down is a complete outage (LiteLLM sets it when a cooldown starts); one
/// whose last attempt failed, a partial outage; any other is healthy.
fn deployment_state(routes: &Routes, state: &State, report: &LiteLlmReport, idx: DeploymentIdx, now: Instant) -> f64 {
    if state.is_cooling_down(idx, now) {
        return COMPLETE_OUTAGE;
    }
    let id = routes.snapshot.deployment(idx).id.as_str();
    match report.last_outcomes.get(id) {
        Some(last) if last.failed => PARTIAL_OUTAGE,
        _ => HEALTHY,
    }
}

fn deployments(out: &mut String, routes: &Routes, state: &State, report: &LiteLlmReport, now: Instant) {
    let (mut states, mut rpm, mut tpm) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for (i, d) in routes.snapshot.deployments.iter().enumerate() {
        let idx = DeploymentIdx(i as u32);
        let p = Where::of(routes, idx);
        #[rustfmt::skip]
        let place = [
            ("litellm_model_name", Some(&*p.model)), ("model_id", Some(&*p.model_id)),
            ("api_base", Some(&*p.api_base)), ("api_provider", Some(p.api_provider)),
        ];
        states.insert(labels(&place), deployment_state(routes, state, report, idx, now));
        let limit_labels = labels(&[&[("model_group", Some(&*p.model_group))], &place[..]].concat());
        if let Some(limit) = d.rpm {
            rpm.insert(limit_labels.clone(), limit as f64);
        }
        if let Some(limit) = d.tpm {
            tpm.insert(limit_labels, limit as f64);
        }
    }
    gauge(out, "litellm_deployment_state", HELP_STATE, states);
    gauge(out, "litellm_deployment_tpm_limit", "Deployment TPM limit found in config", tpm);
    gauge(out, "litellm_deployment_rpm_limit", "Deployment RPM limit found in config", rpm);
}

fn provider_budgets(out: &mut String, routes: &Routes, state: &State, now: Instant) {
    let settings = &routes.snapshot.settings;
    let mut series = BTreeMap::new();
    for provider in Provider::ALL {
        if let Some(budget) = settings.budget_of(provider) {
            let left = budget.budget_limit - state.provider_spend(provider, now);
            series.insert(labels(&[("api_provider", Some(provider.prefix()))]), left);
        }
    }
    gauge(out, "litellm_provider_remaining_budget_metric", HELP_PROVIDER_BUDGET, series);
}

/// Every configured virtual key (LiteLLM sets its key gauges for each key it knows), and the
/// database keys that made requests, with their teams and users.
fn key_budgets(out: &mut String, routes: &Routes, report: &LiteLlmReport) {
    let now = unix_now();
    let mut b = Budgets::default();
    for key in routes.keys.virtual_keys() {
        let spend = key.meter.usage(&key.limits, now).spend;
        let names = labels(&[("hashed_api_key", Some(&key.digest_hex())), ("api_key_alias", Some(&key.name))]);
        b.key(names.clone(), key.limits.max_budget, spend);
        if let (Some(_), Some(period)) = (key.limits.max_budget, key.limits.budget_duration) {
            let period = period.as_secs().max(1);
            let next_reset = (now / period + 1) * period;
            b.key_hours.insert(names, (next_reset - now) as f64 / 3600.0);
        }
    }
    for key in report.database_keys.values() {
        database_key(&mut b, key);
    }
    gauge(out, "litellm_remaining_api_key_budget_metric", "Remaining budget for api key", b.key_left);
    gauge(out, "litellm_api_key_max_budget_metric", "Maximum budget set for api key", b.key_max);
    gauge(out, "litellm_api_key_budget_remaining_hours_metric", HELP_KEY_HOURS, b.key_hours);
    gauge(out, "litellm_remaining_team_budget_metric", "Remaining budget for team", b.team_left);
    gauge(out, "litellm_team_max_budget_metric", "Maximum budget set for team", b.team_max);
    gauge(out, "litellm_remaining_user_budget_metric", "Remaining budget for user", b.user_left);
    gauge(out, "litellm_user_max_budget_metric", "Maximum budget set for user", b.user_max);
}

#[derive(Default)]
struct Budgets {
    key_left: BTreeMap<String, f64>,
    key_max: BTreeMap<String, f64>,
    key_hours: BTreeMap<String, f64>,
    team_left: BTreeMap<String, f64>,
    team_max: BTreeMap<String, f64>,
    user_left: BTreeMap<String, f64>,
    user_max: BTreeMap<String, f64>,
}

impl Budgets {
    /// LiteLLM's remaining budget of an account without one is `+Inf`.
    fn key(&mut self, names: String, max: Option<f64>, spend: f64) {
        remaining(&mut self.key_left, &mut self.key_max, names, max, spend);
    }
}

fn remaining(
    left: &mut BTreeMap<String, f64>,
    maxes: &mut BTreeMap<String, f64>,
    names: String,
    max: Option<f64>,
    spend: f64,
) {
    left.insert(names.clone(), max.map_or(f64::INFINITY, |max| max - spend));
    if let Some(max) = max {
        maxes.insert(names, max);
    }
}

/// A database key's budgets from its row and its live accounts (the database's spend plus
/// what is not written yet). An alias LiteLLM has not is written empty here, as it does.
fn database_key(b: &mut Budgets, key: &VirtualKey) {
    let Some(entry) = &key.db else { return };
    let row = &entry.record;
    let alias = row.key_alias.as_deref().unwrap_or("");
    b.key(
        labels(&[("hashed_api_key", Some(&row.token)), ("api_key_alias", Some(alias))]),
        row.max_budget,
        entry.key.spend(),
    );
    if let (Some(team), Some(account)) = (&row.team, &entry.team) {
        let names =
            labels(&[("team", Some(&team.team_id)), ("team_alias", Some(team.team_alias.as_deref().unwrap_or("")))]);
        remaining(&mut b.team_left, &mut b.team_max, names, team.max_budget, account.spend());
    }
    if let (Some(user), Some(account)) = (&row.user_id, &entry.user) {
        let names = labels(&[("user", Some(user))]);
        remaining(&mut b.user_left, &mut b.user_max, names, row.user_max_budget, account.spend());
    }
}

const HELP_STATE: &str =
    "LLM Deployment Analytics - The state of the deployment: 0 = healthy, 1 = partial outage, 2 = complete outage";
const HELP_PROVIDER_BUDGET: &str = "Remaining budget for provider - used when you set provider budget limits";
const HELP_KEY_HOURS: &str = "Remaining hours for api key budget to be reset";
