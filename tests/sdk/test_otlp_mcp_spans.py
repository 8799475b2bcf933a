"""MCP requests the gateway sends on to a server, as OpenTelemetry spans: `pointwork serve` with
one `mcp_servers` entry (a real MCP server over Streamable HTTP, written with the official `mcp`
SDK) and LiteLLM's OTLP exporter settings, read by the real OTLP/HTTP receiver. Calls go through
`/mcp-rest/tools/call` and through an `/mcp` session, each with the caller's trace context."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import pytest

from conftest import Process, _deployment, _start_gateway, _start_mock
from otlp_receiver import OtlpReceiver, attributes

MASTER = "sk-otel-mcp-master-41c2"
SERVER_SECRET = "mcp-server-token-9e0d"
TRACE_ID, PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

# A tiny MCP server: bound and listening before it says where, so no request can come too early.
MCP_SERVER = """
import socket
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("otel-tools")


@server.tool()
def echo(text: str) -> str:
    return text


@server.tool()
def fail() -> str:
    raise RuntimeError("the tool failed on purpose")


app = server.streamable_http_app(json_response=True)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""


@pytest.fixture(scope="module")
def mcp_traced(tmp_path_factory):
    receiver = OtlpReceiver()
    started = []
    try:
        directory = tmp_path_factory.mktemp("otel-mcp")
        script = directory / "mcp_server.py"
        script.write_text(MCP_SERVER)
        tools = Process("mcp server", [sys.executable, str(script)])
        started.append(tools)
        tools_addr = tools.wait_for_address()
        alpha = _start_mock("alpha")
        started.append(alpha.process)
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini-alpha", "openai/gpt-4o-mini", alpha)
            + "mcp_servers:\n"
            + "  tools_box:\n"
            + f"    url: http://{tools_addr}/mcp\n"
            + "    transport: http\n"
            + "    auth_type: bearer_token\n"
            + f"    auth_value: {SERVER_SECRET}\n"
            + f"general_settings:\n  master_key: {MASTER}\n"
            + "litellm_settings:\n  callbacks: [\"otel\"]\n"
        )
        env = {"OTEL_EXPORTER": "otlp_http", "OTEL_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "mcp-edge"}
        gateway = _start_gateway(config, directory, env=env)
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", receiver
    finally:
        receiver.close()
        for process in reversed(started):
            process.stop()


def _post(url: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, dict(response.headers), json.loads(text) if text else {}
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read().decode() or "{}")


def _span_of(receiver: OtlpReceiver, trace_id: str, name: str):
    def find():
        return next(
            (s for s in receiver.server_spans() if s.trace_id.hex() == trace_id and s.name == name),
            None,
        )

    return receiver.wait_for(find, f"the span {name!r} of trace {trace_id}")


def test_a_rest_tool_call_is_a_server_span_in_the_callers_trace(mcp_traced):
    url, receiver = mcp_traced
    status, _, body = _post(
        f"{url}/mcp-rest/tools/call",
        {"server_id": "tools_box", "name": "echo", "arguments": {"text": "hello spans"}},
        {
            "authorization": f"Bearer {MASTER}",
            "traceparent": f"00-{TRACE_ID}-{PARENT}-01",
            "tracestate": "congo=t61rcWkgMzE",
        },
    )
    assert status == 200, body
    assert "hello spans" in json.dumps(body)
    span = _span_of(receiver, TRACE_ID, "tools/call echo")
    assert span.kind == span.SPAN_KIND_SERVER
    assert span.parent_span_id.hex() == PARENT
    assert span.trace_state == "congo=t61rcWkgMzE"
    assert span.start_time_unix_nano < span.end_time_unix_nano
    a = attributes(span)
    assert a["mcp.method.name"] == "tools/call"
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["gen_ai.tool.name"] == "echo"
    assert a["pointwork.mcp.server"] == "tools_box"
    assert a["pointwork.mcp.transport"] == "http"
    assert a["pointwork.mcp.outcome"] == "ok"
    assert a["pointwork.key_alias"] == "master"
    assert a["url.path"] == "/mcp-rest/tools/call"
    assert "mcp.session.id" not in a and "error.type" not in a, "a REST call has no session"
    assert span.status.code == span.status.STATUS_CODE_UNSET
    exported = b"".join(receiver.raw)
    assert MASTER.encode() not in exported and SERVER_SECRET.encode() not in exported
    assert b"hello spans" not in exported, "a tool's arguments and output are content"


def test_a_failing_tool_is_an_error_span(mcp_traced):
    url, receiver = mcp_traced
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    status, _, body = _post(
        f"{url}/mcp-rest/tools/call",
        {"server_id": "tools_box", "name": "fail", "arguments": {}},
        {"authorization": f"Bearer {MASTER}", "traceparent": f"00-{trace_id}-b7ad6b7169203331-01"},
    )
    assert status == 200 and body.get("isError") is True, body
    span = _span_of(receiver, trace_id, "tools/call fail")
    a = attributes(span)
    assert a["error.type"] == "tool_error"
    assert a["pointwork.mcp.outcome"] == "tool_error"
    assert span.status.code == span.status.STATUS_CODE_ERROR


def test_a_session_call_takes_its_trace_from_params_meta(mcp_traced):
    url, receiver = mcp_traced
    auth = {"authorization": f"Bearer {MASTER}", "accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    status, headers, _ = _post(f"{url}/mcp", initialize, auth)
    assert status == 200
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    in_session = {**auth, "mcp-session-id": session, "accept": "application/json"}
    _post(f"{url}/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, in_session)
    meta_trace = "5e2a1b7c9d3f4e6a8b0c1d2e3f405162"
    call = {
        "jsonrpc": "2.0",
        "id": "call-9",
        "method": "tools/call",
        "params": {
            "name": "tools_box-echo",
            "arguments": {"text": "via session"},
            "_meta": {"traceparent": f"00-{meta_trace}-1111222233334444-01"},
        },
    }
    # The HTTP header names another trace: the message's own context wins.
    status, _, body = _post(f"{url}/mcp", call, {**in_session, "traceparent": f"00-{TRACE_ID}-{PARENT}-01"})
    assert status == 200 and "via session" in json.dumps(body), body
    span = _span_of(receiver, meta_trace, "tools/call echo")
    assert span.parent_span_id.hex() == "1111222233334444"
    a = attributes(span)
    assert a["mcp.session.id"] == session
    assert a["jsonrpc.request.id"] == "call-9"
    assert a["url.path"] == "/mcp"
