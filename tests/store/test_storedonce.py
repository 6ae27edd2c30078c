"""Tool outputs stored once: envelope strings the receipt holds become spans of it."""

from __future__ import annotations

from holon.store import storedonce


def _envelope(out: str, err: str = "") -> dict:
    result = {"disposition": "completed", "stdout_preview": out, "stderr_preview": err}
    return {"tool_name": "ExecCommand", "status": "success", "result": result, "error": None}


def test_compact_then_expand_is_exact():
    out = "line\n" * 300 + "\n\n"
    env = _envelope(out, "warning " * 60)
    rendered = f"exit 0\n--- stdout ---\n{out.rstrip(chr(10))}\n--- stderr ---\nwarning " * 1
    rendered += "warning " * 59
    stored, refs = storedonce.compact(env, rendered)
    assert stored["result"]["stdout_preview"] is None and len(refs) == 2
    assert env["result"]["stdout_preview"] == out  # the caller's envelope is not changed
    data = {"envelope": stored, "rendered": rendered, storedonce.REFS: refs}
    assert storedonce.expand(data)["envelope"] == env
    entry = {"kind": "tool_result", "data": data}
    assert storedonce.expand_entry(entry)["data"]["envelope"] == env
    assert storedonce.REFS not in storedonce.expand_entry(entry)["data"]


def test_short_or_absent_strings_stay():
    env = _envelope("short")
    assert storedonce.compact(env, "x" * 1000) == (env, [])
    env = _envelope("y" * 400)
    assert storedonce.compact(env, "z" * 1000) == (env, [])  # not in the receipt: kept
    old = {"envelope": env, "rendered": "r"}
    assert storedonce.expand(old) is old


def test_a_damaged_reference_leaves_the_field_null():
    env = _envelope("q" * 400)
    rendered = "q" * 400
    stored, refs = storedonce.compact(env, rendered)
    refs[0][0] = ["result", "missing", "x"]
    data = {"envelope": stored, "rendered": rendered, storedonce.REFS: refs}
    assert storedonce.expand(data)["envelope"]["result"]["stdout_preview"] is None
