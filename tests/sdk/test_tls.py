"""HTTPS on Pointwork's own port, through the official SDKs: a CA made here with the `openssl`
command signs the gateway's certificate; the `openai` and `anthropic` SDKs, given an HTTP client
that trusts that CA, get whole and streamed answers from the mock provider behind the gateway.
A client that does not trust the CA, plain HTTP on the HTTPS port, mutual TLS (`client_ca`) with
and without a client certificate, LiteLLM's ways of naming the files, and a certificate rotated
by a reload while a client keeps its connection open."""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from conftest import Mock, Process, _start_gateway, _start_mock

MESSAGES = [{"role": "user", "content": "Say hello."}]
ANSWER = "Hello from mock tls"
DAY = 86_400

# Extensions of each kind of certificate, for `openssl req` / `openssl x509 -req`.
OPENSSL_CONFIG = """
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""


@dataclass
class Pair:
    cert: Path
    key: Path


class Pki:
    """A throwaway CA in `directory` (P-256 keys, PKCS#8 PEM), made with the openssl CLI."""

    def __init__(self, directory: Path, name: str):
        if shutil.which("openssl") is None:
            pytest.fail("the openssl command is needed to make the test certificates (apt-get install openssl)")
        self.directory = directory
        self.config = directory / "openssl.cnf"
        self.config.write_text(OPENSSL_CONFIG)
        key = self._key(f"{name}-ca")
        cert = directory / f"{name}-ca.pem"
        self._openssl("req", "-x509", "-new", "-key", key, "-out", cert, "-days", "365",
                      "-subj", f"/CN=pointwork sdk tests {name} CA", "-config", self.config, "-extensions", "ca")
        self.ca = Pair(cert, key)

    def _openssl(self, *args) -> None:
        done = subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, f"openssl {' '.join(map(str, args))}: {done.stderr}"

    def _key(self, name: str) -> Path:
        path = self.directory / f"{name}.key"
        self._openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path)
        return path

    def issue(self, name: str, kind: str = "server", days: int = 30) -> Pair:
        """A certificate signed by this CA: `server` (localhost, 127.0.0.1) or `client`."""
        key = self._key(name)
        csr = self.directory / f"{name}.csr"
        cert = self.directory / f"{name}.pem"
        self._openssl("req", "-new", "-key", key, "-out", csr, "-subj", f"/CN={name}", "-config", self.config)
        self._openssl("x509", "-req", "-in", csr, "-CA", self.ca.cert, "-CAkey", self.ca.key,
                      "-set_serial", secrets.randbits(63), "-days", days, "-out", cert,
                      "-extfile", self.config, "-extensions", kind)
        return Pair(cert, key)

    def context(self, client: Pair | None = None) -> ssl.SSLContext:
        """What a caller verifies the gateway with: this CA; with `client`, presenting it."""
        context = ssl.create_default_context(cafile=str(self.ca.cert))
        if client is not None:
            context.load_cert_chain(str(client.cert), str(client.key))
        return context


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"), "trusted")


@pytest.fixture(scope="module")
def mock():
    started = _start_mock("tls", "--chunks", "3")
    try:
        yield started
    finally:
        started.process.stop()


def _config(mock: Mock, tls: str | None) -> str:
    """`gpt` (OpenAI's wire) and `claude` (Anthropic's) on the mock, and `pointwork: {tls: …}`."""
    config = (
        "model_list:\n"
        "  - model_name: gpt\n"
        f"    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"{mock.api_base}\", api_key: sk-oai}}\n"
        "  - model_name: claude\n"
        f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{mock.addr}\", api_key: sk-ant}}\n"
    )
    return config + (f"pointwork:\n  tls: {tls}\n" if tls else "")


class Gateway:
    """`pointwork serve` over HTTPS, stopped at the end of the test or module that started it."""

    def __init__(self, config: str, directory: Path, flags: tuple[str, ...] = (), env: dict[str, str] | None = None):
        self.process: Process = _start_gateway(config, directory, flags, env)
        self.addr = self.process.wait_for_address()
        self.url = f"https://{self.addr}"

    def openai(self, context: ssl.SSLContext | None) -> openai.OpenAI:
        """The SDK over HTTPS; `context`: an HTTP client trusting it, `None` the SDK's own."""
        http_client = None if context is None else httpx2.Client(verify=context, timeout=30)
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key="sk-caller", max_retries=0, http_client=http_client)

    def metrics(self, context: ssl.SSLContext) -> str:
        with httpx2.Client(verify=context, timeout=30) as client:
            response = client.get(f"{self.url}/metrics")
        assert response.status_code == 200, response.text
        return response.text

    def stderr(self) -> str:
        return "".join(self.process.stderr_text)

    def stop(self) -> None:
        self.process.stop()


def _copy_into(directory: Path, pair: Pair, cert: str = "server.pem", key: str = "server.key") -> None:
    shutil.copyfile(pair.cert, directory / cert)
    shutil.copyfile(pair.key, directory / key)


@pytest.fixture(scope="module")
def https(pki, mock, tmp_path_factory):
    """A gateway whose config names its certificate relative to the config's folder."""
    directory = tmp_path_factory.mktemp("https")
    _copy_into(directory, pki.issue("server"))
    gateway = Gateway(_config(mock, "{cert: server.pem, key: server.key}"), directory)
    try:
        yield gateway
    finally:
        gateway.stop()


def _handshakes(metrics: str, outcome: str) -> int:
    match = re.search(rf'^pointwork_tls_handshakes_total{{outcome="{outcome}"}} (\d+)$', metrics, re.MULTILINE)
    assert match, f"no {outcome} handshakes in:\n{metrics}"
    return int(match.group(1))


def _chat_and_stream(client: openai.OpenAI) -> None:
    """A whole and a streamed chat completion through the gateway, answered by the mock."""
    raw = client.chat.completions.with_raw_response.create(model="gpt", messages=MESSAGES)
    assert raw.headers["x-pointwork-model-group"] == "gpt"
    completion = raw.parse()
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].finish_reason == "stop"
    stream = client.chat.completions.create(
        model="gpt", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3


def test_the_openai_sdk_over_https_whole_and_streamed(https, pki, mock):
    before = len(mock.requests())
    with https.openai(pki.context()) as client:
        _chat_and_stream(client)
    received = mock.requests()[before:]
    assert [r["path"] for r in received] == ["/v1/chat/completions"] * 2
    for request in received:
        auth = [value for header, value in request["headers"] if header.lower() == "authorization"]
        assert auth == ["Bearer sk-oai"], request["headers"]


def test_the_async_openai_sdk_streams_over_https(https, pki):
    async def run() -> str:
        client = openai.AsyncOpenAI(
            base_url=f"{https.url}/v1",
            api_key="sk-caller",
            max_retries=0,
            http_client=httpx2.AsyncClient(verify=pki.context(), timeout=30),
        )
        try:
            stream = await client.chat.completions.create(model="gpt", messages=MESSAGES, stream=True)
            return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        finally:
            await client.close()

    assert asyncio.run(run()) == ANSWER


def test_the_anthropic_sdk_over_https_whole_and_streamed(https, pki):
    client = anthropic.Anthropic(
        base_url=https.url, api_key="sk-caller", max_retries=0, http_client=httpx2.Client(verify=pki.context(), timeout=30)
    )
    with client:
        message = client.messages.create(model="claude", max_tokens=64, messages=MESSAGES)
        assert message.role == "assistant" and message.content[0].text == ANSWER
        with client.messages.stream(model="claude", max_tokens=64, messages=MESSAGES) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
        assert text == ANSWER and final.stop_reason == "end_turn"


def _causes(error: BaseException) -> str:
    """The error and everything that caused it, as text."""
    parts = []
    while error is not None:
        parts.append(f"{type(error).__name__}: {error}")
        error = error.__cause__ or error.__context__
    return " <- ".join(parts)


def test_a_client_that_does_not_trust_the_ca_cannot_connect(https, pki):
    failed_before = _handshakes(https.metrics(pki.context()), "failed")
    # The SDK's own HTTP client: the system's CAs only.
    with https.openai(None) as client:
        with pytest.raises(openai.APIConnectionError) as raised:
            client.chat.completions.create(model="gpt", messages=MESSAGES)
    assert "CERTIFICATE_VERIFY_FAILED" in _causes(raised.value), _causes(raised.value)
    # Nor does a CA of its own help.
    stranger = Pki(pki.directory, "stranger")
    with https.openai(stranger.context()) as client:
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="gpt", messages=MESSAGES)
    # The gateway counted both refusals (the client's alert ends the handshake).
    deadline = time.monotonic() + 10
    while _handshakes(https.metrics(pki.context()), "failed") < failed_before + 2:
        assert time.monotonic() < deadline, https.metrics(pki.context())
        time.sleep(0.05)


def test_plain_http_on_the_https_port_is_a_400_that_says_so(https, pki):
    before = _handshakes(https.metrics(pki.context()), "plain_http")
    client = openai.OpenAI(base_url=f"http://{https.addr}/v1", api_key="sk-caller", max_retries=0)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="gpt", messages=MESSAGES)
    assert raised.value.status_code == 400
    assert "this port speaks HTTPS" in raised.value.message
    assert _handshakes(https.metrics(pki.context()), "plain_http") == before + 1


def test_metrics_show_the_certificates_expiry(https, pki):
    metrics = https.metrics(pki.context())
    match = re.search(r"^pointwork_tls_certificate_expiry_seconds (-?\d+)$", metrics, re.MULTILINE)
    assert match, metrics
    assert 29 * DAY < int(match.group(1)) <= 30 * DAY
    assert _handshakes(metrics, "ok") >= 1
    # A certificate valid 30 days: no warning at start.
    assert "warning" not in https.stderr(), https.stderr()


def _wait_for_stderr(gateway: Gateway, pattern: str) -> str:
    deadline = time.monotonic() + 10
    while not re.search(pattern, gateway.stderr()):
        assert time.monotonic() < deadline, f"{pattern!r} not in stderr:\n{gateway.stderr()}"
        time.sleep(0.05)
    return gateway.stderr()


def test_litellms_variables_name_the_files_and_a_short_lived_certificate_warns(pki, mock, tmp_path):
    soon = pki.issue("soon", days=5)
    env = {"SSL_CERTFILE_PATH": str(soon.cert), "SSL_KEYFILE_PATH": str(soon.key)}
    gateway = Gateway(_config(mock, None), tmp_path, env=env)
    try:
        with gateway.openai(pki.context()) as client:
            answer = client.chat.completions.create(model="gpt", messages=MESSAGES)
        assert answer.choices[0].message.content == ANSWER
        # Five days from the second openssl signed it: 4 days and some hours, or 5 within that second.
        _wait_for_stderr(gateway, rf"warning: the TLS certificate {re.escape(str(soon.cert))} expires in [45] days")
    finally:
        gateway.stop()


def test_litellms_flags_name_the_files(pki, mock, tmp_path):
    pair = pki.issue("flags")
    flags = ("--ssl_certfile_path", str(pair.cert), "--ssl_keyfile_path", str(pair.key))
    gateway = Gateway(_config(mock, None), tmp_path, flags=flags)
    try:
        with gateway.openai(pki.context()) as client:
            assert client.chat.completions.create(model="gpt", messages=MESSAGES).choices[0].message.content == ANSWER
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def mutual(pki, mock, tmp_path_factory):
    """A gateway that requires a client certificate signed by the test CA."""
    directory = tmp_path_factory.mktemp("mtls")
    _copy_into(directory, pki.issue("mtls-server"))
    shutil.copyfile(pki.ca.cert, directory / "callers-ca.pem")
    gateway = Gateway(_config(mock, "{cert: server.pem, key: server.key, client_ca: callers-ca.pem}"), directory)
    try:
        yield gateway
    finally:
        gateway.stop()


def test_mtls_refuses_the_sdk_without_a_client_certificate(mutual, pki):
    with mutual.openai(pki.context()) as client:
        with pytest.raises(openai.APIConnectionError) as raised:
            client.chat.completions.create(model="gpt", messages=MESSAGES)
    assert "CERTIFICATE_REQUIRED" in _causes(raised.value), _causes(raised.value)


def test_mtls_refuses_a_client_certificate_from_another_ca(mutual, pki):
    stranger = Pki(pki.directory, "impostor")
    with mutual.openai(pki.context(stranger.issue("impostor-client", kind="client"))) as client:
        with pytest.raises(openai.APIConnectionError) as raised:
            client.chat.completions.create(model="gpt", messages=MESSAGES)
    assert "UNKNOWN_CA" in _causes(raised.value), _causes(raised.value)


def test_mtls_serves_the_sdk_with_a_client_certificate(mutual, pki):
    caller = pki.issue("caller", kind="client")
    with mutual.openai(pki.context(caller)) as client:
        _chat_and_stream(client)
    metrics = mutual.metrics(pki.context(caller))
    assert _handshakes(metrics, "ok") >= 2  # the SDK's connection and this one


def _served_certificate(addr: str, context: ssl.SSLContext) -> bytes:
    """The DER certificate a new connection to the gateway is served."""
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return tls.getpeercert(binary_form=True)


def _der(pem: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.read_text())


def test_a_reload_rotates_the_certificate_and_open_connections_keep_working(pki, mock, tmp_path):
    first, second = pki.issue("first"), pki.issue("second")
    _copy_into(tmp_path, first)
    gateway = Gateway(_config(mock, "{cert: server.pem, key: server.key}"), tmp_path)
    context = pki.context()
    http = httpx2.Client(verify=context, timeout=30)
    try:
        with gateway.openai(context) as client:
            assert client.chat.completions.create(model="gpt", messages=MESSAGES).choices[0].message.content == ANSWER
            assert _served_certificate(gateway.addr, context) == _der(first.cert)

            # certbot and cert-manager write new files, then the gateway is told to re-read them.
            _copy_into(tmp_path, second)
            reload = http.post(f"{gateway.url}/admin/reload")
            assert reload.status_code == 200, reload.text
            assert _served_certificate(gateway.addr, context) == _der(second.cert)
            # The SDK's kept-alive connection (still on the first certificate) goes on serving.
            _chat_and_stream(client)

            # A broken key is refused; the second certificate keeps serving.
            (tmp_path / "server.key").write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n")
            refused = http.post(f"{gateway.url}/admin/reload")
            assert refused.status_code == 400, refused.text
            assert "server.key" in refused.text, refused.text
            assert _served_certificate(gateway.addr, context) == _der(second.cert)
            assert client.chat.completions.create(model="gpt", messages=MESSAGES).choices[0].message.content == ANSWER
    finally:
        http.close()
        gateway.stop()
