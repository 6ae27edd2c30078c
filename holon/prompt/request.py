"""The provider request for the next round, assembled within the model's token budget.

Layout, most stable first: the policy and stable system blocks, the tool catalog, the episode
block (changes only at compaction), the conversation from the window start (append-only between
compactions, each turn opening with its message and its turn-scoped context), and the current
turn. When the whole does not fit, the oldest turns are folded into episodes (holon.context
.compaction); a turn too long on its own is cut (holon.context.fit): its message and newest
rounds stay, older results are shown by their canonical summary and a file with the full output.

`assemble_request` sizes the request (`_sizing`: budget and fixed part), plans what to drop
(`plan_drop`, pure), writes the compaction that plan needs (`_compact`, only with `persist`),
then lays out the request and its manifest (`_manifest_blocks`, `_manifest`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from holon.agent.handle import Agent
from holon.context import (
    compaction,
    earlier,
    fit,
    history,
    memoryfiles,
    window,
    workingmemory,
)
from holon.model.conversation import (
    ProviderRequest,
    ToolDefinition,
    UserItem,
)
from holon.prompt import assemble
from holon.store import jsonl
from holon.store.atomic import write_bytes
from holon.text import shorten

EPISODE_SHARE = 0.12  # of the prompt budget, for the episode block
EPISODE_MAX = 8_000  # tokens
SHORT_TEXT = 300
ROLLUP_NOTE = (
    "Older stretches are rolled up: a roll-up summarizes a run of episodes (lines that differ "
    "only in numbers grouped, as turns A–B ×N); MemorySearch and MemoryGet find the details."
)
MIN_SCAN_BYTES = 4 << 20  # at most this much transcript (or 16 bytes a budget token) is read
SHORT_ARGS = 1_000
SHORT_RESULT = 400  # a result this short is shown as it is: its summary would be no shorter
NOTE = (
    "[{n} earlier rounds of this turn are not shown, to fit the context window; their calls and "
    "results are in the transcript. Carry what matters in your notes and working files.]"
)


@dataclass
class CurrentTurn:
    """The turn being run: its id, the transcript offset of its message, and its entries so far
    (message, turn_context, then each assistant_round and its tool_results)."""

    turn_id: str
    offset: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    # round index -> its items and sizes, full and summarized (a settled round never changes)
    rounds: dict[int, RoundView] = field(default_factory=dict)
    # the last cut sent: within a turn the cut only deepens, so a budget that wobbles with
    # calibration never makes the prompt undo and redo the same cut
    cut: fit.TurnCut = field(default_factory=lambda: fit.TurnCut(0, 0))
    # the episode block of the last round and what it was made for (window start, budget,
    # compaction epoch): it changes only at a compaction, so later rounds reuse it
    episodes: tuple[tuple[int, int, int], tuple[str, list[str]]] | None = None


@dataclass
class RoundView:
    size: int  # entries in the round when it was measured
    full: list[Any]
    full_tokens: int
    short: list[Any]
    short_tokens: int
    persisted: bool = False


@dataclass
class PriorCache:
    """Prior turns read once per turn (they do not change while the turn runs)."""

    start: int = -1
    stop: int = -1
    turns: list[history.Turn] = field(default_factory=list)
    items: list[list[Any]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    # where the window may start instead (a never-compacted window over a huge transcript was
    # read from its tail only), or None
    rebase: int | None = None


@dataclass
class Assembly:
    request: ProviderRequest
    manifest: dict[str, Any]
    raw_estimate: int  # uncalibrated tokens of the whole request (calibration divides by it)


def _prior(
    agent: Agent, start: int, stop: int | None, cache: PriorCache, max_scan: int
) -> PriorCache:
    """The turns from the window start to `stop` (None: the end). A window that was never
    compacted over a huge transcript (a home older than compaction) reads only its last
    `max_scan` bytes: the first compaction then starts the window there."""
    stop_key = -2 if stop is None else stop
    if cache.start == start and cache.stop == stop_key:
        return cache
    end = stop
    if end is None:
        end = jsonl.end_offset(agent.home.transcript)  # logical, across rotated segments
    scan_from = max(start, end - max_scan)
    turns = history.read_turns(agent.home.transcript, scan_from, stop)
    items = [history.items_from(t.entries) for t in turns]
    tokens = [sum(history.item_tokens(i) for i in its) for its in items]
    rebase = None
    if scan_from > start:
        rebase = turns[0].offset if turns else end
    return PriorCache(start, stop_key, turns, items, tokens, rebase)


def _drop_prior(cache: PriorCache, n: int) -> PriorCache:
    if n <= 0:
        return cache
    return PriorCache(
        cache.turns[n].offset if n < len(cache.turns) else cache.stop,
        cache.stop,
        cache.turns[n:],
        cache.items[n:],
        cache.tokens[n:],
    )


def _rebase(agent: Agent, offset: int) -> None:
    """Start a never-compacted window at the part of a huge transcript that was read (a home older
    than compaction): later turns then read only what follows, not the same tail again."""
    old = agent.state().context.window_start

    def apply(s: Any) -> None:
        s.context.window_start = max(s.context.window_start, offset)

    agent.update_state(apply)
    agent.event("context_window_rebased", window_start=offset, previous_window_start=old)


# -- the current turn ----------------------------------------------------------------------------


def _rounds(entries: list[dict[str, Any]]) -> tuple[list[dict], list[list[dict]]]:
    """(head entries, rounds): each round is its assistant_round entry then its tool_results."""
    head: list[dict] = []
    rounds: list[list[dict]] = []
    for e in entries:
        if e.get("kind") == "assistant_round":
            rounds.append([e])
        elif rounds:
            rounds[-1].append(e)
        else:
            head.append(e)
    return head, rounds


def _artifact_ref(agent: Agent, turn_id: str, data: dict[str, Any], persist: bool) -> str:
    result = (data.get("envelope") or {}).get("result")
    if isinstance(result, dict):
        paths = [a.get("path") for a in result.get("artifacts") or [] if isinstance(a, dict)]
        if any(paths):
            return ", ".join(p for p in paths if p)
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", f"{turn_id}-{data.get('key', data.get('call_id', ''))}")
    path = Path(agent.home.artifacts) / f"result-{safe}.log"
    if persist and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, str(data.get("rendered", "")).encode("utf-8"))
    return str(path)


def _short_round(agent: Agent, turn_id: str, rnd: list[dict], persist: bool) -> list[dict]:
    """A round shown by its summaries: shortened text and arguments, results as canonical summary
    plus a file with the full output."""
    out = []
    for e in rnd:
        data = dict(e.get("data", {}))
        if e.get("kind") == "assistant_round":
            data["text"] = shorten(data.get("text", ""), SHORT_TEXT) if data.get("text") else ""
            calls = []
            for c in data.get("tool_calls", []):
                c = dict(c)
                size = len(json.dumps(c.get("arguments"), ensure_ascii=False)) + len(
                    c.get("raw_arguments") or ""
                )
                if size > SHORT_ARGS:
                    shown = shorten(
                        c.get("raw_arguments")
                        or json.dumps(c.get("arguments"), ensure_ascii=False),
                        SHORT_TEXT,
                    )
                    if c.get("kind") == "custom" or c.get("arguments") is None:
                        c["raw_arguments"] = shown
                    else:
                        c["arguments"] = {"summarized_arguments": shown}
                calls.append(c)
            data["tool_calls"] = calls
        elif e.get("kind") == "tool_result" and len(str(data.get("rendered", ""))) > SHORT_RESULT:
            env = data.get("envelope") or {}
            summary = env.get("summary_text") or data.get("status", "")
            ref = _artifact_ref(agent, turn_id, data, persist)
            data["rendered"] = (
                f"[summarized to fit the context window] {data.get('tool_name')} "
                f"{data.get('status')}: {shorten(str(summary), SHORT_TEXT)}. Full output: {ref}"
            )
        out.append({**e, "data": data})
    return out


def _view(agent: Agent, turn: CurrentTurn, index: int, rnd: list[dict]) -> RoundView:
    view = turn.rounds.get(index)
    if view is None or view.size != len(rnd):
        full = history.items_from(rnd)
        short = history.items_from(_short_round(agent, turn.turn_id, rnd, False))
        view = RoundView(
            len(rnd),
            full,
            sum(history.item_tokens(i) for i in full),
            short,
            sum(history.item_tokens(i) for i in short),
        )
        turn.rounds[index] = view
    return view


def _current_items(
    agent: Agent, turn: CurrentTurn, budget_raw: int, persist: bool
) -> tuple[list[Any], fit.TurnCut, int]:
    head, rounds = _rounds(turn.entries)
    head_items = history.items_from(head)
    head_tokens = sum(history.item_tokens(i) for i in head_items)
    views = [_view(agent, turn, i, r) for i, r in enumerate(rounds)]
    note_tokens = window.estimate(NOTE) + history.ITEM_OVERHEAD + 2
    cut = fit.cut_turn(
        head_tokens,
        [v.full_tokens for v in views],
        [v.short_tokens for v in views],
        note_tokens,
        budget_raw,
    )
    if persist:
        last = turn.cut
        cut = fit.TurnCut(
            min(len(rounds), max(cut.summarized, last.summarized)), max(cut.elided, last.elided)
        )
        turn.cut = cut
    items = list(head_items)
    tokens = head_tokens
    if cut.elided:
        items.append(UserItem(text=NOTE.format(n=cut.elided)))
        tokens += note_tokens
    for i in range(cut.elided, len(rounds)):
        view = views[i]
        if i < cut.summarized:
            if persist and not view.persisted:
                _short_round(agent, turn.turn_id, rounds[i], True)  # writes the full-output file
                view.persisted = True
            items += view.short
            tokens += view.short_tokens
        else:
            items += view.full
            tokens += view.full_tokens
    return items, cut, tokens


# -- the episode block ---------------------------------------------------------------------------


def episode_block(agent: Agent, start: int, budget_raw: int) -> tuple[str, list[str]]:
    """Working memory as of the last compaction, then every turn folded out of the window, in
    roll-ups and episodes, newest finest, within `budget_raw` tokens (holon.context.earlier;
    shown oldest first). Returns (text, the ids of the episodes and roll-ups shown)."""
    state = agent.state()
    snapshot = state.context.snapshot
    parts = ["# Earlier context"]
    if snapshot:
        revision = state.context.snapshot_revision
        head = f"Working memory as of the last compaction (revision {revision}):"
        shown, used = [], window.estimate(head) + 4
        for line in snapshot:  # at most half the block: episodes need room too
            cost = window.estimate(line) + 1
            if used + cost > budget_raw // 2:
                shown.append(f"- … {len(snapshot) - len(shown)} more lines not shown")
                break
            shown.append(f"- {line}")
            used += cost
        parts.append(head + "\n" + "\n".join(shown))
    intro = "Episodes: turns that left the conversation window, summarized (oldest first)."
    used = window.estimate("\n\n".join(parts)) + window.estimate(f"{intro} {ROLLUP_NOTE}") + 2
    chosen = earlier.block_parts(agent.home, start, budget_raw - used)
    if not snapshot and not chosen:
        return "", []
    ids = [i for shown, _ in chosen for i in shown]
    if chosen:
        rolled = any(i.startswith("ru-") for i in ids)
        parts.append(intro + (f" {ROLLUP_NOTE}" if rolled else ""))
        parts += [text for _, text in chosen]
    return "\n\n".join(parts), ids


def _episodes(
    agent: Agent, current: CurrentTurn | None, start: int, budget_raw: int, epoch: int
) -> tuple[str, list[str]]:
    """The episode block (episode_block), made once per turn and compaction: later rounds of the
    turn reuse it."""
    key = (start, budget_raw, epoch)
    if current is not None and current.episodes is not None and current.episodes[0] == key:
        return current.episodes[1]
    made = episode_block(agent, start, budget_raw)
    if current is not None:
        current.episodes = (key, made)
    return made


# -- the whole request ---------------------------------------------------------------------------


@dataclass
class DropPlan:
    """What the budget leaves out of the prompt: the oldest `count` prior turns, folded into
    episodes, and where the window starts without them. `before` and `after` are the raw token
    estimates of the request with and without them."""

    count: int = 0
    new_start: int | None = None
    before: int = 0
    after: int = 0


def plan_drop(
    prior: PriorCache, fixed: int, ep_cap: int, current_full: int, raw_budget: int, stop: int | None
) -> DropPlan:
    """Pure: how many of the oldest prior turns to drop so that the rest fits `raw_budget` (all of
    them when the current turn alone does not fit beside the fixed part and the episode block)."""
    if current_full > raw_budget - fixed - ep_cap:
        drop = len(prior.turns)
    else:
        drop = fit.turns_to_drop(prior.tokens, fixed + ep_cap, current_full, raw_budget)
    if not drop:
        return DropPlan()
    if drop < len(prior.turns):
        new_start = prior.turns[drop].offset
    else:
        new_start = stop if stop is not None else prior.turns[-1].end
    before = fixed + sum(prior.tokens) + current_full
    after = fixed + sum(_drop_prior(prior, drop).tokens) + current_full
    return DropPlan(drop, new_start, before, after)


def _compact(
    agent: Agent,
    plan: DropPlan,
    dropped: list[history.Turn],
    budget: window.Budget,
    memory: dict[str, str],
    *,
    persist: bool,
    reason: str,
    turn_id: str | None,
) -> dict[str, Any]:
    """The write: fold the dropped turns into episodes, move the window and make `memory` the
    memory files of the prefix (holon.context.compaction). Without `persist` it is only
    described, for the manifest."""
    if not persist:
        return {"planned": True, "folded_turns": plan.count, "window_start": plan.new_start}
    return compaction.fold(
        agent,
        dropped,
        plan.new_start,
        reason=reason,
        turn_id=turn_id,
        before_tokens=budget.scaled(plan.before),
        after_tokens=budget.scaled(plan.after),
        memory=memory,
    )


def _current_full(agent: Agent, current: CurrentTurn | None) -> int:
    """The current turn's tokens when nothing of it is shortened."""
    if current is None:
        return 0
    head, rounds = _rounds(current.entries)
    full = sum(history.item_tokens(i) for i in history.items_from(head))
    return full + sum(_view(agent, current, i, r).full_tokens for i, r in enumerate(rounds))


def _manifest_blocks(
    budget: window.Budget,
    blocks: list[Any],
    defs: list[ToolDefinition],
    tools_json: str,
    episodes_: tuple[int, list[str]],
    prior: PriorCache,
    current: tuple[int, int, fit.TurnCut],
    start: int,
) -> list[dict[str, Any]]:
    """The manifest's account of each part of the request. `episodes_` is (tokens, ids);
    `current` is (tokens, items, cut) of the current turn."""
    ep_tokens, ep_ids = episodes_
    current_tokens, current_items, cut = current
    return [
        {
            "name": "policy",
            "kind": "system",
            "tokens": budget.scaled(window.estimate(assemble.POLICY)),
        },
        *[
            {
                "name": b.name,
                "kind": "system",
                "tokens": budget.scaled(window.estimate(b.text)),
                "cache_breakpoint": b.cache_breakpoint,
            }
            for b in blocks
        ],
        {
            "name": "tools",
            "kind": "tools",
            "count": len(defs),
            "tokens": budget.scaled(window.estimate(tools_json)),
        },
        {
            "name": "episodes",
            "kind": "context",
            "tokens": budget.scaled(ep_tokens),
            "episodes": ep_ids,
        },
        {
            "name": "conversation",
            "kind": "conversation",
            "tokens": budget.scaled(sum(prior.tokens)),
            "turns": len(prior.turns),
            "items": sum(len(i) for i in prior.items),
            "window_start": start,
        },
        {
            "name": "current_turn",
            "kind": "conversation",
            "tokens": budget.scaled(current_tokens),
            "items": current_items,
            "rounds_summarized": cut.summarized - cut.elided,
            "rounds_omitted": cut.elided,
        },
    ]


@dataclass
class Sizing:
    """The budget of one request and its fixed part (policy, system blocks, tool catalog)."""

    budget: window.Budget
    raw_budget: int  # the prompt budget in uncalibrated tokens
    tools_json: str
    blocks: list[Any]
    refused: list[Any]  # files left out of the prompt (holon.confined), for the manifest
    fixed: int
    ep_cap: int  # tokens for the episode block
    guidance: list[str]
    workspace_root: Path
    # the memory files as the stable prefix shows them (holon.context.memoryfiles); None: as
    # they are now, which a compaction makes the prefix's
    memory: list[tuple[str, str, str]] | None


def _fixed(agent: Agent, sz: Sizing, memory: list[tuple[str, str, str]] | None) -> Sizing:
    """`sz` with its system blocks and fixed part for the memory files `memory`."""
    refused: list[Any] = []
    blocks = assemble.system_blocks(
        agent.home,
        tool_guidance=sz.guidance,
        workspace_root=sz.workspace_root,
        refused=refused,
        memory=memory,
    )
    fixed = window.estimate(assemble.POLICY) + window.estimate(sz.tools_json)
    fixed += sum(window.estimate(b.text) + 2 for b in blocks)
    return replace(sz, blocks=blocks, refused=refused, fixed=fixed, memory=memory)


def _sizing(
    agent: Agent,
    ctx: Any,
    model_ref: str,
    max_output_tokens: int,
    defs: list[ToolDefinition],
    guidance: list[str],
    workspace_root: Path,
    calibration: dict[str, float] | None,
    tools_json: str | None,
) -> Sizing:
    budget = window.budget_for(
        model_ref,
        max_output_tokens,
        ratio=(calibration if calibration is not None else ctx.calibration).get(model_ref, 1.0),
        learned=ctx.learned_window.get(model_ref),
    )
    raw_budget = int(budget.prompt / budget.ratio)
    if tools_json is None:
        tools_json = json.dumps([d.model_dump() for d in defs], sort_keys=True)
    ep_cap = min(int(raw_budget * EPISODE_SHARE), EPISODE_MAX)
    sz = Sizing(budget, raw_budget, tools_json, [], [], 0, ep_cap, guidance, workspace_root, None)
    return _fixed(agent, sz, memoryfiles.prefix_files(agent.home, ctx))


@dataclass
class Fitted:
    """The prior turns that fit, and what it took: a compaction (carried out, or only planned
    without `persist`), and whether the window moved on disk (then the state is read again)."""

    prior: PriorCache
    start: int  # where the window starts
    sizing: Sizing
    compaction: dict[str, Any] | None = None
    moved: bool = False


def _fit_window(
    agent: Agent,
    sz: Sizing,
    current: CurrentTurn | None,
    cache: PriorCache | None,
    *,
    persist: bool,
    reason: str,
) -> Fitted:
    """Read the prior turns, plan what to drop (plan_drop) and, with `persist`, write it. A
    compaction makes the memory files as they are the prefix's (holon.context.memoryfiles): the
    drop is planned with them."""
    ctx = agent.state().context
    stop = current.offset if current is not None else None
    max_scan = max(MIN_SCAN_BYTES, sz.raw_budget * 16)
    prior = _prior(agent, ctx.window_start, stop, cache or PriorCache(), max_scan)
    moved = False
    if prior.rebase is not None and persist:
        _rebase(agent, prior.rebase)
        prior.start, prior.rebase = prior.rebase, None
        ctx, moved = agent.state().context, True
    current_full = _current_full(agent, current)
    plan = plan_drop(prior, sz.fixed, sz.ep_cap, current_full, sz.raw_budget, stop)
    if not plan.count:
        return Fitted(prior, ctx.window_start, sz, None, moved)
    live = workingmemory.memory_files(agent.home)
    if sz.memory != live:
        sz = _fixed(agent, sz, live)
        again = plan_drop(prior, sz.fixed, sz.ep_cap, current_full, sz.raw_budget, stop)
        plan = again if again.count else plan  # shorter files: the first plan drops enough
    dropped = prior.turns[: plan.count]
    prior = _drop_prior(prior, plan.count)
    turn_id = current.turn_id if current else None
    memory = {name: text for name, _, text in live}
    info = _compact(
        agent, plan, dropped, sz.budget, memory, persist=persist, reason=reason, turn_id=turn_id
    )
    if not persist:
        return Fitted(prior, plan.new_start, sz, info, moved)  # type: ignore[arg-type]
    return Fitted(prior, agent.state().context.window_start, sz, info, True)


def _manifest(
    model_ref: str,
    sz: Sizing,
    raw: int,
    blocks: list[dict[str, Any]],
    ep_ids: list[str],
    items: list[Any],
    frame: Any,
    state: Any,
    compaction_info: dict[str, Any] | None,
) -> dict[str, Any]:
    budget = sz.budget
    return {
        "model_ref": model_ref,
        "context_window": budget.window,
        "output_reserve": budget.reserve,
        "prompt_budget": budget.prompt,
        "calibration_ratio": budget.ratio,
        "estimated_tokens": budget.scaled(raw),
        "blocks": blocks,
        "episodes": ep_ids,
        "conversation_items": len(items),
        "prompt_cache_key": frame.cache.prompt_cache_key if frame.cache else None,
        "context_fingerprint": frame.cache.context_fingerprint if frame.cache else None,
        "compression_epoch": state.context.compression_epoch,
        "working_memory_revision": state.working_memory.revision,
        "compaction": compaction_info,
        "refused_files": [r.to_dict() for r in sz.refused],
    }


def assemble_request(
    agent: Agent,
    model_ref: str,
    *,
    defs: list[ToolDefinition],
    guidance: list[str],
    workspace_root: Path,
    max_output_tokens: int,
    current: CurrentTurn | None = None,
    persist: bool = True,
    cache: PriorCache | None = None,
    reason: str = "budget",
    calibration: dict[str, float] | None = None,
    tools_json: str | None = None,
) -> tuple[Assembly, PriorCache]:
    """Assemble the request for the next round. With `persist`, a compaction it needs is carried
    out (episodes written, the window moved); without, it is only described in the manifest.
    `tools_json` is the canonical JSON of `defs` when the caller has it cached (it is sized and
    hashed into the cache key every round)."""
    state = agent.state()
    sz = _sizing(
        agent, state.context, model_ref, max_output_tokens, defs, guidance, workspace_root,
        calibration, tools_json,
    )  # fmt: skip
    fitted = _fit_window(agent, sz, current, cache, persist=persist, reason=reason)
    prior, sz = fitted.prior, fitted.sizing
    if fitted.moved:
        state = agent.state()
    epoch = state.context.compression_epoch
    ep_text, ep_ids = _episodes(agent, current, fitted.start, sz.ep_cap, epoch)
    ep_tokens = window.estimate(ep_text) if ep_text else 0
    prior_tokens = sum(prior.tokens)
    room = sz.raw_budget - sz.fixed - ep_tokens - prior_tokens
    cur_items, cut, current_tokens = (
        _current_items(agent, current, room, persist)
        if current is not None
        else ([], fit.TurnCut(0, 0), 0)
    )
    items: list[Any] = [i for its in prior.items for i in its] + cur_items
    frame = assemble.build_frame(
        agent.home, tool_guidance=guidance, workspace_root=workspace_root,
        tools_digest=sz.tools_json, episode_block=ep_text,
        working_memory_revision=state.working_memory.revision,
        compression_epoch=state.context.compression_epoch, blocks=sz.blocks,
    )  # fmt: skip
    request = ProviderRequest(
        model_ref=model_ref,
        frame=frame,
        conversation=items,
        tools=defs,
        max_output_tokens=min(max_output_tokens, sz.budget.reserve),
    )
    raw = sz.fixed + ep_tokens + prior_tokens + current_tokens
    current_part = (current_tokens, len(cur_items), cut)
    blocks = _manifest_blocks(
        sz.budget, sz.blocks, defs, sz.tools_json, (ep_tokens, ep_ids), prior, current_part,
        fitted.start,
    )  # fmt: skip
    manifest = _manifest(model_ref, sz, raw, blocks, ep_ids, items, frame, state, fitted.compaction)
    return Assembly(request, manifest, raw), prior
