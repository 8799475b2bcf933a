//! The config loader (`pointwork_config::load_str`) on YAML text.
//!
//! A refused config names at least one error, each with a key path and a message; an accepted
//! one is consistent (one info per deployment, its warning count), says why when it serves no
//! model, and builds a routing snapshot.
//! `os.environ/` references resolve against a fixed fake environment.
//!
//! Includes and `pointwork.model_cost_map` read files: relative paths resolve against a folder
//! that does not exist (so they fail without reading anything), and a text that could give them
//! an absolute path is skipped, so that the fuzzer never opens a device such as `/dev/zero`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pointwork_config::load_str;

const NO_SUCH_DIR: &str = "/nonexistent/pointwork-fuzz";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if could_read_a_file(text) {
        return;
    }
    let env = |name: &str| (name.len() % 3 != 0).then(|| format!("value-of-{name}"));
    match load_str(text, Path::new(NO_SUCH_DIR), &env) {
        Err(errors) => {
            assert!(!errors.0.is_empty(), "refused without an error");
            for e in &errors.0 {
                assert!(!e.path.is_empty() && !e.message.is_empty(), "an error without its path or message: {e:?}");
            }
        }
        Ok(loaded) => {
            let config = &loaded.config;
            assert_eq!(config.deployments.len(), config.deployment_info.len());
            assert_eq!(config.warning_count, loaded.warnings.len());
            // A config that serves no model loads only when it says why (every entry left out,
            // models stored in a database).
            let stored = config.database.as_ref().is_some_and(|d| d.store_model_in_db);
            assert!(
                !config.deployments.is_empty() || !config.left_out.is_empty() || stored || !loaded.warnings.is_empty(),
                "a config without a deployment accepted silently"
            );
            assert!(config.files.is_empty(), "a text config read a file: {:?}", config.files);
            if let Err(e) = config.snapshot() {
                panic!("an accepted config has no snapshot: {e}");
            }
        }
    }
});

/// Whether the text could name an absolute path for a key that reads a file. A key is spelled
/// out unless escaped (`"\x69nclude"`); a `/` is written, escaped (`\x2f`, `\u002F`, `\/`), or
/// hidden in a tagged scalar (`!!binary`).
fn could_read_a_file(text: &str) -> bool {
    let names_a_file_key = ["include", "model_cost_map"].iter().any(|k| text.contains(k)) || text.contains('\\');
    let lower = text.to_ascii_lowercase();
    let escaped_slash = ["\\x2f", "\\u002f", "\\u0000002f", "\\/"].iter().any(|e| lower.contains(e));
    names_a_file_key && (text.contains('/') || escaped_slash || text.contains('!'))
}
