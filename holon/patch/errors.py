"""ApplyPatch error kinds, each with a recovery hint naming the unified diff rule that failed."""

from __future__ import annotations

from typing import Any

_FILE_HEADER = "'--- a/<path>' followed by '+++ b/<path>'"
_RENAME_FORM = (
    "diff --git a/<old> b/<new>\\nrename from <old>\\nrename to <new>\\n"
    "--- a/<old>\\n+++ b/<new>\\n@@ -a,b +c,d @@ ..."
)

HINTS: dict[str, str] = {
    "empty_patch": (
        f"The patch must be unified diff text: {_FILE_HEADER}, then one or more "
        "'@@ -old_start,old_count +new_start,new_count @@' hunks."
    ),
    "missing_file_header": (
        f"Every file patch starts with {_FILE_HEADER} (use /dev/null as the old path "
        "to add a file, as the new path to delete one); only blank lines may "
        "surround the patch. Do not use the old '*** Begin Patch' format."
    ),
    "invalid_hunk_header": (
        "Every file patch needs at least one hunk, and every hunk starts with "
        "'@@ -old_start,old_count +new_start,new_count @@' (counts optional); "
        "line numbers are hints, so give your best estimate rather than omitting them."
    ),
    "invalid_hunk_line": (
        "Every hunk line starts with ' ' (context), '-' (removed) or '+' (added), or is "
        "'\\ No newline at end of file'; an added file has only '+' lines and a deleted "
        "file has no '+' lines."
    ),
    "unsupported_git_patch_feature": (
        "ApplyPatch changes text files only: binary patches, copy headers, symlinks (mode 120000) "
        "and submodules (mode 160000) are not supported; leave that section out of the patch "
        "('index', 'similarity index' and mode lines are accepted and ignored: ApplyPatch never "
        "changes permissions)."
    ),
    "rename_path_mismatch": (
        "A rename needs both 'rename from <old>' and 'rename to <new>' (paths without "
        "a/ b/ prefixes), and '--- a/<old>' / '+++ b/<new>', when present, must name "
        "the same two paths."
    ),
    "path_mismatch_without_rename": (
        "'---' and '+++' must name the same file unless the patch is a rename. "
        f"To rename, write: {_RENAME_FORM}"
    ),
    "duplicate_file_patch": (
        "Each path may appear in only one file patch per call: merge all hunks for "
        f"that file under a single {_FILE_HEADER} header, in file order."
    ),
    "path_escape": (
        "Patch paths are relative to the working directory and must stay inside the "
        "workspace: no absolute paths, no '..' leading outside, no symlinks pointing outside."
    ),
    "missing_file": (
        f"{_FILE_HEADER} must name an existing regular file; to create a file use "
        "'--- /dev/null' and '+++ b/<path>' with only '+' lines."
    ),
    "existing_file": (
        "'--- /dev/null' (or 'rename to') must name a path that does not exist yet; to change "
        f"an existing file use {_FILE_HEADER} with context lines."
    ),
    "context_not_found": (
        "The context (' ') and removed ('-') lines of every hunk must match the current "
        "file exactly and in order, hunks in file order without overlap; a hunk that only adds "
        "lines needs ' ' context lines unless its line number is certain. Re-read the target "
        "region and rebuild the hunk from the file's current text."
    ),
    "ambiguous_context": (
        "The hunk's context and removed lines match several places, none at its '@@ -old_start' "
        "line, and neither nearness alone nor the file's other hunks may choose one: add more "
        "unchanged lines above and below the change as ' ' context lines (lines with text, not "
        "only blank lines or braces) until they match exactly one place, or correct the line "
        "number."
    ),
    "partial_delete": (
        "A file patch with '+++ /dev/null' deletes the whole file, so its '-' lines must be the "
        "file's entire current content (re-read it), and one without hunks deletes only an empty "
        "file. To remove some lines and keep the file, use '--- a/<path>' and '+++ b/<path>'."
    ),
    "unsupported_encoding": (
        "ApplyPatch edits UTF-8 text files only; this file is not valid UTF-8 or "
        "contains NUL bytes, so it was left untouched."
    ),
    "file_changed": (
        "Another writer (an agent, an editor or a command) changed this file after ApplyPatch read "
        "it, so nothing was changed and their edit is kept. Re-read the file and make the patch "
        "again from its current text."
    ),
    "file_busy": (
        "Another ApplyPatch call held these files' directories for too long; nothing was changed. "
        "Retry the same patch."
    ),
    "io_error": (
        "The patch was valid but the filesystem refused the change; nothing was written. Check "
        "permissions and free space, then retry."
    ),
}


RETRYABLE = frozenset({"io_error", "file_busy"})  # the same patch may apply on a retry


class PatchError(Exception):
    """A patch that cannot be applied: a stable `kind`, a message, details and the rule's
    recovery hint.

    The ApplyPatch tool turns it into the tool error envelope; the engine knows nothing of tools.
    """

    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details
        self.recovery_hint = HINTS[kind]
        self.retryable = kind in RETRYABLE


def patch_error(kind: str, message: str, **details: Any) -> PatchError:
    """A PatchError of `kind` with its rule hint; None-valued details are dropped."""
    kept = {k: v for k, v in details.items() if v is not None}
    return PatchError(kind, message, kept or None)
