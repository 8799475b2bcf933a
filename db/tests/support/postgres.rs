//! A real PostgreSQL (Debian's `postgresql` package) for the database tests, started in a
//! temporary folder on a free loopback port, and LiteLLM's real schema: the SQL migrations of
//! the PyPI package `litellm-proxy-extras` (pinned in tests/sdk/requirements.txt, installed into
//! `.venv` by scripts/test), applied in order. Nothing is mocked.
//!
//! As root (CI), the server runs as the `postgres` user the package creates: PostgreSQL
//! refuses to run as root.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Postgres {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Postgres {
    /// A new cluster with a `litellm_template` database carrying LiteLLM's schema.
    pub fn start() -> Postgres {
        // A folder of its own: a port number (free now) may come back to another test at once.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pointwork-pg-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut pg = Postgres { port: free_port(), dir, child: None };
        if is_root() {
            run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&pg.dir));
        }
        let data = pg.dir.join("data");
        pg.as_owner(&bin("initdb"))
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .status()
            .map(|s| assert!(s.success(), "initdb failed"))
            .unwrap_or_else(|e| {
                panic!("cannot run initdb ({e}): install PostgreSQL (`apt-get install postgresql`; scripts/test does)")
            });
        pg.start_again();
        pg.psql("postgres", "CREATE DATABASE litellm_template");
        let migrations = migrations_dir();
        let mut all = String::new();
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&migrations).unwrap().map(|e| e.unwrap().path()).collect();
        dirs.retain(|d| d.join("migration.sql").is_file());
        dirs.sort();
        for d in &dirs {
            all.push_str(&std::fs::read_to_string(d.join("migration.sql")).unwrap());
            all.push_str("\n;\n");
        }
        let file = pg.dir.join("litellm-migrations.sql");
        std::fs::write(&file, all).unwrap();
        let out = Command::new("psql")
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres", "-p", &pg.port.to_string()])
            .args(["-d", "litellm_template", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "LiteLLM's migrations failed: {}", String::from_utf8_lossy(&out.stderr));
        pg
    }

    /// A fresh database with LiteLLM's schema; its URL.
    pub fn litellm_database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name} TEMPLATE litellm_template"));
        self.url(name)
    }

    /// A fresh empty database; its URL.
    pub fn empty_database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Inserts a key row the way LiteLLM's `/key/generate` leaves it (`token` the SHA-256 hex of
    /// `key`, `key_name` `sk-...` and its last four); `columns` adds more (`, blocked` →
    /// `, true`).
    #[allow(dead_code)] // Not every test binary that includes this file inserts keys.
    pub fn insert_key(&self, db: &str, key: &str, columns: &str, values: &str) {
        use sha2::{Digest, Sha256};
        let token: String = Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("sk-...{}", &key[key.len() - 4..]);
        self.psql(
            db,
            &format!(
                "INSERT INTO \"LiteLLM_VerificationToken\" (token, key_name, models, spend{columns}) \
                 VALUES ('{token}', '{name}', '{{}}', 0{values})"
            ),
        );
    }

    /// Runs `sql` with psql; its output unaligned, tuples only (`a|b` per row).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres"])
            .args(["-p", &self.port.to_string(), "-d", db, "-c", sql])
            .output()
            .expect("psql");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`: clients see their connections die).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = self
                .as_owner(&bin("pg_ctl"))
                .args(["stop", "-m", "immediate", "-D"])
                .arg(self.dir.join("data"))
                .stdout(Stdio::null())
                .status();
            let _ = child.wait();
        }
    }

    /// Starts the server (again) on the same port; returns once it accepts connections.
    pub fn start_again(&mut self) {
        let child = self
            .as_owner(&bin("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "full_page_writes=off", "-c", "max_connections=200"])
            .arg("-k")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("postgres");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let ready = Command::new(bin("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("postgres on port {} did not start within 30 s", self.port);
    }

    fn as_owner(&self, program: &Path) -> Command {
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where LiteLLM's migrations are: `POINTWORK_LITELLM_MIGRATIONS`, else the package in the
/// repository's `.venv`.
fn migrations_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("POINTWORK_LITELLM_MIGRATIONS") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().find(|p| p.join(".venv").is_dir());
    let lib = root.map(|r| r.join(".venv/lib"));
    let found = lib.and_then(|lib| std::fs::read_dir(lib).ok()).into_iter().flatten().flatten().find_map(|py| {
        let dir = py.path().join("site-packages/litellm_proxy_extras/migrations");
        dir.is_dir().then_some(dir)
    });
    found.unwrap_or_else(|| {
        panic!("LiteLLM's migrations not found: run scripts/test once (it installs litellm-proxy-extras into .venv), or set POINTWORK_LITELLM_MIGRATIONS")
    })
}

/// The newest PostgreSQL's programs (`POINTWORK_PG_BIN`, else /usr/lib/postgresql/<v>/bin).
fn bin(name: &str) -> PathBuf {
    if let Ok(dir) = std::env::var("POINTWORK_PG_BIN") {
        return Path::new(&dir).join(name);
    }
    let mut versions: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    versions.sort_by_key(|p| p.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<u32>().ok()));
    versions.last().map(|v| v.join("bin").join(name)).unwrap_or_else(|| PathBuf::from(name))
}

fn is_root() -> bool {
    // SAFETY-free: geteuid via the id command would spawn; read /proc instead.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn run(command: &mut Command) {
    let status = command.status().expect("command");
    assert!(status.success(), "{command:?} failed");
}
