"""Prompt guidance for ApplyPatch: golden snapshots per exposure, and the rules they must state."""

import json

import pytest
from golden_check import check_golden

from holon.patch.guidance import prompt_guidance
from holon.patch.parser import parse_patch


@pytest.mark.parametrize("exposure", ["freeform", "json"])
def test_guidance_matches_golden(exposure):
    check_golden(f"prompts/apply_patch_{exposure}.txt", prompt_guidance(exposure))


def test_json_guidance_shows_the_patch_object_and_its_patch_parses():
    text = prompt_guidance("json")
    line = next(line for line in text.splitlines() if line.startswith('{"patch"'))
    assert line == '{"patch":"--- a/path\\n+++ b/path\\n@@ -1,1 +1,1 @@\\n-old\\n+new\\n"}'
    [patch] = parse_patch(json.loads(line)["patch"])
    assert patch.op == "modify" and "freeform" not in text


def test_freeform_guidance_shows_the_bare_body():
    text = prompt_guidance("freeform")
    assert "--- a/path\n+++ b/path\n@@ -1,1 +1,1 @@\n-old\n+new\n" in text
    assert '{"patch"' not in text


@pytest.mark.parametrize("exposure", ["freeform", "json"])
def test_old_dsl_is_only_mentioned_as_forbidden(exposure):
    text = prompt_guidance(exposure)
    assert text.count("*** Begin Patch") == 1 and "Do not use the old `*** Begin Patch`" in text


def test_unknown_exposure_is_refused():
    with pytest.raises(ValueError):
        prompt_guidance("xml")  # type: ignore[arg-type]
