"""Model-facing guidance for ApplyPatch, per tool exposure (freeform grammar or JSON `patch`)."""

from __future__ import annotations

from typing import Literal

_INTRO = """Use ApplyPatch for file mutations.

The patch body must be unified diff text. Do not use the old `*** Begin Patch` / \
`*** Update File:` format.
"""

_RULES = """
Each file patch is `--- a/<path>` then `+++ b/<path>` then one or more \
`@@ -old_start,old_count +new_start,new_count @@` hunks whose lines start with ` ` (context), `-` \
(removed) or `+` (added). Paths are relative to the working directory. Add a file with \
`--- /dev/null`, delete one with `+++ /dev/null`, and rename with `diff --git a/<old> b/<new>`, \
`rename from <old>`, `rename to <new>` (then `---`/`+++` and hunks if the content changes too). \
Put all hunks for one file in a single file patch, in file order.

Give line numbers from the file as you last read it. Context and removed lines must match the file \
exactly; include enough unchanged context for each hunk to match one place. If ApplyPatch reports \
that context was not found, reread that region of the file before retrying.
"""

_JSON = """
Call ApplyPatch with a JSON object whose `patch` string holds the unified diff:
{"patch":"--- a/path\\n+++ b/path\\n@@ -1,1 +1,1 @@\\n-old\\n+new\\n"}
"""

_FREEFORM = """
ApplyPatch is a freeform tool: emit the unified diff body directly as its input, with no JSON \
wrapper and no code fence:
--- a/path
+++ b/path
@@ -1,1 +1,1 @@
-old
+new
"""


def prompt_guidance(exposure: Literal["freeform", "json"]) -> str:
    """The ApplyPatch section of the system prompt for a provider exposing the tool as
    `exposure`."""
    if exposure == "freeform":
        return _INTRO + _FREEFORM + _RULES
    if exposure == "json":
        return _INTRO + _JSON + _RULES
    raise ValueError(f"unknown ApplyPatch exposure {exposure!r}; expected 'freeform' or 'json'")
