//! The walk's two line logs — the decision log (`OPENROUTER_PARETO_ROUTING_LOG`) and the
//! error log (`OPENROUTER_PARETO_ERROR_LOG`) — each written only for rules that ask for it.
//! Files are created owner-only (0600) and never through a symlink; each line is one
//! `write` on an append-only descriptor, so shards write without a lock. A log that cannot
//! be opened is said once on stderr and never fails a request.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::access_log::rfc3339_millis;

pub struct LineLog {
    path: PathBuf,
    /// Opened at the first line (`None`: it could not be).
    file: OnceLock<Option<File>>,
}

impl LineLog {
    pub fn new(path: PathBuf) -> LineLog {
        LineLog { path, file: OnceLock::new() }
    }

    /// Appends `2026-12-01T10:00:00.000Z <text>\n`.
    pub fn line(&self, text: &str) {
        let file = self.file.get_or_init(|| match open(&self.path) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("pointwork: openrouter-pareto: cannot write {}: {e}", self.path.display());
                None
            }
        });
        let Some(mut file) = file.as_ref() else { return };
        let mut line = Vec::with_capacity(32 + text.len());
        rfc3339_millis(&mut line, SystemTime::now());
        line.push(b' ');
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        let _ = file.write_all(&line);
    }
}

fn open(path: &PathBuf) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new().append(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn lines_go_to_an_owner_only_file_and_never_through_a_symlink() {
        let dir = std::env::temp_dir().join(format!("pointwork-linelog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = LineLog::new(dir.join("sub/routing.log"));
        log.line("model=m decision=winner");
        log.line("model=m decision=safe_set");
        let text = std::fs::read_to_string(dir.join("sub/routing.log")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with("Z model=m decision=safe_set"), "{text}");
        let mode = std::fs::metadata(dir.join("sub/routing.log")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let target = dir.join("target");
        std::fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("link.log")).unwrap();
        LineLog::new(dir.join("link.log")).line("x");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "", "a symlink is not followed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
