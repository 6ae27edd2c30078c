"""Apply a planned ApplyPatch to the tree: under directory locks, re-checked, journaled, all or
nothing.

`apply` locks the directories of every file the patch touches (dirlock), plans it against what
is on disk now, and commits. `commit` records the intent in the journal (when it has one), makes
missing directories, stages every new content as an fsynced temp beside its target, appends the
commit mark, re-reads every file the plan read (`file_changed` when another writer changed one:
the journal is marked aborted, nothing is changed and their edit is kept), renames the temps into
place and unlinks deleted files and rename sources. A failure undoes everything; a crash after
the commit mark is finished by journal.recover, one before it undone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from holon.patch import dirlock, journal
from holon.patch.errors import PatchError, patch_error
from holon.patch.model import FilePatch
from holon.patch.transaction import Change, plan, read_file
from holon.store import crashpoint
from holon.store.atomic import stage_bytes

_REPLANS = 5  # a directory made or removed between planning and locking: plan again


def apply(
    root: Path,
    cwd: Path,
    patches: list[FilePatch],
    *,
    journal_dir: Path | None = None,
    check: Callable[[list[Change]], None] | None = None,
) -> list[Change]:
    """Plan `patches` and commit them while holding every involved directory's lock, so two
    ApplyPatch calls on the same files apply one after the other, each to the latest content.
    `check` sees the plan before anything is written and may raise to refuse it."""
    changes = plan(root, cwd, patches)  # unlocked: which directories to lock
    for _ in range(_REPLANS):
        dirs = lock_dirs(changes)
        with dirlock.held(dirs) as held:
            changes = plan(root, cwd, patches)
            if not dirlock.keys(lock_dirs(changes)) <= held:
                continue
            if check is not None:
                check(changes)
            commit(changes, journal_dir)
            return changes
    raise patch_error(
        "file_busy", "the directories of the patched files kept changing; nothing was changed"
    )


def lock_dirs(changes: list[Change]) -> list[Path]:
    """The directories holding (or to hold) every file the changes read or write."""
    return sorted({dirlock.lock_dir(p) for c in changes for p in (c.src, c.dst) if p is not None})


def commit(changes: list[Change], journal_dir: Path | None = None) -> None:
    """Stage every write, re-check what the plan read, then rename them all into place, then
    unlink deletions and rename sources; with `journal_dir`, all or nothing across a crash."""
    writes = [c for c in changes if c.dst is not None]
    sources = [c.src for c in changes if c.src is not None]
    try:
        record = journal.intent(
            _missing_dirs(writes),
            [(journal.temp_path(c.dst), c.dst) for c in writes if c.dst is not None],
            sources,
            lock_dirs(changes),
            {c.src: c.dst for c in changes if c.src is not None and c.dst is not None},
        )
    except OSError as exc:
        raise _io_error(exc) from None
    tx = None
    try:
        for src in sources:
            if not os.access(src.parent, os.W_OK | os.X_OK):
                # an unlink that would fail after the renames: refuse now, while nothing changed
                raise PermissionError(13, "Permission denied", str(src))
        if journal_dir is not None and os.path.isdir(journal_dir.parent):
            tx = journal.Journal.begin(journal_dir, record)
        _stage(writes, record)
        if tx is not None:
            tx.commit()
        verify(changes)  # last, so no fsync lies between the re-check and the renames
    except BaseException as exc:
        _undo(record, tx)
        if isinstance(exc, OSError):
            raise _io_error(exc) from None
        raise
    try:
        journal.roll_forward(record)
    except OSError as exc:  # the journal stays: the next recovery finishes the renames
        if tx is not None:
            os.close(tx.fd)
        raise patch_error(
            "io_error",
            f"cannot finish the change at {exc.filename}: {exc.strerror}; it is recorded and "
            "the next ApplyPatch or tick finishes it",
            path=str(exc.filename),
        ) from None
    if tx is not None:
        tx.end()


def _undo(record: dict, tx: journal.Journal | None) -> None:
    """Mark the journal aborted, remove what was staged and made, then the journal; if that
    fails, the journal stays for the next recovery to finish."""
    if tx is not None and tx.committed:
        try:
            tx.abort()
        except OSError:  # no abort mark: remove the journal first, or recovery would finish it
            tx.end()
            tx = None
    try:
        journal.roll_back(record)
    except OSError:
        if tx is not None:
            os.close(tx.fd)
        return
    if tx is not None:
        tx.end()


def _io_error(exc: OSError) -> PatchError:
    where = exc.filename if exc.filename is not None else "the patched files"
    return patch_error(
        "io_error",
        f"cannot write {where}: {exc.strerror}; nothing was changed",
        path=None if exc.filename is None else str(exc.filename),
    )


def _missing_dirs(writes: list[Change]) -> list[Path]:
    """Directories to make for the writes, outermost first."""
    missing: list[Path] = []
    for change in writes:
        assert change.dst is not None
        chain = []
        directory = change.dst.parent
        while not directory.exists():
            chain.append(directory)
            directory = directory.parent
        missing += [d for d in reversed(chain) if d not in missing]
    return missing


def _stage(writes: list[Change], record: dict) -> None:
    for d in record["mkdirs"]:
        crashpoint.step("patch.mkdir")
        os.mkdir(d)
    for change in writes:
        assert change.dst is not None
        crashpoint.step("patch.stage")
        tmp = stage_bytes(change.dst, change.data, mode=change.mode)
        if tmp != journal.temp_path(change.dst):  # the journal would not know to remove it
            os.unlink(tmp)
            raise OSError(5, "staged under an unexpected temp name", str(tmp))


def verify(changes: list[Change]) -> None:
    """`file_changed` unless every file the plan read is still as it read it (same bytes and
    mode; a path it found free still free): another writer's edit is never overwritten."""
    for change in changes:
        for path, label, expected in change.expect:
            if expected is None:
                if os.path.lexists(path):
                    raise _changed(label, "was created")
                continue
            try:
                now = read_file(path, label)
            except PatchError:
                raise _changed(label, "was deleted or replaced by a non-file") from None
            if now != expected:
                raise _changed(label, "was modified" if now[0] != expected[0] else "changed mode")


def _changed(label: str, what: str) -> PatchError:
    return patch_error(
        "file_changed",
        f"{label}: {what} by another writer after ApplyPatch read it; nothing was changed",
        path=label,
    )
