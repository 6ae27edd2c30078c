"""The tools a turn can call (the built-in catalog plus plugins) and the one way to call a tool.

call() is parse -> semantic validation -> run -> project -> render; every
failure, including unknown tools and invalid arguments, comes back as the
canonical error envelope, never as an exception.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from holon import strictjson
from holon.agent import profiles
from holon.errors import HolonError
from holon.mcp import names as mcp_names
from holon.tools import envelope, mcp_tool
from holon.tools.base import CallOutcome, Tool, ToolContext, ToolFailure, bounded
from holon.tools.catalog import BUILTINS

_EXTRA: dict[str, Tool] = {}  # tools registered at run time (plugins, tests' side-effect tools)
_BUILTIN: dict[str, Tool] = {}  # built-in tools, made once per process (a tool holds no state)
_plugins_loaded = False


def register(tool: Tool) -> None:
    """Add a tool; the MCP prefix is refused (rfc-tool-contract-consistency reserves it)."""
    if mcp_names.is_mcp(tool.name):
        reserved = f"the {mcp_names.PREFIX} prefix is reserved for MCP tools"
        raise ToolFailure("tool_plugin_unavailable", f"cannot register {tool.name!r}: {reserved}")
    _EXTRA[tool.name] = tool


def names() -> list[str]:
    _load_plugins()
    return sorted(set(BUILTINS) | set(_EXTRA))


def get(name: str) -> Tool | None:
    _load_plugins()
    if name in _EXTRA:
        return _EXTRA[name]
    tool = _BUILTIN.get(name)
    if tool is None:
        target = BUILTINS.get(name)
        if target is None:
            return None
        module, cls = target.split(":")
        tool = _BUILTIN[name] = getattr(importlib.import_module(module), cls)()
    return tool


def all_tools() -> list[Tool]:
    return [t for t in (get(n) for n in names()) if t is not None]


def _load_plugins() -> None:
    """Extra tools named in HOLON_TOOL_PLUGINS ("module:Class,..."): site-specific tools, test
    probes."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for target in filter(
        None, (t.strip() for t in os.environ.get("HOLON_TOOL_PLUGINS", "").split(","))
    ):
        module, _, cls = target.partition(":")
        try:
            register(getattr(importlib.import_module(module), cls)())
        except (ImportError, AttributeError) as exc:
            raise ToolFailure(
                "tool_plugin_unavailable", f"cannot load tool plugin {target!r}: {exc}"
            ) from None


def invalid_input(name: str, message: str, details: dict[str, Any]) -> ToolFailure:
    return ToolFailure(
        "invalid_tool_input",
        f"input for {name} does not match the tool schema",
        details={"tool_name": name, **details, "parse_error": message},
        recovery_hint=f"provide input for {name} that matches the published tool schema",
    )


def parse_args(tool: Tool, arguments: dict[str, Any] | None, raw: str | None) -> Any:
    from pydantic import ValidationError

    if arguments is None:
        if raw is None:
            arguments = {}
        elif tool.freeform_grammar is not None and not raw.lstrip().startswith("{"):
            arguments = tool.parse_freeform(raw)
        else:
            try:
                arguments = strictjson.loads(raw) if raw.strip() else {}
            except strictjson.InvalidJson as exc:
                raise invalid_input(tool.name, f"arguments are not valid JSON: {exc}", {}) from None
    if not isinstance(arguments, dict):
        raise invalid_input(tool.name, "arguments must be a JSON object", {})
    try:
        strictjson.check(arguments)
    except strictjson.InvalidJson as exc:
        raise invalid_input(tool.name, str(exc), {}) from None
    try:
        return tool.Args.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = bounded(".".join(str(p) for p in first.get("loc", ())))
        msg = "; ".join(
            f"{bounded('.'.join(str(p) for p in e['loc'])) or '$'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise invalid_input(tool.name, msg, {"field": field} if field else {}) from None


def failed(name: str, error: dict[str, Any]) -> CallOutcome:
    """The outcome of a call that did not run: the error envelope and its bounded receipt."""
    env = envelope.failure(name, error)
    return CallOutcome(env, envelope.render_error(env))


def _outside_profile(ctx: ToolContext, name: str) -> ToolFailure | None:
    """The refusal of a tool the agent's profile preset does not offer (holon.agent.profiles), or
    None. A call the model makes anyway, or `holon tool call`, runs nothing."""
    try:
        preset = profiles.preset_of(ctx.home)
    except HolonError as exc:  # a corrupt agent.json: fail closed, naming the file
        return ToolFailure(exc.kind, exc.message, recovery_hint=exc.hint)
    if profiles.allows(preset, name):
        return None
    return ToolFailure(
        "unsupported_agent_profile_capability",
        f"{name} is not available to an agent with the {preset} profile",
        details={
            "tool_name": name,
            "profile_preset": preset,
            "available": profiles.allowed(preset, names()),
        },
        recovery_hint=profiles.refusal_hint(preset, name),
    )


def call(
    ctx: ToolContext, name: str, arguments: dict[str, Any] | None = None, raw: str | None = None
) -> CallOutcome:
    """Run one tool call: canonical envelope, model-visible receipt, and effects for the runtime."""
    tool = get(name) or mcp_tool.lookup(ctx, name)
    if tool is None:
        return failed(
            bounded(name),
            ToolFailure(
                "unknown_tool",
                f"no tool named {name!r}",
                details={"tool_name": name, "available": names()},
                recovery_hint="call one of the tools listed in the tool catalog",
            ).to_error(),
        )
    refused = _outside_profile(ctx, tool.name)
    if refused is not None:
        return failed(tool.name, refused.to_error())
    try:
        args = parse_args(tool, arguments, raw)
        tool.validate(ctx, args)
        output = tool.run(ctx, args)
        result = tool.project(ctx, output)
    except ToolFailure as exc:
        return failed(tool.name, exc.to_error())
    env = envelope.success(tool.name, output.summary_text, result)
    return CallOutcome(env, tool.render(env, ctx.policy), output.effects)
