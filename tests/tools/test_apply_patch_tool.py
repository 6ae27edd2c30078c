"""ApplyPatch end to end through the registry:
apply rules, file fidelity, path safety, atomicity."""

import os
import stat
from pathlib import Path

import pytest
from patch_corpus import SEMANTIC_INVALID, SYNTAX_INVALID, VALID

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.patch import commit as patch_commit
from holon.tools.base import ToolContext
from holon.tools.registry import call, get


def ctx_for(root: Path, cwd: Path | None = None) -> ToolContext:
    return ToolContext(agent=Agent(Home(root, "t")), execution_root=root, cwd=cwd or root)


def apply(root: Path, patch: str, cwd: Path | None = None):
    outcome = call(ctx_for(root, cwd), "ApplyPatch", {"patch": patch})
    return outcome.envelope, outcome.rendered


def ok(root: Path, patch: str, cwd: Path | None = None) -> dict:
    env, receipt = apply(root, patch, cwd)
    assert env["status"] == "success", receipt
    assert env["error"] is None and receipt.startswith("Applied patch: ")
    return env["result"]


def snapshot(root: Path) -> dict:
    """Every path under root with its kind, mode and content (or link target)."""
    tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                tree[str(path.relative_to(root))] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                tree[str(path.relative_to(root))] = ("dir", st.st_mode & 0o7777)
            else:
                tree[str(path.relative_to(root))] = ("file", st.st_mode & 0o7777, path.read_bytes())
    return tree


def fails(root: Path, patch: str, kind: str, cwd: Path | None = None) -> dict:
    before = snapshot(root)
    env, receipt = apply(root, patch, cwd)
    assert env["status"] == "error" and env["result"] is None, receipt
    assert env["error"]["kind"] == kind, env["error"]
    assert (
        env["error"]["recovery_hint"] and f'"kind": "{kind}"' in receipt and '"hint": ' in receipt
    )
    assert snapshot(root) == before  # the tree is untouched on every error
    return env["error"]


def write(root: Path, name: str, data: str | bytes, mode: int = 0o644) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    path.chmod(mode)
    return path


LINES = "".join(f"line {i}\n" for i in range(1, 41))


def test_modify_with_exact_line_numbers(tmp_path):
    write(tmp_path, "src/main.rs", "fn main() {\n    old_call();\n}\n")
    result = ok(tmp_path, VALID["modify"])
    assert (tmp_path / "src/main.rs").read_text() == "fn main() {\n    new_call();\n}\n"
    assert result["modified"] == ["src/main.rs"] and result["hunk_counts"] == {"src/main.rs": 1}
    assert result["diagnostics"] == [] and result["ignored_metadata"] == []


def test_line_number_drift_applies_by_context_and_is_reported(tmp_path):
    write(tmp_path, "f.txt", LINES)
    result = ok(
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -10,3 +10,3 @@\n line 20\n-line 21\n+LINE 21\n line 22\n"
        "@@ -20,2 +20,2 @@\n-line 31\n+LINE 31\n line 32\n",
    )
    text = (tmp_path / "f.txt").read_text()
    assert "LINE 21\n" in text and "LINE 31\n" in text and text.count("\n") == 40
    assert [(d["kind"], d["hunk"]) for d in result["diagnostics"]] == [
        ("hunk_offset", 1),
        ("hunk_offset", 2),
    ]
    assert "+10 lines from its header" in result["diagnostics"][0]["message"]


def test_wrong_counts_are_diagnostics_not_failures(tmp_path):
    write(tmp_path, "f.txt", "a\nb\nc\n")
    env, receipt = apply(tmp_path, VALID["wrong_counts"])
    assert env["status"] == "success"
    assert (tmp_path / "f.txt").read_text() == "a\nB\nc\n"
    [diag] = env["result"]["diagnostics"]
    assert diag == {
        "kind": "hunk_count_mismatch",
        "path": "f.txt",
        "hunk": 1,
        "message": "hunk 1: header @@ -1,9 +1,9 @@ but the body has 3 old and 3 new lines; "
        "applied by its body",
    }
    assert receipt == (
        "Applied patch: M f.txt (1 hunk)\nnote: f.txt: "
        + diag["message"]
        + " [hunk_count_mismatch]"
    )


def test_missing_context_reports_nearest_lines_and_divergence(tmp_path):
    write(tmp_path, "f.txt", LINES)
    err = fails(
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -11,3 +11,3 @@\n line 11\n-line twelve\n+x\n line 13\n",
        "context_not_found",
    )
    details = err["details"]
    assert details["first_divergence"] == {
        "hunk_line": 2,
        "line": 12,
        "expected": "line twelve",
        "found": "line 12",
    }
    assert {"line": 12, "text": "line 12"} in details["nearest_lines"]
    assert details["nearest_lines"][0] == {"line": 9, "text": "line 9"}
    assert "first difference at line 12" in err["message"]


def test_ambiguous_context_lists_candidates_with_distances(tmp_path):
    write(tmp_path, "f.txt", "same\nend\nq\nr\nsame\nend\n")
    err = fails(  # two matches, each 2 lines from the hinted line 3: neither is nearer
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -3,2 +3,2 @@\n-same\n+other\n end\n",
        "ambiguous_context",
    )
    assert err["details"]["candidates"] == [
        {"line": 1, "distance": -2},
        {"line": 5, "distance": 2},
    ]


def test_several_matches_none_at_the_hint_are_refused_with_every_candidate(tmp_path):
    text = "x\nsame\nend\ny\nsame\nend\nz\nsame\nend\n"
    write(tmp_path, "f.txt", text)
    err = fails(
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-same\n+other\n end\n",
        "ambiguous_context",
    )
    assert (tmp_path / "f.txt").read_text() == text  # not the nearest: nothing singles it out
    assert err["details"]["matches_in_file"] == 3
    assert "2 (+1), 5 (+4), 8 (+7)" in err["message"]


def test_hinted_position_wins_among_duplicates(tmp_path):
    write(tmp_path, "f.txt", "x\nsame\nend\ny\nsame\nend\n")
    result = ok(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -5,2 +5,2 @@\n-same\n+other\n end\n")
    assert (tmp_path / "f.txt").read_text() == "x\nsame\nend\ny\nother\nend\n"
    assert result["diagnostics"] == []


def test_earlier_hunk_offset_guides_later_hunks(tmp_path):
    write(tmp_path, "f.txt", "head\nhead\n" + "a\nsame\n" * 2)
    # both hunks are 2 lines off; the second's context appears twice, the corrected hint picks one
    ok(
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-head\n+HEAD\n head\n"
        "@@ -3,2 +3,2 @@\n-a\n+A\n same\n",
    )
    assert (tmp_path / "f.txt").read_text() == "HEAD\nhead\nA\nsame\na\nsame\n"


def test_trailing_whitespace_relaxed_match(tmp_path):
    write(tmp_path, "f.txt", "a  \nb\t\nc\n")
    result = ok(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert (tmp_path / "f.txt").read_text() == "a  \nB\nc\n"
    assert [d["kind"] for d in result["diagnostics"]] == ["whitespace_relaxed_match"]


def test_hunks_out_of_order_are_refused(tmp_path):
    write(tmp_path, "f.txt", LINES)
    err = fails(
        tmp_path,
        "--- a/f.txt\n+++ b/f.txt\n@@ -30 +30 @@\n-line 30\n+X\n@@ -5 +5 @@\n-line 5\n+Y\n",
        "context_not_found",
    )
    assert "file order" in err["message"]


def test_add_delete_and_metadata_applied(tmp_path):
    write(tmp_path, "docs/old.md", "old line 1\nold line 2\nold line 3\n")
    patch = VALID["add"] + VALID["delete"] + VALID["git_add_with_metadata"]
    env, receipt = apply(tmp_path, patch)
    result = env["result"]
    assert (tmp_path / "docs/new.md").read_text() == "line 1\nline 2\nline 3\n"
    assert not (tmp_path / "docs/old.md").exists()
    assert (
        tmp_path / "run.sh"
    ).stat().st_mode & 0o7777 == 0o644  # new file mode 100755: not applied
    assert (tmp_path / "docs/new.md").stat().st_mode & 0o7777 == 0o644
    assert result["added"] == ["docs/new.md", "run.sh"] and result["deleted"] == ["docs/old.md"]
    assert "mode_changes" not in result
    assert result["ignored_metadata"] == [
        {"path": "run.sh", "line": "new file mode 100755"},
        {"path": "run.sh", "line": "index 0000000..e69de29"},
    ]
    assert receipt == (
        "Applied patch: A docs/new.md, A run.sh, D docs/old.md\n"
        "ignored (not applied): new file mode 100755 (run.sh)\n"
        "ignored (not applied): index 0000000..e69de29 (run.sh)"
    )


def test_mode_lines_on_modify_are_recorded_and_never_chmod(tmp_path):
    write(tmp_path, "f.txt", "a\n")
    result = ok(tmp_path, VALID["git_modify_mode_change"])
    assert (tmp_path / "f.txt").stat().st_mode & 0o7777 == 0o644
    assert [m["line"] for m in result["ignored_metadata"]][:2] == [
        "old mode 100644",
        "new mode 100755",
    ]


def test_an_edited_executable_stays_executable(tmp_path):
    write(tmp_path, "f.txt", "a\n", mode=0o755)
    ok(tmp_path, VALID["git_modify_mode_change"].replace("new mode 100755", "new mode 100644"))
    assert (tmp_path / "f.txt").stat().st_mode & 0o7777 == 0o755


def test_delete_verifies_content(tmp_path):
    write(tmp_path, "docs/old.md", "something else\n")
    fails(tmp_path, VALID["delete"], "context_not_found")


def test_rename_only_and_rename_with_edits(tmp_path):
    write(tmp_path, "old.txt", "line 1\nold line\nline 3\n", mode=0o755)
    result = ok(tmp_path, VALID["rename_only"])
    assert (
        not (tmp_path / "old.txt").exists()
        and (tmp_path / "new.txt").read_text() == "line 1\nold line\nline 3\n"
    )
    assert result["renamed"] == [{"from": "old.txt", "to": "new.txt"}] and result[
        "hunk_counts"
    ] == {"new.txt": 0}
    os.rename(tmp_path / "new.txt", tmp_path / "old.txt")
    _, receipt = apply(tmp_path, VALID["rename_with_edits"])
    assert (tmp_path / "new.txt").read_text() == "line 1\nnew line\nline 3\n" and not (
        tmp_path / "old.txt"
    ).exists()
    assert (tmp_path / "new.txt").stat().st_mode & 0o7777 == 0o755
    assert receipt == "Applied patch: R old.txt -> new.txt (1 hunk)"


def test_rename_errors(tmp_path):
    fails(tmp_path, VALID["rename_only"], "missing_file")
    write(tmp_path, "old.txt", "x\n")
    write(tmp_path, "new.txt", "y\n")
    fails(tmp_path, VALID["rename_only"], "existing_file")


def test_missing_and_existing_file(tmp_path):
    fails(tmp_path, VALID["modify"], "missing_file")
    write(tmp_path, "docs/new.md", "here\n")
    fails(tmp_path, VALID["add"], "existing_file")
    (tmp_path / "src/main.rs").mkdir(parents=True)
    err = fails(tmp_path, VALID["modify"], "missing_file")
    assert "not a regular file" in err["message"]


@pytest.mark.parametrize(
    "before,patch,after",
    [
        ("a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n", "A\nb"),
        ("a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nB"),
        (
            "a\nb",
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
            "a\nb\n",
        ),
        (
            "a\nb\n",
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
            "a\nb",
        ),
        ("a\nb", "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n", "a\nb\nc"),
        ("", "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n", "x\ny\n"),
        ("a\n", "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n", ""),
    ],
)
def test_trailing_newline_state(tmp_path, before, patch, after):
    write(tmp_path, "f", before)
    ok(tmp_path, patch)
    assert (tmp_path / "f").read_text() == after


def test_crlf_file_patched_with_lf_diff_stays_crlf(tmp_path):
    write(tmp_path, "w.txt", b"one\r\ntwo\r\nthree\r\n")
    ok(tmp_path, "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n")
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\n2.5\r\nthree\r\n"


def test_crlf_file_without_final_newline(tmp_path):
    write(tmp_path, "w.txt", b"one\r\ntwo")
    ok(tmp_path, "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n")
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\ntwo\r\nthree"


def test_crlf_git_diff_applies_literally(tmp_path):
    write(tmp_path, "w.txt", b"one\r\ntwo\nthree\r\n")
    ok(tmp_path, "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n one\r\n-two\n+TWO\r\n three\r\n")
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"


def test_non_ascii_text_and_path(tmp_path):
    write(tmp_path, "caf\u00e9.txt", "na\u00efve\n\u00fcber\n")
    ok(tmp_path, VALID["non_ascii"])
    assert (tmp_path / "caf\u00e9.txt").read_text(
        encoding="utf-8"
    ) == "na\u00efve\n\u65e5\u672c\u8a9e \U0001f600\n"


def test_executable_bit_is_preserved(tmp_path):
    write(tmp_path, "run.sh", "#!/bin/sh\necho a\n", mode=0o755)
    ok(tmp_path, "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo a\n+echo b\n")
    assert (tmp_path / "run.sh").stat().st_mode & 0o7777 == 0o755


@pytest.mark.parametrize("data,why", [(b"caf\xe9\n", "not valid UTF-8"), (b"a\0b\n", "NUL")])
def test_non_utf8_files_fail_clearly(tmp_path, data, why):
    write(tmp_path, "f", data)
    err = fails(tmp_path, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", "unsupported_encoding")
    assert why in err["message"]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hosts", "sub/../../outside.txt", "~/x"])
def test_paths_leaving_the_root_escape(tmp_path, path):
    root = tmp_path / "root"
    root.mkdir()
    write(root, "sub/keep", "k\n")
    fails(root, f"--- /dev/null\n+++ {path}\n@@ -0,0 +1 @@\n+x\n", "path_escape")


def test_symlinks_leading_outside_escape(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    write(outside, "secret.txt", "a\n")
    (root / "linkdir").symlink_to(outside)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    fails(root, "--- a/link.txt\n+++ b/link.txt\n@@ -1 +1 @@\n-a\n+b\n", "path_escape")
    fails(root, "--- /dev/null\n+++ b/linkdir/new.txt\n@@ -0,0 +1 @@\n+x\n", "path_escape")
    assert (outside / "secret.txt").read_text() == "a\n" and not (outside / "new.txt").exists()


def test_symlink_inside_root_is_written_through(tmp_path):
    write(tmp_path, "real.txt", "a\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    ok(tmp_path, "--- a/alias.txt\n+++ b/alias.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert (tmp_path / "alias.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "b\n"


def test_paths_are_relative_to_cwd_and_may_climb_inside_root(tmp_path):
    write(tmp_path, "top.txt", "a\n")
    write(tmp_path, "sub/inner.txt", "c\n")
    ok(
        tmp_path,
        "--- a/../top.txt\n+++ b/../top.txt\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/inner.txt\n+++ b/inner.txt\n@@ -1 +1 @@\n-c\n+d\n",
        cwd=tmp_path / "sub",
    )
    assert (tmp_path / "top.txt").read_text() == "b\n" and (
        tmp_path / "sub/inner.txt"
    ).read_text() == "d\n"


def test_one_failing_file_leaves_every_file_untouched(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "b.txt", "b\n")
    write(tmp_path, "gone.txt", "x\ny\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- /dev/null\n+++ b/new/dir/n.txt\n@@ -0,0 +1 @@\n+n\n"
        + VALID["git_delete_with_metadata"]
        + "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-nope\n+B\n"
    )
    fails(tmp_path, patch, "context_not_found")


def test_write_failure_while_staging_rolls_back(tmp_path, monkeypatch):
    write(tmp_path, "a.txt", "a\n")
    real_stage = patch_commit.stage_bytes
    calls = []

    def flaky(path, data, *, mode=None):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        return real_stage(path, data, mode=mode)

    monkeypatch.setattr(patch_commit, "stage_bytes", flaky)
    err = fails(
        tmp_path, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n" + VALID["add"], "io_error"
    )
    assert err["retryable"] is True and len(calls) == 2


@pytest.mark.parametrize("name", sorted({**SYNTAX_INVALID, **SEMANTIC_INVALID}))
def test_parse_errors_through_the_registry(tmp_path, name):
    write(tmp_path, "a.txt", "a\n")
    patch, kind = {**SYNTAX_INVALID, **SEMANTIC_INVALID}[name]
    fails(tmp_path, patch, kind)


def test_freeform_raw_input_is_the_patch(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    outcome = call(
        ctx_for(tmp_path), "ApplyPatch", raw="--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
    )
    env, receipt = outcome.envelope, outcome.rendered
    assert env["status"] == "success" and receipt == "Applied patch: M a.txt (1 hunk)"
    assert env["summary_text"] == "applied patch: 1 file changed (1 modified)"


def test_receipt_lists_every_change(tmp_path):
    write(tmp_path, "f.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
    write(tmp_path, "docs/old.md", "old line 1\nold line 2\nold line 3\n")
    write(tmp_path, "old.txt", "x\n")
    env, receipt = apply(
        tmp_path, VALID["modify_two_hunks"] + VALID["add"] + VALID["delete"] + VALID["rename_only"]
    )
    assert receipt == (
        "Applied patch: M f.txt (2 hunks), A docs/new.md, D docs/old.md, R old.txt -> new.txt\n"
        "ignored (not applied): similarity index 100% (new.txt)"
    )
    assert (
        env["summary_text"]
        == "applied patch: 4 files changed (1 modified, 1 added, 1 deleted, 1 renamed)"
    )


def test_tool_contract():
    tool = get("ApplyPatch")
    assert (tool.name, tool.family, tool.mutates) == ("ApplyPatch", "file", True)
    assert tool.freeform_grammar.startswith("// ApplyPatch") and tool.parse_freeform("x") == {
        "patch": "x"
    }
    schema = tool.Args.model_json_schema()
    assert list(schema["properties"]) == ["patch"] and schema["properties"]["patch"]["description"]
    assert "unified diff" in tool.description and "*** Begin Patch" in tool.description
