"""`holon debug prompt`: what the agent's next provider request would contain, with a manifest.

Read-only: a compaction the request would need is described, never carried out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon.agent import workspaces
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home.layout import Home
from holon.runtime.turn import context


def _sources(home: Home, anchor: Path, refused: set[str]) -> list[dict[str, Any]]:
    """The instruction files the prompt loads: the agent's, then the workspace's, read at the
    workspace anchor (never at a worktree the execution root may be in); not one the prompt
    refused (the manifest's refused_files names those)."""
    out = []
    candidates = [("agent", home.agents_md)]
    candidates += [
        ("agent_memory", home.memory / "self.md"),
        ("agent_memory", home.memory / "operator.md"),
    ]
    if anchor != home.root:
        ws_md = anchor / "AGENTS.md"
        used = ws_md.exists() and str(ws_md) not in refused
        candidates.append(("workspace", ws_md if used else anchor / "CLAUDE.md"))
    for kind, path in candidates:
        if str(path) in refused:
            continue
        try:
            size = path.stat().st_size
        except OSError:
            continue
        out.append({"kind": kind, "path": str(path), "bytes": size})
    return out


def next_prompt(home: Home, model: str | None = None) -> dict[str, Any]:
    agent = Agent(home).ensure()
    chain = context.model_chain(agent, model)
    if chain is None:
        raise UsageError(
            "no model is configured for this agent, so there is no request to show",
            kind="no_model_configured",
            hint="pass --model provider/model, or set one with `holon model set`",
        )
    assembly = context.build_request(agent, chain[0], None, persist=False)
    request = assembly.request
    bound = workspaces.binding(agent)
    anchor = Path(bound["workspace_anchor"])
    return {
        "agent_id": agent.id,
        "agent_home": str(home.root),
        "workspace_id": bound["workspace_id"],
        "workspace_anchor": str(anchor),
        "execution_root": bound["execution_root"],
        "cwd": bound["cwd"],
        "mode": bound["mode"],
        "projection_kind": bound["projection_kind"],
        "instruction_sources": _sources(
            home, anchor, {r["path"] for r in assembly.manifest["refused_files"]}
        ),
        "manifest": assembly.manifest,
        "request": {
            "model_ref": request.model_ref,
            "max_output_tokens": request.max_output_tokens,
            "system_prompt": request.frame.system_prompt,
            "system_blocks": [b.model_dump() for b in request.frame.system_blocks],
            "context_blocks": [b.model_dump() for b in request.frame.context_blocks],
            "conversation": [i.model_dump(exclude_defaults=False) for i in request.conversation],
            "tools": [t.name for t in request.tools],
        },
    }


def render(doc: dict[str, Any]) -> str:
    """The human view: the manifest, then every block and conversation item in request order."""
    m = doc["manifest"]
    lines = [
        f"agent:       {doc['agent_id']} ({doc['agent_home']})",
        f"model:       {m['model_ref']} · window {m['context_window']} · output reserve "
        f"{m['output_reserve']} · prompt budget {m['prompt_budget']}",
        f"estimate:    {m['estimated_tokens']} tokens (calibration x{m['calibration_ratio']})",
        f"cache:       key {m['prompt_cache_key']} · fingerprint {m['context_fingerprint']} · "
        f"compression epoch {m['compression_epoch']} · working memory revision "
        f"{m['working_memory_revision']}",
        f"execution:   workspace {doc['workspace_id']} ({doc['mode']}) · anchor "
        f"{doc['workspace_anchor']} · root {doc['execution_root']} · cwd {doc['cwd']}",
    ]
    for src in doc["instruction_sources"]:
        lines.append(f"instructions: {src['kind']} {src['path']} ({src['bytes']} bytes)")
    for r in m.get("refused_files") or []:
        lines.append(f"not read:    {r['path']}: {r['detail']} ({r['reason']})")
    if m.get("compaction"):
        c = m["compaction"]
        lines.append(
            f"compaction:  the next round would fold {c.get('folded_turns')} turn(s) into episodes"
        )
    lines += ["", "blocks:"]
    for b in m["blocks"]:
        extra = ""
        if b["name"] == "episodes":
            extra = f" · {len(b['episodes'])} episode(s)"
        elif b["kind"] == "conversation":
            extra = f" · {b.get('items', 0)} item(s)"
            if b["name"] == "conversation":
                extra += f" · {b['turns']} turn(s) from transcript offset {b['window_start']}"
        elif b["name"] == "tools":
            extra = f" · {b['count']} tool(s)"
        mark = " · cache breakpoint" if b.get("cache_breakpoint") else ""
        lines.append(f"  {b['name']:<24} {b['tokens']:>8} tokens{extra}{mark}")
    req = doc["request"]
    lines += ["", "=== system: policy ===", req["system_prompt"]]
    for b in req["system_blocks"]:
        lines += ["", f"=== system: {b['name']} ===", b["text"]]
    for b in req["context_blocks"]:
        lines += ["", f"=== context: {b['name']} ===", b["text"]]
    lines += ["", f"=== tools: {', '.join(req['tools'])} ==="]
    for item in req["conversation"]:
        lines += ["", f"--- {_item_head(item)} ---"]
        body = item.get("text") or item.get("content") or ""
        if body:
            lines.append(body)
    return "\n".join(lines)


def _item_head(item: dict[str, Any]) -> str:
    if item["type"] == "assistant":
        calls = ", ".join(c["name"] for c in item.get("tool_calls") or [])
        return "assistant" + (f" (calls {calls})" if calls else "")
    if item["type"] == "tool_result":
        return f"tool result {item['tool_name']}" + (" (error)" if item.get("is_error") else "")
    return "user"
