//! Rotating the listener's certificate without a restart, over real processes: new handshakes
//! get the new certificate after SIGHUP while requests keep flowing (none fails) and an open
//! connection keeps its own; a broken file is refused and the certificate in service stays;
//! the expiry shows in `/metrics` and a certificate close to it is warned of at start.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::https::{client_config, Ca, TlsGateway};
use common::{chat_body, deployment, send_signal, Mock, TempDir};

const LOG_DEADLINE: Duration = Duration::from_secs(20);

fn yaml(mock: &Mock, dir: &TempDir) -> String {
    let model_list = deployment("chat", "a", "openai/gpt-4o-mini", mock, "");
    let (cert, key) = (dir.path().join("live.pem"), dir.path().join("live.key"));
    format!(
        "model_list:\n{model_list}pointwork:\n  tls: {{cert: \"{}\", key: \"{}\"}}\n",
        cert.display(),
        key.display()
    )
}

/// Sends SIGHUP and returns the reload's log line (done or refused).
fn sighup(gateway: &TlsGateway) -> String {
    let before = gateway.process.stderr().matches("reload (SIGHUP)").count();
    send_signal(&gateway.process, libc::SIGHUP);
    let text = gateway.process.wait_for_stderr_count("reload (SIGHUP)", before + 1, LOG_DEADLINE);
    text.lines().filter(|l| l.contains("reload (SIGHUP)")).nth(before).unwrap().to_string()
}

#[test]
fn a_reload_rotates_the_certificate_under_load_and_refuses_a_broken_one() {
    let dir = TempDir::new("tls-rotation");
    let ca = Ca::new(&dir, "root");
    let (first, second) = (ca.server(&dir, "first", None), ca.server(&dir, "second", None));
    let install = |issued: &common::https::Issued| {
        std::fs::copy(&issued.cert_pem, dir.path().join("live.pem")).unwrap();
        std::fs::copy(&issued.key_pem, dir.path().join("live.key")).unwrap();
    };
    install(&first);
    let mock = Mock::start("plain", &[]);
    let gateway = TlsGateway::start(&dir, &yaml(&mock, &dir), &[], Vec::new());
    let config = client_config(&ca.der, None);
    let chat = chat_body("chat", false);

    let mut kept = gateway.connect(&config).expect("a connection from before the rotation");
    assert_eq!(kept.peer_certificate(), first.der);

    // Under load: a new connection (a handshake) per request, from two threads.
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new((0u64, 0u64, Vec::<String>::new())));
    let load: Vec<_> = (0..2)
        .map(|_| {
            let (stop, seen, config, chat, addr) =
                (stop.clone(), seen.clone(), config.clone(), chat.clone(), gateway.addr);
            let (first, second) = (first.der.clone(), second.der.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let outcome = common::https::Https::connect(addr, &config).and_then(|mut conn| {
                        let cert = conn.peer_certificate();
                        conn.request("POST", "/v1/chat/completions", &chat).map(|a| (a.status, cert))
                    });
                    let mut seen = seen.lock().unwrap();
                    match outcome {
                        Ok((200, cert)) if cert == first => seen.0 += 1,
                        Ok((200, cert)) if cert == second => seen.1 += 1,
                        other => seen.2.push(format!("{:?}", other.map(|(status, _)| status))),
                    }
                }
            })
        })
        .collect();
    let served = |seen: &Mutex<(u64, u64, Vec<String>)>| {
        let s = seen.lock().unwrap();
        (s.0, s.1)
    };
    while served(&seen).0 < 20 {
        std::thread::yield_now();
    }
    install(&second);
    let line = sighup(&gateway);
    assert!(line.contains("TLS certificate") && line.contains("live.pem re-read"), "{line}");
    // New handshakes get the new certificate from now on.
    assert_eq!(gateway.connect(&config).unwrap().peer_certificate(), second.der);
    while served(&seen).1 < 20 {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    for thread in load {
        thread.join().unwrap();
    }
    let (old, new, failed) = seen.lock().unwrap().clone();
    assert!(failed.is_empty(), "{} failed under rotation: {failed:?}", failed.len());
    assert!(old >= 20 && new >= 20, "{old} with the first certificate, {new} with the second");

    // The connection opened before keeps its session and serves.
    let answer = kept.request("POST", "/v1/chat/completions", &chat).expect("the old connection");
    assert_eq!(answer.status, 200);
    assert_eq!(kept.peer_certificate(), first.der);

    // A broken key: refused, naming it; the second certificate keeps serving.
    std::fs::write(dir.path().join("live.key"), "-----BEGIN PRIVATE KEY-----\nnot a key\n").unwrap();
    let line = sighup(&gateway);
    assert!(line.contains("refused"), "{line}");
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("TLS certificate not replaced") && stderr.contains("live.key"), "{stderr}");
    let mut conn = gateway.connect(&config).expect("handshake after the refused reload");
    assert_eq!(conn.peer_certificate(), second.der);
    assert_eq!(conn.request("POST", "/v1/chat/completions", &chat).unwrap().status, 200);
}

#[test]
fn expiry_is_in_metrics_and_warned_of_at_start() {
    let dir = TempDir::new("tls-expiry");
    let ca = Ca::new(&dir, "root");
    let soon = ca.server(&dir, "soon", Some(10));
    std::fs::copy(&soon.cert_pem, dir.path().join("live.pem")).unwrap();
    std::fs::copy(&soon.key_pem, dir.path().join("live.key")).unwrap();
    let mock = Mock::start("plain", &[]);
    let gateway = TlsGateway::start(&dir, &yaml(&mock, &dir), &[], Vec::new());
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("warning") && stderr.contains("live.pem") && stderr.contains("expires in"), "{stderr}");

    let mut conn = gateway.connect(&client_config(&ca.der, None)).unwrap();
    let metrics = conn.request("GET", "/metrics", "").unwrap().text();
    let name = "pointwork_tls_certificate_expiry_seconds ";
    let line = metrics.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name} in\n{metrics}"));
    let left: i64 = line[name.len()..].parse().unwrap();
    // Valid until an hour short of ten days from now.
    assert!((10 * 86_400 - 3_700..=10 * 86_400 - 3_600).contains(&left), "{left} s left");
}
