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


def declared_man_pages(pyproject: str) -> dict[str, set[str]]:
    """share/man/manN -> the pages `[tool.setuptools.data-files]` installs there."""
    import tomllib

    data_files = tomllib.loads(pyproject)["tool"]["setuptools"].get("data-files", {})
    return {
        target: {p.name for pattern in patterns for p in REPO.glob(pattern)}
        for target, patterns in data_files.items()
        if target.startswith("share/man/")
    }


def test_every_man_page_is_declared_for_install():
    """A regular install copies man/*.N to <prefix>/share/man/manN (man-db maps each bin/
    directory on PATH to ../share/man): every page is declared, in the section its suffix
    names."""
    declared = declared_man_pages((REPO / "pyproject.toml").read_text())
    pages = {p.name for p in (REPO / "man").iterdir() if p.suffix in (".1", ".5")}
    assert pages and set().union(*declared.values()) == pages
    for target, names in declared.items():
        assert all(n.endswith("." + target.removeprefix("share/man/man")) for n in names), target
    assert declared_man_pages('[tool.setuptools]\nname = "x"\n') == {}  # so this can fail


def test_pip_install_puts_the_man_pages_where_man_finds_them():
    """The installed distribution carries every page under <prefix>/share/man. An editable install
    (`pip install -e`) installs no data files by design (only the import hook and the scripts):
    there the pages are the checkout's, and what a regular install copies is their declaration,
    checked above."""
    import importlib.metadata
    import json
    import sysconfig

    # the distribution pip installed, not an egg-info left in the checkout by the build
    found = importlib.metadata.distributions(name="holon", path=[sysconfig.get_paths()["purelib"]])
    dist = next(iter(found), None)
    assert dist is not None, "holon is not installed: pip install ."
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    installed = {f.name for f in dist.files or [] if "share/man/man" in str(f)}
    if direct.get("dir_info", {}).get("editable"):
        assert direct["url"] == REPO.as_uri() and installed == set(), direct
        return
    pages = {p.name for p in (REPO / "man").iterdir() if p.suffix in (".1", ".5")}
    assert pages and pages <= installed, sorted(pages - installed)
