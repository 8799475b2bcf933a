"""An MCP server over Streamable HTTP (or the older HTTP+SSE transport), built with the official
`mcp` SDK, for the gateway's tests.

    http_server.py [--port N] [--transport http|sse] [--record FILE]

Binds 127.0.0.1:N (0: any free port), then prints `ready PORT` and serves: Streamable HTTP at
`/mcp` (stateful sessions), or with `--transport sse` the event stream at `/sse`. With
`--record FILE`, every HTTP request it receives is appended to FILE as one JSON line:
`{"method", "path", "headers", "body"}` (headers lower-cased, body parsed when it is JSON), so a
test sees exactly what the gateway sent (its credentials, its cancellations, its DELETE).
"""

import argparse
import asyncio
import json
import os
import socket
import sys

import mcp_types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import ServerMessageMetadata


def build() -> MCPServer:
    server = MCPServer("pointwork-test-http")

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text as given."""
        return text

    @server.tool()
    def add(a: float, b: float) -> float:
        """Adds two numbers."""
        return a + b

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The request headers that carry credentials (authorization, x-api-key, every x-*)."""
        headers = ctx.headers or {}
        kept = {k.lower(): v for k, v in headers.items() if k.lower() == "authorization" or k.lower().startswith("x-")}
        return json.dumps(kept, sort_keys=True)

    @server.tool()
    async def slow(seconds: float, steps: int, ctx: Context) -> str:
        """Reports `steps` progress notifications over `seconds`, then answers."""
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1} of {steps}")
            await asyncio.sleep(seconds / max(steps, 1))
        return f"done after {steps} steps"

    @server.tool()
    def fail() -> str:
        """Always fails: the result is an error result."""
        raise ToolError("this tool always fails")

    @server.tool()
    async def ask_client(ctx: Context) -> str:
        """Sends the client a `ping` and a `roots/list` request: what each brought back."""
        session = ctx.request_context.session
        # On this call's own response stream (the gateway opens no standalone GET stream).
        related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
        out = {}
        try:
            await session.send_request(mcp_types.PingRequest(), mcp_types.EmptyResult, metadata=related)
            out["ping"] = "answered"
        except Exception as exc:  # noqa: BLE001 - the test reads what happened
            out["ping"] = f"error: {exc}"
        try:
            await session.send_request(mcp_types.ListRootsRequest(), mcp_types.ListRootsResult, metadata=related)
            out["roots"] = "answered"
        except Exception as exc:  # noqa: BLE001
            out["roots"] = f"error: {exc}"
        return json.dumps(out)

    @server.prompt()
    def greet(name: str) -> str:
        """A greeting for NAME."""
        return f"Say hello to {name}."

    @server.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        """A short note."""
        return "hello from the note"

    return server


class Recorder:
    """ASGI middleware: appends each request (method, path, headers, body) to a file."""

    def __init__(self, app, path: str):
        self.app, self.path = app, path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        chunks, written = [], False

        def write():
            nonlocal written
            if written:
                return
            written = True
            raw = b"".join(chunks)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("latin-1")
            line = {"method": scope["method"], "path": scope["path"], "headers": headers, "body": body}
            with open(self.path, "a") as f:
                f.write(json.dumps(line) + "\n")

        async def recording_receive():
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    write()
            return message

        if scope["method"] in ("GET", "DELETE"):
            write()
            return await self.app(scope, receive, send)
        return await self.app(scope, recording_receive, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    parser.add_argument("--record")
    args = parser.parse_args()
    server = build()
    app = server.sse_app() if args.transport == "sse" else server.streamable_http_app()
    if args.record:
        app = Recorder(app, args.record)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    # Listening already: a connection made from here on waits in the backlog until uvicorn serves.
    print(f"ready {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
