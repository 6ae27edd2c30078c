"""Provider-test fixtures: a clean environment, a programmable loopback HTTP server,
golden payload files.

The server is stdlib only (ThreadingHTTPServer on 127.0.0.1, port 0). It
records every request (path, headers, JSON body) and answers from a queue:
JSON bodies with any status and headers, SSE streams, malformed JSON, a
connection reset in the middle of the body, or a hang longer than the client
timeout. The real SDKs talk to it; nothing of the SDK is mocked.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "requests"
# read once at import: clean_env strips HOLON_* from every test's environment
UPDATE_GOLDEN = os.environ.get("HOLON_UPDATE_GOLDEN") == "1"
_JSON = {"Content-Type": "application/json"}
_STRIP = ("OPENAI_", "ANTHROPIC_", "HOLON_", "CODEX_", "OPENROUTER_", "DEEPSEEK_", "OLLAMA_")


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    mode: str = "normal"  # normal | sse | reset | hang
    events: list[dict[str, Any]] = field(default_factory=list)
    hang_s: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    json: Any
    size: int = 0  # bytes of the request body as sent


class LoopbackServer:
    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        # answers a request when the queue is empty (a scripted model that reacts to what it
        # gets): a Reply, or (status, JSON body)
        self.responder: Callable[[Recorded], Reply | tuple[int, Any]] | None = None
        self.errors: list[BaseException] = []  # what the responder raised
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    rec = Recorded(
                        "POST",
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                        len(raw),
                    )
                    server.requests.append(rec)
                    if server.queue:
                        reply = server.queue.popleft()
                    elif server.responder is not None:
                        try:
                            reply = server.responder(rec)
                        except Exception as exc:  # surfaced by the test: server.errors
                            server.errors.append(exc)
                            reply = (400, {"error": {"message": f"responder failed: {exc!r}"}})
                        if isinstance(reply, tuple):
                            status, doc = reply
                            reply = Reply(status, json.dumps(doc).encode(), dict(_JSON))
                    else:
                        reply = Reply(599, b'{"error": {"message": "loopback queue is empty"}}')
                server._answer(self, reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    # -- programming the queue ---------------------------------------------------------------
    def json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.queue.append(
            Reply(
                status,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", **(headers or {})},
            )
        )

    def sse(self, events: list[dict[str, Any]]) -> None:
        self.queue.append(Reply(mode="sse", events=events))

    def sse_raw(self, raw: bytes) -> None:
        """An event stream whose bytes are exactly `raw`
        (e.g. an event with malformed JSON data)."""
        self.queue.append(Reply(mode="sse", body=raw))

    def malformed(self) -> None:
        self.queue.append(
            Reply(200, b'{"id": "resp_1", "output": [', {"Content-Type": "application/json"})
        )

    def reset(self) -> None:
        self.queue.append(Reply(mode="reset"))

    def hang(self, seconds: float = 3.0) -> None:
        self.queue.append(Reply(mode="hang", hang_s=seconds))

    def bodies(self) -> list[Any]:
        return [r.json for r in self.requests]

    # -- answering -----------------------------------------------------------------------------
    def _answer(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.mode == "hang":
            time.sleep(reply.hang_s)
            return
        if reply.mode == "reset":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "4096")
            h.end_headers()
            h.wfile.write(b'{"id": "resp_cut", "output": [{"type": "mess')
            h.wfile.flush()
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            return
        if reply.mode == "sse":
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(reply.body)
            for event in reply.events:
                h.wfile.write(
                    f"event: {event.get('type', 'message')}\ndata: {json.dumps(event)}\n\n".encode()
                )
                h.wfile.flush()
            h.close_connection = True
            return
        h.send_response(reply.status)
        for k, v in reply.headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(reply.body)))
        h.end_headers()
        h.wfile.write(reply.body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for name in list(os.environ):
        if name.startswith(_STRIP):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOLON_HOME", str(tmp_path / "holon-home"))
    monkeypatch.setenv("HOLON_RETRY_BACKOFF_MS", "1")
    (tmp_path / "holon-home").mkdir()
    from holon import config

    config.reset()
    yield
    config.reset()


@pytest.fixture
def server():
    srv = LoopbackServer()
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def module_server():
    """One loopback server for a module-scoped scenario (its fixture sets its own environment)."""
    srv = LoopbackServer()
    yield srv
    srv.close()


def _normalize(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _normalize(v) for k, v in sorted(node.items())}
    if isinstance(node, list):
        return [_normalize(v) for v in node]
    return node


@pytest.fixture
def golden():
    """golden(name, payload): compare with golden/requests/<name>.json;
    HOLON_UPDATE_GOLDEN=1 rewrites it."""

    def check(name: str, payload: Any) -> None:
        path = GOLDEN / f"{name}.json"
        text = json.dumps(_normalize(payload), indent=2, ensure_ascii=False) + "\n"
        if UPDATE_GOLDEN:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"missing golden {path}; run with HOLON_UPDATE_GOLDEN=1"
        assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text), (
            f"request payload drifted from {path}"
        )

    return check
