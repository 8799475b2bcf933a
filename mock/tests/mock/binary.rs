//! The `pointwork-mock` binary: its announcement line, help and refusals.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use crate::client::Client;

pub const BINARY: &str = env!("CARGO_BIN_EXE_pointwork-mock");

/// Kills the child even when an assertion fails.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child's first stdout line (its announcement).
pub fn first_line(child: &mut KillOnDrop) -> String {
    let stdout = child.0.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("announcement");
    line
}

#[test]
fn announces_its_address_on_one_line_and_serves() {
    let child = Command::new(BINARY)
        .args(["--name", "bin", "--threads", "2", "--chunks", "2", "--no-record", "--reply", "a simple ask"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let url = line
        .trim_end()
        .strip_prefix("pointwork-mock bin listening on http://")
        .unwrap_or_else(|| panic!("unexpected announcement {line:?}"));
    let addr: SocketAddr = url.parse().expect("address");
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);

    let mut client = Client::connect(addr);
    let health = client.get("/health");
    assert_eq!(health.header("x-mock-name"), Some("bin"));
    let stream = client.post_json("/v1/chat/completions", &crate::chat_body("m", true));
    assert_eq!(stream.events().len(), 2 + 1, "--chunks 2");
    let whole = client.post_json("/v1/chat/completions", &crate::chat_body("m", false));
    assert_eq!(whole.json()["choices"][0]["message"]["content"], "a simple ask", "--reply");
    assert_eq!(client.get("/mock/requests").json(), serde_json::json!([]), "--no-record");
}

#[test]
fn help_prints_usage_and_succeeds() {
    let output = Command::new(BINARY).arg("--help").output().expect("run");
    assert!(output.status.success());
    let usage = String::from_utf8_lossy(&output.stdout);
    assert!(usage.contains("--fault-ratio"), "{usage}");
}

#[test]
fn bad_flags_exit_2_with_a_clear_error() {
    for args in [
        &["--bogus"][..],
        &["--threads", "zero"],
        &["--fault", "explode"],
        &["--fault-ratio", "3"],
        &["--listen"],
        &["--name", "has space"],
    ] {
        let output = Command::new(BINARY).args(args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.starts_with("pointwork-mock: "), "{args:?}: {error}");
        assert!(output.stdout.is_empty());
    }
}
