"""The built-in templates, seeded into `~/.agents/templates/<id>/` (spec, Agent Initialization
Contract): `holon init` copies each one that is missing there, and refreshes a copy holon
seeded earlier when it still matches what holon wrote (`.holon-managed.json` keeps that
content's digest). A copy the operator edited, or a directory holon did not write, is never
overwritten. Seeding is best effort: a home that cannot be written to still resolves the
built-in templates from the package (holon.home.init.resolve_template).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from holon import jsonfile
from holon.store.atomic import write_json

BUILTIN_TEMPLATES = Path(__file__).parent / "templates"
MARK = ".holon-managed.json"


def user_templates() -> Path:
    return Path.home() / ".agents" / "templates"


def digest(root: Path) -> str:
    """sha256 over the template's relative paths and contents (links by target), mark aside."""
    h = hashlib.sha256()
    for top, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(top, name)
            rel = path.relative_to(root).as_posix()
            if rel == MARK:
                continue
            body = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            h.update(f"{rel}\0{len(body)}\0".encode() + body)
    return h.hexdigest()


def managed(target: Path) -> str | None:
    """The digest holon recorded in a copy it seeded; None for one it did not write."""
    try:
        mark = jsonfile.object_of(target / MARK, 1 << 16)
    except (ValueError, OSError):
        return None
    value = (mark or {}).get("digest")
    return value if isinstance(value, str) else None


def unmodified(target: Path) -> bool:
    """A copy holon seeded whose content is still what holon wrote."""
    recorded = managed(target)
    try:
        return recorded is not None and digest(target) == recorded
    except OSError:
        return False


def seed(dest: Path | None = None) -> list[str]:
    """Seed or refresh each built-in template under `dest`; returns the ids written."""
    dest = dest or user_templates()
    written = []
    for source in sorted(p for p in BUILTIN_TEMPLATES.iterdir() if p.is_dir()):
        target = dest / source.name
        want = digest(source)
        try:
            if os.path.lexists(target) and (managed(target) == want or not unmodified(target)):
                continue  # current already, or the operator's: left as it is
            _install(source, target, want)
        except OSError:
            continue  # a home that cannot take it: the package copy still resolves
        written.append(source.name)
    return written


def _install(source: Path, target: Path, want: str) -> None:
    """Copy `source` beside `target`, mark it, then swap it in by rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.seed-{os.getpid()}"
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(source, staging, symlinks=True)
        write_json(staging / MARK, {"schema_version": 1, "digest": want})
        if os.path.lexists(target):
            os.rename(target, old)
        os.rename(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
