"""Parser rules of the unified diff subset V1: structure, tolerance, and every syntax error kind."""

import pytest
from patch_corpus import SEMANTIC_INVALID, SYNTAX_INVALID, TOLERATED, VALID

from holon.patch.errors import HINTS, PatchError
from holon.patch.parser import parse_patch


def fail(patch: str) -> PatchError:
    with pytest.raises(PatchError) as info:
        parse_patch(patch)
    return info.value


# outside the grammar but accepted by the parser since metadata-only sections are ("wide in")
PARSER_ACCEPTS = {"mode_only_missing_file"}  # a file system question, not syntax


@pytest.mark.parametrize("name", sorted({**VALID, **TOLERATED}))
def test_valid_patches_parse(name):
    patches = parse_patch({**VALID, **TOLERATED}[name])
    assert patches and all(p.hunks or p.op in ("rename", "metadata") for p in patches)


@pytest.mark.parametrize(
    "name", sorted(set({**SYNTAX_INVALID, **SEMANTIC_INVALID}) - PARSER_ACCEPTS)
)
def test_invalid_patches_fail_with_their_kind_and_rule_hint(name):
    patch, kind = {**SYNTAX_INVALID, **SEMANTIC_INVALID}[name]
    err = fail(patch)
    assert err.kind == kind
    assert err.recovery_hint == HINTS[kind]


def test_modify_strips_prefixes_and_reads_hunk():
    [p] = parse_patch(VALID["modify"])
    assert (p.op, p.old_path, p.new_path) == ("modify", "src/main.rs", "src/main.rs")
    [h] = p.hunks
    assert (h.old_start, h.old_count, h.new_start, h.new_count) == (1, 3, 1, 3)
    assert [(line.tag, line.text) for line in h.lines] == [
        (" ", "fn main() {"),
        ("-", "    old_call();"),
        ("+", "    new_call();"),
        (" ", "}"),
    ]


def test_add_delete_and_several_hunks():
    [add] = parse_patch(VALID["add"])
    assert (add.op, add.old_path, add.new_path) == ("add", None, "docs/new.md")
    [delete] = parse_patch(VALID["delete"])
    assert (delete.op, delete.old_path, delete.new_path) == ("delete", "docs/old.md", None)
    [p] = parse_patch(VALID["modify_two_hunks"])
    assert [h.old_start for h in p.hunks] == [1, 8] and p.hunks[1].section == "section"


def test_rename_only_and_with_edits():
    [r] = parse_patch(VALID["rename_only"])
    assert (r.op, r.old_path, r.new_path, r.hunks) == ("rename", "old.txt", "new.txt", [])
    assert r.ignored_metadata == ["similarity index 100%"]
    [e] = parse_patch(VALID["rename_with_edits"])
    assert (e.op, e.old_path, e.new_path, len(e.hunks)) == ("rename", "old.txt", "new.txt", 1)


def test_metadata_is_recorded_not_interpreted():
    [p] = parse_patch(VALID["git_add_with_metadata"])
    assert p.op == "add" and p.ignored_metadata == [
        "new file mode 100755",
        "index 0000000..e69de29",
    ]
    [m] = parse_patch(VALID["git_modify_mode_change"])
    assert m.ignored_metadata[:2] == ["old mode 100644", "new mode 100755"]


def test_counts_default_to_one_and_section_text_is_kept():
    [p] = parse_patch(VALID["counts_omitted"])
    assert (p.hunks[0].old_start, p.hunks[0].old_count, p.hunks[0].new_count) == (2, 1, 1)
    [s] = parse_patch(VALID["section_text"])
    assert s.hunks[0].section == "def main():"


def test_timestamps_dropped_and_quoted_paths_decoded():
    [p] = parse_patch(VALID["no_prefix_timestamps"])
    assert p.old_path == p.new_path == "f.txt"
    [q] = parse_patch(VALID["quoted_path"])
    assert q.old_path == "caf\u00e9.txt"


@pytest.mark.parametrize(
    "name,old,new",
    [
        ("no_newline_removed", True, False),
        ("no_newline_added", False, True),
        ("no_newline_context", True, True),
    ],
)
def test_no_newline_markers_attach_to_their_side(name, old, new):
    [h] = parse_patch(VALID[name])[0].hunks
    assert (h.old_no_newline, h.new_no_newline) == (old, new)


def test_wrong_counts_are_advisory_when_parsing():
    [p] = parse_patch(VALID["wrong_counts"])
    assert [line.tag for line in p.hunks[0].lines] == [" ", "-", "+", " "]
    assert (p.hunks[0].old_count, len(p.hunks[0].old_lines)) == (9, 3)


def test_overcounted_hunk_stops_at_next_file_and_drops_blank_separator():
    patches = parse_patch(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n-a\n+A\n\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    )
    assert [p.path for p in patches] == ["a.txt", "b.txt"]
    assert [line.text for line in patches[0].hunks[0].lines] == ["a", "A"]


def test_undercounted_hunk_keeps_following_body_lines():
    [p] = parse_patch("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n x\n-a\n+A\n y\n")
    assert [line.tag for line in p.hunks[0].lines] == [" ", "-", "+", " "]


def test_header_like_body_lines_count_as_body_when_counts_expect_them():
    [p] = parse_patch(VALID["minus_minus_content"])
    assert [(line.tag, line.text) for line in p.hunks[0].lines] == [
        ("-", "-- comment"),
        ("+", "++ counter"),
        (" ", "select 1;"),
    ]
    [q] = parse_patch(
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n x\n--- a\n+++ b\n@@ -9 +9 @@\n-y\n+z\n"
    )
    assert len(q.hunks) == 2 and q.hunks[0].lines[-1].text == "++ b"


def test_empty_line_in_hunk_is_empty_context():
    [p] = parse_patch(VALID["empty_context_line"])
    assert [(line.tag, line.text) for line in p.hunks[0].lines][1] == (" ", "")


def test_blank_lines_between_and_around_file_patches():
    patches = parse_patch(VALID["blank_lines_around"])
    assert [p.path for p in patches] == ["f.txt", "g.txt"]
    assert [len(p.hunks[0].lines) for p in patches] == [2, 2]


def test_missing_final_newline_and_crlf_transport_are_tolerated():
    [p] = parse_patch(TOLERATED["no_final_newline"])
    assert p.hunks[0].lines[-1].text == "b"
    [c] = parse_patch(VALID["crlf_transport"])
    assert not c.literal_eol and c.hunks[0].lines[-1].text == "b"


def test_crlf_body_of_a_git_diff_is_literal():
    [p] = parse_patch(VALID["crlf_body"])
    assert p.literal_eol and [line.text for line in p.hunks[0].lines] == ["a", "b", "c"]


def test_error_messages_point_at_the_line():
    err = fail("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,1 @@\n a\n-b\nstray\n")
    assert err.kind == "missing_file_header" and "line 6" in err.message
    err = fail("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\nstray\n-b\n")
    assert err.kind == "invalid_hunk_line" and err.details["line"] == 5


def test_path_mismatch_hint_shows_the_rename_form():
    err = fail(SEMANTIC_INVALID["path_mismatch"][0])
    assert "rename from <old>" in err.recovery_hint and "rename to <new>" in err.recovery_hint
    assert err.details == {"line": 1, "old_path": "a.txt", "new_path": "b.txt"}


def test_begin_patch_hint_says_not_to_use_it():
    err = fail(SYNTAX_INVALID["begin_patch_dsl"][0])
    assert "Do not use the old '*** Begin Patch' format" in err.recovery_hint


EMPTY_ADD = "diff --git a/py.typed b/py.typed\nnew file mode 100644\nindex 0000000..e69de29\n"
EMPTY_DELETE = "diff --git a/gone b/gone\ndeleted file mode 100644\nindex e69de29..0000000\n"
MODE_ONLY = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"


def test_empty_file_add_and_delete_have_no_hunks():
    [add] = parse_patch(EMPTY_ADD)
    assert (add.op, add.old_path, add.new_path, add.hunks) == ("add", None, "py.typed", [])
    assert add.ignored_metadata == ["new file mode 100644", "index 0000000..e69de29"]
    [bare] = parse_patch("diff --git a/py.typed b/py.typed\nnew file mode 100755\n")
    assert (bare.op, bare.new_path) == ("add", "py.typed")
    [delete] = parse_patch(EMPTY_DELETE)
    assert (delete.op, delete.old_path, delete.new_path, delete.hunks) == (
        "delete",
        "gone",
        None,
        [],
    )


def test_mode_only_section_is_metadata():
    [m] = parse_patch(MODE_ONLY)
    assert (m.op, m.old_path, m.new_path, m.hunks) == ("metadata", "run.sh", "run.sh", [])
    assert m.ignored_metadata == ["old mode 100644", "new mode 100755"]
    [p] = parse_patch(SEMANTIC_INVALID["mode_only_missing_file"][0])
    assert p.op == "metadata" and p.path == "f.sh"


@pytest.mark.parametrize(
    "header,path",
    [
        ("diff --git a/my dir/x y.sh b/my dir/x y.sh", "my dir/x y.sh"),
        ('diff --git "a/caf\\303\\251.sh" "b/caf\\303\\251.sh"', "caf\u00e9.sh"),
        ("diff --git x.sh x.sh", "x.sh"),
    ],
)
def test_metadata_only_path_comes_from_the_git_header(header, path):
    [m] = parse_patch(header + "\nold mode 100644\nnew mode 100755\n")
    assert m.path == path


def test_metadata_only_sections_among_others():
    patches = parse_patch(MODE_ONLY + VALID["modify"] + EMPTY_ADD + "\n" + EMPTY_DELETE)
    assert [(p.op, p.path) for p in patches] == [
        ("metadata", "run.sh"),
        ("modify", "src/main.rs"),
        ("add", "py.typed"),
        ("delete", "gone"),
    ]


def test_metadata_only_and_hunks_for_one_path_are_duplicates():
    hunk = "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n"
    [m] = parse_patch(MODE_ONLY + hunk)  # in one section: a modify that carries the mode lines
    assert m.op == "modify" and m.ignored_metadata == ["old mode 100644", "new mode 100755"]
    err = fail(MODE_ONLY + "diff --git a/run.sh b/run.sh\n" + hunk)
    assert err.kind == "duplicate_file_patch"


@pytest.mark.parametrize(
    "patch,why",
    [
        ("diff --git a/f b/f\n", "neither hunks nor git metadata"),
        ("diff --git a/f b/f\n\ndiff --git a/g b/g\nold mode 100644\n", "neither hunks"),
        ("diff --git a/f b/g\nold mode 100644\nnew mode 100755\n", "two different paths"),
    ],
)
def test_git_section_without_hunks_or_metadata_is_refused(patch, why):
    err = fail(patch)
    assert err.kind == "missing_file_header" and why in err.message


@pytest.mark.parametrize(
    "patch,path,feature,what",
    [
        (SYNTAX_INVALID["binary_patch"][0], "x.png", "binary", "a binary patch"),
        (SYNTAX_INVALID["binary_differ"][0], "x.png", "binary", "a binary file change"),
        ("Binary files a/img.png and b/img.png differ\n", "img.png", "binary", "binary"),
        ("Binary files /dev/null and b/new.png differ\n", "new.png", "binary", "binary"),
        (SYNTAX_INVALID["symlink_mode"][0], "l", "symlink", "a symlink (mode 120000)"),
        (
            "diff --git a/l b/l\nindex 1234567..89abcde 120000\n--- a/l\n+++ b/l\n"
            "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n",
            "l",
            "symlink",
            "mode 120000",
        ),
        (
            "diff --git a/f b/f\nold mode 100644\nnew mode 120000\n",
            "f",
            "symlink",
            "a symlink",
        ),
        (SYNTAX_INVALID["submodule_mode"][0], "sub", "submodule", "a submodule (mode 160000)"),
        (SEMANTIC_INVALID["submodule_body"][0], "sub", "submodule", "a submodule"),
        (SYNTAX_INVALID["copy"][0], "a/a.txt b/b.txt", "copy", "a copy"),
    ],
)
def test_unsupported_sections_are_refused_by_path_and_feature(patch, path, feature, what):
    err = fail(VALID["modify"] + patch)  # a supported section before it does not hide it
    assert err.kind == "unsupported_git_patch_feature"
    assert err.message.startswith(f"{path}: ") and what in err.message
    assert err.details["path"] == path and err.details["feature"] == feature


def test_unsupported_line_in_a_bare_section_names_no_path():
    err = fail("GIT binary patch\nliteral 0\n")
    assert err.kind == "unsupported_git_patch_feature" and "path" not in err.details
    assert err.message.startswith("line 1: this section is a binary patch")
