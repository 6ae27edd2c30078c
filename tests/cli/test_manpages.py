"""Man pages are generated from the click tree and committed; they must not drift."""

from __future__ import annotations

import os

from helpers import REPO


def test_man_pages_match_the_code():
    from holon.cli.manpage import generate

    pages = generate()
    if os.environ.get("HOLON_UPDATE_GOLDEN") == "1":
        for name, text in pages.items():
            (REPO / "man" / name).write_text(text)
    for name, text in pages.items():
        path = REPO / "man" / name
        assert path.exists(), f"{path} missing: run python -m holon.cli.manpage"
        assert path.read_text() == text, f"{path} drifted: run python -m holon.cli.manpage"
    assert (REPO / "man" / "holon-home.5").exists()
    assert set(pages) >= {"holon.1", "holon-tick.1", "holon-prompt.1"}
