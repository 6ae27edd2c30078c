"""The ApplyPatch handler, a thin layer over holon.patch: errors keep kind, hint, retryable."""

from __future__ import annotations

import pytest

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.patch import errors as patch_errors
from holon.patch.errors import HINTS, patch_error
from holon.tools import apply_patch, registry
from holon.tools.apply_patch import ApplyPatch, ApplyPatchArgs
from holon.tools.base import RenderPolicy, ToolContext, ToolFailure

PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"


@pytest.fixture
def ctx(tmp_path):
    (tmp_path / "f.txt").write_text("a\n")
    return ToolContext(
        agent=Agent(Home(tmp_path / "home", "a")), execution_root=tmp_path, cwd=tmp_path
    )


def test_run_returns_summary_and_result(ctx):
    out = ApplyPatch().run(ctx, ApplyPatchArgs(patch=PATCH))
    assert (ctx.execution_root / "f.txt").read_text() == "b\n"
    assert out.summary_text == "applied patch: 1 file changed (1 modified)"
    assert out.result["modified"] == ["f.txt"] and out.effects is None


@pytest.mark.parametrize("kind", sorted(HINTS))
def test_patch_errors_become_tool_failures_unchanged(ctx, monkeypatch, kind):
    def boom(*_a, **_k):
        raise patch_error(kind, f"{kind} happened", path="f.txt", line=None)

    monkeypatch.setattr(apply_patch, "apply", boom)
    with pytest.raises(ToolFailure) as info:
        ApplyPatch().run(ctx, ApplyPatchArgs(patch=PATCH))
    err = info.value
    assert (err.kind, err.message, err.details) == (kind, f"{kind} happened", {"path": "f.txt"})
    assert err.recovery_hint == HINTS[kind]
    assert err.retryable is (kind in ("io_error", "file_busy"))
    assert (ctx.execution_root / "f.txt").read_text() == "a\n"


def test_commit_failure_is_retryable_through_the_registry(ctx, monkeypatch):
    def fail(*_a, **_k):
        raise patch_errors.PatchError("io_error", "disk full", {"path": "f.txt"})

    monkeypatch.setattr(apply_patch, "apply", fail)
    env = registry.call(ctx, "ApplyPatch", {"patch": PATCH}).envelope
    assert env["error"]["kind"] == "io_error" and env["error"]["retryable"] is True
    assert env["error"]["recovery_hint"] == HINTS["io_error"]


def test_raw_input_json_or_freeform(ctx):
    tool = ApplyPatch()
    assert tool.parse_freeform("anything") == {"patch": "anything"}
    import json

    out = registry.call(ctx, "ApplyPatch", raw=json.dumps({"patch": PATCH}))
    assert out.envelope["status"] == "success"
    (ctx.execution_root / "f.txt").write_text("a\n")
    out = registry.call(ctx, "ApplyPatch", raw="  \n" + PATCH)
    assert out.envelope["status"] == "success" and out.rendered == "Applied patch: M f.txt (1 hunk)"
    out = registry.call(ctx, "ApplyPatch", raw='{"patch": 1}')
    assert out.envelope["error"]["kind"] == "invalid_tool_input"


def test_render_is_the_patch_receipt():
    env = {
        "result": {
            "added": ["n.txt"],
            "modified": [],
            "deleted": [],
            "renamed": [],
            "hunk_counts": {"n.txt": 1},
            "diagnostics": [],
            "ignored_metadata": [],
        }
    }
    assert ApplyPatch().render(env, RenderPolicy()) == "Applied patch: A n.txt"


def test_malformed_quoted_path_is_an_error_envelope(ctx):
    patch = '--- "a/x\\1.txt"\n+++ "b/x\\1.txt"\n@@ -1 +1 @@\n-a\n+b\n'
    env = registry.call(ctx, "ApplyPatch", {"patch": patch}).envelope
    assert env["status"] == "error"
