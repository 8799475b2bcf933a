//! One polling round on the poller's runtime: the model list when the permaslugs are older than
//! a day, then every due model at once, each model's endpoints and stats side by side. Each
//! fetch has the configured timeout, so one slow model holds up no other for longer than that.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::parse;
use super::state::Rows;
use crate::upstream::fetch::{get, Client};
use crate::upstream::target::Target;

/// How long the model list's permaslugs are believed.
pub const CANONICAL_TTL: Duration = Duration::from_secs(86_400);

/// The permaslug of each model id (`canonical_slug` of `GET /api/v1/models`).
#[derive(Default)]
pub struct Canonicals {
    slugs: HashMap<String, String>,
    fetched: Option<Instant>,
    /// The last fetch failed (logged once until one succeeds).
    failing: bool,
}

impl Canonicals {
    fn is_fresh(&self, now: Instant) -> bool {
        self.fetched.is_some_and(|at| now.saturating_duration_since(at) < CANONICAL_TTL)
    }

    /// The stats API's permaslug for `key`; the model id itself when the list has none.
    pub fn permaslug<'k>(&'k self, key: &'k str) -> &'k str {
        self.slugs.get(key).map_or(key, String::as_str)
    }
}

/// Polls `keys`: each key with its rows or why it failed. Lines to log go to `log`.
pub async fn poll(
    client: Rc<Client>,
    base_url: &str,
    keys: Vec<String>,
    canonicals: &mut Canonicals,
    log: &mut Vec<String>,
) -> Vec<(String, Result<Rows, String>)> {
    let target = match Target::parse(base_url) {
        Ok(t) if !t.addrs.is_empty() => Rc::new(t),
        Ok(t) => return fail_all(keys, &format!("cannot resolve {}", t.host)),
        Err(e) => return fail_all(keys, &format!("base_url {e}")),
    };
    if !canonicals.is_fresh(Instant::now()) {
        refresh(&client, &target, canonicals, log).await;
    }
    let mut tasks = Vec::with_capacity(keys.len());
    for key in keys {
        let (client, target) = (client.clone(), target.clone());
        let permaslug = canonicals.permaslug(&key).to_string();
        tasks.push(monoio::spawn(async move {
            let rows = model(&client, &target, &key, &permaslug).await;
            (key, rows)
        }));
    }
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await);
    }
    out
}

fn fail_all(keys: Vec<String>, why: &str) -> Vec<(String, Result<Rows, String>)> {
    keys.into_iter().map(|k| (k, Err(why.to_string()))).collect()
}

/// Re-reads the model list; on failure the permaslugs known so far (or the ids) serve on.
async fn refresh(client: &Client, target: &Target, canonicals: &mut Canonicals, log: &mut Vec<String>) {
    let fetched = get(client, target, "/api/v1/models").await.map_err(|e| e.to_string());
    match fetched.and_then(|body| parse::models(&body)) {
        Ok(parsed) => {
            canonicals.slugs = parsed.rows;
            canonicals.fetched = Some(Instant::now());
            canonicals.failing = false;
        }
        Err(why) if !canonicals.failing => {
            canonicals.failing = true;
            log.push(format!(
                "pointwork: openrouter-pareto: the model list (permaslugs) could not be read: GET /api/v1/models: \
                 {why}; polling with the permaslugs known so far, or the model ids"
            ));
        }
        Err(_) => {}
    }
}

/// One model's endpoints (uptime) and stats, fetched side by side.
async fn model(client: &Client, target: &Target, key: &str, permaslug: &str) -> Result<Rows, String> {
    let endpoints_path = format!("/api/v1/models/{}/endpoints", encode(key, true));
    let stats_path = format!("/api/frontend/v1/stats/endpoint?permaslug={}&variant=standard", encode(permaslug, false));
    let (endpoints, stats) = monoio::join!(get(client, target, &endpoints_path), get(client, target, &stats_path));
    let endpoints = endpoints.map_err(|e| format!("GET {endpoints_path}: {e}"))?;
    let stats = stats.map_err(|e| format!("GET {stats_path}: {e}"))?;
    let uptime = parse::endpoints(&endpoints)?;
    let stats = parse::stats(&stats)?;
    Ok(Rows { stats: stats.rows, uptime: uptime.rows, skipped: uptime.skipped + stats.skipped })
}

/// Percent-encodes all but the unreserved characters (and `/` in a path).
fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (keep_slash && b == b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries_are_encoded() {
        assert_eq!(encode("z-ai/glm-5.2", true), "z-ai/glm-5.2");
        assert_eq!(encode("z-ai/glm-5.2-20260101", false), "z-ai%2Fglm-5.2-20260101");
        assert_eq!(encode("a b&c?", true), "a%20b%26c%3F");
    }

    #[test]
    fn a_model_without_a_permaslug_is_polled_by_its_id() {
        let mut c = Canonicals::default();
        assert!(!c.is_fresh(Instant::now()));
        c.slugs.insert("z-ai/glm-5.2".into(), "z-ai/glm-5.2-2026".into());
        c.fetched = Some(Instant::now());
        assert!(c.is_fresh(Instant::now()));
        assert_eq!(c.permaslug("z-ai/glm-5.2"), "z-ai/glm-5.2-2026");
        assert_eq!(c.permaslug("other/m"), "other/m");
    }
}
