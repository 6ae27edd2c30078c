"""ApplyPatch's write-ahead journal, kept in the agent home: a multi-file patch is all or nothing
across a crash, and `recover` finishes or undoes what a crash interrupted.

A transaction publishes `<id>.jsonl` in the journal directory before it makes anything in the
tree. Line 1, the intent: each directory it will make, each temp file it will stage (named as
holon.store.atomic.stage_bytes names them), each temp's target, each file to unlink (deleted or
renamed away), and the identity (inode, size, mtime) of every target's old content. Line 2, the
commit mark, is appended once every temp is staged and fsynced. Then every target is re-checked
(a failed re-check appends an abort mark and undoes the transaction), and then come the renames,
the unlinks and the journal's removal.

`recover` rolls a journal without its commit mark (or with an abort mark) back: it unlinks the
temps and removes the directories made, so the tree is as it was. It rolls one with the mark
forward: the temps are complete, so finishing the renames and unlinks is safe and idempotent.
Rolling forward skips a file that another writer changed since the crash, so their edit is kept.
The writer holds a flock on its journal until it removes it, so recovery never touches a live
transaction.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from holon.patch import dirlock
from holon.patch.errors import PatchError
from holon.store import crashpoint
from holon.store.atomic import dumps, fsync_dir, write_all

SCHEMA_VERSION = 1
RECOVER_LOCK_TIMEOUT = 5.0  # seconds recovery waits for a live ApplyPatch on the same files
_COMMIT = {"state": "commit"}
_ABORT = {"state": "abort"}
_TEMP = re.compile(r"\.(?P<name>.+)\.tmp\.\d+")


def temp_path(dst: Path) -> Path:
    """Where stage_bytes stages `dst` in this process (its naming, known before it runs)."""
    return dst.with_name(f".{dst.name}.tmp.{os.getpid()}")


def identity(path: str | os.PathLike) -> list[int] | None:
    """(inode, size, mtime_ns) of the file at `path`, None when nothing is there."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def intent(
    mkdirs: list[Path],
    replace: list[tuple[Path, Path]],
    unlink: list[Path],
    locks: list[Path],
    moves: dict[Path, Path] | None = None,
) -> dict[str, Any]:
    """The intent record of one transaction; `moves` maps each rename's source to its target."""
    targets = [dst for _, dst in replace] + unlink
    return {
        "schema_version": SCHEMA_VERSION,
        "id": f"{time.time_ns():x}-{os.getpid()}-{os.urandom(4).hex()}",
        "mkdirs": [str(d) for d in mkdirs],
        "replace": [[str(tmp), str(dst)] for tmp, dst in replace],
        "unlink": [str(p) for p in unlink],
        "moves": {str(src): str(dst) for src, dst in (moves or {}).items()},
        "locks": [str(d) for d in locks],
        "old": {str(p): identity(p) for p in targets},
    }


class Journal:
    """One published journal, flocked by this process until `end`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd
        self.committed = False

    @classmethod
    def begin(cls, journal_dir: Path, record: dict[str, Any]) -> Journal:
        """Write the intent under a temp name, fsync it, then rename it into place."""
        try:
            os.mkdir(journal_dir, 0o700)
        except FileExistsError:
            pass
        tmp = journal_dir / f"{record['id']}.tmp"
        path = journal_dir / f"{record['id']}.jsonl"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            write_all(fd, (dumps(record) + "\n").encode("utf-8"), "patch.intent")
            os.fsync(fd)
            crashpoint.step("patch.intent.publish")
            os.rename(tmp, path)  # fails if recovery took the unpublished file: nothing was made
            fsync_dir(journal_dir)
        except BaseException:
            os.close(fd)
            _unlink(tmp)
            raise
        return cls(path, fd)

    def commit(self) -> None:
        """Append the commit mark: from here on, recovery rolls forward."""
        self.committed = True  # from the first byte: a torn mark is taken back too
        write_all(self.fd, (dumps(_COMMIT) + "\n").encode("utf-8"), "patch.commit")
        os.fsync(self.fd)

    def abort(self) -> None:
        """Take the commit mark back (a re-check failed after it): recovery rolls back."""
        write_all(self.fd, (dumps(_ABORT) + "\n").encode("utf-8"), "patch.abort")
        os.fsync(self.fd)

    def end(self) -> None:
        """The transaction is over (applied or undone): remove the journal. A journal that cannot
        be removed stays for recovery, to which an ended transaction is nothing to do."""
        try:
            crashpoint.step("patch.end")
            os.unlink(self.path)
            fsync_dir(self.path.parent)
        except OSError:
            pass
        finally:
            os.close(self.fd)


def roll_forward(record: dict[str, Any], *, careful: bool = False) -> None:
    """Rename every staged temp still there over its target, unlink every source still there.
    `careful` (recovery): a target or source whose identity is no longer the recorded old one
    was changed by another writer since; it is left as they made it and its temp is dropped (and
    a rename whose target was taken keeps its source)."""
    old = record["old"]
    dirs, taken = set(), set()
    for tmp, dst in record["replace"]:
        dirs.add(os.path.dirname(dst))
        if careful and os.path.lexists(tmp) and identity(dst) != old.get(dst):
            _unlink(tmp)
            taken.add(dst)
            continue
        crashpoint.step("patch.replace")
        try:
            os.replace(tmp, dst)
        except FileNotFoundError:
            pass  # replaced before the crash
    for src in record["unlink"]:
        dirs.add(os.path.dirname(src))
        if careful and (identity(src) != old.get(src) or record["moves"].get(src) in taken):
            continue  # unlinked before the crash, made anew since, or its move was not made
        crashpoint.step("patch.unlink")
        _unlink(src)
    for d in sorted(dirs):
        fsync_dir(d)


def roll_back(record: dict[str, Any]) -> None:
    """Unlink every staged temp, then remove the directories made (those still empty)."""
    dirs = set()
    for tmp, _ in record["replace"]:
        _unlink(tmp)
        dirs.add(os.path.dirname(tmp))
    for d in reversed(record["mkdirs"]):
        try:
            os.rmdir(d)
        except OSError:
            pass
        dirs.discard(d)
        dirs.add(os.path.dirname(d))
    for d in sorted(dirs):
        fsync_dir(d)


def recover(journal_dir: str | os.PathLike) -> int:
    """Finish (commit mark) or undo (none) every ApplyPatch transaction that a crash left in
    `journal_dir`; returns how many. A live transaction's journal is left alone, and so is one
    whose files are locked by another ApplyPatch or cannot be changed now (the next call retries);
    a journal that is not one is renamed `<name>.corrupt`. Never raises for what it finds."""
    try:
        names = sorted(os.listdir(journal_dir))
    except OSError:
        return 0
    done = 0
    for name in names:
        if name.endswith((".jsonl", ".tmp")):
            try:
                done += _recover_one(Path(journal_dir, name))
            except (OSError, PatchError):
                continue
    return done


def _recover_one(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # its transaction is running
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or identity(path) is None or st.st_nlink == 0:
            return 0  # ended (unlinked) while we opened it, or not a journal
        if path.suffix == ".tmp":  # an intent never published: nothing was made in the tree
            _unlink(path)
            return 0
        record, committed = _read(fd)
        if record is None:
            os.replace(path, path.with_name(path.name + ".corrupt"))
            return 0
        locks = [Path(d) for d in record["locks"]]
        with dirlock.held(locks, timeout=RECOVER_LOCK_TIMEOUT):
            if committed:
                roll_forward(record, careful=True)
            else:
                roll_back(record)
        os.unlink(path)
        fsync_dir(path.parent)
        return 1
    finally:
        os.close(fd)


def _read(fd: int) -> tuple[dict[str, Any] | None, bool]:
    """(the intent, whether the commit mark and no abort mark follow it); the intent is None when
    it is not a valid one. A torn or garbled line after the intent is no mark."""
    data = b""
    while chunk := os.read(fd, 1 << 16):
        data += chunk
        if len(data) > 64 << 20:
            return None, False
    lines = data.split(b"\n")
    try:
        record = json.loads(lines[0])
    except (ValueError, RecursionError):
        return None, False
    marks = []
    for line in lines[1:]:
        try:
            marks.append(json.loads(line))
        except (ValueError, RecursionError):
            pass
    committed = _COMMIT in marks and _ABORT not in marks
    return (record, committed) if _valid(record) else (None, False)


def _valid(record: Any) -> bool:
    """An intent this version wrote: absolute paths, each temp beside its target and named as
    stage_bytes names it, and an identity for every target."""
    if not isinstance(record, dict) or record.get("schema_version") != SCHEMA_VERSION:
        return False
    lists = [record.get(k) for k in ("mkdirs", "unlink", "locks")]
    if not all(isinstance(v, list) and all(_abs(p) for p in v) for v in lists):
        return False
    replace, old, moves = record.get("replace"), record.get("old"), record.get("moves")
    if not isinstance(replace, list) or not isinstance(old, dict) or not isinstance(moves, dict):
        return False
    if not all(_abs(k) and _abs(v) for k, v in moves.items()):
        return False
    for pair in replace:
        if not (isinstance(pair, list) and len(pair) == 2 and all(_abs(p) for p in pair)):
            return False
        tmp, dst = Path(pair[0]), Path(pair[1])
        match = _TEMP.fullmatch(tmp.name)
        if tmp.parent != dst.parent or not match or match["name"] != dst.name:
            return False
    return all(p in old for p in [dst for _, dst in replace] + record["unlink"])


def _abs(value: Any) -> bool:
    return isinstance(value, str) and "\0" not in value and os.path.isabs(value)


def _unlink(path: str | os.PathLike) -> None:
    try:
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
