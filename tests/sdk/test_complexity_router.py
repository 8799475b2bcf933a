"""The complexity auto-router through the official `openai` and `anthropic` SDKs against the
running gateway: spec 002's tier pool of a dead group (a closed port) and a live group (the
mock). The SDKs send the session in `metadata`; every request but the one warm hit on the dead
group is served by the live group, and the answer's headers say why."""

from __future__ import annotations

import socket

import anthropic
import openai
import pytest

from conftest import Process, _start_gateway, _start_mock

POOL = "[dead-tier-model, live-tier-model]"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def router(tmp_path_factory):
    started: list[Process] = []
    try:
        mock = _start_mock("live")
        started.append(mock.process)
        config = (
            "model_list:\n"
            "  - model_name: tier-health-router\n"
            "    litellm_params:\n"
            "      model: auto_router/complexity_router\n"
            "      complexity_router_config:\n"
            "        session_affinity: true\n"
            f"        tiers: {{SIMPLE: {POOL}, MEDIUM: {POOL}, COMPLEX: {POOL}, REASONING: {POOL}}}\n"
            "  - model_name: dead-tier-model\n"
            f"    litellm_params: {{model: openai/claude-haiku-4-5-20251001, api_base: \"http://127.0.0.1:{_closed_port()}/v1\", api_key: dead-key}}\n"
            "  - model_name: live-tier-model\n"
            f"    litellm_params: {{model: openai/claude-haiku-4-5-20251001, api_base: \"{mock.api_base}\", api_key: live-key}}\n"
            "router_settings: {num_retries: 0, allowed_fails: 0, cooldown_time: 3600}\n"
            "general_settings: {master_key: sk-master}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("complexity"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}"
    finally:
        for process in reversed(started):
            process.stop()


def test_openai_sdk_sessions_are_served_by_the_live_peer(router):
    client = openai.OpenAI(base_url=f"{router}/v1", api_key="sk-master", max_retries=0)
    failures = 0
    for session in range(6):
        for turn in range(4):
            try:
                raw = client.chat.completions.with_raw_response.create(
                    model="tier-health-router",
                    messages=[{"role": "user", "content": f"turn {turn} say hi"}],
                    max_tokens=8,
                    metadata={"session_id": f"sdk-{session}"},
                )
            except openai.APIStatusError as e:
                assert e.status_code >= 500, e
                failures += 1
                continue
            answer = raw.parse()
            assert answer.choices[0].message.content
            assert raw.headers["x-pointwork-model-group"] == "live-tier-model"
            assert raw.headers["x-pointwork-route"].startswith("auto-router SIMPLE ")
    assert failures <= 1, "only the warm hit on the dead group fails"


def test_anthropic_sdk_goes_through_the_same_gate(router):
    client = anthropic.Anthropic(base_url=router, api_key="sk-master", max_retries=0)
    served = 0
    for session in range(8):
        try:
            message = client.messages.create(
                model="tier-health-router",
                max_tokens=10,
                messages=[{"role": "user", "content": "say hi"}],
                metadata={"user_id": f"anthropic-{session}"},
            )
        except anthropic.APIStatusError as e:
            assert e.status_code >= 500 and e.status_code != 529, e
            continue
        assert message.model == "tier-health-router"
        assert message.content[0].text
        served += 1
    assert served >= 7
