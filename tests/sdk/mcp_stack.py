"""What the MCP gateway's tests share: the test MCP servers of tests/mcp as real processes
(`http_server.py` over Streamable HTTP or SSE, recording what it receives; `stdio_server.py`
started by the gateway itself), `pointwork serve` in front of them, and two clients: the official
`mcp` SDK's (`session`) and plain JSON-RPC over HTTP (`post`, for what an SDK never sends)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import queue
import re
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import READY_DEADLINE, Process, _start_gateway

ROOT = Path(__file__).resolve().parents[2]
HTTP_SERVER = ROOT / "tests" / "mcp" / "http_server.py"
STDIO_SERVER = ROOT / "tests" / "mcp" / "stdio_server.py"

MASTER = "sk-mcp-master-7d41"
ONLY_WEB = "sk-mcp-only-web-0b6e"
SECRET = "web-server-secret-5c2f"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def sha256(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def deadline_wait(check, what: str, within: float = 10.0):
    """Polls `check` until it returns something truthy (only for what no event announces: a
    file a process appends to, a metric)."""
    end = time.monotonic() + within
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < end, f"not within {within}s: {what}"
        time.sleep(0.02)


class McpHttpServer:
    """tests/mcp/http_server.py as a process, recording every request into `record`."""

    def __init__(self, directory: Path, name: str, transport: str = "http", port: int = 0):
        self.directory, self.name, self.transport = directory, name, transport
        self.record = directory / f"{name}.record.jsonl"
        self.port = port
        self.process: Process | None = None
        self.start()

    def start(self) -> None:
        args = [sys.executable, str(HTTP_SERVER), "--port", str(self.port), "--transport", self.transport]
        self.process = Process(f"mcp {self.name}", [*args, "--record", str(self.record)])
        end = time.monotonic() + READY_DEADLINE
        while True:
            try:
                line = self.process.lines.get(timeout=max(end - time.monotonic(), 0.001))
            except queue.Empty:
                raise RuntimeError(f"{self.name}: no `ready` line; {''.join(self.process.stderr_text)}") from None
            if line is None:
                self.process.proc.wait(timeout=10)
                raise RuntimeError(f"{self.name}: exited: {''.join(self.process.stderr_text)}")
            match = re.match(r"ready (\d+)", line)
            if match:
                self.port = int(match.group(1))
                return

    def kill(self) -> None:
        """Kills the process and waits for its exit."""
        assert self.process is not None
        self.process.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/" + ("sse" if self.transport == "sse" else "mcp")

    def requests(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def wait_for(self, check, what: str, within: float = 10.0) -> dict:
        """The first recorded request that `check` accepts, once it is recorded."""
        return deadline_wait(lambda: next((r for r in self.requests() if check(r)), None), what, within)


def rpc_method(record: dict) -> str | None:
    body = record.get("body")
    return body.get("method") if isinstance(body, dict) else None


@dataclass
class Gateway:
    url: str
    process: Process
    config_path: Path

    def post(self, path: str, body, headers: dict | None = None, raw: bytes | None = None):
        """POSTs JSON (or `raw` bytes); returns (status, headers lower-cased, text)."""
        return self.request("POST", path, raw if raw is not None else json.dumps(body).encode(), headers)

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        request = urllib.request.Request(
            self.url + path,
            data=data,
            headers={"content-type": "application/json", "accept": "application/json, text/event-stream", **(headers or {})},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()

    def initialize(self, path: str = "/mcp", headers: dict | None = None) -> str:
        """A raw session: its Mcp-Session-Id."""
        status, got, text = self.post(path, INIT, headers)
        assert status == 200, (status, text)
        session = got["mcp-session-id"]
        self.post(path, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {**(headers or {}), "mcp-session-id": session})
        return session

    def metrics(self) -> str:
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as response:
            return response.read().decode()

    def metric(self, series: str) -> float | None:
        for line in self.metrics().splitlines():
            if line.startswith(series + " "):
                return float(line.split()[1])
        return None


# A config needs a deployment; the MCP tests never send it a request.
MODEL_LIST = (
    "model_list:\n  - model_name: unused\n"
    "    litellm_params: {model: openai/gpt-4o-mini, api_base: \"http://127.0.0.1:9/v1\", api_key: sk-unused}\n"
)


def start_gateway(config: str, directory: Path, started: list) -> Gateway:
    """`pointwork serve --shards 2` on `config`: a client's requests of one session land on both
    shards."""
    process = _start_gateway(MODEL_LIST + config, directory, flags=("--shards", "2"))
    started.append(process)
    return Gateway(f"http://{process.wait_for_address()}", process, directory / "config.yaml")


def stdio_entry(name: str = "local") -> str:
    return (
        f"  {name}:\n    transport: stdio\n    command: {sys.executable}\n"
        f"    args: [\"{STDIO_SERVER}\"]\n    env: {{TEST_MARK: stdio-env-ok}}\n"
    )


def http_entry(name: str, server: McpHttpServer, extra: str = "") -> str:
    return (
        f"  {name}:\n    url: {server.url}\n    transport: {server.transport}\n"
        f"    auth_type: bearer_token\n    auth_value: {SECRET}\n" + extra
    )


def keys_section(*virtual: str) -> str:
    out = f"general_settings:\n  master_key: {MASTER}\n"
    if virtual:
        out += "pointwork:\n  auth:\n    virtual_keys:\n" + "".join(f"      - {v}\n" for v in virtual)
    return out


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def sse_messages(text: str) -> list[dict]:
    """The JSON-RPC messages of a server-sent event stream's `data:` lines."""
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def answer(text: str) -> dict:
    """A response's one JSON-RPC message, whether it came as JSON or as an event stream."""
    text = text.strip()
    if text.startswith("{") or text.startswith("["):
        return json.loads(text)
    return sse_messages(text)[-1]


@contextlib.asynccontextmanager
async def session(url: str, headers: dict | None = None, seen: list | None = None):
    """An initialized `ClientSession` of the official SDK on `url`; the Mcp-Session-Id values
    the gateway answered with go into `seen`."""

    async def note(response):
        if seen is not None and "mcp-session-id" in response.headers:
            seen.append(response.headers["mcp-session-id"])

    hooks = {"response": [note]}
    async with httpx.AsyncClient(headers=headers or {}, event_hooks=hooks, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                yield s


def master(extra: dict | None = None) -> dict:
    return {"x-litellm-api-key": f"Bearer {MASTER}", **(extra or {})}


def run(coro):
    """Runs `coro`; an error inside the SDK's task groups comes out as itself."""
    try:
        return asyncio.run(coro)
    except BaseExceptionGroup as group:
        leaf = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from group
