//! `pointwork demo`: mock providers in-process on loopback and the gateway in front of them,
//! with a bundled config — two model groups, one with a flaky deployment so that cooldowns and
//! retries show.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use pointwork_mock::{self as mock, Fault, MockOptions, MockServer};

use crate::cli::Overrides;

/// The demo config; `{healthy}`, `{flaky}` and `{embed}` become the mocks' base URLs.
const DEMO_CONFIG: &str = include_str!("demo.yaml");

pub fn run(overrides: &Overrides) -> ExitCode {
    let mocks = match start_mocks() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("pointwork demo: cannot start the mock providers: {e}");
            return ExitCode::FAILURE;
        }
    };
    let yaml = DEMO_CONFIG
        .replace("{healthy}", &format!("{}/v1", mocks[0].url()))
        .replace("{flaky}", &format!("{}/v1", mocks[1].url()))
        .replace("{embed}", &format!("{}/v1", mocks[2].url()));
    let loaded = match pointwork_config::load_str(&yaml, Path::new("."), &|name| std::env::var(name).ok()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("pointwork demo: the bundled config is invalid (a bug):\n{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut overrides = overrides.clone();
    overrides.listen = overrides.listen.or(Some(SocketAddr::from(([127, 0, 0, 1], 4000))));
    // With `--tls-cert`, the curl line speaks HTTPS and trusts that certificate.
    let (scheme, cacert) = match &overrides.tls {
        Some(files) => ("https", format!(" --cacert {}", files.cert.display())),
        None => ("http", String::new()),
    };
    let banner = |addr: SocketAddr| {
        format!(
            "\n--- demo config (mock providers on loopback) ---\n{yaml}\n--- try it ---\n\
             curl -s{cacert} {scheme}://{addr}/v1/chat/completions -H 'content-type: application/json' \\\n  \
             -d '{{\"model\":\"gpt-4o-mini\",\"messages\":[{{\"role\":\"user\",\"content\":\"hello\"}}]}}' -i\n\n\
             The x-pointwork-deployment and x-pointwork-attempts headers show which deployment served\n\
             and after how many attempts; the flaky deployment fails half its calls, cools down, and\n\
             its traffic moves to the healthy one. Each request also prints an access-log line (JSON) with\n\
             the routing decision; GET /metrics shows the counters. Ctrl-C drains and stops the demo."
        )
    };
    let code = crate::start::serve(loaded, None, &overrides, Some(&banner));
    drop(mocks);
    code
}

fn start_mocks() -> std::io::Result<Vec<MockServer>> {
    let local = SocketAddr::from(([127, 0, 0, 1], 0));
    let base = MockOptions { listen: local, threads: 1, latency: Duration::from_millis(20), ..MockOptions::default() };
    let healthy = mock::spawn(MockOptions { name: "healthy".into(), ..base.clone() })?;
    let flaky = mock::spawn(MockOptions {
        name: "flaky".into(),
        fault: Some(Fault::Status { status: 500, retry_after: None }),
        fault_ratio: 0.5,
        ..base.clone()
    })?;
    let embed = mock::spawn(MockOptions { name: "embed".into(), latency: Duration::ZERO, ..base })?;
    Ok(vec![healthy, flaky, embed])
}
