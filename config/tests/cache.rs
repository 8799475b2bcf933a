//! The response cache's settings (issue 35): `litellm_settings.cache` and `cache_params` read
//! as LiteLLM 1.110.2's proxy reads them, Pointwork's `pointwork.cache` bounds, and what
//! `pointwork check` says. The Redis server itself is the cluster's (`cluster.rs`).

mod common;
#[path = "common/cluster.rs"]
mod helpers;

use std::time::Duration;

use helpers::*;
use pointwork_config::{CacheMode, CacheSettings, CacheStore, CacheSurfaces};

/// The cache (it must be on) and the warnings.
fn cache(sections: &str, vars: &[(&str, &str)]) -> (CacheSettings, Vec<String>) {
    let loaded = loaded(sections, vars);
    let warnings = loaded.warnings.iter().map(ToString::to_string).collect();
    (loaded.config.cache.expect("the cache is on"), warnings)
}

/// The warnings of a config that loads without a cache.
fn no_cache(sections: &str, vars: &[(&str, &str)]) -> Vec<String> {
    let loaded = loaded(sections, vars);
    assert_eq!(loaded.config.cache, None);
    loaded.warnings.iter().map(ToString::to_string).collect()
}

fn with_params(params: &str) -> String {
    format!("litellm_settings:\n  cache: true\n  cache_params: {params}\n")
}

const REDIS_HOST: [(&str, &str); 1] = [("REDIS_HOST", "env-host")];

#[test]
fn only_cache_true_turns_a_cache_on() {
    assert!(no_cache("", &ALL_REDIS_VARS).is_empty());
    assert!(no_cache("litellm_settings: {cache: false}\n", &ALL_REDIS_VARS).is_empty());
    for yaml in [
        "litellm_settings:\n  cache_params: {type: local, ttl: 5}\n",
        "litellm_settings:\n  cache: false\n  cache_params: {type: redis, host: cache}\n",
    ] {
        assert_eq!(
            no_cache(yaml, &ALL_REDIS_VARS),
            ["litellm_settings.cache_params: not read: LiteLLM reads cache_params only with litellm_settings.cache: true"]
        );
        assert_eq!(loaded(yaml, &ALL_REDIS_VARS).config.gateway.cluster, None);
    }
    assert_eq!(
        errors("litellm_settings: {cache: maybe}\n", &[]),
        [r#"litellm_settings.cache: expected true or false, got "maybe""#]
    );
}

#[test]
fn cache_true_alone_is_redis_from_the_variables() {
    for (sections, on) in [
        ("litellm_settings: {cache: True}\n", "litellm_settings.cache"),
        ("litellm_settings: {cache: true, cache_params: {}}\n", "litellm_settings.cache_params"),
    ] {
        let loaded = loaded(sections, &REDIS_HOST);
        let c = loaded.config.cache.expect("on");
        assert_eq!(c, CacheSettings { store: CacheStore::Redis, ttl: Duration::from_secs(60), ..Default::default() });
        let cluster = loaded.config.gateway.cluster.expect("the cache turns Redis on");
        assert_eq!((cluster.redis.host.as_str(), cluster.named_by), ("env-host", format!("{on} and REDIS_HOST")));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    }
    let (c, _) = cache("litellm_settings: {cache: true}\n", &[("REDIS_URL", "redis://env-url:7000")]);
    assert_eq!(c.store, CacheStore::Redis);
}

#[test]
fn cache_true_alone_without_a_server_is_off_not_an_error() {
    let loaded = loaded("litellm_settings: {cache: true}\n", &[("REDIS_HOST", " ")]);
    assert_eq!(loaded.config.cache, None);
    assert_eq!(loaded.config.gateway.cluster, None);
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["litellm_settings.cache: no Redis server is named (cache_params.host or url, router_settings.redis_host \
          or redis_url, REDIS_HOST or REDIS_URL): the cache is off"]
    );
    // Its other keys are still read.
    assert_eq!(
        no_cache(&with_params("{ttl: 5, type: redis, socket_timeout: 1}"), &[]),
        [
            "litellm_settings.cache_params.socket_timeout: not read: Pointwork's response cache does not use it",
            "litellm_settings.cache: no Redis server is named (cache_params.host or url, router_settings.redis_host \
             or redis_url, REDIS_HOST or REDIS_URL): the cache is off",
        ]
    );
    // router_settings may name it.
    let (c, _) = cache("router_settings: {redis_host: router-redis}\nlitellm_settings: {cache: true}\n", &[]);
    assert_eq!(c.store, CacheStore::Redis);
    // A cache_params that names a password but no host is refused, as LiteLLM's client refuses it.
    assert_eq!(
        errors(&with_params("{type: redis, password: pw}"), &[]),
        ["litellm_settings.cache_params: Redis is turned on but no server is named: set host or url \
          (or REDIS_URL / REDIS_HOST)"]
    );
}

#[test]
fn cache_params_without_a_type_are_in_memory() {
    let (c, warnings) = cache(&with_params("{ttl: 30, namespace: team-a}"), &ALL_REDIS_VARS);
    assert_eq!(
        c,
        CacheSettings {
            store: CacheStore::Local,
            ttl: Duration::from_secs(30),
            namespace: Some("team-a".into()),
            ..Default::default()
        }
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let (c, warnings) = cache(&with_params("{host: cache, port: 6380, password: pw}"), &[]);
    assert_eq!(c.store, CacheStore::Local);
    let why = "not read: LiteLLM makes a cache_params without a type an in-memory cache (type: local); \
               set type: redis for a Redis cache";
    assert_eq!(warnings, ["host", "port", "password"].map(|k| format!("litellm_settings.cache_params.{k}: {why}")));
}

#[test]
fn a_local_cache_and_its_ttls() {
    let (c, warnings) = cache(&with_params("{type: local}"), &[]);
    assert_eq!(c, CacheSettings::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    // default_in_memory_ttl replaces ttl for a local cache; default_in_redis_ttl is not its.
    let (c, warnings) = cache(
        &with_params("{type: local, ttl: 30, default_in_memory_ttl: 120, default_in_redis_ttl: 5, host: cache}"),
        &[],
    );
    assert_eq!(c.ttl, Duration::from_secs(120));
    assert_eq!(
        warnings,
        [
            "litellm_settings.cache_params.host: not read: a local cache is in this instance's memory",
            "litellm_settings.cache_params.default_in_redis_ttl: not read: this cache's store reads default_in_memory_ttl",
        ]
    );
    let (c, _) = cache(&with_params("{type: local, ttl: 2.5}"), &[]);
    assert_eq!(c.ttl, Duration::from_millis(2500));
}

#[test]
fn a_redis_cache_uses_the_clusters_redis() {
    let loaded =
        loaded(&with_params("{type: redis, host: cache, port: 6380, ttl: 300, default_in_redis_ttl: 90}"), &[]);
    let c = loaded.config.cache.unwrap();
    assert_eq!((c.store, c.ttl), (CacheStore::Redis, Duration::from_secs(90)));
    let cluster = loaded.config.gateway.cluster.unwrap();
    assert_eq!((cluster.redis.host.as_str(), cluster.redis.port), ("cache", 6380));
    assert_eq!(cluster.named_by, "litellm_settings.cache_params.host");
    let (c, warnings) = cache(&with_params("{type: redis, url: 'redis://cache', default_in_memory_ttl: 9}"), &[]);
    assert_eq!(c.ttl, Duration::from_secs(60));
    assert_eq!(
        warnings,
        ["litellm_settings.cache_params.default_in_memory_ttl: not read: this cache's store reads default_in_redis_ttl"]
    );
    // The type may come from a variable.
    let (c, _) = cache(&with_params("{type: os.environ/CACHE_TYPE, host: cache}"), &[("CACHE_TYPE", "redis")]);
    assert_eq!(c.store, CacheStore::Redis);
}

#[test]
fn a_redis_cache_with_redis_off_is_in_memory() {
    let yaml =
        format!("{}pointwork:\n  cluster: {{enabled: false}}\n", with_params("{type: redis, host: cache, ttl: 20}"));
    let (c, warnings) = cache(&yaml, &[]);
    assert_eq!((c.store, c.ttl), (CacheStore::Local, Duration::from_secs(20)));
    assert_eq!(
        warnings,
        ["litellm_settings.cache: Redis is off (pointwork.cluster.enabled: false; litellm_settings.cache_params names \
          Redis): the cache is in this instance's memory (type: local)"]
    );
    // `cache: true` alone needs no server then, and takes the local TTL.
    let (c, warnings) = cache("litellm_settings: {cache: true}\npointwork:\n  cluster: {enabled: false}\n", &[]);
    assert_eq!((c.store, c.ttl), (CacheStore::Local, Duration::from_secs(600)));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // A placeholder host turns Redis off too.
    let (c, warnings) = cache(&with_params("{type: redis, host: '<your redis host>'}"), &[]);
    assert_eq!(c.store, CacheStore::Local);
    assert!(warnings.iter().any(|w| w.starts_with("litellm_settings.cache: Redis is off (")), "{warnings:?}");
}

#[test]
fn types_pointwork_does_not_serve_are_one_warning() {
    for kind in ["s3", "redis-semantic", "qdrant-semantic", "valkey-semantic", "azure-blob", "gcs"] {
        let yaml = with_params(&format!("{{type: {kind}, host: cache, s3_bucket_name: b, similarity_threshold: 0.8}}"));
        let warnings = no_cache(&yaml, &ALL_REDIS_VARS);
        assert_eq!(
            warnings,
            [format!(
                "litellm_settings.cache_params.type: a {kind} cache is not served by Pointwork: no response cache"
            )]
        );
        assert_eq!(loaded(&yaml, &ALL_REDIS_VARS).config.gateway.cluster, None, "{kind}");
    }
    assert_eq!(
        no_cache(&with_params("{type: disk, disk_cache_dir: /tmp/c}"), &[]),
        ["litellm_settings.cache_params.type: LiteLLM 1.110.2 removed the disk cache (it refuses type: disk): \
          no response cache"]
    );
}

#[test]
fn an_unknown_type_is_an_error_naming_litellms_types() {
    assert_eq!(
        errors(&with_params("{type: memcached}"), &[]),
        [
            r#"litellm_settings.cache_params.type: unknown cache type "memcached"; LiteLLM's types: local, redis, redis-semantic, valkey-semantic, s3, qdrant-semantic, azure-blob, gcs"#
        ]
    );
    assert_eq!(
        errors("litellm_settings:\n  cache: true\n  cache_params: [redis]\n", &[]),
        [r#"litellm_settings.cache_params: expected a map, got a list"#]
    );
}

#[test]
fn mode_ttl_namespace_and_max_messages() {
    let (c, _) = cache(
        &with_params("{type: local, mode: default_off, ttl: os.environ/CACHE_TTL, namespace: ns, max_messages: 10}"),
        &[("CACHE_TTL", "45")],
    );
    assert_eq!(c.mode, CacheMode::DefaultOff);
    assert_eq!(c.ttl, Duration::from_secs(45));
    assert_eq!(c.namespace.as_deref(), Some("ns"));
    assert_eq!(c.max_messages, Some(10));
    let (c, _) = cache(&with_params("{type: local, max_messages: null}"), &[]);
    assert_eq!(c.max_messages, None);
    let (c, _) = cache(&with_params("{type: local, namespace: ''}"), &[]);
    assert_eq!((c.max_messages, c.namespace), (Some(4), None));
    assert_eq!(
        errors(&with_params("{type: local, mode: always, ttl: 0, max_messages: -1, namespace: 5}"), &[]),
        [
            r#"litellm_settings.cache_params.mode: expected one of default_on, default_off, got "always""#,
            "litellm_settings.cache_params.ttl: expected a number of seconds greater than 0, got 0",
            "litellm_settings.cache_params.namespace: expected a string, got 5",
            "litellm_settings.cache_params.max_messages: expected a non-negative integer, or null for no limit, got -1",
        ]
    );
    assert_eq!(
        errors(&with_params("{type: redis, host: cache, ttl: os.environ/UNSET_TTL}"), &[]),
        ["litellm_settings.cache_params.ttl: environment variable UNSET_TTL is not set (os.environ/UNSET_TTL)"]
    );
}

#[test]
fn supported_call_types_name_the_surfaces() {
    let (c, warnings) = cache(&with_params("{type: local, supported_call_types: [acompletion, embedding]}"), &[]);
    assert_eq!(c.surfaces, CacheSurfaces { chat: true, embeddings: true, messages: false, responses: false });
    assert!(warnings.is_empty(), "{warnings:?}");
    let (c, warnings) = cache(
        &with_params("{type: local, supported_call_types: [aanthropic_messages, atranscription, rerank, chat]}"),
        &[],
    );
    assert_eq!(c.surfaces, CacheSurfaces { messages: true, ..CacheSurfaces::NONE });
    let path = "litellm_settings.cache_params.supported_call_types";
    assert_eq!(
        warnings[..2],
        [
            format!("{path}[1]: Pointwork does not cache atranscription calls"),
            format!("{path}[2]: Pointwork does not cache rerank calls"),
        ]
    );
    assert!(warnings[2].starts_with(&format!(
        "{path}[3]: not a LiteLLM call type, nothing is cached for it; LiteLLM's: completion, acompletion,"
    )));
    // Nothing to cache: no cache.
    assert_eq!(
        no_cache(&with_params("{type: local, supported_call_types: null}"), &[]),
        [format!("{path}: null: nothing is cached (LiteLLM caches no call type): no response cache")]
    );
    assert_eq!(
        no_cache(&with_params("{type: local, supported_call_types: []}"), &[]),
        [format!("{path}: names no call type Pointwork caches: nothing is cached, no response cache")]
    );
    assert_eq!(no_cache(&with_params("{type: local, supported_call_types: [text_completion]}"), &[]).len(), 2);
}

/// A real config (the corpus's `pin-spike`): a Redis cache that caches nothing still names the
/// Redis LiteLLM connects to, which the cluster then uses.
#[test]
fn a_redis_cache_of_nothing_still_names_the_clusters_redis() {
    let yaml = with_params("{type: redis, host: cache, supported_call_types: []}");
    let loaded = loaded(&yaml, &[]);
    assert_eq!(loaded.config.cache, None);
    assert_eq!(loaded.config.gateway.cluster.unwrap().redis.host, "cache");
    // Its server keys are the cluster's: only the empty list is warned.
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["litellm_settings.cache_params.supported_call_types: names no call type Pointwork caches: nothing is cached, \
          no response cache"]
    );
}

#[test]
fn other_keys_are_warned_not_read() {
    let (_, warnings) = cache(
        &with_params("{type: redis, host: cache, similarity_threshold: 0.9, redis_flush_size: 10, socket_timeout: 2}"),
        &[],
    );
    assert_eq!(
        warnings,
        ["similarity_threshold", "redis_flush_size", "socket_timeout"].map(|k| format!(
            "litellm_settings.cache_params.{k}: not read: Pointwork's response cache does not use it"
        ))
    );
}

#[test]
fn pointwork_cache_bounds() {
    let pw = |body: &str| format!("{}pointwork:\n  cache: {body}\n", with_params("{type: redis, host: cache}"));
    let (c, warnings) = cache(&pw("{max_bytes: 1048576, max_item_bytes: 65536, redis_timeout: 20ms}"), &[]);
    assert_eq!((c.max_bytes, c.max_item_bytes, c.redis_timeout), (1 << 20, 1 << 16, Duration::from_millis(20)));
    assert!(warnings.is_empty(), "{warnings:?}");
    // Defaults, and an item bound no larger than a small cache.
    let (c, _) = cache(&pw("{}"), &[]);
    assert_eq!((c.max_bytes, c.max_item_bytes, c.redis_timeout), (256 << 20, 1 << 20, Duration::from_millis(50)));
    let (c, _) = cache(&pw("{max_bytes: 1000}"), &[]);
    assert_eq!(c.max_item_bytes, 1000);
    let (c, _) = cache(&pw("{redis_timeout: 5s, max_bytes: os.environ/CACHE_BYTES}"), &[("CACHE_BYTES", "4096")]);
    assert_eq!((c.redis_timeout, c.max_bytes), (Duration::from_secs(5), 4096));
    let p = "pointwork.cache";
    assert_eq!(
        errors(&pw("{max_bytes: 0, max_item_bytes: -1, redis_timeout: 6s}"), &[]),
        [
            format!("{p}.max_bytes: expected a positive integer (bytes), got 0"),
            format!("{p}.max_item_bytes: expected a positive integer (bytes), got -1"),
            format!(r#"{p}.redis_timeout: expected a duration from 1ms to 5s, like "50ms", got "6s""#),
        ]
    );
    assert_eq!(
        errors(&pw("{max_bytes: 100, max_item_bytes: 101, redis_timeout: 0.5ms, max_byte: 1}"), &[]),
        [
            format!(r#"{p}.redis_timeout: expected a duration from 1ms to 5s, like "50ms", got "0.5ms""#),
            format!(
                r#"{p}.max_byte: unknown key; did you mean "max_bytes"? valid keys: max_bytes, max_item_bytes, redis_timeout"#
            ),
            format!("{p}.max_item_bytes: must be at most max_bytes (100), got 101"),
        ]
    );
}

#[test]
fn pointwork_cache_without_a_cache_is_warned() {
    let warnings = no_cache("pointwork:\n  cache: {max_bytes: 1000}\n", &[]);
    assert_eq!(warnings, ["pointwork.cache: not read: there is no response cache (see litellm_settings.cache)"]);
    // A local cache has no Redis to wait for.
    let (_, warnings) =
        cache(&format!("{}pointwork:\n  cache: {{redis_timeout: 10ms}}\n", with_params("{type: local}")), &[]);
    assert_eq!(
        warnings,
        ["pointwork.cache.redis_timeout: not read: the cache is in this instance's memory, not in Redis"]
    );
}

#[test]
fn pointwork_check_prints_one_line_for_the_cache() {
    let summary = |yaml: &str, vars: &[(&str, &str)]| loaded(yaml, vars).config.summary();
    let line = |s: String| s.lines().find(|l| l.starts_with("cache:")).map(str::to_string);
    assert_eq!(
        line(summary("litellm_settings: {cache: true}\n", &REDIS_HOST)).as_deref(),
        Some("cache: redis (the cluster's), ttl 60s, namespace none, mode default_on, caches chat, embeddings, messages, responses, max_messages 4")
    );
    assert_eq!(
        line(summary(
            &with_params("{type: local, ttl: 90, namespace: ns, mode: default_off, supported_call_types: [aresponses], max_messages: null}"),
            &[]
        ))
        .as_deref(),
        Some("cache: local (in memory), ttl 90s, namespace ns, mode default_off, caches responses, max_messages no limit")
    );
    assert_eq!(line(summary("", &[])), None);
}
