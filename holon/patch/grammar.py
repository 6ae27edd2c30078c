"""The Lark grammar of the ApplyPatch subset, offered as a freeform (custom) tool on Responses
transports, where a greedy-lexer engine (llguidance) decodes it; whole-line terminals keep it
decodable that way and by Lark's Earley parser."""

from pathlib import Path

GRAMMAR = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
