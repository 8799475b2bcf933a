//! The walk's process-wide settings: `openrouter_pareto_cooldown`, `openrouter_pareto_allowlist`
//! and `openrouter_pareto_telemetry`, strict like the plugin's (an unknown field or an
//! out-of-range value is an error). The telemetry section also takes Pointwork's own keys
//! (`base_url`, `poll_interval_s`, `timeout_s`, `cache_dir`, `cache_retention_s`), which the
//! plugin itself would refuse.

use std::path::{Path, PathBuf};

use pointwork_core::pareto::{CooldownSettings, TelemetrySettings};

use crate::api_base::parse_api_base;
use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::node::Node;

const COOLDOWN_FIELDS: [&str; 3] = ["rate_limit_window_s", "rate_limit_threshold", "input_cap_ttl_s"];
const ALLOWLIST_FIELDS: [&str; 1] = ["ttl_s"];
const SSL_VERIFY: &str = "ssl_verify";
const SSL_CA_CERT: &str = "ssl_ca_cert";
const BASE_URL: &str = "base_url";
const POLL_INTERVAL: &str = "poll_interval_s";
const TIMEOUT: &str = "timeout_s";
const CACHE_DIR: &str = "cache_dir";
const CACHE_RETENTION: &str = "cache_retention_s";
/// The plugin's SSL pair, then Pointwork's keys (which the plugin would refuse).
const TELEMETRY_FIELDS: [&str; 7] =
    [SSL_VERIFY, SSL_CA_CERT, BASE_URL, POLL_INTERVAL, TIMEOUT, CACHE_DIR, CACHE_RETENTION];

/// A non-blank path, trimmed (the plugin strips `ssl_ca_cert`).
const PATH: Kind<PathBuf> = Kind {
    expected: "a non-empty path",
    parse: |n| match n {
        Node::Str(s) if !s.trim().is_empty() => Some(PathBuf::from(s.trim())),
        _ => None,
    },
    secret: false,
};

/// A directory, or `false` for none.
const DIR_OR_OFF: Kind<Option<PathBuf>> = Kind {
    expected: "a directory path, or false for no cache",
    parse: |n| match n {
        Node::Bool(false) => Some(None),
        other => (PATH.parse)(other).map(Some),
    },
    secret: false,
};

/// `openrouter_pareto_cooldown` into `settings` (its allow-list TTL is left as it is).
pub(crate) fn read_cooldown(c: &mut Checker, node: &Node, path: KeyPath, settings: &mut CooldownSettings) {
    let Some(mut f) = c.map(node, path) else { return };
    set(c, &mut f, "rate_limit_window_s", &kinds::POSITIVE_NUMBER, &mut settings.rate_limit_window_s);
    set(c, &mut f, "rate_limit_threshold", &kinds::POSITIVE_U32, &mut settings.rate_limit_threshold);
    set(c, &mut f, "input_cap_ttl_s", &kinds::POSITIVE_NUMBER, &mut settings.input_cap_ttl_s);
    c.refuse_unknown(&f, &COOLDOWN_FIELDS);
}

/// `openrouter_pareto_allowlist` into `settings`.
pub(crate) fn read_allowlist(c: &mut Checker, node: &Node, path: KeyPath, settings: &mut CooldownSettings) {
    let Some(mut f) = c.map(node, path) else { return };
    set(c, &mut f, "ttl_s", &kinds::POSITIVE_NUMBER, &mut settings.allowlist_ttl_s);
    c.refuse_unknown(&f, &ALLOWLIST_FIELDS);
}

/// `openrouter_pareto_telemetry` into `settings` (whose `cache_dir` holds the default).
pub(crate) fn read_telemetry(c: &mut Checker, node: &Node, path: KeyPath, settings: &mut TelemetrySettings) {
    let Some(mut f) = c.map(node, path) else { return };
    let verify = c.optional(&mut f, SSL_VERIFY, &kinds::BOOL);
    let ca_path = f.path.key(SSL_CA_CERT);
    let ca = c.optional(&mut f, SSL_CA_CERT, &PATH);
    if let (Some(false), Some(_)) = (verify, &ca) {
        c.error(&ca_path, "a custom CA bundle needs ssl_verify: true (it is what verification trusts)");
    }
    if let Some(ca) = &ca {
        // Not an error (the plugin's rule): a bad bundle degrades telemetry, never routing.
        if !Path::new(ca).is_file() {
            c.warn(&ca_path, format!("no file {}: telemetry fetches will fail until it exists", ca.display()));
        }
    }
    let url_path = f.path.key(BASE_URL);
    if let Some(url) = c.optional(&mut f, BASE_URL, &kinds::STRING) {
        match parse_base_url(&url) {
            Ok(url) => settings.base_url = url,
            Err(message) => c.error(url_path, message),
        }
    }
    set(c, &mut f, POLL_INTERVAL, &kinds::POSITIVE_SECONDS, &mut settings.poll_interval);
    set(c, &mut f, TIMEOUT, &kinds::POSITIVE_SECONDS, &mut settings.timeout);
    set(c, &mut f, CACHE_DIR, &DIR_OR_OFF, &mut settings.cache_dir);
    set(c, &mut f, CACHE_RETENTION, &kinds::POSITIVE_SECONDS, &mut settings.cache_retention);
    c.refuse_unknown(&f, &TELEMETRY_FIELDS);
    settings.ssl_verify = verify.unwrap_or(true);
    settings.ssl_ca_cert = ca;
}

/// An `http(s)://` URL with a host, without query or fragment, trailing `/` trimmed.
fn parse_base_url(url: &str) -> Result<String, String> {
    if url.contains(['?', '#']) {
        return Err(format!("expected an http:// or https:// URL without query or fragment, got {url:?}"));
    }
    parse_api_base(url)
}

fn set<T>(c: &mut Checker, f: &mut Fields, key: &str, kind: &Kind<T>, target: &mut T) {
    if let Some(v) = c.optional(f, key, kind) {
        *target = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Env;
    use std::time::Duration;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn run(yaml: &str, read: impl FnOnce(&mut Checker, &Node, KeyPath)) -> (Vec<String>, Vec<String>) {
        let node = crate::yaml::parse_yaml(yaml, "t.yaml").expect("valid YAML");
        let mut c = Checker::new(Env::new(&no_env));
        read(&mut c, &node, KeyPath::root(None).key("s"));
        let (errors, warnings) = c.finish();
        (errors.iter().map(ToString::to_string).collect(), warnings.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn cooldown_and_allowlist_fields_are_read_and_checked() {
        let mut s = CooldownSettings::default();
        let (errors, _) =
            run("rate_limit_window_s: 60.5\nrate_limit_threshold: 5\ninput_cap_ttl_s: 10\n", |c, n, p| {
                read_cooldown(c, n, p, &mut s)
            });
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            s,
            CooldownSettings {
                rate_limit_window_s: 60.5,
                rate_limit_threshold: 5,
                input_cap_ttl_s: 10.0,
                ..CooldownSettings::default()
            }
        );
        let (errors, _) =
            run("rate_limit_window_s: 0\nrate_limit_threshold: 2.5\ninput_cap_ttl_s: true\nwindow: 3\n", |c, n, p| {
                read_cooldown(c, n, p, &mut s)
            });
        assert_eq!(
            errors,
            [
                "s.rate_limit_window_s: expected a number greater than 0, got 0",
                "s.rate_limit_threshold: expected a positive integer (at most 4294967295), got 2.5",
                "s.input_cap_ttl_s: expected a number greater than 0, got true",
                "s.window: unknown key; valid keys: rate_limit_window_s, rate_limit_threshold, input_cap_ttl_s",
            ]
        );
        let mut s = CooldownSettings::default();
        let (errors, _) = run("ttl_s: 600\n", |c, n, p| read_allowlist(c, n, p, &mut s));
        assert!(errors.is_empty());
        assert_eq!(s.allowlist_ttl_s, 600.0);
        let (errors, _) = run("ttl_s: -1\nttl: 3\n", |c, n, p| read_allowlist(c, n, p, &mut s));
        assert_eq!(
            errors,
            [
                "s.ttl_s: expected a number greater than 0, got -1",
                "s.ttl: unknown key; did you mean \"ttl_s\"? valid keys: ttl_s"
            ]
        );
    }

    #[test]
    fn telemetry_fields_and_pointwork_extensions() {
        let mut s = TelemetrySettings::default();
        let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        let yaml = format!(
            "ssl_ca_cert: ' {ca} '\nbase_url: http://127.0.0.1:9/or/\npoll_interval_s: 60\ntimeout_s: 2.5\n\
             cache_dir: /var/cache/pw\ncache_retention_s: 3600\n"
        );
        let (errors, warnings) = run(&yaml, |c, n, p| read_telemetry(c, n, p, &mut s));
        assert_eq!((errors.len(), warnings.len()), (0, 0), "{errors:?} {warnings:?}");
        let expected = TelemetrySettings {
            base_url: "http://127.0.0.1:9/or".into(),
            ssl_verify: true,
            ssl_ca_cert: Some(ca.into()),
            poll_interval: Duration::from_secs(60),
            timeout: Duration::from_millis(2500),
            cache_dir: Some("/var/cache/pw".into()),
            cache_retention: Duration::from_secs(3600),
        };
        assert_eq!(s, expected);
        let (_, _) = run("cache_dir: false\nssl_verify: false\n", |c, n, p| read_telemetry(c, n, p, &mut s));
        assert_eq!((s.cache_dir.as_ref(), s.ssl_verify, s.ssl_ca_cert.as_ref()), (None, false, None));
    }

    #[test]
    fn telemetry_mistakes_are_errors_and_a_missing_bundle_a_warning() {
        let mut s = TelemetrySettings::default();
        let (errors, warnings) = run(
            "ssl_verify: false\nssl_ca_cert: /nope/ca.pem\nbase_url: https://openrouter.ai/?x=1\npoll_interval_s: 0\n\
             timeout_s: -1\ncache_dir: ''\ncache_retention_s: soon\nverify: true\n",
            |c, n, p| read_telemetry(c, n, p, &mut s),
        );
        assert_eq!(
            errors,
            [
                "s.ssl_ca_cert: a custom CA bundle needs ssl_verify: true (it is what verification trusts)",
                r#"s.base_url: expected an http:// or https:// URL without query or fragment, got "https://openrouter.ai/?x=1""#,
                "s.poll_interval_s: expected a number of seconds greater than 0, got 0",
                "s.timeout_s: expected a number of seconds greater than 0, got -1",
                r#"s.cache_dir: expected a directory path, or false for no cache, got """#,
                r#"s.cache_retention_s: expected a number of seconds greater than 0, got "soon""#,
                format!("s.verify: unknown key; valid keys: {}", TELEMETRY_FIELDS.join(", ")).as_str(),
            ]
        );
        assert_eq!(warnings, ["s.ssl_ca_cert: no file /nope/ca.pem: telemetry fetches will fail until it exists"]);
        assert_eq!(
            run("base_url: ftp://x\nssl_ca_cert: ' '\n", |c, n, p| read_telemetry(c, n, p, &mut s)).0,
            [
                r#"s.ssl_ca_cert: expected a non-empty path, got " ""#,
                r#"s.base_url: expected an http:// or https:// URL with a host, got "ftp://x""#
            ]
        );
    }
}
