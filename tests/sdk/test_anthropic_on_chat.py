"""Claude Code's surface on a chat-completions deployment, through the official `anthropic` SDK:
every field Claude Code sends is accepted (what chat cannot say is dropped and named in
`x-pointwork-dropped`), tools and thinking work, `count_tokens` answers for every model (the
provider's count on an Anthropic deployment, the gateway's estimate otherwise), and `/v1/models`
answers an Anthropic client in Anthropic's shape with each model's context window."""

from __future__ import annotations

import json

import anthropic
import pytest

from conftest import Process, _start_gateway, _start_mock


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    started: list[Process] = []
    try:
        chat = _start_mock("chat", "--agent")  # a Bash tool offered: one call, then its output
        claude = _start_mock("claude")
        started += [chat.process, claude.process]
        config = (
            "model_list:\n"
            "  - model_name: gpt-4o\n"
            f"    litellm_params: {{model: openai/gpt-4o, api_base: \"{chat.api_base}\", api_key: sk-up-chat}}\n"
            "  - model_name: claude\n"
            f"    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{claude.addr}\", api_key: sk-up-claude}}\n"
            "general_settings: {master_key: sk-master}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("anthropic-on-chat"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", chat, claude
    finally:
        for process in reversed(started):
            process.stop()


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-master", max_retries=0)


CLAUDE_CODE_FIELDS = {
    "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    "metadata": {"user_id": "user_abc_account__session_1"},
}


def test_claude_codes_fields_are_dropped_by_name_never_refused(stack):
    url, chat, _ = stack
    before = len(chat.requests())
    raw = _client(url).messages.with_raw_response.create(
        model="gpt-4o",
        max_tokens=2048,
        system=[{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
        extra_body=CLAUDE_CODE_FIELDS,
        extra_headers={"anthropic-beta": "claude-code-20250219,context-management-2025-06-27"},
    )
    message = raw.parse()
    assert message.role == "assistant" and message.content
    assert raw.headers["x-pointwork-dropped"] == "context_management"
    sent = json.loads(chat.requests()[before]["body"])
    assert chat.requests()[before]["path"] == "/v1/chat/completions"
    assert sent["reasoning_effort"] == "low"
    assert sent["tools"][0]["function"]["name"] == "Bash"
    assert "context_management" not in sent


BASH = {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}


def test_a_tool_loop_with_thinking_streamed_on_a_chat_deployment(stack):
    url, _, _ = stack
    client = _client(url)
    asked = [{"role": "user", "content": "Run the marker command."}]
    with client.messages.stream(
        model="gpt-4o", max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024},
        messages=asked, tools=[BASH], extra_body=CLAUDE_CODE_FIELDS,
    ) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    call = next(block for block in first.content if block.type == "tool_use")
    assert call.name == "Bash" and call.input["command"].startswith("echo POINTWORK-AGENT-")
    # The history as Claude Code sends it back: a thinking block beside the tool call.
    history = asked + [
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should run it.", "signature": "sig"},
            {"type": "tool_use", "id": call.id, "name": "Bash", "input": call.input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "MARKER-7"}]},
    ]
    with client.messages.stream(
        model="gpt-4o", max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024},
        messages=history, tools=[BASH], extra_body=CLAUDE_CODE_FIELDS,
    ) as stream:
        second = stream.get_final_message()
    assert second.stop_reason == "end_turn"
    assert "MARKER-7" in "".join(block.text for block in second.content if block.type == "text")


def test_count_tokens_answers_for_every_model(stack):
    url, _, claude = stack
    client = _client(url)
    messages = [{"role": "user", "content": "How many tokens is this? " * 20}]
    estimated = client.messages.count_tokens(model="gpt-4o", messages=messages)
    assert estimated.input_tokens > 100
    before = len(claude.requests())
    counted = client.messages.count_tokens(model="claude", messages=messages)
    assert counted.input_tokens > 0
    seen = claude.requests()[before:]
    assert [r["path"] for r in seen] == ["/v1/messages/count_tokens"]
    assert json.loads(seen[0]["body"])["model"] == "claude-sonnet-4-5"


def test_models_in_anthropics_shape_with_context_windows(stack):
    url, _, _ = stack
    models = _client(url).models.list()
    ids = [m.id for m in models.data]
    assert set(ids) == {"gpt-4o", "claude"}
    raw = {m.id: m.model_dump() for m in models.data}
    assert raw["gpt-4o"]["type"] == "model"
    assert raw["gpt-4o"]["max_input_tokens"] == 128000
    assert raw["claude"]["max_input_tokens"] >= 200000
