"""Keys from LiteLLM's database through the official `openai` SDK: a real PostgreSQL with
LiteLLM's schema (the migrations of the pinned `litellm-proxy-extras`, applied in order), a key
generated through `/key/generate`, requests whole and streamed with it, and every refusal in the
status and body LiteLLM answers — the SDK raising the error class it raises for LiteLLM. The
texts are LiteLLM's (litellm 1.110.2: `proxy/auth/auth_checks.py`, `proxy/auth/user_api_key_auth.py`,
`proxy/hooks/parallel_request_limiter_v3.py`, `proxy/auth/resolvers/exceptions.py`)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import litellm_proxy_extras
import openai
import pytest

from conftest import _start_gateway, _start_mock

MASTER = "sk-database-master"
PRICED = "input_cost_per_token: 0.001, output_cost_per_token: 0.001"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A throwaway cluster in a folder of its own (run as the `postgres` user when root: the
    folder is outside pytest's, which only root may enter), one database `litellm` carrying
    LiteLLM's migrations."""

    def __init__(self):
        self.directory = directory = Path(tempfile.mkdtemp(prefix="pointwork-pg-"))
        versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
        if not versions:
            pytest.fail("PostgreSQL is not installed: scripts/test installs it (apt-get install postgresql)")
        self.bin = versions[-1]
        self.port = _free_port()
        self.data = directory / "data"
        self.owner = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        os.chmod(directory, 0o755)
        if self.owner:
            shutil.chown(directory, "postgres")
        self._run(str(self.bin / "initdb"), "-A", "trust", "-U", "postgres", "--no-sync", "-D", str(self.data))
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(directory / "log"), "-w",
            "-o", f"-p {self.port} -k {directory} -c listen_addresses=127.0.0.1", "start",
        )
        self.psql("postgres", "CREATE DATABASE litellm")
        migrations = Path(litellm_proxy_extras.__file__).parent / "migrations"
        for step in sorted(p for p in migrations.iterdir() if (p / "migration.sql").is_file()):
            subprocess.run(self._psql_args("litellm") + ["-f", str(step / "migration.sql")], check=True,
                           capture_output=True)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/litellm"

    def _run(self, *args: str) -> None:
        subprocess.run(self.owner + list(args), check=True, capture_output=True)

    def _psql_args(self, db: str) -> list[str]:
        return ["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                "-U", "postgres", "-d", db]

    def psql(self, db: str, sql: str) -> str:
        out = subprocess.run(self._psql_args(db) + ["-A", "-t", "-c", sql], check=True, capture_output=True,
                             text=True)
        return out.stdout.strip()

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    started: list = []
    pg = Postgres()
    try:
        mock = _start_mock("db")
        started.append(mock.process)
        config = "model_list:\n" + "".join(
            f"  - model_name: {group}\n"
            f"    litellm_params: {{model: openai/{group}, api_base: \"{mock.api_base}\", api_key: sk-upstream}}\n"
            f"    model_info: {{id: {group}-1, {PRICED}}}\n"
            for group in ("gpt-4o-mini", "gpt-4o")
        ) + f"general_settings:\n  master_key: {MASTER}\n  database_url: {pg.url}\n"
        gateway = _start_gateway(config, tmp_path_factory.mktemp("gateway"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", pg
    finally:
        for process in reversed(started):
            process.stop()
        pg.stop()


def _manage(url: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"authorization": f"Bearer {MASTER}", "content-type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _client(url: str, key: str) -> openai.OpenAI:
    # No retries: each refusal is asserted as the first answer.
    return openai.OpenAI(api_key=key, base_url=f"{url}/v1", max_retries=0)


def _ask(client: openai.OpenAI, model: str = "gpt-4o-mini"):
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])


def test_a_generated_key_serves_whole_and_streamed_and_its_spend_is_written(served):
    url, pg = served
    generated = _manage(url, "/key/generate", {"models": ["gpt-4o-mini"], "key_alias": "sdk-key"})
    key = generated["key"]
    assert key.startswith("sk-") and generated["key_alias"] == "sdk-key"
    client = _client(url, key)
    answer = _ask(client)
    assert answer.choices[0].message.content and answer.usage.total_tokens > 0
    chunks = list(client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}], stream=True,
        stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert [m.id for m in client.models.list().data] == ["gpt-4o-mini"]

    token = generated["token"]
    deadline = time.monotonic() + 10
    while int(pg.psql("litellm", f"SELECT count(*) FROM \"LiteLLM_SpendLogs\" WHERE api_key = '{token}'")) < 2:
        assert time.monotonic() < deadline, "two spend rows within 10 s"
        time.sleep(0.05)
    spend = float(pg.psql("litellm", f"SELECT spend FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"))
    assert spend > 0
    assert _manage(url, f"/key/info?key={key}")["info"]["spend"] == pytest.approx(spend)


def test_refusals_are_litellms_statuses_and_bodies(served):
    url, _ = served
    key = _manage(url, "/key/generate", {"models": ["gpt-4o-mini"]})["key"]
    client = _client(url, key)

    with pytest.raises(openai.PermissionDeniedError) as denied:
        _ask(client, "gpt-4o")
    assert denied.value.status_code == 403
    assert denied.value.body == {
        "message": "The requested model 'gpt-4o' is not available for this API key, or the model name is invalid. "
        "Check the models available to you and try again.",
        "type": "key_model_access_denied",
        "param": "model",
        "code": "403",
    }

    with pytest.raises(openai.AuthenticationError) as unknown:
        _ask(_client(url, "sk-never-issued-0000"))
    assert unknown.value.body == {
        "message": "Authentication Error, Invalid API key provided.",
        "type": "token_not_found_in_db",
        "param": "key",
        "code": "401",
    }

    _manage(url, "/key/block", {"key": key})
    with pytest.raises(openai.AuthenticationError) as blocked:
        _ask(client)
    assert blocked.value.body == {
        "message": "Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin.",
        "type": "auth_error",
        "param": None,
        "code": "401",
    }
    _manage(url, "/key/unblock", {"key": key})
    assert _ask(client).choices


def test_a_spent_budget_is_422_budget_exceeded(served):
    url, _ = served
    generated = _manage(url, "/key/generate", {"max_budget": 0.000001, "key_alias": "tiny"})
    client = _client(url, generated["key"])
    assert _ask(client).choices  # under budget until this one is charged
    with pytest.raises(openai.UnprocessableEntityError) as spent:
        _ask(client)
    assert spent.value.status_code == 422
    assert spent.value.body["type"] == "budget_exceeded"
    # The key's name (`sk-...` and its last four) follows its alias, as LiteLLM writes it.
    assert spent.value.body["message"].startswith(
        f"Budget has been exceeded! Key=tiny ({generated['key_name']}) Current cost: ")
    assert spent.value.body["message"].endswith(", Max budget: 1e-06")


def test_a_teams_rpm_limit_is_litellms_429(served):
    url, _ = served
    team = _manage(url, "/team/new", {"team_alias": "sdk-team", "rpm_limit": 1})["team_id"]
    key = _manage(url, "/key/generate", {"team_id": team})["key"]
    client = _client(url, key)
    assert _ask(client).choices
    with pytest.raises(openai.RateLimitError) as limited:
        _ask(client)
    assert limited.value.status_code == 429
    assert limited.value.body["type"] == "throttling_error"
    assert limited.value.body["message"].startswith(
        f"Rate limit exceeded for team: {team}. Limit type: requests. Current limit: 1, Remaining: 0."
    )
    assert limited.value.response.headers["retry-after"]


def test_a_generated_key_never_reaches_the_management_api(served):
    url, _ = served
    key = _manage(url, "/key/generate", {})["key"]
    request = urllib.request.Request(f"{url}/key/generate", data=b"{}", method="POST",
                                     headers={"authorization": f"Bearer {key}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401
    assert json.loads(refused.value.read())["error"]["type"] == "auth_error"
