"""The two ways to reach a server, as the SDK's (read, write) stream pair: a stdio server started
inside the agent's sandbox (the SDK's own stdio client cannot run a `preexec` in the child, so
this one spawns the process itself), and streamable HTTP reached by the runtime with its token
from `holon keys`. Imports the SDK: only a tick that talks to a server loads this module."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

from holon import keys
from holon.agent import seal
from holon.home.layout import Home
from holon.ids import new_id
from holon.mcp.config import Server
from holon.sandbox import confine

MAX_LINE = 16 << 20  # one JSON-RPC message; more is `invalid_mcp_response`
STDERR_TAIL = 600
GRACE_S = 0.5  # after stdin closes, before the group is killed


class Garbage(Exception):
    """The server wrote something that is not an MCP message (or one too large)."""


@dataclass
class Wire:
    """What the transport saw go wrong: garbage on stdout, the server's exit, its stderr."""

    garbage: str | None = None
    exited: int | None = None
    stderr_path: Path | None = None
    pid: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def stderr_tail(self) -> str:
        if self.stderr_path is None:
            return ""
        try:
            with open(self.stderr_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - STDERR_TAIL))
                return fh.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""


def _parse(line: bytes) -> SessionMessage:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        raise Garbage(f"not a JSON-RPC message: {str(exc).splitlines()[0][:200]}") from None


async def _spawn(server: Server, home: Home, root: Path, cwd: Path, wire: Wire):
    """Start the server confined like ExecCommand; its scratch directory holds its stderr."""
    if home.dot.is_dir():
        seal.ensure_key(home)
    scratch = home.scratch_dir(new_id("mcp"))
    os.makedirs(home.scratch, mode=0o700, exist_ok=True)
    os.mkdir(scratch, 0o700)
    wire.extra["scratch"] = scratch  # removed when the connection closes, whatever happens next
    workdir = Path(server.cwd).expanduser() if server.cwd else cwd
    if not workdir.is_absolute():
        workdir = cwd / workdir
    conf = confine.prepare(home, execution_root=root, workdir=workdir, scratch=scratch)
    wire.stderr_path = scratch / "stderr.log"
    with open(wire.stderr_path, "wb") as err:
        try:
            proc = await asyncio.create_subprocess_exec(
                *conf.argv_prefix,
                server.command or "",
                *server.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                cwd=workdir,
                env={**conf.env, **server.env},
                preexec_fn=conf.preexec,
                start_new_session=True,
                limit=MAX_LINE,
            )
        finally:
            conf.close()
    wire.pid = proc.pid
    return proc


async def stop(proc: Any) -> None:
    """End the server: its stdin closed (the spec's polite end), a moment to exit, then KILL to
    its whole process group, so nothing it started outlives the tick."""
    if proc.stdin is not None:
        with suppress(OSError, RuntimeError):
            proc.stdin.close()
    with suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), GRACE_S)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), 2)


@asynccontextmanager
async def stdio(server: Server, home: Home, root: Path, cwd: Path, wire: Wire) -> AsyncIterator:
    proc = await _spawn(server, home, root, cwd, wire)
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        async with read_in:  # closing it tells the session the server is gone
            try:
                while line := await proc.stdout.readline():
                    if line.strip():
                        await read_in.send(_parse(line))
            except Garbage as exc:
                wire.garbage = str(exc)
                return
            except (ValueError, asyncio.LimitOverrunError):
                wire.garbage = f"a message larger than {MAX_LINE} bytes"
                return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            with suppress(asyncio.TimeoutError):  # stdout closed: its exit status, if it ended
                wire.exited = await asyncio.wait_for(proc.wait(), 1)

    async def writer() -> None:
        async with write_out:
            async for message in write_out:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    proc.stdin.write(data.encode("utf-8") + b"\n")
                    await proc.stdin.drain()
                except (BrokenPipeError, ConnectionResetError):
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_out, write_in
            finally:
                tg.cancel_scope.cancel()
    finally:
        await stop(proc)


@asynccontextmanager
async def http(server: Server) -> AsyncIterator:
    """Streamable HTTP, with `Authorization: Bearer` from the key named `bearer_token_env`."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = dict(server.headers)
    if server.bearer_token_env:
        token = keys.lookup(server.bearer_token_env)
        if not token:
            raise ConnectionError(
                f"no key {server.bearer_token_env} (set it with `holon keys set "
                f"{server.bearer_token_env}` or in the environment)"
            )
        headers["Authorization"] = f"Bearer {token}"
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(server.url or "", http_client=client) as streams:
            yield streams[0], streams[1]
