"""The MCP gateway when servers fail or change, through the official `mcp` SDK's client: an HTTP
server killed mid-call and started again, a stdio server that crashes and is restarted, a server
slower than its `timeout`, and a reload that changes `mcp_servers` under open sessions. Each test
has its own `pointwork serve --shards 2` and servers (tests/mcp)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
import urllib.request
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from mcp_stack import (
    MASTER,
    McpHttpServer,
    deadline_wait,
    http_entry,
    master,
    rpc_method,
    run,
    session,
    start_gateway,
    stdio_entry,
    text_of,
)

KEYS = f"general_settings:\n  master_key: {MASTER}\n"


@pytest.fixture
def started():
    processes = []
    yield processes
    for process in reversed(processes):
        process.stop()


def gone(pid: int) -> bool:
    """Whether process `pid` has exited and been reaped (no zombie left)."""
    return not os.path.exists(f"/proc/{pid}")


def test_a_server_killed_mid_session_fails_its_calls_and_comes_back(tmp_path, started):
    web = McpHttpServer(tmp_path, "web")
    started.append(web.process)
    gateway = start_gateway("mcp_servers:\n" + http_entry("web", web) + stdio_entry("local") + KEYS, tmp_path, started)

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            assert text_of(await s.call_tool("web-echo", {"text": "before"})) == "before"
            in_flight = asyncio.Event()

            async def on_progress(done, total, message):
                in_flight.set()

            slow = asyncio.create_task(
                s.call_tool("web-slow", {"seconds": 60, "steps": 60}, progress_callback=on_progress)
            )
            await asyncio.wait_for(in_flight.wait(), 10)
            await asyncio.to_thread(web.kill)
            killed = time.monotonic()
            result = await asyncio.wait_for(slow, 10)
            assert result.is_error and "web" in text_of(result), result
            assert time.monotonic() - killed < 2, "the call in flight fails when its server dies"

            down = await s.call_tool("web-echo", {"text": "while down"})
            assert down.is_error and "MCP server web" in text_of(down), down
            assert text_of(await s.call_tool("local-upper", {"text": "still here"})) == "STILL HERE"
            names = {t.name for t in (await s.list_tools()).tools}
            assert "local-upper" in names and not any(n.startswith("web-") for n in names), names

            await asyncio.to_thread(web.start)  # the same port
            started.append(web.process)
            assert text_of(await s.call_tool("web-echo", {"text": "after"})) == "after"
            names = {t.name for t in (await s.list_tools()).tools}
            assert "web-echo" in names and "local-upper" in names

    run(go())
    reopened = [r for r in web.requests() if rpc_method(r) == "initialize"]
    assert len(reopened) >= 2, "the gateway opened a new session with the restarted server"


def test_a_crashed_stdio_server_is_restarted(tmp_path, started):
    gateway = start_gateway("mcp_servers:\n" + stdio_entry("local") + KEYS, tmp_path, started)
    restarts = 'pointwork_mcp_server_restarts_total{server="local"}'

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            first = int(text_of(await s.call_tool("local-pid", {})))
            assert gateway.metric(restarts) == 0
            crashed = await s.call_tool("local-crash", {})
            assert crashed.is_error and "MCP server local" in text_of(crashed), crashed
            second = int(text_of(await s.call_tool("local-pid", {})))
            assert second != first
            assert text_of(await s.call_tool("local-upper", {"text": "again"})) == "AGAIN"
            return first

    first = run(go())
    assert gateway.metric(restarts) == 1
    assert gateway.metric('pointwork_mcp_server_up{server="local",transport="stdio"}') == 1
    assert gone(first), "the crashed child was reaped"
    log = deadline_wait(lambda: "".join(gateway.process.stderr_text).count("stdio test server") >= 2, "two starts logged")
    assert log


def test_a_server_slower_than_its_timeout_is_a_tool_error_and_cancelled(tmp_path, started):
    web = McpHttpServer(tmp_path, "web")
    started.append(web.process)
    config = "mcp_servers:\n" + http_entry("tight", web, "    timeout: 1\n") + stdio_entry("local") + KEYS
    gateway = start_gateway(config, tmp_path, started)

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            began = time.monotonic()
            result = await s.call_tool("tight-slow", {"seconds": 5, "steps": 1})
            took = time.monotonic() - began
            assert result.is_error and "MCP server tight" in text_of(result), result
            assert 0.9 < took < 4, took
            assert text_of(await s.call_tool("local-upper", {"text": "unaffected"})) == "UNAFFECTED"
            assert text_of(await s.call_tool("tight-echo", {"text": "fast is fine"})) == "fast is fine"

    run(go())
    call = web.wait_for(
        lambda r: rpc_method(r) == "tools/call" and r["body"]["params"]["name"] == "slow", "the slow call"
    )
    cancelled = web.wait_for(lambda r: rpc_method(r) == "notifications/cancelled", "the cancellation")
    assert cancelled["body"]["params"]["requestId"] == call["body"]["id"]
    assert cancelled["headers"]["mcp-session-id"] == call["headers"]["mcp-session-id"]
    series = 'pointwork_mcp_requests_total{server="tight",method="tools/call",tool="slow",outcome="failed"}'
    assert gateway.metric(series) == 1


def test_a_reload_changes_the_servers_of_new_requests_and_lets_open_calls_finish(tmp_path, started):
    web = McpHttpServer(tmp_path, "web")
    started.append(web.process)
    other = McpHttpServer(tmp_path, "other")
    started.append(other.process)
    gateway = start_gateway("mcp_servers:\n" + http_entry("web", web) + stdio_entry("local") + KEYS, tmp_path, started)
    config_path: Path = gateway.config_path

    def reload(config: str) -> None:
        text = config_path.read_text()
        config_path.write_text(text[: text.index("mcp_servers:\n")] + config)
        status, _, body = gateway.post("/admin/reload", {}, {"authorization": f"Bearer {MASTER}"})
        assert status == 200, body

    # A raw session's GET stream, open before the reload: the reload's list_changed comes on it.
    listening = open_stream(gateway, gateway.initialize(headers=master()))

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as old:
            names = {t.name for t in (await old.list_tools()).tools}
            assert "local-upper" in names and "web-echo" in names
            child = int(text_of(await old.call_tool("local-pid", {})))
            in_flight = asyncio.Event()

            async def on_progress(done, total, message):
                in_flight.set()

            slow = asyncio.create_task(
                old.call_tool("web-slow", {"seconds": 1.5, "steps": 3}, progress_callback=on_progress)
            )
            await asyncio.wait_for(in_flight.wait(), 10)
            await asyncio.to_thread(reload, "mcp_servers:\n" + http_entry("other", other) + KEYS)
            finished = await asyncio.wait_for(slow, 10)
            assert not finished.is_error and text_of(finished) == "done after 3 steps", "an open call finishes"

            async with session(f"{gateway.url}/mcp", master()) as new:
                names = {t.name for t in (await new.list_tools()).tools}
                assert "other-echo" in names and all(n.startswith("other-") for n in names), names
                assert text_of(await new.call_tool("other-echo", {"text": "new set"})) == "new set"
                for removed in ("local-upper", "web-echo"):
                    with pytest.raises(MCPError) as e:
                        await new.call_tool(removed, {"text": "x"})
                    assert e.value.error.code == -32602 and removed in e.value.error.message
            # The open session's next requests see the new set too.
            names = {t.name for t in (await old.list_tools()).tools}
            assert all(n.startswith("other-") for n in names), names
            return child

    child = run(go())
    pushed = listening.messages(3)
    assert [m["method"] for m in pushed] == [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ], pushed
    deadline_wait(lambda: gone(child), "the removed stdio server's child stopped and reaped")
    assert gateway.metric('pointwork_mcp_server_up{server="other",transport="http"}') == 1
    assert gateway.metric('pointwork_mcp_server_up{server="local",transport="stdio"}') is None
    # The removed HTTP server's session was ended (DELETE) once its call had finished.
    web.wait_for(lambda r: r["method"] == "DELETE", "the old session's DELETE")
    assert any(rpc_method(r) == "tools/call" for r in other.requests())
    assert json.dumps(other.requests()).count(MASTER) == 0


class Stream:
    """A session's `GET /mcp` stream, read on a thread: its `message` events' data, in order."""

    def __init__(self, response):
        self.events: "queue.Queue[dict | None]" = queue.Queue()
        self.response = response
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.response:
            line = line.decode().rstrip("\r\n")
            if line.startswith("data: "):
                self.events.put(json.loads(line[len("data: "):]))
        self.events.put(None)

    def messages(self, n: int, within: float = 10.0) -> list[dict]:
        got = []
        for _ in range(n):
            message = self.events.get(timeout=within)
            assert message is not None, f"the stream ended after {got}"
            got.append(message)
        return got


def open_stream(gateway, session_id: str) -> Stream:
    request = urllib.request.Request(
        f"{gateway.url}/mcp",
        headers={**master(), "mcp-session-id": session_id, "accept": "text/event-stream"},
        method="GET",
    )
    response = urllib.request.urlopen(request, timeout=30)
    assert response.status == 200 and response.headers["content-type"] == "text/event-stream"
    return Stream(response)
