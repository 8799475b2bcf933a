"""The real coding agents (tests/agents: Claude Code and Codex from npm) through the running
gateway, against `pointwork-mock --agent`, which asks for one shell call and then answers with
what the shell printed. Each test asserts the whole tool loop (the marker the shell printed
reaches the agent's final answer), the upstream path the gateway used, and that the upstream saw
the deployment's key, never the caller's.

Codex speaks only the Responses API: natively to a deployment that serves it, translated to chat
completions for a chat-only `openai/` server (learned on its 404) and for `hosted_vllm/`, and to
Anthropic's Messages API for `anthropic/`. Claude Code speaks Messages: natively to `anthropic/`,
translated to chat completions for `openai/`."""

from __future__ import annotations

import json
import urllib.request

import pytest

from agents import require_agents, run_claude, run_codex
from conftest import Process, _start_gateway, _start_mock

CALLER_KEY = "sk-pointwork-master"
MARKER = "POINTWORK-AGENT-42-"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require_agents()
    started: list[Process] = []
    try:
        mocks = {
            "native": _start_mock("native", "--agent"),
            "chat-only": _start_mock("chat-only", "--agent", "--no-responses"),
            "vllm": _start_mock("vllm", "--agent", "--no-responses"),
            "claude": _start_mock("claude", "--agent"),
        }
        started.extend(m.process for m in mocks.values())

        def entry(group: str, model: str, mock: str) -> str:
            base = f"http://{mocks[mock].addr}" + ("" if model.startswith("anthropic/") else "/v1")
            return f"  - model_name: {group}\n    litellm_params: {{model: {model}, api_base: \"{base}\", api_key: sk-up-{mock}}}\n"

        config = (
            "model_list:\n"
            + entry("codex-native", "openai/gpt-5-codex", "native")
            + entry("codex-chat-only", "openai/qwen-coder", "chat-only")
            + entry("codex-vllm", "hosted_vllm/qwen-coder", "vllm")
            + entry("codex-claude", "anthropic/claude-sonnet-4-5", "claude")
            + entry("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "claude")
            + entry("claude-on-chat", "openai/gpt-4.1", "native")
            + f"general_settings: {{master_key: {CALLER_KEY}}}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("agents"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", mocks
    finally:
        for process in reversed(started):
            process.stop()


def _clear(mock) -> None:
    request = urllib.request.Request(f"http://{mock.addr}/mock/requests", method="DELETE")
    urllib.request.urlopen(request, timeout=10).read()


def _report(result: tuple[int, str, str]) -> str:
    returncode, stdout, stderr = result
    return f"exit {returncode}\n--- stdout\n{stdout}\n--- stderr\n{stderr[-4000:]}"


def _upstream(mock) -> list[tuple[str, str | None]]:
    """(path, credential) of each request the mock saw."""
    seen = []
    for r in mock.requests():
        headers = {k.lower(): v for k, v in r["headers"]}
        seen.append((r["path"].split("?")[0], headers.get("authorization") or headers.get("x-api-key")))
    return seen


@pytest.mark.parametrize(
    "group, mock, paths, surface",
    [
        ("codex-native", "native", {"/v1/responses"}, "responses"),
        ("codex-chat-only", "chat-only", {"/v1/responses", "/v1/chat/completions"}, "chat"),
        ("codex-vllm", "vllm", {"/v1/chat/completions"}, "chat"),
        ("codex-claude", "claude", {"/v1/messages"}, "messages"),
    ],
)
def test_codex_runs_its_shell_through_the_gateway(stack, tmp_path, group, mock, paths, surface):
    url, mocks = stack
    _clear(mocks[mock])
    result = run_codex(f"{url}/v1", CALLER_KEY, group, "Run the marker command.", tmp_path)
    assert result[0] == 0, _report(result)
    assert MARKER + surface in result[1], _report(result)
    seen = _upstream(mocks[mock])
    assert {path for path, _ in seen} == paths, seen
    # The chat-only server's missing /responses is learned once: every later turn goes to chat.
    if mock == "chat-only":
        assert [path for path, _ in seen].count("/v1/responses") == 1, seen
    assert len(seen) >= 2, seen
    for _, credential in seen:
        assert credential in (f"Bearer sk-up-{mock}", f"sk-up-{mock}"), seen
    assert CALLER_KEY not in json.dumps(mocks[mock].requests())


@pytest.mark.parametrize(
    "model, mock, path, surface",
    [
        ("claude-sonnet-4-5", "claude", "/v1/messages", "messages"),
        ("claude-on-chat", "native", "/v1/chat/completions", "chat"),
    ],
)
def test_claude_code_runs_bash_through_the_gateway(stack, tmp_path, model, mock, path, surface):
    url, mocks = stack
    _clear(mocks[mock])
    result = run_claude(url, CALLER_KEY, model, "Run the marker command with Bash.", tmp_path)
    assert result[0] == 0, _report(result)
    assert MARKER + surface in result[1], _report(result)
    seen = _upstream(mocks[mock])
    assert {p for p, _ in seen} == {path}, seen
    assert len(seen) >= 2, seen
    for _, credential in seen:
        assert credential in (f"Bearer sk-up-{mock}", f"sk-up-{mock}"), seen
    assert CALLER_KEY not in json.dumps(mocks[mock].requests())


def _launcher_env(home) -> dict[str, str]:
    """The environment of `pointwork claude|codex` in a test: the agents on PATH, a HOME of its
    own, and Claude Code's switches for a non-interactive run as root with no other host."""
    import os

    from agents import AGENTS_BIN

    return {
        "PATH": f"{AGENTS_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def _launch(args: list[str], env: dict[str, str], cwd) -> tuple[int, str, str]:
    import subprocess

    from conftest import _binary

    done = subprocess.run(
        [str(_binary("POINTWORK_BIN", "pointwork")), *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, done.stdout, done.stderr


def test_pointwork_codex_starts_a_gateway_from_a_config_for_the_session(stack, tmp_path):
    _, mocks = stack
    _clear(mocks["vllm"])
    config = tmp_path / "config.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: coder\n"
        f"    litellm_params: {{model: hosted_vllm/qwen-coder, api_base: \"http://{mocks['vllm'].addr}/v1\", api_key: sk-up-vllm}}\n"
        "general_settings: {master_key: sk-session-master}\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    result = _launch(
        ["codex", "--config", str(config), "--", "exec", "--skip-git-repo-check",
         "--dangerously-bypass-approvals-and-sandbox", "Run the marker command."],
        _launcher_env(home),
        tmp_path,
    )
    assert result[0] == 0, _report(result)
    assert MARKER + "chat" in result[1], _report(result)
    assert "gateway for this session at http://127.0.0.1:" in result[2]
    seen = _upstream(mocks["vllm"])
    assert {p for p, _ in seen} == {"/v1/chat/completions"} and len(seen) >= 2, seen
    assert not (home / ".codex").exists(), "the user's CODEX_HOME is not touched"


def test_pointwork_claude_uses_a_running_gateway(stack, tmp_path):
    url, mocks = stack
    _clear(mocks["native"])
    home = tmp_path / "home"
    home.mkdir()
    result = _launch(
        ["claude", "--url", url, "--key", CALLER_KEY, "--model", "claude-on-chat", "--",
         "-p", "Run the marker command with Bash.", "--output-format", "text",
         "--allowedTools", "Bash", "--dangerously-skip-permissions"],
        _launcher_env(home),
        tmp_path,
    )
    assert result[0] == 0, _report(result)
    assert MARKER + "chat" in result[1], _report(result)
    assert {p for p, _ in _upstream(mocks["native"])} == {"/v1/chat/completions"}


def test_a_missing_agent_gets_one_line_saying_how_to_install_it(tmp_path):
    result = _launch(["codex", "--url", "http://127.0.0.1:9"], {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, tmp_path)
    assert result[0] == 1
    assert result[2].strip() == "pointwork: `codex` was not found on PATH; install it with `npm install -g @openai/codex`"
