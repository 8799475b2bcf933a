//! What a failed attempt at a managed model teaches: a 429 counts toward the provider's hot
//! window, a 400 saying the input is too long caps the provider for a while (both on every
//! shard, as events), a 404 "No allowed providers" gives the account's allow-list (to the
//! poller, which publishes it); the error log gets the line when the rule asks for it.

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::pareto::{is_input_cap_error, parse_allowed_providers};
use pointwork_core::{DeploymentIdx, Event};

use crate::routers::pareto::Steered;
use crate::routes::Routes;
use crate::shard::Shard;

/// How much of an error body the error log keeps.
const LOGGED_BODY: usize = 1000;

pub(crate) fn learn(
    shard: &Shard,
    routes: &Arc<Routes>,
    steered: &Steered<'_>,
    idx: DeploymentIdx,
    status: u16,
    body: &[u8],
) {
    let Some(pareto) = routes.pareto.as_ref() else { return };
    let pin = &pareto.pins[idx.get()];
    let slug = steered.attempt_slug(pin);
    let text = String::from_utf8_lossy(body);
    if steered.rule.log_errors && status >= 400 {
        let logged: String = text.chars().take(LOGGED_BODY).map(|c| if c.is_control() { ' ' } else { c }).collect();
        let key = steered.key;
        pareto.error_log.line(&format!("model={key} slug={} status={status} body={logged}", slug.unwrap_or("-")));
    }
    if status == 404 && text.contains("No allowed providers") {
        if let Some(providers) = parse_allowed_providers(&text) {
            crate::routers::pareto::allow_list_learned(&shard.hub, providers);
        }
    }
    let Some(slug) = slug else { return };
    let now = Instant::now();
    let (model, slug): (Box<str>, Box<str>) = (steered.key.into(), slug.into());
    if status == 429 {
        shard.record(routes, idx, |state, _, i| {
            state.providers_mut().record_429(&model, &slug, now);
            ((), Some(Event::ProviderRateLimited { idx: i, model, slug, at: now }))
        });
    } else if is_input_cap_error(status, &text) {
        shard.record(routes, idx, |state, _, i| {
            state.providers_mut().record_input_cap(&model, &slug, now);
            ((), Some(Event::ProviderInputCapped { idx: i, model, slug, at: now }))
        });
    }
}
