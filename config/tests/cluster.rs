//! Several instances sharing state through Redis (issue 17): where the config names the server
//! (`router_settings.redis_*`, `litellm_settings.cache_params`, `pointwork.cluster`, the `REDIS_*`
//! variables), in which order, and what `pointwork check` says. Mistakes: `cluster_errors.rs`.

mod common;
#[path = "common/cluster.rs"]
mod helpers;

use std::time::Duration;

use helpers::*;
use pointwork_config::{ClusterSettings, HealthCheckSharing, RedisServer};

#[test]
fn without_redis_keys_there_is_no_cluster_even_with_the_variables_set() {
    assert!(no_cluster("", &ALL_REDIS_VARS).is_empty());
    assert!(no_cluster("router_settings: {num_retries: 1}\n", &ALL_REDIS_VARS).is_empty());
    // `cache: true` alone is a Redis response cache named by the variables, as in LiteLLM:
    // that turns the cluster's Redis on (`cache.rs` has the rest).
    let (c, warnings) = cluster("litellm_settings: {cache: true}\n", &ALL_REDIS_VARS);
    assert_eq!((c.redis.host.as_str(), c.named_by.as_str()), ("env-url", "litellm_settings.cache and REDIS_URL"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(!loaded("", &[]).config.summary().contains("cluster"));
}

#[test]
fn router_settings_host_port_and_password() {
    let (c, warnings) = cluster(
        "router_settings:\n  redis_host: cache.internal\n  redis_port: 6380\n  redis_password: pw-router\n  redis_db: 2\n",
        &[],
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        c,
        ClusterSettings {
            redis: RedisServer { password: Some("pw-router".into()), db: 2, ..plain("cache.internal", 6380) },
            instance: None,
            key_prefix: "pointwork".into(),
            sync_interval: Duration::from_millis(100),
            health_checks: HealthCheckSharing::EveryInstance,
            named_by: "router_settings.redis_host".into(),
        }
    );
}

#[test]
fn a_host_without_a_port_is_on_6379_or_redis_port() {
    let (c, _) = cluster("router_settings: {redis_host: cache}\n", &[]);
    assert_eq!(c.redis, plain("cache", 6379));
    let (c, _) = cluster("router_settings: {redis_host: cache}\n", &[("REDIS_PORT", "6390")]);
    assert_eq!(c.redis, plain("cache", 6390));
    // Numeric strings count (a variable's value is a string).
    let (c, _) = cluster("router_settings: {redis_host: cache, redis_port: '6391'}\n", &[]);
    assert_eq!(c.redis.port, 6391);
}

#[test]
fn router_settings_url() {
    let (c, warnings) = cluster("router_settings: {redis_url: 'rediss://app:s%40cret@cache.internal:6380/3'}\n", &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        c.redis,
        RedisServer {
            tls: true,
            username: Some("app".into()),
            password: Some("s@cret".into()),
            db: 3,
            ..plain("cache.internal", 6380)
        }
    );
    assert_eq!(c.named_by, "router_settings.redis_url");
    assert_eq!(c.redis.url(), "rediss://app:s%40cret@cache.internal:6380/3");
}

#[test]
fn a_url_wins_over_host_and_port_with_a_warning_naming_both() {
    let (c, warnings) = cluster(
        "router_settings:\n  redis_host: other\n  redis_port: 1234\n  redis_url: redis://cache:6380\n  redis_password: pw\n",
        &[],
    );
    assert_eq!(c.redis, RedisServer { password: Some("pw".into()), ..plain("cache", 6380) });
    assert_eq!(
        warnings,
        [
            "router_settings.redis_host: not read: router_settings.redis_url is set too, and the URL wins",
            "router_settings.redis_port: not read: router_settings.redis_url is set too, and the URL's port wins",
        ]
    );
    // A URL without a port takes redis_port.
    let (c, warnings) = cluster("router_settings: {redis_url: 'redis://cache', redis_port: 1234}\n", &[]);
    assert_eq!(c.redis, plain("cache", 1234));
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// The LiteLLM docs' config for several proxies sharing usage and a response cache.
const LITELLM_DOCS: &str = "\
router_settings:
  routing_strategy: usage-based-routing-v2
  redis_host: os.environ/REDIS_HOST
  redis_password: os.environ/REDIS_PASSWORD
  redis_port: os.environ/REDIS_PORT
litellm_settings:
  cache: True
  cache_params:
    type: redis
    host: os.environ/REDIS_HOST
    port: os.environ/REDIS_PORT
    password: os.environ/REDIS_PASSWORD
";

#[test]
fn the_litellm_docs_config_reads_as_litellm_reads_it() {
    let vars = [("REDIS_HOST", "redis-1.internal"), ("REDIS_PORT", "6379"), ("REDIS_PASSWORD", "docs-password-42")];
    let (c, warnings) = cluster(LITELLM_DOCS, &vars);
    assert_eq!(c.redis, RedisServer { password: Some("docs-password-42".into()), ..plain("redis-1.internal", 6379) });
    assert_eq!(c.named_by, "router_settings.redis_host");
    // Both places name the same server; the response cache reads the rest.
    assert!(warnings.is_empty(), "{warnings:?}");
    let errors = errors(LITELLM_DOCS, &[("REDIS_PORT", "6379")]);
    assert_eq!(
        errors,
        [
            "router_settings.redis_host: environment variable REDIS_HOST is not set (os.environ/REDIS_HOST)",
            "router_settings.redis_password: environment variable REDIS_PASSWORD is not set (os.environ/REDIS_PASSWORD)",
            "litellm_settings.cache_params.host: environment variable REDIS_HOST is not set (os.environ/REDIS_HOST)",
            "litellm_settings.cache_params.password: environment variable REDIS_PASSWORD is not set (os.environ/REDIS_PASSWORD)",
        ]
    );
}

#[test]
fn cache_params_of_a_redis_cache_name_the_server_and_the_cache_reads_its_other_keys() {
    let (c, warnings) = cluster(
        "litellm_settings:\n  cache: true\n  cache_params:\n    type: redis\n    host: cache\n    port: 6380\n    \
         username: app\n    password: pw-cache\n    ssl: true\n    db: 1\n    ttl: 600\n    namespace: litellm.caching\n    \
         supported_call_types: [acompletion]\n",
        &[],
    );
    assert_eq!(
        c.redis,
        RedisServer {
            tls: true,
            username: Some("app".into()),
            password: Some("pw-cache".into()),
            db: 1,
            ..plain("cache", 6380)
        }
    );
    assert_eq!(c.named_by, "litellm_settings.cache_params.host");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn cache_params_url_and_redis_url() {
    let (c, warnings) =
        cluster("litellm_settings:\n  cache: true\n  cache_params: {type: redis, url: 'rediss://cache:6380/0'}\n", &[]);
    assert_eq!(c.redis, RedisServer { tls: true, ..plain("cache", 6380) });
    assert_eq!(c.named_by, "litellm_settings.cache_params.url");
    assert!(warnings.is_empty(), "{warnings:?}");
    let (c, warnings) = cluster(
        "litellm_settings:\n  cache: true\n  cache_params: {type: redis, redis_url: 'redis://a', url: 'redis://b', ssl: true}\n",
        &[],
    );
    assert_eq!(c.redis, plain("b", 6379));
    assert_eq!(
        warnings,
        [
            "litellm_settings.cache_params.redis_url: not read: litellm_settings.cache_params.url is set too and wins",
            "litellm_settings.cache_params.ssl: not read: a URL's scheme (redis:// or rediss://) says whether TLS is used",
        ]
    );
}

#[test]
fn other_caches_name_no_redis() {
    for kind in ["local", "s3", "redis-semantic", "disk"] {
        let yaml =
            format!("litellm_settings:\n  cache: true\n  cache_params: {{type: {kind}, host: cache, ttl: 60}}\n");
        assert!(!no_cluster(&yaml, &[]).is_empty(), "{kind}");
    }
}

#[test]
fn cache_params_without_a_type_are_an_in_memory_cache_as_in_litellm() {
    // LiteLLM's `Cache()` defaults to a local cache: its server keys name no Redis.
    let warnings = no_cluster("litellm_settings:\n  cache: true\n  cache_params: {host: cache}\n", &ALL_REDIS_VARS);
    assert_eq!(
        warnings,
        ["litellm_settings.cache_params.host: not read: LiteLLM makes a cache_params without a type an in-memory \
          cache (type: local); set type: redis for a Redis cache"]
    );
    // Without `cache: true`, or with `cache: false`, LiteLLM reads no cache_params.
    for yaml in [
        "litellm_settings:\n  cache_params: {type: redis, host: cache}\n",
        "litellm_settings:\n  cache: false\n  cache_params: {type: redis, host: cache}\n",
    ] {
        assert_eq!(
            no_cluster(yaml, &ALL_REDIS_VARS),
            ["litellm_settings.cache_params: not read: LiteLLM reads cache_params only with litellm_settings.cache: true"]
        );
    }
    // The type may come from a variable.
    let (c, _) = cluster(
        "litellm_settings:\n  cache: true\n  cache_params: {type: os.environ/CACHE_TYPE, host: cache}\n",
        &[("CACHE_TYPE", "redis")],
    );
    assert_eq!(c.redis.host, "cache");
}

#[test]
fn router_settings_win_over_cache_params() {
    let (c, warnings) = cluster(
        "router_settings: {redis_host: router-redis}\nlitellm_settings:\n  cache: true\n  cache_params: {type: redis, host: cache-redis, port: 6380}\n",
        &[],
    );
    assert_eq!(c.redis, plain("router-redis", 6379));
    assert_eq!(
        warnings,
        ["litellm_settings.cache_params.host: not used: Pointwork shares state through one Redis, \
          redis://router-redis:6379/0 (router_settings.redis_host), not cache-redis:6380"]
    );
    // A place that names no host leaves the server to the one that does.
    let (c, warnings) = cluster(
        "router_settings: {redis_password: pw}\nlitellm_settings:\n  cache: true\n  cache_params: {type: redis, host: cache-redis}\n",
        &[],
    );
    assert_eq!(c.redis, plain("cache-redis", 6379));
    assert_eq!(c.named_by, "litellm_settings.cache_params.host");
    assert_eq!(
        warnings,
        ["router_settings.redis_password: not read: Pointwork shares state through one Redis, \
          redis://cache-redis:6379/0 (litellm_settings.cache_params.host)"]
    );
}

#[test]
fn the_variables_fill_in_what_the_config_leaves_out() {
    let vars = [("REDIS_PASSWORD", "env-pw"), ("REDIS_USERNAME", "env-user"), ("REDIS_SSL", "True"), ("REDIS_DB", "5")];
    let (c, _) = cluster("router_settings: {redis_host: cache}\n", &vars);
    assert_eq!(
        c.redis,
        RedisServer {
            tls: true,
            username: Some("env-user".into()),
            password: Some("env-pw".into()),
            db: 5,
            ..plain("cache", 6379)
        }
    );
    // The config's own values win over the variables.
    let (c, _) = cluster("router_settings: {redis_host: cache, redis_password: cfg-pw, redis_db: 0}\n", &vars);
    assert_eq!((c.redis.password.as_deref(), c.redis.db), (Some("cfg-pw"), 0));
    // A variable the config makes unneeded is not read.
    let (c, _) = cluster("router_settings: {redis_host: cache, redis_port: 6380}\n", &[("REDIS_PORT", "x")]);
    assert_eq!(c.redis.port, 6380);
    // An empty variable counts as unset.
    let (c, _) = cluster("router_settings: {redis_host: cache}\n", &[("REDIS_PASSWORD", ""), ("REDIS_PORT", "")]);
    assert_eq!(c.redis, plain("cache", 6379));
}

#[test]
fn a_host_or_url_in_the_config_outranks_redis_url_which_outranks_redis_host() {
    let (c, _) = cluster("router_settings: {redis_host: cfg-host}\n", &ALL_REDIS_VARS);
    assert_eq!((c.redis.host.as_str(), c.redis.port), ("cfg-host", 7001));
    assert_eq!(c.named_by, "router_settings.redis_host");
    let (c, _) = cluster("router_settings: {redis_url: 'redis://cfg-url'}\n", &ALL_REDIS_VARS);
    assert_eq!((c.redis.host.as_str(), c.redis.port, c.redis.tls), ("cfg-url", 7001, false));
    // Only a port in the config: the server comes from REDIS_URL, over REDIS_HOST.
    let (c, _) = cluster("router_settings: {redis_port: 6390}\n", &ALL_REDIS_VARS);
    assert_eq!((c.redis.host.as_str(), c.redis.port, c.redis.db), ("env-url", 7000, 1));
    assert_eq!(c.named_by, "router_settings.redis_port and REDIS_URL");
    let without_url = &ALL_REDIS_VARS[1..];
    let (c, _) = cluster("router_settings: {redis_port: 6390}\n", without_url);
    assert_eq!((c.redis.host.as_str(), c.redis.port, c.redis.tls), ("env-host", 6390, true));
    assert_eq!(c.named_by, "router_settings.redis_port and REDIS_HOST");
    let (c, _) = cluster("litellm_settings:\n  cache: true\n  cache_params: {type: redis, ttl: 5}\n", without_url);
    assert_eq!(c.named_by, "litellm_settings.cache_params and REDIS_HOST");
}

#[test]
fn the_pointwork_section_alone_turns_redis_on_from_the_environment() {
    let (c, warnings) = cluster(
        "pointwork:\n  cluster: {instance: gw-1, key_prefix: 'team.a:pw', sync_interval: 250ms}\n",
        &[("REDIS_URL", "rediss://:pw@cache:6380/2")],
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        c,
        ClusterSettings {
            redis: RedisServer { tls: true, password: Some("pw".into()), db: 2, ..plain("cache", 6380) },
            instance: Some("gw-1".into()),
            key_prefix: "team.a:pw".into(),
            sync_interval: Duration::from_millis(250),
            health_checks: HealthCheckSharing::EveryInstance,
            named_by: "pointwork.cluster and REDIS_URL".into(),
        }
    );
    let (c, _) = cluster("pointwork:\n  cluster: {}\n", &[("REDIS_HOST", "10.0.0.9")]);
    assert_eq!(c.redis, plain("10.0.0.9", 6379));
    assert_eq!(c.named_by, "pointwork.cluster and REDIS_HOST");
    assert_eq!(
        errors("pointwork:\n  cluster: {enabled: true}\n", &[]),
        ["pointwork.cluster: Redis is turned on but no server is named: set router_settings.redis_host or \
          router_settings.redis_url (or REDIS_URL / REDIS_HOST)"]
    );
}

#[test]
fn enabled_false_switches_redis_off_and_the_summary_says_so() {
    let off = "router_settings: {redis_host: os.environ/UNSET_HOST}\npointwork:\n  cluster: {enabled: false}\n";
    let loaded = loaded(off, &ALL_REDIS_VARS);
    assert_eq!(loaded.config.gateway.cluster, None);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.config.cluster_off.as_deref(),
        Some("pointwork.cluster.enabled: false; router_settings names Redis")
    );
    assert!(
        loaded
            .config
            .summary()
            .contains("\ncluster: off (pointwork.cluster.enabled: false; router_settings names Redis)\n"),
        "{}",
        loaded.config.summary()
    );
    let alone = self::loaded("pointwork:\n  cluster: {enabled: false}\n", &ALL_REDIS_VARS).config;
    assert!(alone.summary().contains("\ncluster: off (pointwork.cluster.enabled: false)\n"));
    // Its other keys are still checked.
    assert_eq!(
        errors("pointwork:\n  cluster: {enabled: false, sync_interval: 1ms}\n", &[]),
        [r#"pointwork.cluster.sync_interval: expected a duration from 10ms to 10s, like "100ms", got "1ms""#]
    );
}

#[test]
fn environment_variables_of_the_config_count_and_references_resolve() {
    let (c, _) = cluster(
        "environment_variables: {REDIS_URL: 'redis://from-config-env:6000'}\npointwork:\n  cluster: {}\n",
        &[("REDIS_URL", "redis://from-process")],
    );
    assert_eq!(c.redis, plain("from-config-env", 6000));
    let (c, _) = cluster(
        "router_settings: {redis_url: os.environ/MY_REDIS, redis_password: os.environ/MY_PW}\n",
        &[("MY_REDIS", "redis://cache:6381/0"), ("MY_PW", "pw-from-env")],
    );
    assert_eq!(c.redis, RedisServer { password: Some("pw-from-env".into()), ..plain("cache", 6381) });
}

#[test]
fn the_summary_names_the_instance_and_the_settings() {
    let config = loaded(
        "router_settings: {redis_host: cache, redis_password: pw-secret-1}\npointwork:\n  cluster: {instance: gw-a, key_prefix: acme, sync_interval: 2s}\n",
        &[],
    )
    .config;
    assert!(config.summary().contains(
        "\ncluster: Redis at redis://cache:6379/0 (router_settings.redis_host), instance gw-a, key prefix acme, sync every 2s\n"
    ));
}

#[test]
fn health_checks_run_on_every_instance_unless_one_instance_is_asked_for() {
    let (c, warnings) = cluster("router_settings: {redis_host: cache}\n", &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.health_checks, HealthCheckSharing::EveryInstance);
    let one =
        "router_settings: {redis_host: cache}\npointwork:\n  cluster: {instance: gw-a, health_checks: one_instance}\n";
    let (c, warnings) = cluster(one, &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.health_checks, HealthCheckSharing::OneInstance);
    assert!(loaded(one, &[]).config.summary().contains(
        "\ncluster: Redis at redis://cache:6379/0 (router_settings.redis_host), instance gw-a, key prefix pointwork, \
         sync every 100ms, health checks by one instance at a time\n"
    ));
    let every = "router_settings: {redis_host: cache}\npointwork:\n  cluster: {health_checks: every_instance}\n";
    assert_eq!(cluster(every, &[]).0.health_checks, HealthCheckSharing::EveryInstance);
}

#[test]
fn url_percent_encodes_what_the_config_wrote_plainly() {
    let (c, _) = cluster(
        "litellm_settings:\n  cache: true\n  cache_params: {type: redis, host: cache, username: 'ops team', password: 'p@ss:w/rd#1'}\n",
        &[],
    );
    assert_eq!(c.redis.url(), "redis://ops%20team:p%40ss%3Aw%2Frd%231@cache:6379/0");
    assert_eq!(c.redis.display(), "redis://ops%20team@cache:6379/0");
    // Digits YAML reads as an integer are a password too.
    let (c, _) = cluster("router_settings: {redis_host: cache, redis_password: 123456}\n", &[]);
    assert_eq!(c.redis.password.as_deref(), Some("123456"));
}
