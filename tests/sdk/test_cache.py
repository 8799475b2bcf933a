"""The response cache (issue 35) between real processes: two `pointwork serve` instances sharing
one redis-server (`litellm_settings.cache: true`, `cache_params.type: redis`) in front of
`pointwork-mock`. The same request sent to instance A then B reaches the provider once — chat,
streamed chat, embeddings, Anthropic Messages (whole and streamed), Responses (whole and
streamed) — and B answers with A's body (the same id) or the same events; what changes the
answer misses, what does not hits, more than `max_messages` (4) bypass; LiteLLM's per-request
controls (`cache: {...}` in the body), `Cache-Control` headers and a key's
`allowed_cache_controls`; failed or cut answers are never stored; a hit needs no healthy
deployment; `mode: default_off`; the official `openai` and `anthropic` SDKs read cached answers;
the access log and /metrics say what the cache did. Upstream requests are counted in the mock's
record, by a marker unique to each test."""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import time
import urllib.request
import uuid
from dataclasses import dataclass

import anthropic
import openai
import pytest

from conftest import (
    Mock,
    Process,
    RedisServer,
    _deployment,
    _start_gateway,
    _start_mock,
    metric,
    metric_sum,
    wait_until,
)

MASTER = "sk-cache-master"
NARROW = "sk-cache-narrow-only-no-cache"
NOT_ALLOWED = "Not allowed to set no-store as a cache control. Contact admin to change permissions."


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def cache(self) -> str | None:
        return self.headers.get("x-pointwork-cache")

    @property
    def key(self) -> str | None:
        return self.headers.get("x-pointwork-cache-key")

    def json(self):
        return json.loads(self.body)

    def events(self) -> list[tuple[str | None, object]]:
        """The server-sent events: (event name or None, data parsed as JSON, or the raw data)."""
        found = []
        for block in self.body.decode().replace("\r\n", "\n").split("\n\n"):
            name, data = None, []
            for line in block.split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
            if name is None and not data:
                continue
            text = "\n".join(data)
            try:
                found.append((name, json.loads(text)))
            except ValueError:
                found.append((name, text))
        return found


def post(url: str, path: str, body, headers: dict[str, str] | None = None, key: str = MASTER) -> Answer:
    """POSTs `body` (a dict, or bytes sent as they are) to the gateway at `url`."""
    host = url.removeprefix("http://")
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    connection = http.client.HTTPConnection(host, timeout=10)
    try:
        connection.request(
            "POST",
            path,
            body=payload,
            headers={"content-type": "application/json", "authorization": f"Bearer {key}", **(headers or {})},
        )
        response = connection.getresponse()
        data = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        connection.close()


def marker() -> str:
    return f"cache-test-{uuid.uuid4().hex[:12]}"


def chat(text: str, model: str = "gpt-4o-mini", **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


def messages_body(text: str, **extra) -> dict:
    return {"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": text}], **extra}


def upstream(mock: Mock, mark: str) -> int:
    """How many requests carrying `mark` reached the mock."""
    return sum(mark in r["body"] for r in mock.requests())


@dataclass
class Pair:
    a: str
    b: str
    redis: RedisServer
    mock: Mock
    frail: Mock
    access_log: object

    def entry(self, hex_key: str, namespace: str | None = None) -> bytes | None:
        middle = f"{namespace}:" if namespace else ""
        return self.redis.command("GET", f"pointwork:cache:{middle}{hex_key}")

    def stored(self, hex_key: str, namespace: str | None = None) -> bytes:
        """Waits until the entry of `hex_key` is in Redis (stores may finish after the answer)."""
        assert hex_key, "the answer names its cache key"
        return wait_until(lambda: self.entry(hex_key, namespace), f"the entry {hex_key} is stored")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started: list[Process] = []
    redis = RedisServer()
    try:
        mock = _start_mock("cached", "--chunks", "4")
        frail = _start_mock("frail", "--chunks", "4")
        started += [mock.process, frail.process]
        directory = tmp_path_factory.mktemp("cache")
        access_log = directory / "access-a.jsonl"
        narrow = hashlib.sha256(NARROW.encode()).hexdigest()
        urls = []
        for name in ("a", "b"):
            config = (
                "model_list:\n"
                + _deployment("gpt-4o-mini", "mini", "openai/gpt-4o-mini", mock)
                + _deployment("gpt-4o", "big", "openai/gpt-4o", mock)
                + _deployment("text-embedding-3-small", "embed", "openai/text-embedding-3-small", mock)
                + "  - model_name: claude\n"
                + f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{mock.addr}\", api_key: sk-ant}}\n"
                + _deployment("frail", "frail-1", "openai/gpt-4o-mini", frail)
                + "router_settings: {num_retries: 0, disable_cooldowns: true}\n"
                + "litellm_settings:\n  cache: true\n"
                + f"  cache_params: {{type: redis, host: 127.0.0.1, port: {redis.port}, ttl: 60}}\n"
                + f"general_settings: {{master_key: {MASTER}}}\n"
                + f"pointwork:\n  cluster: {{instance: {name}}}\n"
                + f"  auth:\n    virtual_keys:\n      - {{name: narrow, sha256: {narrow}, allowed_cache_controls: [no-cache]}}\n"
                + (f"  access_log: {access_log}\n" if name == "a" else "")
            )
            gateway = _start_gateway(config, tmp_path_factory.mktemp(f"cache-{name}"))
            started.append(gateway)
            url = f"http://{gateway.wait_for_address()}"
            wait_until(lambda: metric(url, "pointwork_cluster_redis_up") == 1.0, f"{name} reaches Redis")
            urls.append(url)
        yield Pair(urls[0], urls[1], redis, mock, frail, access_log)
    finally:
        for process in reversed(started):
            process.stop()
        redis.kill()


def a_then_b(pair: Pair, path: str, body: dict, mark: str) -> tuple[Answer, Answer]:
    """Sends `body` to A (a miss, stored) then B (a hit); checks the headers and that the
    provider saw it once; returns both answers."""
    first = post(pair.a, path, body)
    assert first.status == 200, first.body
    assert first.cache == "miss", first.headers
    assert len(first.key or "") == 64 and int(first.key, 16) >= 0
    assert "x-litellm-cache-key" not in first.headers
    pair.stored(first.key)
    second = post(pair.b, path, body)
    assert second.status == 200, second.body
    assert second.cache == "hit", second.headers
    assert second.key == first.key
    assert second.headers.get("x-litellm-cache-key")
    assert upstream(pair.mock, mark) == 1
    return first, second


def test_a_chat_answered_by_a_is_answered_by_b_from_the_cache(pair):
    mark = marker()
    hits, misses = (metric_sum(pair.b, "pointwork_cache_requests_total", result=r) for r in ("hit", "miss"))
    stores = metric_sum(pair.a, "pointwork_cache_stores_total")
    first, second = a_then_b(pair, "/v1/chat/completions", chat(mark), mark)
    assert second.json() == first.json()
    assert first.json()["choices"][0]["message"]["content"]
    assert metric_sum(pair.b, "pointwork_cache_requests_total", result="hit") == hits + 1
    assert metric_sum(pair.b, "pointwork_cache_requests_total", result="miss") == misses
    wait_until(lambda: metric_sum(pair.a, "pointwork_cache_stores_total") == stores + 1, "A counted its store")


def test_a_streamed_chat_is_replayed_as_the_same_events(pair):
    mark = marker()
    body = chat(mark, stream=True, stream_options={"include_usage": True})
    first, second = a_then_b(pair, "/v1/chat/completions", body, mark)
    assert first.headers["content-type"].startswith("text/event-stream")
    assert second.headers["content-type"].startswith("text/event-stream")
    events = first.events()
    assert len(events) > 3 and events[-1] == (None, "[DONE]")
    assert second.events() == events
    assert any(e[1].get("usage") for e in events[:-1])


def test_embeddings_answered_by_a_are_answered_by_b_from_the_cache(pair):
    mark = marker()
    body = {"model": "text-embedding-3-small", "input": [f"{mark} one", f"{mark} two"]}
    first, second = a_then_b(pair, "/v1/embeddings", body, mark)
    assert second.json() == first.json()
    assert len(first.json()["data"]) == 2


def test_anthropic_messages_whole_and_streamed_reach_the_provider_once(pair):
    mark = marker()
    first, second = a_then_b(pair, "/v1/messages", messages_body(mark), mark)
    assert second.json() == first.json() and first.json()["type"] == "message"
    streamed = marker()
    first, second = a_then_b(pair, "/v1/messages", messages_body(streamed, stream=True), streamed)
    events = first.events()
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    assert second.events() == events


def test_responses_whole_and_streamed_reach_the_provider_once(pair):
    mark = marker()
    first, second = a_then_b(pair, "/v1/responses", {"model": "gpt-4o-mini", "input": mark}, mark)
    assert second.json() == first.json() and first.json()["id"]
    streamed = marker()
    body = {"model": "gpt-4o-mini", "input": streamed, "stream": True}
    first, second = a_then_b(pair, "/v1/responses", body, streamed)
    events = first.events()
    assert events[-1][0] == "response.completed"
    assert second.events() == events


def test_key_order_whitespace_and_metadata_do_not_change_the_key(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark, temperature=0.5, metadata={"run": "1"}))
    assert first.cache == "miss"
    pair.stored(first.key)
    reordered = (
        '{ "temperature" : 0.5,\n  "messages": [ {"content": %s,  "role": "user"} ],\n'
        '  "metadata": {"run": "2", "tags": ["x"]},\t"model":"gpt-4o-mini" }' % json.dumps(mark)
    ).encode()
    for url in (pair.a, pair.b):
        again = post(url, "/v1/chat/completions", reordered)
        assert again.status == 200 and again.cache == "hit", again.headers
        assert again.key == first.key and again.json() == first.json()
    assert upstream(pair.mock, mark) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.9},
        {"model": "gpt-4o"},
        {"user": "someone-else"},
        {"stream": True},
        {"messages": "other"},
    ],
    ids=["temperature", "model", "user", "stream", "messages"],
)
def test_what_changes_the_answer_misses(pair, change):
    mark = marker()
    base = chat(mark, temperature=0.2)
    first = post(pair.a, "/v1/chat/completions", base)
    assert first.cache == "miss"
    pair.stored(first.key)
    changed = {**base, **change}
    if change.get("messages") == "other":
        changed["messages"] = [{"role": "user", "content": mark + " and more"}]
    second = post(pair.b, "/v1/chat/completions", changed)
    assert second.status == 200 and second.cache == "miss", second.headers
    assert second.key != first.key
    assert upstream(pair.mock, mark) == 2


def test_more_than_four_messages_are_not_cached(pair):
    mark = marker()
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"{mark} {n}"} for n in range(5)]}
    for url in (pair.a, pair.b):
        answer = post(url, "/v1/chat/completions", body)
        assert answer.status == 200 and answer.cache == "bypass", answer.headers
    assert upstream(pair.mock, mark) == 2, "LiteLLM's max_messages: 4 by default"


def test_no_cache_goes_upstream_and_still_stores(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark))
    old = pair.stored(first.key)
    around = post(pair.b, "/v1/chat/completions", chat(mark, cache={"no-cache": True}))
    assert around.status == 200 and around.cache == "bypass", around.headers
    assert around.json()["id"] != first.json()["id"]
    assert upstream(pair.mock, mark) == 2
    wait_until(lambda: pair.entry(first.key) != old, "the no-cache answer replaced the entry")
    hit = post(pair.a, "/v1/chat/completions", chat(mark))
    assert hit.cache == "hit" and hit.json() == around.json()
    assert upstream(pair.mock, mark) == 2


def test_no_store_answers_are_not_kept(pair):
    mark = marker()
    kept = post(pair.a, "/v1/chat/completions", chat(mark, cache={"no-store": True}))
    assert kept.status == 200 and kept.cache != "hit"
    # A later request's entry stored through the same instance: the earlier one had its turn.
    barrier = post(pair.a, "/v1/chat/completions", chat(marker()))
    pair.stored(barrier.key)
    assert kept.key is None or pair.entry(kept.key) is None
    again = post(pair.b, "/v1/chat/completions", chat(mark))
    assert again.cache == "miss" and upstream(pair.mock, mark) == 2


def test_cache_control_headers_no_cache_and_no_store(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark))
    pair.stored(first.key)
    around = post(pair.b, "/v1/chat/completions", chat(mark), {"cache-control": "no-cache"})
    assert around.status == 200 and around.cache == "bypass" and around.json()["id"] != first.json()["id"]
    other = marker()
    kept = post(pair.a, "/v1/chat/completions", chat(other), {"cache-control": "no-store"})
    assert kept.status == 200 and kept.cache != "hit"
    barrier = post(pair.a, "/v1/chat/completions", chat(marker()))
    pair.stored(barrier.key)
    assert kept.key is None or pair.entry(kept.key) is None
    assert post(pair.b, "/v1/chat/completions", chat(other)).cache == "miss"
    assert upstream(pair.mock, mark) == 2 and upstream(pair.mock, other) == 2


def test_a_ttl_of_one_second_expires(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark, cache={"ttl": 1}))
    pair.stored(first.key)
    assert 0 < pair.redis.command("PTTL", f"pointwork:cache:{first.key}") <= 1000
    assert post(pair.b, "/v1/chat/completions", chat(mark)).cache == "hit"
    stored_at = time.monotonic()
    wait_until(lambda: pair.entry(first.key) is None, "the entry expired", within=3)
    assert time.monotonic() - stored_at > 0.5
    later = post(pair.b, "/v1/chat/completions", chat(mark))
    assert later.cache == "miss" and upstream(pair.mock, mark) == 2


def test_s_maxage_refuses_an_older_entry(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark))
    pair.stored(first.key)
    stored_at = time.monotonic()
    young = post(pair.b, "/v1/chat/completions", chat(mark, cache={"s-maxage": 1}))
    assert young.cache == "hit" and young.json() == first.json()
    # The same entry is a hit while it is younger than a second, then a miss.
    aged = wait_until(
        lambda: (a := post(pair.b, "/v1/chat/completions", chat(mark, cache={"s-maxage": 1}))).cache != "hit" and a,
        "an entry older than s-maxage is a miss",
        within=4,
    )
    assert time.monotonic() - stored_at >= 0.9
    assert aged.status == 200 and aged.cache == "miss" and aged.json()["id"] != first.json()["id"]
    assert upstream(pair.mock, mark) == 2


def test_a_namespace_is_separate_from_the_default(pair):
    mark = marker()
    plain = post(pair.a, "/v1/chat/completions", chat(mark))
    pair.stored(plain.key)
    spaced = post(pair.b, "/v1/chat/completions", chat(mark, cache={"namespace": "x"}))
    assert spaced.cache == "miss" and spaced.json()["id"] != plain.json()["id"]
    pair.stored(spaced.key, namespace="x")
    again = post(pair.a, "/v1/chat/completions", chat(mark, cache={"namespace": "x"}))
    assert again.cache == "hit" and again.json() == spaced.json()
    still = post(pair.b, "/v1/chat/completions", chat(mark))
    assert still.cache == "hit" and still.json() == plain.json()
    assert upstream(pair.mock, mark) == 2


def test_a_key_may_only_set_its_allowed_cache_controls(pair):
    mark = marker()
    allowed = post(pair.a, "/v1/chat/completions", chat(mark, cache={"no-cache": True}), key=NARROW)
    assert allowed.status == 200 and allowed.cache == "bypass"
    refused = post(pair.a, "/v1/chat/completions", chat(mark, cache={"no-store": True}), key=NARROW)
    assert refused.status == 403, refused.body
    assert refused.json()["error"]["message"] == NOT_ALLOWED
    on_messages = post(pair.a, "/v1/messages", messages_body(mark, cache={"no-store": True}), key=NARROW)
    assert on_messages.status == 403, on_messages.body
    assert on_messages.json()["type"] == "error" and on_messages.json()["error"]["message"] == NOT_ALLOWED
    # As in LiteLLM, every control the request sets is checked, the namespace too.
    spaced = post(pair.a, "/v1/chat/completions", chat(mark, cache={"namespace": "x"}), key=NARROW)
    assert spaced.status == 403 and "set namespace as a cache control" in spaced.json()["error"]["message"]
    assert upstream(pair.mock, mark) == 1


def control(mock: Mock, **fields) -> None:
    request = http.client.HTTPConnection(mock.addr, timeout=10)
    try:
        request.request("POST", "/mock/control", body=json.dumps(fields), headers={"content-type": "application/json"})
        response = request.getresponse()
        assert response.status == 200, response.read()
        response.read()
    finally:
        request.close()


def test_a_failed_answer_is_never_stored(pair):
    mark = marker()
    control(pair.frail, fault="status:500")
    try:
        failed = post(pair.a, "/v1/chat/completions", chat(mark, model="frail"))
    finally:
        control(pair.frail, fault=None)
    assert failed.status >= 500 and failed.cache != "hit"
    barrier = post(pair.a, "/v1/chat/completions", chat(marker()))
    pair.stored(barrier.key)
    after = post(pair.b, "/v1/chat/completions", chat(mark, model="frail"))
    assert after.status == 200 and after.cache == "miss"
    assert upstream(pair.frail, mark) == 2


def test_a_stream_cut_midway_is_never_stored(pair):
    mark = marker()
    body = chat(mark, model="frail", stream=True)
    not_stored = metric_sum(pair.a, "pointwork_cache_not_stored_total")
    control(pair.frail, fault="abort-after:2")
    try:
        try:
            cut = post(pair.a, "/v1/chat/completions", body)
            assert cut.events()[-1:] != [(None, "[DONE]")] or cut.status != 200
        except http.client.HTTPException:
            pass  # the cut reached the client as a broken chunked body
    finally:
        control(pair.frail, fault=None)
    wait_until(lambda: metric_sum(pair.a, "pointwork_cache_not_stored_total") > not_stored, "counted as not stored")
    barrier = post(pair.a, "/v1/chat/completions", chat(marker()))
    pair.stored(barrier.key)
    after = post(pair.b, "/v1/chat/completions", body)
    assert after.status == 200 and after.cache == "miss"
    assert after.events()[-1] == (None, "[DONE]")
    assert upstream(pair.frail, mark) == 2


def test_a_hit_needs_no_healthy_deployment(pair):
    mark = marker()
    first = post(pair.a, "/v1/chat/completions", chat(mark, model="frail"))
    pair.stored(first.key)
    control(pair.frail, fault="status:500")
    try:
        for url in (pair.a, pair.b):
            hit = post(url, "/v1/chat/completions", chat(mark, model="frail"))
            assert hit.status == 200 and hit.cache == "hit" and hit.json() == first.json()
        down = post(pair.b, "/v1/chat/completions", chat(marker(), model="frail"))
        assert down.status >= 500, "the deployment is failing meanwhile"
    finally:
        control(pair.frail, fault=None)
    assert upstream(pair.frail, mark) == 1


def test_the_openai_sdk_reads_cached_answers_whole_and_streamed(pair):
    mark = marker()
    clients = [openai.OpenAI(base_url=f"{url}/v1", api_key=MASTER, max_retries=0) for url in (pair.a, pair.b)]
    ask = [{"role": "user", "content": mark}]
    raw = clients[0].chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=ask)
    assert raw.headers["x-pointwork-cache"] == "miss"
    pair.stored(raw.headers["x-pointwork-cache-key"])
    cached = clients[1].chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=ask)
    assert cached.headers["x-pointwork-cache"] == "hit"
    assert cached.parse().id == raw.parse().id
    assert cached.parse().choices[0].message.content == raw.parse().choices[0].message.content

    def streamed(client):
        response = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=ask, stream=True, extra_body={"cache": {"ttl": 30}}
        )
        chunks = list(response.parse())
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return response.headers, chunks, text

    headers, chunks, text = streamed(clients[0])
    assert headers["x-pointwork-cache"] == "miss" and text
    pair.stored(headers["x-pointwork-cache-key"])
    again, again_chunks, again_text = streamed(clients[1])
    assert again["x-pointwork-cache"] == "hit"
    assert again_text == text and again_chunks[0].id == chunks[0].id
    assert any(c.choices and c.choices[0].finish_reason for c in again_chunks)
    assert upstream(pair.mock, mark) == 2


def test_the_anthropic_sdk_reads_cached_answers_whole_and_streamed(pair):
    mark = marker()
    clients = [anthropic.Anthropic(base_url=url, api_key=MASTER, max_retries=0) for url in (pair.a, pair.b)]
    ask = [{"role": "user", "content": mark}]
    raw = clients[0].messages.with_raw_response.create(model="claude", max_tokens=64, messages=ask)
    assert raw.headers["x-pointwork-cache"] == "miss"
    pair.stored(raw.headers["x-pointwork-cache-key"])
    cached = clients[1].messages.with_raw_response.create(model="claude", max_tokens=64, messages=ask)
    assert cached.headers["x-pointwork-cache"] == "hit"
    assert cached.parse().id == raw.parse().id and cached.parse().content == raw.parse().content

    finals = []
    for client in clients:
        with client.messages.stream(model="claude", max_tokens=64, messages=ask) as stream:
            text = "".join(stream.text_stream)
            finals.append((stream.response.headers, text, stream.get_final_message()))
        if len(finals) == 1:
            assert finals[0][0]["x-pointwork-cache"] == "miss"
            pair.stored(finals[0][0]["x-pointwork-cache-key"])
    (_, text, final), (headers, again_text, again_final) = finals
    assert headers["x-pointwork-cache"] == "hit"
    assert text and again_text == text and again_final.id == final.id
    assert again_final.stop_reason == final.stop_reason == "end_turn"
    assert upstream(pair.mock, mark) == 2


def test_a_hit_is_in_the_access_log(pair):
    # The shards flush their lines on their own: this request's lines are told apart from other
    # tests' by a body length no other test sends.
    mark = marker() + "-" + "p" * random.randrange(3000, 9000)
    body = json.dumps(chat(mark)).encode()

    def lines():
        if not pair.access_log.exists():
            return []
        return [
            line
            for line in map(json.loads, pair.access_log.read_text().splitlines())
            if line.get("path") == "/v1/chat/completions" and line.get("bytes_in") == len(body)
        ]

    miss = post(pair.a, "/v1/chat/completions", body)
    pair.stored(miss.key)
    hit = post(pair.a, "/v1/chat/completions", body)
    assert hit.cache == "hit"
    both = wait_until(lambda: len(lines()) == 2 and lines(), "the miss's and the hit's lines")
    hits = [line for line in both if line.get("cache_hit") is True]
    assert len(hits) == 1, "exactly the hit's line says cache_hit"
    assert hits[0]["status"] == 200 and hits[0]["model"] == "gpt-4o-mini" and hits[0]["attempts"] == 0
    assert [line for line in both if "cache_hit" not in line][0]["attempts"] == 1


def one_local_gateway(tmp_path_factory, name: str, cache_params: str, pointwork: str = "", mock_args=()):
    """One gateway with an in-memory cache (`cache_params`, and `pointwork:` lines) in front of
    one mock, for a module fixture to `yield from`: (url, mock)."""
    started: list[Process] = []
    try:
        mock = _start_mock(name, *mock_args)
        started.append(mock.process)
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini", "openai/gpt-4o-mini", mock)
            + f"litellm_settings:\n  cache: true\n  cache_params: {cache_params}\n"
            + f"general_settings: {{master_key: {MASTER}}}\n"
            + pointwork
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp(f"cache-{name}"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", mock
    finally:
        for process in reversed(started):
            process.stop()


@pytest.fixture(scope="module")
def opt_in(tmp_path_factory):
    """One instance with `type: local, mode: default_off`."""
    yield from one_local_gateway(tmp_path_factory, "opt-in", "{type: local, mode: default_off}")


def test_default_off_caches_only_requests_that_ask(opt_in):
    url, mock = opt_in
    mark = marker()
    for _ in range(2):
        plain = post(url, "/v1/chat/completions", chat(mark))
        assert plain.status == 200 and plain.cache == "bypass", plain.headers
    assert upstream(mock, mark) == 2
    first = post(url, "/v1/chat/completions", chat(mark, cache={"use-cache": True}))
    assert first.cache == "miss"
    second = post(url, "/v1/chat/completions", chat(mark, cache={"use-cache": True}))
    assert second.cache == "hit", second.headers
    assert second.json() == first.json()
    assert upstream(mock, mark) == 3
    assert post(url, "/v1/chat/completions", chat(mark)).cache == "bypass"
    assert upstream(mock, mark) == 4


def test_litellms_cache_routes_ping_redis_and_delete_an_entry(pair):
    ping = urllib.request.Request(f"{pair.a}/cache/ping", headers={"authorization": f"Bearer {MASTER}"})
    with urllib.request.urlopen(ping, timeout=10) as answer:
        assert json.loads(answer.read()) == {"status": "healthy", "cache_type": "redis", "ping_response": True}

    mark = marker()
    body = chat(mark, cache={"namespace": "routes"})
    first = post(pair.a, "/v1/chat/completions", body)
    pair.stored(first.key, "routes")
    hit = post(pair.b, "/v1/chat/completions", body)
    assert hit.cache == "hit" and hit.headers["x-litellm-cache-key"] == f"routes:{first.key}"
    # The controls are the gateway's: the provider never sees them (it would refuse them).
    sent = [json.loads(r["body"]) for r in pair.mock.requests() if mark in r["body"]]
    assert len(sent) == 1 and "cache" not in sent[0]

    # Only an admin deletes; a body without keys is refused.
    assert post(pair.a, "/cache/delete", {"keys": [hit.headers["x-litellm-cache-key"]]}, key=NARROW).status == 401
    assert post(pair.a, "/cache/delete", {"key": "x"}).status == 400
    deleted = post(pair.a, "/cache/delete", {"keys": [hit.headers["x-litellm-cache-key"]]})
    assert (deleted.status, deleted.json()) == (200, {"status": "success"})
    wait_until(lambda: pair.entry(first.key, "routes") is None, "the entry is deleted from Redis")
    again = post(pair.b, "/v1/chat/completions", body)
    assert again.cache == "miss" and upstream(pair.mock, mark) == 2


def test_the_cache_routes_on_an_in_memory_cache(opt_in):
    url, mock = opt_in
    ping = urllib.request.Request(f"{url}/cache/ping", headers={"authorization": f"Bearer {MASTER}"})
    with urllib.request.urlopen(ping, timeout=10) as answer:
        assert json.loads(answer.read()) == {"status": "healthy", "cache_type": "local"}
    mark = marker()
    body = chat(mark, cache={"use-cache": True})
    assert post(url, "/v1/chat/completions", body).cache == "miss"
    hit = post(url, "/v1/chat/completions", body)
    assert hit.cache == "hit"
    assert post(url, "/cache/delete", {"keys": [hit.headers["x-litellm-cache-key"]]}).status == 200
    assert post(url, "/v1/chat/completions", body).cache == "miss"
    assert upstream(mock, mark) == 2
