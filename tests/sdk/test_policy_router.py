"""The policy router through the official `openai` SDK: an EU policy over a catalogue with EU,
non-EU, catalogue-only and partner endpoints; the `llmeu` block in an answer and in a stream;
the route reason; a 409 the SDK raises as a ConflictError; failover that stays inside the
filtered set while the non-EU endpoint is the only healthy one; a key bound to a policy beside
a key without one."""

from __future__ import annotations

import hashlib

import openai
import pytest

from conftest import Process, _start_gateway, _start_mock

BOUND, FREE = "sk-eu-team", "sk-anywhere"


def _endpoint(group: str, ident: str, mock, info: str) -> str:
    return (
        f"  - model_name: {group}\n"
        f"    litellm_params: {{model: openai/{group}, api_base: \"{mock.api_base}\", api_key: sk-{ident},"
        f" input_cost_per_token: 0.0000002, output_cost_per_token: 0.0000004}}\n"
        f"    model_info: {{id: {ident}, {info}}}\n"
    )


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    started: list[Process] = []
    try:
        mocks = {}
        for name, flags in [("de", ()), ("fr", ()), ("us", ()), ("down", ("--fault", "status:503"))]:
            mocks[name] = _start_mock(name, *flags)
            started.append(mocks[name].process)
        config = (
            "model_list:\n"
            + _endpoint("qwen3-coder-30b", "qwen-de", mocks["de"], "sovereignty_class: eu_owned_eu_operated, region: de-ber, task_fit: {coding: 1.0}")
            + _endpoint("qwen3-coder-30b", "qwen-us", mocks["us"], "sovereignty_class: non_eu, region: us-east, task_fit: {coding: 1.0}")
            + _endpoint("mistral-large", "mistral-fr", mocks["fr"], "sovereignty_class: eu_owned_eu_operated, region: fr-par")
            + _endpoint("flaky-coder", "flaky-de", mocks["down"], "sovereignty_class: eu_owned_eu_operated, region: de-fra, task_fit: {coding: 1.0}, docs_completeness: 1.0")
            + _endpoint("flaky-coder", "flaky-us", mocks["us"], "sovereignty_class: non_eu, region: us-west, task_fit: {coding: 1.0}")
            + _endpoint("archive", "archive-row", mocks["de"], "kind: catalogue_only, sovereignty_class: eu_owned_eu_operated, region: de-ber")
            + _endpoint("partner-model", "partner-de", mocks["de"], "sovereignty_class: eu_owned_eu_operated, region: de-fra, partner: true")
            + "  - model_name: llmeu-auto\n    litellm_params: {model: pointwork/policy_router, policy_router_config: {pool: [qwen3-coder-30b, mistral-large, archive, partner-model]}}\n"
            + "general_settings: {master_key: sk-master}\n"
            + "pointwork:\n  policies:\n    eu-strict: {}\n  auth:\n    virtual_keys:\n"
            + f"      - {{name: eu, sha256: {_digest(BOUND)}, policy: eu-strict}}\n"
            + f"      - {{name: free, sha256: {_digest(FREE)}}}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("policy"))
        started.append(gateway)
        addr = gateway.wait_for_address()
        yield f"http://{addr}/v1", mocks
    finally:
        for process in reversed(started):
            process.stop()


def _client(base_url: str, key: str = BOUND) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)


def _ask(client, model: str, **extra):
    return client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "Write a sort."}], **extra
    )


def test_the_auto_model_answers_with_the_llmeu_block(catalogue):
    base_url, mocks = catalogue
    raw = _ask(_client(base_url), "llmeu-auto", extra_body={"llmeu": {"task": "coding"}})
    answer = raw.parse()
    assert answer.choices[0].message.content
    block = answer.model_extra["llmeu"]
    reason = (
        'auto routing for task "coding" + residency eu-hosted + qwen3-coder-30b @ de-ber '
        "(EU-owned, EU-operated); 3 endpoint(s) excluded; partner endpoints not allowed."
    )
    assert block == {
        "model_used": "qwen3-coder-30b",
        "inference_region": "de-ber",
        "sovereignty_class": "eu_owned_eu_operated",
        "policy_id": "eu-strict",
        "route_reason": reason,
    }
    assert raw.headers["x-llmeu-route-reason"] == reason
    assert raw.headers["x-pointwork-deployment"] == "qwen-de"
    assert all("llmeu" not in r["body"] for r in mocks["de"].requests())
    assert mocks["us"].stats()["requests"] == 0


def test_a_stream_ends_with_the_block_and_the_sdk_reads_it(catalogue):
    base_url, _ = catalogue
    stream = _client(base_url).chat.completions.create(
        model="llmeu-auto",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        extra_body={"llmeu": {"task": "coding"}},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    last = chunks[-1]
    assert last.choices == []
    assert last.model_extra["llmeu"]["model_used"] == "qwen3-coder-30b"


def test_outside_the_residency_the_sdk_raises_a_409(catalogue):
    base_url, mocks = catalogue
    before = mocks["us"].stats()["requests"]
    with pytest.raises(openai.ConflictError) as refused:
        _ask(_client(base_url), "qwen3-coder-30b", extra_body={"llmeu": {"residency": "fr"}})
    error = refused.value.body
    assert error["code"] == "no_endpoint_for_policy"
    assert error["message"] == (
        "No endpoint satisfies residency fr for model qwen3-coder-30b. Residency is never relaxed silently."
    )
    assert refused.value.status_code == 409
    assert mocks["us"].stats()["requests"] == before


def test_failover_never_leaves_the_filtered_set(catalogue):
    base_url, mocks = catalogue
    before = mocks["us"].stats()["requests"]
    # flaky-coder's only EU endpoint answers 503; its healthy US endpoint must get nothing.
    with pytest.raises(openai.InternalServerError) as failed:
        _ask(_client(base_url), "flaky-coder")
    assert failed.value.status_code == 503
    assert mocks["us"].stats()["requests"] == before


def test_a_key_without_a_policy_routes_as_before(catalogue):
    base_url, mocks = catalogue
    served = set()
    for _ in range(64):
        raw = _ask(_client(base_url, FREE), "qwen3-coder-30b")
        assert "x-llmeu-policy-id" not in raw.headers
        served.add(raw.headers["x-pointwork-deployment"])
        if len(served) == 2:
            break
    assert served == {"qwen-de", "qwen-us"}


def test_a_responses_request_runs_under_the_policy_and_fails_over_within_it(catalogue):
    base_url, mocks = catalogue
    client = _client(base_url)
    raw = client.responses.with_raw_response.create(model="qwen3-coder-30b", input="Write a sort.")
    assert raw.parse().output_text
    assert raw.headers["x-pointwork-deployment"] == "qwen-de"
    assert raw.headers["x-llmeu-route-reason"]
    before = mocks["us"].stats()["requests"]
    # flaky-de answers 503; under eu-strict the non-EU endpoint is never tried.
    with pytest.raises(openai.APIStatusError):
        client.responses.create(model="flaky-coder", input="Write a sort.")
    assert mocks["us"].stats()["requests"] == before
