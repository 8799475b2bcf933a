"""The response cache when its store misbehaves or fills, between real processes: a Redis entry
that does not decode is a miss and is replaced; a paused Redis (`CLIENT PAUSE`) costs a request
no more than the cache's small Redis bound; a redis-server killed under load fails no request
(the misses go upstream) and is used again once it is back; the in-memory cache (`type: local`)
stays within `pointwork.cache.max_bytes` under a flood of distinct requests, evicting the least
recently used entries, and does not keep an answer over `max_item_bytes`."""

from __future__ import annotations

import statistics
import threading
import time

import pytest

from conftest import (
    Process,
    RedisServer,
    _deployment,
    _start_gateway,
    _start_mock,
    metric,
    metric_sum,
    wait_until,
)
from test_cache import MASTER, chat, control, marker, one_local_gateway, post, upstream

CHAT = "/v1/chat/completions"
MAX_BYTES = 64 * 1024
MAX_ITEM_BYTES = 16 * 1024


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One instance on a Redis cache with a 50 ms Redis bound: (url, redis, mock)."""
    started: list[Process] = []
    redis = RedisServer()
    try:
        mock = _start_mock("faults")
        started.append(mock.process)
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini", "openai/gpt-4o-mini", mock)
            + "litellm_settings:\n  cache: true\n"
            + f"  cache_params: {{type: redis, host: 127.0.0.1, port: {redis.port}}}\n"
            + f"general_settings: {{master_key: {MASTER}}}\n"
            + "pointwork:\n  cluster: {instance: solo}\n  cache: {redis_timeout: 50ms}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("cache-faults"))
        started.append(gateway)
        url = f"http://{gateway.wait_for_address()}"
        wait_until(lambda: metric(url, "pointwork_cluster_redis_up") == 1.0, "the gateway reaches Redis")
        yield url, redis, mock
    finally:
        for process in reversed(started):
            process.stop()
        redis.kill()


def _redis_key(hex_key: str) -> str:
    return f"pointwork:cache:{hex_key}"


@pytest.mark.parametrize("garbage", [b"\x00\xffnot an entry", b'{"v": 999, "body": 3}'], ids=["bytes", "json"])
def test_a_corrupt_entry_is_a_miss_and_is_replaced(shared, garbage):
    url, redis, mock = shared
    mark = marker()
    first = post(url, CHAT, chat(mark))
    assert first.cache == "miss"
    wait_until(lambda: redis.command("GET", _redis_key(first.key)), "the entry is stored")
    redis.command("SET", _redis_key(first.key), garbage, "EX", "60")
    corrupt = metric_sum(url, "pointwork_cache_corrupt_total")
    again = post(url, CHAT, chat(mark))
    assert again.status == 200 and again.cache == "miss", again.headers
    assert again.json()["id"] != first.json()["id"] and upstream(mock, mark) == 2
    assert metric_sum(url, "pointwork_cache_corrupt_total") == corrupt + 1
    after = wait_until(
        lambda: (value := redis.command("GET", _redis_key(first.key))) != garbage and [value],
        "the corrupt entry is deleted or overwritten",
    )[0]
    if after is not None:
        hit = post(url, CHAT, chat(mark))
        assert hit.cache == "hit" and hit.json() == again.json()
        assert upstream(mock, mark) == 2


def test_a_paused_redis_costs_a_request_no_more_than_a_small_bound(shared):
    url, redis, mock = shared
    cached = marker()
    first = post(url, CHAT, chat(cached))
    wait_until(lambda: redis.command("GET", _redis_key(first.key)), "the entry is stored")
    normal = []
    for _ in range(5):
        started = time.monotonic()
        assert post(url, CHAT, chat(marker())).status == 200
        normal.append(time.monotonic() - started)
    bound = statistics.median(normal) + 0.5

    unavailable = metric_sum(url, "pointwork_cache_redis_unavailable_total")
    redis.command("CLIENT", "PAUSE", "3000", "ALL")
    paused_at = time.monotonic()
    took = []
    for text in [cached, marker(), cached, marker()]:
        started = time.monotonic()
        answer = post(url, CHAT, chat(text))
        took.append(time.monotonic() - started)
        assert answer.status == 200 and answer.cache in ("miss", "bypass"), answer.headers
    assert time.monotonic() - paused_at < 3.0, "the requests ran while Redis was paused"
    assert max(took) < bound, f"requests took {took} with Redis paused, normal {normal}"
    assert upstream(mock, cached) == 3
    assert metric_sum(url, "pointwork_cache_redis_unavailable_total") >= unavailable + 4
    # Paused for three seconds, then the cache works again.
    wait_until(lambda: post(url, CHAT, chat(cached)).cache == "hit", "a hit after the pause", within=10)


def test_redis_killed_under_load_fails_no_request(shared):
    url, redis, mock = shared
    repeated = [marker() for _ in range(5)]
    for text in repeated:
        first = post(url, CHAT, chat(text))
        wait_until(lambda: redis.command("GET", _redis_key(first.key)), "the entry is stored")
    unavailable = metric_sum(url, "pointwork_cache_redis_unavailable_total")
    results: list[tuple[object, bool, float]] = []  # (status, started after the kill, seconds)
    lock = threading.Lock()
    sixty, killed = threading.Event(), threading.Event()

    def worker() -> None:
        for i in range(1000):
            with lock:
                if sum(after for _, after, _ in results) >= 100:
                    return
            text = repeated[i % 5] if i % 2 else marker()  # half would be hits
            after, started = killed.is_set(), time.monotonic()
            try:
                status: object = post(url, CHAT, chat(text)).status
            except OSError as error:
                status = f"{type(error).__name__}: {error}"
            with lock:
                results.append((status, after, time.monotonic() - started))
                if len(results) >= 60:
                    sixty.set()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    assert sixty.wait(20), "60 requests answered before the kill"
    redis.kill()
    killed.set()
    for thread in threads:
        thread.join(30)
    failed = [status for status, _, _ in results if status != 200]
    assert not failed, f"{len(failed)} of {len(results)} failed: {failed[:5]}"
    assert sum(after for _, after, _ in results) >= 100, "100 requests after the kill"
    slowest = max(seconds for _, _, seconds in results)
    assert slowest < 2.0, f"the slowest request took {slowest:.2f} s"
    assert metric_sum(url, "pointwork_cache_redis_unavailable_total") > unavailable
    assert post(url, CHAT, chat(repeated[0])).cache in ("miss", "bypass")

    redis.start()  # the same port, empty
    wait_until(lambda: metric(url, "pointwork_cluster_redis_up") == 1.0, "the gateway reaches Redis again", within=10)
    mark = marker()
    wait_until(lambda: post(url, CHAT, chat(mark)).cache == "hit", "a stored answer is a hit again", within=10)


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    """One instance on an in-memory cache bounded at MAX_BYTES: (url, mock)."""
    bounds = f"pointwork:\n  cache: {{max_bytes: {MAX_BYTES}, max_item_bytes: {MAX_ITEM_BYTES}}}\n"
    yield from one_local_gateway(tmp_path_factory, "bounded", "{type: local}", bounds, ("--threads", "2"))


def test_the_local_cache_stays_within_its_bytes_under_a_flood(bounded):
    url, mock = bounded
    control(mock, reply="word " * 400)  # a 2 KB answer
    first = marker()
    assert post(url, CHAT, chat(first)).cache == "miss"
    assert post(url, CHAT, chat(first)).cache == "hit"
    evictions = metric_sum(url, "pointwork_cache_evictions_total")
    peak = [0.0]
    flooding = threading.Event()
    flooding.set()

    def watch() -> None:
        while flooding.is_set():
            peak[0] = max(peak[0], metric_sum(url, "pointwork_cache_bytes"))
            time.sleep(0.02)

    def flood(n: int) -> None:
        for _ in range(500):
            assert post(url, CHAT, chat(marker())).status == 200

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=flood, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    flooding.clear()
    watcher.join()

    assert 0 < peak[0] <= MAX_BYTES, f"pointwork_cache_bytes reached {peak[0]}"
    assert 0 < metric_sum(url, "pointwork_cache_bytes") <= MAX_BYTES
    assert metric_sum(url, "pointwork_cache_evictions_total") - evictions > 1900
    entries = metric_sum(url, "pointwork_cache_entries")
    assert 0 < entries <= MAX_BYTES // 2000, f"{entries} entries of over 2 KB each in {MAX_BYTES} bytes"
    assert post(url, CHAT, chat(first)).cache == "miss", "the oldest entry was evicted"
    newest = marker()
    assert post(url, CHAT, chat(newest)).cache == "miss"
    assert post(url, CHAT, chat(newest)).cache == "hit"


def test_an_answer_over_max_item_bytes_is_not_stored(bounded):
    url, mock = bounded
    control(mock, reply="word " * 4000)  # a 20 KB answer
    try:
        mark = marker()
        stores = metric_sum(url, "pointwork_cache_stores_total")
        for _ in range(2):
            answer = post(url, CHAT, chat(mark))
            assert answer.status == 200 and answer.cache == "miss" and len(answer.body) > MAX_ITEM_BYTES
        assert upstream(mock, mark) == 2
        assert metric_sum(url, "pointwork_cache_stores_total") == stores
        assert metric_sum(url, "pointwork_cache_not_stored_total") >= 2
    finally:
        control(mock, reply=None)
