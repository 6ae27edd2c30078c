"""`holon doctor`: what would go wrong in an unattended tick, for this HOLON_HOME and each agent,
each finding with its fix. Reads only; writes nothing.

A finding is {"check", "status" (ok | warn | error), "message", "fix"} plus details; the report
is {"holon_home", "status" (the worst finding), "findings", "agents": [{agent_id, home, model,
credentials, last_tick_at, last_failure, dead_letters, stuck_tasks, pending, findings}]}, sorted
by agent id. Agent and provider modules (pydantic) are imported only when an agent is checked, so
`holon agents`, which lists through this module, stays light.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon import clock, config, jsonfile, keys
from holon.agent.due import due_reasons
from holon.errors import HolonError, UsageError
from holon.home import registry
from holon.home.layout import Home, describe
from holon.ops import attention, schedule_found
from holon.paths import config_path, holon_home
from holon.procs import alive
from holon.store import jsonl
from holon.tasks import store as task_store

if TYPE_CHECKING:
    from holon.agent.handle import Agent

STALLED_AFTER_S = 600  # work waiting this long with no tick: the scheduler is not running it
RANK = {"ok": 0, "warn": 1, "error": 2}


def finding(
    check: str, status: str, message: str, fix: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {"check": check, "status": status, "message": message, "fix": fix, **extra}


def worst(findings: Sequence[dict[str, Any]]) -> str:
    return max((f["status"] for f in findings), key=RANK.__getitem__, default="ok")


# -- reading a home without trusting it ------------------------------------------------------
def why(exc: BaseException) -> str:
    """One line saying why a file could not be used (never its content)."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError | OSError):
        return describe(exc)  # worded as the home itself words them
    if isinstance(exc, HolonError):
        return exc.message
    errors = getattr(exc, "errors", None)  # pydantic's ValidationError
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        return f"does not match its schema ({where}: {first.get('msg')})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def problem(path: Path, reason: str) -> dict[str, str]:
    return {"status": "broken", "problem": f"{path.name} {reason}", "file": str(path)}


def read_home(home: Home) -> tuple[dict[str, Any], dict[str, Any], dict[str, str] | None]:
    """(identity, raw state, problem): agent.json and state.json as plain dicts, or the file at
    fault and why (a missing state.json is a new home, not a problem)."""
    found = []
    for path in (home.agent_json, home.state_json):
        try:
            data = jsonfile.object_of(path) or {}
        except (HolonError, OSError, ValueError) as exc:
            return {}, {}, problem(path, why(exc))
        found.append(data)
    return found[0], found[1], None


def valid_home(home: Home) -> dict[str, str] | None:
    """The problem of a home whose agent.json or state.json does not parse, or whose state is not
    a valid AgentState; None when both can be used. Checked before an Agent is made of the home,
    which would set an unreadable state aside and rebuild it (and so hide what went wrong)."""
    from holon.model.records import AgentState

    _ident, raw, bad = read_home(home)
    if bad is None and raw:
        try:
            AgentState.model_validate(raw)
        except ValueError as exc:  # pydantic's ValidationError
            bad = problem(home.state_json, why(exc))
    return bad


def problem_of(exc: BaseException, home: Home) -> dict[str, str]:
    """The problem a HolonError (`corrupt_state` names its file first) or another error reading
    the home describes; the error's hint becomes the fix."""
    if not isinstance(exc, HolonError):
        return problem(home.state_json, why(exc))
    path, _, rest = exc.message.partition(" ")
    if rest and os.path.isabs(path) and os.path.exists(path):
        found = problem(Path(path), rest)
    else:
        found = {"status": "broken", "problem": exc.message, "file": str(home.state_json)}
    return {**found, "fix": exc.hint} if exc.hint else found


# identity fields `holon agents --all` shows, with the value an agent.json without one means
IDENTITY_FIELDS = {
    "visibility": "public",
    "kind": "named",
    "ownership": "self_owned",
    "lineage_parent_agent_id": None,
}


def list_agents(include_private: bool = False) -> list[dict[str, Any]]:
    """`holon agents`: every public agent with its status and queue depth; a home that is gone or
    unreadable is listed as `missing` or `broken` with the problem and the file at fault. Parses
    agent.json and state.json as plain JSON (no pydantic). `include_private` (`--all`) lists
    private agents too, and gives every row its identity (IDENTITY_FIELDS; None when unreadable)."""
    homes, broken = registry.scan()
    rows = []
    for b in broken:
        usable = b["agent_id"] and os.path.isdir(b["home"])
        depth = Home(b["home"]).queue.depth() if usable else None
        row = {"agent_id": b["agent_id"], "status": b["status"], "queue_depth": depth}
        row.update(home=b["home"], problem=b["problem"], file=b["file"])
        rows.append(row | (dict.fromkeys(IDENTITY_FIELDS) if include_private else {}))
    for home in homes:
        ident, state, bad = read_home(home)
        row = {"agent_id": home.agent_id, "status": state.get("status", "unknown")}
        row.update(queue_depth=home.queue.depth(), home=str(home.root))
        if bad:
            row.update(bad)
        elif ident.get("visibility") == "private" and not include_private:
            continue
        if include_private:
            row.update({k: None if bad else ident.get(k, v) for k, v in IDENTITY_FIELDS.items()})
        rows.append(row)
    return sorted(rows, key=lambda r: (r["agent_id"] or "", r["home"]))


def agent_id_of(home: Home) -> str:
    try:
        return home.agent_id
    except (HolonError, OSError, ValueError):  # a path argument whose agent.json is corrupt
        return home.root.name


# -- HOLON_HOME, config, scheduler ----------------------------------------------------------
def home_finding(root: Path) -> dict[str, Any]:
    where = "set in the environment" if os.environ.get("HOLON_HOME") else "the default"
    if root.is_dir():
        return finding("holon_home", "ok", f"{root} ({where}) exists")
    return finding(
        "holon_home",
        "warn",
        f"{root} ({where}) does not exist: no agents, config or keys here; is HOLON_HOME set to "
        "where your agents live?",
        "holon init --agent-id ID",
    )


def config_finding() -> dict[str, Any]:
    path = config_path()
    try:
        model = config.get("model")
    except UsageError as exc:
        return finding("config", "error", exc.message, exc.hint, kind=exc.kind)
    said = f"{path} parses" if path.exists() else f"no {path}: built-in defaults"
    said += f"; default model {model}" if model else "; no default model"
    env = os.environ.get("HOLON_MODEL")
    if env:
        said += f" (HOLON_MODEL={env} in this environment overrides it)"
    return finding("config", "ok", said, default_model=config.default_model())


def scheduler_findings() -> list[dict[str, Any]]:
    """Is an entry installed that ticks this HOLON_HOME, with a command that exists? (A crontab
    line is never quoted: it may carry a key inline.)"""
    entries = schedule_found.installed_entries()
    out = []
    for e in entries:
        where = "crontab" if e["scheduler"] == "cron" else e["where"]
        extra = {k: e[k] for k in ("scheduler", "holon_home", "command", "logs")}
        if not e["command_exists"]:
            msg = f"{e['scheduler']} entry in {where} runs {e['command']}, which does not exist"
            fix = f"{_for_home(e)}holon schedule {e['scheduler']} --install"
            out.append(finding("scheduler", "error", msg, fix, **extra))
        elif e["matches"]:
            msg = f"{e['scheduler']} entry in {where} ticks this HOLON_HOME with {e['command']}"
            msg += f"; logs: {e['logs']}" if e["logs"] else ""
            out.append(finding("scheduler", "ok", msg, **extra))
    if any(e["matches"] for e in entries):
        return out
    if entries:
        others = sorted({e["holon_home"] or "the default HOLON_HOME" for e in entries})
        msg = f"no scheduler entry ticks this HOLON_HOME; entries tick only {', '.join(others)}"
    else:
        msg = "no scheduler entry runs `holon tick --all`; agents run only when ticked by hand"
    return [*out, finding("scheduler", "warn", msg, "holon schedule cron --install")]


def _for_home(entry: dict[str, Any]) -> str:
    """The prefix that makes a `holon schedule` command act for the entry's HOLON_HOME."""
    if entry["matches"]:
        return ""
    home = entry["holon_home"]
    return f"HOLON_HOME={shlex.quote(home)} " if home else "env -u HOLON_HOME "


# -- one agent -------------------------------------------------------------------------------
def last_failure(home: Home) -> dict[str, Any] | None:
    """The newest failure brief among the last 200: its time, first line, and whether a result
    came after it (then the agent has recovered)."""
    briefs = [b for b in jsonl.tail(home.briefs, 200) if isinstance(b, dict)]
    for i in range(len(briefs) - 1, -1, -1):
        if briefs[i].get("kind") == "failure":
            lines = str(briefs[i].get("text") or "").strip().splitlines() or [""]
            return {
                "at": briefs[i].get("created_at"),
                "text": lines[0][:200],
                "message_id": briefs[i].get("related_message_id"),
                "recovered": any(b.get("kind") == "result" for b in briefs[i + 1 :]),
            }
    return None


def stuck_tasks(home: Home) -> list[dict[str, Any]]:
    """Tasks still marked running (tasks/active/ID) whose supervisor process is gone."""
    out = []
    for task_id in task_store.active_ids(home):
        pid = task_store.read_marker(home, task_id)
        if alive(pid):
            continue
        try:
            rec = task_store.load(home, task_id)
        except (OSError, ValueError):
            rec = None
        status = rec.get("status") if isinstance(rec, dict) else None
        out.append({"task_id": task_id, "status": status, "supervisor_pid": pid})
    return out


def pending(home: Home) -> dict[str, Any]:
    """Due work: queued messages (their admission time is in the file name), due timers, wake
    hints, tasks to recover."""
    names = home.queue.pending() + home.queue.in_progress()
    times = []
    for name in names:
        try:
            times.append(int(name.split("-")[1]) / 1e9)
        except (IndexError, ValueError):
            continue
    reasons = due_reasons(home)
    since = min(times, default=None)
    if "timer_due" in reasons:
        try:
            due_at = float((jsonfile.read_bytes(home.next_due, 64) or b"").strip())
            since = due_at if since is None else min(since, due_at)
        except (OSError, ValueError):
            pass
    return {
        "messages": len(names),
        "due": reasons,
        "waiting_since": clock.iso(since) if since is not None else None,
    }


def _ago(iso_time: str | None) -> float | None:
    try:
        return clock.now_ts() - clock.parse_iso(iso_time).timestamp() if iso_time else None
    except ValueError:
        return None


def pending_finding(aid: str, doc: dict[str, Any]) -> dict[str, Any] | None:
    due = doc["pending"]
    if not due["due"]:
        return None
    waited, since_tick = _ago(due["waiting_since"]), _ago(doc["last_tick_at"])
    stalled = waited is not None and waited > STALLED_AFTER_S
    if stalled and (since_tick is None or since_tick > STALLED_AFTER_S):
        tick = doc["last_tick_at"]
        last = f"no tick since {tick}" if tick else "no tick has ever run"
        return finding(
            "pending",
            "warn",
            f"due work ({', '.join(due['due'])}) waiting since {due['waiting_since']}, and "
            f"{last}: is the scheduler running?",
            f"holon tick {aid} --until-idle",
        )
    return finding("pending", "ok", f"due work ({', '.join(due['due'])}); the next tick runs it")


def model_findings(agent: Agent, fresh: bool) -> tuple[str | None, Any, list[dict[str, Any]]]:
    """(model ref, credential status, findings): which model the next tick uses, and whether it
    can run there (provider known, key present, script found)."""
    from holon.agent import budget
    from holon.providers import resolve

    aid = agent.id
    try:
        ref, source = budget.effective_model(agent)
    except UsageError as exc:  # config.toml does not parse: only an override is known
        ref, source = agent.state().model_override, "agent_override"
        if not ref:
            msg = f"no override, and the default model is unknown: {exc.message}"
            return None, None, [finding("model", "warn", msg, exc.hint, kind=exc.kind)]
    if not ref:
        if fresh:
            note = f"no model yet; set one before the first prompt (holon model set {aid} REF)"
            return None, None, [finding("model", "ok", note)]
        note = "no model: HOLON_MODEL, `model` in config.toml and an override are all unset"
        return None, None, [finding("model", "warn", note, f"holon model set {aid} PROVIDER/MODEL")]
    origin = "set for this agent" if source == "agent_override" else _default_origin()
    try:
        creds = resolve.credential_status(ref)
    except HolonError:
        creds = None
    try:
        resolve.preflight(ref, home=agent.home.root)
    except HolonError as exc:
        msg = f"{ref} ({origin}) cannot run: {exc.message}"
        return ref, creds, [finding("model", "error", msg, exc.hint, kind=exc.kind)]
    out = [finding("model", "ok", f"{ref} ({origin})")]
    if origin.startswith("HOLON_MODEL"):
        out[0].update(status="warn", fix=f"holon model set {aid} {ref}")
        out[0]["message"] += "; a tick started by cron, launchd or systemd does not see it"
    return ref, creds, out + credential_findings(creds)


def _default_origin() -> str:
    env = os.environ.get("HOLON_MODEL")
    try:
        configured = config.get("model")
    except UsageError:
        configured = None
    if env and env != configured:
        return "HOLON_MODEL in this environment only"
    return "the default in config.toml"


def credential_findings(creds: dict[str, Any] | None) -> list[dict[str, Any]]:
    name = (creds or {}).get("api_key_env")
    if not name or not creds or not creds.get("present"):
        return []
    if creds.get("source") != "environment":
        return [finding("credentials", "ok", f"{name} from {creds.get('source')}")]
    try:
        stored = name in keys.names()
    except UsageError:
        stored = False
    if stored:
        return [finding("credentials", "ok", f"{name} from the environment (and the keys file)")]
    return [
        finding(
            "credentials",
            "warn",
            f"{name} is set only in this environment; a tick started by cron, launchd or "
            "systemd does not have it",
            f'printf %s "${name}" | holon keys set {name} -',
        )
    ]


def agent_report(home: Home) -> dict[str, Any]:
    from holon.agent.handle import Agent

    aid = agent_id_of(home)
    dead = home.queue.dead_letters()
    doc = _doc(aid, str(home.root))
    doc.update(last_failure=last_failure(home), dead_letters=len(dead))
    doc.update(stuck_tasks=stuck_tasks(home), pending=pending(home))
    agent, state, bad = None, None, valid_home(home)
    if bad is None:
        try:
            agent = Agent(Home(home.root, aid))  # with its id: a path argument reads none again
            state = agent.state()
        except (HolonError, ValueError, OSError) as exc:
            bad = problem_of(exc, home)
    out = doc["findings"]
    if agent is None or state is None:
        msg = f"{bad['problem']}: {bad['file']}"
        out.append(finding("home", "error", msg, bad.get("fix"), file=bad["file"]))
    else:
        doc["last_tick_at"] = state.last_tick_at
        fresh = _fresh(home, doc)
        doc["model"], doc["credentials"], found = model_findings(agent, fresh)
        out += found + _state_findings(aid, state, doc, fresh) + budget_findings(agent, doc)
        out += sandbox_finding(aid, home) + ledger_findings(aid, home)
        out += prompt_file_findings(agent) + worktree_findings(aid, agent)
        out += attention.agent_findings(aid, home, state, finding)
        out += mcp_findings(agent)
    if dead:
        out.append(
            finding(
                "dead_letters",
                "warn",
                f"{len(dead)} dead-lettered message(s) in {home.queue.dead}",
                f"ls {home.queue.dead}  # inspect, then mv a file to {home.queue.new} to retry",
                count=len(dead),
            )
        )
    out += event_seq_findings(aid, home)
    if doc["stuck_tasks"]:
        ids = ", ".join(t["task_id"] for t in doc["stuck_tasks"])
        msg = f"task(s) marked running whose supervisor is gone: {ids}"
        out.append(finding("stuck_tasks", "warn", msg, f"holon tick {aid}"))
    return doc


def event_seq_findings(aid: str, home: Home) -> list[dict[str, Any]]:
    """Recent events whose event_seq is not a non-negative integer (written by hand or another
    tool): kept and read, numbering goes on after the highest good one; worth a look."""
    from holon.agent.handle import event_seq

    recent = [r for r in jsonl.tail(home.events, 200) if isinstance(r, dict)]
    odd = sum(1 for r in recent if event_seq(r) is None)
    if not odd:
        return []
    msg = (
        f"{odd} of the last {len(recent)} event(s) in {home.events} have an event_seq that is "
        "not a non-negative integer; they are kept, and new events continue after the highest "
        "good one"
    )
    return [finding("events", "warn", msg, f"holon events {aid} --jsonl  # inspect", count=odd)]


def budget_findings(agent: Agent, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A spent daily budget holding queued messages: they wait, unconsumed, until it renews or
    is raised."""
    from holon.agent import budget

    try:
        hold = budget.daily_hold(agent)
    except HolonError as exc:
        return [finding("budget", "error", exc.message, exc.hint, kind=exc.kind)]
    waiting = doc["pending"]["messages"]
    if hold is None or not waiting:
        return []
    doc["held_by_budget"] = hold
    msg = f"{waiting} queued message(s) held: {hold['message']}"
    fix = f"holon model budget {hold['agent_id']} --daily-tokens N  # N above {hold['used']}"
    return [finding("budget", "warn", msg, fix, held=hold)]


def ledger_findings(aid: str, home: Home) -> list[dict[str, Any]]:
    """Ledgers a git merge left broken (holon.agent.ledgermerge): conflict marker lines, or
    events numbered out of order. Reads every ledger whole."""
    from holon.agent import ledgermerge

    found = ledgermerge.problems(home, full=True)
    if not found:
        return []
    said = "; ".join(
        f"{name}: {p['bad']} conflict marker line(s), {p['unordered']} event(s) out of order"
        for name, p in sorted(found.items())
    )
    msg = f"ledgers need settling after a merge: {said}"
    return [finding("ledgers", "error", msg, f"holon doctor --repair {aid}", ledgers=found)]


def mcp_findings(agent: Agent) -> list[dict[str, Any]]:
    """Each MCP server the agent uses, started and listed (holon.ops.mcp); none configured: none."""
    from holon.mcp import config as mcp_config

    try:
        if not mcp_config.configured():
            return []
        mcp_config.servers()  # a bad table is named here; the turns go on without it
        from holon.ops import mcp

        return mcp.doctor_findings(agent, finding)
    except HolonError as exc:  # an invalid config.toml: the config finding says it once
        if exc.kind == "invalid_config" and "[mcp_servers." not in exc.message:
            return []
        return [finding("mcp", "error", exc.message, exc.hint, kind=exc.kind)]


def sandbox_finding(aid: str, home: Home) -> list[dict[str, Any]]:
    """Whether this system enforces the agent's sandbox: if not, its commands are refused."""
    from holon.sandbox import confine

    sb = confine.summary(home)
    if "error" in sb:
        err = sb["error"]
        if err["kind"] == "invalid_config":
            return []  # config.toml itself: the config finding says it once
        return [finding("sandbox", "error", err["message"], err["hint"], kind=err["kind"])]
    said = f"{sb['mode']}, network {sb['network']}"
    if not sb["enforced"]:
        msg = f"{said}: this system cannot enforce it, so every command is refused"
        fix = f"holon sandbox show {aid}  # then enable Landlock, or choose full-access"
        return [finding("sandbox", "error", msg, fix, mode=sb["mode"])]
    how = "not confined" if sb["enforcement"] == "none" else f"enforced by {sb['enforcement']}"
    return [finding("sandbox", "ok", f"{said} ({how})", mode=sb["mode"])]


def prompt_file_findings(agent: Agent) -> list[dict[str, Any]]:
    """A warning for each file the prompt leaves out (holon.confined): an instruction or memory
    file, a skill, an open work item's plan that is a symlink out of its root, not a regular
    file, or too large."""
    from holon.agent import workitems, workspaces
    from holon.prompt import assemble

    try:
        anchor: Path | None = Path(workspaces.binding(agent)["workspace_anchor"])
    except (HolonError, ValueError, OSError):
        anchor = None  # the workspace finding is not this one's to make
    found = [r.to_dict() for r in assemble.refused_files(agent.home, anchor)]
    for rec in workitems.load_all(agent.home).values():
        art = workitems.plan_artifact(agent.home, rec["id"]) if rec.get("state") == "open" else None
        if art and "refused" in art:
            found.append(art["refused"])
    fix = "replace it with a regular file (a symlink may point only within its directory)"
    return [
        finding(
            "prompt_file",
            "warn",
            f"{r['path']} is left out of the prompt: it {r['detail']} ({r['reason']})",
            fix,
            file=r["path"],
            reason=r["reason"],
        )
        for r in found
    ]


def worktree_findings(aid: str, agent: Agent) -> list[dict[str, Any]]:
    """A warning when the active managed worktree is a copy whose git record names another
    directory (a copied HOLON_HOME): both share one branch, HEAD and index. holon repairs
    nothing: `git worktree repair` there would take the record from the original."""
    from holon.agent import workspaces, worktree

    try:
        bound = workspaces.binding(agent)
    except (HolonError, ValueError, OSError):
        return []  # the workspace finding is not this one's to make
    tree = bound.get("worktree") or {}
    other = worktree.linked_elsewhere(Path(tree["path"])) if tree.get("path") else None
    if other is None:
        return []
    msg = (
        f"worktree {tree['path']} shares git's record (branch, HEAD, index) with {other}: "
        "a copy of HOLON_HOME"
    )
    fix = (
        f"if {other} is gone (a move): git -C {tree['path']} worktree repair; if both go on: "
        f"holon workspace use {aid} --id agent_home; holon workspace detach {aid} "
        f"{bound['workspace_id']}; bind the repository again with --isolated"
    )
    return [finding("worktree", "warn", msg, fix, path=tree["path"], shared_with=str(other))]


def _fresh(home: Home, doc: dict[str, Any]) -> bool:
    """Never prompted, nothing queued: a new agent, not one in trouble."""
    admitted = jsonl.end_offset(home.messages)  # rotated segments count
    return not admitted and not doc["pending"]["messages"] and not doc["dead_letters"]


def _state_findings(aid: str, state: Any, doc: dict[str, Any], fresh: bool) -> list[dict]:
    out = []
    if state.last_tick_at:
        out.append(finding("last_tick", "ok", f"last tick at {state.last_tick_at}"))
    elif fresh:
        out.append(finding("last_tick", "ok", "never ticked: nothing to do yet"))
    else:
        out.append(finding("last_tick", "warn", "never ticked", f"holon tick {aid}"))
    failure = doc["last_failure"]
    if failure and not failure["recovered"]:
        msg = f"last failure at {failure['at']}, and no result since: {failure['text']}"
        out.append(finding("last_failure", "warn", msg, f"holon briefs {aid} --tail 5"))
    due = pending_finding(aid, doc)
    if due:
        out.append(due)
    if state.status == "awake_running" and not alive(state.run_owner_pid):
        msg = f"marked awake_running by pid {state.run_owner_pid}, which is gone"
        out.append(finding("stale_lock", "warn", msg, f"holon tick {aid}"))
    return out


def broken_report(entry: dict[str, Any], registered: dict[str, str]) -> dict[str, Any]:
    """A registered home that is gone, or a directory that is no longer a home."""
    aid, home = entry["agent_id"], entry["home"]
    if aid in registered:
        fix = f"holon agents forget {aid}"
        msg = f"{entry['problem']}: {entry['file']}"
    else:
        fix = None
        msg = f"{entry['problem']}: {entry['file']}; move or delete {home} if it is not an agent"
    doc = _doc(aid, home)
    doc["findings"].append(
        finding("home", "error", msg, fix, file=entry["file"], home_status=entry["status"])
    )
    return doc


def _doc(aid: str, home: str) -> dict[str, Any]:
    """An agent's part of the report, before any check ran."""
    doc: dict[str, Any] = {"agent_id": aid, "home": home, "model": None, "credentials": None}
    doc.update(last_tick_at=None, last_failure=None, dead_letters=0, stuck_tasks=[])
    doc.update(pending=None, findings=[])
    return doc


def select(args: Sequence[str]) -> tuple[list[Home], list[dict[str, Any]]]:
    """The homes to check: every one, or those named (an id, a name, or a path to a home)."""
    homes, broken = registry.scan()
    if not args:
        return homes, broken
    by_id = {h.agent_id: h for h in homes}
    broken_by_id = {b["agent_id"]: b for b in broken if b["agent_id"]}
    chosen: dict[str, Home] = {}
    chosen_broken: dict[str, dict[str, Any]] = {}
    for arg in args:
        if arg in broken_by_id and arg not in by_id:
            chosen_broken[arg] = broken_by_id[arg]
            continue
        home = by_id.get(arg) or registry.resolve(arg)
        chosen[str(home.root)] = home
    return list(chosen.values()), list(chosen_broken.values())


def gitignore_finding(root: Path) -> list[dict[str, Any]]:
    """A HOLON_HOME without its top-level .gitignore offers keys.json, logs, locks and the due
    index to a `git add -A` of it (nothing to say for a HOLON_HOME that does not exist yet)."""
    if not root.is_dir() or (root / ".gitignore").exists():
        return []
    msg = (
        f"{root} has no .gitignore: kept in git, it would offer keys.json, logs, locks and the "
        "due index to a commit"
    )
    return [finding("gitignore", "warn", msg, "holon doctor --fix")]


def run(agents: Sequence[str] = ()) -> dict[str, Any]:
    """The whole report; AGENT arguments narrow the agents checked (unknown ones raise)."""
    root = holon_home()
    findings = [home_finding(root), config_finding(), *scheduler_findings()]
    findings += gitignore_finding(root)
    if findings[1]["status"] == "ok":  # a config.toml that does not parse is said once
        findings += attention.notify_finding(finding)
    try:
        registered = registry.load()
    except UsageError as exc:  # scan() lists the homes under agents/ all the same
        registered = {}
        findings.append(finding("registry", "error", exc.message, exc.hint, kind=exc.kind))
    homes, broken = select(agents)
    reports = [broken_report(b, registered) for b in broken if b["agent_id"] is not None]
    reports += [agent_report(h) for h in homes]
    reports.sort(key=lambda r: (r["agent_id"], r["home"]))
    every = findings + [f for r in reports for f in r["findings"]]
    return {
        "holon_home": str(root),
        "status": worst(every),
        "findings": findings,
        "agents": reports,
    }
