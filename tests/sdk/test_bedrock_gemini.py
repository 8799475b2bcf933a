"""Bedrock and Gemini deployments through the official `openai` SDK against the running
gateway, with pointwork-mock playing AWS Bedrock (it verifies every request's SigV4 signature)
and Google's Gemini API (it checks the `x-goog-api-key`): whole, streamed with usage, tool
calls and embeddings translated both ways, and a Bedrock throttle raised as the SDK's
RateLimitError when no other deployment can serve."""

from __future__ import annotations

import openai
import pytest

from conftest import Process, _start_gateway, _start_mock

AKID = "AKIDPOINTWORKSDK"
SECRET = "sdk/secret+key"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


@pytest.fixture(scope="module")
def providers(tmp_path_factory):
    started: list[Process] = []
    try:
        bedrock = _start_mock(
            "bedrock", "--aws-access-key-id", AKID, "--aws-secret-access-key", SECRET, "--aws-region", "eu-west-1"
        )
        started.append(bedrock.process)
        throttled = _start_mock("bedrock-throttled", "--fault", "status:429")
        started.append(throttled.process)
        gemini = _start_mock("gemini", "--gemini-api-key", "g-key")
        started.append(gemini.process)

        def aws(group: str, model: str, addr: str) -> str:
            return (
                f"  - model_name: {group}\n"
                f"    litellm_params: {{model: {model}, api_base: \"http://{addr}\", aws_access_key_id: {AKID}, "
                f"aws_secret_access_key: \"{SECRET}\", aws_region_name: eu-west-1}}\n"
            )

        config = (
            "model_list:\n"
            + aws("claude", "bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0", bedrock.addr)
            + aws("titan", "bedrock/amazon.titan-embed-text-v2:0", bedrock.addr)
            + aws("throttled", "bedrock/anthropic.claude-3-haiku-20240307-v1:0", throttled.addr)
            + "  - model_name: flash\n"
            + f"    litellm_params: {{model: gemini/gemini-2.5-flash, api_base: \"http://{gemini.addr}/v1beta\", api_key: g-key}}\n"
            + "  - model_name: gemini-embed\n"
            + f"    litellm_params: {{model: gemini/text-embedding-004, api_base: \"http://{gemini.addr}/v1beta\", api_key: g-key}}\n"
            + "router_settings: {num_retries: 0}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("providers"))
        started.append(gateway)
        client = openai.OpenAI(base_url=f"http://{gateway.wait_for_address()}/v1", api_key="unused", max_retries=0)
        yield client, bedrock, gemini
    finally:
        for process in reversed(started):
            process.stop()


@pytest.mark.parametrize("model", ["claude", "flash"])
def test_whole_and_streamed_with_usage(providers, model):
    client, _, _ = providers
    answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hello."}])
    assert answer.choices[0].message.content
    assert answer.model == model
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    chunks = list(
        client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Say hello."}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


@pytest.mark.parametrize("model", ["claude", "flash"])
def test_tool_calls_come_back_as_openai_tool_calls(providers, model):
    client, _, _ = providers
    answer = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Weather in Paris?"}], tools=TOOLS, tool_choice="required"
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.function.name == "get_weather"
    # The call goes back as history, the tool's answer after it, and the model answers.
    followup = client.chat.completions.create(
        model=model,
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": '{"temp_c": 18}'},
        ],
        tools=TOOLS,
    )
    assert followup.choices[0].message.content


@pytest.mark.parametrize("model", ["titan", "gemini-embed"])
def test_embeddings(providers, model):
    client, _, _ = providers
    result = client.embeddings.create(model=model, input="hello")
    assert len(result.data) == 1 and len(result.data[0].embedding) > 0


def test_every_bedrock_request_was_signed_for_its_region(providers):
    _, bedrock, _ = providers
    auths = [h for r in bedrock.requests() for h in r["headers"] if h[0].lower() == "authorization"]
    assert auths and all(f"Credential={AKID}/" in h[1] and "/eu-west-1/bedrock/aws4_request" in h[1] for h in auths)


def test_a_bedrock_throttle_is_a_rate_limit_error(providers):
    client, _, _ = providers
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="throttled", messages=[{"role": "user", "content": "Say hello."}])


@pytest.mark.parametrize("model", ["claude", "flash"])
def test_the_responses_api_reaches_bedrock_and_gemini_through_chat(providers, model):
    client, bedrock, gemini = providers
    mock = bedrock if model == "claude" else gemini
    before = len(mock.requests())
    response = client.responses.create(model=model, input="Say hello.", instructions="Be brief.")
    assert response.status == "completed" and response.output_text and response.model == model
    assert response.usage.input_tokens > 0
    with client.responses.stream(model=model, input="Say hello.") as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert text and final.output_text == text
    paths = [r["path"] for r in mock.requests()[before:]]
    wanted = ("/converse", "/converse-stream") if model == "claude" else (":generateContent", ":streamGenerateContent")
    assert len(paths) == 2 and paths[0].split("?")[0].endswith(wanted[0]) and wanted[1] in paths[1], paths
