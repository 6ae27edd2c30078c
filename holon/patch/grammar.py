"""The Lark grammar of the ApplyPatch subset, offered as a freeform (custom) tool on Responses
transports."""

from pathlib import Path

GRAMMAR = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
