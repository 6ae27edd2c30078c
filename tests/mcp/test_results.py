"""A CallToolResult as the envelope's parts."""

from __future__ import annotations

import base64
from pathlib import Path

from holon.mcp import results


def test_text_is_joined_and_structured_content_kept(tmp_path):
    raw = {
        "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        "structuredContent": {"n": 2},
    }
    out = results.convert(tmp_path, "srv", "t", raw)
    assert out["text"] == "one\ntwo" and not out["is_error"]
    assert out["result"]["structured_content"] == {"n": 2}
    assert out["result"]["provenance"]["trust"] == "untrusted"


def test_images_audio_and_resources_become_artifacts(tmp_path):
    png = base64.b64encode(b"\x89PNG fake").decode()
    raw = {
        "content": [
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "audio", "data": "!!", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ],
        "isError": False,
    }
    out = results.convert(tmp_path, "srv", "t", raw)
    image, audio, resource, link = out["result"]["content"]
    assert Path(image["artifact_path"]).read_bytes() == b"\x89PNG fake"
    assert audio["artifact_path"] is None  # not base64: referenced, never stored as garbage
    assert Path(resource["artifact_path"]).read_text() == "body"
    assert link["uri"] == "file:///b"
    assert "[image image/png, 9 bytes:" in out["text"]


def test_long_text_goes_whole_to_an_artifact_and_is_error_is_flagged(tmp_path):
    raw = {"content": [{"type": "text", "text": "y" * 50_000}], "isError": True}
    out = results.convert(tmp_path, "srv", "t", raw)
    assert out["is_error"]
    assert len(out["result"]["text"]) == results.TEXT_KEEP
    assert Path(out["result"]["text_artifact_path"]).read_text() == "y" * 50_000
