"""An MCP server over stdio, built with the official `mcp` SDK, for the gateway's tests:
`upper(text)`, `pid()` (its process id, so a test sees a restart), `crash()` (exits with code 3
without answering), `slow(seconds)`. Writes one line to stderr when it starts.
"""

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("pointwork-test-stdio")


@server.tool()
def upper(text: str) -> str:
    """The text in upper case."""
    return text.upper()


@server.tool()
def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exits the process with code 3, without an answer."""
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Answers after `seconds`."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def env(name: str) -> str:
    """The value of environment variable NAME ("" when unset)."""
    return os.environ.get(name, "")


if __name__ == "__main__":
    print(f"stdio test server {os.getpid()} starting", file=sys.stderr, flush=True)
    server.run("stdio")
