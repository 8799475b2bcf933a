//! The two leases of issue 17 against a real `redis-server`: with
//! `pointwork.cluster.health_checks: one_instance` one instance probes and every instance's
//! health filter reads its results; the OpenRouter telemetry is polled by one instance and every
//! instance routes on what it published. The holder's death or drain hands the job over within
//! the lease's ttl; with Redis gone every instance does the job itself.

mod common;
#[path = "cluster/redis_server.rs"]
#[allow(dead_code)]
mod redis_server;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::http::Client;
use common::openrouter::{await_walk, await_winner, provider, start_gateway, OpenRouter, MODEL, PROVIDERS};
use common::{chat_body, deployment, send_signal, wait_until, Gateway, GatewayOptions, Mock, TempDir};
use pointwork_gateway::cluster::lease::{ttl_for, Lease, Role};
use redis_server::RedisServer;
use serde_json::{json, Value};

/// The health checks' interval in these tests, and the lease's ttl it gives (3 s).
const INTERVAL: Duration = Duration::from_secs(1);

fn holds(gateway: &Gateway, lease: &str) -> bool {
    gateway.get("/metrics").text().contains(&format!("pointwork_cluster_lease_held{{lease=\"{lease}\"}} 1\n"))
}

// ---------------------------------------------------------------------------------------------
// The lease itself

fn redis_connection(redis: &RedisServer) -> redis::Connection {
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/0", redis.port)).unwrap();
    client.get_connection_with_timeout(Duration::from_secs(2)).unwrap()
}

#[test]
fn a_lease_is_held_by_one_renewed_by_its_holder_only_and_free_after_its_ttl_or_a_release() {
    let redis = RedisServer::start();
    let mut con = redis_connection(&redis);
    let ttl = Duration::from_millis(400);
    let a = Lease::new("job", "does the job", "t", "a:1".into(), ttl);
    let b = Lease::new("job", "does the job", "t", "b:2".into(), ttl);
    assert_eq!(a.key(), "t:lease:job");
    let learn = |lease: &Lease, outcome: bool| lease.learnt(Some(outcome), Instant::now());
    assert!(a.attempt(&mut con).unwrap());
    learn(&a, true);
    assert!(!b.attempt(&mut con).unwrap(), "taken");
    learn(&b, false);
    let value: String = redis::cmd("GET").arg(a.key()).query(&mut con).unwrap();
    assert_eq!(value, "a:1");
    // Renewals keep it past its first ttl; b never gets it meanwhile.
    for _ in 0..4 {
        std::thread::sleep(ttl / 3);
        assert!(a.attempt(&mut con).unwrap(), "renewed");
        assert!(!b.attempt(&mut con).unwrap());
    }
    let pttl: i64 = redis::cmd("PTTL").arg(a.key()).query(&mut con).unwrap();
    assert!(pttl > 0 && pttl <= 400, "{pttl}");
    // a stops renewing (dies): within one ttl b takes it, and a learns it lost it.
    std::thread::sleep(ttl + Duration::from_millis(50));
    assert!(b.attempt(&mut con).unwrap());
    learn(&b, true);
    assert!(!a.attempt(&mut con).unwrap(), "a renews nothing of b's");
    assert_eq!(learn(&a, false), Some(Role::Follower));
    // b gives it up: a takes it at once, without waiting for the ttl.
    assert!(b.release(&mut con).unwrap());
    assert!(!b.release(&mut con).unwrap(), "nothing left to release");
    assert!(a.attempt(&mut con).unwrap());
    // A stopped lease is never taken again.
    a.stop();
    assert!(a.release(&mut con).unwrap());
    assert!(!a.attempt(&mut con).unwrap());
    assert_eq!(ttl_for(INTERVAL), Duration::from_secs(3));
}

// ---------------------------------------------------------------------------------------------
// Health checks

struct Deployments {
    good: Mock,
    bad: Mock,
}

impl Deployments {
    fn start() -> Deployments {
        Deployments { good: Mock::start("good", &[]), bad: Mock::start("bad", &["--fault", "status:503"]) }
    }

    fn entries(&self) -> String {
        [
            deployment("gpt", "dep-good", "openai/gpt-4o-mini", &self.good, ""),
            deployment("gpt", "dep-bad", "openai/gpt-4o-mini", &self.bad, ""),
        ]
        .concat()
    }

    /// The probes each instance sent dep-good since the last clear, by instance name (each
    /// instance's probe prompt names it).
    fn probes(&self) -> BTreeMap<String, usize> {
        let mut by = BTreeMap::new();
        for r in self.good.requests() {
            let body: Value = serde_json::from_str(r["body"].as_str().unwrap_or("{}")).unwrap_or_default();
            if let Some(from) = body["messages"][0]["content"].as_str().and_then(|c| c.strip_prefix("probe from ")) {
                *by.entry(from.to_string()).or_default() += 1;
            }
        }
        by
    }
}

/// An instance with health-check routing whose checks run on one instance at a time.
fn health_instance(redis: &RedisServer, name: &str, deployments: &Deployments) -> Gateway {
    let yaml = format!(
        "model_list:\n{}\
         router_settings:\n  redis_host: 127.0.0.1\n  redis_port: {}\n  enable_health_check_routing: true\n  \
         health_check_staleness_threshold: 30\n  disable_cooldowns: true\n  num_retries: 0\n\
         general_settings: {{health_check_interval: {}}}\n\
         pointwork:\n  cluster: {{instance: {name}, sync_interval: 50ms, health_checks: one_instance}}\n  \
         health_checks: {{prompt: probe from {name}}}\n",
        deployments.entries(),
        redis.port,
        INTERVAL.as_secs()
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    gateway.process.wait_for_stderr("cluster: Redis at", Duration::from_secs(10));
    gateway
}

/// Whether the dry run on `gateway` shows dep-bad removed by the health filter.
fn sees_dep_bad_unhealthy(gateway: &Gateway) -> bool {
    let out = gateway.post("/v1/route", &chat_body("gpt", false)).json();
    out["candidates"].as_array().into_iter().flatten().any(|c| c["id"] == "dep-bad" && c["removed_by"] == "unhealthy")
}

/// Starts a, waits until it holds the health checks' lease, then starts the others.
fn health_cluster(redis: &RedisServer, deployments: &Deployments, names: &[&str]) -> Vec<Gateway> {
    let first = health_instance(redis, names[0], deployments);
    wait_until(Duration::from_secs(5), "the first instance holds the lease", || holds(&first, "health_checks"));
    let mut all = vec![first];
    all.extend(names[1..].iter().map(|n| health_instance(redis, n, deployments)));
    all
}

#[test]
fn health_checks_run_on_one_instance_and_every_instance_routes_on_their_results() {
    let redis = RedisServer::start();
    let deployments = Deployments::start();
    let gateways = health_cluster(&redis, &deployments, &["a", "b", "c"]);
    for g in &gateways {
        wait_until(Duration::from_secs(10), "dep-bad unhealthy everywhere", || sees_dep_bad_unhealthy(g));
    }
    // Three more rounds: every probe came from a, one per round.
    deployments.good.clear_requests();
    std::thread::sleep(INTERVAL * 3 + INTERVAL / 2);
    let probes = deployments.probes();
    assert_eq!(probes.keys().collect::<Vec<_>>(), ["a"], "{probes:?}");
    assert!((3..=4).contains(&probes["a"]), "{probes:?}");
    for g in &gateways {
        assert!(sees_dep_bad_unhealthy(g));
    }
    // b and c never probed, and say why.
    let bad_probes: Vec<Value> = deployments.bad.requests();
    assert!(bad_probes.iter().all(|r| r["body"].as_str().unwrap().contains("probe from a")));
    for g in &gateways[1..] {
        assert!(!holds(g, "health_checks"));
        g.process.wait_for_stderr("another instance holds the lease pointwork:lease:health_checks", INTERVAL);
    }
}

#[test]
fn another_instance_takes_the_health_checks_over_within_the_ttl_when_the_holder_dies_or_drains() {
    let redis = RedisServer::start();
    let deployments = Deployments::start();
    let mut gateways = health_cluster(&redis, &deployments, &["a", "b", "c"]);
    wait_until(Duration::from_secs(5), "a probes", || deployments.probes().contains_key("a"));
    // a dies (SIGKILL): its lease expires within the ttl and b or c takes it.
    let ttl = ttl_for(INTERVAL);
    drop(gateways.remove(0));
    deployments.good.clear_requests();
    let took = wait_until(ttl * 2, "b or c probes", || !deployments.probes().is_empty());
    eprintln!("the health checks were taken over {took:?} after the holder died (ttl {ttl:?})");
    assert!(took <= ttl + Duration::from_millis(1500), "{took:?}");
    let heir = deployments.probes().keys().next().unwrap().clone();
    let (heir, other) = match heir.as_str() {
        "b" => (gateways.remove(0), gateways.remove(0)),
        _ => (gateways.remove(1), gateways.remove(0)),
    };
    assert!(holds(&heir, "health_checks") && !holds(&other, "health_checks"));
    // Only the heir probes; both still keep dep-bad out.
    deployments.good.clear_requests();
    std::thread::sleep(INTERVAL * 2 + INTERVAL / 2);
    assert_eq!(deployments.probes().len(), 1, "{:?}", deployments.probes());
    assert!(sees_dep_bad_unhealthy(&heir) && sees_dep_bad_unhealthy(&other));
    // The heir drains (SIGTERM): it gives the lease up, and the last instance takes over at
    // once rather than after the ttl.
    send_signal(&heir.process, libc::SIGTERM);
    heir.process.wait_for_stderr("released the lease pointwork:lease:health_checks", Duration::from_secs(10));
    let took = wait_until(ttl, "the last instance holds the lease", || holds(&other, "health_checks"));
    eprintln!("the health checks were taken over {took:?} after the holder drained");
    assert!(took < ttl, "{took:?}");
}

#[test]
fn with_redis_gone_every_instance_probes_for_itself_and_one_again_once_it_is_back() {
    let mut redis = RedisServer::start();
    let deployments = Deployments::start();
    let gateways = health_cluster(&redis, &deployments, &["a", "b"]);
    wait_until(Duration::from_secs(5), "a probes", || deployments.probes().contains_key("a"));
    redis.kill();
    deployments.good.clear_requests();
    wait_until(Duration::from_secs(10), "a and b both probe", || deployments.probes().len() == 2);
    for g in &gateways {
        g.process.wait_for_stderr("Redis is out of reach, this instance runs the health checks itself", INTERVAL);
        assert!(sees_dep_bad_unhealthy(g));
    }
    redis.restart();
    wait_until(Duration::from_secs(10), "one holds the lease again", || {
        gateways.iter().filter(|g| holds(g, "health_checks")).count() == 1
    });
    // One round for the last of the probes of the other to land, then only the holder probes.
    std::thread::sleep(INTERVAL);
    deployments.good.clear_requests();
    std::thread::sleep(INTERVAL * 2 + INTERVAL / 2);
    assert_eq!(deployments.probes().len(), 1, "{:?}", deployments.probes());
}

// ---------------------------------------------------------------------------------------------
// The telemetry poller

/// `GET /mock/openrouter/stats`'s count of telemetry requests.
fn telemetry_requests(or: &OpenRouter) -> u64 {
    let r = Client::connect(or.mock.addr).request("GET", "/mock/openrouter/stats", &[], b"");
    r.json()["telemetry_requests"].as_u64().expect("telemetry_requests")
}

/// An instance of the walk whose telemetry and chats are at `or` (each instance its own, so
/// that the polls of each can be counted).
fn pareto_instance(redis: &RedisServer, name: &str, or: &OpenRouter, cache: &TempDir) -> Gateway {
    let extra = format!(
        "router_settings:\n  redis_host: 127.0.0.1\n  redis_port: {}\n  disable_cooldowns: true\n\
         pointwork:\n  cluster: {{instance: {name}, sync_interval: 50ms}}\n",
        redis.port
    );
    let gateway = start_gateway(&or.config(&or.wildcard_entry(), "wildcard: true", &extra, cache), Vec::new());
    gateway.process.wait_for_stderr("cluster: Redis at", Duration::from_secs(10));
    gateway
}

/// The walk's telemetry part in the dry run, without what differs by the instant it is asked.
fn walk_telemetry(gateway: &Gateway) -> Value {
    let mut walk = await_walk(gateway, "telemetry", |w| !w["telemetry"].is_null());
    let t = walk["telemetry"].as_object_mut().unwrap();
    t.remove("age_s");
    walk["telemetry"].clone()
}

#[test]
fn one_instance_polls_the_telemetry_and_the_other_routes_on_what_it_published() {
    let redis = RedisServer::start();
    // b's own OpenRouter reports only c/fp8: were b to poll, c/fp8 would win there.
    let (or_a, or_b) = (OpenRouter::start(&PROVIDERS), OpenRouter::start(&[provider("c/fp8", 1.3, 25.0)]));
    let (cache_a, cache_b) = (TempDir::new("cache-a"), TempDir::new("cache-b"));
    let a = pareto_instance(&redis, "a", &or_a, &cache_a);
    await_winner(&a, "b/fp8");
    wait_until(Duration::from_secs(5), "a holds the poller's lease", || holds(&a, "pareto_poller"));
    let b = pareto_instance(&redis, "b", &or_b, &cache_b);
    await_winner(&b, "b/fp8");
    b.process.wait_for_stderr("routing on the telemetry instance a polls", Duration::from_secs(5));
    // Several poll intervals (0.3 s): a polls on, b never.
    let polled_by_a = telemetry_requests(&or_a);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(telemetry_requests(&or_a) > polled_by_a, "a polls");
    assert_eq!(telemetry_requests(&or_b), 0, "b never polled");
    assert!(!holds(&b, "pareto_poller"));
    // The same frontier, winner, candidates and walk on both, from the same poll.
    wait_until(Duration::from_secs(5), "b shows a's last poll", || walk_telemetry(&a) == walk_telemetry(&b));
    let walk = walk_telemetry(&b);
    assert_eq!(walk["frontier"], json!(["a/fp8", "b/fp8"]), "{walk}");
    assert_eq!(walk["stale"], false);
    assert_eq!(walk["candidates"].as_array().map(Vec::len), Some(4), "{walk}");
    // a dies: b takes the lease over and polls its own OpenRouter.
    drop(a);
    let took = wait_until(Duration::from_secs(10), "b polls", || telemetry_requests(&or_b) > 0);
    eprintln!("the poller was taken over {took:?} after its holder died");
    assert!(took <= ttl_for(Duration::from_millis(300)) + Duration::from_millis(1500), "{took:?}");
    await_winner(&b, "c/fp8");
    assert!(holds(&b, "pareto_poller"));
}

#[test]
fn an_allow_list_learnt_on_an_instance_that_does_not_poll_reaches_the_poller_and_comes_back() {
    let redis = RedisServer::start();
    let (or_a, or_b) = (OpenRouter::start(&PROVIDERS), OpenRouter::start(&PROVIDERS));
    let (cache_a, cache_b) = (TempDir::new("cache-a"), TempDir::new("cache-b"));
    let a = pareto_instance(&redis, "a", &or_a, &cache_a);
    await_winner(&a, "b/fp8");
    wait_until(Duration::from_secs(5), "a holds the poller's lease", || holds(&a, "pareto_poller"));
    let b = pareto_instance(&redis, "b", &or_b, &cache_b);
    b.process.wait_for_stderr("routing on the telemetry instance a polls", Duration::from_secs(5));
    // The line is said when the telemetry is read; b's poller adopts it a moment later.
    await_winner(&b, "b/fp8");
    // b's account may not use b: its 404 teaches b the allow-list, which a (the poller) selects
    // under, and publishes back.
    or_b.allow_only(&["a", "c"]);
    let r = b.chat(MODEL);
    assert_eq!(r.status, 404, "{}", r.text());
    for g in [&a, &b] {
        await_walk(g, "the allow-list selected under", |w| {
            w["allow_list"] == json!(["a", "c"]) && w["telemetry"]["winner"] == "c/fp8"
        });
    }
    assert_eq!(telemetry_requests(&or_b), 0, "b never polled");
    let r = b.chat(MODEL);
    assert_eq!((r.status, r.header("x-mock-provider")), (200, Some("c/fp8")), "{}", r.text());
}
