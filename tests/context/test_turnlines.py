"""holon.context.turnlines: turn lines parsed, routine repeats grouped, long lines squeezed."""

from __future__ import annotations

from holon.context import turnlines


def _line(i: int, ask: str = "", cmd: str = "make check") -> str:
    ask = ask or f"Turn {i}: run the check."
    return f"turn {i} — operator_prompt: {ask} — ran `{cmd}` → exit 0 — replied: Turn {i} ok."


def test_lines_that_differ_only_in_numbers_are_grouped_where_the_first_stood():
    lines = [_line(i) for i in range(1, 9)]
    lines.insert(3, _line(4, "Remember that the pager rotates on Thursdays."))
    lines.append("files: a.py")
    grouped = turnlines.group_lines(lines)
    assert grouped == [
        f"turns 1–8 ×8 — {_line(1).removeprefix('turn 1 — ')}",
        _line(4, "Remember that the pager rotates on Thursdays."),
        "files: a.py",
    ]
    # a grouped line parses back into its span and count, and merges with more of its kind
    (g,) = [turnlines.parse(grouped[0])]
    assert (g["first"], g["last"], g["count"]) == (1, 8, 8)
    (merged,) = turnlines.merge([g, turnlines.parse(_line(20))])
    assert turnlines.render(merged) == [f"turns 1–20 ×9 — {_line(1).removeprefix('turn 1 — ')}"]


def test_a_few_lines_that_differ_in_a_number_stay_apart():
    lines = [_line(1, "The primary listens on port 5432."), _line(2, "The pooler on port 6432.")]
    lines += [_line(3, "The replica listens on port 5433.")]
    assert turnlines.group_lines(lines) == lines  # distinct texts
    same = [_line(i, f"Set the timeout to {i}0 seconds.") for i in range(1, 4)]
    assert turnlines.group_lines(same) == same  # up to VARIANTS lines stay apart


def test_lines_from_before_turn_indexes_keep_their_prefix():
    lines = ["earlier turn — operator_prompt: hello — replied: hi"] * 2
    assert turnlines.group_lines(lines) == [
        "earlier turns ×2 — operator_prompt: hello — replied: hi"
    ]
    assert turnlines.parse("earlier turns ×2 — operator_prompt: hello", fallback=None)["count"] == 2


def test_squeeze_gives_way_with_commands_and_replies_first():
    fact = "Remember that the database is PostgreSQL, chosen for row-level security."
    line = _line(1, fact, cmd="printf '%*s' 16000 '' | tr ' ' x; echo")
    assert turnlines.squeeze(line, len(line)) == line
    short = turnlines.squeeze(line, 160)
    assert len(short) <= 160 and fact in short and "→ exit 0" in short
    shorter = turnlines.squeeze(line, 130)  # then what was asked: its start and its end
    assert len(shorter) <= 130
    assert shorter.startswith("turn 1 — operator_prompt: Remember") and "security." in shorter
