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


def test_pip_install_puts_the_man_pages_where_man_finds_them():
    """The installed distribution carries every page under <prefix>/share/man (man-db maps each
    bin/ directory on PATH to ../share/man)."""
    import importlib.metadata
    import sysconfig

    # the distribution pip installed, not an egg-info left in the checkout by the build
    found = importlib.metadata.distributions(name="holon", path=[sysconfig.get_paths()["purelib"]])
    dist = next(iter(found), None)
    assert dist is not None, "holon is not installed: pip install ."
    installed = {f.name for f in dist.files or [] if "share/man/man" in str(f)}
    pages = {p.name for p in (REPO / "man").iterdir() if p.suffix in (".1", ".5")}
    assert pages and pages <= installed, sorted(pages - installed)
