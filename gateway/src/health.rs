//! Background health checks: a thread of its own with a small monoio runtime that, every
//! `health_check_interval`, sends each deployment (of `background_health_check_model_groups`,
//! or all) a tiny real request — a one-token chat completion, or an embedding for
//! `model_info.mode: embedding` — and tells every shard the result through the event mesh.
//! The pick's health filter reads the result with its age (`health_check_staleness_threshold`).
//!
//! Probes of one round run concurrently; a probe is healthy when the deployment answers with a
//! 2xx head within `pointwork.health_checks.timeout`.
//!
//! With Redis and `pointwork.cluster.health_checks: one_instance`, a round is run only by the
//! instance holding the lease `{key_prefix}:lease:health_checks` ([`crate::cluster::lease`]); the
//! results reach the others as events, like every shard's. The others check twice a second
//! whether the lease became theirs (its holder died) and then run a round at once; with Redis
//! out of reach every instance probes for itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use monoio_rustls::TlsConnector;
use pointwork_config::{GatewaySettings, HealthCheckSharing, HealthChecks};
use pointwork_core::{DeploymentIdx, Dialect, Event, RouteKind};

use crate::cluster::lease::{ttl_for, Lease, Role};
use crate::cluster::status::Status;
use crate::events::Mesh;
use crate::http::response::parse_response_head;
use crate::http::write;
use crate::hub::Hub;
use crate::request::ANTHROPIC_VERSION;
use crate::routes::Routes;
use crate::upstream::conn::{connect, UpstreamConn};

/// Largest probe response head read.
const MAX_HEAD: usize = 64 * 1024;
/// How often an instance that leaves the rounds to the lease's holder looks whether the lease
/// became its own.
const FOLLOWER_LOOKS_EVERY: Duration = Duration::from_millis(250);
/// How long a starting instance waits for its first word about the lease before probing anyway.
const FIRST_WORD_WAIT: Duration = Duration::from_secs(3);

/// Starts the checker when the config asks for it (background checks, or health-check routing).
pub fn start(hub: &Arc<Hub>, mesh: Mesh, settings: &GatewaySettings, cluster: Option<&Status>) {
    let routing = hub.routes.load().snapshot.settings.enable_health_check_routing;
    if !(settings.health_checks.background || routing) {
        return;
    }
    let tls = match crate::upstream::conn::tls_connector() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("pointwork: health checks disabled: {e}");
            return;
        }
    };
    let checker = Checker {
        hub: hub.clone(),
        mesh,
        prober: Prober { tls, settings: settings.health_checks.clone(), connect: settings.timeouts.connect },
        lease: cluster.and_then(|status| lease(status, settings)),
        started: Instant::now(),
    };
    let spawned = std::thread::Builder::new().name("health".into()).spawn(move || {
        match monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build() {
            Ok(mut rt) => rt.block_on(checker.run()),
            Err(e) => eprintln!("pointwork: health checks disabled: cannot start their runtime: {e}"),
        }
    });
    if let Err(e) = spawned {
        eprintln!("pointwork: health checks disabled: cannot spawn their thread: {e}");
    }
}

/// The lease of `one_instance` health checks, kept from now on; `None`: every instance probes.
fn lease(status: &Status, settings: &GatewaySettings) -> Option<Arc<Lease>> {
    let cluster = settings.cluster.as_ref().filter(|c| c.health_checks == HealthCheckSharing::OneInstance)?;
    let ttl = ttl_for(settings.health_checks.interval);
    let lease = Lease::new("health_checks", "runs the health checks", &cluster.key_prefix, status.lease_holder(), ttl);
    status.keep_lease("lease-health", lease)
}

struct Checker {
    hub: Arc<Hub>,
    mesh: Mesh,
    prober: Prober,
    lease: Option<Arc<Lease>>,
    started: Instant,
}

/// What a probe needs: the TLS client, the probe's settings, the connect timeout. The
/// background rounds use one; `GET /health` another when no rounds run.
pub(crate) struct Prober {
    pub(crate) tls: TlsConnector,
    pub(crate) settings: HealthChecks,
    pub(crate) connect: Duration,
}

/// Why a probe failed, as `GET /health` says it.
pub(crate) type ProbeFailure = String;

impl Checker {
    async fn run(self) {
        let checker = Arc::new(self);
        loop {
            let round = Instant::now();
            if !checker.my_round(round) {
                monoio::time::sleep(FOLLOWER_LOOKS_EVERY.min(checker.prober.settings.interval)).await;
                continue;
            }
            let routes = checker.hub.routes.load_full();
            let targets = checker.targets(&routes);
            let mut probes = Vec::with_capacity(targets.len());
            for idx in targets {
                let checker = checker.clone();
                let routes = routes.clone();
                probes.push(monoio::spawn(async move {
                    let healthy = checker.prober.probe(&routes, idx).await.is_ok();
                    let event = Event::Health { idx, healthy, checked_at: Instant::now() };
                    checker.mesh.broadcast(None, &routes, &event);
                    (idx, healthy)
                }));
            }
            let mut unhealthy = Vec::new();
            for probe in probes {
                let (idx, healthy) = probe.await;
                if !healthy {
                    unhealthy.push(routes.snapshot.deployment(idx).id.clone());
                }
            }
            if !unhealthy.is_empty() {
                eprintln!("pointwork: health checks: unhealthy: {}", unhealthy.join(", "));
            }
            let next = round + checker.prober.settings.interval;
            monoio::time::sleep(next.saturating_duration_since(Instant::now())).await;
        }
    }

    /// Whether this instance runs the round starting at `now`: always without a lease; with one,
    /// when it holds it or Redis is out of reach — and, before the first word about the lease,
    /// only once [`FIRST_WORD_WAIT`] has passed.
    fn my_round(&self, now: Instant) -> bool {
        let Some(lease) = &self.lease else { return true };
        match lease.role(now) {
            Role::Unknown => now.saturating_duration_since(self.started) >= FIRST_WORD_WAIT,
            role => role.does_the_job(),
        }
    }

    /// The deployments to probe this round.
    fn targets(&self, routes: &Routes) -> Vec<DeploymentIdx> {
        let snap = &routes.snapshot;
        let wanted =
            |group: &str| self.prober.settings.model_groups.as_ref().is_none_or(|g| g.iter().any(|n| n == group));
        (0..snap.deployments.len())
            .map(|i| DeploymentIdx(i as u32))
            .filter(|&idx| wanted(&snap.deployment(idx).model_name))
            .collect()
    }
}

impl Prober {
    /// One probe: `Ok` when the deployment answered with a 2xx head in time, else why not.
    pub(crate) async fn probe(&self, routes: &Routes, idx: DeploymentIdx) -> Result<(), ProbeFailure> {
        let upstream = &routes.upstreams[idx.get()];
        let request = probe_request(routes, idx, &self.settings);
        let attempt = async {
            let mut conn = connect(&upstream.target, &self.tls, self.connect)
                .await
                .map_err(|e| format!("cannot connect: {e:?}"))?;
            let (res, _) = conn.write_all(request).await;
            res.map_err(|e| format!("cannot send the probe: {e}"))?;
            read_status(&mut conn).await.ok_or_else(|| "no answer".to_string())
        };
        match monoio::time::timeout(self.settings.timeout, attempt).await {
            Ok(Ok(200..=299)) => Ok(()),
            Ok(Ok(status)) => Err(format!("the probe was answered with status {status}")),
            Ok(Err(why)) => Err(why),
            Err(_) => Err(format!("no answer within {:?}", self.settings.timeout)),
        }
    }
}

fn probe_request(routes: &Routes, idx: DeploymentIdx, settings: &HealthChecks) -> Vec<u8> {
    let upstream = &routes.upstreams[idx.get()];
    let model = &routes.snapshot.deployment(idx).upstream_model;
    let body = match upstream.probe_route {
        RouteKind::Embeddings => serde_json::json!({"model": model, "input": settings.prompt}),
        // A one-turn chat is a valid Messages request too (an Anthropic deployment's probe).
        // The models that refuse `max_tokens` take `max_completion_tokens` (as a request's).
        RouteKind::ChatCompletions | RouteKind::Messages | RouteKind::Responses => serde_json::json!({
            "model": model,
            "messages": [{"role": "user", "content": settings.prompt}],
            max_tokens_name(routes.snapshot.deployment(idx)): settings.max_tokens,
        }),
    }
    .to_string();
    // Gemini and Bedrock deployments are probed in their own dialect.
    let d = routes.snapshot.deployment(idx);
    let body = match (upstream.probe_route, d.dialect()) {
        (RouteKind::Embeddings, Dialect::Gemini) => {
            crate::dialect::gemini::embeddings_request_to_gemini(body.as_bytes(), model)
        }
        (RouteKind::Embeddings, Dialect::BedrockConverse) => {
            crate::dialect::bedrock::embeddings_request_to_bedrock(body.as_bytes(), model)
        }
        (_, Dialect::Gemini) => crate::dialect::gemini::chat_request_to_gemini(body.as_bytes()),
        (_, Dialect::BedrockConverse) => crate::dialect::bedrock::chat_request_to_converse_for(body.as_bytes(), model),
        _ => Ok(body.into_bytes()),
    }
    .unwrap_or_default();
    let mut out = upstream.head_for(upstream.probe_route).to_vec();
    if routes.snapshot.deployment(idx).dialect() == Dialect::AnthropicMessages {
        write::header(&mut out, "anthropic-version", ANTHROPIC_VERSION.as_bytes());
    }
    write::header(&mut out, "connection", b"close");
    write::header_decimal(&mut out, "content-length", body.len() as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&body);
    match &upstream.auth {
        // A probe without a credential fails like a refused connection.
        Some(auth) => auth.authorize(out, &d.id).unwrap_or_default(),
        None => out,
    }
}

fn max_tokens_name(d: &pointwork_core::Deployment) -> &'static str {
    match d.max_tokens_as_max_completion_tokens {
        true => "max_completion_tokens",
        false => "max_tokens",
    }
}

async fn read_status(conn: &mut UpstreamConn) -> Option<u16> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        match parse_response_head(&buf, MAX_HEAD) {
            Ok(Some(head)) if (100..200).contains(&head.status) => {
                let n = head.head_len;
                buf.drain(..n);
            }
            Ok(Some(head)) => return Some(head.status),
            Ok(None) => {
                let (res, back) = conn.read_more(buf).await;
                buf = back;
                if res.ok()? == 0 {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
}
