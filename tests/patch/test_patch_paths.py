"""Patch paths: git quoting, header prefixes, and resolution confined to the execution root."""

from __future__ import annotations

import os

import pytest

from holon.patch.errors import PatchError
from holon.patch.paths import DEV_NULL, header_path, normalise, rename_path, resolve, unquote


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("plain.txt", "plain.txt"),
        ('"caf\\303\\251.txt"', "caf\u00e9.txt"),
        ('"tab\\there"', "tab\there"),
        ('"q\\"uote\\\\d"', 'q"uote\\d'),
        ('"bell\\a\\b\\f\\v\\r\\n"', "bell\a\b\f\v\r\n"),
        ('"x\\q"', "xq"),  # an unknown escape keeps the character
        ('"trailing\\"', "trailing\\"),  # a lone final backslash is literal
        ('"', '"'),
        ('""', ""),
        ('"only start', '"only start'),
        ('"\\377"', "\udcff"),  # invalid UTF-8 survives as a surrogate escape
    ],
)
def test_unquote(raw, expected):
    assert unquote(raw) == expected


def test_unquote_short_octal_escape_is_not_a_crash():
    unquote('"x\\1.txt"')


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("a/src/main.rs", "src/main.rs"),
        ("b/src/main.rs", "src/main.rs"),
        ("src/main.rs", "src/main.rs"),
        ("a/f.txt\t2024-01-01 10:00:00.000000000 +0000", "f.txt"),
        ("f.txt  ", "f.txt"),
        ("b/f.txt\r", "f.txt"),
        (DEV_NULL, None),
        ("/dev/null\t1970-01-01", None),
        ('"a/caf\\303\\251.txt"', "caf\u00e9.txt"),
        ("c/f.txt", "c/f.txt"),
        ("a/a/b", "a/b"),  # only one prefix is stripped
    ],
)
def test_header_path(raw, expected):
    assert header_path(raw) == expected


def test_rename_path_keeps_prefix_like_directories():
    assert rename_path("a/b.txt") == "a/b.txt"
    assert rename_path('"sp ace\\303\\251"\r') == "sp ace\u00e9"


def test_normalise():
    assert normalise("./a//b/../c") == "a/c"
    assert normalise("a/") == "a"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "real.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "out_link").symlink_to(outside)
    (root / "secret_link").symlink_to(outside / "secret")
    (root / "in_link").symlink_to(root / "sub")
    (root / "alias.txt").symlink_to("real.txt")
    return root


@pytest.mark.parametrize(
    "path,cwd,expected",
    [
        ("real.txt", ".", "real.txt"),
        ("sub/new.txt", ".", "sub/new.txt"),
        ("../real.txt", "sub", "real.txt"),
        ("../../real.txt", "sub/deep", "real.txt"),
        ("in_link/deep/f", ".", "sub/deep/f"),
        ("alias.txt", ".", "real.txt"),
        ("./x/../y", ".", "y"),
    ],
)
def test_resolve_inside(tree, path, cwd, expected):
    real_root = os.path.realpath(tree)
    assert str(resolve(tree, tree / cwd, path)) == os.path.join(real_root, expected)


@pytest.mark.parametrize(
    "path,cwd,needle",
    [
        ("", ".", "invalid patch path"),
        ("a\0b", ".", "invalid patch path"),
        ("/etc/passwd", ".", "absolute paths"),
        ("~/x", ".", "absolute paths"),
        ("~user/x", ".", "absolute paths"),
        ("../x", ".", "outside the workspace"),
        ("../../x", "sub", "outside the workspace"),
        (".", ".", "outside the workspace"),  # the root itself is not a file
        ("sub/..", ".", "outside the workspace"),
        ("../root2/x", ".", "outside the workspace"),  # a sibling sharing the root's prefix
        ("out_link/secret", ".", "a symlink leads outside"),
        ("out_link/new", ".", "a symlink leads outside"),
        ("secret_link", ".", "a symlink leads outside"),
    ],
)
def test_resolve_escapes(tree, path, cwd, needle):
    (tree.parent / "root2").mkdir(exist_ok=True)
    with pytest.raises(PatchError) as info:
        resolve(tree, tree / cwd, path)
    err = info.value
    assert err.kind == "path_escape" and needle in err.message
    assert "inside the workspace" in err.recovery_hint and not err.retryable


def test_symlink_escape_names_its_target(tree):
    with pytest.raises(PatchError) as info:
        resolve(tree, tree, "secret_link")
    assert info.value.details == {
        "path": "secret_link",
        "target": os.path.realpath(tree.parent / "outside" / "secret"),
    }


def test_root_given_through_a_symlink(tmp_path, tree):
    link = tmp_path / "root_link"
    link.symlink_to(tree)
    assert resolve(link, link / "sub", "f") == tree.resolve() / "sub" / "f"
