"""The host due index `$HOLON_HOME/due/`: one entry per agent that may have due work.

`holon tick --all` and `holon watch --all` read this directory instead of checking every agent.
An entry is a symbolic link to the agent's home, named `<name>~<hash>` (may have work now) or
`<name>~<hash>@<epoch ms>` (its earliest timer), where `<name>` is the home's directory name
and `<hash>` the first 16 hex digits of the sha256 of its path (relative to HOLON_HOME when
inside it, as is the link: a copied or moved HOLON_HOME's index points into itself); listing
the directory says who is due without opening a file. Stdlib only: the idle path of
`tick --all` reads it.

The index may be early, never late:
- a writer of due work (a queued message, a wake hint, a lowered next_due, a task marker) marks
  the agent BEFORE writing its file and again after (`mark`): a crash in between leaves an early
  mark, and the second closes the race with a ticker that clears the entry meanwhile;
- a ticker removes an entry only when it finds the agent idle, removing first and checking again
  after (`settle`), so a mark made meanwhile is never lost; an agent with a running task stays
  marked while its tasks are active (a supervisor that dies writes nothing);
- a writer marks only an index that exists, and never fails its own write for the index: homes
  written by another holon, copied in or registered elsewhere are found by the full pass, run
  when the index has no pass record (`.scan[.K-of-N].json`), when registry.json or the agents
  directory changed since, when a home reported broken changed, and every FULL_PASS_EVERY_S;
  the periodic pass re-checks only the homes whose stamp (holon.agent.due.stamp: the inodes and
  change times of what the idle check reads) moved since the last pass or whose entries are
  not as that pass left them (`.stamps[.K-of-N].json`), and every home with work or a timer
  that has come;
- holon's own changes to the homes (`holon init`, a child archived, an agent forgotten) are
  made under the registry lock and carried into the index by the writer (`advance`): it marks
  the new home, then moves each pass record that was current before the change to the
  signature after it, so the next pass reads the index. A crash in between leaves the record
  behind the signature: the next pass is a full one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Iterable
from typing import Any

from holon.home import relocate
from holon.home.layout import is_home
from holon.paths import agents_dir, holon_home, registry_path
from holon.store import crashpoint
from holon.store.atomic import DIR_MODE, dumps, write_bytes, write_json
from holon.vocab import SCHEMA_VERSION

FULL_PASS_EVERY_S = 600.0  # a full pass at least this often (homes no writer marked)
SETTLE_S = 2.0  # a directory changed this close to a pass's start is checked again next pass
KEY_SEP, AT = "~", "@"


def index_dir() -> str:
    return os.path.join(holon_home(), "due")


def key_of(root: str | os.PathLike) -> str:
    """The entry name of the home at `root` (no time part)."""
    path = os.path.abspath(root)
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(path))[:64]
    spelled = relocate.stored(path)
    digest = hashlib.sha256(spelled.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{name.lstrip('.') or 'home'}{KEY_SEP}{digest}"


def entry_name(root: str | os.PathLike, at: float | None = None) -> str:
    """`key` for "may have work now", `key@ms` (rounded down: early) for a timer at `at`."""
    key = key_of(root)
    return key if at is None or not math.isfinite(at) else f"{key}{AT}{_ms(at)}"


def parse(name: str) -> tuple[str, float | None] | None:
    """(key, due time or None for "now") of an entry name; None for what is not an entry."""
    if name.startswith(".") or KEY_SEP not in name:
        return None
    key, sep, ms = name.partition(AT)
    if not sep:
        return key, None
    return (key, int(ms) / 1000.0) if ms.isdigit() else (key, None)  # a bad time: due now


def mark(root: str | os.PathLike, at: float | None = None) -> None:
    """Note that the home at `root` may have work now (`at` None) or at `at`. Called before and
    after the write that creates the work. Never raises: a missing or unwritable index is left to
    the full pass."""
    directory = index_dir()
    try:
        crashpoint.step("due.mark")
        link = os.path.abspath(root)
        if relocate.inside(link):
            link = os.path.relpath(link, directory)
        os.symlink(link, os.path.join(directory, entry_name(root, at)))
    except OSError:  # it exists (already marked), no index yet, or not writable
        pass


def unlink(name: str) -> None:
    """Remove an entry. Never raises: an entry that cannot be removed stays (early, never late)."""
    try:
        crashpoint.step("due.unlink")
        os.unlink(os.path.join(index_dir(), name))
    except OSError:  # gone already, or the index is not writable
        pass


def listing() -> list[str] | None:
    """The entry names, None when there is no index."""
    try:
        return os.listdir(index_dir())
    except (FileNotFoundError, NotADirectoryError):
        return None


def target(name: str) -> str | None:
    """The home an entry points to (absolute), None when it is not a link."""
    try:
        return os.path.normpath(
            os.path.join(index_dir(), os.readlink(os.path.join(index_dir(), name)))
        )
    except OSError:
        return None


def ensure() -> bool:
    """Make the index directory (owner-only); False when it cannot be made."""
    try:
        os.makedirs(index_dir(), DIR_MODE, exist_ok=True)
        return True
    except OSError:
        return False


def desired(reasons: list[str], next_due: float | None, tasks_active: bool) -> str | None:
    """What an agent's entry should be after an idle check: "" (may have work now), a time as
    `@ms`, or None (no entry)."""
    if reasons or tasks_active:
        return ""
    if next_due is None:
        return None
    return f"{AT}{_ms(next_due)}" if math.isfinite(next_due) else ""


def _ms(at: float) -> int:
    return max(0, min(int(at * 1000), 10**15))


# ---- the pass record: when the last full pass ran and what it saw ----


def _scan_file(shard: str | None) -> str:
    return os.path.join(index_dir(), f".scan.{shard}.json" if shard else ".scan.json")


def signature() -> dict[str, Any]:
    """What tells a pass that homes were added or registered: registry.json (mtime, size,
    inode) and the agents directory (mtime, link count, inode: a directory added within the
    same clock tick as the last change still changes its link count)."""
    out: dict[str, Any] = {}
    for label, path in (("registry", registry_path()), ("agents", agents_dir())):
        try:
            st = os.stat(path)
            size = st.st_size if label == "registry" else st.st_nlink
            out[label] = [st.st_mtime_ns, size, st.st_ino]
        except OSError:
            out[label] = None
    return out


def record_full_pass(
    shard: str | None, started: float, seen: dict[str, Any], broken: list[dict]
) -> None:
    """Write the pass record; `seen` is the signature taken before the pass listed the homes."""
    settled = all(v is None or abs(v[0] / 1e9 - started) > SETTLE_S for v in seen.values())
    record = {
        "schema_version": SCHEMA_VERSION,
        "full_pass_at": started,
        "signature": seen if settled else None,
        "broken": broken,
    }
    try:
        write_json(_scan_file(shard), record)
    except OSError:
        pass  # the next pass is a full one again


def _stamps_file(shard: str | None) -> str:
    return os.path.join(index_dir(), f".stamps.{shard}.json" if shard else ".stamps.json")


def stamps(shard: str | None) -> dict[str, list]:
    """What the last full pass left: home path -> [stamp, entry suffix ("@ms") or None (no
    entry), mask of the stamped paths missing]; empty when there is no readable record."""
    try:
        with open(_stamps_file(shard), "rb") as fh:
            homes = json.loads(fh.read())["homes"]
        return homes if isinstance(homes, dict) else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def record_stamps(shard: str | None, homes: dict[str, list]) -> None:
    """Write what a full pass left (see `stamps`). Never raises: without it the next full pass
    checks every home."""
    doc = {"schema_version": SCHEMA_VERSION, "homes": homes}
    try:
        write_bytes(_stamps_file(shard), dumps(doc).encode("utf-8"))
    except OSError:
        pass


def advance(
    before: dict[str, Any], marks: Iterable[str | os.PathLike] = (), gone: str = ""
) -> None:
    """Carry a change to the homes into the index: mark the homes of `marks`, then move every
    pass record whose signature is `before` (taken under the registry lock before the change)
    to the signature now, leaving out the broken home of agent `gone`. The caller holds the
    registry lock, so no other holon change falls between `before` and now. Never raises: a
    record left behind makes the next pass a full one."""
    for root in marks:
        mark(root)
    after = signature()
    for name in listing() or []:
        if not (name.startswith(".scan") and name.endswith(".json")):
            continue
        path = os.path.join(index_dir(), name)
        try:
            with open(path, "rb") as fh:
                record = json.loads(fh.read(1 << 22))
            if record.get("signature") != before or before == after:
                continue
            record["signature"] = after
            record["broken"] = [b for b in record["broken"] if b.get("agent_id") != gone]
            write_json(path, record)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # unreadable, or not written: the next pass is a full one


def needs_full_pass(shard: str | None) -> tuple[bool, list[dict], float]:
    """(a full pass is due, the broken homes the last full pass found, seconds until the next
    periodic full pass). Due when there is no readable record, it is older than
    FULL_PASS_EVERY_S (or in the future), registry.json or the agents directory changed since,
    or a home it found broken changed."""
    try:
        with open(_scan_file(shard), "rb") as fh:
            record = json.loads(fh.read(1 << 22))
        started = float(record["full_pass_at"])
        seen, broken = record["signature"], list(record["broken"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return True, [], FULL_PASS_EVERY_S
    age = time.time() - started
    if not 0 <= age < FULL_PASS_EVERY_S or seen is None or seen != signature():
        return True, broken, FULL_PASS_EVERY_S
    for b in broken:
        if not isinstance(b, dict) or not isinstance(b.get("status"), str):
            return True, [], FULL_PASS_EVERY_S
        home = b.get("home")
        if b.get("agent_id") is not None and isinstance(home, str) and _changed(b, home):
            return True, broken, FULL_PASS_EVERY_S
    return False, broken, FULL_PASS_EVERY_S - age


def _changed(broken: dict, home: str) -> bool:
    if broken.get("status") == "missing":
        return os.path.lexists(home)
    return is_home(home)
