"""ApplyPatch receipts and refusals for drift, empty files, mode changes and metadata-only
sections, checked against golden/receipts (rewrite with HOLON_UPDATE_GOLDEN=1 and review the
diff)."""

from __future__ import annotations

from golden_check import check_golden

from holon.patch.commit import commit
from holon.patch.errors import PatchError
from holon.patch.parser import parse_patch
from holon.patch.receipt import build_result, render, summary
from holon.patch.transaction import plan

LINES = "".join(f"line {i}\n" for i in range(1, 101))


def receipt(root, patch: str) -> str:
    changes = plan(root, root, parse_patch(patch))
    commit(changes)
    result = build_result(changes)
    return summary(result) + "\n" + render(result) + "\n"


def refusal(root, patch: str) -> str:
    try:
        plan(root, root, parse_patch(patch))
    except PatchError as exc:
        return f"{exc.kind}: {exc.message}\nhint: {exc.recovery_hint}\n"
    raise AssertionError("the patch applied")


def test_applied_receipt(tmp_path):
    (tmp_path / "f.txt").write_text(LINES)
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -7,3 +7,3 @@\n line 10\n-line 11\n+LINE 11\n line 12\n"
        "@@ -20,3 +20,3 @@\n line 80\n-line 81\n+LINE 81\n line 82\n"
        "diff --git a/py.typed b/py.typed\nnew file mode 100644\nindex 0000000..e69de29\n"
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    )
    out = receipt(tmp_path, patch)
    assert (tmp_path / "run.sh").stat().st_mode & 0o111 == 0  # mode lines are never applied
    (tmp_path / "tool.py").write_text("print()\n")
    (tmp_path / "tool.py").chmod(0o755)
    (tmp_path / "ok.sh").write_text("true\n")
    out += receipt(
        tmp_path,
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        "diff --git a/tool.py b/bin/tool\nsimilarity index 100%\nold mode 100755\n"
        "new mode 100644\nrename from tool.py\nrename to bin/tool\n"
        "diff --git a/ok.sh b/ok.sh\nold mode 100644\nnew mode 100755\n--- a/ok.sh\n+++ b/ok.sh\n"
        "@@ -1 +1 @@\n-true\n+false\n",
    )
    check_golden("receipts/apply_patch_drift_and_metadata.txt", out)


def test_refusals(tmp_path):
    (tmp_path / "f.txt").write_text("x\nsame\nend\n" + "y\n" * 4 + "same\nend\n")
    (tmp_path / "doc.md").write_text("one\ntwo\n")
    out = refusal(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -5,2 +5,2 @@\n-same\n+other\n end\n")
    out += refusal(tmp_path, "--- a/doc.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n")
    out += refusal(
        tmp_path,
        "diff --git a/logo.png b/logo.png\nindex 1234567..89abcde 100644\nGIT binary patch\n"
        "literal 5\nMc${NkU|?c^00RI600961\n\n",
    )
    out += refusal(
        tmp_path, "--- a/doc.md\n+++ b/doc.md\n@@ -2 +2 @@\n-one\n+ONE\n@@ -2,0 +3 @@\n+between\n"
    )
    (tmp_path / "g.txt").write_text("def f():\n    pass\n\n\n" * 4 + "x = 1\n" * 20)
    out += refusal(tmp_path, "--- a/g.txt\n+++ b/g.txt\n@@ -30,2 +30,3 @@\n \n+# new\n \n")
    check_golden("receipts/apply_patch_refusals.txt", out)
