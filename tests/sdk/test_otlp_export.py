"""OpenTelemetry traces of `pointwork serve` turned on LiteLLM's way (`callbacks: ["otel"]` with
`OTEL_EXPORTER`, `OTEL_ENDPOINT`, `OTEL_HEADERS`), read by a real OTLP/HTTP receiver that
decodes the protobuf with the OpenTelemetry project's own types; requests made with the
official `openai` SDK."""

from __future__ import annotations

import time

import openai
import pytest

from conftest import _deployment, _start_gateway, _start_mock, metric
from otlp_receiver import OtlpReceiver, attributes

MASTER = "sk-otel-master-7f3a9c"
PROVIDER_KEYS = ("sk-otel-alpha-key", "sk-otel-broken-key")
OTLP_SECRET = "otlp-team-secret-55e1"
PROMPT = "a prompt only content export may carry 4d1c"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    receiver = OtlpReceiver()
    started = []
    try:
        alpha = _start_mock("alpha")
        broken = _start_mock("broken", "--fault", "status:503")
        started += [alpha.process, broken.process]
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini-alpha", "openai/gpt-4o-mini", alpha).replace("sk-mini-alpha", PROVIDER_KEYS[0])
            + _deployment("guarded", "guarded-1", "openai/gpt-4o", broken).replace("sk-guarded-1", PROVIDER_KEYS[1])
            + "router_settings:\n  num_retries: 0\n  fallbacks: [{guarded: [gpt-4o-mini]}]\n"
            + f"general_settings:\n  master_key: {MASTER}\n"
            + "litellm_settings:\n  callbacks: [\"otel\"]\n"
        )
        env = {
            "OTEL_EXPORTER": "otlp_http",
            "OTEL_ENDPOINT": receiver.endpoint,
            "OTEL_HEADERS": f"x-team-key={OTLP_SECRET}",
            "OTEL_SERVICE_NAME": "edge-gateway",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "300",
            "OTEL_BSP_MAX_QUEUE_SIZE": "40",
        }
        gateway = _start_gateway(config, tmp_path_factory.mktemp("otel"), env=env)
        started.append(gateway)
        url = f"http://{gateway.wait_for_address()}"
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=MASTER, max_retries=0)
        yield url, client, receiver, alpha
    finally:
        receiver.close()
        for process in reversed(started):
            process.stop()


def _chat(client, **kw):
    return client.chat.completions.with_raw_response.create(
        model=kw.pop("model", "gpt-4o-mini"), messages=[{"role": "user", "content": PROMPT}], **kw
    )


def _server_span_of(receiver, trace_id_hex: str):
    def find():
        for span in receiver.server_spans():
            if span.trace_id.hex() == trace_id_hex:
                return span
        return None

    return receiver.wait_for(find, f"the server span of trace {trace_id_hex}")


def test_every_request_is_one_trace_with_genai_attributes(traced):
    url, client, receiver, _ = traced
    before = len(receiver.server_spans())
    for _ in range(31):
        raw = _chat(client, temperature=0.3, max_tokens=32)
        assert raw.http_response.status_code == 200
        assert float(raw.headers["x-pointwork-overhead-ms"]) >= 0
    receiver.wait_for(lambda: len(receiver.server_spans()) >= before + 31, "31 traces")
    span = receiver.server_spans()[-1]
    a = attributes(span)
    assert span.name == "chat gpt-4o-mini"
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == "gpt-4o-mini"
    assert a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.response.model"].startswith("gpt-4o-mini")
    assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
    assert a["gen_ai.request.temperature"] == pytest.approx(0.3)
    assert a["gen_ai.request.max_tokens"] == 32
    assert a["gen_ai.response.finish_reasons"] == ["stop"]
    assert a["pointwork.deployment"] == "mini-alpha"
    assert a["pointwork.model_group"] == "gpt-4o-mini"
    assert a["pointwork.key_alias"] == "master"
    assert "picked mini-alpha" in a["pointwork.route_reason"]
    assert a["http.response.status_code"] == 200
    resource = receiver.spans[-1][0]
    assert resource["service.name"] == "edge-gateway"
    (attempt,) = receiver.children_of(span)
    assert attempt.kind == attempt.SPAN_KIND_CLIENT
    assert attributes(attempt)["pointwork.deployment"] == "mini-alpha"
    assert span.start_time_unix_nano <= attempt.start_time_unix_nano <= attempt.end_time_unix_nano <= span.end_time_unix_nano
    assert receiver.headers[-1].get("x-team-key") == OTLP_SECRET


def test_a_failed_over_request_has_both_attempts(traced):
    _, client, receiver, _ = traced
    raw = _chat(client, model="guarded")
    assert raw.http_response.status_code == 200
    assert raw.headers["x-pointwork-deployment"] == "mini-alpha"
    span = receiver.wait_for(
        lambda: next((s for s in reversed(receiver.server_spans()) if s.name == "chat guarded"), None),
        "the guarded request's trace",
    )
    attempts = sorted(receiver.wait_for(lambda: receiver.children_of(span), "its attempts"), key=lambda s: s.start_time_unix_nano)
    assert [attributes(s)["pointwork.deployment"] for s in attempts] == ["guarded-1", "mini-alpha"]
    first, second = (attributes(s) for s in attempts)
    assert first["error.type"] == "status_503" and first["http.response.status_code"] == 503
    assert attempts[0].status.code == attempts[0].status.STATUS_CODE_ERROR
    assert second["pointwork.attempt.cause"] == "fallback"
    assert attributes(span)["pointwork.attempts"] == 2


def test_a_callers_traceparent_is_continued_and_reaches_the_upstream(traced):
    _, client, receiver, alpha = traced
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    raw = _chat(client, extra_headers={"traceparent": f"00-{trace_id}-{parent}-01", "tracestate": "congo=t61rcWkgMzE"})
    assert raw.http_response.status_code == 200
    span = _server_span_of(receiver, trace_id)
    assert span.parent_span_id.hex() == parent
    assert span.trace_state == "congo=t61rcWkgMzE"
    (attempt,) = receiver.wait_for(lambda: receiver.children_of(span), "its attempt")
    seen = [dict((k.lower(), v) for k, v in r["headers"]) for r in alpha.requests()]
    upstream = [h for h in seen if h.get("traceparent", "").startswith(f"00-{trace_id}-")]
    assert upstream, "the upstream got the trace"
    assert upstream[-1]["traceparent"] == f"00-{trace_id}-{attempt.span_id.hex()}-01"
    assert upstream[-1]["tracestate"] == "congo=t61rcWkgMzE"


def test_a_stream_says_its_first_token_time(traced):
    _, client, receiver, _ = traced
    before = len(receiver.server_spans())
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "stream please"}], stream=True
    )
    chunks = list(stream)
    assert chunks and all(c.usage is None for c in chunks), "the usage the gateway asked for is cut"
    span = receiver.wait_for(
        lambda: next((s for s in receiver.server_spans()[before:] if attributes(s)["gen_ai.request.stream"]), None),
        "the stream's trace",
    )
    a = attributes(span)
    assert 0 < a["gen_ai.server.time_to_first_token"] < (span.end_time_unix_nano - span.start_time_unix_nano) / 1e9
    assert a["gen_ai.usage.output_tokens"] > 0


def test_nothing_secret_and_no_content_is_exported(traced):
    _, client, receiver, _ = traced
    _chat(client)
    receiver.wait_for(lambda: receiver.raw, "an export")
    exported = b"".join(receiver.raw)
    for secret in (MASTER, *PROVIDER_KEYS, OTLP_SECRET):
        assert secret.encode() not in exported, secret
    assert PROMPT.encode() not in exported, "content is opt-in"


def test_refused_requests_and_embeddings_are_traced_too(traced):
    url, client, receiver, _ = traced
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    refused = receiver.wait_for(
        lambda: next((s for s in receiver.server_spans() if s.name == "chat no-such-model"), None), "the refusal's trace"
    )
    a = attributes(refused)
    assert a["http.response.status_code"] == 400 and a["error.type"] == "400"
    assert "no-such-model" in a["pointwork.error"]
    assert refused.status.code == refused.status.STATUS_CODE_ERROR
    assert receiver.children_of(refused) == []


def test_a_hung_receiver_costs_requests_nothing_and_drops_are_counted(traced):
    url, client, receiver, _ = traced

    def timed(n):
        took = []
        for _ in range(n):
            t = time.monotonic()
            assert _chat(client).http_response.status_code == 200
            took.append(time.monotonic() - t)
        return sorted(took)[len(took) // 2]

    baseline = timed(40)
    receiver.hang()
    dropped_before = metric(url, 'pointwork_export_dropped_total{exporter="otlp"}')
    hung = timed(120)
    assert hung < baseline * 3 + 0.005, f"median {hung * 1e3:.2f} ms with the receiver hung, {baseline * 1e3:.2f} ms before"
    receiver.wait_for(
        lambda: metric(url, 'pointwork_export_dropped_total{exporter="otlp"}') > dropped_before,
        "drops counted",
    )
    receiver.wait_for(
        lambda: metric(url, 'pointwork_export_failures_total{exporter="otlp"}') >= 1,
        "the timed-out export counted as a failure",
    )
    receiver.recover()
    before = len(receiver.server_spans())
    assert _chat(client).http_response.status_code == 200
    receiver.wait_for(lambda: len(receiver.server_spans()) > before, "export resumes", within=20)


@pytest.fixture(scope="module")
def with_content(tmp_path_factory):
    """`pointwork.telemetry` with content on; an OpenAI and an Anthropic deployment."""
    receiver = OtlpReceiver()
    started = []
    try:
        mock = _start_mock("content")
        started.append(mock.process)
        config = (
            "model_list:\n"
            + _deployment("gpt-4o-mini", "mini", "openai/gpt-4o-mini", mock)
            + "  - model_name: claude\n"
            + f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{mock.addr}\", api_key: sk-ant-secret-91}}\n"
            + f"general_settings:\n  master_key: {MASTER}\n"
            + f"pointwork:\n  telemetry:\n    otlp: {{endpoint: \"{receiver.endpoint}\"}}\n    content: true\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("otel-content"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", receiver
    finally:
        receiver.close()
        for process in reversed(started):
            process.stop()


def test_content_goes_only_when_configured_and_secrets_never(with_content):
    import json

    import anthropic

    url, receiver = with_content
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=MASTER, max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": PROMPT}])
    span = receiver.wait_for(lambda: next(iter(receiver.server_spans()), None), "the chat's trace")
    a = attributes(span)
    assert json.loads(a["gen_ai.input.messages"]) == [{"role": "user", "content": PROMPT}]
    output = json.loads(a["gen_ai.output.messages"])
    assert output == [{"role": "assistant", "content": answer.choices[0].message.content}]
    claude = anthropic.Anthropic(base_url=url, api_key=MASTER, max_retries=0)
    reply = claude.messages.create(
        model="claude", max_tokens=64, system="be brief", messages=[{"role": "user", "content": PROMPT}]
    )
    messages_span = receiver.wait_for(
        lambda: next((s for s in receiver.server_spans() if s.name == "chat claude"), None), "the Messages trace"
    )
    m = attributes(messages_span)
    assert m["gen_ai.provider.name"] == "anthropic"
    assert m["url.path"] == "/v1/messages"
    assert m["gen_ai.usage.input_tokens"] == reply.usage.input_tokens
    assert m["gen_ai.usage.output_tokens"] == reply.usage.output_tokens
    assert json.loads(m["gen_ai.input.messages"])[0] == {"role": "system", "content": "be brief"}
    assert json.loads(m["gen_ai.output.messages"])[0]["content"] == reply.content[0].text
    exported = b"".join(receiver.raw)
    for secret in (MASTER, "sk-mini", "sk-ant-secret-91"):
        assert secret.encode() not in exported, secret


def test_without_an_exporter_a_callers_traceparent_passes_as_it_came(stack):
    client = openai.OpenAI(base_url=stack.base_url, api_key="unused", max_retries=0)
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], extra_headers={"traceparent": parent}
    )
    mock = stack.mocks["alpha" if raw.headers["x-pointwork-deployment"] == "mini-alpha" else "beta"]
    seen = [dict((k.lower(), v) for k, v in r["headers"]) for r in mock.requests()]
    assert any(h.get("traceparent") == parent for h in seen)
    assert float(raw.headers["x-pointwork-overhead-ms"]) >= 0


def test_a_drain_sends_what_waits(tmp_path):
    receiver = OtlpReceiver()
    mock = _start_mock("drained")
    config = "model_list:\n" + _deployment("m", "d", "openai/gpt-4o-mini", mock)
    gateway = _start_gateway(config, tmp_path, env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    try:
        url = f"http://{gateway.wait_for_address()}"
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        for _ in range(20):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        gateway.proc.terminate()
        assert gateway.proc.wait(timeout=15) == 0
        assert len(receiver.server_spans()) == 20, "every record went out before the exit"
    finally:
        gateway.stop()
        mock.process.stop()
        receiver.close()
