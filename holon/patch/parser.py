"""Parse the unified diff subset V1 into FilePatch records (syntax only; no filesystem access).

Wide in, narrow out: `index`, `similarity index` and the mode lines of git's
extended headers are accepted and recorded in `ignored_metadata`, never applied;
a git section with no hunks creates or deletes an empty file (`new file mode`,
`deleted file mode`) or is metadata only (a mode change, which changes nothing);
copies, binary patches, symlinks and submodules are refused,
naming the section; `rename from`/`rename to` are the authority for renames.
"""

from __future__ import annotations

import re

from holon.patch.errors import patch_error
from holon.patch.hunks import read_hunks
from holon.patch.model import FilePatch, Hunk
from holon.patch.paths import git_header_path, header_path, normalise, rename_path
from holon.patch.reader import Reader, is_blank, split_patch

METADATA = (
    "index ",
    "similarity index ",
    "new file mode ",
    "deleted file mode ",
    "old mode ",
    "new mode ",
)
_UNSUPPORTED = {
    "copy from ": ("copy", "a copy"),
    "copy to ": ("copy", "a copy"),
    "GIT binary patch": ("binary", "a binary patch"),
    "Binary files ": ("binary", "a binary file change"),
}
_MODE_LINES = ("new file mode ", "deleted file mode ", "old mode ", "new mode ", "index ")
_SPECIAL_MODES = {
    "160000": ("submodule", "a submodule (mode 160000)"),
    "120000": ("symlink", "a symlink (mode 120000)"),
}
_BINARY_FILES = re.compile(r"Binary files (.+) and (.+) differ$")
_SUBMODULE_LINE = re.compile(r"Subproject commit [0-9a-f]{7,40}(-dirty)?$")
_UNSET = object()


def parse_patch(text: str) -> list[FilePatch]:
    """Every file patch of `text`, in order; raises PatchError with a unified diff error kind."""
    if not text.strip():
        raise patch_error("empty_patch", "the patch is empty")
    r = Reader(split_patch(text))
    patches: list[FilePatch] = []
    r.skip_blank()
    while not r.done:
        patches.append(_file_patch(r))
        r.skip_blank()
    _check_duplicates(patches)
    return patches


def _file_patch(r: Reader) -> FilePatch:
    line_no, first = r.line_no, r.peek().rstrip("\r")
    meta: list[str] = []
    rename: dict[str, str] = {}
    git_path: str | None = None
    if first.startswith("diff --git "):
        r.next()
        git_path = git_header_path(first[len("diff --git ") :])
        _git_headers(r, meta, rename, git_path or first[len("diff --git ") :])
    else:
        _refuse_unsupported(first, line_no, _binary_files_path(first))
    old: object = _UNSET
    new: object = _UNSET
    hunks: list[Hunk] = []
    if git_path is not None and not rename and _starts_another_file(r, git_path):
        return _metadata_only(first, git_path, meta, line_no)
    if r.peek().startswith("--- "):
        old, new = _file_headers(r)
        label = str(new or old or "")
        hunks = read_hunks(r, label)
        if not hunks:
            raise patch_error(
                "invalid_hunk_header",
                f"{label}: line {r.line_no}: expected a hunk header "
                "'@@ -old_start,old_count +new_start,new_count @@' after the '+++' line",
                path=label,
                line=r.line_no,
            )
    elif not first.startswith("diff --git "):
        raise patch_error(
            "missing_file_header",
            f"line {line_no}: expected '--- <old path>' followed by "
            f"'+++ <new path>', found {first[:80]!r}",
            line=line_no,
        )
    elif not rename:
        return _metadata_only(first, git_path, meta, line_no)
    patch = _classify(old, new, rename, hunks, line_no, meta)
    _check_bodies(patch)
    return patch


def _starts_another_file(r: Reader, path: str) -> bool:
    """Whether the `---`/`+++` pair ahead names neither side of this git section's path: then this
    section has no hunks and the pair starts the next file patch (a plain diff after git's)."""
    if not (r.peek().startswith("--- ") and r.peek(1).startswith("+++ ")):
        return False
    sides = {header_path(r.peek()[4:]), header_path(r.peek(1)[4:])} - {None}
    return bool(sides) and normalise(path) not in {normalise(str(p)) for p in sides}


def _metadata_only(first: str, path: str | None, meta: list[str], line_no: int) -> FilePatch:
    """A git section without hunks: an empty file added or deleted, or metadata only."""
    if path is None or not meta:
        why = (
            "it names two different paths"
            if path is None
            else "it has neither hunks nor git metadata lines"
        )
        raise patch_error(
            "missing_file_header",
            f"line {line_no}: {first[:80]!r} must be followed by '--- <old path>' and "
            f"'+++ <new path>' with hunks, or be a rename; {why}",
            line=line_no,
        )
    if any(line.startswith("new file mode ") for line in meta):
        return FilePatch("add", None, path, [], line_no, meta)
    if any(line.startswith("deleted file mode ") for line in meta):
        return FilePatch("delete", path, None, [], line_no, meta)
    return FilePatch("metadata", path, path, [], line_no, meta)


def _refuse_unsupported(line: str, line_no: int, path: str | None) -> None:
    """PatchError naming the section (its path, what it is) when `line` marks a feature outside
    the subset: a copy, a binary patch, a symlink or a submodule."""
    found = next((v for prefix, v in _UNSUPPORTED.items() if line.startswith(prefix)), None)
    if found is None and line.startswith(_MODE_LINES):
        words = line.split()
        mode = words[-1] if not line.startswith("index ") or len(words) == 3 else ""
        found = _SPECIAL_MODES.get(mode)
    if found is None:
        return
    feature, what = found
    where = f"{path}: " if path else ""
    raise patch_error(
        "unsupported_git_patch_feature",
        f"{where}line {line_no}: this section is {what} ({line[:80]!r}), which ApplyPatch does "
        "not apply; it changes text files only",
        path=path,
        line=line_no,
        feature=feature,
    )


def _binary_files_path(line: str) -> str | None:
    """The path of a bare `Binary files a/x and b/x differ` line (the new one unless deleted)."""
    match = _BINARY_FILES.match(line)
    if match is None:
        return None
    old, new = header_path(match.group(1)), header_path(match.group(2))
    return new if new is not None else old


def _git_headers(r: Reader, meta: list[str], rename: dict[str, str], path: str) -> None:
    """The extended header lines after `diff --git`, up to the `---` line or the next patch."""
    while not r.done:
        line = r.peek().rstrip("\r")
        if line.startswith(("--- ", "diff --git ", "@@")) or is_blank(line):
            return
        line_no = r.line_no
        r.next()
        _refuse_unsupported(line, line_no, path)
        if line.startswith("rename from "):
            rename["from"] = rename_path(line[len("rename from ") :])
        elif line.startswith("rename to "):
            rename["to"] = rename_path(line[len("rename to ") :])
        elif line.startswith(METADATA):
            meta.append(line)
        else:
            raise patch_error(
                "unsupported_git_patch_feature",
                f"{path}: line {line_no}: unsupported git header line {line[:80]!r}",
                path=path,
                line=line_no,
            )


def _file_headers(r: Reader) -> tuple[str | None, str | None]:
    line_no = r.line_no
    old = header_path(r.next()[4:])
    if not r.peek().startswith("+++ "):
        raise patch_error(
            "missing_file_header",
            f"line {line_no + 1}: '--- <old path>' must be followed by "
            f"'+++ <new path>', found {r.peek()[:80]!r}",
            line=line_no + 1,
        )
    new = header_path(r.next()[4:])
    for path in (old, new):
        if path is not None and not path.strip():
            raise patch_error(
                "missing_file_header", f"line {line_no}: empty path in file header", line=line_no
            )
    return old, new


def _classify(
    old: object,
    new: object,
    rename: dict[str, str],
    hunks: list[Hunk],
    line_no: int,
    meta: list[str],
) -> FilePatch:
    if rename:
        if "from" not in rename or "to" not in rename:
            raise patch_error(
                "rename_path_mismatch",
                f"line {line_no}: a rename needs both 'rename from' and 'rename to'",
                line=line_no,
            )
        if old is not _UNSET and (old != rename["from"] or new != rename["to"]):
            raise patch_error(
                "rename_path_mismatch",
                f"line {line_no}: 'rename from {rename['from']}' / "
                f"'rename to {rename['to']}' disagree with '--- {old}' / '+++ {new}'",
                line=line_no,
                rename_from=rename["from"],
                rename_to=rename["to"],
                old_path=old,
                new_path=new,
            )
        return FilePatch("rename", rename["from"], rename["to"], hunks, line_no, meta)
    assert isinstance(old, (str, type(None))) and isinstance(new, (str, type(None)))
    if old is None and new is None:
        raise patch_error(
            "missing_file_header",
            f"line {line_no}: '---' and '+++' are both /dev/null",
            line=line_no,
        )
    if old is None:
        return FilePatch("add", None, new, hunks, line_no, meta)
    if new is None:
        return FilePatch("delete", old, None, hunks, line_no, meta)
    if normalise(old) != normalise(new):
        raise patch_error(
            "path_mismatch_without_rename",
            f"line {line_no}: '--- {old}' and '+++ {new}' "
            "name different files but the patch has no 'rename from'/'rename to' headers",
            line=line_no,
            old_path=old,
            new_path=new,
        )
    return FilePatch("modify", old, new, hunks, line_no, meta)


def _check_bodies(patch: FilePatch) -> None:
    lines = [line for hunk in patch.hunks for line in hunk.lines]
    if lines and all(_SUBMODULE_LINE.match(line.text) for line in lines):
        raise patch_error(
            "unsupported_git_patch_feature",
            f"{patch.path}: this section is a submodule ('Subproject commit' lines), which "
            "ApplyPatch does not apply; it changes text files only",
            path=patch.path,
            feature="submodule",
        )
    banned = {"add": " -", "delete": "+"}.get(patch.op, "")
    for hunk in patch.hunks:
        if any(line.tag in banned for line in hunk.lines):
            what = "only '+' lines" if patch.op == "add" else "no '+' lines"
            raise patch_error(
                "invalid_hunk_line",
                f"{patch.path}: hunk at line {hunk.line_no}: a "
                f"{'new' if patch.op == 'add' else 'deleted'} file's hunks may contain {what}",
                path=patch.path,
                line=hunk.line_no,
            )


def _check_duplicates(patches: list[FilePatch]) -> None:
    seen: dict[str, int] = {}
    for patch in patches:
        for path in {normalise(p) for p in patch.touched}:
            if path in seen:
                raise patch_error(
                    "duplicate_file_patch",
                    f"{path}: appears in the file patches at lines "
                    f"{seen[path]} and {patch.line_no}",
                    path=path,
                    lines=[seen[path], patch.line_no],
                )
            seen[path] = patch.line_no
