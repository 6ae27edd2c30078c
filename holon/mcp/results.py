"""An MCP CallToolResult as the parts of the canonical envelope: text joined for the model;
images, audio and embedded blobs stored as artifacts and referenced; `structuredContent` kept;
a long text kept whole in an artifact with a preview in the result. MCP output is external
evidence: the result says so in its `provenance`."""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from holon.store.artifacts import write_artifact

TEXT_KEEP = 32_000  # characters of text kept in the result; more goes to an artifact
ERROR_KIND = "mcp_tool_error"


def provenance(server: str, tool: str) -> dict[str, str]:
    return {
        "source": "mcp",
        "server": server,
        "tool": tool,
        "trust": "untrusted",
        "content_authority": "external_evidence",
    }


def _blob(artifacts: Path, stem: str, data: Any) -> tuple[str | None, int]:
    """Store base64 `data` as an artifact: (path, bytes); (None, 0) when it is not base64."""
    try:
        raw = base64.b64decode(data or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return None, 0
    return write_artifact(artifacts, stem, raw), len(raw)


def _item(artifacts: Path, server: str, item: Any, texts: list[str]) -> dict[str, Any]:
    """One content item as a reference, its text appended to `texts`."""
    if not isinstance(item, dict):
        return {"type": "unknown"}
    kind = item.get("type")
    if kind == "text":
        texts.append(str(item.get("text", "")))
        return {"type": "text", "chars": len(str(item.get("text", "")))}
    if kind in ("image", "audio"):
        path, size = _blob(artifacts, f"mcp-{server}-{kind}", item.get("data"))
        mime = str(item.get("mimeType", ""))
        texts.append(f"[{kind} {mime}, {size} bytes: {path}]" if path else f"[{kind}: not base64]")
        return {"type": kind, "mime_type": mime, "artifact_path": path, "bytes": size}
    if kind == "resource":
        res = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        uri, mime = str(res.get("uri", "")), str(res.get("mimeType", ""))
        if "text" in res:
            path = write_artifact(artifacts, f"mcp-{server}-resource", str(res["text"]))
            size = len(str(res["text"]).encode("utf-8"))
        else:
            path, size = _blob(artifacts, f"mcp-{server}-resource", res.get("blob"))
        texts.append(f"[resource {uri} ({mime}), {size} bytes: {path}]")
        return {"type": "resource", "uri": uri, "mime_type": mime, "artifact_path": path}
    if kind == "resource_link":
        uri = str(item.get("uri", ""))
        texts.append(f"[resource link {uri}]")
        return {"type": "resource_link", "uri": uri, "name": item.get("name")}
    return {"type": str(kind)[:40]}


def convert(artifacts: Path, server: str, tool: str, raw: dict[str, Any]) -> dict[str, Any]:
    """{text, result, is_error} of one CallToolResult dict."""
    texts: list[str] = []
    content = raw.get("content") if isinstance(raw.get("content"), list) else []
    refs = [_item(artifacts, server, item, texts) for item in content]
    text = "\n".join(texts)
    structured = raw.get("structuredContent")
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    result: dict[str, Any] = {
        "server": server,
        "tool": tool,
        "text": text,
        "content": refs,
        "provenance": provenance(server, tool),
    }
    if structured is not None:
        result["structured_content"] = structured
    if len(text) > TEXT_KEEP:
        result["text"] = text[:TEXT_KEEP]
        result["text_truncated"] = True
        result["text_chars"] = len(text)
        result["text_artifact_path"] = write_artifact(artifacts, f"mcp-{server}-text", text)
    return {"text": text, "result": result, "is_error": raw.get("isError") is True}
