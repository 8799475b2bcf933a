"""The official `openai` Python SDK against a running gateway: what users of LiteLLM's proxy do
with it must keep working unchanged against Pointwork."""

from __future__ import annotations

import asyncio

import openai
import pytest

MESSAGES = [{"role": "user", "content": "Say hello."}]
CALLER_KEY = "sk-caller-key-never-forwarded"
# Which mock answers for which deployment id, and what it says.
ANSWERS = {"mini-alpha": "Hello from mock alpha", "mini-beta": "Hello from mock beta"}


@pytest.fixture
def client(stack) -> openai.OpenAI:
    # max_retries=0: the SDK's own retries would hide the gateway's behaviour.
    return openai.OpenAI(base_url=stack.base_url, api_key=CALLER_KEY, max_retries=0, timeout=30)


def test_chat_completion(client, stack):
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=MESSAGES)
    deployment = raw.headers["x-pointwork-deployment"]
    assert deployment in ANSWERS
    assert raw.headers["x-pointwork-model-group"] == "gpt-4o-mini"
    assert int(raw.headers["x-pointwork-attempts"]) == 1
    completion = raw.parse()
    assert completion.object == "chat.completion"
    assert completion.model == "gpt-4o-mini"
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content == ANSWERS[deployment]
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


def test_streaming_chat_completion(client):
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},
    )
    content = []
    finish_reasons = []
    usage = None
    chunks = 0
    for chunk in stream:
        chunks += 1
        assert chunk.object == "chat.completion.chunk"
        assert chunk.model == "gpt-4o-mini"
        for choice in chunk.choices:
            if choice.delta.content:
                content.append(choice.delta.content)
            finish_reasons.append(choice.finish_reason)
        if chunk.usage is not None:
            usage = chunk.usage
    text = "".join(content)
    assert text in ANSWERS.values()
    assert finish_reasons[-1] == "stop"
    assert all(reason is None for reason in finish_reasons[:-1])
    assert usage is not None and usage.completion_tokens == 8
    assert chunks == 8 + 1  # eight content chunks and the usage chunk


def test_async_streaming_chat_completion(stack):
    async def run() -> str:
        client = openai.AsyncOpenAI(base_url=stack.base_url, api_key=CALLER_KEY, max_retries=0, timeout=30)
        try:
            stream = await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
            pieces = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
            return "".join(pieces)
        finally:
            await client.close()

    assert asyncio.run(run()) in ANSWERS.values()


def test_embeddings(client):
    response = client.embeddings.create(model="text-embedding-3-small", input=["one", "two", "three"])
    assert response.object == "list"
    assert response.model == "text-embedding-3-small"
    assert [item.index for item in response.data] == [0, 1, 2]
    for item in response.data:
        assert len(item.embedding) == 8
        assert all(isinstance(x, float) for x in item.embedding)


def test_models_list(client):
    ids = [model.id for model in client.models.list()]
    assert ids == ["gpt-4o-mini", "text-embedding-3-small", "broken", "guarded", "fast"]


def test_unknown_model_is_a_bad_request_with_litellms_message(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-5-nano", messages=MESSAGES)
    error = caught.value
    assert error.status_code == 400
    expected = (
        "Invalid model name passed in model=gpt-5-nano. "
        "Call `/v1/models` to view available models for your key."
    )
    assert error.body["message"] == expected
    assert expected in str(error)
    assert error.type == "invalid_request_error"
    assert error.param == "model"


def test_upstream_error_reaches_the_sdk_with_its_status(client, stack):
    before = stack.mocks["broken"].stats()["requests"]
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="broken", messages=MESSAGES)
    assert caught.value.status_code == 503
    assert caught.value.body["message"] == "mock broken injected status 503"
    assert caught.value.response.headers["x-pointwork-attempts"] == "2"
    assert stack.mocks["broken"].stats()["requests"] - before == 2  # 1 + num_retries


def test_caller_key_is_replaced_by_the_deployment_key(client, stack):
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    client.embeddings.create(model="text-embedding-3-small", input="x")
    seen = 0
    for name in ("alpha", "beta"):
        mock = stack.mocks[name]
        for request in mock.requests():
            seen += 1
            auth = [value for header, value in request["headers"] if header.lower() == "authorization"]
            assert len(auth) == 1 and auth[0].startswith("Bearer sk-"), request["headers"]
            assert CALLER_KEY not in str(request["headers"])
            assert '"model":"gpt-4o-mini"' in request["body"] or '"model":"text-embedding-3-small"' in request["body"]
    assert seen >= 2


def test_a_failing_group_falls_back_and_the_sdk_sees_a_normal_answer(client, stack):
    before = stack.mocks["broken"].stats()["requests"]
    raw = client.chat.completions.with_raw_response.create(model="guarded", messages=MESSAGES)
    assert raw.headers["x-pointwork-model-group"] == "gpt-4o-mini"
    assert raw.headers["x-pointwork-deployment"] in ANSWERS
    assert raw.headers["x-pointwork-attempts"] == "3"  # 1 + num_retries in guarded, then the fallback
    assert "picked" in raw.headers["x-pointwork-route"]
    completion = raw.parse()
    assert completion.choices[0].message.content == ANSWERS[raw.headers["x-pointwork-deployment"]]
    assert stack.mocks["broken"].stats()["requests"] - before == 2


def test_aliases_visible_and_hidden_serve_their_group(client):
    for name in ("fast", "internal"):
        raw = client.chat.completions.with_raw_response.create(model=name, messages=MESSAGES)
        assert raw.headers["x-pointwork-model-group"] == "gpt-4o-mini"
        assert raw.parse().choices[0].message.content in ANSWERS.values()
