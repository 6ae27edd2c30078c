"""Patch paths: git quoting, a/ b/ prefixes, and resolution inside the execution root."""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from holon.patch.errors import patch_error

DEV_NULL = "/dev/null"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(raw: str) -> str:
    """Decode a git C-style quoted path ("caf\\303\\251.txt"); unquoted paths pass through."""
    if len(raw) < 2 or not (raw.startswith('"') and raw.endswith('"')):
        return raw
    out = bytearray()
    body, i = raw[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode("utf-8")
            i += 1
        elif body[i + 1] in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 : i + 4]).group()
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        else:
            out.append(_ESCAPES.get(body[i + 1], ord(body[i + 1])))
            i += 2
    return out.decode("utf-8", errors="surrogateescape")


def header_path(raw: str) -> str | None:
    """The path of a `---`/`+++` line: tab-separated timestamps dropped, a/ b/ stripped, None for
    /dev/null."""
    path = unquote(raw.rstrip("\r").split("\t", 1)[0].rstrip(" "))
    if path == DEV_NULL:
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def git_header_path(rest: str) -> str | None:
    """The one path of `diff --git <a> <b>` (the text after `diff --git `) when both sides name
    the same file, else None.

    Unquoted paths may contain spaces, so every split is tried, as git does for metadata-only
    sections; the prefixes (a/ b/, or none) are dropped.
    """
    rest = rest.rstrip("\r")
    quoted = re.fullmatch(r'("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)', rest)
    if quoted and '"' in rest:
        a, b = (header_path(token) for token in quoted.groups())
        return a if a is not None and a == b else None
    for i in (i for i, ch in enumerate(rest) if ch == " "):
        a, b = header_path(rest[:i]), header_path(rest[i + 1 :])
        if a is not None and a == b and a:
            return a
    return None


def rename_path(raw: str) -> str:
    """The path of a `rename from`/`rename to` line (git writes these without a/ b/ prefixes)."""
    return unquote(raw.rstrip("\r"))


def normalise(path: str) -> str:
    return posixpath.normpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: Path, cwd: Path, path: str) -> Path:
    """The real filesystem path for a patch path, or path_escape when it leaves the root."""
    if not path or "\0" in path:
        raise patch_error("path_escape", f"invalid patch path {path!r}", path=path)
    if os.path.isabs(path) or path.startswith("~"):
        raise patch_error(
            "path_escape",
            f"{path}: absolute paths are not allowed; use a path relative to the working directory",
            path=path,
        )
    real_root = os.path.realpath(root)
    lexical = os.path.normpath(os.path.join(os.path.realpath(cwd), path))
    if not _inside(lexical, real_root) or lexical == real_root:
        raise patch_error("path_escape", f"{path}: resolves outside the workspace", path=path)
    real = os.path.realpath(lexical)
    if not _inside(real, real_root) or real == real_root:
        raise patch_error(
            "path_escape", f"{path}: a symlink leads outside the workspace", path=path, target=real
        )
    return Path(real)
