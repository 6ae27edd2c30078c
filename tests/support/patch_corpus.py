"""Patches shared by the ApplyPatch tests: valid ones (grammar and parser accept)
and invalid ones."""

SHA_A = "1" * 40
SHA_B = "2" * 40

# name -> patch text; every one parses with the runtime parser and the Lark grammar
VALID = {
    "modify": (
        "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    old_call();\n"
        "+    new_call();\n }\n"
    ),
    "modify_two_hunks": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -8,3 +8,4 @@ section\n h\n"
        " i\n+i2\n j\n"
    ),
    "add": "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,3 @@\n+line 1\n+line 2\n+line 3\n",
    "delete": (
        "--- a/docs/old.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-old line 1\n-old line 2\n-old line 3\n"
    ),
    "rename_only": (
        "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\n"
        "rename to new.txt\n"
    ),
    "rename_with_edits": (
        "diff --git a/old.txt b/new.txt\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n"
        "+++ b/new.txt\n@@ -1,3 +1,3 @@\n line 1\n-old line\n+new line\n line 3\n"
    ),
    "git_add_with_metadata": (
        "diff --git a/run.sh b/run.sh\nnew file mode 100755\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo hi\n"
    ),
    "git_modify_mode_change": (
        "diff --git a/f.txt b/f.txt\nold mode 100644\nnew mode 100755\nindex 1234567..89abcde\n"
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "git_delete_with_metadata": (
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex 1234567..0000000\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"
    ),
    "counts_omitted": "--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-b\n+B\n",
    "section_text": (
        "--- a/f.py\n+++ b/f.py\n@@ -10,3 +10,3 @@ def main():\n     x = 1\n-    y = 2\n"
        "+    y = 3\n     z = 4\n"
    ),
    "no_prefix_timestamps": (
        "--- f.txt\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ f.txt\t2024-01-02 10:00:00.000000000 +0000\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    ),
    "no_newline_removed": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    ),
    "no_newline_added": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"
    ),
    "no_newline_context": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n"
    ),
    "two_files": (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    ),
    "empty_context_line": "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n\n-c\n+C\n",
    "blank_lines_around": (
        "\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n\n\n--- a/g.txt\n+++ b/g.txt\n"
        "@@ -1 +1 @@\n-c\n+d\n\n"
    ),
    "non_ascii": (
        "--- a/caf\u00e9.txt\n+++ b/caf\u00e9.txt\n@@ -1,2 +1,2 @@\n na\u00efve\n-\u00fcber\n"
        "+\u65e5\u672c\u8a9e \U0001f600\n"
    ),
    "wrong_counts": "--- a/f.txt\n+++ b/f.txt\n@@ -1,9 +1,9 @@\n a\n-b\n+B\n c\n",
    "minus_minus_content": (
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- comment\n+++ counter\n select 1;\n"
    ),
    "crlf_transport": "--- a/f.txt\r\n+++ b/f.txt\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
    "crlf_body": "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
    "quoted_path": '--- "a/caf\\303\\251.txt"\n+++ "b/caf\\303\\251.txt"\n@@ -1 +1 @@\n-a\n+b\n',
}

# accepted by the runtime parser ("wide in") though outside the grammar's exact language
TOLERATED = {
    "no_final_newline": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b",
}

# name -> (patch, error kind); the grammar rejects these too
SYNTAX_INVALID = {
    "empty": ("", "empty_patch"),
    "blank": ("\n  \n\n", "empty_patch"),
    "begin_patch_dsl": (
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n*** End Patch\n",
        "missing_file_header",
    ),
    "hunk_without_file_header": ("@@ -1 +1 @@\n-a\n+b\n", "missing_file_header"),
    "minus_without_plus": ("--- a/f.txt\n@@ -1 +1 @@\n-a\n+b\n", "missing_file_header"),
    "leading_prose": (
        "Here is the patch:\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "missing_file_header",
    ),
    "trailing_prose": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\nThat should do it.\n",
        "missing_file_header",
    ),
    "bare_at_header": ("--- a/f.txt\n+++ b/f.txt\n@@\n-a\n+b\n", "invalid_hunk_header"),
    "no_ranges": ("--- a/f.txt\n+++ b/f.txt\n@@ -x +y @@\n-a\n+b\n", "invalid_hunk_header"),
    "no_hunks": ("--- a/f.txt\n+++ b/f.txt\n", "invalid_hunk_header"),
    "unprefixed_body_line": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\nfoo\n-a\n+b\n",
        "invalid_hunk_line",
    ),
    "marker_first": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n",
        "invalid_hunk_line",
    ),
    "binary_patch": (
        "diff --git a/x.png b/x.png\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 5\n"
        "Mc${NkU|?c^00RI600961\n\n",
        "unsupported_git_patch_feature",
    ),
    "binary_differ": (
        "diff --git a/x.png b/x.png\nindex 1234567..89abcde 100644\n"
        "Binary files a/x.png and b/x.png differ\n",
        "unsupported_git_patch_feature",
    ),
    "copy": (
        "diff --git a/a.txt b/b.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to b.txt\n",
        "unsupported_git_patch_feature",
    ),
    "submodule_mode": (
        f"diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..{SHA_A[:7]}\n--- /dev/null\n"
        f"+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit {SHA_A}\n",
        "unsupported_git_patch_feature",
    ),
    "symlink_mode": (
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n"
        "\\ No newline at end of file\n",
        "unsupported_git_patch_feature",
    ),
    "rename_without_to": (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\n",
        "rename_path_mismatch",
    ),
}

# name -> (patch, error kind); syntactically in the grammar, refused by the parser's semantic checks
SEMANTIC_INVALID = {
    "mode_only_missing_file": (
        "diff --git a/f.sh b/f.sh\nold mode 100644\nnew mode 100755\n",
        "missing_file",
    ),
    "path_mismatch": (
        "--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "path_mismatch_without_rename",
    ),
    "rename_mismatch": (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/c.txt\n"
        "@@ -1 +1 @@\n-a\n+b\n",
        "rename_path_mismatch",
    ),
    "duplicate": (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/./f.txt\n+++ b/./f.txt\n@@ -3 +3 @@\n-c\n+d\n",
        "duplicate_file_patch",
    ),
    "duplicate_via_rename": (
        "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\ndiff --git a/a.txt b/b.txt\n"
        "rename from a.txt\nrename to b.txt\n",
        "duplicate_file_patch",
    ),
    "rename_absorbs_following_headers": (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"
        "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+x\n",
        "rename_path_mismatch",
    ),
    "both_dev_null": ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "missing_file_header"),
    "add_with_context": (
        "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n a\n+b\n",
        "invalid_hunk_line",
    ),
    "delete_with_addition": (
        "--- a/f.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n+b\n",
        "invalid_hunk_line",
    ),
    "submodule_body": (
        f"diff --git a/sub b/sub\nindex {SHA_A[:7]}..{SHA_B[:7]}\n"
        "--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n"
        f"-Subproject commit {SHA_A}\n+Subproject commit {SHA_B}\n",
        "unsupported_git_patch_feature",
    ),
}


def all_valid() -> dict[str, str]:
    """Every syntactically valid patch, including those the parser refuses on meaning."""
    return {**VALID, **{name: patch for name, (patch, _) in SEMANTIC_INVALID.items()}}
