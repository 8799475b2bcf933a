//! A real `redis-server` on a loopback port for the cluster tests (no mock of Redis). The test
//! script installs the Debian package; a missing binary fails the test with what to install.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// `--tls-cert-file`, `--tls-key-file`: TLS only, on `port`.
    tls: Option<(String, String)>,
}

impl RedisServer {
    /// Starts a server with no persistence on a free loopback port, once it answers PING.
    pub fn start() -> RedisServer {
        let mut server = RedisServer { port: free_port(), child: None, tls: None };
        server.restart();
        server
    }

    /// A server speaking only TLS, with the certificate and key in these PEM files.
    pub fn start_tls(cert: &str, key: &str) -> RedisServer {
        let tls = Some((cert.to_string(), key.to_string()));
        let mut server = RedisServer { port: free_port(), child: None, tls };
        server.restart();
        server
    }

    /// Kills the server at once (SIGKILL: no goodbye to its clients).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server (again) on the same port, and waits until it answers PING.
    pub fn restart(&mut self) {
        self.kill();
        let bin = std::env::var("POINTWORK_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string());
        let mut command = Command::new(&bin);
        let port = self.port.to_string();
        match &self.tls {
            None => command.args(["--port", &port]),
            Some((cert, key)) => command.args(["--port", "0", "--tls-port", &port, "--tls-cert-file", cert]).args([
                "--tls-key-file",
                key,
                "--tls-auth-clients",
                "no",
            ]),
        };
        let child = command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {bin} ({e}): install Redis (`apt-get install redis-server`; scripts/test does)")
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.ping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("redis-server on port {} did not answer PING within 10 s", self.port);
    }

    fn ping(&self) -> bool {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else { return false };
        if self.tls.is_some() {
            return true; // listening is all a plain client can see
        }
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        use std::io::{Read, Write};
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// Stops the server's process (SIGSTOP): it holds its connections and answers nothing,
    /// as a Redis stuck for seconds does, until [`RedisServer::resume`].
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("redis-server runs").id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }
}

/// A free port outside the kernel's ephemeral range (32768–60999), so that a port a test's Redis
/// left (killed, to be restarted) is not handed to another test's `bind(0)` meanwhile; each test
/// process counts from its own place in 20000–29999.
fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 500) as u16 * 20;
    loop {
        let port = 20_000 + (base - 20_000 + NEXT.fetch_add(1, Ordering::Relaxed)) % 10_000;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
