//! Operator endpoints: `GET /metrics` and `POST /admin/reload`. When
//! `general_settings.master_key` is set, the reload needs `Authorization: Bearer <master_key>`.

use switchyard_core::Snapshot;

use crate::control::ControlMsg;
use crate::errors::openai_error;
use crate::metrics::{render, Gauges};
use crate::respond::Reply;
use crate::shard::Shard;

/// `Ok` when no master key is configured or the request carries it.
pub fn authorize(shard: &Shard, authorization: Option<&[u8]>) -> Result<(), Reply> {
    let routes = shard.hub.routes.load();
    let Some(key) = routes.master_key.as_deref() else {
        return Ok(());
    };
    let presented = authorization.and_then(|v| v.strip_prefix(b"Bearer ")).unwrap_or_default();
    if constant_time_eq(presented, key.as_bytes()) {
        Ok(())
    } else {
        let message = "admin endpoints need Authorization: Bearer <general_settings.master_key>";
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
