"""holon.store.artifacts: full payloads on disk, referenced by an absolute path."""

from __future__ import annotations

import os
from pathlib import Path

from holon.store.artifacts import write_artifact


def test_returns_absolute_path_inside_dir_with_full_payload(tmp_path):
    arts = tmp_path / "deep" / "artifacts"  # created on demand
    payload = "é" + "x" * 300_000 + "\nend\n"
    ref = write_artifact(arts, "exec-stdout", payload)
    assert isinstance(ref, str) and os.path.isabs(ref)
    path = Path(ref)
    assert path.parent == arts
    assert path.name.startswith("exec-stdout-") and path.name.endswith(".log")
    assert path.read_bytes() == payload.encode("utf-8")


def test_bytes_payload_is_kept_verbatim(tmp_path):
    data = bytes(range(256)) * 10
    ref = write_artifact(tmp_path, "bin", data)
    assert Path(ref).read_bytes() == data


def test_same_stem_never_overwrites(tmp_path):
    refs = {write_artifact(tmp_path, "same", f"payload {i}") for i in range(20)}
    assert len(refs) == 20
    assert sorted(Path(r).read_text() for r in refs) == sorted(f"payload {i}" for i in range(20))
    assert not [p for p in tmp_path.iterdir() if ".tmp." in p.name]  # no staging leftovers


def test_agent_home_artifact_is_absolute(agent, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    ref = write_artifact(agent.artifacts, "task-failure", "details")
    assert os.path.isabs(ref) and Path(ref).parent == agent.artifacts
    assert Path(ref).read_text() == "details"
