//! The OpenRouter best-value walk through the real gateway against pointwork-mock's OpenRouter:
//! wildcard injection of the winner, the walk re-run around 429-hot providers (shared by both
//! shards), all hot, input caps, the account's allow-list learned from a 404 and kept across a
//! restart, pinned narrowing, the strict gate, cold start, region exclusion, flap damping over
//! polls, and telemetry going stale and then absent.

mod common;

use common::openrouter::{
    await_metric, await_walk, await_winner, provider, start_gateway, walk_of, OpenRouter, Provider, MODEL, PROVIDERS,
};
use common::{chat_body, TempDir};
use serde_json::{json, Value};

fn served(or: &OpenRouter) -> Vec<(Value, Value)> {
    or.requests().into_iter().map(|r| (r["served_by"].clone(), r["provider_block"].clone())).collect()
}

#[test]
fn wildcard_mode_injects_the_winner_with_the_zero_retention_no_fallback_posture() {
    let or = OpenRouter::start(&PROVIDERS);
    let (cache, logs) = (TempDir::new("cache"), TempDir::new("logs"));
    let log = logs.path.join("routing.log");
    let yaml = or.config(&or.wildcard_entry(), "wildcard: true, log_decisions: true", "", &cache);
    let gateway = start_gateway(&yaml, vec![("OPENROUTER_PARETO_ROUTING_LOG", log.to_str().unwrap())]);
    await_winner(&gateway, "b/fp8");
    let r = gateway.chat(MODEL);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(walk_of(&r), "openrouter-pareto winner b/fp8");
    assert_eq!(r.header("x-mock-provider"), Some("b/fp8"));
    let expected = json!({"only": ["b/fp8"], "zdr": true, "allow_fallbacks": false});
    assert_eq!(served(&or), [(json!("b/fp8"), expected)]);
    // A caller's own provider block wins (strict_provider is off).
    let own = json!({"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "provider": {"only": ["d/fp8"]}});
    assert_eq!(gateway.post("/v1/chat/completions", &own.to_string()).header("x-mock-provider"), Some("d/fp8"));
    let text = std::fs::read_to_string(&log).expect("routing log");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(&format!("model={MODEL} mode=wildcard slug=b/fp8 decision=winner region=-")),
        "{text}"
    );
    await_metric(&gateway, &format!("pointwork_pareto_decisions_total{{model=\"{MODEL}\",reason=\"winner\"}} 2"));
    await_metric(&gateway, &format!("pointwork_pareto_winner{{model=\"{MODEL}\",slug=\"b/fp8\"}} 1"));
}

#[test]
fn a_provider_429_hot_on_any_shard_is_walked_around_by_every_shard_and_all_hot_fails() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let yaml = or.config(&or.wildcard_entry(), "wildcard: true", "", &cache);
    let gateway = start_gateway(&yaml, Vec::new());
    await_winner(&gateway, "b/fp8");
    or.providers(json!({"b/fp8": {"status": 429}}));
    // Three 429s (the default threshold), each on a new connection: shards share them.
    for _ in 0..3 {
        assert_eq!(gateway.chat(MODEL).status, 429);
    }
    // Without b, the walk re-run from a reaches c, which b dominated.
    for _ in 0..4 {
        let r = gateway.chat(MODEL);
        assert_eq!((r.status, walk_of(&r)), (200, "openrouter-pareto safe_set c/fp8".to_string()), "{}", r.text());
    }
    // Everyone hot: the request fails with the walk's own error, no provider is called.
    or.providers(json!({"a/fp8": {"status": 429}, "c/fp8": {"status": 429}, "d/fp8": {"status": 429}}));
    for expected in ["c/fp8", "a/fp8", "d/fp8"] {
        for _ in 0..3 {
            or.clear_requests();
            let r = gateway.chat(MODEL);
            assert_eq!(r.status, 429, "{}", r.text());
            assert_eq!(served(&or)[0].0, expected);
        }
    }
    or.clear_requests();
    let r = gateway.chat(MODEL);
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.json()["error"]["type"], "all_providers_on_cooldown");
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("every provider is on a 429 cooldown")
            && message.contains("hot: [a/fp8, b/fp8, c/fp8, d/fp8]"),
        "{message}"
    );
    assert!(or.requests().is_empty(), "nothing reaches OpenRouter");
    await_metric(&gateway, &format!("pointwork_pareto_hot_providers{{model=\"{MODEL}\"}} 4"));
}

#[test]
fn an_input_cap_is_a_preference_skip_for_its_ttl() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let yaml = or.config(&or.wildcard_entry(), "wildcard: true", "", &cache);
    let gateway = start_gateway(&yaml, Vec::new());
    await_winner(&gateway, "b/fp8");
    or.providers(json!({"b/fp8": {"input_cap_tokens": 200}}));
    let big = json!({"model": MODEL, "messages": [{"role": "user", "content": "x".repeat(4000)}]}).to_string();
    let r = gateway.post("/v1/chat/completions", &big);
    assert_eq!((r.status, r.header("x-mock-provider")), (400, None), "{}", r.text());
    // One observation is enough: the next request goes to c, the walk's next.
    let r = gateway.chat(MODEL);
    assert_eq!(walk_of(&r), "openrouter-pareto safe_set c/fp8");
    // Every usable provider capped: the winner is tried all the same (a small request fits).
    or.providers(json!({"a/fp8": {"input_cap_tokens": 200}, "c/fp8": {"input_cap_tokens": 200}, "d/fp8": {"input_cap_tokens": 200}}));
    for _ in 0..3 {
        gateway.post("/v1/chat/completions", &big);
    }
    let r = gateway.chat(MODEL);
    assert_eq!((r.status, walk_of(&r)), (200, "openrouter-pareto input_cap b/fp8".to_string()), "{}", r.text());
}

#[test]
fn the_account_allow_list_from_a_404_steers_every_request_and_survives_a_restart() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    // The one deployment would cool down after the 404, as in LiteLLM: not what is tested here.
    let yaml =
        or.config(&or.wildcard_entry(), "wildcard: true", "router_settings:\n  disable_cooldowns: true\n", &cache);
    or.allow_only(&["a", "c"]);
    let first = start_gateway(&yaml, Vec::new());
    await_winner(&first, "b/fp8");
    let r = first.chat(MODEL);
    assert_eq!(r.status, 404, "{}", r.text());
    // The poller re-selects without b (not allowed): the walk over a, c, d picks c.
    await_walk(&first, "the allow-list", |w| {
        w["allow_list"] == json!(["a", "c"]) && w["telemetry"]["winner"] == "c/fp8"
    });
    let r = first.chat(MODEL);
    assert_eq!((r.status, r.header("x-mock-provider")), (200, Some("c/fp8")), "{}", r.text());
    drop(first);
    // A restart reads the list back from the cache before any 404.
    let second = start_gateway(&yaml, Vec::new());
    let walk = await_walk(&second, "the cached allow-list", |w| !w["allow_list"].is_null());
    assert_eq!(walk["allow_list"], json!(["a", "c"]));
    or.clear_requests();
    let r = second.chat(MODEL);
    assert_eq!((r.status, r.header("x-mock-provider")), (200, Some("c/fp8")), "{}", r.text());
    assert_eq!(or.requests().len(), 1, "no probing 404 first");
}

#[test]
fn pinned_mode_narrows_to_the_winners_deployment_rewriting_a_multi_provider_pin() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let entries = [
        or.pinned_entry("or-a/fp8", None),
        or.pinned_entry("or-b", Some(&["b/fp8"])),
        or.pinned_entry("or-cb", Some(&["c/fp8", "b/fp8"])),
    ]
    .concat();
    let gateway = start_gateway(&or.config(&entries, "wildcard: false", "", &cache), Vec::new());
    await_winner(&gateway, "b/fp8");
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..common::SHUFFLE_TRIES {
        let r = gateway.chat(MODEL);
        assert_eq!((r.status, r.header("x-mock-provider")), (200, Some("b/fp8")), "{}", r.text());
        seen.insert(r.deployment().to_string());
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen, ["or-b".to_string(), "or-cb".to_string()].into());
    let blocks: Vec<Value> = or.requests().into_iter().map(|r| r["provider_block"].clone()).collect();
    // The pin on exactly b goes as written; the pin on c and b is narrowed to b, with the posture.
    assert!(blocks.contains(&json!({"only": ["b/fp8"], "quantizations": ["fp8"]})), "{blocks:?}");
    assert!(
        blocks.contains(&json!({"only": ["b/fp8"], "quantizations": ["fp8"], "zdr": true, "allow_fallbacks": false}))
    );
    // b's deployments cool down after their 429s (as LiteLLM cools a deployment of a group):
    // the walk goes on past b and past c (its one deployment is or-cb, cooling) to a.
    or.providers(json!({"b/fp8": {"status": 429, "times": 2}}));
    for _ in 0..2 {
        assert_eq!(gateway.chat(MODEL).status, 429);
    }
    let r = gateway.chat(MODEL);
    assert_eq!((r.status, r.deployment(), walk_of(&r)), (200, "or-a/fp8", "openrouter-pareto safe_set a/fp8".into()));
}

#[test]
fn strict_provider_refuses_a_callers_own_pin() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let gateway = start_gateway(
        &or.config(&or.wildcard_entry(), "wildcard: true, strict_provider: true", "", &cache),
        Vec::new(),
    );
    for own in [json!({"provider": {"only": ["d/fp8"]}}), json!({"extra_body": {"provider": {"only": ["d/fp8"]}}})] {
        let mut body: Value = serde_json::from_str(&chat_body(MODEL, false)).unwrap();
        body.as_object_mut().unwrap().extend(own.as_object().unwrap().clone());
        let r = gateway.post("/v1/chat/completions", &body.to_string());
        assert_eq!(r.status, 400, "{}", r.text());
        assert_eq!(r.json()["error"]["type"], "strict_provider_conflict");
        assert_eq!(r.json()["error"]["param"], "provider");
    }
    assert!(or.requests().is_empty());
    await_winner(&gateway, "b/fp8");
    assert_eq!(gateway.chat(MODEL).status, 200, "a request without its own pin routes");
}

#[test]
fn without_telemetry_the_vetted_fallback_serves_or_nothing_does() {
    let or = OpenRouter::start(&PROVIDERS);
    or.remove_telemetry();
    let cache = TempDir::new("cache");
    let rule = "wildcard: true, cold_start_fallback: [d/fp8]";
    let gateway = start_gateway(&or.config(&or.wildcard_entry(), rule, "", &cache), Vec::new());
    let r = gateway.chat(MODEL);
    assert_eq!((r.status, walk_of(&r)), (200, "openrouter-pareto cold_start d/fp8".to_string()), "{}", r.text());
    let none = TempDir::new("cache-none");
    let declines = start_gateway(&or.config(&or.wildcard_entry(), "wildcard: true", "", &none), Vec::new());
    let r = declines.chat(MODEL);
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["error"]["type"], "openrouter_pareto_declined");
}

#[test]
fn an_excluded_region_drops_its_organisation_before_the_walk() {
    let mut providers = PROVIDERS.to_vec();
    providers[1] = Provider { headquarters: "SG", ..providers[1].clone() };
    let or = OpenRouter::start(&providers);
    let cache = TempDir::new("cache");
    let rule = "wildcard: true, exclude_regions: [sg], log_decisions: true";
    let gateway = start_gateway(&or.config(&or.wildcard_entry(), rule, "", &cache), Vec::new());
    let walk = await_winner(&gateway, "c/fp8");
    assert!(
        walk["telemetry"]["dropped"].as_array().unwrap().contains(&json!({"slug": "b/fp8", "reason": "region"})),
        "{walk}"
    );
    let r = gateway.chat(MODEL);
    assert_eq!(walk_of(&r), "openrouter-pareto winner c/fp8");
    assert_eq!(walk["decision"]["region"], "allowed");
}

#[test]
fn a_new_winner_waits_its_promotion_polls_and_stale_telemetry_keeps_the_verdict_until_it_is_gone() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let rule = "wildcard: true, promotion_polls: 3";
    let extra = "";
    let yaml = or
        .config(&or.wildcard_entry(), rule, extra, &cache)
        .replace("poll_interval_s: 0.3", "poll_interval_s: 0.3, cache_retention_s: 4");
    let gateway = start_gateway(&yaml, Vec::new());
    await_winner(&gateway, "b/fp8");
    // c becomes the better value: the walk's new winner must win three polls in a row.
    let faster_c = [PROVIDERS[0].clone(), PROVIDERS[1].clone(), provider("c/fp8", 1.3, 90.0), PROVIDERS[3].clone()];
    or.set_telemetry(&faster_c);
    let walk = await_walk(&gateway, "c challenging", |w| w["telemetry"]["challenger"] == "c/fp8");
    assert_eq!(walk["telemetry"]["winner"], "b/fp8", "one poll is not enough: {walk}");
    assert_eq!(walk_of(&gateway.chat(MODEL)), "openrouter-pareto winner b/fp8");
    await_winner(&gateway, "c/fp8");
    // The telemetry goes away: the verdict is kept, marked stale...
    or.remove_telemetry();
    let walk = await_walk(&gateway, "stale", |w| w["telemetry"]["stale"] == true);
    assert_eq!(walk["telemetry"]["winner"], "c/fp8");
    assert_eq!(walk_of(&gateway.chat(MODEL)), "openrouter-pareto winner c/fp8");
    await_metric(&gateway, &format!("pointwork_pareto_stale{{model=\"{MODEL}\"}} 1"));
    // ...until it is older than the retention: then no telemetry is a cold start (no fallback).
    await_walk(&gateway, "the verdict gone", |w| w["decision"]["reason"] == "declined");
    assert_eq!(gateway.chat(MODEL).status, 503);
}

#[test]
fn a_reload_keeps_what_was_learned_where_the_rules_fingerprint_is_unchanged() {
    let or = OpenRouter::start(&PROVIDERS);
    let cache = TempDir::new("cache");
    let config = |rule: &str| {
        or.config(&or.wildcard_entry(), rule, "", &cache).replace("poll_interval_s: 0.3", "poll_interval_s: 600")
    };
    let gateway = start_gateway(&config("wildcard: true"), Vec::new());
    let polled_at = await_winner(&gateway, "b/fp8")["telemetry"]["polled_at"].clone();
    or.providers(json!({"b/fp8": {"status": 429}}));
    for _ in 0..3 {
        assert_eq!(gateway.chat(MODEL).status, 429);
    }
    // The log flag is not in the fingerprint: the verdict stays as polled, the 429s are kept.
    sighup_reload(&gateway, &config("wildcard: true, log_decisions: true"));
    let walk = await_walk(&gateway, "the reload", |_| true);
    assert_eq!(
        (walk["telemetry"]["winner"].clone(), walk["telemetry"]["polled_at"].clone()),
        (json!("b/fp8"), polled_at.clone())
    );
    assert_eq!(walk_of(&gateway.chat(MODEL)), "openrouter-pareto safe_set c/fp8");
    // A changed filter is a new fingerprint: it is polled at once, not inherited.
    sighup_reload(&gateway, &config("wildcard: true, max_price: 100"));
    await_walk(&gateway, "a new poll", |w| w["telemetry"]["polled_at"].as_f64() > polled_at.as_f64());
}

/// Rewrites the gateway's config file and sends SIGHUP; returns once the reload is logged.
fn sighup_reload(gateway: &common::Gateway, yaml: &str) {
    std::fs::write(&gateway.config_path, yaml).expect("rewrite the config");
    let before = gateway.process.stderr().matches("reload (SIGHUP)").count();
    common::send_signal(&gateway.process, libc::SIGHUP);
    let deadline = std::time::Instant::now() + common::LOG_DEADLINE;
    while gateway.process.stderr().matches("reload (SIGHUP)").count() <= before {
        assert!(std::time::Instant::now() < deadline, "no reload: {}", gateway.process.stderr());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!gateway.process.stderr().contains("reload (SIGHUP) refused"), "{}", gateway.process.stderr());
}
