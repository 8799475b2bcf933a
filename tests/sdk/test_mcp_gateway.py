"""The MCP gateway through the official `mcp` SDK's client and plain JSON-RPC: `pointwork serve
--shards 2` in front of the real test servers of tests/mcp — `web` (Streamable HTTP, recording
every request it receives), `local` (stdio, started by the gateway), `legacy` (the HTTP+SSE
transport), and `narrow`/`nofail` (the web server again, with `allowed_tools` and
`disallowed_tools`). Lists and calls across servers, namespaces, credentials, keys, per-server
paths, progress, the REST face, malformed messages, the access log and /metrics."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from mcp.shared.exceptions import MCPError

from mcp_stack import (
    INIT,
    MASTER,
    ONLY_WEB,
    SECRET,
    McpHttpServer,
    answer,
    deadline_wait,
    http_entry,
    master,
    rpc_method,
    run,
    session,
    sha256,
    sse_messages,
    start_gateway,
    stdio_entry,
    text_of,
)

PREFIXES = ("web-", "local-", "narrow-", "nofail-", "legacy-")
# A key whose tool lists (LiteLLM's mcp_tool_permissions) allow only `echo` on `web` and every tool
# on `local`: the servers the lists name are the key's servers.
ECHO_ONLY = "sk-mcp-echo-only-51c2"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    started = []
    directory = tmp_path_factory.mktemp("mcp")
    try:
        web = McpHttpServer(directory, "web")
        started.append(web.process)
        legacy = McpHttpServer(directory, "legacy", transport="sse")
        started.append(legacy.process)
        access_log = directory / "access.jsonl"
        config = (
            "mcp_servers:\n"
            + http_entry("web", web, "    extra_headers: [x-pass-me]\n")
            + stdio_entry("local")
            + http_entry("narrow", web, "    allowed_tools: [echo]\n")
            + http_entry("nofail", web, "    disallowed_tools: [fail, nofail-add]\n")
            + http_entry("legacy", legacy)
            + f"general_settings:\n  master_key: {MASTER}\n"
            + "pointwork:\n"
            + f"  access_log: {access_log}\n"
            + "  auth:\n    virtual_keys:\n"
            + f"      - {{name: only-web, sha256: {sha256(ONLY_WEB)}, mcp_servers: [web]}}\n"
            + f"      - {{name: echo-only, sha256: {sha256(ECHO_ONLY)}, mcp_tool_permissions: {{web: [echo], local: ['*']}}}}\n"
        )
        gateway = start_gateway(config, directory, started)
        yield gateway, web, legacy, access_log
    finally:
        for process in reversed(started):
            process.stop()


def test_lists_and_calls_span_both_servers_under_their_names(stack):
    gateway, *_ = stack

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"web-echo", "web-add", "web-slow", "local-upper", "local-pid", "local-crash"} <= names
            assert all(n.startswith(PREFIXES) for n in names), names
            assert not {"echo", "upper", "add"} & names
            assert text_of(await s.call_tool("web-echo", {"text": "across"})) == "across"
            assert text_of(await s.call_tool("local-upper", {"text": "across"})) == "ACROSS"
            assert float(text_of(await s.call_tool("web-add", {"a": 2, "b": 3.5}))) == 5.5
            assert text_of(await s.call_tool("local-env", {"name": "TEST_MARK"})) == "stdio-env-ok"

            prompts = {p.name for p in (await s.list_prompts()).prompts}
            assert "web-greet" in prompts and "greet" not in prompts
            got = await s.get_prompt("web-greet", {"name": "Ada"})
            assert "Say hello to Ada." in got.messages[0].content.text

            resources = {str(r.uri) for r in (await s.list_resources()).resources}
            assert "web-note://hello" in resources and "note://hello" not in resources
            read = await s.read_resource("web-note://hello")
            assert read.contents[0].text == "hello from the note"
            assert str(read.contents[0].uri) == "web-note://hello"

    run(go())


def test_the_server_gets_its_own_credential_never_the_callers(stack):
    gateway, web, *_ = stack
    seen: list[str] = []

    async def go(headers, text):
        async with session(f"{gateway.url}/mcp", headers, seen) as s:
            assert text_of(await s.call_tool("web-echo", {"text": text})) == text
            whoami = json.loads(text_of(await s.call_tool("web-whoami", {})))
            assert whoami["authorization"] == f"Bearer {SECRET}"
            assert "x-pass-me" not in whoami

    run(go({"x-litellm-api-key": f"Bearer {MASTER}"}, "cred-litellm-header"))
    run(go({"authorization": f"Bearer {MASTER}"}, "cred-authorization"))
    for text in ("cred-litellm-header", "cred-authorization"):
        web.wait_for(lambda r: json.dumps(r["body"]).count(text), f"the call carrying {text}")
    records = web.requests()
    assert records
    for r in records:
        assert r["headers"].get("authorization") == f"Bearer {SECRET}", r
        assert "x-litellm-api-key" not in r["headers"], r
    everything = web.record.read_text()
    assert MASTER not in everything and ONLY_WEB not in everything
    assert len(set(seen)) == 2, "each client session got its own id"
    upstream_ids = {r["headers"]["mcp-session-id"] for r in records if "mcp-session-id" in r["headers"]}
    assert upstream_ids, "the gateway holds a session with the server"
    assert not upstream_ids & set(seen), "a client never sees an upstream's session id, nor does the server see the client's"


def test_extra_headers_pass_only_the_named_caller_header(stack):
    gateway, web, *_ = stack

    async def go():
        headers = master({"x-pass-me": "passed-7", "x-keep-out": "kept-8"})
        async with session(f"{gateway.url}/mcp", headers) as s:
            whoami = json.loads(text_of(await s.call_tool("web-whoami", {})))
            assert whoami["x-pass-me"] == "passed-7"
            assert "x-keep-out" not in whoami
            assert whoami["authorization"] == f"Bearer {SECRET}"
            # `narrow` and `nofail` name no extra_headers: nothing of the caller's reaches them.
            narrow = await s.call_tool("nofail-whoami", {})
            assert "x-pass-me" not in json.loads(text_of(narrow))

    run(go())
    assert not any("kept-8" in json.dumps(r["headers"]) for r in web.requests())


def test_unknown_tools_and_filtered_tools_are_refused(stack):
    gateway, *_ = stack

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            # A name of a known server that the server does not know: the server's own answer.
            unknown_there = await s.call_tool("web-nosuch", {})
            assert unknown_there.is_error and "nosuch" in text_of(unknown_there), unknown_there
            for name in ("nosuch-echo", "echo"):
                with pytest.raises(MCPError) as e:
                    await s.call_tool(name, {"text": "x"})
                assert e.value.error.code == -32602
                assert name in e.value.error.message
            names = {t.name for t in (await s.list_tools()).tools}
            assert [n for n in names if n.startswith("narrow-")] == ["narrow-echo"]
            assert "nofail-echo" in names and "nofail-whoami" in names
            assert "nofail-fail" not in names and "nofail-add" not in names, "bare and namespaced names both filter"
            assert text_of(await s.call_tool("narrow-echo", {"text": "ok"})) == "ok"
            for hidden in ("narrow-add", "nofail-fail", "nofail-add"):
                with pytest.raises(MCPError) as e:
                    await s.call_tool(hidden, {"a": 1, "b": 2})
                assert e.value.error.code == -32602 and hidden in e.value.error.message
            # The same tool of the unfiltered server is there.
            assert (await s.call_tool("web-fail", {})).is_error

    run(go())


def test_a_virtual_key_reaches_only_its_servers(stack):
    gateway, *_ = stack

    async def go():
        async with session(f"{gateway.url}/mcp", {"authorization": f"Bearer {ONLY_WEB}"}) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names and all(n.startswith("web-") for n in names), names
            assert text_of(await s.call_tool("web-echo", {"text": "mine"})) == "mine"
            with pytest.raises(MCPError) as e:
                await s.call_tool("local-upper", {"text": "x"})
            assert e.value.error.code == -32602 and "unknown tool: local-upper" in e.value.error.message

    run(go())
    status, _, text = gateway.post("/mcp", INIT)
    assert status == 401 and "error" in json.loads(text)
    status, _, _ = gateway.post("/mcp", INIT, {"authorization": "Bearer sk-not-a-key"})
    assert status == 401
    status, _, _ = gateway.post("/mcp", INIT, {"x-litellm-api-key": ONLY_WEB})
    assert status == 200, "x-litellm-api-key works without `Bearer ` too"
    opened = gateway.initialize(headers=master())
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    status, _, text = gateway.post("/mcp", listing, {"authorization": f"Bearer {ONLY_WEB}", "mcp-session-id": opened})
    assert status == 404, text
    status, _, text = gateway.post("/mcp", listing, {**master(), "mcp-session-id": opened})
    assert status == 200 and "local-upper" in text


def test_a_keys_tool_lists_narrow_the_tools_it_sees_and_calls(stack):
    gateway, *_ = stack

    async def go():
        async with session(f"{gateway.url}/mcp", {"x-litellm-api-key": f"Bearer {ECHO_ONLY}"}) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {n for n in names if not n.startswith("local-")} == {"web-echo"}, names
            assert {"local-upper", "local-pid"} <= names, names
            assert text_of(await s.call_tool("web-echo", {"text": "allowed"})) == "allowed"
            assert text_of(await s.call_tool("local-upper", {"text": "star"})) == "STAR"
            with pytest.raises(MCPError) as e:
                await s.call_tool("web-add", {"a": 1, "b": 2})
            assert e.value.error.code == -32602 and "web-add" in e.value.error.message

    run(go())


@pytest.mark.parametrize(
    "path,headers,prefix",
    [("/mcp/local", {}, "local-"), ("/local/mcp", {}, "local-"), ("/mcp", {"x-mcp-servers": "web"}, "web-")],
)
def test_a_path_or_header_narrows_the_session_to_one_server(stack, path, headers, prefix):
    gateway, *_ = stack

    async def go():
        async with session(f"{gateway.url}{path}", master(headers)) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names and all(n.startswith(prefix) for n in names), names
            other = "web-echo" if prefix == "local-" else "local-upper"
            with pytest.raises(MCPError) as e:
                await s.call_tool(other, {"text": "x"})
            assert e.value.error.code == -32602

    run(go())


def test_a_path_naming_no_server_is_404(stack):
    gateway, *_ = stack
    for path, headers in (("/mcp/nosuch", {}), ("/nosuch/mcp", {}), ("/mcp", {"x-mcp-servers": "web,nosuch"})):
        status, _, text = gateway.post(path, INIT, master(headers))
        assert status == 404 and "nosuch" in text, (path, status, text)


def test_progress_reaches_the_client_through_the_event_stream(stack):
    gateway, web, *_ = stack
    progress: list[tuple] = []

    async def on_progress(done, total, message):
        progress.append((done, total, message))

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            result = await s.call_tool("web-slow", {"seconds": 0.3, "steps": 3}, progress_callback=on_progress)
            assert text_of(result) == "done after 3 steps"

    run(go())
    assert progress == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]

    # The same with plain JSON-RPC: the client's own token, the notifications before the answer.
    sid = gateway.initialize(headers=master())
    call = {
        "jsonrpc": "2.0",
        "id": "slow-1",
        "method": "tools/call",
        "params": {"name": "web-slow", "arguments": {"seconds": 0.2, "steps": 2}, "_meta": {"progressToken": "tok-client-7"}},
    }
    status, headers, text = gateway.post("/mcp", call, {**master(), "mcp-session-id": sid})
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    messages = sse_messages(text)
    assert [m.get("method") for m in messages] == ["notifications/progress", "notifications/progress", None]
    assert all(m["params"]["progressToken"] == "tok-client-7" for m in messages[:2])
    assert messages[-1]["id"] == "slow-1" and messages[-1]["result"]["content"][0]["text"] == "done after 2 steps"


def test_a_call_the_client_abandons_is_cancelled_at_the_server(stack):
    gateway, web, *_ = stack
    series = 'pointwork_mcp_requests_total{server="web",method="tools/call",tool="slow",outcome="cancelled"}'
    before = gateway.metric(series) or 0

    async def go():
        async with session(f"{gateway.url}/mcp", master()) as s:
            in_flight = asyncio.Event()

            async def on_progress(done, total, message):
                in_flight.set()

            call = asyncio.create_task(s.call_tool("web-slow", {"seconds": 37, "steps": 37}, progress_callback=on_progress))
            await asyncio.wait_for(in_flight.wait(), 10)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # The session goes on.
            assert text_of(await s.call_tool("web-echo", {"text": "after cancel"})) == "after cancel"

    run(go())
    slow = web.wait_for(
        lambda r: rpc_method(r) == "tools/call" and r["body"]["params"].get("arguments", {}).get("seconds") == 37,
        "the abandoned call",
    )
    cancelled = web.wait_for(
        lambda r: rpc_method(r) == "notifications/cancelled" and r["body"]["params"]["requestId"] == slow["body"]["id"],
        "its cancellation at the server",
    )
    assert cancelled["headers"]["authorization"] == f"Bearer {SECRET}"
    assert deadline_wait(lambda: gateway.metric(series) == before + 1, "the cancelled call counted")


def test_the_rest_face_lists_and_calls(stack):
    gateway, *_ = stack
    status, _, text = gateway.request("GET", "/mcp-rest/tools/list", headers=master())
    assert status == 200
    tools = json.loads(text)["tools"]
    by_server = {(t["mcp_info"]["server_name"], t["name"]) for t in tools}
    assert {("web", "echo"), ("local", "upper"), ("narrow", "echo")} <= by_server
    assert ("narrow", "add") not in by_server
    status, _, text = gateway.request("GET", "/mcp-rest/tools/list?server_id=local", headers=master())
    assert {t["mcp_info"]["server_name"] for t in json.loads(text)["tools"]} == {"local"}

    call = {"server_id": "local", "name": "upper", "arguments": {"text": "rest"}}
    status, _, text = gateway.post("/mcp-rest/tools/call", call, master())
    assert status == 200 and json.loads(text)["content"][0]["text"] == "REST"
    status, _, text = gateway.post("/mcp-rest/tools/call", {"name": "upper", "arguments": {}}, master())
    assert status == 400
    assert json.loads(text)["detail"]["error"] == "missing_parameter"
    status, _, text = gateway.post("/mcp-rest/tools/call", call)
    assert status == 401
    status, _, text = gateway.post("/mcp-rest/tools/call", call, {"authorization": f"Bearer {ONLY_WEB}"})
    assert status == 403 and json.loads(text)["detail"]["error"] == "access_denied"


def test_malformed_messages_get_json_rpc_errors(stack):
    gateway, *_ = stack
    sid = gateway.initialize(headers=master())
    in_session = {**master(), "mcp-session-id": sid}
    status, _, text = gateway.post("/mcp", None, in_session, raw=b"{not json")
    assert status == 400 and json.loads(text)["error"]["code"] == -32700
    status, _, text = gateway.post("/mcp", {"id": 4, "method": "tools/list"}, in_session)
    assert status == 400 and json.loads(text)["error"]["code"] == -32600, text
    status, _, text = gateway.post("/mcp", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, master())
    assert status == 400 and "Mcp-Session-Id" in json.loads(text)["error"]["message"]
    status, _, text = gateway.post("/mcp", {"jsonrpc": "2.0", "id": 6, "method": "no/such"}, in_session)
    assert status == 200 and json.loads(text)["error"]["code"] == -32601
    batch = [{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"id": "b", "method": "ping"}]
    status, _, text = gateway.post("/mcp", batch, in_session)
    assert status == 200, text
    by_id = {m["id"]: m for m in json.loads(text)}
    assert by_id["a"]["result"] == {} and by_id["b"]["error"]["code"] == -32600

    status, _, text = gateway.request("GET", "/mcp", headers=master())
    assert status == 400 and "Mcp-Session-Id" in json.loads(text)["error"]["message"], text
    status, _, _ = gateway.request("GET", "/mcp", headers={**master(), "mcp-session-id": "no-such-session"})
    assert status == 404
    status, headers, _ = gateway.request("PUT", "/mcp", headers=in_session)
    assert status == 405 and "POST" in headers["allow"]
    status, _, _ = gateway.request("DELETE", "/mcp", headers=in_session)
    assert status == 200
    status, _, _ = gateway.post("/mcp", {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, in_session)
    assert status == 404
    status, _, _ = gateway.request("DELETE", "/mcp", headers=in_session)
    assert status == 404


def test_each_tool_call_is_in_the_access_log_and_the_metrics(stack):
    gateway, _, _, access_log = stack
    series = 'pointwork_mcp_requests_total{server="web",method="tools/call",tool="echo",outcome="ok"}'
    before = gateway.metric(series) or 0

    async def go():
        async with session(f"{gateway.url}/mcp", {"authorization": f"Bearer {ONLY_WEB}"}) as s:
            await s.call_tool("web-echo", {"text": "logged"})
            assert (await s.call_tool("web-fail", {})).is_error

    started = time.monotonic()
    run(go())
    took_ms = (time.monotonic() - started) * 1000

    def lines():
        if not access_log.exists():
            return []
        return [json.loads(line) for line in access_log.read_text().splitlines() if '"mcp_server"' in line]

    def mine(tool):
        return [e for e in lines() if e["key"] == "only-web" and e["tool"] == tool]

    echo = deadline_wait(lambda: mine("echo"), "the echo call's access log line")[-1]
    fail = deadline_wait(lambda: mine("fail"), "the fail call's access log line")[-1]
    assert echo["mcp_server"] == "web" and echo["mcp_method"] == "tools/call" and echo["outcome"] == "ok"
    assert 0 < echo["total_ms"] < took_ms
    assert fail["outcome"] == "tool_error"
    assert ONLY_WEB not in access_log.read_text() and MASTER not in access_log.read_text()
    assert gateway.metric(series) == before + 1
    assert gateway.metric('pointwork_mcp_requests_total{server="web",method="tools/call",tool="fail",outcome="tool_error"}') >= 1
    assert gateway.metric('pointwork_mcp_server_up{server="local",transport="stdio"}') == 1


def test_an_sse_server_is_listed_and_called(stack):
    gateway, _, legacy, _ = stack

    async def go():
        async with session(f"{gateway.url}/mcp/legacy", master()) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"legacy-echo", "legacy-add"} <= names and all(n.startswith("legacy-") for n in names)
            assert text_of(await s.call_tool("legacy-echo", {"text": "over sse"})) == "over sse"

    run(go())
    posts = [r for r in legacy.requests() if r["method"] == "POST"]
    assert any(rpc_method(r) == "tools/call" for r in posts)
    assert all(r["headers"].get("authorization") == f"Bearer {SECRET}" for r in legacy.requests())
    assert any(r["method"] == "GET" and r["path"] == "/sse" for r in legacy.requests())


def test_one_session_is_served_by_both_shards(stack):
    gateway, _, _, access_log = stack
    sid = gateway.initialize(headers=master())
    for i in range(24):  # each on a new connection: the kernel spreads them over the shards
        call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "nofail-echo", "arguments": {"text": f"s{i}"}}}
        status, _, text = gateway.post("/mcp", call, {**master(), "mcp-session-id": sid, "accept": "application/json"})
        assert status == 200 and answer(text)["result"]["content"][0]["text"] == f"s{i}"

    def shards():
        lines = [json.loads(line) for line in access_log.read_text().splitlines()] if access_log.exists() else []
        mine = [e for e in lines if e.get("mcp_server") == "nofail" and e.get("tool") == "echo"]
        return {e["shard"] for e in mine} if len(mine) >= 24 else None

    assert deadline_wait(shards, "the 24 calls' access log lines") == {0, 1}
