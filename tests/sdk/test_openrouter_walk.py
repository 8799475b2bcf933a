"""The OpenRouter best-value walk through the official `openai` SDK: a managed model group in
wildcard mode pins the walk's winner (plain and streamed, the reason word in
`x-pointwork-route`), and under `strict_provider` the SDK's own `extra_body` provider pin is
refused with the walk's error, as a BadRequestError."""

from __future__ import annotations

import json
import time
import urllib.request

import openai
import pytest

from conftest import Process, _start_gateway, _start_mock

MODEL = "z-ai/glm-5.2"
CALLBACK = "litellm_plugin_openrouter_pareto.plugin.openrouter_pareto_callback"
# (slug, dollars per million input tokens, p50 tokens per second): b/fp8 is the best value.
PROVIDERS = [("a/fp8", 1.0, 10.0), ("b/fp8", 1.2, 30.0), ("c/fp8", 1.3, 25.0), ("d/fp8", 5.0, 26.0)]


def _telemetry(root) -> None:
    model = root / MODEL
    model.mkdir(parents=True)
    stats = [
        {
            "provider_slug": slug,
            "quantization": "fp8",
            "context_length": 1048576,
            "data_policy": {"retainsPrompts": False},
            "pricing": {"prompt": f"{price / 1e6:.10f}", "completion": f"{2 * price / 1e6:.10f}"},
            "provider_info": {"headquarters": "US", "datacenters": ["US"]},
            "stats": {"p50_throughput": tps, "request_count": 500},
        }
        for slug, price, tps in PROVIDERS
    ]
    endpoints = [{"tag": slug, "uptime_last_5m": 99.5} for slug, _, _ in PROVIDERS]
    (model / "stats.json").write_text(json.dumps({"data": stats}))
    (model / "endpoints.json").write_text(json.dumps({"data": {"id": MODEL, "endpoints": endpoints}}))


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    started: list[Process] = []
    try:
        root = tmp_path_factory.mktemp("openrouter")
        _telemetry(root / "telemetry")
        mock = _start_mock("openrouter", "--openrouter-telemetry", str(root / "telemetry"))
        started.append(mock.process)
        config = (
            "model_list:\n"
            f"  - model_name: {MODEL}\n"
            f"    litellm_params: {{model: openrouter/{MODEL}, api_base: \"http://{mock.addr}/api/v1\", api_key: sk-or}}\n"
            "    model_info: {id: or-wildcard}\n"
            "litellm_settings:\n"
            f"  callbacks: [\"{CALLBACK}\"]\n"
            "  openrouter_pareto_rules:\n"
            f"    \"{MODEL}\": {{precision: [fp8], min_context: 1000000, min_stats_requests: 100, wildcard: true, strict_provider: true}}\n"
            f"  openrouter_pareto_telemetry: {{base_url: \"http://{mock.addr}\", cache_dir: \"{root / 'cache'}\"}}\n"
        )
        gateway = _start_gateway(config, root)
        started.append(gateway)
        url = f"http://{gateway.wait_for_address()}"
        _await_winner(url)
        yield url
    finally:
        for process in reversed(started):
            process.stop()


def _await_winner(url: str) -> None:
    """The first poll runs at start; wait until its verdict is published (dry run)."""
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
    deadline = time.monotonic() + 20
    while True:
        request = urllib.request.Request(f"{url}/v1/route", data=body, headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            walk = json.load(response)["pareto"]
        if walk["telemetry"] and walk["telemetry"]["winner"]:
            return
        assert time.monotonic() < deadline, walk
        time.sleep(0.05)


def test_the_sdk_gets_the_walks_winner_plain_and_streamed(walk):
    client = openai.OpenAI(base_url=f"{walk}/v1", api_key="sk-unused", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "Say hello."}]
    )
    assert raw.headers["x-pointwork-route"].startswith("openrouter-pareto winner b/fp8;")
    assert raw.headers["x-mock-provider"] == "b/fp8"
    assert raw.parse().choices[0].message.content
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Say hello."}], stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text


def test_strict_provider_refuses_the_sdks_own_provider_pin(walk):
    client = openai.OpenAI(base_url=f"{walk}/v1", api_key="sk-unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Say hello."}],
            extra_body={"provider": {"only": ["d/fp8"]}},
        )
    error = refused.value.body
    assert error["type"] == "strict_provider_conflict"
    assert error["param"] == "provider"
    assert "strict_provider" in error["message"]
