"""follow.after: pexpect's expect over a growing output log (match, settle, timeout, the task
ending), reading only what came after the offset."""

from __future__ import annotations

import threading
import time

from holon.tasks.command import follow


def grow(path, parts, delay=0.1):
    def run():
        for part in parts:
            time.sleep(delay)
            with open(path, "ab") as fh:
                fh.write(part)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_expect_matches_output_after_the_offset(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"old >>> ")
    t = grow(log, [b"1+1\r\n", b"2\r\n>", b">> "])
    res = follow.after(log, 8, lambda: False, expect=">>> $", timeout=5, settle=0.5)
    t.join()
    assert res == {"output": "1+1\n2\n>>> ", "wait_outcome": "matched", "matched": ">>> "}


def test_settle_waits_for_the_first_output_then_for_quiet(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"")
    t = grow(log, [b"a", b"b"], delay=0.3)
    res = follow.after(log, 0, lambda: False, expect=None, timeout=5, settle=0.6)
    t.join()
    assert res["wait_outcome"] == "settled" and res["output"] == "ab"


def test_timeout_task_end_and_no_wait(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"nothing new")
    start = time.monotonic()
    res = follow.after(log, 11, lambda: False, expect=None, timeout=0.3, settle=0.1)
    assert res["wait_outcome"] == "timeout" and 0.25 < time.monotonic() - start < 2
    log.write_bytes(b"nothing new, bye\xe2\x82")  # a cut UTF-8 sequence at the end
    res = follow.after(log, 11, lambda: True, expect="never", timeout=5, settle=0.1)
    assert res["wait_outcome"] == "task_ended" and res["output"].startswith(", bye")
    res = follow.after(log, 0, lambda: True, expect=None, timeout=0, settle=0.1)
    assert res == {"output": "", "wait_outcome": "not_waited", "matched": None}
