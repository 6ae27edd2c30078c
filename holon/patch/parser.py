"""Parse the unified diff subset V1 into FilePatch records (syntax only; no filesystem access).

Wide in, narrow out: `index`, `similarity index` and the mode lines of git's
extended headers are accepted and recorded as ignored metadata; copies,
binary patches, symlinks and submodules are refused; `rename from`/`rename
to` are the authority for renames.
"""

from __future__ import annotations

import re

from holon.patch.errors import patch_error
from holon.patch.hunks import read_hunks
from holon.patch.model import FilePatch, Hunk
from holon.patch.paths import header_path, normalise, rename_path
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
    "copy from ": "copy headers are not supported",
    "copy to ": "copy headers are not supported",
    "GIT binary patch": "binary patches are not supported",
    "Binary files ": "binary patches are not supported",
}
_SPECIAL_MODES = {
    "160000": "submodule patches are not supported",
    "120000": "symlink patches are not supported",
}
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
    _refuse_unsupported(first, line_no)
    if first.startswith("diff --git "):
        r.next()
        _git_headers(r, meta, rename)
    old: object = _UNSET
    new: object = _UNSET
    hunks: list[Hunk] = []
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
        raise patch_error(
            "unsupported_git_patch_feature",
            f"line {line_no}: a git file patch without "
            "'---'/'+++' lines must be a rename; mode-only changes and empty-file adds or "
            "deletes are outside the supported subset",
            line=line_no,
        )
    patch = _classify(old, new, rename, hunks, line_no, meta)
    _check_bodies(patch)
    return patch


def _refuse_unsupported(line: str, line_no: int) -> None:
    for prefix, why in _UNSUPPORTED.items():
        if line.startswith(prefix):
            raise patch_error(
                "unsupported_git_patch_feature",
                f"line {line_no}: {why} ({line[:80]!r})",
                line=line_no,
            )
    if line.startswith(("new file mode ", "deleted file mode ", "old mode ", "new mode ")):
        why = _SPECIAL_MODES.get(line.split()[-1])
        if why:
            raise patch_error(
                "unsupported_git_patch_feature", f"line {line_no}: {why} ({line!r})", line=line_no
            )


def _git_headers(r: Reader, meta: list[str], rename: dict[str, str]) -> None:
    """The extended header lines after `diff --git`, up to the `---` line or the next patch."""
    while not r.done:
        line = r.peek().rstrip("\r")
        if line.startswith(("--- ", "diff --git ", "@@")) or is_blank(line):
            return
        line_no = r.line_no
        r.next()
        _refuse_unsupported(line, line_no)
        if line.startswith("rename from "):
            rename["from"] = rename_path(line[len("rename from ") :])
        elif line.startswith("rename to "):
            rename["to"] = rename_path(line[len("rename to ") :])
        elif line.startswith(METADATA):
            meta.append(line)
        else:
            raise patch_error(
                "unsupported_git_patch_feature",
                f"line {line_no}: unsupported git header line {line[:80]!r}",
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
            f"{patch.path}: submodule patches are not supported",
            path=patch.path,
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
