"""A maildir-style message queue: create in tmp/, link into new/, claim by rename into cur/.

File names sort by priority band, then admission time, so `sorted(new/)` is the
dequeue order. A message stays in cur/ while its turn runs and is deleted only
after the turn's effects are persisted; a crash leaves it in cur/ for the next
tick to redeliver (at-least-once). Messages past the delivery limit move to
dead/.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from holon.store.atomic import dumps, fsync_dir, write_bytes

BANDS = {"interject": 0, "next": 1, "normal": 2, "background": 3}


class Queue:
    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.tmp = self.root / "tmp"
        self.new = self.root / "new"
        self.cur = self.root / "cur"
        self.dead = self.root / "dead"

    def ensure(self) -> None:
        for d in (self.tmp, self.new, self.cur, self.dead):
            d.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def make_name(priority: str) -> str:
        import secrets

        band = BANDS.get(priority, 2)
        return f"{band}-{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.json"

    def put(self, record: dict, priority: str) -> str:
        """Durably add `record` to new/; returns the file name."""
        data = (dumps(record) + "\n").encode("utf-8")
        while True:
            name = self.make_name(priority)
            tmp = self.tmp / name
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            break
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, self.new / name)
        os.unlink(tmp)
        fsync_dir(self.new)
        return name

    def pending(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.new) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def has_pending(self) -> bool:
        try:
            with os.scandir(self.new) as it:
                return any(e.name.endswith(".json") for e in it)
        except FileNotFoundError:
            return False

    def in_progress(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.cur) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def claim(self) -> tuple[str, dict] | None:
        """Move the first message of new/ into cur/ and return it; None when empty."""
        for name in self.pending():
            try:
                os.rename(self.new / name, self.cur / name)
            except FileNotFoundError:
                continue  # lost a race: someone else claimed it
            fsync_dir(self.cur)
            record = self._load(self.cur / name)
            if record is None:
                self.quarantine(self.cur / name)
                continue
            return name, record
        return None

    def read_cur(self, name: str) -> dict | None:
        return self._load(self.cur / name)

    def rewrite_cur(self, name: str, record: dict) -> None:
        write_bytes(self.cur / name, (dumps(record) + "\n").encode("utf-8"))

    def release(self, name: str) -> None:
        """Put a claimed message back into new/ (same name: same place in line)."""
        os.rename(self.cur / name, self.new / name)
        fsync_dir(self.new)

    def done(self, name: str) -> None:
        try:
            os.unlink(self.cur / name)
        except FileNotFoundError:
            pass
        fsync_dir(self.cur)

    def dead_letter(self, name: str) -> None:
        os.rename(self.cur / name, self.dead / name)
        fsync_dir(self.dead)

    def dead_letters(self) -> list[str]:
        try:
            return sorted(os.listdir(self.dead))
        except FileNotFoundError:
            return []

    def depth(self) -> int:
        return len(self.pending()) + len(self.in_progress())

    def peek_all(self) -> list[dict]:
        out = []
        for name in self.pending():
            rec = self._load(self.new / name)
            if rec is not None:
                out.append(rec)
        return out

    def quarantine(self, path: Path) -> None:
        """Set an unreadable message file aside as dead/<name>.unreadable."""
        try:
            os.rename(path, self.dead / (path.name + ".unreadable"))
        except FileNotFoundError:
            pass

    @staticmethod
    def _load(path: Path) -> dict | None:
        try:
            with open(path, "rb") as fh:
                value = json.loads(fh.read())
        except (FileNotFoundError, ValueError, UnicodeDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def clean_tmp(self, older_than_s: float = 3600.0) -> None:
        """Remove tmp/ leftovers of crashed enqueuers (never linked into new/)."""
        now = time.time()
        try:
            entries = list(os.scandir(self.tmp))
        except FileNotFoundError:
            return
        for e in entries:
            try:
                if now - e.stat().st_mtime > older_than_s:
                    os.unlink(e.path)
            except FileNotFoundError:
                pass
