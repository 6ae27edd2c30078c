"""`holon sandbox show|set` through the real entry point."""

from __future__ import annotations

import json

from holon.cli import sandbox  # noqa: F401  (the command module this file tests)


def test_show_set_and_bad_input(tmp_path, holon):
    home = tmp_path / "a"
    assert holon("init", str(home)).returncode == 0
    shown = json.loads(holon("sandbox", "show", str(home), "--json").stdout)
    assert (shown["mode"], shown["network"], shown["source"]) == (
        "workspace-write",
        "deny",
        "default",
    )
    assert str(home / ".holon") in shown["protected"]
    proc = holon("sandbox", "set", str(home), "read-only", "--pass-env", "GH_*", "--json")
    doc = json.loads(proc.stdout)
    assert (doc["mode"], doc["pass_env"], doc["network"]) == ("read-only", ["GH_*"], "deny")
    assert json.loads((home / ".holon/sandbox.json").read_text())["mode"] == "read-only"
    text = holon("sandbox", "show", str(home)).stdout
    assert text.splitlines()[0] == f"mode:       read-only ({home / '.holon/sandbox.json'})"
    bad = holon("sandbox", "set", str(home), "yolo")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    rel = holon("sandbox", "set", str(home), "workspace-write", "--writable-root", "rel")
    assert rel.returncode == 2 and "absolute" in rel.stderr
    (home / ".holon/sandbox.json").write_text('{"mode": "yolo"}')
    broken = holon("sandbox", "show", str(home))
    assert broken.returncode == 1
    assert (
        broken.stderr.startswith("holon: invalid_sandbox_config: ")
        and "Traceback" not in broken.stderr
    )
    status = holon("status", str(home)).stdout
    assert "sandbox:  invalid:" in status
