"""holon.providers.lowering: a tool call made freeform (raw text) or as JSON, replayed for a
transport that speaks the other kind, and back."""

from __future__ import annotations

import pytest
from provider_kits import EXEC, PATCH, PATCH_TEXT

from holon.model.conversation import ToolCall
from holon.providers.lowering import freeform_text, json_input

TOOLS = {t.name: t for t in (EXEC, PATCH)}


def call(**kw) -> ToolCall:
    return ToolCall(id="c1", name=kw.pop("name", "ApplyPatch"), **kw)


@pytest.mark.parametrize(
    "made, text",
    [
        (call(raw_arguments=PATCH_TEXT, kind="custom"), PATCH_TEXT),
        (call(arguments={"patch": PATCH_TEXT}), PATCH_TEXT),  # the one string argument
        (call(arguments={"patch": "x"}, raw_arguments="raw wins"), "raw wins"),
        (call(arguments={"n": 3}), '{"n": 3}'),  # one non-string argument: the JSON
        (call(arguments={"a": "x", "b": "y"}), '{"a": "x", "b": "y"}'),
        (call(arguments={"é": "ü", "n": 1}), '{"é": "ü", "n": 1}'),  # not ASCII-escaped
        (call(), "{}"),
    ],
)
def test_freeform_text(made, text):
    assert freeform_text(made) == text


@pytest.mark.parametrize(
    "made, value",
    [
        (call(arguments={"patch": "p"}, raw_arguments="ignored"), {"patch": "p"}),
        (call(raw_arguments=PATCH_TEXT, kind="custom"), {"patch": PATCH_TEXT}),  # the one field
        (call(name="ExecCommand", raw_arguments='{"cmd": "ls"}'), {"cmd": "ls"}),
        (call(name="ExecCommand", raw_arguments="{not json"), {"input": "{not json"}),
        (call(name="ExecCommand", raw_arguments="[1, 2]"), {"input": "[1, 2]"}),
        (call(name="ExecCommand", raw_arguments="   "), {}),
        (call(name="ExecCommand"), {}),
        # a custom call of a tool with several fields (or of an unknown tool) maps to no field
        (call(name="ExecCommand", raw_arguments="ls", kind="custom"), {"input": "ls"}),
        (call(name="Gone", raw_arguments="text", kind="custom"), {"input": "text"}),
        (call(name="Gone", raw_arguments='{"k": 1}', kind="custom"), {"k": 1}),
    ],
)
def test_json_input(made, value):
    assert json_input(made, TOOLS) == value


def test_freeform_and_json_round_trip():
    freeform = call(raw_arguments=PATCH_TEXT, kind="custom")
    as_json = json_input(freeform, TOOLS)
    assert freeform_text(call(arguments=as_json)) == PATCH_TEXT
    made_as_json = call(arguments={"patch": PATCH_TEXT})
    lowered = freeform_text(made_as_json)
    assert json_input(call(raw_arguments=lowered, kind="custom"), TOOLS) == made_as_json.arguments
