"""holon.ops.models: the built-in table and the refusals that need no network."""

from __future__ import annotations

import pytest

from holon.context.window import FAMILY_WINDOWS
from holon.errors import UsageError
from holon.ops import models


def test_the_table_is_the_window_tables(holon_env):
    doc = models.table()
    assert [(f["family"], f["context_window"]) for f in doc["families"]] == list(FAMILY_WINDOWS)
    assert doc["configured"] == []


@pytest.mark.parametrize("provider, kind", [("nosuch", "unknown_provider"),
                                            ("scripted", "no_models_endpoint"),
                                            ("openai", "missing_credentials")])  # fmt: skip
def test_what_cannot_be_asked_is_refused_before_any_request(holon_env, provider, kind):
    with pytest.raises(UsageError) as caught:
        models.listed_by(provider)
    assert caught.value.kind == kind
