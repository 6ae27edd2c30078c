"""The agent home layout (see man/holon-home.5): every path of a home, decided once."""

from __future__ import annotations

import json
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any

from holon import jsonfile
from holon.errors import InvalidInput, OperationFailed
from holon.ids import ID_RULE, quote
from holon.store.atomic import DIR_MODE, make_private_dir, tighten
from holon.store.queue import Queue

HOME_FORMAT = 2

# `.holon/.gitignore`: holon owns the lines between these markers and leaves every other line alone
GITIGNORE_BEGIN = "# >>> holon: runtime files, never in git (holon rewrites this block) >>>"
GITIGNORE_END = "# <<< holon <<<"
GITIGNORE = f"""\
{GITIGNORE_BEGIN}
# run state (pids, run ids, timestamps): rebuilt from settings.json and the ledgers when missing
/state.json
/state.json.*
/next_due
/wake_hint*.json
/scripted_cursor.json
/responses_continuation.json
/notify.json
/tasks.checked
# the queue, live task channels and timers: a clone or a restored commit must not run them again
/queue/
/tasks/
/timers/
# locks, derived indexes, full tool outputs (referenced by absolute path), trigger secrets, logs
/locks/
/indexes/
/artifacts/
/triggers/
/admission.key
/admission.legacy.json
/logs/
/scratch/
/patches/
/children/
*.tmp.*
{GITIGNORE_END}
"""
# `.holon/.gitattributes`: the ledgers are append-only JSONL, so a union merge keeps both sides'
# records without conflict markers (holon.agent.ledgermerge settles the numbering after it)
GITATTRIBUTES_BEGIN = "# >>> holon: git merges of the ledgers (holon rewrites this block) >>>"
GITATTRIBUTES = f"""\
{GITATTRIBUTES_BEGIN}
/ledger/*.jsonl merge=union
{GITIGNORE_END}
"""
# the whole `.holon/.gitignore` of home format 1, replaced by the block above on upgrade
LEGACY_GITIGNORE_LINES = frozenset(
    (
        "# runtime-local files that never belong in git",
        "locks/",
        "queue/tmp/",
        "indexes/",
        "tasks/*/stdin",
        "tasks/*/stdin.fifo",
        "tasks/*/control.sock",
        "*.tmp.*",
    )
)


DOT = ".holon"  # the runtime's own directory inside a home; spelled nowhere else
# paths relative to DOT that the idle check reads as plain strings (see Home.idle_files)
NEXT_DUE, WAKE_HINT, TASKS_ACTIVE = "next_due", "wake_hint.json", os.path.join("tasks", "active")
QUEUE_NEW, QUEUE_CUR = os.path.join("queue", "new"), os.path.join("queue", "cur")
# directories git does not keep (ignored or empty): Home.ensure_runtime makes them, parents first
RUNTIME_DIRS = (
    "ledger",
    "queue",
    *(os.path.join("queue", d) for d in ("tmp", "new", "cur", "dead")),
    "locks",
    "tasks",
    "timers",
    "artifacts",
    "indexes",
)
USER_DIRS = ("memory", "notes", "work", "skills")


def merged_gitignore(existing: str | None) -> str:
    """`existing` (a `.holon/.gitignore`, or None) with holon's block current: the block first, then
    every line the user wrote, in order. A home format 1 file (no block) loses its holon lines."""
    return _merged_block(existing, GITIGNORE, GITIGNORE_BEGIN, LEGACY_GITIGNORE_LINES)


def merged_gitattributes(existing: str | None) -> str:
    """`existing` (a `.holon/.gitattributes`, or None) with holon's block current, as above."""
    return _merged_block(existing, GITATTRIBUTES, GITATTRIBUTES_BEGIN, frozenset())


def _merged_block(existing: str | None, block: str, begin: str, legacy: frozenset[str]) -> str:
    lines = (existing or "").splitlines()
    if begin in lines and GITIGNORE_END in lines[lines.index(begin) :]:
        start = lines.index(begin)
        end = lines.index(GITIGNORE_END, start)
        user = lines[:start] + lines[end + 1 :]
    else:
        user = [line for line in lines if line.strip() not in legacy]
    while user and not user[0].strip():
        user.pop(0)
    while user and not user[-1].strip():
        user.pop()
    return block + ("\n" + "\n".join(user) + "\n" if user else "")


def is_home(path: str | os.PathLike) -> bool:
    """Does `path` hold an agent home? (stdlib only: used on the idle path)."""
    return os.path.isfile(os.path.join(path, DOT, "agent.json"))


class Home:
    """Paths of one agent home. Creates nothing on construction."""

    def __init__(self, root: str | Path, agent_id: str | None = None) -> None:
        # an absolute string is kept and made a Path when first asked for: a full pass of
        # `tick --all` builds a Home for each of thousands of homes and looks into few
        self.given = root if isinstance(root, str) and os.path.isabs(root) else None
        if self.given is None:
            self.root = Path(root).absolute()
        self._agent_id = agent_id
        self._runtime_ready = False

    @cached_property
    def root(self) -> Path:  # set in __init__ unless the root was given as an absolute string
        return Path(self.given or "")

    def __repr__(self) -> str:
        return f"Home({str(self.root)!r})"

    def __str__(self) -> str:
        return str(self.root)

    def __fspath__(self) -> str:  # a Home is a path-like for its root directory
        return str(self.root)

    @property
    def agent_id(self) -> str:
        if self._agent_id is None:
            ident = read_identity(self.agent_json)
            self._agent_id = str(ident.get("agent_id") or self.root.name)
        return self._agent_id

    @cached_property
    def dot(self) -> Path:
        return self.root / DOT

    agents_md = property(lambda self: self.root / "AGENTS.md")
    agent_json = property(lambda self: self.dot / "agent.json")
    state_json = property(lambda self: self.dot / "state.json")  # run state: volatile, ignored
    settings_json = property(lambda self: self.dot / "settings.json")  # operator's choices: tracked
    gitignore = property(lambda self: self.dot / ".gitignore")
    gitattributes = property(lambda self: self.dot / ".gitattributes")
    ledger = property(lambda self: self.dot / "ledger")
    messages = property(lambda self: self.ledger / "messages.jsonl")
    transcript = property(lambda self: self.ledger / "transcript.jsonl")
    events = property(lambda self: self.ledger / "events.jsonl")
    briefs = property(lambda self: self.ledger / "briefs.jsonl")
    work_items = property(lambda self: self.ledger / "work_items.jsonl")
    delivery_summaries = property(lambda self: self.ledger / "delivery_summaries.jsonl")
    context_episodes = property(lambda self: self.ledger / "context_episodes.jsonl")
    context_rollups = property(lambda self: self.ledger / "context_rollups.jsonl")
    # model-written episode summaries and their attempts (holon.context.summaries)
    context_summaries = property(lambda self: self.ledger / "context_summaries.jsonl")
    turns = property(lambda self: self.ledger / "turns.jsonl")
    tasks = property(lambda self: self.dot / "tasks")
    tasks_active = property(lambda self: self.dot / TASKS_ACTIVE)  # <task_id> -> supervisor pid
    # the identity of tasks/ when every task record was last checked for a lost supervisor
    tasks_checked = property(lambda self: self.dot / "tasks.checked")
    timers = property(lambda self: self.dot / "timers")
    artifacts = property(lambda self: self.dot / "artifacts")
    indexes = property(lambda self: self.dot / "indexes")
    # MCP tool lists per server, keyed by a digest of its config and its version (holon.mcp.cache)
    mcp_cache = property(lambda self: self.dot / "indexes" / "mcp")
    # which MCP servers this agent uses beyond config.toml's defaults (holon.mcp.config)
    mcp_json = property(lambda self: self.dot / "mcp.json")
    locks = property(lambda self: self.dot / "locks")
    memory_index = property(lambda self: self.indexes / "memory.sqlite3")
    memory_dirty = property(lambda self: self.indexes / "memory.dirty")
    # the last episode block and what it was made from (holon.context.blockcache)
    episode_block = property(lambda self: self.indexes / "episode_block.jsonl")
    memory_lock = property(lambda self: self.locks / "memory.lock")
    turn_lock = property(lambda self: self.locks / "turn.lock")
    state_lock = property(lambda self: self.locks / "state.lock")
    next_due = property(lambda self: self.dot / NEXT_DUE)
    wake_hint = property(lambda self: self.dot / WAKE_HINT)
    wake_hint_converting = property(lambda self: self.dot / "wake_hint.converting.json")
    triggers = property(lambda self: self.dot / "triggers")
    trigger_descriptor = property(lambda self: self.triggers / "default.json")
    trigger_lock = property(lambda self: self.locks / "trigger.lock")
    # the per-home HMAC key that seals what admission decided (0600, masked in the sandbox)
    admission_key = property(lambda self: self.dot / "admission.key")
    # ids of messages queued before admission seals existed (holon.home.migrate, m003)
    admission_legacy = property(lambda self: self.dot / "admission.legacy.json")
    budget_json = property(lambda self: self.dot / "budget.json")
    workspace_json = property(lambda self: self.dot / "workspace.json")
    sandbox_json = property(lambda self: self.dot / "sandbox.json")  # the sandbox mode: tracked
    scratch = property(lambda self: self.dot / "scratch")  # per-command writable directories
    patches = property(lambda self: self.dot / "patches")  # ApplyPatch's write-ahead journals
    scripted_cursor = property(lambda self: self.dot / "scripted_cursor.json")
    # the notify hook's cursor: the last event_seq whose record the hook was run for (holon.feed)
    notify_cursor = property(lambda self: self.dot / "notify.json")
    notify_lock = property(lambda self: self.locks / "notify.lock")
    # the OpenAI Responses transport's last request and response, for previous_response_id
    provider_continuation = property(lambda self: self.dot / "responses_continuation.json")
    memory = property(lambda self: self.root / "memory")
    skills = property(lambda self: self.root / "skills")
    work_items_dir = property(lambda self: self.root / "work-items")
    # the homes of this agent's private children (SpawnAgent, holon.tasks.child.children)
    children_dir = property(lambda self: self.dot / "children")
    # the public agents this agent's turns created (SpawnAgent public_named, holon.agent.lineage)
    spawned = property(lambda self: self.dot / "spawned.jsonl")

    def child_home(self, child_id: str) -> Path:
        return self.children_dir / segment(child_id, "agent id")

    @property
    def parent_root(self) -> Path | None:
        """The root of the agent whose private child this home is (it lives in that agent's
        children directory), else None."""
        up = self.root.parent
        if up.name == "children" and up.parent.name == DOT:
            return up.parent.parent
        return None

    # An id becomes exactly one path segment (`invalid_id` otherwise), so an id from outside
    # ("../agent", "a/b", "") can never name a file outside its directory. Ids from the command
    # line and from tools are held to holon.ids.check_id before they get here.
    def task_dir(self, task_id: str) -> Path:
        return self.tasks / segment(task_id, "task id")

    def scratch_dir(self, task_id: str) -> Path:
        return self.scratch / segment(task_id, "task id")

    def plan_path(self, work_item_id: str) -> Path:
        return self.work_items_dir / segment(work_item_id, "work item id") / "plan.md"

    @cached_property
    def queue(self) -> Queue:
        return Queue(self.dot / "queue")

    @property
    def idle_files(self) -> tuple[str, str, str, str, str]:
        """(queue/new, queue/cur, wake hint, next_due, tasks/active) as strings: the idle check
        under cron runs over every agent, and joining strings costs a fraction of building Paths."""
        dot = os.path.join(str(self.root), DOT)
        names = (QUEUE_NEW, QUEUE_CUR, WAKE_HINT, NEXT_DUE, TASKS_ACTIVE)
        return tuple(os.path.join(dot, name) for name in names)  # type: ignore[return-value]

    def mark_memory_dirty(self) -> None:
        """Note that a source of the memory index changed (holon.memory): the next search
        hash-checks every tracked file. Best effort: the index is disposable, and search notices
        grown ledgers by their size anyway."""
        try:
            self.indexes.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.memory_dirty, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            pass

    def exists(self) -> bool:
        return self.agent_json.is_file()

    def ensure_dirs(self) -> None:
        """Make the runtime directories, owner-only (the home itself and `.holon` too)."""
        make_private_dir(self.dot)
        for d in (self.ledger, self.tasks, self.timers, self.artifacts, self.indexes, self.locks):
            d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self.queue.ensure()
        tighten(self.root, DIR_MODE)

    def ensure_runtime(self) -> None:
        """Re-create the directories git does not keep (a clone has none of them): one mkdir per
        directory, once per Home. Nothing happens outside a home (no `.holon`), and a home that
        cannot be written is left alone: the write that needs the directory reports it."""
        if self._runtime_ready:
            return
        dot, root = os.path.join(str(self.root), DOT), str(self.root)
        targets = [os.path.join(dot, d) for d in RUNTIME_DIRS]
        targets += [os.path.join(root, d) for d in USER_DIRS]
        for path in targets:
            try:
                os.mkdir(path, DIR_MODE)
            except FileExistsError:
                pass
            except OSError:  # no .holon here, or a read-only home
                if not os.path.isdir(dot):
                    return
        for path in (root, dot):  # a clone or a copy made them with the umask's modes
            tighten(path, DIR_MODE)
        self._runtime_ready = True


AGENT_JSON_HINT = f"restore it from git (`git checkout -- {DOT}/agent.json`) or fix its JSON"
STATE_JSON_HINT = (
    "restore it from git or delete it: the run state is rebuilt from settings.json and the ledgers"
)


def read_record(path: os.PathLike, hint: str) -> Any:
    """A JSON file of the home, None when it is missing; one that is not JSON (a merge conflict
    marker, a torn copy, bad UTF-8) raises `corrupt_state`, naming the file."""
    try:
        return jsonfile.load(path)  # bounded, never blocks, strict JSON
    except (ValueError, OSError) as exc:
        raise corrupt(path, describe(exc), hint) from None


def read_identity(path: os.PathLike) -> dict[str, Any]:
    """agent.json as an object ({} when missing); `corrupt_state` when it is not JSON, not an
    object, or a field holon relies on has the wrong type."""
    try:
        ident = jsonfile.object_of(path)
    except (ValueError, OSError) as exc:
        raise corrupt(path, describe(exc), AGENT_JSON_HINT) from None
    if ident is None:
        return {}
    problem = identity_problem(ident)
    if problem:
        raise corrupt(path, problem, AGENT_JSON_HINT)
    return ident


def segment(name: object, what: str) -> str:
    """`name` when it is one path segment (not empty, ".", "..", and no "/" or NUL), which every
    directory entry's name is; else InvalidInput `invalid_id`."""
    if (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
    ):
        return name
    raise InvalidInput(
        f"invalid {what} {quote(name)}", kind="invalid_id", hint=f"an id uses {ID_RULE}"
    )


AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # always fullmatch: `$` allows a "\n"


def identity_problem(ident: Any) -> str | None:
    """What is wrong with an agent.json value (None when holon can use it)."""
    if not isinstance(ident, dict):
        return f"holds a JSON {jsonfile.kind_of(ident)}, not an object"
    agent_id = ident.get("agent_id")
    if agent_id is not None and not (isinstance(agent_id, str) and AGENT_ID.fullmatch(agent_id)):
        return f"has an invalid agent_id ({quote(agent_id, 60)})"
    fmt = ident.get("home_format")
    if fmt is not None and not (type(fmt) is int and 0 < fmt < 1000):
        return f"has an invalid home_format ({quote(fmt, 60)}; a small positive integer)"
    done = ident.get("migrations")
    if done is not None and not (isinstance(done, list) and all(isinstance(m, str) for m in done)):
        return "has an invalid migrations list (the names of the applied migrations)"
    for key in ("budget", "template"):
        if ident.get(key) is not None and not isinstance(ident[key], dict):
            return f"has an invalid {key} (a JSON object)"
    return None


def describe(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"is not valid JSON ({exc.msg} at line {exc.lineno})"
    if isinstance(exc, UnicodeDecodeError):
        return "is not valid UTF-8"
    if isinstance(exc, OSError):
        return f"cannot be read ({exc.strerror or exc})"
    return str(exc)


def corrupt(path: os.PathLike, problem: str, hint: str) -> OperationFailed:
    return OperationFailed(f"{os.fspath(path)} {problem}", kind="corrupt_state", hint=hint)
