"""A template's `skills.json`: the skills `holon init` installs into the new home's `skills/`.

    {"skill_refs": ["/abs/path/to/skill-dir", ...]}

A ref is an absolute local directory holding a SKILL.md, installed as `skills/<its name>/`; a
builtin ref (a bare name, or `builtin:<name>`) names a skill shipped with holon in
`holon/home/skills/` (background-tasks, delegate-work, git-change); a URL fails closed with
`unsupported_skill_source` (holon fetches nothing).
Anything else wrong (not JSON, an unknown field, a missing directory, no SKILL.md, a name twice,
a symlink leading out of the skill, too many files) is `invalid_template_skills`. Everything is
checked before the template is copied, and init copies into its staging directory, so a failure
leaves nothing half-made.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from holon import jsonfile
from holon.errors import UsageError

MAX_REFS = 64
MAX_FILES = 2000  # per skill
MAX_BYTES = 50 << 20  # per skill
MAX_JSON_BYTES = 1 << 20
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
FIELDS = ("skill_refs",)
BUILTIN_SKILLS = Path(__file__).parent / "skills"  # the skills holon ships (`builtin:<name>`)


def builtin_names() -> list[str]:
    return sorted(p.name for p in BUILTIN_SKILLS.iterdir() if (p / "SKILL.md").is_file())


def _invalid(message: str, hint: str | None = None) -> UsageError:
    return UsageError(
        message,
        kind="invalid_template_skills",
        hint=hint or 'skills.json is {"skill_refs": ["/absolute/path/to/a/skill-dir", ...]}',
    )


def refs(source: Path) -> list[Path]:
    """The skill directories `source/skills.json` names, checked; [] without the file."""
    path = source / "skills.json"
    try:
        doc = jsonfile.object_of(path, MAX_JSON_BYTES)
    except (ValueError, OSError) as exc:
        raise _invalid(f"{path} {exc}") from None
    if doc is None:
        return []
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise _invalid(f"{path} has unknown field(s): {', '.join(map(repr, unknown))}")
    found = doc.get("skill_refs", [])
    if not isinstance(found, list) or len(found) > MAX_REFS:
        raise _invalid(f"{path}: skill_refs must be a list of at most {MAX_REFS} refs")
    dirs = [_resolve(ref, i) for i, ref in enumerate(found)]
    taken = _names_in(source / "skills")
    for d in dirs:
        if d.name in taken:
            raise _invalid(
                f"{path}: skill {d.name!r} is named twice (by a ref or the template's skills/)",
                hint="each skill name may appear once; rename one of the directories",
            )
        taken.add(d.name)
    for d in dirs:
        _check_tree(d)
    return dirs


def _names_in(skills_dir: Path) -> set[str]:
    try:
        return {e.name for e in os.scandir(skills_dir) if not e.name.startswith(".")}
    except OSError:
        return set()


def _resolve(ref: object, i: int) -> Path:
    """The directory of ref number `i`, or a UsageError saying what is wrong with it."""
    where = f"skills.json skill_refs[{i}]"
    if not isinstance(ref, str) or not ref:
        raise _invalid(f"{where} must be a non-empty string")
    if "://" in ref:
        raise UsageError(
            f"{where}: remote skill sources are not supported: {ref[:200]}",
            kind="unsupported_skill_source",
            hint="clone the skill and name its local directory (an absolute path) instead",
        )
    if not os.path.isabs(ref):
        if "/" in ref or ref.startswith("."):
            raise _invalid(f"{where}: a local skill ref must be an absolute path, not {ref!r}")
        name = ref.removeprefix("builtin:")
        if not NAME.fullmatch(name) or not (BUILTIN_SKILLS / name / "SKILL.md").is_file():
            raise _invalid(
                f"{where}: unknown builtin skill {name[:100]!r}",
                hint=f"builtin skills: {', '.join(builtin_names())}; or name a local skill "
                "directory by its absolute path",
            )
        return BUILTIN_SKILLS / name
    path = Path(os.path.normpath(ref))
    if not path.is_dir():
        raise _invalid(f"{where}: {path} is not a directory")
    if not (path / "SKILL.md").is_file():
        raise _invalid(
            f"{where}: {path} has no SKILL.md", hint="a skill is a directory with SKILL.md"
        )
    if not NAME.fullmatch(path.name):
        raise _invalid(
            f"{where}: {path.name[:100]!r} is not a usable skill name",
            hint="a skill directory name uses letters, digits, '.', '_' and '-' (at most 64)",
        )
    return path


def _check_tree(skill: Path) -> None:
    """Regular files, directories and symlinks that stay inside the skill (relative ones) only;
    bounded in files and bytes."""
    files = size = 0
    for top, dirs, names in os.walk(skill):
        for name in dirs + names:
            p = os.path.join(top, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(p)
                inside = os.path.normpath(os.path.join(top, target))
                if os.path.isabs(target) or not (inside + os.sep).startswith(str(skill) + os.sep):
                    raise _invalid(
                        f"{p} links outside the skill ({target})",
                        hint="a skill may hold relative symlinks to its own files only",
                    )
            elif not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise _invalid(f"{p} is not a regular file or directory")
            else:
                files += 1
                size += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if files > MAX_FILES or size > MAX_BYTES:
            raise _invalid(
                f"skill {skill} is too large (more than {MAX_FILES} files or {MAX_BYTES} bytes)"
            )


def install(dirs: list[Path], skills_dir: Path) -> None:
    """Copy each checked skill directory to `skills_dir/<name>/` (links kept as links)."""
    if not dirs:
        return
    skills_dir.mkdir(exist_ok=True)
    for d in dirs:
        shutil.copytree(d, skills_dir / d.name, symlinks=True)
