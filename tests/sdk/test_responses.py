"""OpenAI's Responses API through the official `openai` SDK against the running gateway:
natively to OpenAI-compatible mocks that serve `/v1/responses`, translated to chat completions
(a `hosted_vllm/` deployment, an `openai/` server learned to have no `/responses`, a deployment
whose `supported_endpoints` leaves it out) and to Anthropic's Messages API; streams with every
event type; `previous_response_id` natively and translated; retrieve, input items, delete."""

from __future__ import annotations

import json
import urllib.request

import openai
import pytest

from conftest import Process, _start_gateway, _start_mock

NO_RESPONSES = "--no-responses"  # the mock flag of an OpenAI-compatible server without /responses


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    started: list[Process] = []
    try:
        mocks = {
            "native-a": _start_mock("native-a"),
            "native-b": _start_mock("native-b"),
            "chat-only": _start_mock("chat-only", NO_RESPONSES),
            "vllm": _start_mock("vllm", NO_RESPONSES),
            "claude": _start_mock("claude"),
        }
        started.extend(m.process for m in mocks.values())

        def entry(group: str, ident: str, model: str, mock: str, info: str = "") -> str:
            base = mocks[mock].api_base if not model.startswith("anthropic/") else f"http://{mocks[mock].addr}"
            return (
                f"  - model_name: {group}\n"
                f"    litellm_params: {{model: {model}, api_base: \"{base}\", api_key: sk-up-{ident}}}\n"
                f"    model_info: {{id: {ident}{info}}}\n"
            )

        config = (
            "model_list:\n"
            + entry("gpt-native", "native-a", "openai/gpt-4o", "native-a")
            + entry("gpt-native", "native-b", "openai/gpt-4o", "native-b")
            + entry("gpt-learned", "learned", "openai/local-model", "chat-only")
            + entry("llama", "vllm", "hosted_vllm/llama-3", "vllm")
            + entry("gpt-stated", "stated", "openai/gpt-4o", "native-a", ", supported_endpoints: [/v1/chat/completions]")
            + entry("claude", "claude", "anthropic/claude-sonnet-4-5", "claude")
            + "general_settings: {master_key: sk-master}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("responses"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", mocks
    finally:
        for process in reversed(started):
            process.stop()


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="sk-master", max_retries=0)


def _seen(mock, since: int = 0) -> list[dict]:
    """The mock's requests since index `since`: path, authorization, body."""
    out = []
    for r in mock.requests()[since:]:
        headers = {k.lower(): v for k, v in r["headers"]}
        out.append({"path": r["path"], "auth": headers.get("authorization") or headers.get("x-api-key"), "body": r["body"]})
    return out


@pytest.mark.parametrize(
    "group, mock, path",
    [
        ("gpt-native", None, "/v1/responses"),
        ("llama", "vllm", "/v1/chat/completions"),
        ("gpt-stated", "native-a", "/v1/chat/completions"),
        ("claude", "claude", "/v1/messages"),
    ],
)
def test_create_on_every_kind_of_deployment(stack, group, mock, path):
    url, mocks = stack
    watched = [mocks[mock]] if mock else [mocks["native-a"], mocks["native-b"]]
    before = [len(m.requests()) for m in watched]
    response = _client(url).responses.create(model=group, input="Say hello.", instructions="Be brief.")
    assert response.status == "completed"
    assert response.output_text
    # Passed through, the provider's model name; translated, the name the client asked for.
    assert response.model == ("gpt-4o" if group == "gpt-native" else group)
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.usage.output_tokens_details.reasoning_tokens == 0
    seen = [r for m, b in zip(watched, before) for r in _seen(m, b)]
    assert [r["path"] for r in seen] == [path]
    assert seen[0]["auth"] in (f"Bearer sk-up-{group_id(group, seen[0])}", f"sk-up-{group_id(group, seen[0])}")
    assert "sk-master" not in json.dumps(seen)


def group_id(group: str, seen: dict) -> str:
    return {"llama": "vllm", "gpt-stated": "stated", "claude": "claude"}.get(group) or seen["auth"].split("sk-up-")[1]


def test_a_server_without_responses_is_learned_without_failing_the_request(stack):
    url, mocks = stack
    mock = mocks["chat-only"]
    before = len(mock.requests())
    first = _client(url).responses.create(model="gpt-learned", input="one")
    second = _client(url).responses.create(model="gpt-learned", input="two")
    assert first.output_text and second.output_text
    paths = [r["path"] for r in _seen(mock, before)]
    assert paths == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]


@pytest.mark.parametrize("group", ["gpt-native", "llama", "claude"])
def test_stream_carries_every_event_in_order(stack, group):
    url, _ = stack
    with _client(url).responses.stream(model=group, input="Tell me a story.") as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [e.type for e in events]
    for expected in [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]:
        assert expected in types, f"{expected} missing from {types}"
    assert types[0] == "response.created" and types[-1] == "response.completed"
    numbers = [e.sequence_number for e in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text and final.output_text == text
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


def test_previous_response_id_translated_keeps_the_conversation(stack):
    url, mocks = stack
    client = _client(url)
    first = client.responses.create(model="llama", input="My name is Ada.")
    assert first.id.startswith("resp_")
    before = len(mocks["vllm"].requests())
    second = client.responses.create(model="llama", input="What is my name?", previous_response_id=first.id)
    assert second.output_text
    sent = json.loads(_seen(mocks["vllm"], before)[0]["body"])
    contents = [m.get("content") for m in sent["messages"]]
    flat = json.dumps(contents)
    assert "My name is Ada." in flat and first.output_text in flat and "What is my name?" in flat
    assert client.responses.retrieve(first.id).output_text == first.output_text
    items = client.responses.input_items.list(second.id)
    texts = json.dumps([i.model_dump() for i in items.data])
    assert "My name is Ada." in texts and "What is my name?" in texts
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="llama", input="again", previous_response_id=first.id)


def test_store_false_keeps_nothing(stack):
    url, _ = stack
    client = _client(url)
    response = client.responses.create(model="llama", input="forget me", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)


def test_previous_response_id_native_goes_to_the_deployment_that_holds_it(stack):
    url, mocks = stack
    client = _client(url)
    raw = client.responses.with_raw_response.create(model="gpt-native", input="Remember 42.")
    first, holder = raw.parse(), raw.headers["x-pointwork-deployment"]
    other = "native-b" if holder == "native-a" else "native-a"
    before = {name: len(mocks[name].requests()) for name in (holder, other)}
    for _ in range(8):
        follow = client.responses.create(model="gpt-native", input="Which number?", previous_response_id=first.id)
        assert follow.output_text
    assert len(mocks[holder].requests()) - before[holder] == 8
    assert len(mocks[other].requests()) == before[other]
    assert client.responses.retrieve(first.id).id == first.id


def test_errors_take_the_responses_shape(stack):
    url, _ = stack
    client = _client(url)
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="llama", input="x", previous_response_id="resp_pw" + "0" * 48)
    assert missing.value.body["code"] == "previous_response_not_found"
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="llama", input="x", previous_response_id=7)  # type: ignore[arg-type]
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_unknown")


def test_what_chat_cannot_say_is_dropped_and_named(stack):
    url, mocks = stack
    body = {
        "model": "llama",
        "input": "hello",
        "tools": [{"type": "web_search"}],
        "include": ["reasoning.encrypted_content"],
    }
    request = urllib.request.Request(
        f"{url}/v1/responses",
        data=json.dumps(body).encode(),
        headers={"authorization": "Bearer sk-master", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        dropped = answer.headers["x-pointwork-dropped"]
        assert json.load(answer)["status"] == "completed"
    assert "include" in dropped and "tools[0]" in dropped


@pytest.mark.parametrize("group, wire", [("gpt-native", "native"), ("llama", "translated"), ("gpt-stated", "translated")])
def test_the_dry_run_says_native_or_translated(stack, group, wire):
    url, _ = stack
    request = urllib.request.Request(
        f"{url}/v1/route?api=responses",
        data=json.dumps({"model": group, "input": "hi"}).encode(),
        headers={"authorization": "Bearer sk-master", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        decision = json.load(answer)
    assert decision["endpoint"] == "/responses"
    assert decision["winner"]["wire"] == wire


EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "description": "Run a shell command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    """A gateway whose mocks answer in agent mode: a native, a translated (hosted_vllm/) and an
    Anthropic deployment; each asks for one `exec_command` call, then answers with its output."""
    started: list[Process] = []
    try:
        native, chat, claude = (_start_mock(n, "--agent", *f) for n, f in
                                [("native", ()), ("chat", (NO_RESPONSES,)), ("claude", ())])
        started += [native.process, chat.process, claude.process]
        config = (
            "model_list:\n"
            f"  - model_name: native\n    litellm_params: {{model: openai/gpt-5, api_base: \"{native.api_base}\", api_key: sk-up}}\n"
            f"  - model_name: translated\n    litellm_params: {{model: hosted_vllm/qwen, api_base: \"{chat.api_base}\", api_key: sk-up}}\n"
            f"  - model_name: claude\n    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{claude.addr}\", api_key: sk-up}}\n"
            "general_settings: {master_key: sk-master}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("responses-agents"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}"
    finally:
        for process in reversed(started):
            process.stop()


@pytest.mark.parametrize("group", ["native", "translated", "claude"])
def test_a_function_call_and_its_output_make_the_whole_loop(agents, group):
    client = _client(agents)
    first = client.responses.create(model=group, input="Run the marker command.", tools=[EXEC_COMMAND])
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "exec_command", first.output
    command = json.loads(calls[0].arguments)["cmd"]
    assert command.startswith("echo POINTWORK-AGENT-")
    output = "POINTWORK-AGENT-42-from-the-shell"
    second = client.responses.create(
        model=group,
        tools=[EXEC_COMMAND],
        input=[
            {"role": "user", "content": "Run the marker command."},
            {"type": "function_call", "call_id": calls[0].call_id, "name": "exec_command", "arguments": calls[0].arguments},
            {"type": "function_call_output", "call_id": calls[0].call_id, "output": output},
        ],
    )
    assert output in second.output_text


@pytest.mark.parametrize("group", ["native", "translated", "claude"])
def test_a_streamed_function_call_carries_its_argument_events(agents, group):
    with _client(agents).responses.stream(model=group, input="Run it.", tools=[EXEC_COMMAND]) as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [e.type for e in events]
    assert "response.function_call_arguments.delta" in types and "response.function_call_arguments.done" in types
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    arguments = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert done.arguments == arguments and json.loads(arguments)["cmd"].startswith("echo ")
    assert [i.type for i in final.output if i.type == "function_call"] == ["function_call"]
    assert types[-1] == "response.completed"
