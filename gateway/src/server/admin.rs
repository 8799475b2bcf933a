//! Operator endpoints (`GET /metrics`, `POST /admin/reload`, `POST
//! /admin/endpoints/{id}/status`, the dry run `POST /v1/route`) and who may call them: the
//! master key or an admin key when one is configured (`keys.rs`); health stays open, metrics
//! too unless `pointwork.auth.metrics: key`.

use std::fmt::Write as _;
use std::time::Instant;

use pointwork_core::{DeploymentIdx, Event, Snapshot, State};

use crate::clock::unix_now;
use crate::errors::openai_error;
use crate::hub::ControlMsg;
use crate::keys::{Caller, Denied};
use crate::metrics::{render, Gauges};
use crate::request::Request;
use crate::respond::Reply;
use crate::route;
use crate::shard::Shard;

/// The operator behind an admin call (master or admin key), or the 401 to answer.
pub fn authorize(shard: &Shard, authorization: Option<&[u8]>) -> Result<Caller, Reply> {
    shard.hub.routes.load().keys.admin_caller(authorization)
}

/// The caller of an API endpoint (`/v1/*`), or the 401 to answer. A key the config does not
/// know is looked for among the database's keys: this shard's, else (boxed: the one wait)
/// the database thread's.
pub async fn authorize_api(shard: &Shard, req: &Request<'_>) -> Result<Caller, Reply> {
    authorize_key(shard, req.authorization, req.anthropic.api_key).await
}

/// The caller presenting `authorization` (`Bearer <key>`) or `api_key` (the key alone), as
/// [`authorize_api`] finds it.
pub async fn authorize_key(
    shard: &Shard,
    authorization: Option<&[u8]>,
    api_key: Option<&[u8]>,
) -> Result<Caller, Reply> {
    let digest = match shard.hub.routes.load().keys.api_caller(authorization, api_key) {
        Ok(caller) => return Ok(caller),
        Err(Denied::Reply(reply)) => return Err(reply),
        Err(Denied::Unknown(digest)) => digest,
    };
    match shard.db_keys.get(&digest) {
        Some(key) => Ok(Caller::Virtual(key)),
        None => Box::pin(crate::database::cache::find(shard, digest)).await,
    }
}

/// `GET /v1/models`: what the caller's key may use — in Anthropic's shape, with context
/// windows, for an Anthropic client (one that sends `anthropic-version` or `x-api-key`).
pub fn models(shard: &Shard, caller: &Caller, anthropic: bool) -> Reply {
    let routes = shard.hub.routes.load();
    let body = caller.virtual_key().and_then(|k| match (&k.db, &k.models) {
        // A database key lives across route changes (models stored in the database come and
        // go): its list is made from the routes of now.
        (Some(_), Some(_)) => Some(crate::models_list::models_list(
            routes.snapshot.public_model_names().filter(|name| k.may_use(name, &routes.snapshot)),
        )),
        _ => k.models_body.clone(),
    });
    let body = body.unwrap_or_else(|| routes.models_body.clone());
    match anthropic {
        true => Reply::json(200, crate::models_list::anthropic_models_list(&body, &routes.snapshot)),
        false => Reply::json(200, body),
    }
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
    let mut statuses = String::new();
    endpoint_statuses(&mut statuses, &routing.routes.snapshot, &routing.state);
    crate::routers::pareto::gauges::render(&mut statuses, &shard.hub, &routing.routes, &routing.state);
    crate::metrics::litellm::render(&mut statuses, &shard.hub.totals, &routing.routes, &routing.state);
    drop(routing);
    let mut text = match shard.hub.totals.lock() {
        Ok(totals) => render(&totals, gauges),
        Err(_) => String::new(),
    };
    text.push_str(&statuses);
    shard.hub.routes.load().keys.render_metrics(&mut text, unix_now());
    if let Some(cluster) = shard.hub.cluster.get() {
        cluster.render(&mut text);
    }
    if shard.hub.routes.load().cache.is_some() {
        shard.hub.cache.render(&mut text);
    }
    if shard.hub.mcp.get().is_some() {
        shard.hub.mcp_clients.render(shard.hub.mcp.get().map(|u| &**u), &mut text);
    }
    if let Some(tls) = shard.hub.tls.get() {
        tls.render(&mut text);
    }
    if let Some(export) = shard.hub.export.get() {
        export.render(&mut text);
    }
    if let Some(db) = shard.hub.database.get() {
        db.status.render(&mut text);
        if db.settings.store_model_in_db {
            let routes = shard.hub.routes.load();
            let stored = routes.model_info.iter().filter(|e| e.json["model_info"]["db_model"] == true).count();
            text.push_str(&format!(
                "# HELP pointwork_db_stored_models Deployments stored in the database that serve.\n\
                 # TYPE pointwork_db_stored_models gauge\npointwork_db_stored_models {stored}\n"
            ));
        }
    }
    let mut reply = Reply::json(200, text.into_bytes());
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply
}

/// `pointwork_endpoint_status{deployment, status} 1` for each policy endpoint: the status in
/// force on this shard (the operator's, else the config's).
fn endpoint_statuses(out: &mut String, snap: &Snapshot, state: &State) {
    let mut header = false;
    for (i, d) in snap.deployments.iter().enumerate() {
        let Some(status) = state.effective_endpoint_status(snap, DeploymentIdx(i as u32)) else { continue };
        if !header {
            out.push_str(
                "# HELP pointwork_endpoint_status The status in force for each policy endpoint \
                 (the operator's, else the config's).\n# TYPE pointwork_endpoint_status gauge\n",
            );
            header = true;
        }
        let id = d.id.replace('\\', r"\\").replace('"', "\\\"").replace('\n', r"\n");
        let _ = writeln!(out, "pointwork_endpoint_status{{deployment=\"{id}\",status=\"{status}\"}} 1");
    }
}

fn cooling_down(snap: &Snapshot, state: &pointwork_core::State, now: std::time::Instant) -> usize {
    (0..snap.deployments.len()).filter(|&i| state.is_cooling_down(pointwork_core::DeploymentIdx(i as u32), now)).count()
}

/// `POST /v1/route[?seed=N][&policy=NAME][&api=messages|responses]`: the decision for the body on
/// the live routes and this shard's state (after applying the other shards' events), without
/// calling a provider; under policy NAME, else the default policy when there is one;
/// `api=messages` / `api=responses`: the body is a `/v1/messages` / `/v1/responses` request.
pub fn dry_run(shard: &Shard, path: &str, body: &[u8]) -> Reply {
    let query = |name: &str| {
        let query = path.split_once('?').map(|(_, q)| q)?;
        query.split('&').find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let seed = query("seed").and_then(|v| v.parse().ok()).unwrap_or(0);
    let policy = match query("policy").map(|v| percent_decode(v).ok_or(v)) {
        None => None,
        Some(Ok(name)) => Some(name),
        Some(Err(raw)) => {
            let message = format!("the policy parameter {raw:?} is not valid percent-encoded UTF-8");
            return Reply::json(400, openai_error(400, &message, None));
        }
    };
    let kind = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(_) if query("api") == Some("messages") => pointwork_core::RouteKind::Messages,
        Ok(_) if query("api") == Some("responses") => pointwork_core::RouteKind::Responses,
        Ok(v) => route::route_kind_of(&v),
        Err(e) => return Reply::json(400, openai_error(400, &format!("the request body is not JSON: {e}"), None)),
    };
    let routes = shard.sync();
    let explained = shard.with_state(&routes, |state| {
        route::explain(
            &routes,
            state,
            kind,
            body,
            Instant::now(),
            seed,
            policy.as_deref(),
            &crate::routers::pareto::published(&shard.hub),
        )
    });
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

/// `POST /admin/endpoints/{id}/status` with `{"status": "<word>"}`: the policy endpoint's new
/// status, recorded in this shard's state and broadcast to the others. `id` is the path segment
/// as sent (percent-encoded).
pub fn set_endpoint_status(shard: &Shard, id: &str, body: &[u8]) -> Reply {
    let error = |status: u16, message: &str| Reply::json(status, openai_error(status, message, None));
    let Some(id) = percent_decode(id) else {
        return error(400, "the deployment id in the path is not valid percent-encoded UTF-8");
    };
    let routes = shard.sync();
    let snap = &routes.snapshot;
    let Some(idx) = snap.deployment_by_id(&id) else {
        return error(404, &format!("no deployment with id {id:?}"));
    };
    if snap.deployment(idx).policy.is_none() {
        let message = format!(
            "deployment {id:?} has no policy attributes (model_info: status, sovereignty_class, region, …): it has no status to set"
        );
        return error(400, &message);
    }
    let status = match status_of(body) {
        Ok(s) => s,
        Err(message) => return error(400, &message),
    };
    let old = shard.record(&routes, idx, |state, snap, i| {
        let old = state.effective_endpoint_status(snap, i).unwrap_or("up").to_string();
        state.set_endpoint_status(i, status.clone());
        (old, Some(Event::EndpointStatus { idx: i, status: status.clone() }))
    });
    let Some(old) = old else {
        return error(404, &format!("deployment {id:?} is gone after a reload"));
    };
    eprintln!("pointwork: endpoint {id} status {old} -> {status} (admin)");
    Reply::json(200, serde_json::json!({"id": id, "status": &*status}).to_string().into_bytes())
}

/// Longest status word accepted.
const MAX_STATUS_LEN: usize = 64;

/// The status of a body `{"status": "<word>"}` (lowercase letters, digits, `_`, `-`), or why not.
fn status_of(body: &[u8]) -> Result<Box<str>, String> {
    const SHAPE: &str = "the body must be {\"status\": \"<word>\"}: a lowercase word of letters, digits, _ and - (up, degraded, down, maintenance, …)";
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| format!("{SHAPE}; it is not JSON: {e}"))?;
    let status = match value.as_object() {
        Some(o) if o.len() == 1 => o.get("status").and_then(|s| s.as_str()),
        _ => None,
    };
    let is_word = |s: &str| {
        !s.is_empty()
            && s.len() <= MAX_STATUS_LEN
            && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    };
    match status {
        Some(s) if is_word(s) => Ok(s.into()),
        _ => Err(SHAPE.to_string()),
    }
}

/// `%XX` escapes decoded; `None` for a bad escape or bytes that are not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_body_is_one_lowercase_word() {
        assert_eq!(status_of(br#"{"status": "maintenance"}"#).as_deref(), Ok("maintenance"));
        assert_eq!(status_of(br#"{"status":"read-only_2"}"#).as_deref(), Ok("read-only_2"));
        for bad in [
            &b""[..],
            b"maintenance",
            br#""up""#,
            br#"{}"#,
            br#"{"status": ""}"#,
            br#"{"status": "Up"}"#,
            br#"{"status": "up now"}"#,
            br#"{"status": 1}"#,
            br#"{"status": "up", "extra": 1}"#,
            br#"{"state": "up"}"#,
        ] {
            assert!(status_of(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert!(status_of(format!(r#"{{"status": "{}"}}"#, "a".repeat(MAX_STATUS_LEN + 1)).as_bytes()).is_err());
    }

    #[test]
    fn ids_in_the_path_are_percent_decoded() {
        assert_eq!(percent_decode("eu-1").as_deref(), Some("eu-1"));
        assert_eq!(percent_decode("a%2Fb%20c").as_deref(), Some("a/b c"));
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("a%zz"), None);
        assert_eq!(percent_decode("a%+f"), None);
        assert_eq!(percent_decode("%ff"), None);
    }
}
