//! The integration-test harness: real `pointwork-mock` and `pointwork serve` processes on
//! loopback ephemeral ports, a temp config file, and a small blocking HTTP/1.1 client.
//!
//! Nothing here sleeps to synchronise: a process is ready when it printed its ready line, a
//! response when its bytes arrived. Every wait has a deadline generous enough for a loaded CI
//! machine, and every failure message carries the processes' stderr.

#![allow(dead_code)]

pub mod http;
pub mod https;
pub mod load;
pub mod openrouter;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use http::{Client, Response};

/// How long a process may take to print its ready line (a debug build on a busy CI machine).
pub const READY_DEADLINE: Duration = Duration::from_secs(30);
/// How long a process may take to exit when it is expected to.
pub const EXIT_DEADLINE: Duration = Duration::from_secs(30);

/// The gateway binary cargo built for these tests.
pub fn pointwork_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pointwork"))
}

/// The `pointwork-mock` binary: `$POINTWORK_MOCK_BIN`, else next to the test executable's
/// `deps` directory (where `cargo build --workspace --bins` puts it).
pub fn mock_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("POINTWORK_MOCK_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test executable has a path");
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("the test executable lives in <target>/<profile>/deps");
    let bin = profile_dir.join(format!("pointwork-mock{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first (`cargo build --workspace --bins`, as scripts/test does) \
         or set POINTWORK_MOCK_BIN",
        bin.display()
    );
    // `cargo test -p pointwork-gateway` does not rebuild another package's binary: refuse
    // to test against a mock older than its sources rather than fail in confusing ways.
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).expect("mock binary mtime");
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mock/src");
    if let Some(newer) = newest_file(&sources).filter(|(t, _)| *t > built) {
        panic!(
            "{} is older than {}: rebuild it (`cargo build --workspace --bins`, as scripts/test does)",
            bin.display(),
            newer.1.display()
        );
    }
    bin
}

/// The most recently modified file under `dir` (recursively), with its time.
fn newest_file(dir: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let candidate = if path.is_dir() {
            newest_file(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok().map(|t| (t, path))
        };
        if let Some(c) = candidate {
            if newest.as_ref().is_none_or(|n| c.0 > n.0) {
                newest = Some(c);
            }
        }
    }
    newest
}

// ---------------------------------------------------------------------------------------------
// Processes

/// A child process killed (and reaped) on drop, with its stdout lines on a channel and its
/// stderr collected for failure messages.
pub struct Process {
    name: String,
    child: Child,
    lines: Receiver<String>,
    stdout_seen: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    exited: Option<ExitStatus>,
}

impl Process {
    pub fn spawn(name: &str, mut command: Command) -> Process {
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot start {name} ({command:?}): {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        let stdout_seen = Arc::new(Mutex::new(String::new()));
        spawn_stdout_reader(stdout, tx, stdout_seen.clone());
        let collected = Arc::new(Mutex::new(String::new()));
        let sink = collected.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = String::new();
            while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Process {
            name: name.to_string(),
            child,
            lines,
            stdout_seen,
            stderr: collected,
            stderr_reader: Some(stderr_reader),
            exited: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stderr contains `needle` (its reader thread runs behind the process);
    /// panics with stderr after `deadline`.
    pub fn wait_for_stderr(&self, needle: &str, deadline: Duration) -> String {
        let until = Instant::now() + deadline;
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            assert!(Instant::now() < until, "{}: no {needle:?} on stderr within {deadline:?}:\n{text}", self.name);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until `needle` occurred `n` times on stderr; returns stderr.
    pub fn wait_for_stderr_count(&self, needle: &str, n: usize, deadline: Duration) -> String {
        let until = Instant::now() + deadline;
        loop {
            let text = self.stderr();
            if text.matches(needle).count() >= n {
                return text;
            }
            assert!(
                Instant::now() < until,
                "{}: {needle:?} not {n} times on stderr within {deadline:?}:\n{text}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What the process wrote to stdout so far (lines already read).
    pub fn stdout(&self) -> String {
        self.stdout_seen.lock().unwrap().clone()
    }

    /// Waits for a stdout line containing `needle`; panics (with stderr) on deadline or exit.
    pub fn wait_for_line(&mut self, needle: &str, deadline: Duration) -> String {
        let until = Instant::now() + deadline;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{}: no stdout line containing {needle:?} within {deadline:?}\nstdout:\n{}\nstderr:\n{}",
                    self.name,
                    self.stdout(),
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.wait_exit(EXIT_DEADLINE);
                    panic!(
                        "{}: exited ({status}) before printing {needle:?}\nstdout:\n{}\nstderr:\n{}",
                        self.name,
                        self.stdout(),
                        self.stderr()
                    )
                }
            }
        }
    }

    /// Waits for the process to exit (polling with a deadline); then stderr is complete.
    pub fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        if let Some(status) = self.exited {
            return status;
        }
        let until = Instant::now() + deadline;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                Instant::now() < until,
                "{}: still running after {deadline:?}\nstderr:\n{}",
                self.name,
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.exited = Some(status);
        status
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.exited.is_none() && matches!(self.child.try_wait(), Ok(None))
    }
}

fn spawn_stdout_reader(stdout: ChildStdout, lines: mpsc::Sender<String>, seen: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    seen.lock().unwrap().push_str(&line);
                    // The receiver may be gone (nobody waits any more): keep draining the pipe.
                    let _ = lines.send(line.trim_end().to_string());
                }
            }
        }
    });
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exited.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- {} (pid {}) stderr ---\n{}", self.name, self.child.id(), self.stderr());
        }
    }
}

/// Parses `ADDR` out of a line containing `http://ADDR`.
pub fn addr_after_http(line: &str) -> SocketAddr {
    let start = line.find("http://").unwrap_or_else(|| panic!("no http:// in {line:?}")) + "http://".len();
    let rest = &line[start..];
    let end = rest.find(|c: char| c.is_whitespace() || c == '/').unwrap_or(rest.len());
    rest[..end].parse().unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The mock provider

/// A running `pointwork-mock` process (one serving thread).
pub struct Mock {
    pub process: Process,
    pub addr: SocketAddr,
    pub name: String,
}

impl Mock {
    /// Starts `pointwork-mock --name NAME` with extra flags, e.g. `&["--fault", "status:500"]`.
    pub fn start(name: &str, flags: &[&str]) -> Mock {
        let mut command = Command::new(mock_bin());
        command.args(["--listen", "127.0.0.1:0", "--threads", "1", "--name", name]).args(flags);
        let mut process = Process::spawn(&format!("mock {name}"), command);
        let line = process.wait_for_line("listening on http://", READY_DEADLINE);
        Mock { addr: addr_after_http(&line), process, name: name.to_string() }
    }

    /// The `api_base` a deployment uses for this mock.
    pub fn api_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn call(&self, method: &str, path: &str, body: &[u8]) -> Response {
        let response = Client::connect(self.addr).request(method, path, &[], body);
        assert_eq!(response.status, 200, "mock {} {method} {path}: {}", self.name, response.text());
        response
    }

    /// `POST /mock/control` with `control` (e.g. `{"fault": "status:500"}`).
    pub fn control(&self, control: Value) {
        self.call("POST", "/mock/control", control.to_string().as_bytes());
    }

    /// The provider requests the mock received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        match self.call("GET", "/mock/requests", b"").json() {
            Value::Array(list) => list,
            other => panic!("mock {}: /mock/requests is not a list: {other}", self.name),
        }
    }

    pub fn clear_requests(&self) {
        self.call("DELETE", "/mock/requests", b"");
    }

    /// Provider requests (not `/mock/*`) served so far.
    pub fn request_count(&self) -> u64 {
        self.stats()["requests"].as_u64().expect("requests count")
    }

    /// `{"requests", "connections", "provider_connections"}`.
    pub fn stats(&self) -> Value {
        self.call("GET", "/mock/stats", b"").json()
    }
}

/// A recorded request's header values named `name` (case-insensitive).
pub fn recorded_headers<'a>(request: &'a Value, name: &str) -> Vec<&'a str> {
    request["headers"]
        .as_array()
        .expect("recorded headers")
        .iter()
        .filter(|pair| pair[0].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
        .map(|pair| pair[1].as_str().expect("header value"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Config files and the gateway

/// A directory under the system temp dir, removed on drop.
pub struct TempDir {
    pub path: PathBuf,
}

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "pointwork-tests-{}-{}-{label}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let file = self.path.join(name);
        std::fs::write(&file, contents).expect("write temp file");
        file
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One `model_list` entry in flow style: `litellm_params` gets `model`, `api_base`,
/// `api_key: sk-ID` and `extra` (more `key: value` pairs, comma-separated).
pub fn deployment(group: &str, id: &str, model: &str, mock: &Mock, extra: &str) -> String {
    let extra = if extra.is_empty() { String::new() } else { format!(", {extra}") };
    format!(
        "  - model_name: {group}\n    litellm_params: {{model: {model}, api_base: \"{}\", api_key: sk-{id}{extra}}}\n    model_info: {{id: {id}}}\n",
        mock.api_base()
    )
}

/// Group `gpt`, deployment `dep-gpt` (`openai/gpt-4o-mini`), priced at 0.001 per token: every
/// response costs well over a cent (the mock reports ~30 tokens).
pub fn priced(mock: &Mock) -> String {
    deployment(
        "gpt",
        "dep-gpt",
        "openai/gpt-4o-mini",
        mock,
        "input_cost_per_token: 0.001, output_cost_per_token: 0.001",
    )
}

/// A config: `model_list:` with `entries`, then `rest` (e.g. a `router_settings:` block).
pub fn config(entries: &[String], rest: &str) -> String {
    format!("model_list:\n{}{rest}", entries.concat())
}

/// A running `pointwork serve`.
pub struct Gateway {
    pub process: Process,
    pub addr: SocketAddr,
    pub config_path: PathBuf,
    _dir: TempDir,
}

/// How to start a gateway.
pub struct GatewayOptions<'a> {
    pub shards: usize,
    pub io_driver: Option<&'a str>,
    pub listen: Option<SocketAddr>,
    pub env: Vec<(&'a str, &'a str)>,
}

impl Default for GatewayOptions<'_> {
    fn default() -> Self {
        GatewayOptions { shards: 1, io_driver: None, listen: None, env: Vec::new() }
    }
}

/// The `pointwork serve` command for a config file.
pub fn serve_command(config_path: &Path, options: &GatewayOptions<'_>) -> Command {
    let mut command = Command::new(pointwork_bin());
    let listen = options.listen.map_or_else(|| "127.0.0.1:0".to_string(), |a| a.to_string());
    command
        .arg("serve")
        .arg("--config")
        .arg(config_path)
        .args(["--listen", &listen])
        .args(["--shards", &options.shards.to_string()]);
    if let Some(driver) = options.io_driver {
        command.args(["--io-driver", driver]);
    }
    for (k, v) in &options.env {
        command.env(k, v);
    }
    command
}

impl Gateway {
    /// Starts the gateway on `yaml` with one shard (cooldown state is per shard).
    pub fn start(yaml: &str) -> Gateway {
        Gateway::start_with(yaml, GatewayOptions::default())
    }

    pub fn start_with(yaml: &str, options: GatewayOptions<'_>) -> Gateway {
        let dir = TempDir::new("gateway");
        let config_path = dir.write("config.yaml", yaml);
        let command = serve_command(&config_path, &options);
        let mut process = Process::spawn("pointwork serve", command);
        let line = process.wait_for_line("listening on http://", READY_DEADLINE);
        Gateway { addr: addr_after_http(&line), process, config_path, _dir: dir }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// One request on a fresh connection.
    pub fn post(&self, path: &str, body: &str) -> Response {
        self.client().post_json(path, body)
    }

    pub fn get(&self, path: &str) -> Response {
        self.client().request("GET", path, &[], b"")
    }

    /// The value of the series `name` (with its labels, if any) in `/metrics`.
    pub fn metric(&self, name: &str) -> f64 {
        let text = self.get("/metrics").text();
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
    }

    /// `POST /v1/chat/completions` for `model` with a fixed small conversation.
    pub fn chat(&self, model: &str) -> Response {
        self.post("/v1/chat/completions", &chat_body(model, false))
    }
}

/// How many requests a test may send while waiting for the random shuffle to pick a given
/// deployment of a pair first; at one chance in two each, missing it this often has odds of
/// 2^-64.
pub const SHUFFLE_TRIES: usize = 64;

/// Sends chat requests for `model` until `mock` has received a request; returns every
/// response in order (the last one is the request that reached `mock`).
pub fn until_tried(gateway: &Gateway, mock: &Mock, model: &str) -> Vec<Response> {
    let mut responses = Vec::new();
    for _ in 0..SHUFFLE_TRIES {
        responses.push(gateway.chat(model));
        if mock.request_count() > 0 {
            return responses;
        }
    }
    panic!("mock {} never picked in {SHUFFLE_TRIES} requests", mock.name);
}

/// A chat request body.
pub fn chat_body(model: &str, stream: bool) -> String {
    serde_json::json!({
        "model": model,
        "stream": stream,
        "messages": [{"role": "user", "content": "Say hello."}],
    })
    .to_string()
}

/// Replaces the digits after each `prefix` with `N`: the mock's request number and clock are
/// the only parts of its answers that change from one request to the next.
pub fn normalize_numbers_after(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let after = i + prefix.len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits > 0 {
            out.push('N');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// A mock answer with its request number and creation time replaced by `N`.
pub fn normalize_mock_answer(bytes: &[u8]) -> String {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8 answer");
    let text = normalize_numbers_after(&text, "\"id\":\"chatcmpl-mock-");
    normalize_numbers_after(&text, "\"created\":")
}

/// Reads everything a reader has (helper for raw sockets).
pub fn read_to_end(mut reader: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = reader.read_to_end(&mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// Signals and lifecycle

/// How long a reload or drain may take to show in the log (a debug build on a busy machine).
pub const LOG_DEADLINE: Duration = Duration::from_secs(20);

/// Sends `signal` to a process the test spawned.
pub fn send_signal(process: &Process, signal: i32) {
    // SAFETY: kill(2) with a pid this test spawned and has not reaped yet.
    let rc = unsafe { libc::kill(process.pid() as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({}, {signal}): {}", process.pid(), std::io::Error::last_os_error());
}

/// Asserts a 200 answered by `deployment`.
pub fn assert_served_by(response: &Response, deployment: &str) {
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.deployment(), deployment);
}

/// Checks `check` until it holds (yielding between checks) or `within` passed, and fails the
/// test naming `what` then; returns how long it took.
pub fn wait_until(within: Duration, what: &str, mut check: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if check() {
            return start.elapsed();
        }
        assert!(start.elapsed() < within, "not within {within:?}: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}
