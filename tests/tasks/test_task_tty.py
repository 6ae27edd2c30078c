"""tty commands under pexpect (holon.tasks.command.terminal, ptytask, handoff): started under their
supervisor, reported inline when they end within the yield, otherwise a task with no hand-over;
driven through TaskInput (REPL, pdb, Ctrl-C, end of file); stopped, recovered, and delivered when
their starter dies."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import pexpect
import pytest
from helpers import wait_for

from holon.agent.handle import Agent
from holon.procs import alive, group_members
from holon.store import jsonl
from holon.tasks import ops, recovery, store
from holon.tasks.command import command, handoff, ptytask, spawn, terminal

PY = sys.executable


def tty(home, cmd, yield_ms=5000):
    return command.run(
        Agent(home),
        command.CommandSpec(cmd, home.root, "/bin/sh", False, True, True, yield_ms, home.root),
    )


def task_results(home, task_id):
    return [
        m
        for m in jsonl.read(home.messages)
        if m["kind"] == "task_result" and m["task_id"] == task_id
    ]


def nothing_left(home, task_id):
    return (
        not home.task_dir(task_id).exists()
        and not home.scratch_dir(task_id).exists()
        and store.active_ids(home) == []
    )


def promoted(home, cmd, yield_ms=300, prompt=None):
    out = tty(home, cmd, yield_ms)
    assert isinstance(out, command.Promoted), out
    task_id = out.task["id"]
    if prompt is not None:  # wait for the program's first prompt, as a pexpect script does
        log = home.task_dir(task_id) / "output.log"
        wait_for(lambda: re.search(prompt, log.read_text()), timeout=10)
    return task_id


def test_a_tty_command_that_ends_in_time_is_reported_inline_and_leaves_nothing(agent):
    out = tty(agent, 'tty -s && echo is-tty; stty size; echo "$TERM" >&2; exit 4')
    assert isinstance(out, command.Finished)
    assert (out.exit_status, out.signal, out.stderr) == (4, None, "")
    term = os.environ.get("TERM", "dumb")
    assert out.stdout == f"is-tty\n24 {160}\n{term}\n"  # one transcript, LF line ends
    assert store.all_records(agent) == [] and store.active_ids(agent) == []
    assert not agent.scratch.exists() or list(agent.scratch.iterdir()) == []
    assert Agent(agent).state().active_task_ids == []
    assert not [m for m in jsonl.read(agent.messages) if m["kind"] == "task_result"]


def test_a_tty_command_killed_by_a_signal(agent):
    out = tty(agent, "kill -9 $$")
    assert isinstance(out, command.Finished) and (out.exit_status, out.signal) == (None, 9)


def test_a_promoted_tty_task_needs_no_hand_over_and_is_tracked(agent):
    out = tty(agent, "echo started; read x; echo got:$x", 400)
    assert isinstance(out, command.Promoted)
    task_id = out.task["id"]
    rec = store.load(agent, task_id)
    assert rec["promoted"] is True and rec["status"] == "running" and rec["pid"] > 1
    assert rec["supervisor_pid"] == store.read_marker(agent, task_id)
    assert out.initial_output == "started\n"
    assert Agent(agent).state().active_task_ids == [task_id]
    res = ops.send_input(agent, task_id, "yes\n", expect="got:yes", timeout_ms=5000)
    assert res["accepted_input"] and res["wait_outcome"] == "matched"
    assert res["output"] == "yes\ngot:yes" and res["matched"] == "got:yes"
    wait_for(lambda: store.load(agent, task_id)["result_message_id"], timeout=10)
    rec = store.load(agent, task_id)
    assert (rec["status"], rec["exit_status"]) == ("completed", 0)
    assert Agent(agent).state().active_task_ids == []
    [msg] = task_results(agent, task_id)
    assert "got:yes" in msg["body"]["value"]["output_preview"]
    assert "\r" not in msg["body"]["value"]["output_preview"]
    wait_for(lambda: store.active_ids(agent) == [], timeout=5)


def test_a_python_repl_answers_each_input(agent):
    task_id = promoted(agent, f"{PY} -q", prompt=">>> $")
    for line, answer in (("x = 6", ""), ("x * 7", "42\n"), ("print('a' + 'b')", "ab\n")):
        res = ops.send_input(agent, task_id, line + "\n", expect=">>> $", timeout_ms=10000)
        assert res["wait_outcome"] == "matched", res
        assert res["output"] == f"{line}\n{answer}>>> "
    res = ops.send_input(agent, task_id, "", eof=True, timeout_ms=10000)
    assert res["eof_sent"] and res["wait_outcome"] == "task_ended"
    wait_for(lambda: store.load(agent, task_id)["status"] == "completed", timeout=10)


def test_pdb_is_driven_step_by_step(agent, tmp_path):
    script = agent.root / "prog.py"
    script.write_text("a = 1\nb = a + 1\nprint('sum', a + b)\n")
    task_id = promoted(agent, f"{PY} -m pdb prog.py", prompt=r"\(Pdb\) $")
    step = ops.send_input(agent, task_id, "next\n", expect=r"\(Pdb\) $", timeout_ms=10000)
    assert "-> b = a + 1" in step["output"]
    shown = ops.send_input(agent, task_id, "p a\n", expect=r"\(Pdb\) $", timeout_ms=10000)
    assert shown["output"] == "p a\n1\n(Pdb) "
    done = ops.send_input(agent, task_id, "continue\n", expect=r"\(Pdb\) $", timeout_ms=10000)
    assert "sum 3" in done["output"]
    ops.send_input(agent, task_id, "quit\n", timeout_ms=0)
    wait_for(lambda: store.load(agent, task_id)["status"] in store.TERMINAL, timeout=10)


def test_ctrl_c_interrupts_the_program_not_the_task(agent):
    task_id = promoted(agent, f"{PY} -q", prompt=">>> $")
    ops.send_input(agent, task_id, "import time; time.sleep(60)\n", timeout_ms=300)
    res = ops.send_input(agent, task_id, "\x03", expect=">>> $", timeout_ms=10000)
    assert "KeyboardInterrupt" in res["output"] and res["wait_outcome"] == "matched"
    assert store.load(agent, task_id)["status"] == "running"
    ops.stop(Agent(agent), task_id, grace_s=0.5)


def test_settle_and_timeout_without_a_pattern(agent):
    task_id = promoted(agent, "while read l; do sleep 0.2; echo one; echo two; done")
    res = ops.send_input(agent, task_id, "x\n", timeout_ms=5000, settle_ms=400)
    assert res["wait_outcome"] == "settled" and res["output"] == "x\none\ntwo\n"
    quiet = ops.send_input(agent, task_id, "y\n", expect="never", timeout_ms=600)
    assert quiet["wait_outcome"] == "timeout" and quiet["output"].startswith("y\n")
    assert quiet["matched"] is None
    nowait = ops.send_input(agent, task_id, "z\n")
    assert nowait["wait_outcome"] == "not_waited" and nowait["output"] == ""
    ops.stop(Agent(agent), task_id, grace_s=0.5)


def test_task_stop_stops_the_whole_tty_process_tree(agent):
    task_id = promoted(agent, "sleep 300 & sleep 300 & echo up; wait")
    pgid = store.load(agent, task_id)["pid"]
    wait_for(lambda: len(group_members(pgid)) >= 3, timeout=5)
    res = ops.stop(Agent(agent), task_id, grace_s=1.0)
    assert res["task"]["status"] == "cancelled"
    wait_for(lambda: group_members(pgid) == [], timeout=5)
    art = store.load(agent, task_id)["failure_artifact"]
    assert art["category"] == "task" and art["kind"] == "task_cancelled"


def test_a_tty_task_killed_with_its_supervisor_is_recovered_as_failed(agent):
    task_id = promoted(agent, "echo up; sleep 300")
    rec = store.load(agent, task_id)
    pgid, sup = rec["pid"], rec["supervisor_pid"]
    os.kill(sup, signal.SIGKILL)
    wait_for(lambda: not alive(sup), timeout=5)
    found = recovery.recover_tasks(Agent(agent))
    assert found == [task_id]
    rec = store.load(agent, task_id)
    assert rec["status"] == "failed" and rec["failure_artifact"]["kind"] == "supervisor_lost"
    wait_for(lambda: group_members(pgid) == [], timeout=5)
    assert Agent(agent).state().active_task_ids == []
    assert len(task_results(agent, task_id)) == 1


STARTER = textwrap.dedent(
    """
    import sys
    from holon.agent.handle import Agent
    from holon.home.layout import Home
    from holon.tasks.command import command
    home = Home(sys.argv[1])
    spec = command.CommandSpec(
        "sleep 1; echo late-output", home.root, "/bin/sh", False, True, True, 60000, home.root
    )
    print("starting", flush=True)
    command.run(Agent(home), spec)
    """
)


def test_a_tty_command_whose_starter_died_is_delivered_as_a_task(agent):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [PY, "-c", STARTER, str(agent.root)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout.readline() == "starting\n"
    wait_for(lambda: any(r.get("pid") for r in store.all_records(agent)), timeout=10)
    proc.kill()  # the tick dies before the yield: nobody will report the command inline
    proc.wait()
    proc.stdout.close()
    [rec] = store.all_records(agent)
    wait_for(lambda: store.load(agent, rec["id"])["result_message_id"], timeout=10)
    rec = store.load(agent, rec["id"])
    assert rec["promoted"] is True and rec["status"] == "completed"
    [msg] = task_results(agent, rec["id"])
    assert "late-output" in msg["body"]["value"]["output_preview"]


def test_a_tty_command_that_cannot_start_is_a_spawn_error_and_leaves_nothing(agent, tmp_path):
    shell = tmp_path / "badshell"
    shell.write_text("#!/no/such/interpreter\n")
    shell.chmod(0o755)
    with pytest.raises(spawn.SpawnError) as info:
        command.run(
            Agent(agent),
            command.CommandSpec(
                "true", agent.root, str(shell), False, True, True, 5000, agent.root
            ),
        )
    assert "could not start the command under a terminal" in str(info.value)
    assert store.all_records(agent) == [] and store.active_ids(agent) == []
    assert Agent(agent).state().active_task_ids == []


def test_handoff_files_round_trip(agent):
    tdir = agent.task_dir("task_h")
    tdir.mkdir(parents=True)
    assert handoff.read_ended(agent, "task_h") is None
    with handoff.held(agent, "task_h"):
        handoff.write_ended(agent, "task_h", None, 15)
    assert handoff.read_ended(agent, "task_h") == {"exit_status": None, "signal": 15}
    (tdir / handoff.SPAWN_ERROR).write_text("{not json")
    assert handoff.read_spawn_error(agent, "task_h") is None
    handoff.write_spawn_error(agent, "task_h", "no", {"x": 1})
    assert handoff.read_spawn_error(agent, "task_h") == {"message": "no", "details": {"x": 1}}
    assert handoff.starter_alive({"starter_pid": os.getpid()})
    assert not handoff.starter_alive({"starter_pid": 0})
    assert json.loads((tdir / handoff.ENDED).read_text())["signal"] == 15


def test_ptytask_spawn_is_confined_and_sized(agent):
    """The supervisor's spawn on its own: the agent's sandbox, a ROWS x COLS terminal."""
    store.make_scratch(agent, "task_p")
    record = {
        "id": "task_p",
        "command": {
            "cmd": 'stty size; echo "$HOLON_SANDBOX"; echo x > .holon/x || echo refused',
            "workdir": str(agent.root),
            "shell": "/bin/sh",
            "login": False,
            "execution_root": str(agent.root),
        },
    }
    child = ptytask.spawn(agent, record)
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    lines = child.before.decode().replace("\r\n", "\n").splitlines()
    assert lines[0] == f"{ptytask.ROWS} {ptytask.COLS}"
    assert lines[1] == "workspace-write,network=deny" and lines[-1] == "refused"
    assert child.exitstatus == 0 and not (agent.dot / "x").exists()
    store.remove_scratch(agent, "task_p")


def test_terminal_run_refuses_a_missing_workdir_before_anything_starts(agent):
    spec = command.CommandSpec(
        "true", agent.root / "nope", "/bin/sh", False, True, True, 1000, agent.root
    )
    with pytest.raises(spawn.SpawnError, match="does not exist"):
        terminal.run(Agent(agent), spec, parent_message_id=None, model_ref=None)
    assert store.all_records(agent) == []
    assert not agent.scratch.exists() or list(agent.scratch.iterdir()) == []
