"""Claude Code (tests/agents, from npm) using a tool through the gateway's MCP endpoint: its
`--mcp-config` names Pointwork's `/mcp` with the gateway's key, its model is an Anthropic
deployment on `pointwork-mock --agent-tool`, which asks for the MCP tool and then answers with
what the tool returned. The tool is the test HTTP server's `whoami` (tests/mcp/http_server.py),
which returns the credentials it received: the tool loop's final answer carries the server's
configured token, and the server's own record shows the call came with that token and never
with the caller's key."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agents import require_agents, run_claude
from conftest import ROOT, Process, _start_gateway, _start_mock

CALLER_KEY = "sk-pointwork-master-mcp"
UPSTREAM_TOKEN = "sk-mcp-upstream-7f3a"
# Claude Code names an MCP tool mcp__<server in --mcp-config>__<tool>.
TOOL = "mcp__pointwork__web-whoami"


def _start_mcp_server(record: Path) -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "mcp" / "http_server.py"), "--port", "0", "--record", str(record)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line.startswith("ready "), f"the MCP server did not start: {line!r}"
    # Keep its stdout drained so that it never blocks on a full pipe.
    threading.Thread(target=server.stdout.read, daemon=True).start()
    return server, int(line.split()[1])


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require_agents()
    directory = tmp_path_factory.mktemp("agents-mcp")
    record = directory / "mcp-requests.jsonl"
    started: list[Process] = []
    server, port = _start_mcp_server(record)
    try:
        mock = _start_mock("claude", "--agent-tool", TOOL)
        started.append(mock.process)
        config = (
            "model_list:\n"
            "  - model_name: claude-sonnet-4-5\n"
            f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{mock.addr}\", api_key: sk-up-claude}}\n"
            "mcp_servers:\n"
            "  web:\n"
            f"    url: http://127.0.0.1:{port}/mcp\n"
            "    auth_type: bearer_token\n"
            f"    auth_value: {UPSTREAM_TOKEN}\n"
            f"general_settings: {{master_key: {CALLER_KEY}}}\n"
        )
        gateway = _start_gateway(config, directory, ("--shards", "2"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", mock, record, directory
    finally:
        for process in reversed(started):
            process.stop()
        server.kill()
        server.wait(timeout=10)


def test_claude_code_calls_an_mcp_tool_through_the_gateway(stack, tmp_path):
    url, mock, record, directory = stack
    mcp_config = directory / "mcp.json"
    mcp_config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "pointwork": {
                        "type": "http",
                        "url": f"{url}/mcp",
                        "headers": {"x-litellm-api-key": f"Bearer {CALLER_KEY}"},
                    }
                }
            }
        )
    )
    code, out, err = run_claude(
        url,
        CALLER_KEY,
        "claude-sonnet-4-5",
        "Ask the whoami tool who you are.",
        tmp_path,
        extra_args=("--mcp-config", str(mcp_config), "--strict-mcp-config"),
    )
    assert code == 0, f"claude exited {code}: {err[-2000:]}"
    # The tool's answer went back to the model, and the model's report is the final answer.
    assert UPSTREAM_TOKEN in out, out

    # The model was asked to call the namespaced tool, through the gateway, on the mock.
    messages = [r for r in mock.requests() if r["path"] == "/v1/messages"]
    offered = [t.get("name") for r in messages for t in json.loads(r["body"] or "{}").get("tools", [])]
    assert TOOL in offered, offered

    # The MCP server got the call with its own token, never the caller's key.
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    calls = [r for r in seen if isinstance(r["body"], dict) and r["body"].get("method") == "tools/call"]
    assert [c["body"]["params"]["name"] for c in calls] == ["whoami"], calls
    for request in seen:
        assert request["headers"].get("authorization") == f"Bearer {UPSTREAM_TOKEN}", request
        assert CALLER_KEY not in json.dumps(request), request
