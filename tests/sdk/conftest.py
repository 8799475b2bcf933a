"""Fixtures: two healthy `pointwork-mock` providers, one failing one, and `pointwork serve`
in front of them, started once per test session as real processes on loopback ephemeral
ports. The binaries come from POINTWORK_BIN / POINTWORK_MOCK_BIN (scripts/test sets them),
else from the workspace's target/debug."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READY_DEADLINE = 30.0  # seconds; a debug build on a busy CI machine


def metric(url: str, series: str) -> float:
    """The value of one series of `url`'s /metrics: a name, with its labels when it has any
    (`pointwork_export_dropped_total{exporter="otlp"}`)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(series + " "):
                return float(line.split()[1])
    raise AssertionError(f"no {series} at {url}/metrics")


def _binary(env_var: str, name: str) -> Path:
    if os.environ.get(env_var):
        path = Path(os.environ[env_var])
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        path = target / "debug" / name
    if not path.exists():
        pytest.exit(
            f"{path} does not exist: run scripts/test, or build with "
            f"`cargo build --workspace --bins` and/or set {env_var}",
            returncode=2,
        )
    return path


class Process:
    """A child process whose stdout lines arrive on a queue; killed at teardown."""

    def __init__(self, name: str, args: list[str], env: dict[str, str] | None = None):
        self.name = name
        self.proc = subprocess.Popen(
            args,
            env=None if env is None else {**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_text: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_text.append(line)

    def wait_for_address(self) -> str:
        """Waits for the line with `listening on http://ADDR` (or `https://`); returns ADDR."""
        deadline = time.monotonic() + READY_DEADLINE
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise RuntimeError(
                    f"{self.name}: not listening after {READY_DEADLINE}s; "
                    f"stderr: {''.join(self.stderr_text)}"
                ) from None
            if line is None:
                self.proc.wait(timeout=10)
                raise RuntimeError(
                    f"{self.name}: exited with {self.proc.returncode} before listening; "
                    f"stderr: {''.join(self.stderr_text)}"
                )
            match = re.search(r"listening on https?://(\S+)", line)
            if match:
                return match.group(1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


@dataclass
class Mock:
    name: str
    process: Process
    addr: str

    @property
    def api_base(self) -> str:
        return f"http://{self.addr}/v1"

    def _get(self, path: str):
        with urllib.request.urlopen(f"http://{self.addr}{path}", timeout=10) as response:
            return json.load(response)

    def requests(self) -> list[dict]:
        """What the mock received: [{method, path, headers: [[name, value]...], body}]."""
        return self._get("/mock/requests")

    def stats(self) -> dict:
        return self._get("/mock/stats")


@dataclass
class Stack:
    gateway_url: str
    mocks: dict[str, Mock] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"{self.gateway_url}/v1"


def _start_mock(name: str, *flags: str) -> Mock:
    binary = _binary("POINTWORK_MOCK_BIN", "pointwork-mock")
    process = Process(
        f"mock {name}",
        [str(binary), "--listen", "127.0.0.1:0", "--threads", "1", "--name", name, *flags],
    )
    return Mock(name=name, process=process, addr=process.wait_for_address())


def _deployment(group: str, ident: str, model: str, mock: Mock) -> str:
    return (
        f"  - model_name: {group}\n"
        f"    litellm_params: {{model: {model}, api_base: \"{mock.api_base}\", api_key: sk-{ident}}}\n"
        f"    model_info: {{id: {ident}}}\n"
    )


def _start_gateway(
    config: str, directory: Path, flags: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> Process:
    """`pointwork serve` on `config` (written to DIRECTORY/config.yaml), with extra `flags` and
    variables added to the environment."""
    path = directory / "config.yaml"
    path.write_text(config)
    return Process(
        "pointwork serve",
        [
            str(_binary("POINTWORK_BIN", "pointwork")),
            "serve",
            "--config",
            str(path),
            "--listen",
            "127.0.0.1:0",
            "--shards",
            "1",
            *flags,
        ],
        env,
    )


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    started: list[Process] = []
    try:
        alpha = _start_mock("alpha")
        started.append(alpha.process)
        beta = _start_mock("beta")
        started.append(beta.process)
        broken = _start_mock("broken", "--fault", "status:503")
        started.append(broken.process)
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini-alpha", "openai/gpt-4o-mini", alpha)
            + _deployment("gpt-4o-mini", "mini-beta", "openai/gpt-4o-mini", beta)
            + _deployment("text-embedding-3-small", "embed-alpha", "openai/text-embedding-3-small", alpha)
            + _deployment("broken", "broken-1", "openai/gpt-4o", broken)
            + _deployment("guarded", "guarded-1", "openai/gpt-4o", broken)
            + "router_settings:\n  num_retries: 1\n"
            + "  fallbacks: [{guarded: [gpt-4o-mini]}]\n"
            + "  model_group_alias: {fast: gpt-4o-mini, internal: {model: gpt-4o-mini, hidden: true}}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("gateway"))
        started.append(gateway)
        addr = gateway.wait_for_address()
        yield Stack(
            gateway_url=f"http://{addr}",
            mocks={"alpha": alpha, "beta": beta, "broken": broken},
        )
    finally:
        for process in reversed(started):
            process.stop()


@pytest.fixture(scope="session")
def gateway_with(tmp_path_factory):
    """A factory: `gateway_with(model, pointwork)` starts a mock and a gateway serving `model`
    from it, with `pointwork` (flow-style YAML) as the `pointwork:` section; returns a Stack
    whose mock is `mocks["only"]`. Everything started is stopped at the end of the session."""
    started: list[Process] = []

    def start(model: str, pointwork: str) -> Stack:
        mock = _start_mock("only")
        started.append(mock.process)
        config = (
            "model_list:\n"
            + _deployment(model, "only-1", f"openai/{model}", mock)
            + f"pointwork: {pointwork}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("gateway"))
        started.append(gateway)
        return Stack(gateway_url=f"http://{gateway.wait_for_address()}", mocks={"only": mock})

    try:
        yield start
    finally:
        for process in reversed(started):
            process.stop()


def metric_sum(url: str, name: str, **labels: str) -> float:
    """The sum of every series of `name` at `url`'s /metrics whose labels include `labels`
    (0 when there is none): `metric_sum(url, "pointwork_cache_requests_total", result="hit")`."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        match = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)", line)
        if not match or match.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(match.group(3))
    return total


def free_port() -> int:
    """A loopback port nothing listens on (the OS's pick, released again)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, what: str, within: float = 5.0):
    """Polls `check` every 10 ms until it returns something true, which is returned; fails
    naming `what` after `within` seconds."""
    deadline = time.monotonic() + within
    while not (result := check()):
        assert time.monotonic() < deadline, f"not within {within}s: {what}"
        time.sleep(0.01)
    return result


class RedisServer:
    """A `redis-server` (apt's) on a loopback port with no persistence, and a raw RESP client
    to it: `command("SET", "k", "v")`. `kill()` and `start()` again keep the port."""

    def __init__(self) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.fail("redis-server is not installed: scripts/test installs it (apt-get install redis-server)")
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        wait_until(lambda: socket.socket().connect_ex(("127.0.0.1", self.port)) == 0, "redis-server listens")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def command(self, *args: str | bytes):
        """Sends one command and returns its reply: bytes, int, list, None, or raises on `-ERR`."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
            s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
            return _resp_reply(s.makefile("rb"))


def _resp_reply(reader):
    line = reader.readline().rstrip(b"\r\n")
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest
    if kind == b"-":
        raise RuntimeError(f"redis: {rest.decode()}")
    if kind == b":":
        return int(rest)
    if kind == b"$":
        return None if int(rest) < 0 else reader.read(int(rest) + 2)[:-2]
    if kind == b"*":
        return None if int(rest) < 0 else [_resp_reply(reader) for _ in range(int(rest))]
    raise RuntimeError(f"redis: unexpected reply {line!r}")
