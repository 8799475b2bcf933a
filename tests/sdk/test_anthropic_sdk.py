"""The Anthropic Messages API through the official `anthropic` SDK against the running gateway,
natively to an `anthropic/` deployment (pointwork-mock speaking Anthropic): create, stream
(text and tool use), count_tokens, and errors raised as the SDK's own classes."""

from __future__ import annotations

import json
import urllib.request

import anthropic
import pytest

from conftest import Process, _start_gateway, _start_mock

TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    }
]


@pytest.fixture(scope="module")
def claude(tmp_path_factory):
    started: list[Process] = []
    try:
        mock = _start_mock("anthropic", "--chunks", "3")
        started.append(mock.process)
        config = (
            "model_list:\n"
            "  - model_name: claude\n"
            f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{mock.addr}\", api_key: sk-ant-deployment}}\n"
            "general_settings: {master_key: sk-master}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("anthropic"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", mock
    finally:
        for process in reversed(started):
            process.stop()


def _client(url: str, key: str = "sk-master") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


def test_create_and_stream_text(claude):
    url, _ = claude
    client = _client(url)
    message = client.messages.create(model="claude", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}])
    assert message.role == "assistant"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.usage.input_tokens > 0
    with client.messages.stream(model="claude", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.content[0].text == text
    assert final.stop_reason == "end_turn"


def test_tool_use_whole_and_streamed(claude):
    url, _ = claude
    client = _client(url)
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    message = client.messages.create(model="claude", max_tokens=64, tools=TOOLS, messages=ask)
    assert message.stop_reason == "tool_use"
    call = next(block for block in message.content if block.type == "tool_use")
    assert call.name == "get_weather" and "location" in call.input
    with client.messages.stream(model="claude", max_tokens=64, tools=TOOLS, messages=ask) as stream:
        final = stream.get_final_message()
    streamed = next(block for block in final.content if block.type == "tool_use")
    assert streamed.name == "get_weather" and "location" in streamed.input


def test_count_tokens_and_errors(claude):
    url, mock = claude
    client = _client(url)
    counted = client.messages.count_tokens(model="claude", messages=[{"role": "user", "content": "Say hello."}])
    assert counted.input_tokens > 0
    with pytest.raises(anthropic.AuthenticationError):
        _client(url, "sk-wrong").messages.create(model="claude", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.BadRequestError) as unknown:
        client.messages.create(model="no-such-model", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    assert "no-such-model" in unknown.value.body["error"]["message"]
    _control(mock, {"fault": "status:429"})
    try:
        with pytest.raises(anthropic.RateLimitError) as limited:
            client.messages.create(model="claude", max_tokens=8, messages=[{"role": "user", "content": "x"}])
        assert limited.value.body["error"]["type"] == "rate_limit_error"
    finally:
        _control(mock, {"fault": None})


def _control(mock, change: dict) -> None:
    request = urllib.request.Request(
        f"http://{mock.addr}/mock/control", data=json.dumps(change).encode(), headers={"content-type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=10).close()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """`claude` on an Anthropic mock, `gpt` on an OpenAI one: each SDK reaches the other dialect."""
    started: list[Process] = []
    try:
        anthropic_mock = _start_mock("anthropic", "--chunks", "3")
        openai_mock = _start_mock("openai", "--chunks", "3")
        started += [anthropic_mock.process, openai_mock.process]
        config = (
            "model_list:\n"
            "  - model_name: claude\n"
            f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{anthropic_mock.addr}\", api_key: sk-ant}}\n"
            "  - model_name: gpt\n"
            f"    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"{openai_mock.api_base}\", api_key: sk-oai}}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("mixed"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}"
    finally:
        for process in reversed(started):
            process.stop()


def test_the_anthropic_sdk_reaches_an_openai_compatible_deployment(mixed):
    client = _client(mixed, "unused")
    message = client.messages.create(model="gpt", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}])
    assert message.type == "message" and message.model == "gpt"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.stop_reason == "end_turn" and message.usage.output_tokens > 0
    with client.messages.stream(model="gpt", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.content[0].text == text


def test_the_openai_sdk_reaches_an_anthropic_deployment(mixed):
    import openai

    client = openai.OpenAI(base_url=f"{mixed}/v1", api_key="unused", max_retries=0)
    answer = client.chat.completions.create(model="claude", messages=[{"role": "user", "content": "Say hello."}])
    assert answer.model == "claude" and answer.choices[0].message.content
    assert answer.choices[0].finish_reason == "stop" and answer.usage.prompt_tokens > 0
    stream = client.chat.completions.create(
        model="claude", messages=[{"role": "user", "content": "Say hello."}], stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_the_openai_sdk_gets_claudes_tool_calls_translated(mixed):
    import json as _json

    import openai

    client = openai.OpenAI(base_url=f"{mixed}/v1", api_key="unused", max_retries=0)
    tools = [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}} for t in TOOLS]
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    answer = client.chat.completions.create(model="claude", messages=ask, tools=tools)
    call = answer.choices[0].message.tool_calls[0]
    assert answer.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather" and "location" in _json.loads(call.function.arguments)
    stream = client.chat.completions.create(model="claude", messages=ask, tools=tools, stream=True)
    arguments, name, finish = "", None, None
    for chunk in stream:
        if not chunk.choices:
            continue
        for delta in chunk.choices[0].delta.tool_calls or []:
            name = delta.function.name or name
            arguments += delta.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert name == "get_weather" and "location" in _json.loads(arguments)
    assert finish == "tool_calls"
