//! `pointwork claude [ARGS…]` and `pointwork codex [ARGS…]`: a coding agent run against a
//! gateway — the one at `--url` (default `http://127.0.0.1:4000`), or one started for the
//! session from `--config` — with the base URL, the key and the model set the way each agent
//! reads them, and nothing of the user's own settings touched:
//!
//! - Claude Code: `ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN` (sent as `Authorization:
//!   Bearer`), `ANTHROPIC_MODEL` and the small model from `--model`; the user's
//!   `ANTHROPIC_API_KEY` is left out of its environment (it would win over the token).
//! - Codex: a temporary `CODEX_HOME` whose `config.toml` names a `pointwork` provider with
//!   `wire_api = "responses"`, its key in `POINTWORK_API_KEY`.
//!
//! The key is `--key`, else `$POINTWORK_API_KEY`, else the config's master key. A gateway
//! started for the session listens on a free loopback port and logs to a file in the session's
//! temporary folder; it stops when the agent exits, whose exit status the command returns.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{Agent, LaunchArgs};
use crate::output::{fail, print_err};

/// The gateway a launcher uses when given neither `--url` nor `--config`.
pub const DEFAULT_URL: &str = "http://127.0.0.1:4000";
/// How long a gateway started from `--config` may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(30);

impl Agent {
    fn binary(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    fn install_hint(self) -> &'static str {
        match self {
            Agent::Claude => "npm install -g @anthropic-ai/claude-code",
            Agent::Codex => "npm install -g @openai/codex",
        }
    }
}

pub fn run(args: &LaunchArgs) -> ExitCode {
    let agent = args.agent;
    let Some(binary) = find_on_path(agent.binary()) else {
        return fail(&format!(
            "`{}` was not found on PATH; install it with `{}`",
            agent.binary(),
            agent.install_hint()
        ));
    };
    let session = match Session::new() {
        Ok(s) => s,
        Err(e) => return fail(&format!("cannot make a temporary folder: {e}")),
    };
    let (url, gateway, config_key, first_model) = match &args.config {
        None => (args.url.clone().unwrap_or_else(|| DEFAULT_URL.to_string()), None, None, None),
        Some(config) => match start_gateway(config, &session.dir) {
            Ok(started) => started,
            Err(why) => return fail(&why),
        },
    };
    let key = args.key.clone().or_else(|| std::env::var("POINTWORK_API_KEY").ok()).or(config_key);
    let key = key.unwrap_or_else(|| "sk-pointwork".to_string());
    let model = args.model.clone().or(first_model);
    let mut command = Command::new(binary);
    command.args(&args.args);
    let prepared = match agent {
        Agent::Claude => {
            prepare_claude(&mut command, &url, &key, model.as_deref());
            Ok(())
        }
        Agent::Codex => prepare_codex(&mut command, &session.dir, &url, &key, model.as_deref()),
    };
    let status = prepared
        .map_err(|e| format!("cannot write Codex's config: {e}"))
        .and_then(|()| command.status().map_err(|e| format!("cannot run `{}`: {e}", agent.binary())));
    if let Some(mut gateway) = gateway {
        let _ = gateway.kill();
        let _ = gateway.wait();
    }
    match status {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(why) => fail(&why),
    }
}

fn prepare_claude(command: &mut Command, url: &str, key: &str, model: Option<&str>) {
    command.env_remove("ANTHROPIC_API_KEY").env("ANTHROPIC_BASE_URL", url).env("ANTHROPIC_AUTH_TOKEN", key);
    if let Some(model) = model {
        command.env("ANTHROPIC_MODEL", model).env("ANTHROPIC_SMALL_FAST_MODEL", model);
        command.env("ANTHROPIC_DEFAULT_HAIKU_MODEL", model);
    }
}

fn prepare_codex(command: &mut Command, dir: &Path, url: &str, key: &str, model: Option<&str>) -> std::io::Result<()> {
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("config.toml"), codex_config(url, model))?;
    command.env("CODEX_HOME", &home).env("POINTWORK_API_KEY", key);
    Ok(())
}

/// Codex's `config.toml`: the gateway as its model provider, over the Responses API.
fn codex_config(url: &str, model: Option<&str>) -> String {
    let quoted = |s: &str| serde_json::Value::from(s).to_string();
    // The session's Codex talks to the gateway alone: no update check, no analytics elsewhere.
    let mut config = String::from("model_provider = \"pointwork\"\ncheck_for_update_on_startup = false\n");
    if let Some(model) = model {
        config.push_str(&format!("model = {}\n", quoted(model)));
    }
    let base_url = format!("{}/v1", url.trim_end_matches('/'));
    config.push_str(&format!(
        "\n[analytics]\nenabled = false\n\n[model_providers.pointwork]\nname = \"Pointwork\"\nbase_url = {}\nenv_key = \"POINTWORK_API_KEY\"\nwire_api = \"responses\"\n",
        quoted(&base_url)
    ));
    config
}

/// `pointwork serve` on `config` on a free loopback port, its output in `dir/gateway.log`:
/// the URL it listens on, the process, the config's master key and its first model name.
type Started = (String, Option<Child>, Option<String>, Option<String>);

fn start_gateway(config: &Path, dir: &Path) -> Result<Started, String> {
    let loaded = pointwork_config::load_file(config).map_err(|e| e.to_string())?;
    let master_key = loaded.config.master_key.clone();
    let first_model = loaded.config.deployments.first().map(|d| d.model_name.clone());
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the pointwork binary: {e}"))?;
    let log_path = dir.join("gateway.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let mut child = Command::new(exe)
        .args(["serve", "--config"])
        .arg(config)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log.try_clone().map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("cannot start the gateway: {e}"))?;
    let stdout = child.stdout.take().ok_or("the gateway's output is not readable")?;
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads the listening line, then copies the rest (the access log) to the log file.
    std::thread::spawn(move || {
        let mut log = log;
        let mut told = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !told {
                if let Some(url) = line.split("listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                    told = true;
                }
            }
            let _ = std::io::Write::write_all(&mut log, format!("{line}\n").as_bytes());
        }
    });
    let deadline = Instant::now() + START_TIMEOUT;
    let url = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    let Ok(url) = url else {
        let _ = child.kill();
        let _ = child.wait();
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        return Err(format!("the gateway did not start: {}", log.trim()));
    };
    print_err(format_args!("pointwork: gateway for this session at {url}, its log in {}", log_path.display()));
    Ok((url, Some(child), master_key, first_model))
}

/// The first executable `name` on `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The session's temporary folder, removed when the session ends.
struct Session {
    dir: PathBuf,
}

impl Session {
    fn new() -> std::io::Result<Session> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("pointwork-agent-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Session { dir })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_config_names_the_gateway_over_the_responses_api() {
        let config = codex_config("http://127.0.0.1:4000/", Some("gpt-5 \"x\""));
        assert!(config.contains("model_provider = \"pointwork\"\n"));
        assert!(config.contains("\nmodel = \"gpt-5 \\\"x\\\"\"\n"), "{config}");
        assert!(config.contains("base_url = \"http://127.0.0.1:4000/v1\"\n"));
        assert!(config.contains("wire_api = \"responses\"\n") && config.contains("env_key = \"POINTWORK_API_KEY\"\n"));
    }
}
