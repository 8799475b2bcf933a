//! `GET /health` as LiteLLM answers it: `{"healthy_endpoints": […], "unhealthy_endpoints": […],
//! "healthy_count", "unhealthy_count"}`, each endpoint with its `model` (`litellm_params.model`
//! as written), `model_id`, what LiteLLM shows of its params (`api_base` and `api_version` to
//! admins only, `region_name`, `rpm`, `tpm`) and, when unhealthy, the `error`. Never a key.
//!
//! Behind the API's own keys, as LiteLLM's (`user_api_key_auth`): a virtual key sees the
//! deployments of the model groups it may use. `?model=` (a model group, or a
//! `litellm_params.model` as written) or `?model_id=` narrows the answer, and a narrowed answer
//! with no healthy endpoint is a 503.
//!
//! With health checks running (background checks or health-check routing), the answer is the
//! last result of each deployment checked, as the shard's state holds it (the checks reach every
//! shard as events). Without them LiteLLM probes on the spot, and so does this: one round of
//! probes run concurrently on this shard's runtime for this request alone (other requests on
//! the shard go on between the awaits; none of them waits for it), not fed to routing.

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::DeploymentIdx;
use serde_json::{json, Map, Value};

use crate::health::Prober;
use crate::keys::Caller;
use crate::respond::Reply;
use crate::routes::Routes;
use crate::server::admin;
use crate::shard::Shard;

/// What the caller asked for in the query.
#[derive(Default, Debug, PartialEq, Eq)]
struct Narrowed {
    model: Option<String>,
    model_id: Option<String>,
}

/// Answers `GET /health` (`query`: the path's query string).
pub async fn serve(shard: &Shard, req: &crate::request::Request<'_>, query: &str) -> Reply {
    let caller = match admin::authorize_api(shard, req).await {
        Ok(caller) => caller,
        Err(reply) => return reply,
    };
    let narrowed = parse_query(query);
    let routes: Arc<Routes> = Arc::clone(&shard.sync());
    let targets = targets(&routes, &caller, &narrowed);
    let running = shard.settings.health_checks.background || routes.snapshot.settings.enable_health_check_routing;
    let results = match running {
        true => last_results(shard, &routes, &targets),
        false => probe_now(shard, &routes, &targets).await,
    };
    let admin = !matches!(caller, Caller::Virtual(_));
    let (mut healthy, mut unhealthy) = (Vec::new(), Vec::new());
    for (idx, result) in results {
        let endpoint = endpoint(&routes, idx, admin, result.as_ref().err());
        match result {
            Ok(()) => healthy.push(endpoint),
            Err(_) => unhealthy.push(endpoint),
        }
    }
    let status = match (narrowed != Narrowed::default(), healthy.is_empty()) {
        (true, true) => 503,
        _ => 200,
    };
    let body = json!({
        "healthy_endpoints": healthy,
        "unhealthy_endpoints": unhealthy,
        "healthy_count": healthy.len(),
        "unhealthy_count": unhealthy.len(),
    });
    Reply::json(status, body.to_string().into_bytes())
}

fn parse_query(query: &str) -> Narrowed {
    let mut narrowed = Narrowed::default();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decoded(value);
        match key {
            "model" if !value.is_empty() => narrowed.model = Some(value),
            "model_id" if !value.is_empty() => narrowed.model_id = Some(value),
            _ => {}
        }
    }
    narrowed
}

/// A query value with `%XX` and `+` decoded (invalid escapes kept as they are).
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match bytes[i] {
            b'%' if hex(i + 1).is_some() && hex(i + 2).is_some() => {
                out.push((hex(i + 1).unwrap_or(0) * 16 + hex(i + 2).unwrap_or(0)) as u8);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The deployments the answer is about: those the caller may use, narrowed by the query.
fn targets(routes: &Routes, caller: &Caller, narrowed: &Narrowed) -> Vec<DeploymentIdx> {
    let snap = &routes.snapshot;
    (0..snap.deployments.len())
        .map(|i| DeploymentIdx(i as u32))
        .filter(|&idx| {
            let d = snap.deployment(idx);
            let may_use = caller.virtual_key().is_none_or(|k| k.may_use(&d.model_name, snap));
            let model =
                narrowed.model.as_deref().is_none_or(|m| m == d.model_name || Some(m) == written_model(routes, idx));
            let id = narrowed.model_id.as_deref().is_none_or(|id| id == d.id);
            may_use && model && id
        })
        .collect()
}

/// `litellm_params.model` of deployment `idx` as the config wrote it.
fn written_model(routes: &Routes, idx: DeploymentIdx) -> Option<&str> {
    let id = &routes.snapshot.deployment(idx).id;
    let entry = routes.model_info.iter().find(|e| &e.id == id)?;
    entry.json["litellm_params"]["model"].as_str()
}

/// The last health check of each target checked so far, as this shard knows it.
fn last_results(
    shard: &Shard,
    routes: &Arc<Routes>,
    targets: &[DeploymentIdx],
) -> Vec<(DeploymentIdx, Result<(), String>)> {
    let now = Instant::now();
    shard.with_state(routes, |state| {
        let result = |idx| {
            let check = state.health(idx)?;
            let ago = now.saturating_duration_since(check.checked_at).as_secs();
            Some(match check.healthy {
                true => Ok(()),
                false => Err(format!("the health check {ago}s ago got no 2xx answer in time")),
            })
        };
        targets.iter().filter_map(|&idx| result(idx).map(|r| (idx, r))).collect()
    })
}

/// One round of probes of `targets`, run concurrently, awaited.
async fn probe_now(
    shard: &Shard,
    routes: &Arc<Routes>,
    targets: &[DeploymentIdx],
) -> Vec<(DeploymentIdx, Result<(), String>)> {
    let prober = Arc::new(Prober {
        tls: shard.upstream.tls.clone(),
        settings: shard.settings.health_checks.clone(),
        connect: shard.upstream.connect_timeout,
    });
    let probes: Vec<_> = targets
        .iter()
        .map(|&idx| {
            let (prober, routes) = (prober.clone(), routes.clone());
            monoio::spawn(async move { (idx, prober.probe(&routes, idx).await) })
        })
        .collect();
    let mut results = Vec::with_capacity(probes.len());
    for probe in probes {
        results.push(probe.await);
    }
    results
}

/// One endpoint as LiteLLM lists it (`clean_endpoint_data`'s fields that Pointwork knows).
fn endpoint(routes: &Routes, idx: DeploymentIdx, admin: bool, error: Option<&String>) -> Value {
    let d = routes.snapshot.deployment(idx);
    let mut out = Map::new();
    out.insert("model".into(), json!(written_model(routes, idx).unwrap_or(&d.upstream_model)));
    if admin {
        out.insert("api_base".into(), json!(d.api_base));
        if let Some(version) = &d.api_version {
            out.insert("api_version".into(), json!(version));
        }
    }
    if let Some(region) = &d.region_name {
        out.insert("region_name".into(), json!(region));
    }
    for (key, value) in [("rpm", d.rpm), ("tpm", d.tpm)] {
        if let Some(value) = value {
            out.insert(key.into(), json!(value));
        }
    }
    if let Some(error) = error {
        out.insert("error".into(), json!(error));
    }
    out.insert("model_id".into(), json!(d.id));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_a_model_or_a_model_id() {
        assert_eq!(parse_query(""), Narrowed::default());
        assert_eq!(
            parse_query("model=openai%2Fgpt-4o&x=1"),
            Narrowed { model: Some("openai/gpt-4o".into()), model_id: None }
        );
        assert_eq!(parse_query("model_id=a+b&model="), Narrowed { model: None, model_id: Some("a b".into()) });
        assert_eq!(percent_decoded("100%"), "100%");
    }
}
