"""ApplyPatch's canonical result, summary line and textual receipt, built from planned changes."""

from __future__ import annotations

from pathlib import Path

from holon.patch.model import BodyLine, FilePatch, Hunk
from holon.patch.receipt import build_result, render, summary
from holon.patch.transaction import Change


def fp(op, old, new, hunks=1, meta=()):
    hs = [Hunk(1, 1, 1, 1, "", [BodyLine("+", "x")], 1) for _ in range(hunks)]
    return FilePatch(op, old, new, hs, 1, list(meta))


def test_build_result_groups_changes_and_normalises_paths():
    diag = {"kind": "hunk_offset", "path": "src/a.py", "hunk": 1, "message": "moved"}
    changes = [
        Change(
            fp("modify", "./src//a.py", "./src//a.py", hunks=2),
            dst=Path("/r/src/a.py"),
            diagnostics=[diag],
        ),
        Change(fp("add", None, "docs/new.md", meta=["new file mode 100755"])),
        Change(fp("delete", "old.txt", None)),
        Change(fp("rename", "x/../from.txt", "to.txt", hunks=0, meta=["similarity index 90%"])),
    ]
    result = build_result(changes)
    assert result == {
        "added": ["docs/new.md"],
        "modified": ["src/a.py"],
        "deleted": ["old.txt"],
        "renamed": [{"from": "from.txt", "to": "to.txt"}],
        "metadata_only": [],
        "hunk_counts": {"src/a.py": 2, "docs/new.md": 1, "old.txt": 1, "to.txt": 0},
        "diagnostics": [diag],
        "ignored_metadata": [
            {"path": "docs/new.md", "line": "new file mode 100755"},
            {"path": "to.txt", "line": "similarity index 90%"},
        ],
    }
    assert summary(result) == (
        "applied patch: 4 files changed (1 modified, 1 added, 1 deleted, 1 renamed)"
    )
    assert render(result) == (
        "Applied patch: M src/a.py (2 hunks), A docs/new.md, D old.txt, R from.txt -> to.txt\n"
        "note: src/a.py: moved [hunk_offset]\n"
        "ignored (not applied): new file mode 100755 (docs/new.md)\n"
        "ignored (not applied): similarity index 90% (to.txt)"
    )


def test_single_file_summary_and_hunk_counts_on_renames():
    result = build_result([Change(fp("rename", "a", "b", hunks=1))])
    assert summary(result) == "applied patch: 1 file changed (1 renamed)"
    assert render(result) == "Applied patch: R a -> b (1 hunk)"
    result = build_result([Change(fp("modify", "m", "m", hunks=3))])
    assert render(result) == "Applied patch: M m (3 hunks)"


def test_empty_adds_and_metadata_only_sections():
    changes = [
        Change(fp("add", None, "py.typed", hunks=0, meta=["new file mode 100644"])),
        Change(fp("metadata", "run.sh", "run.sh", hunks=0, meta=["old mode 100644"])),
    ]
    result = build_result(changes)
    assert result["added"] == ["py.typed"] and result["metadata_only"] == ["run.sh"]
    assert result["hunk_counts"] == {"py.typed": 0, "run.sh": 0}
    assert summary(result) == "applied patch: 1 file changed (1 added, 1 metadata only)"
    assert render(result) == (
        "Applied patch: A py.typed (empty), run.sh unchanged (metadata only)\n"
        "ignored (not applied): new file mode 100644 (py.typed)\n"
        "ignored (not applied): old mode 100644 (run.sh)"
    )
    only = build_result([changes[1]])
    assert summary(only) == "applied patch: 0 files changed (1 metadata only)"


def test_mode_lines_are_ignored_metadata_never_mode_changes():
    mode_only = ["old mode 100644", "new mode 100755"]
    changes = [
        Change(fp("add", None, "run.sh", meta=["new file mode 100755", "index 0000000..e69de29"])),
        Change(fp("metadata", "bin/x", "bin/x", hunks=0, meta=mode_only)),
    ]
    result = build_result(changes)
    assert result["metadata_only"] == ["bin/x"] and "mode_changes" not in result
    assert result["ignored_metadata"] == [
        {"path": "run.sh", "line": "new file mode 100755"},
        {"path": "run.sh", "line": "index 0000000..e69de29"},
        {"path": "bin/x", "line": "old mode 100644"},
        {"path": "bin/x", "line": "new mode 100755"},
    ]
    assert render(result) == (
        "Applied patch: A run.sh, bin/x unchanged (metadata only)\n"
        "ignored (not applied): new file mode 100755 (run.sh)\n"
        "ignored (not applied): index 0000000..e69de29 (run.sh)\n"
        "ignored (not applied): old mode 100644 (bin/x)\n"
        "ignored (not applied): new mode 100755 (bin/x)"
    )
