"""LiteLLM's metric names on Pointwork's `/metrics` (`litellm_settings.callbacks: ["prometheus"]`),
read the way LiteLLM's dashboards read a LiteLLM proxy's: through the official `openai` SDK for
the traffic, and `prometheus_client`'s own text parser for the exposition. Each family must come
out as `prometheus_client` (which LiteLLM's integration uses) exposes a metric of its type and
LiteLLM's label names: a counter `x` as samples `x_total`, a histogram as `x_bucket` / `x_count`
/ `x_sum` with LiteLLM's buckets, the labels in LiteLLM's order."""

from __future__ import annotations

import time
import urllib.request

import openai
import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import _deployment, _start_gateway, _start_mock

MASTER = "sk-prom-master"

# LiteLLM 1.110's label names (types/integrations/prometheus.py, PrometheusMetricLabels).
CALLER = ["hashed_api_key", "api_key_alias", "team", "team_alias"]
LABELS = {
    "litellm_proxy_total_requests_metric": (
        "counter",
        ["end_user", "hashed_api_key", "api_key_alias", "requested_model", "team", "team_alias", "user",
         "status_code", "user_email", "route", "client_ip", "user_agent", "model_id", "api_provider"],
    ),
    "litellm_proxy_failed_requests_metric": (
        "counter",
        ["end_user", "hashed_api_key", "api_key_alias", "requested_model", "team", "team_alias", "user",
         "user_email", "exception_status", "exception_class", "route", "client_ip", "user_agent", "model_id",
         "api_provider"],
    ),
    "litellm_requests_metric": (
        "counter",
        ["end_user", "hashed_api_key", "api_key_alias", "model", "team", "team_alias", "user", "user_email",
         "client_ip", "user_agent", "requested_model", "model_id", "api_provider"],
    ),
    "litellm_spend_metric": (
        "counter",
        ["end_user", "hashed_api_key", "api_key_alias", "model", "team", "team_alias", "user", "user_email",
         "client_ip", "user_agent", "requested_model", "model_id", "api_provider", "service_tier"],
    ),
    "litellm_total_tokens_metric": (
        "counter",
        ["end_user", "hashed_api_key", "api_key_alias", "model", "team", "team_alias", "user", "user_email",
         "requested_model", "model_id", "api_provider"],
    ),
    "litellm_llm_api_latency_metric": (
        "histogram",
        ["model_group", "model", "hashed_api_key", "api_key_alias", "team", "team_alias", "requested_model",
         "end_user", "user", "model_id", "api_provider", "service_tier"],
    ),
    "litellm_request_total_latency_metric": (
        "histogram",
        ["model_group", "end_user", "hashed_api_key", "api_key_alias", "requested_model", "team", "team_alias",
         "user", "model", "model_id", "api_provider", "service_tier"],
    ),
    "litellm_deployment_success_responses": (
        "counter",
        ["model_group", "requested_model", "litellm_model_name", "model_id", "api_base", "api_provider", *CALLER,
         "client_ip", "user_agent"],
    ),
    "litellm_deployment_failure_responses": (
        "counter",
        ["model_group", "requested_model", "litellm_model_name", "model_id", "api_base", "api_provider",
         "exception_status", "exception_class", *CALLER, "client_ip", "user_agent"],
    ),
    "litellm_deployment_state": ("gauge", ["litellm_model_name", "model_id", "api_base", "api_provider"]),
}
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
                   420.0, 600.0, float("inf"))


def _scrape(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def _reference(kind: str, labels: list[str]):
    """What `prometheus_client` itself exposes for a metric of `kind` with `labels`, parsed."""
    registry = prometheus_client.CollectorRegistry()
    make = {"counter": prometheus_client.Counter, "gauge": prometheus_client.Gauge}
    if kind == "histogram":
        metric = prometheus_client.Histogram("ref", "ref", labels, registry=registry, buckets=LATENCY_BUCKETS)
        metric.labels(*["x"] * len(labels)).observe(0.3)
    else:
        metric = make[kind]("ref", "ref", labels, registry=registry)
        metric.labels(*["x"] * len(labels)).inc()
    text = prometheus_client.generate_latest(registry).decode()
    return next(f for f in text_string_to_metric_families(text) if f.name == "ref")


@pytest.fixture(scope="module")
def prometheus_gateway(tmp_path_factory):
    started = []
    try:
        ok, broken = _start_mock("ok"), _start_mock("down", "--fault", "status:503")
        started += [ok.process, broken.process]
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini-ok", "openai/gpt-4o-mini", ok)
            + _deployment("down", "down-1", "openai/gpt-4o", broken)
            + "router_settings:\n  num_retries: 0\n"
            + "litellm_settings:\n  callbacks: [\"prometheus\"]\n"
            + f"general_settings:\n  master_key: {MASTER}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("gateway"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}"
    finally:
        for process in reversed(started):
            process.stop()


def test_litellm_families_parse_as_prometheus_client_exposes_them(prometheus_gateway):
    client = openai.OpenAI(base_url=f"{prometheus_gateway}/v1", api_key=MASTER, max_retries=0)
    for _ in range(3):
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.create(model="down", messages=[{"role": "user", "content": "hi"}])
    assert failed.value.status_code == 503

    deadline = time.monotonic() + 20
    while True:
        families = _scrape(prometheus_gateway)
        total = families.get("litellm_proxy_total_requests_metric")
        if total is not None and sum(s.value for s in total.samples if s.name.endswith("_total")) == 4:
            break
        assert time.monotonic() < deadline, f"four requests not counted: {total}"
        time.sleep(0.05)

    for name, (kind, labels) in LABELS.items():
        ours, reference = families.get(name), _reference(kind, labels)
        assert ours is not None, f"no {name}"
        assert ours.type == reference.type, name
        assert ours.samples, f"{name}: no samples"
        want = {(s.name.replace("ref", name, 1), tuple(s.labels)) for s in reference.samples}
        got = {(s.name, tuple(s.labels)) for s in ours.samples}
        assert got == want, f"{name}: {got} != {want}"

    ok = [s for s in families["litellm_deployment_success_responses"].samples if s.labels["model_id"] == "mini-ok"]
    assert [s.value for s in ok] == [3.0]
    down = families["litellm_deployment_failure_responses"].samples
    assert [(s.labels["model_id"], s.labels["exception_status"], s.labels["exception_class"], s.value)
            for s in down] == [("down-1", "503", "Openai.ServiceUnavailableError", 1.0)]
    failed_requests = families["litellm_proxy_failed_requests_metric"].samples
    assert [(s.labels["requested_model"], s.labels["hashed_api_key"], s.value) for s in failed_requests] == [
        ("down", "litellm_proxy_master_key", 1.0)
    ]
    tokens = families["litellm_total_tokens_metric"].samples
    assert sum(s.value for s in tokens) > 0
