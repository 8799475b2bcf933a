"""The real coding agents (tests/agents) straight against `pointwork-mock --agent`: Claude Code on
Anthropic's Messages API, Codex on the Responses API. Each must run the mock's shell command and
bring its output (the marker) back into its final answer; the mock must have seen the paths and
the key the agent was given. The gateway's agent tests build on these (docs/coding-agents-wire.md)."""

from __future__ import annotations

import json

import pytest

from agents import require_agents, run_claude, run_codex
from conftest import _start_mock

CLAUDE_KEY = "sk-ant-agent-direct"
CODEX_KEY = "sk-codex-agent-direct"


@pytest.fixture(scope="module")
def agent_mock():
    require_agents()
    mock = _start_mock("agent", "--agent")
    try:
        yield mock
    finally:
        mock.process.stop()


def _clear(mock) -> None:
    import urllib.request

    request = urllib.request.Request(f"http://{mock.addr}/mock/requests", method="DELETE")
    urllib.request.urlopen(request, timeout=10).read()


def _header(recorded: dict, name: str) -> str | None:
    return next((value for key, value in recorded["headers"] if key.lower() == name), None)


def _report(returncode: int, stdout: str, stderr: str) -> str:
    return f"exit {returncode}\n--- stdout\n{stdout}\n--- stderr\n{stderr[-4000:]}"


def test_claude_code_runs_bash_through_the_messages_api(agent_mock, tmp_path):
    _clear(agent_mock)
    result = run_claude(
        f"http://{agent_mock.addr}", CLAUDE_KEY, "claude-sonnet-4-5", "Run the marker command with Bash.", tmp_path
    )
    returncode, stdout, _ = result
    assert returncode == 0, _report(*result)
    assert "POINTWORK-AGENT-42-messages" in stdout, _report(*result)

    messages = [r for r in agent_mock.requests() if r["path"].split("?")[0] == "/v1/messages"]
    assert len(messages) >= 2, [r["path"] for r in agent_mock.requests()]
    for recorded in messages:
        assert _header(recorded, "x-api-key") == CLAUDE_KEY
        assert _header(recorded, "anthropic-version") == "2023-06-01"
    bodies = [json.loads(r["body"]) for r in messages]
    # The loop: a request offering Bash, then one carrying Bash's result with the marker.
    assert any("Bash" in [tool.get("name") for tool in body.get("tools", [])] for body in bodies)
    results = [
        block
        for body in bodies
        for block in body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert any("POINTWORK-AGENT-42-messages" in json.dumps(block["content"]) for block in results), results


def test_codex_runs_exec_command_through_the_responses_api(agent_mock, tmp_path):
    _clear(agent_mock)
    result = run_codex(
        f"http://{agent_mock.addr}/v1", CODEX_KEY, "gpt-5-codex", "Run the marker command.", tmp_path
    )
    returncode, stdout, _ = result
    assert returncode == 0, _report(*result)
    assert "POINTWORK-AGENT-42-responses" in stdout, _report(*result)

    recorded = agent_mock.requests()
    responses = [r for r in recorded if r["path"] == "/v1/responses"]
    assert len(responses) >= 2, [r["path"] for r in recorded]
    for request in responses:
        assert _header(request, "authorization") == f"Bearer {CODEX_KEY}"
    bodies = [json.loads(r["body"]) for r in responses]
    assert all(body["stream"] is True and body["store"] is False for body in bodies)
    assert any("exec_command" in [tool.get("name") for tool in body["tools"]] for body in bodies)
    outputs = [item for body in bodies for item in body["input"] if item.get("type") == "function_call_output"]
    assert any("POINTWORK-AGENT-42-responses" in item["output"] for item in outputs), outputs
