"""A synchronous connection to one MCP server for the length of a tick.

1. `Connection.open()` starts the transport (holon.mcp.transport) and the SDK's ClientSession
   as one task on a private event loop, and waits up to `startup_timeout_s` for `initialize`;
2. `list_tools()` and `call()` each run the loop until their answer (or their timeout);
3. `close()` ends the session task, which stops the server's process group.

Between calls the loop does not run, so no thread is left behind. Every failure is a
`McpFailure` with one of the kinds `mcp_server_unavailable`, `tool_timeout` or
`invalid_mcp_response`; a connection that failed is closed and reopened on next use.
"""

from __future__ import annotations

import asyncio
import shutil
from contextlib import suppress
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp_types import PaginatedRequestParams
from pydantic import ValidationError

from holon.errors import HolonError
from holon.home.layout import Home
from holon.mcp import transport
from holon.mcp.config import Server
from holon.mcp.failure import INVALID, TIMEOUT, UNAVAILABLE, McpFailure


class Connection:
    def __init__(self, server: Server, home: Home, root: Path, cwd: Path) -> None:
        self.server, self.home, self.root, self.cwd = server, home, root, cwd
        self.wire = transport.Wire()
        self.loop = asyncio.new_event_loop()
        self.session: ClientSession | None = None
        self.version: str | None = None
        self._closing: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def open(self) -> Connection:
        try:
            self._run(self._start(), self.server.startup_timeout_s, "start")
        except McpFailure as exc:
            self.close()
            if exc.kind == TIMEOUT:
                exc.kind = UNAVAILABLE
                exc.message = (
                    f"MCP server {self.server.name!r} did not answer initialize within "
                    f"{self.server.startup_timeout_s:g} s"
                )
            raise
        return self

    async def _start(self) -> None:
        ready: asyncio.Future = self.loop.create_future()
        self._closing = asyncio.Event()
        self._task = self.loop.create_task(self._session(ready))
        await ready

    async def _session(self, ready: asyncio.Future) -> None:
        try:
            if self.server.transport == "stdio":
                streams = transport.stdio(self.server, self.home, self.root, self.cwd, self.wire)
            else:
                streams = transport.http(self.server)
            async with streams as (read, write), ClientSession(read, write) as session:
                init = await session.initialize()
                self.session, self.version = session, init.server_info.version
                ready.set_result(None)
                assert self._closing is not None
                await self._closing.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError | GeneratorExit):
                self.wire.extra["session_error"] = str(exc)[:200]

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as plain dicts."""
        return self._run(self._list(), self.server.startup_timeout_s, "tools/list")

    async def _list(self) -> list[dict[str, Any]]:
        assert self.session is not None
        out: list[dict[str, Any]] = []
        cursor = None
        for _ in range(100):  # pages; a server that never stops paging is cut off
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.list_tools(params=params)
            out += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        return out

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The server's CallToolResult as a plain dict (`isError` included)."""
        return self._run(self._call(tool, arguments), self.server.tool_timeout_s, tool)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self.session is not None
        result = await self.session.call_tool(tool, arguments)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _run(self, coro: Any, timeout: float, what: str) -> Any:
        """Run `coro` on the loop within `timeout` seconds; failures as McpFailure."""
        try:
            return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))
        except TimeoutError:
            raise McpFailure(
                TIMEOUT,
                f"MCP server {self.server.name!r} did not answer {what} within {timeout:g} s",
                {"server": self.server.name, "timeout_s": timeout},
            ) from None
        except McpFailure:
            raise
        except (ValidationError, ValueError) as exc:
            if self.wire.garbage is None:
                self.wire.garbage = str(exc).splitlines()[0][:200]
            raise self._broken(what) from None
        except HolonError as exc:  # the sandbox refused to start it
            raise McpFailure(UNAVAILABLE, exc.message, {"server": self.server.name}) from None
        except Exception as exc:  # noqa: BLE001 - the SDK's and the OS's errors, each mapped
            raise self._broken(what, exc) from None

    def _broken(self, what: str, exc: BaseException | None = None) -> McpFailure:
        """Why the server stopped answering: garbage on the wire, or it is gone."""
        name = self.server.name
        details: dict[str, Any] = {"server": name}
        tail = self.wire.stderr_tail()
        if tail:
            details["stderr_tail"] = tail
        if self.wire.garbage is not None:
            details["problem"] = self.wire.garbage
            return McpFailure(INVALID, f"MCP server {name!r} answered {what} with garbage", details)
        if self.wire.exited is not None:
            details["exit_status"] = self.wire.exited
            message = f"MCP server {name!r} exited with status {self.wire.exited} during {what}"
            return McpFailure(UNAVAILABLE, message, details)
        why = f": {str(exc)[:200]}" if exc is not None else ""
        return McpFailure(UNAVAILABLE, f"MCP server {name!r} failed during {what}{why}", details)

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    def close(self) -> None:
        """End the session and stop the server; safe to call twice."""
        if self._task is not None and not self._task.done():
            assert self._closing is not None
            self._closing.set()
            if self.session is None:  # still starting: nothing to end politely
                self._task.cancel()
            with suppress(BaseException):
                self.loop.run_until_complete(asyncio.wait_for(self._task, 5))
        if not self.loop.is_closed():
            with suppress(Exception):
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()
        scratch = self.wire.extra.get("scratch")
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
