"""The Lark grammar shipped as the freeform tool grammar
accepts the subset and rejects what is outside it."""

import lark
import pytest
from patch_corpus import SYNTAX_INVALID, TOLERATED, all_valid

from holon.patch.grammar import GRAMMAR
from holon.tools.apply_patch import ApplyPatch


@pytest.fixture(scope="module")
def grammar() -> lark.Lark:
    return lark.Lark(GRAMMAR, start="start")


def test_grammar_is_the_tools_freeform_grammar():
    assert ApplyPatch.freeform_grammar == GRAMMAR


@pytest.mark.parametrize("name", sorted(all_valid()))
def test_grammar_accepts_every_syntactically_valid_patch(grammar, name):
    grammar.parse(all_valid()[name])


@pytest.mark.parametrize("name", sorted(SYNTAX_INVALID))
def test_grammar_rejects_syntactically_invalid_patches(grammar, name):
    with pytest.raises(lark.exceptions.LarkError):
        grammar.parse(SYNTAX_INVALID[name][0])


@pytest.mark.parametrize("name", sorted(TOLERATED))
def test_runtime_tolerance_is_not_part_of_the_grammar(grammar, name):
    """The parser forgives a missing final newline;
    the decoding grammar always ends lines with one."""
    with pytest.raises(lark.exceptions.LarkError):
        grammar.parse(TOLERATED[name])
