//! Operator endpoints (`GET /metrics`, `POST /admin/reload`, the dry run `POST /v1/route`) and
//! the master-key check: when `general_settings.master_key` is set, the API, the reload and the
//! dry run need `Authorization: Bearer <master_key>` (health and metrics stay open).

use std::time::Instant;

use switchyard_core::Snapshot;

use crate::control::ControlMsg;
use crate::errors::openai_error;
use crate::metrics::{render, Gauges};
use crate::respond::Reply;
use crate::route;
use crate::shard::Shard;

/// `Ok` when no master key is configured or the request carries it (admin endpoints).
pub fn authorize(shard: &Shard, authorization: Option<&[u8]>) -> Result<(), Reply> {
    let message = "admin endpoints need Authorization: Bearer <general_settings.master_key>";
    check(shard, authorization, message)
}

/// The same for the API (`/v1/*`): with `general_settings.master_key` set, every call needs it.
pub fn authorize_api(shard: &Shard, authorization: Option<&[u8]>) -> Result<(), Reply> {
    let message = match authorization {
        None => "Authentication Error, no API key passed in: send Authorization: Bearer <key>",
        Some(_) => "Authentication Error, invalid API key",
    };
    check(shard, authorization, message)
}

fn check(shard: &Shard, authorization: Option<&[u8]>, message: &str) -> Result<(), Reply> {
    let routes = shard.hub.routes.load();
    let Some(key) = routes.master_key.as_deref() else {
        return Ok(());
    };
    let presented = authorization.and_then(|v| v.strip_prefix(b"Bearer ")).unwrap_or_default();
    if constant_time_eq(presented, key.as_bytes()) {
        Ok(())
    } else {
        Err(Reply::json(401, openai_error(401, message, None)))
    }
}

/// Compares without an early exit on the first differing byte (the length still shows).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
    let text = match shard.hub.totals.lock() {
        Ok(totals) => render(&totals, gauges),
        Err(_) => String::new(),
    };
    let mut reply = Reply::json(200, text.into_bytes());
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply
}

fn cooling_down(snap: &Snapshot, state: &switchyard_core::State, now: std::time::Instant) -> usize {
    (0..snap.deployments.len())
        .filter(|&i| state.is_cooling_down(switchyard_core::DeploymentIdx(i as u32), now))
        .count()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"sk-1", b"sk-1"));
        assert!(!constant_time_eq(b"sk-1", b"sk-2"));
        assert!(!constant_time_eq(b"sk-1", b"sk-12"));
    }
}
