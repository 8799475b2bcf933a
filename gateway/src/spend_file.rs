//! `pointwork.auth.spend_file`: the virtual keys' spend kept across restarts, so that a deploy
//! does not hand every key a fresh budget. Read once at start; written by the control thread a
//! few seconds after spend changed and when the process exits.
//!
//! The file is JSON, keyed by each key's SHA-256 (as in the config; never a key):
//! `{"keys":{"9f86…":{"name":"team-a","period":20576,"micros":1250000}}}` — `period` is the
//! budget period the spend belongs to, as the meter keeps it, so that spend of a period that has
//! ended counts for nothing. It is written owner-only (0600) to a new file in the same folder,
//! then renamed over the old one (a reader never sees half a file), and never through a symlink.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::keys::Keys;

/// How long after a change the file is written (spend changes with every response).
const SAVE_EVERY: Duration = Duration::from_secs(2);

#[derive(Serialize, Deserialize, Default)]
struct Contents {
    keys: BTreeMap<String, Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    /// For people reading the file; the digest is what matches.
    name: String,
    period: u64,
    micros: u64,
}

pub struct SpendFile {
    path: PathBuf,
    last_check: Instant,
    /// What the file holds now, to skip writing the same again.
    written: Vec<u8>,
}

impl SpendFile {
    /// Reads `path` (a missing file is an empty one) into the keys' meters.
    pub fn open(path: &Path, keys: &Keys) -> Result<SpendFile, String> {
        let label = path.display();
        let text = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path) {
            Ok(mut f) => {
                let mut text = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut text).map_err(|e| format!("{label}: {e}"))?;
                text
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(format!("{label} is a symlink; refusing to follow it"));
            }
            Err(e) => return Err(format!("{label}: {e}")),
        };
        if !text.is_empty() {
            let contents: Contents = serde_json::from_slice(&text)
                .map_err(|e| format!("{label}: not a spend file ({e}); move it away to start over"))?;
            for key in keys.virtual_keys() {
                if let Some(entry) = contents.keys.get(&key.digest_hex()) {
                    key.meter.restore_spend(entry.period, entry.micros);
                }
            }
        }
        Ok(SpendFile { path: path.to_path_buf(), last_check: Instant::now(), written: text })
    }

    /// Writes the file when a few seconds passed since the last look and the spend changed.
    pub fn save_if_due(&mut self, keys: &Keys) {
        if self.last_check.elapsed() >= SAVE_EVERY {
            self.save(keys);
        }
    }

    /// Writes the file now if the spend changed; a failure is logged, never fatal.
    pub fn save(&mut self, keys: &Keys) {
        self.last_check = Instant::now();
        let mut contents = Contents::default();
        for key in keys.virtual_keys().filter(|k| k.limits.max_budget.is_some()) {
            let (period, micros) = key.meter.spend_record();
            contents.keys.insert(key.digest_hex(), Entry { name: key.name.clone(), period, micros });
        }
        let Ok(bytes) = serde_json::to_vec_pretty(&contents) else { return };
        if bytes == self.written {
            return;
        }
        match write_replacing(&self.path, &bytes) {
            Ok(()) => self.written = bytes,
            Err(e) => eprintln!("pointwork: cannot write pointwork.auth.spend_file {}: {e}", self.path.display()),
        }
    }
}

/// Writes `bytes` to a new owner-only file beside `path`, then renames it over `path`.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    let _ = std::fs::remove_file(&temp);
    let mut f =
        OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(&temp)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}
