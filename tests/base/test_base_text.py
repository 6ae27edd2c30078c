"""holon.text: head-and-tail previews with an explicit cut marker, and JSON shown as JSON."""

from __future__ import annotations

import json
import re

from holon.text import head_tail, pretty_if_json

MARKER = re.compile(
    r"\.\.\.\n\[output truncated: showing first (\d+) and last (\d+) lines\]\n\.\.\.\n"
)


def test_short_text_is_untouched():
    assert head_tail("a\nb\n", 4) == ("a\nb\n", False)
    assert head_tail("", 0) == ("", False)


def test_keeps_head_and_tail_lines_with_a_marker():
    lines = [f"line {i:02d}\n" for i in range(100)]  # 8 characters each
    text = "".join(lines)
    out, cut = head_tail(text, 200)
    assert cut
    m = MARKER.search(out)
    assert m, out
    n_head, n_tail = int(m.group(1)), int(m.group(2))
    assert (n_head, n_tail) == (12, 12)
    assert out[: m.start()] == "".join(lines[:12])
    assert out[m.end() :] == "".join(lines[-12:])
    kept = out[: m.start()] + out[m.end() :]
    assert len(kept) <= 200  # the kept lines fit the budget; the marker is added on top
    assert len(out) <= 200 + len(m.group(0))


def test_partial_lines_are_never_shown():
    text = "".join(f"{'x' * (i % 7 + 1)}\n" for i in range(300))
    out, cut = head_tail(text, 101)
    m = MARKER.search(out)
    assert cut and m
    head, tail = out[: m.start()], out[m.end() :]
    assert text.startswith(head) and text.endswith(tail)
    assert head.endswith("\n") and tail.endswith("\n")


def test_last_line_without_newline_stays_in_tail():
    text = "".join(f"row {i}\n" for i in range(50)) + "final"
    out, cut = head_tail(text, 60)
    assert cut and out.endswith("row 49\nfinal")
    assert out.startswith("row 0\n")


def test_one_huge_line_is_cut_by_characters():
    text = "A" * 500 + "Z" * 500
    out, cut = head_tail(text, 100)
    assert cut
    assert out.startswith(
        "A" * 50 + "\n...\n[output truncated: showing first 50 and last 50 characters]"
    )
    assert out.endswith("\n...\n" + "Z" * 50)
    assert out.count("A") == 50 and out.count("Z") == 50


def test_huge_lines_only_are_cut_by_characters():
    text = "a" * 300 + "\n" + "b" * 300 + "\n"
    out, cut = head_tail(text, 100)
    assert cut and "showing first 50 and last 50 characters" in out
    assert out.startswith("a" * 50) and out.endswith("b" * 49 + "\n")


def test_pretty_if_json_pretty_prints_objects_and_arrays():
    assert (
        pretty_if_json('{"a":1,"b":["é"]}')
        == json.dumps({"a": 1, "b": ["é"]}, indent=2, ensure_ascii=False) + "\n"
    )
    assert pretty_if_json("  [1,2]\n") == "[\n  1,\n  2\n]\n"


def test_pretty_if_json_leaves_other_text_alone():
    for text in ("plain output\n", "", "42", '"str"', "{not json", "[1, 2", "  \n"):
        assert pretty_if_json(text) is text
