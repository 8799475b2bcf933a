//! Operator endpoints (`GET /metrics`, `POST /admin/reload`, the dry run `POST /v1/route`) and
//! who may call them: the master key or an admin key when one is configured (`keys.rs`);
//! health stays open, metrics too unless `pointwork.auth.metrics: key`.

use std::time::Instant;

use pointwork_core::Snapshot;

use crate::control::ControlMsg;
use crate::errors::openai_error;
use crate::keys::{unix_now, Caller};
use crate::metrics::{render, Gauges};
use crate::respond::Reply;
use crate::route;
use crate::shard::Shard;

/// The operator behind an admin call (master or admin key), or the 401 to answer.
pub fn authorize(shard: &Shard, authorization: Option<&[u8]>) -> Result<Caller, Reply> {
    shard.hub.routes.load().keys.admin_caller(authorization)
}

/// The caller of an API endpoint (`/v1/*`), or the 401 to answer.
pub fn authorize_api(shard: &Shard, authorization: Option<&[u8]>) -> Result<Caller, Reply> {
    shard.hub.routes.load().keys.api_caller(authorization)
}

/// `GET /v1/models`: what the caller's key may use.
pub fn models(shard: &Shard, caller: &Caller) -> Reply {
    let routes = shard.hub.routes.load();
    let body = caller.virtual_key().and_then(|k| k.models_body.clone());
    Reply::json(200, body.unwrap_or_else(|| routes.models_body.clone()))
}

pub fn metrics(shard: &Shard) -> Reply {
    // Apply the other shards' events first, so that the cooldown gauge is current.
    shard.sync();
    let routing = shard.routing.borrow();
    let now = std::time::Instant::now();
    let gauges = Gauges {
        open_connections: shard.hub.open_connections(),
        cooling_down: cooling_down(&routing.routes.snapshot, &routing.state, now),
        draining: shard.hub.is_draining(),
    };
    drop(routing);
    let mut text = match shard.hub.totals.lock() {
        Ok(totals) => render(&totals, gauges),
        Err(_) => String::new(),
    };
    shard.hub.routes.load().keys.render_metrics(&mut text, unix_now());
    let mut reply = Reply::json(200, text.into_bytes());
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply
}

fn cooling_down(snap: &Snapshot, state: &pointwork_core::State, now: std::time::Instant) -> usize {
    (0..snap.deployments.len()).filter(|&i| state.is_cooling_down(pointwork_core::DeploymentIdx(i as u32), now)).count()
}

/// `POST /v1/route[?seed=N]`: the decision for the body on the live routes and this shard's
/// state (after applying the other shards' events), without calling a provider.
pub fn dry_run(shard: &Shard, path: &str, body: &[u8]) -> Reply {
    let seed = path
        .split_once('?')
        .and_then(|(_, query)| query.split('&').find_map(|kv| kv.strip_prefix("seed=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let kind = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) => route::route_kind_of(&v),
        Err(e) => return Reply::json(400, openai_error(400, &format!("the request body is not JSON: {e}"), None)),
    };
    let routes = shard.sync();
    let explained = shard.with_state(&routes, |state| route::explain(&routes, state, kind, body, Instant::now(), seed));
    match explained {
        Ok(v) => Reply::json(200, v.to_string().into_bytes()),
        Err(e) => Reply::json(e.status, openai_error(e.status, &e.message, None)),
    }
}

pub async fn reload(shard: &Shard) -> Reply {
    let (tx, rx) = futures_channel::oneshot::channel();
    if shard.hub.control.send(ControlMsg::Reload(tx)).is_err() {
        return Reply::json(503, openai_error(503, "the control thread is gone; cannot reload", None));
    }
    match rx.await {
        Ok(Ok(report)) => {
            Reply::json(200, serde_json::json!({"status": "reloaded", "report": report}).to_string().into_bytes())
        }
        Ok(Err(errors)) => Reply::json(
            400,
            openai_error(400, &format!("reload refused; the current config keeps serving: {errors}"), None),
        ),
        Err(_) => Reply::json(503, openai_error(503, "the control thread ended during the reload", None)),
    }
}
