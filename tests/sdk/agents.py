"""Running the real coding agents (Claude Code and Codex, pinned in tests/agents/package.json)
non-interactively against a base URL: each run in a fresh temporary HOME / CLAUDE_CONFIG_DIR /
CODEX_HOME, with a clean environment (nothing of the user's is read or written), offline except
for the base URL, bounded by a timeout. Not a test file: the tests import it.

The binaries come from tests/agents/node_modules/.bin (`npm ci` there; scripts/test does it).
Without them `require_agents()` skips the calling test, except under CI=true, where it fails."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS_BIN = ROOT / "tests" / "agents" / "node_modules" / ".bin"
TIMEOUT = 180.0  # seconds for one agent run; a mock answers in milliseconds
# What every agent run gets from the caller's environment; everything else is left out.
PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")


def agent_binary(name: str) -> Path:
    return AGENTS_BIN / name


def require_agents() -> None:
    """Skips the calling test when the agents are not installed, or fails it under CI=true."""
    missing = [name for name in ("claude", "codex") if not agent_binary(name).exists()]
    if not missing:
        return
    message = (
        f"{', '.join(missing)} not installed in {AGENTS_BIN}: "
        "run `npm ci --no-audit --no-fund` in tests/agents (scripts/test does)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _base_env(home: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    # Loopback only: no proxy may take the base URL's requests elsewhere.
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path | str, timeout: float) -> tuple[int, str, str]:
    try:
        done = subprocess.run(
            args,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout or ""
        stderr = expired.stderr or ""
        if isinstance(stdout, bytes):
            stdout = stdout.decode(errors="replace")
        if isinstance(stderr, bytes):
            stderr = stderr.decode(errors="replace")
        return -1, stdout, f"{stderr}\n[agents.py: killed after {timeout}s]"
    return done.returncode, done.stdout, done.stderr


def run_claude(
    base_url: str,
    key: str,
    model: str,
    prompt: str,
    cwd: Path | str,
    timeout: float = TIMEOUT,
    extra_args: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """`claude -p PROMPT --output-format text` with the Bash tool allowed and no permission
    prompts, talking Anthropic's Messages API to BASE_URL (without /v1) with `x-api-key: KEY`,
    and `extra_args` (e.g. `--mcp-config FILE`). Returns (returncode, stdout, stderr); stdout is
    the final answer."""
    with tempfile.TemporaryDirectory(prefix="pointwork-claude-") as home:
        env = _base_env(Path(home))
        env.update(
            {
                "CLAUDE_CONFIG_DIR": str(Path(home) / ".claude"),
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": key,
                # No telemetry, error reporting, update checks or other calls to Anthropic's hosts.
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_BUG_COMMAND": "1",
                # --dangerously-skip-permissions refuses to run as root outside a sandbox.
                "IS_SANDBOX": "1",
            }
        )
        args = [
            str(agent_binary("claude")),
            "-p",
            prompt,
            "--output-format",
            "text",
            "--model",
            model,
            "--allowedTools",
            "Bash",
            "--dangerously-skip-permissions",
            *extra_args,
        ]
        return _run(args, env, cwd, timeout)


CODEX_CONFIG = """\
model = "{model}"
model_provider = "pointwork"
# Nothing but the provider: no update checks, no analytics.
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.pointwork]
name = "pointwork"
base_url = "{base_url}"
env_key = "POINTWORK_AGENT_KEY"
wire_api = "{wire_api}"
# One attempt per request: a failure shows at once instead of after retries.
request_max_retries = 0
stream_max_retries = 0
"""


def run_codex(
    base_url: str,
    key: str,
    model: str,
    prompt: str,
    cwd: Path | str,
    wire_api: str = "responses",
    timeout: float = TIMEOUT,
) -> tuple[int, str, str]:
    """`codex exec PROMPT` with the sandbox and approvals bypassed, its provider BASE_URL (with
    /v1: Codex appends /responses) and `Authorization: Bearer KEY`. Codex 0.169 refuses
    `wire_api = "chat"` ("no longer supported"): only "responses" runs. Returns (returncode,
    stdout, stderr); stdout is the final answer, stderr the session log."""
    with tempfile.TemporaryDirectory(prefix="pointwork-codex-") as home:
        codex_home = Path(home) / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(
            CODEX_CONFIG.format(model=model, base_url=base_url, wire_api=wire_api)
        )
        env = _base_env(Path(home))
        env.update({"CODEX_HOME": str(codex_home), "POINTWORK_AGENT_KEY": key})
        args = [
            str(agent_binary("codex")),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--model",
            model,
            prompt,
        ]
        return _run(args, env, cwd, timeout)
