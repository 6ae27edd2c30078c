"""Per-transport kits for the loopback tests: environment, real response and error bodies,
request readers.

Each kit knows how its API answers (success bodies, the API's own error body
shapes) and how to read the tools / tool calls / tool results back out of a
recorded request, so one set of tests drives all four transports.
"""

from __future__ import annotations

import json
from typing import Any

from holon.model.conversation import PromptBlock, PromptCache, PromptFrame, ToolDefinition

SECRET = "sk-canary-SECRET-0123456789abcdef"
GRAMMAR = (
    'start: "*** Begin Patch" NEWLINE LINE* "*** End Patch"\n'
    "LINE: /[^\\n]*\\n/\n%import common.NEWLINE\n"
)

FRAME = PromptFrame(
    system_prompt="You are holon test agent.",
    system_blocks=[PromptBlock(text="Stable guidance: be brief.", cache_breakpoint=True)],
    context_blocks=[PromptBlock(text="Workspace: /w (clean)")],
    cache=PromptCache(
        agent_id="agent-1", prompt_cache_key="pck-agent-1-v1", context_fingerprint="fp-1"
    ),
)

EXEC = ToolDefinition(
    name="ExecCommand",
    description="Run a shell command.",
    input_schema={
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "timeout_s": {"type": "integer"}},
        "required": ["cmd"],
        "additionalProperties": False,
    },
)
PATCH = ToolDefinition(
    name="ApplyPatch",
    description="Apply a unified diff.",
    input_schema={
        "type": "object",
        "properties": {"patch": {"type": "string"}},
        "required": ["patch"],
        "additionalProperties": False,
    },
    freeform_grammar=GRAMMAR,
)
TOOLS = [EXEC, PATCH]
PATCH_TEXT = "*** Begin Patch\n+hello\n*** End Patch"


class Kit:
    transport: str
    provider: str

    def ref(self, model: str) -> str:
        return f"{self.provider}/{model}"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        raise NotImplementedError

    def push_ok(self, server: Any, body: dict[str, Any]) -> None:
        server.json(body)

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        etype = {401: "invalid_request_error", 429: "requests", 500: "server_error"}.get(
            status, "invalid_request_error"
        )
        return {"error": {"message": message, "type": etype, "param": None, "code": code}}

    def push_context_overflow(self, server: Any) -> None:
        server.json(
            self.error_body(
                400,
                "Your input exceeds the context window of this model. Please adjust your "
                "input and try again.",
                "context_length_exceeded",
            ),
            400,
        )

    def push_malformed(self, server: Any) -> None:
        server.malformed()


class ResponsesKit(Kit):
    transport, provider = "openai_responses", "openai"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")

    def tool_round(self) -> dict[str, Any]:
        return _response(
            "resp_1",
            [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {
                            "type": "output_text",
                            "text": "Listing, then patching.",
                            "annotations": [],
                        }
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_exec_1",
                    "name": "ExecCommand",
                    "arguments": '{"cmd": "ls"}',
                    "status": "completed",
                },
                {
                    "type": "custom_tool_call",
                    "id": "ctc_1",
                    "call_id": "call_patch_1",
                    "name": "ApplyPatch",
                    "input": PATCH_TEXT,
                    "status": "completed",
                },
            ],
        )

    def text_round(self) -> dict[str, Any]:
        return _response(
            "resp_2",
            [
                {
                    "type": "message",
                    "id": "msg_2",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
                }
            ],
        )

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["parameters"] for t in body["tools"] if t["type"] == "function"]


class CodexKit(ResponsesKit):
    transport, provider = "openai_codex_stream", "openai-codex"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("OPENAI_CODEX_ACCESS_TOKEN", SECRET)
        monkeypatch.setenv("OPENAI_CODEX_BASE_URL", server.url + "/backend-api/codex")

    def push_ok(self, server: Any, body: dict[str, Any]) -> None:
        """Stream it as the Codex backend does: items in output_item.done,
        then a completed with output: []."""
        events: list[dict[str, Any]] = [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**body, "status": "in_progress", "output": [], "usage": None},
            }
        ]
        for i, item in enumerate(body["output"]):
            events.append(
                {
                    "type": "response.output_item.added",
                    "sequence_number": len(events),
                    "output_index": i,
                    "item": {**item, "status": "in_progress"},
                }
            )
            events.append(
                {
                    "type": "response.output_item.done",
                    "sequence_number": len(events),
                    "output_index": i,
                    "item": item,
                }
            )
        events.append(
            {
                "type": "response.completed",
                "sequence_number": len(events),
                "response": {**body, "output": []},
            }
        )
        server.sse(events)

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        if status == 429:
            return {
                "error": {
                    "type": "usage_limit_reached",
                    "message": message,
                    "plan_type": "plus",
                    "resets_in_seconds": 60,
                }
            }
        return {"detail": message} if code is None else super().error_body(status, message, code)

    def push_context_overflow(self, server: Any) -> None:
        server.sse(
            [
                {
                    "type": "response.created",
                    "sequence_number": 0,
                    "response": {"id": "resp_x", "status": "in_progress", "output": []},
                },
                {
                    "type": "response.failed",
                    "sequence_number": 1,
                    "response": {
                        "id": "resp_x",
                        "status": "failed",
                        "output": [],
                        "error": {
                            "code": "context_length_exceeded",
                            "message": "Your input exceeds the context window of this model.",
                        },
                    },
                },
            ]
        )

    def push_malformed(self, server: Any) -> None:
        server.sse_raw(
            b'event: response.created\ndata: {"type": "response.created", "response": {\n\n'
        )


class AnthropicKit(Kit):
    transport, provider = "anthropic_messages", "anthropic"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)

    def tool_round(self) -> dict[str, Any]:
        return _message(
            "msg_1",
            [
                {"type": "text", "text": "Listing, then patching."},
                {
                    "type": "tool_use",
                    "id": "toolu_exec_1",
                    "name": "ExecCommand",
                    "input": {"cmd": "ls"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_patch_1",
                    "name": "ApplyPatch",
                    "input": {"patch": PATCH_TEXT},
                },
            ],
            "tool_use",
        )

    def text_round(self) -> dict[str, Any]:
        return _message("msg_2", [{"type": "text", "text": "Done."}], "end_turn")

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        etype = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            500: "api_error",
            529: "overloaded_error",
        }[status]
        return {
            "type": "error",
            "error": {"type": etype, "message": message},
            "request_id": "req_011CTest",
        }

    def push_context_overflow(self, server: Any) -> None:
        server.json(self.error_body(400, "prompt is too long: 208310 tokens > 200000 maximum"), 400)

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["input_schema"] for t in body["tools"]]


class ChatKit(Kit):
    transport, provider = "openai_chat_completions", "localchat"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        import os

        home = os.environ["HOLON_HOME"]
        with open(f"{home}/config.toml", "w", encoding="utf-8") as f:
            f.write(
                f'[providers.localchat]\ntransport = "openai_chat_completions"\n'
                f'base_url = "{server.url}/v1"\napi_key_env = "LOCALCHAT_API_KEY"\n'
            )
        monkeypatch.setenv("LOCALCHAT_API_KEY", SECRET)
        from holon import config

        config.reset()

    def tool_round(self) -> dict[str, Any]:
        return _completion(
            "chatcmpl-1",
            {
                "role": "assistant",
                "content": "Listing, then patching.",
                "tool_calls": [
                    {
                        "id": "call_exec_1",
                        "type": "function",
                        "function": {"name": "ExecCommand", "arguments": '{"cmd": "ls"}'},
                    },
                    {
                        "id": "call_patch_1",
                        "type": "function",
                        "function": {
                            "name": "ApplyPatch",
                            "arguments": json.dumps({"patch": PATCH_TEXT}),
                        },
                    },
                ],
            },
            "tool_calls",
        )

    def text_round(self) -> dict[str, Any]:
        return _completion("chatcmpl-2", {"role": "assistant", "content": "Done."}, "stop")

    def push_context_overflow(self, server: Any) -> None:
        server.json(
            self.error_body(
                400,
                "This model's maximum context length is 65536 tokens. However, you requested "
                "70123 tokens (62123 in the messages, 8000 in the completion).",
                "invalid_request_error",
            ),
            400,
        )

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["function"]["parameters"] for t in body["tools"]]


KITS = [ResponsesKit(), CodexKit(), AnthropicKit(), ChatKit()]


def _response(rid: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "m",
        "output": output,
        "usage": {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 100},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 150,
        },
    }


def _message(mid: str, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 20,
            "output_tokens": 30,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
        },
    }


def _completion(cid: str, message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    }


# -- driving an agent's turns against the loopback server -----------------------------------------
#
# A Driver runs turns in-process (admission.admit + runtime.tick) while the server answers each
# request through a plan: plan(driver, recorded) -> (status, JSON body). Replies carry
# usage.input_tokens = request bytes // 4, so holon's calibration sees plausible counts.


def isolate_env(mp: Any, root: Any) -> None:
    """What the autouse clean_env fixture does, for a fixture wider than one test: provider and
    holon variables removed, HOME and HOLON_HOME under `root`."""
    import os

    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            mp.delenv(name, raising=False)
    mp.setenv("HOME", str(root / "home"))
    mp.setenv("HOLON_HOME", str(root / "holon-home"))
    mp.setenv("HOLON_RETRY_BACKOFF_MS", "1")
    (root / "holon-home").mkdir()


_ENV_PREFIXES = ("OPENAI_", "ANTHROPIC_", "HOLON_", "CODEX_", "OPENROUTER_", "DEEPSEEK_", "OLLAMA_")


def skip_fsync(mp: Any) -> None:
    """Scenarios of hundreds of turns do not test durability: without fsync (about 40 calls a
    turn) they run a fifth faster. Only for the scenario's own run, never for a whole test."""
    import os

    mp.setattr(os, "fsync", lambda fd: None)


def share_tls_context(mp: Any) -> None:
    """The SDKs build a TLS context for every client (about 30 ms: the CA bundle is loaded each
    time), and holon makes one client per request. The loopback is plain HTTP, so scenarios of
    hundreds of requests share one context; nothing else of the SDK changes."""
    import ssl

    import httpx2._transports.default as transport

    shared = ssl.create_default_context()
    mp.setattr(transport, "create_ssl_context", lambda *args, **kwargs: shared)


EXEC_20K = "head -c 20000 /dev/zero | tr '\\0' x"  # prints 20,000 bytes
EPISODE_HEAD = "# Earlier context"


def _responses_reply(n: int, output: list[dict[str, Any]], size: int) -> dict[str, Any]:
    body = _response(f"resp_{n}", output)
    body["usage"] = {
        "input_tokens": size // 4,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": size // 4 + 12,
    }
    return body


def _anthropic_reply(n: int, content: list[dict[str, Any]], stop: str, size: int) -> dict:
    body = _message(f"msg_{n}", content, stop)
    body["usage"] = {"input_tokens": size // 4, "output_tokens": 12}
    return body


class Wire:
    """The replies and request readers of one transport, for a driven agent."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.openai = kit.transport == "openai_responses"

    def exec_call(self, n: int, cmd: str, size: int) -> tuple[int, dict[str, Any]]:
        if self.openai:
            call = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": "ExecCommand",
                "arguments": json.dumps({"cmd": cmd}),
                "status": "completed",
            }
            return 200, _responses_reply(n, [call], size)
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "ExecCommand", "input": {"cmd": cmd}}
        return 200, _anthropic_reply(n, [use], "tool_use", size)

    def final(self, n: int, text: str, size: int) -> tuple[int, dict[str, Any]]:
        if self.openai:
            msg = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            return 200, _responses_reply(n, [msg], size)
        return 200, _anthropic_reply(n, [{"type": "text", "text": text}], "end_turn", size)

    def overflow(self) -> tuple[int, dict[str, Any]]:
        if self.openai:
            return 400, self.kit.error_body(
                400,
                "Your input exceeds the context window of this model. Please adjust your input "
                "and try again.",
                "context_length_exceeded",
            )
        return 400, self.kit.error_body(400, "prompt is too long: 208310 tokens > 200000 maximum")

    # -- reading a request -------------------------------------------------------------------
    def episode_text(self, body: dict[str, Any]) -> str:
        """The episode block ('# Earlier context'), or '' when the request has none."""
        if self.openai:
            first = body["input"][0] if body["input"] else {}
        else:
            first = body["messages"][0] if body["messages"] else {}
        blocks = first.get("content") or []
        if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict):
            text = str(blocks[0].get("text") or "")
            if text.startswith(EPISODE_HEAD):
                return text
        return ""

    def conversation(self, body: dict[str, Any]) -> str:
        """The conversation as JSON text, the episode block left out."""
        items = body["input"] if self.openai else body["messages"]
        if not items or not self.episode_text(body):
            return json.dumps(items, ensure_ascii=False)
        first = {**items[0], "content": items[0]["content"][1:]}
        return json.dumps([first, *items[1:]], ensure_ascii=False)

    def prefix_problem(self, a: dict[str, Any], b: dict[str, Any]) -> str | None:
        """Why request `b` does not start with request `a` byte for byte (None when it does):
        everything but the conversation equal, and `a`'s conversation a prefix of `b`'s. For
        Anthropic, `a`'s rolling cache mark (on its newest block) is the one allowed change."""
        dump = json.dumps
        key = "input" if self.openai else "messages"
        head_a = {k: v for k, v in a.items() if k != key}
        head_b = {k: v for k, v in b.items() if k != key}
        if dump(head_a) != dump(head_b):
            changed = sorted(
                k for k in head_a.keys() | head_b.keys() if head_a.get(k) != head_b.get(k)
            )
            return f"the request head changed: {changed}"
        if self.openai:
            n = len(a["input"])
            if dump(b["input"][:n]) != dump(a["input"]):
                first = next(i for i in range(n) if b["input"][i] != a["input"][i])
                return f"input item {first} changed"
            return None
        earlier = list(a["messages"])
        newest = {k: v for k, v in earlier[-1]["content"][-1].items() if k != "cache_control"}
        earlier[-1] = {**earlier[-1], "content": [*earlier[-1]["content"][:-1], newest]}
        later = b["messages"]
        if len(later) < len(earlier):
            return "fewer messages"
        for i, msg in enumerate(earlier[:-1]):
            if dump(later[i]) != dump(msg):
                return f"message {i} changed"
        last, cut = earlier[-1], later[len(earlier) - 1]
        if last["role"] != cut["role"] or dump(cut["content"][: len(last["content"])]) != dump(
            last["content"]
        ):
            return f"message {len(earlier) - 1} changed"
        return None


class Driver:
    """One agent home driven turn by turn against `server`; `plan` answers each request."""

    def __init__(self, home: Any, server: Any, kit: Kit, model: str = "m-1") -> None:
        self.home, self.server, self.kit, self.wire = home, server, kit, Wire(kit)
        self.model_ref = kit.ref(model)
        self.turn = 0  # turns started so far (1-based number of the running turn)
        self.round = 0  # requests answered in the running turn
        self.count = 0  # requests answered in all
        self.log: list[tuple[int, int, int]] = []  # (turn, request in turn, body bytes)
        self.plan: Any = exec_then_final(EXEC_20K)
        self.observe: Any = None  # observe(driver, recorded) before the plan answers
        server.responder = self._answer

    def _answer(self, rec: Any) -> tuple[int, Any]:
        self.count += 1
        self.log.append((self.turn, self.round, rec.size))
        if self.observe is not None:
            self.observe(self, rec)
        reply = self.plan(self, rec)
        self.round += 1
        return reply

    def run_turn(self, text: str, *, keep: bool = True) -> dict[str, Any]:
        """Admit an operator prompt and tick until idle; returns the turn's report."""
        from holon.agent import admission
        from holon.runtime.tick import tick

        self.turn += 1
        self.round = 0
        admission.admit(self.home, "cli_prompt", "operator_prompt", admission.text_body(text))
        report = tick(self.home, until_idle=True, model=self.model_ref)
        if not keep:
            self.server.requests.clear()
        assert not self.server.errors, self.server.errors
        assert report.turns, report
        return report.turns[-1]

    def events(self, kind: str) -> list[dict[str, Any]]:
        from holon.store import jsonl

        return [e["data"] for e in jsonl.read(self.home.events) if e["kind"] == kind]


def exec_then_final(cmd: str) -> Any:
    """Each turn: the first request gets an ExecCommand call of `cmd`, later ones final text."""

    def plan(d: Driver, rec: Any) -> tuple[int, Any]:
        if d.round == 0:
            return d.wire.exec_call(d.count, cmd, rec.size)
        return d.wire.final(d.count, f"done {d.turn}", rec.size)

    return plan
