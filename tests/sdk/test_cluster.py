"""Two Pointwork instances sharing state through a real redis-server, through the official
`openai` SDK: a key's budget spent through one instance is refused through the other (the SDK
raises BadRequestError with LiteLLM's budget text), and a conversation pinned on one instance
stays on its deployment through the other; a Responses conversation answered through one
instance continues, is retrieved and is deleted through the other."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import subprocess
import time
import urllib.request

import openai
import pytest

from conftest import Process, _deployment, _start_gateway, _start_mock, metric

SECRET, FREE, MASTER = "sk-cluster-team", "sk-cluster-free", "sk-cluster-master"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until(check, what: str, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"not within {within}s: {what}"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is not installed: scripts/test installs it (apt-get install redis-server)")
    port = _free_port()
    started: list = []
    redis = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_until(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, "redis-server listens")
        x, y = _start_mock("x"), _start_mock("y")
        started += [x.process, y.process]
        digest = {k: hashlib.sha256(k.encode()).hexdigest() for k in (SECRET, FREE)}
        priced = "input_cost_per_token: 0.001, output_cost_per_token: 0.001"
        urls = []
        for name in ("a", "b"):
            config = (
                "model_list:\n"
                + _deployment("gpt-4o-mini", "dep-x", "openai/gpt-4o-mini", x).replace("sk-dep-x}", f"sk-dep-x, {priced}}}")
                + _deployment("gpt-4o-mini", "dep-y", "openai/gpt-4o-mini", y).replace("sk-dep-y}", f"sk-dep-y, {priced}}}")
                + _deployment("llama", "dep-llama", "hosted_vllm/llama-3", x)
                + f"router_settings:\n  redis_host: 127.0.0.1\n  redis_port: {port}\n"
                + "  optional_pre_call_checks: [session_affinity]\n"
                + f"pointwork:\n  cluster: {{instance: {name}, sync_interval: 50ms}}\n"
                + f"  auth:\n    virtual_keys:\n      - {{name: team, sha256: {digest[SECRET]}, max_budget: 0.1}}\n"
                + f"      - {{name: free, sha256: {digest[FREE]}}}\n"
                + f"general_settings: {{master_key: {MASTER}}}\n"
            )
            gateway = _start_gateway(config, tmp_path_factory.mktemp(f"gateway-{name}"))
            started.append(gateway)
            url = f"http://{gateway.wait_for_address()}"
            _wait_until(lambda: metric(url, "pointwork_cluster_redis_up") == 1.0, f"{name} reaches Redis")
            urls.append(url)
        yield urls
    finally:
        for process in reversed(started):
            process.stop()
        redis.kill()
        redis.wait()


def _client(url: str, key: str = SECRET) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)


def _pinned_on(url: str, session: str) -> str | None:
    """The deployment the dry run on `url` keeps a conversation on, if it knows a pin."""
    body = json.dumps(
        {"model": "gpt-4o-mini", "metadata": {"session_id": session}, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    request = urllib.request.Request(
        f"{url}/v1/route", data=body, headers={"authorization": f"Bearer {MASTER}", "content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        route = json.load(response)
    pinned = any(c.get("removed_by") == "affinity_pinned" for c in route.get("candidates", []))
    return route["winner"]["id"] if pinned else None


def test_a_conversation_pinned_through_one_instance_stays_put_through_the_other(cluster):
    a, b = cluster
    for n in range(4):
        extra = {"metadata": {"session_id": f"conversation-{n}"}}
        messages = [{"role": "user", "content": "hi"}]
        first = _client(a, FREE).chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, extra_body=extra
        )
        pinned = first.headers["x-pointwork-deployment"]
        _wait_until(lambda: _pinned_on(b, f"conversation-{n}") == pinned, "the pin crossed to b")
        for url in (b, a, b):
            answer = _client(url, FREE).chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=messages, extra_body=extra
            )
            assert answer.headers["x-pointwork-deployment"] == pinned


def test_a_budget_spent_through_one_instance_is_refused_through_the_other(cluster):
    a, b = cluster
    with pytest.raises(openai.BadRequestError) as refused:
        for _ in range(20):
            _client(a).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert "Budget has been exceeded" in str(refused.value)
    _wait_until(
        lambda: metric(b, 'pointwork_key_spend_usd{key="team"}') >= 0.1, "b knows the key's spend"
    )
    with pytest.raises(openai.BadRequestError) as on_b:
        _client(b).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert "Budget has been exceeded" in str(on_b.value)


def test_a_responses_conversation_continues_through_the_other_instance(cluster):
    a, b = cluster
    first = _client(a, FREE).responses.create(model="llama", input="My name is Ada.")
    second = _client(b, FREE).responses.create(model="llama", input="What is my name?", previous_response_id=first.id)
    assert second.output_text
    # Kept through b, read through a: the whole conversation up to the second turn.
    items = json.dumps([i.model_dump() for i in _client(a, FREE).responses.input_items.list(second.id).data])
    assert "My name is Ada." in items and first.output_text in items and "What is my name?" in items
    assert _client(a, FREE).responses.retrieve(first.id).output_text == first.output_text
    _client(b, FREE).responses.delete(first.id)
    for url in (a, b):
        with pytest.raises(openai.NotFoundError):
            _client(url, FREE).responses.retrieve(first.id)


def test_a_native_responses_follow_up_through_the_other_instance_goes_to_the_holder(cluster):
    a, b = cluster
    raw = _client(a, FREE).responses.with_raw_response.create(model="gpt-4o-mini", input="Remember 42.")
    first, holder = raw.parse(), raw.headers["x-pointwork-deployment"]
    for _ in range(8):
        follow = _client(b, FREE).responses.with_raw_response.create(
            model="gpt-4o-mini", input="Which number?", previous_response_id=first.id
        )
        assert follow.headers["x-pointwork-deployment"] == holder
