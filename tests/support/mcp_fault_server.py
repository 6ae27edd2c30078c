"""An MCP server written with the SDK (MCPServer, formerly FastMCP) for fault and confinement
tests: `python mcp_fault_server.py [MODE]`. MODE `exit` exits before answering anything;
`garbage` writes a line that is not JSON-RPC before anything else; `badschema` lists a tool
whose schema cannot be made strict and one whose name needs mapping. Every other mode serves
the tools below. FAULT_STARTS names a file that gets one line per start."""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
if os.environ.get("FAULT_STARTS"):  # one line per start, for tests that count them
    with open(os.environ["FAULT_STARTS"], "a") as fh:
        fh.write(f"{MODE}\n")
if MODE == "exit":
    sys.exit(3)
WIRE = os.dup(1)  # the SDK diverts fd 1 to stderr while it serves: this still reaches the client

if MODE == "garbage":
    os.write(WIRE, b"<html>not an MCP server</html>\n")
server = MCPServer("holon-fault", version=os.environ.get("FAULT_VERSION", "1.0"))


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(7)


@server.tool()
def hang() -> str:
    """Never answer."""
    while True:
        time.sleep(60)


@server.tool()
def huge(chars: int) -> str:
    """Return `chars` characters of text."""
    return "x" * chars


@server.tool()
def garbage() -> str:
    """Write a line that is not JSON-RPC to stdout, then answer."""
    os.write(WIRE, b"this is not json\n")
    return "after garbage"


@server.tool()
def fail(reason: str) -> str:
    """Raise: the server answers with isError."""
    raise ValueError(reason)


@server.tool()
def image() -> list:
    """One text and one PNG image content item."""
    from mcp.server.mcpserver import Image

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    return ["a red pixel", Image(data=png, format="png")]


@server.tool()
def env(name: str) -> str:
    """The value of environment variable `name` in the server's process, or <unset>."""
    return os.environ.get(name, "<unset>")


@server.tool()
def child() -> int:
    """Start a long `sleep` of its own and return its pid (it must not outlive the tick)."""
    import subprocess

    return subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL).pid


@server.tool()
def write(path: str) -> str:
    """Try to write a file; say what happened."""
    try:
        with open(path, "w") as fh:
            fh.write("written by an MCP server\n")
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return "written"


if MODE == "badschema":
    for name in list(server._tool_manager._tools):
        if name != "echo":
            server.remove_tool(name)
    tool = server._tool_manager._tools["echo"]
    tool.parameters = {
        "type": "object",
        "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
    }

    @server.tool(name="weird.name/with spaces")
    def weird() -> str:
        """A tool whose name needs mapping."""
        return "weird"


def serve_http(port: int) -> None:
    """Streamable HTTP on 127.0.0.1:`port`, answering only `Authorization: Bearer $FAULT_TOKEN`."""
    import uvicorn

    app = server.streamable_http_app()
    want = f"Bearer {os.environ['FAULT_TOKEN']}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != want:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if MODE == "http":
    serve_http(int(sys.argv[2]))
else:
    server.run()
