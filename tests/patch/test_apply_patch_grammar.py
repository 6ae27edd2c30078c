"""The freeform tool grammar accepts the parser's language and rejects what is outside it, both
with Lark's Earley parser and with llguidance fed byte by byte (the greedy-lexer engine behind
OpenAI's grammar-constrained custom tools)."""

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import lark
import llguidance
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from patch_corpus import SYNTAX_INVALID, TOLERATED, all_valid

from holon.patch.errors import PatchError
from holon.patch.grammar import GRAMMAR
from holon.patch.parser import parse_patch
from holon.tools.apply_patch import ApplyPatch

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "bench_patch_grammar", REPO / "benchmarks" / "bench_patch_grammar.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

LARK = lark.Lark(GRAMMAR, start="start")
DECODER = bench.ByteDecoder(GRAMMAR)


def lark_accepts(text: str) -> bool:
    try:
        LARK.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


def assert_in_language(text: str) -> None:
    parse_patch(text)
    assert lark_accepts(text), "Lark rejects a patch the parser accepts"
    assert DECODER.accepts(text), "llguidance rejects a patch the parser accepts"


def assert_outside_language(text: str) -> None:
    with pytest.raises(PatchError):
        parse_patch(text)
    assert not lark_accepts(text), "Lark accepts a patch the parser refuses"
    assert not DECODER.accepts(text), "llguidance accepts a patch the parser refuses"


def test_grammar_is_the_tools_freeform_grammar():
    assert ApplyPatch.freeform_grammar == GRAMMAR


def test_llguidance_compiles_the_grammar_without_warnings():
    grammar = llguidance.grammar_from("lark", GRAMMAR)
    tokenizer = llguidance.LLTokenizer("byte")
    assert llguidance.LLMatcher.validate_grammar_with_warnings(grammar, tokenizer) == (False, [])


@pytest.mark.parametrize("name", sorted(all_valid()))
def test_both_engines_accept_every_syntactically_valid_patch(name):
    assert lark_accepts(all_valid()[name])
    assert DECODER.accepts(all_valid()[name])


@pytest.mark.parametrize("name", sorted(SYNTAX_INVALID))
def test_both_engines_reject_syntactically_invalid_patches(name):
    assert_outside_language(SYNTAX_INVALID[name][0])


@pytest.mark.parametrize("name", sorted(TOLERATED))
def test_runtime_tolerance_is_not_part_of_the_grammar(name):
    """The parser forgives a missing final newline; the decoding grammar always ends lines with
    one."""
    parse_patch(TOLERATED[name])
    assert not lark_accepts(TOLERATED[name])
    assert not DECODER.accepts(TOLERATED[name])


def _patch(*hunk_lines: str, path: str = "f.txt") -> str:
    return f"--- a/{path}\n+++ b/{path}\n" + "".join(line + "\n" for line in hunk_lines)


# name -> a patch the parser accepts and that a greedy lexer could mistake
TRICKY = {
    "indented_context_after_first_line": _patch(
        "@@ -1,3 +1,3 @@", " def f():", "     x = 1", "-    y = 2", "+    y = 3", path="f.py"
    ),
    "blank_context_then_removal": _patch("@@ -1,3 +1,2 @@", " a", " ", "-b"),
    "empty_context_then_removal": _patch("@@ -1,3 +1,2 @@", " a", "", "-b"),
    "whitespace_context_lines": _patch("@@ -1,4 +1,4 @@", " \t", "  ", "-x", "+y", " \t "),
    "markdown_bullets_removed": _patch(
        "@@ -1,3 +1,3 @@", "-- item", "--- item", "---", "+- item", "+-- item", "+----"
    ),
    "dashes_and_pluses_only": _patch("@@ -1,3 +1,3 @@", "-", "--", "----", "+", "++", "++++"),
    "plus_plus_lines_added": _patch("@@ -1 +1,3 @@", "-x", "++ x", "+++ y", "+++"),
    "header_lookalike_pair_in_body": _patch(
        "@@ -1,2 +1,2 @@", "--- a/b.txt", "+++ b/b.txt", " ctx"
    ),
    "header_lookalikes_with_blank_paths": _patch("@@ -1,2 +1,2 @@", "--- ", "+++ \tx", " c"),
    "at_at_lines_in_body": _patch(
        "@@ -1,3 +1,3 @@", " @@ -1 +1 @@", "-@@ x", "+@@ -2 +2 @@ y", " @@"
    ),
    "crlf_transport_with_blank_context": (
        "--- a/f.txt\r\n+++ b/f.txt\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+c\r\n"
    ),
    "crlf_file_empty_line_under_crlf_transport": (
        "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,3 +1,3 @@\r\n a\r\r\n\r\r\n-b\r\r\n+c\r\r\n"
    ),
    "crlf_lines_mixed": _patch("@@ -1,3 +1,3 @@", " a\r", "\r", "-b\r", "+c"),
    "no_newline_markers": _patch(
        "@@ -1,2 +1,2 @@", " a", "-b", "\\ No newline at end of file", "+b", "\\ Kein Zeilenumbruch"
    ),
    "git_extended_headers": (
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        "index 1234567..89abcde\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "git_modes_any_word": (
        "diff --git a/f b/f\nold mode 0100644\nnew mode 100755 \r\nindex 1..2\n"
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "rename_to_before_from": (
        "diff --git a/a.txt b/b.txt\nsimilarity index 90%\nrename to b.txt\nindex 1..2\n"
        "rename from a.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "rename_only_then_file": (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\ndiff --git a/c b/c\n"
        "--- a/c\n+++ b/c\n@@ -1 +1 @@\n-c\n+d\n"
    ),
    "quoted_paths": (
        'diff --git "a/sp ace.txt" "b/new name.txt"\nrename from "sp ace.txt"\n'
        'rename to "new name.txt"\n--- "a/sp ace.txt"\n+++ "b/new name.txt"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    ),
    "multiple_files_mixed_forms": (
        "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n"
        "@@ -1 +1 @@\n-a\n+A\n--- b.txt\n+++ b.txt\n@@ -1 +1 @@\n-b\n+B\n\n\t\n"
        "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+c\n"
    ),
    "blank_lines_between_headers_and_hunks": (
        "--- a/f.txt\n+++ b/f.txt\n\n \n@@ -1 +1 @@\n-a\n+b\n\n\t\n@@ -5 +5 @@\n-e\n+E\n"
    ),
    "unicode_blank_separators": (
        "\u3000\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n\u00a0\n\x0c\n"
    ),
    "section_text_and_timestamps": (
        "--- f.txt\t2024-01-01\n+++ f.txt\t2024-01-02\n@@ -3,2 +3,2 @@ class A: @@ x\n a\n-b\n+c\n"
    ),
    "header_path_after_spaces": "---  f.txt\n+++  f.txt\n@@ -1 +1 @@\n-a\n+b\n",
    "undercounted_hunk_keeps_lines": _patch("@@ -1 +1 @@", "-a", "+b", " c", "-d", "+e"),
    "overcounted_hunk_with_blank_tail": _patch("@@ -1,5 +1,5 @@", "-a", "+b", "", ""),
}
# git sections with extended header lines only
HEADER_ONLY_SECTIONS = {
    "empty_file_added": "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n",
    "empty_file_deleted": "diff --git a/e b/e\ndeleted file mode 100644\nindex e69de29..0000000\n",
    "mode_change": "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n",
    "index_with_mode": "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29 100644\n",
    "then_git_diff": (
        "diff --git a/e.txt b/e.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "then_plain_diff": (
        "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n"
        "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n"
    ),
}
# name -> a patch the parser refuses whatever its hunk counts say
OUTSIDE = {
    "tab_blank_inside_body": _patch("@@ -1,3 +1,3 @@", " a", "\t", "-b", "+c"),
    "blank_path_in_header": "--- \n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n",
    "blank_path_before_timestamp": "--- a/f.txt\n+++  \t2024\n@@ -1 +1 @@\n-a\n+b\n",
    "symlink_mode_change": "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n",
    "symlink_mode_in_index_line": "diff --git a/l b/l\nindex 1234567..89abcde 120000\n",
    "submodule_mode_with_cr": "diff --git a/s b/s\nnew file mode 160000\r\n--- /dev/null\n",
    "unknown_git_header": (
        "diff --git a/f b/f\ndissimilarity index 80%\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
    ),
    "rename_to_without_from": "diff --git a/a b/b\nrename to b\n",
    "bare_diff_git": "diff --git a/f b/f\n",
    "hunk_after_git_headers_only": "diff --git a/f b/f\nold mode 100644\n@@ -1 +1 @@\n-a\n+b\n",
    "marker_in_git_headers": "diff --git a/f b/f\nindex 1..2\n\\ No newline at end of file\n",
    "metadata_without_diff_git": "index 1..2\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
    "plus_before_minus": "+++ b/f.txt\n--- a/f.txt\n@@ -1 +1 @@\n-a\n+b\n",
    "blank_between_file_headers": "--- a/f.txt\n\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n",
    "empty_hunk": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n@@ -2 +2 @@\n-a\n+b\n",
    "prose_after_blank": _patch("@@ -1 +1 @@", "-a", "+b", "", "Done."),
    "hunk_header_without_at_at_end": _patch("@@ -1 +1", "-a", "+b"),
}


# name -> a patch in the grammar that the parser refuses: the approximations grammar.lark lists
OVER_APPROXIMATED = {
    "tab_separator_inside_overcounted_hunk": _patch(
        "@@ -1,3 +1,3 @@", "-a", "+b", "\t", "@@ -9 +9 @@", "-c", "+d"
    ),
    "header_pair_after_a_complete_hunk": _patch("@@ -1 +1 @@", "-a", "+b", "--- a/g", "+++ b/g"),
    "marker_after_a_blank_separator": _patch("@@ -1 +1 @@", "-a", "+b", "", "\\ No newline"),
    "two_paths_in_a_header_only_section": "diff --git a/x b/y\nold mode 100644\n",
    "prefix_only_header_path": "--- a/\n+++ b/\n@@ -1 +1 @@\n-a\n+b\n",
    "double_cr_line_without_crlf_transport": _patch("@@ -1,2 +1,2 @@", " a", "\r\r", "-b"),
}


@pytest.mark.parametrize("name", sorted(OVER_APPROXIMATED))
def test_documented_approximations_are_accepted_by_both_engines(name):
    text = OVER_APPROXIMATED[name]
    with pytest.raises(PatchError):
        parse_patch(text)
    assert lark_accepts(text) and DECODER.accepts(text)


def test_hunk_headers_take_ascii_digits_only():
    """Other Unicode digits (here ARABIC-INDIC ONE) are not line numbers to the parser or the
    grammar."""
    text = _patch("@@ -\u0661 +1 @@", "-a", "+b")
    with pytest.raises(PatchError):
        parse_patch(text)
    assert not lark_accepts(text) and not DECODER.accepts(text)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_patches_a_greedy_lexer_could_misread_are_in_the_language(name):
    assert_in_language(TRICKY[name])


@pytest.mark.parametrize("name", sorted(HEADER_ONLY_SECTIONS))
def test_git_sections_with_extended_headers_only_are_in_the_language(name):
    assert_in_language(HEADER_ONLY_SECTIONS[name])


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_patches_the_parser_always_refuses_are_outside_the_language(name):
    assert_outside_language(OUTSIDE[name])


# --- generated patches -------------------------------------------------------------------------

BODY_LINES = [
    " x", "     x = 1", " ", " \t", "", "\r", " a\r", " @@ -1 +1 @@", " \u3000",
    "-b", "-", "--", "-- item", "--- x", "--- ", "---", "-b\r", "-@@ x",
    "+c", "+", "++ x", "+++ y", "+++", "+é 😀", "+\\ not a marker",
    "\t", "\u00a0", "\\ No newline at end of file", "@@ -1 +1 @@", "prose",
]  # fmt: skip
GIT_LINES = [
    "index 1234567..89abcde 100644", "similarity index 90%", "new file mode 100644",
    "deleted file mode 100755", "old mode 100644", "new mode 100755", "new mode 160000",
    "rename from old.txt", "rename to new.txt", "copy from x", "Binary files a and b differ",
]  # fmt: skip
SEPARATORS = st.lists(st.sampled_from(["", " ", "\t", "\u3000", "\r"]), max_size=2)


@st.composite
def hunks(draw) -> list[str]:
    body = draw(st.lists(st.sampled_from(BODY_LINES), min_size=1, max_size=6))
    if draw(st.booleans()):  # counts that agree with the body, so the parser reads it as meant
        old = sum(line[:1] in (" ", "-", "", "\r") for line in body)
        new = sum(line[:1] in (" ", "+", "", "\r") for line in body)
    else:
        old, new = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    section = draw(st.sampled_from(["", " def f():", "@@"]))
    return [f"@@ -1,{old} +1,{new} @@{section}", *body]


@st.composite
def file_patches(draw, index: int) -> list[str]:
    plain = draw(st.sampled_from([f"d{index}/f.txt", f"d{index}/caf\\303\\251"]))
    quote = '"' if "\\" in plain else ""
    lines: list[str] = []
    form = draw(st.sampled_from(["plain", "git", "git_headers_only", "rename"]))
    if form != "plain":
        lines.append(f"diff --git {quote}a/{plain}{quote} {quote}b/{plain}{quote}")
        lines += draw(st.lists(st.sampled_from(GIT_LINES[:6]), max_size=3))
    if form == "rename":
        lines += [f"rename from {quote}{plain}{quote}", f"rename to {quote}{plain}.new{quote}"]
    if form == "git_headers_only":
        return lines + draw(st.lists(st.sampled_from(GIT_LINES), min_size=1, max_size=2))
    new_name = f"{plain}.new" if form == "rename" else plain
    lines += [f"--- {quote}a/{plain}{quote}", f"+++ {quote}b/{new_name}{quote}", *draw(SEPARATORS)]
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(hunks()) + draw(SEPARATORS)
    return lines


@st.composite
def patches(draw) -> str:
    lines = draw(SEPARATORS)
    for index in range(draw(st.integers(1, 3))):
        lines += draw(file_patches(index)) + draw(SEPARATORS)
    text = "".join(line + "\n" for line in lines)
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


def line_soup() -> st.SearchStrategy[str]:
    """Header and body lines in any order, after a file header or none; mostly outside the
    language."""
    lines = st.sampled_from(
        BODY_LINES + GIT_LINES + ["--- a/f", "+++ b/f", "diff --git a/f b/f", "@@ -1,2 +1 @@"]
    )
    start = st.sampled_from(["", "diff --git a/f b/f\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n"])
    soup = st.lists(lines, min_size=1, max_size=12).map(lambda ls: "".join(f"{x}\n" for x in ls))
    return st.builds(str.__add__, start, soup)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(patches(), line_soup()))
def test_llguidance_accepts_every_patch_the_parser_accepts(text):
    decoded = DECODER.accepts(text)
    assert lark_accepts(text) == decoded, "Lark and llguidance disagree"
    if bench.parses(text):
        assert decoded


TERMINALS = {t.name: re.compile(t.pattern.to_regexp()) for t in LARK.terminals}
LINE_CHARS = ' \t\r\x0b\u3000\u00a0ab/-+@\\"0126'


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.sampled_from(BODY_LINES + GIT_LINES).map(lambda line: line + "\n"),
        st.text(alphabet=LINE_CHARS, max_size=10).map(lambda line: line + "\n"),
        st.text(alphabet=LINE_CHARS + "\n", max_size=10),
        st.text(max_size=10),
    )
)
def test_terminals_are_whole_lines_and_never_overlap(text):
    """No terminal matches anything but one whole line, and at most one matches any line: a greedy
    lexer never has to choose, nor stop before a line's "\\n"."""
    matching = [name for name, rx in TERMINALS.items() if rx.fullmatch(text)]
    assert len(matching) <= 1, matching
    if matching:
        assert text.endswith("\n") and text.count("\n") == 1


# --- this repository's own history ---------------------------------------------------------------


def _is_git_checkout(path: Path) -> bool:
    if shutil.which("git") is None:
        return False
    probe = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--verify", "HEAD"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _is_git_checkout(REPO), reason="not a git checkout")
def test_recent_history_of_this_repository_decodes():
    """The newest commits' diffs at -U3, -U1 and -U0, per file and whole: every one the parser
    accepts, llguidance accepts (the full measure is benchmarks/bench_patch_grammar.py)."""
    counts = bench.measure(REPO, bench.commits(REPO, 4))
    assert counts["file"]["parsed"] > 0
    for row in counts.values():
        assert row["decoded"] == row["parsed"], counts
