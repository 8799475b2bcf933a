//! Redis settings that are refused or warned about: every mistake with its key path, and
//! passwords never shown.

mod common;
#[path = "common/cluster.rs"]
mod helpers;

use std::time::Duration;

use helpers::*;

#[test]
fn bad_urls_are_errors_at_their_paths() {
    let cases = [
        ("http://cache:6379", "expected a redis:// or rediss:// URL, got a http:// URL"),
        (
            "unix:///run/redis.sock",
            "a unix:// URL names a Unix socket, which Pointwork does not support: give a redis:// or rediss:// URL with a host",
        ),
        (
            "redis+unix:///run/redis.sock",
            "a redis+unix:// URL names a Unix socket, which Pointwork does not support: give a redis:// or rediss:// URL with a host",
        ),
        ("redis://:pw@/0", "the URL names no host"),
        ("redis://cache:0", r#"the URL's port must be 1 to 65535, got "0""#),
        ("redis://cache:65536", r#"the URL's port must be 1 to 65535, got "65536""#),
        ("redis://cache/-1", r#"the database after the host must be a non-negative integer, got "-1""#),
        ("cache:6379", "expected a redis:// or rediss:// URL (like redis://host:6379/0)"),
    ];
    for (url, message) in cases {
        assert_eq!(
            errors(&format!("router_settings: {{redis_url: '{url}'}}\n"), &[]),
            [format!("router_settings.redis_url: {message}")],
            "{url}"
        );
    }
    assert_eq!(
        errors("pointwork:\n  cluster: {}\n", &[("REDIS_URL", "http://x")]),
        ["REDIS_URL (env): expected a redis:// or rediss:// URL, got a http:// URL"]
    );
    let (_, warnings) = cluster("router_settings: {redis_url: 'rediss://cache?ssl_cert_reqs=none&x=1'}\n", &[]);
    assert_eq!(warnings, ["router_settings.redis_url: the URL's query parameters are not read: ssl_cert_reqs, x"]);
}

#[test]
fn bad_hosts_ports_and_databases() {
    let cases = [
        (
            "redis_host: 'cache:6379'",
            r#"router_settings.redis_host: expected a host name or address without a port, got "cache:6379""#,
        ),
        (
            "redis_host: 'redis://:pw@cache'",
            "router_settings.redis_host: expected a host name or address, got a URL (redis://…)",
        ),
        ("redis_host: ''", r#"router_settings.redis_host: expected a host name or IP address, got """#),
        (
            "{redis_host: c, redis_port: 0}",
            "router_settings.redis_port: expected a port (an integer from 1 to 65535), got 0",
        ),
        (
            "{redis_host: c, redis_port: 65536}",
            "router_settings.redis_port: expected a port (an integer from 1 to 65535), got 65536",
        ),
        (
            "{redis_host: c, redis_port: six}",
            r#"router_settings.redis_port: expected a port (an integer from 1 to 65535), got "six""#,
        ),
        ("{redis_host: c, redis_db: -1}", "router_settings.redis_db: expected a non-negative integer, got -1"),
        ("{redis_host: c, redis_db: 1.5}", "router_settings.redis_db: expected a non-negative integer, got 1.5"),
    ];
    for (settings, message) in cases {
        let settings = if settings.starts_with('{') { settings.to_string() } else { format!("{{{settings}}}") };
        assert_eq!(errors(&format!("router_settings: {settings}\n"), &[]), [message], "{settings}");
    }
    assert_eq!(
        errors(
            "router_settings: {redis_host: c}\n",
            &[("REDIS_PORT", "x"), ("REDIS_DB", "-2"), ("REDIS_SSL", "maybe")]
        ),
        [
            r#"REDIS_PORT (env): expected a port (an integer from 1 to 65535), got "x""#,
            r#"REDIS_DB (env): expected a non-negative integer, got "-2""#,
            r#"REDIS_SSL (env): expected true or false, got "maybe""#,
        ]
    );
    assert_eq!(
        errors("pointwork:\n  cluster: {}\n", &[("REDIS_HOST", "a b")]),
        [r#"REDIS_HOST (env): expected a host name or IP address, got "a b""#]
    );
    assert_eq!(
        errors("litellm_settings:\n  cache: true\n  cache_params: {type: redis, host: c, ssl: sometimes}\n", &[]),
        [r#"litellm_settings.cache_params.ssl: expected true or false, got "sometimes""#]
    );
    // IPv6 addresses, bracketed or not.
    let (c, _) = cluster("router_settings: {redis_host: '[::1]'}\n", &[]);
    assert_eq!(c.redis.url(), "redis://[::1]:6379/0");
}

#[test]
fn redis_on_without_a_server_is_an_error_at_what_turned_it_on() {
    assert_eq!(
        errors("router_settings:\n  redis_port: 6380\n  redis_password: pw\n", &[]),
        ["router_settings.redis_port: Redis is turned on but no server is named: set redis_host or redis_url \
          (or REDIS_URL / REDIS_HOST)"]
    );
    assert_eq!(
        errors("litellm_settings:\n  cache: true\n  cache_params: {type: redis, password: pw}\n", &[]),
        ["litellm_settings.cache_params: Redis is turned on but no server is named: set host or url \
          (or REDIS_URL / REDIS_HOST)"]
    );
}

#[test]
fn the_cluster_section_is_strict() {
    let cases = [
        (
            "{key_prefix: 'my prefix'}",
            r#"pointwork.cluster.key_prefix: expected 1 to 64 of the characters A-Z a-z 0-9 _ . : -, got "my prefix""#,
        ),
        (
            "{key_prefix: ''}",
            r#"pointwork.cluster.key_prefix: expected 1 to 64 of the characters A-Z a-z 0-9 _ . : -, got """#,
        ),
        (
            "{instance: 'gw 1'}",
            r#"pointwork.cluster.instance: expected a name of 1 to 128 of the characters A-Z a-z 0-9 _ . : @ -, got "gw 1""#,
        ),
        (
            "{sync_interval: 11s}",
            r#"pointwork.cluster.sync_interval: expected a duration from 10ms to 10s, like "100ms", got "11s""#,
        ),
        (
            "{sync_interval: 5ms}",
            r#"pointwork.cluster.sync_interval: expected a duration from 10ms to 10s, like "100ms", got "5ms""#,
        ),
        ("{enabled: maybe}", r#"pointwork.cluster.enabled: expected true or false, got "maybe""#),
        (
            "{health_checks: one}",
            r#"pointwork.cluster.health_checks: expected one of every_instance, one_instance, got "one""#,
        ),
        (
            "{health_checks: true}",
            "pointwork.cluster.health_checks: expected one of every_instance, one_instance, got true",
        ),
        (
            "{instnace: a}",
            r#"pointwork.cluster.instnace: unknown key; did you mean "instance"? valid keys: enabled, instance, key_prefix, sync_interval, health_checks"#,
        ),
        ("[a]", "pointwork.cluster: expected a map, got a list"),
    ];
    let env = [("REDIS_HOST", "cache")];
    for (section, message) in cases {
        assert_eq!(errors(&format!("pointwork:\n  cluster: {section}\n"), &env), [message], "{section}");
    }
    let long = "a".repeat(129);
    assert_eq!(errors(&format!("pointwork:\n  cluster: {{instance: {long}}}\n"), &env).len(), 1);
    let (c, _) = cluster(
        &format!(
            "pointwork:\n  cluster: {{instance: '{}', key_prefix: {}, sync_interval: 10s}}\n",
            "a@b:c-d.e_f",
            "x".repeat(64)
        ),
        &env,
    );
    assert_eq!(
        (c.instance.as_deref(), c.key_prefix.len(), c.sync_interval),
        (Some("a@b:c-d.e_f"), 64, Duration::from_secs(10))
    );
}

#[test]
fn passwords_never_appear_in_errors_the_summary_or_debug() {
    const SECRET: &str = "pw-Zq8sN3cret";
    let e = errors(&format!("router_settings: {{redis_url: 'redis://:{SECRET}@cache:99999'}}\n"), &[]);
    assert_eq!(e, [r#"router_settings.redis_url: the URL's port must be 1 to 65535, got "99999""#]);
    let e = errors(&format!("router_settings: {{redis_url: 'http://:{SECRET}@cache'}}\n"), &[]);
    assert!(!e[0].contains(SECRET), "{e:?}");
    let e = errors("router_settings: {redis_host: c, redis_password: [a]}\n", &[]);
    assert_eq!(e, ["router_settings.redis_password: expected a string, got a list"]);
    let e = errors(&format!("router_settings: {{redis_host: 'redis://:{SECRET}@c'}}\n"), &[]);
    assert!(!e[0].contains(SECRET), "{e:?}");

    let config =
        loaded(&format!("router_settings:\n  redis_url: 'rediss://app:{SECRET}@cache.internal:6380/0'\n"), &[]).config;
    let summary = config.summary();
    assert!(
        summary.contains(
            "\ncluster: Redis at rediss://app@cache.internal:6380/0 (router_settings.redis_url), instance auto, \
             key prefix pointwork, sync every 100ms\n"
        ),
        "{summary}"
    );
    assert!(!summary.contains(SECRET), "{summary}");
    let debug = format!("{config:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(debug.contains(r#"password: Some("***")"#), "{debug}");
    assert_eq!(config.gateway.cluster.unwrap().redis.url(), format!("rediss://app:{SECRET}@cache.internal:6380/0"));
}
