"""The sandbox's parts: policy files, the environment policy, the Landlock binding, the rights
granted around protected paths, the macOS profile, and failing closed."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_marks import needs_landlock

from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home.layout import Home
from holon.sandbox import confine, landlock, mountns, places, policy, seatbelt
from holon.sandbox.policy import Policy
from holon.tasks import store
from holon.tasks.command import command


def _spec(home: Path, cmd: str) -> command.CommandSpec:
    return command.CommandSpec(cmd, home, "/bin/sh", False, False, False, 5000, home)


# --- policy ------------------------------------------------------------------------------------


def test_default_then_config_toml_then_sandbox_json(home, holon_env):
    h = Home(home)
    assert policy.read(h) == Policy()
    (holon_env / "config.toml").write_text('[sandbox]\nmode = "read-only"\nnetwork = "allow"\n')
    from holon import config

    config.reset()
    assert (policy.read(h).mode, policy.read(h).source) == ("read-only", "config.toml [sandbox]")
    written = policy.write(h, Policy("full-access", "allow", ("GH_*",), ("/srv",)))
    assert written.mode == "full-access" and written.source == str(h.sandbox_json)
    assert json.loads(h.sandbox_json.read_text())["pass_env"] == ["GH_*"]


@pytest.mark.parametrize(
    "doc",
    [
        "[1]",
        '{"mode": "yolo"}',
        '{"network": "maybe"}',
        '{"pass_env": "GH_TOKEN"}',
        '{"writable_roots": ["relative/dir"]}',
        '{"writable_roots": [""]}',
        "{not json",
    ],
)
def test_an_invalid_sandbox_json_fails_closed(home, doc):
    h = Home(home)
    h.sandbox_json.write_text(doc)
    with pytest.raises(HolonError) as err:
        policy.read(h)
    assert err.value.kind in ("invalid_sandbox_config", "corrupt_state")
    with pytest.raises(HolonError):
        command.run(Agent(h), _spec(home, "true"))
    assert not list(h.scratch.iterdir())  # nothing left behind


def test_choose_full_access_opens_the_network_unless_told():
    assert policy.choose(Policy(), "full-access", None, None, None).network == "allow"
    assert policy.choose(Policy(), "full-access", "deny", None, None).network == "deny"
    assert policy.choose(Policy(network="allow"), "read-only", None, None, None).network == "allow"
    with pytest.raises(HolonError):
        policy.choose(Policy(), "workspace-write", None, None, ("rel",))


def test_command_env_removes_credentials_unless_passed(home, holon_env):
    (holon_env / "config.toml").write_text('[providers.corp]\napi_key_env = "CORP_LLM"\n')
    from holon import config

    config.reset()
    environ = {
        "OPENAI_API_KEY": "a",
        "aws_secret_access_key": "b",
        "SSH_AUTH_SOCK": "c",
        "CORP_LLM": "d",
        "GITHUB_TOKEN": "e",
        "PATH": "/bin",
        "HOLON_AGENT_ID": "spoofed",
    }
    env = policy.command_env(environ, Policy(pass_env=("GITHUB_*",)), Home(home))
    assert set(env) == {
        "GITHUB_TOKEN",
        "PATH",
        "HOLON_AGENT_ID",
        "HOLON_AGENT_HOME",
        "HOLON_SANDBOX",
    }
    assert env["HOLON_AGENT_ID"] == "agent"


# --- Landlock and the rights around protected paths --------------------------------------------


def test_handled_rights_follow_the_abi():
    assert landlock.handled_fs(1) == (1 << 13) - 1
    assert (
        landlock.handled_fs(2) & landlock.REFER and not landlock.handled_fs(2) & landlock.TRUNCATE
    )
    assert landlock.handled_fs(7) & landlock.TRUNCATE


@needs_landlock
def test_a_ruleset_refuses_a_missing_path():
    rs = landlock.Ruleset(landlock.abi(), deny_tcp=False)
    try:
        with pytest.raises(FileNotFoundError):
            rs.allow("/nonexistent/holon", landlock.READ)
    finally:
        rs.close()
    assert rs.fd == -1


def test_around_grants_everything_but_the_path_to_protected(tmp_path):
    (tmp_path / "a/b/.holon/queue").mkdir(parents=True)
    (tmp_path / "a/b/notes").mkdir()
    (tmp_path / "a/file").write_text("")
    (tmp_path / "c").mkdir()
    (tmp_path / "a/link").symlink_to("/")
    protected = [str(tmp_path / "a/b/.holon")]
    got = sorted(places.around(str(tmp_path), protected))
    assert got == sorted(str(tmp_path / p) for p in ("a/b/notes", "a/file", "c"))
    assert places.around(str(tmp_path / "c"), protected) == [str(tmp_path / "c")]
    assert places.around(str(tmp_path / "a/b/.holon/queue"), protected) == []


@needs_landlock
def test_without_a_mount_namespace_landlock_alone_keeps_holon_read_only(home, monkeypatch):
    monkeypatch.setattr(mountns, "_available", False)
    h = Home(home)
    spec = _spec(home, "echo n > notes/n.md && cat notes/n.md")
    assert command.run(Agent(h), spec).stdout == "n\n"
    fin = command.run(Agent(h), _spec(home, "echo x > .holon/queue/new/forged"))
    assert fin.exit_status != 0 and "Permission denied" in fin.stderr
    assert not (home / ".holon/queue/new/forged").exists()
    # the cost of the fallback: no new entry directly in the directory holding .holon
    assert command.run(Agent(h), _spec(home, "echo x > top.txt")).exit_status != 0
    assert confine.describe(h)["enforcement"] == "landlock"


def test_fail_closed_without_landlock(home, monkeypatch):
    monkeypatch.setattr(landlock, "_abi", 0)
    monkeypatch.setattr(sys, "platform", "linux")
    h = Home(home)
    with pytest.raises(HolonError) as err:
        command.run(Agent(h), _spec(home, "true"))
    assert err.value.kind == "sandbox_unavailable" and "full-access" in err.value.hint
    assert not list(h.scratch.iterdir())
    policy.write(h, Policy("full-access", "allow"))
    assert command.run(Agent(h), _spec(home, "echo free")).stdout == "free\n"
    assert confine.describe(h)["enforced"] is True


def test_a_kernel_that_cannot_deny_tcp_refuses_a_denied_network(home, monkeypatch):
    monkeypatch.setattr(landlock, "_abi", 3)
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(HolonError) as err:
        command.run(Agent(Home(home)), _spec(home, "true"))
    assert err.value.kind == "sandbox_unavailable" and "ABI 3" in err.value.message


def test_apply_patch_rule_matches_the_command_rule(home):
    h = Home(home)
    assert confine.refused_write(h, home, [home / "notes/x.md"]) is None
    path, why = confine.refused_write(h, home, [home / ".holon/queue/new/f"])
    assert "runtime" in why
    (home / "lnk").symlink_to(home / ".holon")
    assert confine.refused_write(h, home, [home / "lnk/state.json"]) is not None
    policy.write(h, Policy("read-only"))
    assert "read-only" in confine.refused_write(h, home, [home / "notes/x.md"])[1]


# --- macOS ---------------------------------------------------------------------------------------


def test_seatbelt_profile_per_mode():
    ww = seatbelt.profile(
        Policy(),
        writable=["/work/ws", "/tmp", '/odd "dir"', "/h/.holon/scratch/t1"],
        protected=["/h/.holon"],
        masked=["/hh/keys.json"],
    )
    lines = ww.splitlines()
    assert lines[0] == "(version 1)" and "(deny default)" in lines
    allow = next(
        i for i, line in enumerate(lines) if line.startswith("(allow file-write* (subpath")
    )
    deny = lines.index('(deny file-write* (subpath "/h/.holon"))')
    assert allow < deny < lines.index('(allow file-write* (subpath "/h/.holon/scratch/t1"))')
    assert '(subpath "/odd \\"dir\\"")' in lines[allow]
    assert '(deny file-read* (literal "/hh/keys.json"))' in lines
    assert "(allow network* system-socket)" not in lines
    full = seatbelt.profile(
        Policy("full-access", "allow"), writable=["/"], protected=["/h/.holon"], masked=[]
    )
    assert "(allow file-write*)" in full and "(allow network* system-socket)" in full
    assert '(deny file-write* (subpath "/h/.holon"))' in full
    ro = seatbelt.profile(Policy("read-only"), writable=["/s"], protected=[], masked=[])
    assert '(allow file-write* (subpath "/s"))' in ro


# --- another user: a user namespace instead of root's mount namespace -------------------------


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@needs_landlock
def test_an_unprivileged_user_is_confined_the_same_way():
    if os.getuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root to switch to another user with setpriv")
    base = Path("/tmp") / f"holon-nobody-{os.getpid()}"
    base.mkdir()
    os.chmod(base, 0o777)
    try:
        script = (
            "import sys\n"
            "from pathlib import Path\n"
            "from holon.home.init import init_home\n"
            "from holon.home.layout import Home\n"
            "from holon.agent.handle import Agent\n"
            "from holon.tasks.command import command\n"
            "root = Path(sys.argv[1]) / 'agent'\n"
            "init_home(str(root), None)\n"
            "h = Home(root)\n"
            "run = lambda c: command.run(Agent(h), command.CommandSpec(c, root, '/bin/sh', False,"
            " False, False, 5000, root))\n"
            "print(run('echo a > a.txt && cat a.txt').stdout.strip())\n"
            "print(run('echo x > .holon/queue/new/forged').exit_status)\n"
            "print(sorted(p.name for p in (root / '.holon/queue/new').iterdir()))\n"
        )
        probe = subprocess.run([*NOBODY, sys.executable, "-c", "1"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip("the interpreter is not usable by another user here")
        repo = str(Path(__file__).resolve().parents[2])
        proc = subprocess.run(
            [*NOBODY, sys.executable, "-c", script, str(base)],
            capture_output=True,
            text=True,
            env={
                "PATH": os.environ["PATH"],
                "PYTHONPATH": repo,
                "HOLON_HOME": str(base / "hh"),
                "HOME": str(base),
            },
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.split("\n")
        # "a": a new file in the home's root, which only the user-namespace path allows
        assert lines[0] == "a" and lines[1] != "0" and lines[2] == "[]"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_scratch_is_private_and_removed(home):
    h = Home(home)
    path = store.make_scratch(h, "task_x")
    assert path.stat().st_mode & 0o777 == 0o700
    (path / "exit_status").write_text("3\n")
    assert store.read_exit_status(h, "task_x") == 3
    store.remove_scratch(h, "task_x")
    assert not path.exists() and store.read_exit_status(h, "task_x") is None


# --- capabilities --------------------------------------------------------------------------------


@pytest.mark.skipif(os.getuid() != 0, reason="only root has capabilities to drop")
def test_a_command_drops_ptrace_and_the_capabilities_that_undo_the_sandbox():
    from holon.sandbox import caps

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits at once
        caps.drop()
        lib = ctypes.CDLL(None)
        kept = [c for c in caps.DROPPED if caps.held(c) or lib.prctl(23, c, 0, 0, 0) == 1]
        os._exit(10 + len(kept) if kept or not caps.held(0) else 0)  # CAP_CHOWN stays
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_seatbelt_hides_holon_home_but_the_commands_own_places():
    kept = ["/hh/agents/a"]
    ww = seatbelt.profile(
        Policy(),
        writable=["/tmp", "/hh/agents/a", "/hh/agents/a/.holon/scratch/t1"],
        protected=["/hh/agents/a/.holon"],
        masked=["/hh/agents/a/.holon/admission.key"],
        hidden="/hh",
        kept=kept,
    ).splitlines()
    deny = ww.index('(deny file-read* file-write* (subpath "/hh"))')
    assert (
        ww.index(
            '(allow file-write* (subpath "/tmp") (subpath "/hh/agents/a") '
            '(subpath "/hh/agents/a/.holon/scratch/t1"))'
        )
        < deny
    )
    assert deny < ww.index('(allow file-read* (subpath "/hh/agents/a"))')
    assert deny < ww.index('(allow file-write* (subpath "/hh/agents/a"))')
    assert ww.index('(deny file-write* (subpath "/hh/agents/a/.holon"))') < ww.index(
        '(deny file-read* (literal "/hh/agents/a/.holon/admission.key"))'
    )
    ro = seatbelt.profile(
        Policy("read-only"), writable=["/s"], protected=[], masked=[], hidden="/hh", kept=kept
    ).splitlines()
    assert '(allow file-read* (subpath "/hh/agents/a"))' in ro
    assert '(allow file-write* (subpath "/hh/agents/a"))' not in ro


def test_seatbelt_denies_other_agents_homes_outside_holon_home():
    ww = seatbelt.profile(
        Policy(),
        writable=["/tmp", "/hh/agents/a"],
        protected=["/hh/agents/a/.holon", "/tmp/b/.holon"],
        masked=[],
        hidden="/hh",
        kept=["/hh/agents/a"],
        covered=["/tmp/b/.holon"],
    )
    assert '(deny file-read* file-write* (subpath "/tmp/b/.holon"))' in ww.splitlines()
