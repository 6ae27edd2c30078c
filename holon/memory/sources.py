"""What the memory index holds: one `Doc` per record of a stronger source, built the same way on
every rebuild so that `source_ref`s stay stable.

Sources: the memory files (`memory/self.md`, `memory/operator.md`, in sections), the workspace
profile (`.holon/workspace.json`), briefs, archived context episodes (with their model-written
summaries) and their roll-ups, work
items (with their plan), and from the transcript the messages the agent received and the tool
calls it made (the command and a bounded summary of what came back).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from holon.memory import MAX_CHARS
from holon.store import storedonce

AGENT = "agent"
WORKSPACE = "workspace"
DEFAULT_WORKSPACE = "agent_home"
MAX_BODY = MAX_CHARS  # one record's exact body (MemoryGet's maximum); longer: the head
CHUNK_CHARS = 4_000  # a memory-file section longer than this is split
OUTPUT_HEAD, OUTPUT_TAIL = 1_000, 500  # the part of a command's output that is indexed
ARGS_CHARS = 1_500
# calls whose substance is indexed elsewhere (work items) or that only read: not tool memory
NOT_INDEXED = frozenset(
    {
        "MemorySearch",
        "MemoryGet",
        "Sleep",
        "TaskStatus",
        "TaskList",
        "TaskOutput",
        "GetWorkItem",
        "ListWorkItems",
        "PickWorkItem",
        "CreateWorkItem",
        "UpdateWorkItem",
        "CompleteWorkItem",
    }
)
_HEADING = re.compile(r"#{1,6}\s+(.*)")
QUESTION = "question"
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


@dataclass
class Doc:
    key: str  # unique within its origin; the source_ref is derived from it
    origin: str  # briefs | episodes | work_items | transcript | file:<relative path>
    kind: str
    title: str
    body: str
    updated_at: str
    source_path: str
    workspace_id: str | None = DEFAULT_WORKSPACE
    metadata: dict[str, Any] = field(default_factory=dict)
    turn_id: str | None = None  # the turn that wrote it (messages, tool executions)
    asks: bool = False  # a message or brief that only asks: ranked below what states facts

    @property
    def scope_kind(self) -> str:
        return AGENT if self.workspace_id is None else WORKSPACE

    @property
    def rank_kind(self) -> str:
        """The row of holon.memory.ranking.KIND_WEIGHTS this record is weighted by."""
        return QUESTION if self.asks else self.kind


def source_ref(agent_id: str, origin: str, key: str) -> str:
    """An opaque handle: a digest, never a path a model could construct or a file it could open."""
    digest = hashlib.sha256(f"{agent_id}\0{origin}\0{key}".encode()).hexdigest()
    return "mem_" + digest[:24]


def _line(text: str, limit: int = 100) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _bounded(text: str, meta: dict[str, Any]) -> str:
    """`text` up to MAX_BODY; a longer one keeps its head and says so in `meta`."""
    if len(text) <= MAX_BODY:
        return text
    meta["body_truncated"] = True
    return text[:MAX_BODY]


def asks(text: str) -> bool:
    """Whether a message or brief only asks: every sentence of it ends with a question mark."""
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    return bool(parts) and all(p.endswith(("?", "？")) for p in parts)


def _ws(rec: dict[str, Any]) -> str:
    ws = rec.get("workspace_id")
    return ws if isinstance(ws, str) and ws else DEFAULT_WORKSPACE


def brief_doc(rec: dict[str, Any], source_path: str) -> Doc | None:
    text = rec.get("text")
    if not isinstance(text, str) or not text.strip() or not isinstance(rec.get("id"), str):
        return None
    meta = {
        "brief_id": rec["id"],
        "brief_kind": rec.get("kind"),
        "work_item_id": rec.get("work_item_id"),
        "related_message_id": rec.get("related_message_id"),
        "related_task_id": rec.get("related_task_id"),
    }
    body = _bounded(text, meta)
    return Doc(
        key=rec["id"],
        origin="briefs",
        kind="brief",
        title=f"{rec['kind'] + ' ' if isinstance(rec.get('kind'), str) else ''}brief: "
        f"{_line(text)}",
        body=body,
        updated_at=str(rec.get("created_at") or ""),
        source_path=source_path,
        workspace_id=_ws(rec),
        metadata={k: v for k, v in meta.items() if v is not None},
        asks=asks(text),
    )


def _list(title: str, items: list[Any], render) -> list[str]:
    lines = [render(x) for x in items if x]
    return [f"{title}:"] + [f"- {ln}" for ln in lines if ln] if lines else []


def episode_doc(rec: dict[str, Any], source_path: str) -> Doc | None:
    if not isinstance(rec.get("id"), str):
        return None
    turns = rec.get("turns") or {}
    span = f"turns {turns.get('first_index')}–{turns.get('last_index')}"
    lines = [str(rec.get("summary") or "").strip()]
    lines += _list("Decisions", rec.get("decisions") or [], str)
    lines += _list(
        "Commands",
        rec.get("commands") or [],
        lambda c: f"{c.get('cmd')} (exit {c.get('exit')})" if isinstance(c, dict) else str(c),
    )
    lines += _list(
        "Files", rec.get("files") or [], lambda f: f.get("path") if isinstance(f, dict) else f
    )
    lines += _list(
        "Verification",
        rec.get("verification") or [],
        lambda v: v.get("cmd") or v.get("text") if isinstance(v, dict) else str(v),
    )
    lines += _list("Carry forward", rec.get("carry_forward") or [], str)
    if rec.get("waiting"):
        lines.append(f"Waiting: {rec['waiting']}")
    work = rec.get("work_item_id")
    return Doc(
        key=rec["id"],
        origin="episodes",
        kind="episode",
        title=f"episode, {span}" + (f" ({work})" if work else ""),
        body="\n".join(x for x in lines if x),
        updated_at=str(rec.get("created_at") or ""),
        source_path=source_path,
        workspace_id=_ws(rec),
        metadata={
            k: v
            for k, v in {
                "episode_id": rec["id"],
                "turns": turns or None,
                "work_item_id": work,
                "reason": rec.get("reason"),
            }.items()
            if v is not None
        },
    )


def summary_doc(rec: dict[str, Any], source_path: str) -> Doc | None:
    """A model-written episode summary (holon.context.summaries); its attempt lines are none."""
    if rec.get("kind") != "summary" or not isinstance(rec.get("id"), str):
        return None
    if not isinstance(rec.get("summary"), str) or not rec["summary"].strip():
        return None
    return Doc(
        key=rec["id"],
        origin="summaries",
        kind="episode",
        title=f"episode summary by {rec.get('model_ref')} ({rec.get('episode_id')})",
        body=rec["summary"].strip(),
        updated_at=str(rec.get("created_at") or ""),
        source_path=source_path,
        workspace_id=_ws(rec),
        metadata={"episode_id": rec.get("episode_id"), "summary_source": "model"},
    )


def rollup_doc(rec: dict[str, Any], source_path: str) -> Doc | None:
    """A roll-up of episodes (holon.context.rollups): its summary, decisions and files."""
    if not isinstance(rec.get("id"), str):
        return None
    turns = rec.get("turns") or {}
    span = f"turns {turns.get('first_index')}–{turns.get('last_index')}"
    lines = [str(rec.get("summary") or "").strip()]
    lines += _list("Decisions", rec.get("decisions") or [], str)
    lines += _list("Files", rec.get("files") or [], str)
    work = [str(w) for w in rec.get("work_item_ids") or []]
    meta = {
        "rollup_id": rec["id"],
        "level": rec.get("level"),
        "turns": turns or None,
        "episodes": rec.get("episodes"),
        "work_item_ids": work or None,
    }
    return Doc(
        key=rec["id"],
        origin="rollups",
        kind="rollup",
        title=f"roll-up, {span} ({rec.get('episodes')} episodes)",
        body=_bounded("\n".join(x for x in lines if x), meta),
        updated_at=str(rec.get("created_at") or ""),
        source_path=source_path,
        workspace_id=_ws(rec),
        metadata={k: v for k, v in meta.items() if v is not None},
    )


def work_item_doc(rec: dict[str, Any], source_path: str, plan: str | None) -> Doc | None:
    if not isinstance(rec.get("id"), str):
        return None
    objective = str(rec.get("objective") or "")
    lines = [objective, f"State: {rec.get('state')} · plan {rec.get('plan_status')}"]
    todos = [t for t in rec.get("todo_list") or [] if isinstance(t, dict)]
    lines += _list("Todo", todos, lambda t: f"[{t.get('state')}] {t.get('text')}")
    if rec.get("blocked_by"):
        lines.append(f"Blocked by: {rec['blocked_by']}")
    if rec.get("result_summary"):
        lines.append(f"Result: {rec['result_summary']}")
    if plan and plan.strip():
        lines += ["Plan:", plan.strip()]
    meta = {"work_item_id": rec["id"], "state": rec.get("state")}
    body = _bounded("\n".join(str(x) for x in lines if x), meta)
    return Doc(
        key=rec["id"],
        origin="work_items",
        kind="work_item",
        title=f"work item: {_line(objective)}",
        body=body,
        updated_at=str(rec.get("updated_at") or rec.get("created_at") or ""),
        source_path=source_path,
        workspace_id=_ws(rec),
        metadata=meta,
    )


def message_doc(entry: dict[str, Any], source_path: str, workspace: str) -> Doc | None:
    data = entry.get("data") or {}
    text = data.get("text")
    key = entry.get("message_id") or entry.get("id")
    if not isinstance(text, str) or not text.strip() or not isinstance(key, str):
        return None
    kind = data.get("message_kind") or "message"
    meta = {
        "message_id": entry.get("message_id"),
        "turn_id": entry.get("turn_id"),
        "message_kind": kind,
        "origin_kind": data.get("origin_kind"),
        "trust": data.get("trust"),
    }
    body = _bounded(text, meta)
    return Doc(
        key=key,
        origin="transcript",
        kind="message",
        title=f"{kind}: {_line(text)}",
        body=body,
        updated_at=str(entry.get("created_at") or ""),
        source_path=source_path,
        workspace_id=workspace,
        metadata={k: v for k, v in meta.items() if v is not None},
        turn_id=_turn(entry.get("turn_id")),
        asks=asks(text),
    )


def _turn(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _args_text(name: str, args: Any) -> tuple[str, str]:
    """(short title, body lines) for a call's arguments: commands as shell lines, the rest as
    bounded JSON."""
    if isinstance(args, dict) and isinstance(args.get("cmd"), str):
        where = f"\n(in {args['workdir']})" if args.get("workdir") else ""
        return _line(args["cmd"]), f"$ {args['cmd']}{where}"
    if isinstance(args, dict) and isinstance(args.get("commands"), list):
        cmds = [c.get("cmd") for c in args["commands"] if isinstance(c, dict)]
        cmds = [c for c in cmds if isinstance(c, str)]
        return _line("; ".join(cmds)), "\n".join(f"$ {c}" for c in cmds)
    if isinstance(args, dict) and isinstance(args.get("patch"), str):
        return _patch_files(args["patch"]), args["patch"][:ARGS_CHARS]
    if isinstance(args, str):  # a freeform payload
        return (_patch_files(args) if name == "ApplyPatch" else _line(args)), args[:ARGS_CHARS]
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return _line(text), text[:ARGS_CHARS]


def _patch_files(patch: str) -> str:
    files = re.findall(r"^\+\+\+ (?:b/)?(\S+)", patch, re.MULTILINE)
    return ", ".join(dict.fromkeys(f for f in files if f != "/dev/null")) or _line(patch)


def _clip(text: str) -> str:
    text = text.strip("\n")
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return text
    return text[:OUTPUT_HEAD] + "\n…\n" + text[-OUTPUT_TAIL:]


def _outcome(envelope: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Lines saying how a call ended, and metadata for it."""
    lines = [str(envelope.get("summary_text") or envelope.get("status") or "")]
    meta: dict[str, Any] = {"status": envelope.get("status")}
    result = envelope.get("result")
    if isinstance(result, dict):
        if "exit_status" in result:
            meta["exit_status"] = result.get("exit_status")
        for label, name in (("stdout", "stdout_preview"), ("stderr", "stderr_preview")):
            if isinstance(result.get(name), str) and result[name].strip():
                lines += [f"--- {label} ---", _clip(result[name])]
        items = result.get("results")
        if isinstance(items, list):  # a batch: one line per command
            for r in items:
                if isinstance(r, dict):
                    lines.append(f"[{r.get('index')}] exit {r.get('exit_status')}: {r.get('cmd')}")
                    if isinstance(r.get("stdout_preview"), str) and r["stdout_preview"].strip():
                        lines.append(_clip(r["stdout_preview"])[:OUTPUT_TAIL])
        if not any(k in result for k in ("stdout_preview", "results")):
            text = json.dumps(result, ensure_ascii=False, sort_keys=True)
            lines.append(text[:ARGS_CHARS])
    error = envelope.get("error")
    if isinstance(error, dict):
        lines.append(f"error {error.get('kind')}: {error.get('message')}")
        meta["error_kind"] = error.get("kind")
    return [x for x in lines if x], {k: v for k, v in meta.items() if v is not None}


def tool_doc(
    call: dict[str, Any],
    result: dict[str, Any] | None,
    source_path: str,
    workspace: str,
) -> Doc | None:
    """One tool execution: the call (a `tool_call` entry's data plus the entry's ids) and, once
    it has come back, the `tool_result` entry."""
    name = call.get("name")
    if not isinstance(name, str) or name in NOT_INDEXED:
        return None
    short, args_body = _args_text(name, call.get("arguments", call.get("raw_arguments")))
    lines = [args_body]
    meta: dict[str, Any] = {
        "tool_name": name,
        "turn_id": call.get("turn_id"),
        "call_id": call.get("call_id"),
    }
    updated = call.get("created_at") or ""
    if result is not None:
        envelope = storedonce.expand(result.get("data") or {}).get("envelope") or {}
        more, outcome = _outcome(envelope)
        lines += more
        meta.update(outcome)
        updated = result.get("created_at") or updated
    else:
        meta["status"] = "no_result"
    body = _bounded("\n".join(lines), meta)
    return Doc(
        key=f"{call.get('turn_id')}:{call.get('key') or call.get('call_id')}",
        origin="transcript",
        kind="tool_execution",
        title=f"{name}: {short}",
        body=body,
        updated_at=str(updated),
        source_path=source_path,
        workspace_id=workspace,
        metadata={k: v for k, v in meta.items() if v is not None},
        turn_id=_turn(call.get("turn_id")),
    )


def file_docs(
    relpath: str, text: str, updated_at: str, *, kind: str, workspace_id: str | None = None
) -> list[Doc]:
    """A memory file in sections: a Markdown heading starts one, and a section longer than
    CHUNK_CHARS is split at line ends. The sections concatenate back to the exact file. Memory
    files are agent-scoped (no workspace_id)."""
    chunks: list[tuple[str, int, list[str]]] = []  # (heading, first line number, lines)
    heading, size = "", 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        m = _HEADING.match(line)
        if m or not chunks or size + len(line) > CHUNK_CHARS:
            if m:
                heading = m.group(1).strip()
            chunks.append((heading, number, []))
            size = 0
        while len(line) > CHUNK_CHARS:  # one very long line: hard pieces
            chunks[-1][2].append(line[:CHUNK_CHARS])
            chunks.append((heading, number, []))
            line = line[CHUNK_CHARS:]
        chunks[-1][2].append(line)
        size += len(line)
    docs: list[Doc] = []
    seen: dict[str, int] = {}
    for i, (head, first, lines) in enumerate(chunks):
        n = seen[head] = seen.get(head, -1) + 1
        last = chunks[i + 1][1] - 1 if i + 1 < len(chunks) else first + len(lines) - 1
        body = "".join(lines)
        if not body.strip():
            continue
        docs.append(
            Doc(
                key=f"{relpath}#{head}#{n}",
                origin=f"file:{relpath}",
                kind=kind,
                title=f"{relpath}" + (f" — {head}" if head else ""),
                body=body,
                updated_at=updated_at,
                source_path=relpath,
                workspace_id=workspace_id,
                metadata={"line_start": first, "line_end": max(first, last)},
            )
        )
    return docs
