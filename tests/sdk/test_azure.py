"""Azure OpenAI deployments (`azure/<deployment>`) through the official `openai` SDK against the
running gateway, with pointwork-mock playing the Azure resource (it checks the deployment path,
`api-version` and `api-key`): whole, streamed, tool calls, embeddings, and Azure's content filter
raised as the SDK's BadRequestError when no fallback applies."""

from __future__ import annotations

import openai
import pytest

from conftest import Process, _start_gateway, _start_mock


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    started: list[Process] = []
    try:
        mock = _start_mock("azure", "--azure-api-key", "az-key")
        started.append(mock.process)
        filtered = _start_mock("azure-filtered", "--fault", "content_filter")
        started.append(filtered.process)

        def entry(group: str, deployment: str, addr: str) -> str:
            return (
                f"  - model_name: {group}\n"
                f"    litellm_params: {{model: azure/{deployment}, api_base: \"http://{addr}\", "
                "api_version: \"2024-10-21\", api_key: az-key}\n"
            )

        config = (
            "model_list:\n"
            + entry("gpt-4o", "gpt-4o-prod", mock.addr)
            + entry("embed", "text-embedding-3-small", mock.addr)
            + entry("filtered", "gpt-4o", filtered.addr)
            + "router_settings: {num_retries: 0}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("azure"))
        started.append(gateway)
        yield openai.OpenAI(base_url=f"http://{gateway.wait_for_address()}/v1", api_key="unused", max_retries=0), mock
    finally:
        for process in reversed(started):
            process.stop()


def test_whole_streamed_and_tools(azure):
    client, mock = azure
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Say hello."}])
    assert answer.choices[0].message.content
    chunks = list(
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Say hello."}], stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    answer = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Weather?"}], tools=tools, tool_choice="auto"
    )
    assert answer.choices[0].finish_reason in ("stop", "tool_calls")
    paths = [r["path"] for r in mock.requests()]
    assert paths and all(p == "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21" for p in paths)


def test_embeddings(azure):
    client, _ = azure
    result = client.embeddings.create(model="embed", input=["hello", "world"])
    assert len(result.data) == 2 and result.data[0].embedding


def test_the_content_filter_is_a_bad_request(azure):
    client, _ = azure
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="filtered", messages=[{"role": "user", "content": "x"}])
    assert "content" in str(raised.value).lower()
