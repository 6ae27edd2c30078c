"""Skill discovery: the catalogs of `<root>/<name>/SKILL.md` an agent can see, by scope and role.

Three scopes, each the first existing root of its list (roots of one scope are never merged):

    user       ~/.agents/skills, ~/.codex/skills, ~/.claude/skills       (the default agent only)
    agent      <home>/skills, <home>/.agents/skills, <home>/.codex/skills, <home>/.claude/skills
    workspace  <anchor>/.agents/skills, <anchor>/.codex/skills, <anchor>/.claude/skills
               (only when a workspace other than the agent home is bound)

A skill's name is its directory name. The same name in two scopes: the more specific scope wins
(workspace over agent over user) and the other is not listed. Front matter (`---` lines with
one-line `name:` and `description:` values, quotes removed) gives the description; a SKILL.md
without front matter, or with front matter this strict reader does not accept, is still listed,
with an empty description and its `problem` (shown by `holon skills list`, never in the prompt).
Bounded: at most MAX_PER_ROOT skills per root (by name), MAX_DESCRIPTION characters of a
description, FRONT_MATTER_BYTES read of each SKILL.md. Confined (holon.confined): a catalog is
listed and each SKILL.md read beneath its base (the workspace anchor, the agent home, the user's
home) without following a symlink out of it, and never from a FIFO or a device; an entry that
leads out of its catalog is skipped too. What is skipped is handed back as `Refused`. Stdlib
only.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from holon import confined, safetext
from holon.home.layout import Home, read_identity

MAX_PER_ROOT = 64
MAX_DESCRIPTION = 300
MAX_NAME = 64
FRONT_MATTER_BYTES = 8192
SCOPES = ("workspace", "agent", "user")  # most specific first
CATALOG_DIRS = (".agents", ".codex", ".claude")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Skill:
    name: str  # the directory name, as found (Skill.label is the prompt-safe form)
    scope: str  # user | agent | workspace
    description: str
    path: str  # the SKILL.md
    root: str  # the catalog root the skill was found in
    problem: str | None = None  # why the front matter was not used

    @property
    def label(self) -> str:
        return safetext.one_line(self.name, MAX_NAME)

    @property
    def dir(self) -> str:
        return os.path.dirname(self.path)

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


def roots(home: Home, workspace_anchor: Path | None, kind: str) -> list[tuple[str, Path, str]]:
    """(scope, base, catalog path relative to the base) in precedence order within each scope,
    most specific scope first; the user scope only for the default agent, the workspace scope
    only for a workspace that is not the agent home. Nothing is read from outside the base."""
    out: list[tuple[str, Path, str]] = []
    if workspace_anchor is not None and Path(workspace_anchor).absolute() != home.root:
        anchor = Path(workspace_anchor).absolute()
        out += [("workspace", anchor, f"{d}/skills") for d in CATALOG_DIRS]
    out += [("agent", home.root, "skills")]
    out += [("agent", home.root, f"{d}/skills") for d in CATALOG_DIRS]
    if kind == "default":
        out += [("user", Path.home(), f"{d}/skills") for d in CATALOG_DIRS]
    return out


def agent_kind(home: Home) -> str:
    """The agent's kind from agent.json (`named` when it says nothing)."""
    kind = read_identity(home.agent_json).get("kind")
    return kind if isinstance(kind, str) else "named"


def discover(
    home: Home,
    workspace_anchor: Path | None = None,
    *,
    kind: str | None = None,
    refused: list[confined.Refused] | None = None,
) -> list[Skill]:
    """Every skill the agent sees, sorted by name; one per name (the most specific scope). A
    catalog or a SKILL.md that was not read (holon.confined) is appended to `refused`."""
    kind = agent_kind(home) if kind is None else kind
    refused = [] if refused is None else refused
    chosen: dict[str, tuple[Path, str, list[str]]] = {}
    for scope, base, rel in roots(home, workspace_anchor, kind):
        if scope in chosen:
            continue
        try:
            names = confined.names(base, rel)
        except confined.Refused as exc:
            if exc.reason != "not_regular":  # a file where a catalog could be: not a catalog
                refused.append(exc)
            continue
        if names is not None:
            chosen[scope] = (base, rel, names)
    found: dict[str, Skill] = {}
    for scope in SCOPES:
        if scope in chosen:
            for skill in scan(*chosen[scope], scope, refused):
                found.setdefault(skill.name, skill)
    return [found[n] for n in sorted(found)]


def scan(
    base: Path, rel: str, names: list[str], scope: str, refused: list[confined.Refused]
) -> list[Skill]:
    """The skills of one catalog `base/rel` (its entry `names`): at most MAX_PER_ROOT, by name.
    Each SKILL.md is read beneath `base`; a skill directory leading out of its catalog is
    skipped (and named in `refused`)."""
    root = base / rel
    real_root = os.path.realpath(root)
    out: list[Skill] = []
    for name in names:
        if len(out) >= MAX_PER_ROOT:
            break
        path = os.path.join(root, name, "SKILL.md")
        if not _inside(os.path.realpath(path), real_root):
            detail = f"leads out of its catalog {root}"
            refused.append(confined.Refused(path, "symlink_escape", detail))
            continue
        try:
            found = confined.read(base, f"{rel}/{name}/SKILL.md", FRONT_MATTER_BYTES, truncate=True)
        except confined.Refused as exc:
            refused.append(exc)
            continue
        if found is None:
            continue
        meta, problem = front_matter(found.text)
        if meta.get("name") not in (None, name) and problem is None:
            problem = f"front matter name {safetext.one_line(meta['name'], 80)!r} is not {name!r}"
        description = safetext.one_line(meta.get("description", ""), MAX_DESCRIPTION)
        out.append(Skill(name, scope, description, path, os.fspath(root), problem))
    return out


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def front_matter(text: str) -> tuple[dict[str, str], str | None]:
    """({key: value}, problem) of a SKILL.md's front matter: top-level `key: value` lines between
    a first line `---` and the next `---`; indented lines (nested values of other keys) are
    skipped; `name` and `description` must be one-line values. No front matter -> ({}, problem)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, "no front matter (a first line ---)"
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        return {}, f"front matter is not closed by --- within {FRONT_MATTER_BYTES} bytes"
    meta: dict[str, str] = {}
    for n, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#") or line[:1] in (" ", "\t", "-"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not _KEY.fullmatch(key.strip()):
            return {}, f"front matter line {n} is not `key: value`"
        key, value = key.strip(), _unquote(value.strip())
        if key in ("name", "description"):
            if value in ("|", ">", "|-", ">-", ""):
                return {}, f"front matter {key} must be a one-line value (line {n})"
            meta[key] = value
    return meta, None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        if value[0] == "'":
            return inner.replace("''", "'")
        return inner.replace('\\"', '"').replace("\\\\", "\\")
    return value
