//! The store against a real `redis-server` each test starts on its own port: what it stores and
//! reads, authentication and databases, TLS, and how it behaves when Redis is killed, comes back,
//! stalls, or is sent more writes than the bound.

use std::future::Future;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use monoio_rustls::TlsConnector;
use pointwork_config::RedisServer;

use super::resp::{self, Reply};
use super::{RedisRead, RedisStats, RedisStore, WRITES_MAX};

/// A `redis-server` process on a port of its own, killed when dropped.
struct Redis {
    port: u16,
    /// Listens with TLS only.
    tls: bool,
    args: Vec<String>,
    child: Option<Child>,
}

impl Redis {
    fn start(args: &[&str]) -> Redis {
        let args = args.iter().map(|a| a.to_string()).collect();
        let mut redis = Redis { port: free_port(), tls: false, args, child: None };
        redis.restart();
        redis
    }

    /// A Redis speaking TLS only, with this certificate.
    fn start_tls(cert: &str, key: &str) -> Redis {
        let args = ["--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no"];
        let mut redis =
            Redis { port: free_port(), tls: true, args: args.iter().map(|a| a.to_string()).collect(), child: None };
        redis.restart();
        redis
    }

    /// Starts the server (again) on the same port and waits until the port accepts.
    fn restart(&mut self) {
        self.kill();
        let port = self.port.to_string();
        let mut command = Command::new("redis-server");
        if self.tls {
            command.args(["--port", "0", "--tls-port", &port]);
        } else {
            command.args(["--port", &port]);
        }
        let child = command
            .args(&self.args)
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (apt-get install redis-server)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server on port {} did not listen within 10 s", self.port);
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills the server at once (SIGKILL: no goodbye to its clients).
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) the process: stopped, it holds its connections and
    /// answers nothing, as a Redis stuck for a while does.
    fn signal(&self, signal: libc::c_int) {
        let pid = self.child.as_ref().expect("redis-server runs").id();
        // SAFETY: kill(2) with the id of a child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
    }

    fn server(&self) -> RedisServer {
        RedisServer { tls: false, host: "127.0.0.1".into(), port: self.port, username: None, password: None, db: 0 }
    }

    /// A plain blocking client, authenticated with `password` when given.
    fn raw(&self, password: Option<&str>) -> Raw {
        let mut raw = Raw(TcpStream::connect(("127.0.0.1", self.port)).unwrap());
        if let Some(password) = password {
            assert!(raw.call(&[b"AUTH", password.as_bytes()]).is_ok());
        }
        raw
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A free port below the kernel's ephemeral range, so that the port of a killed Redis is not
/// handed to someone else's `bind(0)` before the test starts it again.
fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = (std::process::id() % 100) as u16 * 25;
    loop {
        let port = 30_000 + (base + NEXT.fetch_add(1, Ordering::Relaxed)) % 2_700;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A blocking RESP client, to look at what the store did from the outside.
struct Raw(TcpStream);

impl Raw {
    fn call(&mut self, args: &[&[u8]]) -> Reply {
        let mut command = Vec::new();
        resp::encode(&mut command, args);
        self.0.write_all(&command).unwrap();
        let mut buf = Vec::new();
        loop {
            if let Some((reply, _)) = resp::parse(&buf).unwrap() {
                return reply;
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self.0.read(&mut chunk).unwrap();
            assert!(n > 0, "redis closed the connection");
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn int(&mut self, args: &[&[u8]]) -> i64 {
        match self.call(args) {
            Reply::Integer(n) => n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    /// A field of `INFO` (e.g. `total_connections_received`).
    fn info(&mut self, field: &str) -> u64 {
        let Reply::Bulk(Some(info)) = self.call(&[b"INFO"]) else { panic!("INFO") };
        let info = String::from_utf8(info).unwrap();
        let line = info.lines().find_map(|l| l.strip_prefix(&format!("{field}:"))).expect(field);
        line.trim().parse().unwrap()
    }
}

/// Runs `test` on a monoio runtime, as a shard does.
fn run<F: Future>(test: F) -> F::Output {
    let mut runtime = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build().unwrap();
    runtime.block_on(test)
}

fn tls() -> TlsConnector {
    crate::upstream::conn::tls_connector().unwrap()
}

/// Waits until the store's background writes have ended.
async fn writes_done(store: &RedisStore) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.writes_under_way() > 0 {
        assert!(Instant::now() < deadline, "{} writes still under way after 10 s", store.writes_under_way());
        monoio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until the store's pause ends (a wait on the clock by design).
async fn pause_over(store: &RedisStore) {
    let until = store.paused_until().expect("the store is paused");
    let now = Instant::now();
    if until > now {
        monoio::time::sleep(until - now).await;
    }
}

const TIMEOUT: Duration = Duration::from_millis(200);
/// What a busy machine may add to a bounded wait (CI runs many tests at once on few cores).
const SLACK: Duration = Duration::from_secs(1);
const TTL: Duration = Duration::from_secs(60);

#[test]
fn stores_reads_and_deletes_binary_values_on_one_connection() {
    let redis = Redis::start(&[]);
    let mut raw = redis.raw(None);
    let connections = raw.info("total_connections_received");
    let store = store_for(redis.server(), TIMEOUT, tls());
    let small: Vec<u8> = (0..=255u8).chain(*b"\r\n$-1\r\n").collect();
    let large: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    run(async {
        assert_eq!(store.get("absent").await, RedisRead::Missing);
        store.set("small".into(), small.clone(), TTL);
        writes_done(&store).await;
        store.set("large".into(), large.clone(), TTL);
        writes_done(&store).await;
        assert_eq!(store.get("small").await, RedisRead::Found(small.clone()));
        assert_eq!(store.get("large").await, RedisRead::Found(large.clone()));
        store.delete("small".into());
        writes_done(&store).await;
        assert_eq!(store.get("small").await, RedisRead::Missing);
    });
    assert_eq!(raw.call(&[b"GET", b"large"]), Reply::Bulk(Some(large)));
    let expected = RedisStats { gets: 4, found: 2, sets: 2, deletes: 1, ..RedisStats::default() };
    assert_eq!(store.stats(), expected);
    assert_eq!(raw.info("total_connections_received") - connections, 1, "one connection, reused");
}

#[test]
fn concurrent_reads_each_take_a_connection_and_a_few_stay_pooled() {
    let redis = Redis::start(&[]);
    let mut raw = redis.raw(None);
    assert!(raw.call(&[b"SET", b"k", b"v"]).is_ok());
    let store = std::rc::Rc::new(store_for(redis.server(), TIMEOUT, tls()));
    let connections = raw.info("total_connections_received");
    run(async {
        let reads: Vec<_> = (0..10)
            .map(|_| {
                let store = store.clone();
                monoio::spawn(async move { store.get("k").await })
            })
            .collect();
        for read in reads {
            assert_eq!(read.await, RedisRead::Found(b"v".to_vec()));
        }
        // The pooled ones serve the next reads.
        for _ in 0..super::IDLE_MAX {
            assert_eq!(store.get("k").await, RedisRead::Found(b"v".to_vec()));
        }
    });
    assert_eq!(raw.info("total_connections_received") - connections, 10);
    let gets = 10 + super::IDLE_MAX as u64;
    assert_eq!(store.stats(), RedisStats { gets, found: gets, ..RedisStats::default() });
}

#[test]
fn writes_expire_after_their_ttl() {
    let redis = Redis::start(&[]);
    let mut raw = redis.raw(None);
    let store = store_for(redis.server(), TIMEOUT, tls());
    run(async {
        store.set("k".into(), b"v".to_vec(), Duration::from_millis(45_500));
        store.set("sub-ms".into(), b"v".to_vec(), Duration::from_micros(300));
        writes_done(&store).await;
    });
    let pttl = raw.int(&[b"PTTL", b"k"]);
    assert!((44_000..=45_500).contains(&pttl), "PTTL {pttl}");
    // A TTL under a millisecond is sent as one (PX 0 would be an error reply).
    assert_eq!(store.stats().errors, 0);
    assert_eq!(store.paused_until(), None);
}

#[test]
fn authenticates_and_selects_its_database() {
    let redis = Redis::start(&["--requirepass", "s3cret"]);
    let server = RedisServer { password: Some("s3cret".into()), db: 3, ..redis.server() };
    let store = store_for(server.clone(), TIMEOUT, tls());
    let with_user = store_for(RedisServer { username: Some("default".into()), ..server.clone() }, TIMEOUT, tls());
    let wrong = store_for(RedisServer { password: Some("wrong".into()), ..server }, TIMEOUT, tls());
    let mut raw = redis.raw(Some("s3cret"));
    run(async {
        store.set("k".into(), b"in db 3".to_vec(), TTL);
        writes_done(&store).await;
        assert_eq!(with_user.get("k").await, RedisRead::Found(b"in db 3".to_vec()));
        assert_eq!(wrong.get("k").await, RedisRead::Unavailable);
    });
    assert_eq!(raw.call(&[b"GET", b"k"]), Reply::Bulk(None), "not in db 0");
    assert!(raw.call(&[b"SELECT", b"3"]).is_ok());
    assert_eq!(raw.call(&[b"GET", b"k"]), Reply::Bulk(Some(b"in db 3".to_vec())));
    assert_eq!(wrong.stats().errors, 1);
    assert!(wrong.paused_until().is_some());
}

#[test]
fn a_killed_redis_is_a_miss_at_once_until_it_is_back() {
    let mut redis = Redis::start(&[]);
    let store = store_for(redis.server(), TIMEOUT, tls());
    run(async {
        store.set("k".into(), b"v".to_vec(), TTL);
        writes_done(&store).await;
        assert_eq!(store.get("k").await, RedisRead::Found(b"v".to_vec()));
        redis.kill();
        let started = Instant::now();
        assert_eq!(store.get("k").await, RedisRead::Unavailable);
        assert!(started.elapsed() < TIMEOUT + SLACK, "{:?}", started.elapsed());
        assert_eq!(store.stats().errors, 1);
        // Paused: no command is sent, the answer is immediate, writes are dropped.
        let started = Instant::now();
        for _ in 0..100 {
            assert_eq!(store.get("k").await, RedisRead::Unavailable);
        }
        assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
        store.set("k2".into(), b"v".to_vec(), TTL);
        store.delete("k".into());
        let stats = store.stats();
        assert_eq!((stats.skipped, stats.errors, stats.sets_dropped, stats.deletes_dropped), (100, 1, 1, 1));
        assert_eq!(store.writes_under_way(), 0);

        redis.restart();
        assert!(redis.raw(None).call(&[b"SET", b"k", b"again"]).is_ok());
        pause_over(&store).await;
        assert_eq!(store.get("k").await, RedisRead::Found(b"again".to_vec()));
        assert_eq!(store.paused_until(), None);
    });
}

#[test]
fn a_redis_that_does_not_answer_costs_a_read_the_timeout_then_nothing() {
    let redis = Redis::start(&[]);
    let store = store_for(redis.server(), TIMEOUT, tls());
    run(async {
        store.set("k".into(), b"v".to_vec(), TTL);
        writes_done(&store).await;
        redis.signal(libc::SIGSTOP);
        let started = Instant::now();
        assert_eq!(store.get("k").await, RedisRead::Unavailable);
        let took = started.elapsed();
        assert!(took >= TIMEOUT - Duration::from_millis(5) && took < TIMEOUT + SLACK, "{took:?}");
        assert_eq!(store.stats().timeouts, 1);
        // Paused: the next read sends nothing and waits for nothing.
        let started = Instant::now();
        assert_eq!(store.get("k").await, RedisRead::Unavailable);
        assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
        assert_eq!((store.stats().skipped, store.stats().timeouts), (1, 1));
        // A new connection to a stuck Redis is bounded the same way (the kernel accepts it).
        pause_over(&store).await;
        let started = Instant::now();
        assert_eq!(store.get("k").await, RedisRead::Unavailable);
        assert!(started.elapsed() < TIMEOUT + SLACK, "{:?}", started.elapsed());
        assert_eq!(store.stats().timeouts, 2);

        redis.signal(libc::SIGCONT);
        pause_over(&store).await;
        assert_eq!(store.get("k").await, RedisRead::Found(b"v".to_vec()));
    });
}

#[test]
fn writes_beyond_the_bound_are_dropped() {
    let redis = Redis::start(&[]);
    let mut raw = redis.raw(None);
    let store = store_for(redis.server(), TIMEOUT, tls());
    run(async {
        // None of them runs before this task waits: the first WRITES_MAX are under way.
        for i in 0..WRITES_MAX + 36 {
            store.set(format!("k{i}"), b"v".to_vec(), TTL);
        }
        store.delete("k0".into());
        assert_eq!(store.writes_under_way(), WRITES_MAX);
        writes_done(&store).await;
    });
    let stats = store.stats();
    assert_eq!((stats.sets, stats.sets_dropped, stats.deletes_dropped), (WRITES_MAX as u64, 36, 1));
    assert_eq!((stats.errors, stats.timeouts), (0, 0));
    let stored = (0..WRITES_MAX + 36).filter(|i| raw.int(&[b"EXISTS", format!("k{i}").as_bytes()]) == 1).count();
    assert_eq!(stored, WRITES_MAX);
    // Of the connections the burst opened, the store keeps a few (Redis sees the others' close
    // as it comes).
    let deadline = Instant::now() + Duration::from_secs(5);
    while raw.info("connected_clients") != 1 + super::IDLE_MAX as u64 {
        assert!(Instant::now() < deadline, "{} clients connected", raw.info("connected_clients"));
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A CA and a certificate for localhost it signed, as PEM files in a new directory: (CA, the
/// certificate, its key).
fn pki() -> (rustls::pki_types::CertificateDer<'static>, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "pointwork cache tests CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&key, &ca).unwrap();
    let dir = std::env::temp_dir().join(format!("pointwork-cache-redis-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, pem: String| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path.display().to_string()
    };
    (ca.der().clone(), write("redis.pem", cert.pem()), write("redis.key", key.serialize_pem()))
}

#[test]
fn speaks_tls_to_a_rediss_server_it_trusts() {
    let (ca, cert, key) = pki();
    let redis = Redis::start_tls(&cert, &key);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let trusting = TlsConnector::from(std::sync::Arc::new(config));
    let server = RedisServer { tls: true, host: "localhost".into(), ..redis.server() };
    let store = store_for(server.clone(), TIMEOUT, trusting);
    let untrusting = store_for(server, TIMEOUT, tls());
    run(async {
        store.set("k".into(), b"over TLS".to_vec(), TTL);
        writes_done(&store).await;
        assert_eq!(store.get("k").await, RedisRead::Found(b"over TLS".to_vec()));
        assert_eq!(untrusting.get("k").await, RedisRead::Unavailable);
    });
    assert_eq!(store.stats().errors, 0);
    assert_eq!(untrusting.stats().errors, 1);
}

/// A store for `server`, its address resolved as the routes resolve it.
fn store_for(server: RedisServer, timeout: Duration, tls: monoio_rustls::TlsConnector) -> RedisStore {
    RedisStore::new(&super::RedisPlace::new(server), timeout, tls)
}
