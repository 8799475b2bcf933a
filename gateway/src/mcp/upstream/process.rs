//! A stdio server's child process and its threads: one writes its stdin, one reads its stdout
//! (and, once it closes, reaps the child), one logs its stderr. The `mcp` thread only sends on
//! channels and receives events: a blocking pipe never stalls it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};

use super::wire::MAX_MESSAGE;

/// The environment variables a stdio server inherits (the MCP SDKs' default), besides its `env`.
const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// Most stderr lines logged per child per minute; the rest are counted.
const STDERR_LINES_PER_MINUTE: u32 = 100;

/// What a child's threads report.
pub enum ChildEvent {
    /// One line of its stdout, without the newline.
    Line(Vec<u8>),
    /// It exited and was reaped: how (`exit status: 3`, `signal: 9 (SIGKILL)`).
    Exited(String),
}

/// A running child.
pub struct Child {
    pid: libc::pid_t,
    /// Lines for its stdin; `None` once stdin is closed.
    stdin: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// Set (under the lock) once the child is reaped: from then on its pid is not signalled.
    reaped: Arc<Mutex<bool>>,
}

impl Child {
    /// Starts `command` with `args`, the inherited environment and `env`.
    pub fn spawn(
        name: &str,
        command: &str,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<(Child, UnboundedReceiver<ChildEvent>), String> {
        let mut cmd = Command::new(command);
        cmd.args(args).env_clear().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for key in INHERITED_ENV {
            if let Some(value) = std::env::var_os(key).filter(|v| !v.to_string_lossy().starts_with("()")) {
                cmd.env(key, value);
            }
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let mut child =
            cmd.spawn().map_err(|e| format!("MCP server {name}'s command {command} could not be started: {e}"))?;
        let pid = child.id() as libc::pid_t;
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("MCP server {name}'s process has no pipes"));
        };
        let (events_tx, events) = unbounded();
        let (lines_tx, lines) = mpsc::channel::<Vec<u8>>();
        let reaped = Arc::new(Mutex::new(false));
        let spawned = thread(name, "in", move || write_lines(stdin, lines)).and_then(|_| {
            let (name, reaped) = (name.to_string(), reaped.clone());
            thread(&name.clone(), "out", move || read_lines(&name, stdout, child, pid, reaped, events_tx))
        });
        if let Err(why) = spawned {
            // Without its reader nobody reaps it: kill and reap here.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            return Err(format!("MCP server {name}'s threads could not be started: {why}"));
        }
        let log_name = name.to_string();
        let _ = thread(name, "err", move || log_stderr(&log_name, stderr));
        Ok((Child { pid, stdin: Mutex::new(Some(lines_tx)), reaped }, events))
    }

    /// Queues a line for its stdin; false once stdin is closed.
    pub fn write(&self, line: Vec<u8>) -> bool {
        let stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        stdin.as_ref().is_some_and(|tx| tx.send(line).is_ok())
    }

    /// Closes its stdin (once the lines queued are written).
    pub fn close_stdin(&self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Sends it a signal, unless it was reaped already (its pid may be another's by then).
    pub fn signal(&self, signal: libc::c_int) {
        let reaped = self.reaped.lock().unwrap_or_else(|e| e.into_inner());
        if !*reaped {
            unsafe { libc::kill(self.pid, signal) };
        }
    }
}

fn thread(name: &str, role: &str, run: impl FnOnce() + Send + 'static) -> Result<(), String> {
    std::thread::Builder::new().name(format!("mcp-{role}-{name}")).spawn(run).map(|_| ()).map_err(|e| e.to_string())
}

fn write_lines(mut stdin: std::process::ChildStdin, lines: mpsc::Receiver<Vec<u8>>) {
    for line in lines {
        if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
}

/// Reads stdout's lines until it closes, then waits for the child to exit and reaps it.
fn read_lines(
    name: &str,
    stdout: std::process::ChildStdout,
    mut child: std::process::Child,
    pid: libc::pid_t,
    reaped: Arc<Mutex<bool>>,
    events: UnboundedSender<ChildEvent>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.len() > MAX_MESSAGE => {
                eprintln!("mcp server {name}: a stdout line longer than {MAX_MESSAGE} bytes was dropped");
                // Skip to the line's end.
                let mut rest = Vec::new();
                if reader.read_until(b'\n', &mut rest).is_err() {
                    break;
                }
            }
            Ok(_) => {
                let text = line.trim_ascii_end();
                if !text.is_empty() {
                    let _ = events.unbounded_send(ChildEvent::Line(text.to_vec()));
                }
            }
        }
    }
    // Waits for the exit without reaping, so that a signal sent meanwhile cannot reach another
    // process that got the pid; then reaps under the lock the signals take.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
    let status = {
        let mut reaped = reaped.lock().unwrap_or_else(|e| e.into_inner());
        let status = child.wait();
        *reaped = true;
        status
    };
    let status = match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("its status could not be read: {e}"),
    };
    let _ = events.unbounded_send(ChildEvent::Exited(status));
}

/// Logs stderr's lines with the server's name in front, at most
/// [`STDERR_LINES_PER_MINUTE`] a minute.
fn log_stderr(name: &str, stderr: std::process::ChildStderr) {
    let mut reader = BufReader::new(stderr);
    let (mut window, mut logged, mut dropped) = (Instant::now(), 0u32, 0u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(64 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if window.elapsed() >= Duration::from_secs(60) {
            if dropped > 0 {
                eprintln!("mcp server {name}: {dropped} stderr lines were not logged");
            }
            (window, logged, dropped) = (Instant::now(), 0, 0);
        }
        if logged < STDERR_LINES_PER_MINUTE {
            logged += 1;
            eprintln!("mcp server {name}: {}", shorten(&line));
        } else {
            dropped += 1;
        }
    }
}

/// A line for the log: at most 300 characters.
pub fn shorten(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
