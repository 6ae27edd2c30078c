"""One patch as a transaction: plan in memory, then stage, replace and delete; all or nothing."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from holon.patch.commit import commit
from holon.patch.errors import PatchError
from holon.patch.parser import parse_patch
from holon.patch.transaction import NEW_FILE_MODE, plan

NOBODY = 65534


def snapshot(root: Path) -> dict:
    tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            key = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                tree[key] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                tree[key] = ("dir", st.st_mode & 0o7777)
            else:
                tree[key] = ("file", st.st_mode & 0o7777, path.read_bytes())
    return tree


def write(root: Path, name: str, text: str, mode: int = 0o644) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def apply(root: Path, patch: str) -> dict:
    """plan + commit; the PatchError kind (and retryable) or the changed paths."""
    try:
        commit(plan(root, root, parse_patch(patch)))
    except PatchError as exc:
        return {"kind": exc.kind, "retryable": exc.retryable, "message": exc.message}
    return {"kind": None}


MODIFY_A = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"


def test_plan_changes_nothing_and_computes_every_change(tmp_path):
    write(tmp_path, "a.txt", "a\n", 0o755)
    write(tmp_path, "gone.txt", "g\n")
    write(tmp_path, "old.txt", "o\n", 0o600)
    before = snapshot(tmp_path)
    patch = (
        MODIFY_A
        + "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n"
        + "--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n+n\n"
        + "diff --git a/old.txt b/moved.txt\nrename from old.txt\nrename to moved.txt\n"
    )
    changes = plan(tmp_path, tmp_path, parse_patch(patch))
    assert snapshot(tmp_path) == before
    root = tmp_path.resolve()
    assert [(c.src, c.dst, c.data, c.mode) for c in changes] == [
        (None, root / "a.txt", b"A\n", 0o755),
        (root / "gone.txt", None, b"", NEW_FILE_MODE),
        (None, root / "new/n.txt", b"n\n", NEW_FILE_MODE),
        (root / "old.txt", root / "moved.txt", b"o\n", 0o600),
    ]
    commit(changes)
    after = snapshot(tmp_path)
    assert after["a.txt"] == ("file", 0o755, b"A\n") and "gone.txt" not in after
    assert after["new/n.txt"] == ("file", 0o644, b"n\n")
    assert after["moved.txt"] == ("file", 0o600, b"o\n") and "old.txt" not in after
    assert not [k for k in after if ".tmp." in k]


def test_two_paths_to_one_file_are_duplicates(tmp_path):
    write(tmp_path, "real.txt", "a\nb\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    patch = (
        "--- a/real.txt\n+++ b/real.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- a/alias.txt\n+++ b/alias.txt\n@@ -2 +2 @@\n-b\n+B\n"
    )
    with pytest.raises(PatchError) as info:
        plan(tmp_path, tmp_path, parse_patch(patch))
    assert info.value.kind == "duplicate_file_patch"
    assert info.value.message == "alias.txt: resolves to the same file as real.txt"


def test_rename_onto_a_file_another_patch_deletes_is_refused(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "b.txt", "b\n")
    patch = "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n" + (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"
    )
    before = snapshot(tmp_path)
    assert apply(tmp_path, patch)["kind"] == "duplicate_file_patch"
    assert snapshot(tmp_path) == before


def test_staging_failure_removes_temp_files_and_new_directories(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "blocker", "I am a file\n")
    before = snapshot(tmp_path)
    patch = (
        MODIFY_A + "--- /dev/null\n+++ b/new/deep/x.txt\n@@ -0,0 +1 @@\n+x\n"
        "--- /dev/null\n+++ b/blocker/y.txt\n@@ -0,0 +1 @@\n+y\n"
    )
    res = apply(tmp_path, patch)
    assert res["kind"] == "io_error" and res["retryable"] is True
    assert "nothing was changed" in res["message"]
    assert snapshot(tmp_path) == before  # no temp file, no new/ or new/deep/


def test_existing_directories_survive_a_rollback(tmp_path):
    write(tmp_path, "keep/old.txt", "o\n")
    write(tmp_path, "blocker", "f\n")
    before = snapshot(tmp_path)
    patch = (
        "--- /dev/null\n+++ b/keep/sub/n.txt\n@@ -0,0 +1 @@\n+n\n"
        "--- /dev/null\n+++ b/blocker/y.txt\n@@ -0,0 +1 @@\n+y\n"
    )
    assert apply(tmp_path, patch)["kind"] == "io_error"
    assert snapshot(tmp_path) == before


# -- a read-only directory (the check needs an unprivileged user: root ignores directory modes) --


def guarded(fn):
    try:
        return fn()
    except Exception as exc:  # an exception that is not a PatchError escapes apply()
        return {"kind": "raw", "exception": type(exc).__name__, "message": str(exc)}


def unprivileged(fn):
    """fn() as an unprivileged user (a forked child when we are root); returns its JSON result."""
    if os.geteuid() != 0:
        return guarded(fn)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, report, and never return into pytest
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            out = guarded(fn)
            os.write(write_fd, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.fixture
def shared_dir(tmp_path):
    """A directory an unprivileged child can use (pytest's tmp_path is private to root)."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    base = Path(tempfile.mkdtemp(prefix="holon-patch-ro-"))
    os.chown(base, NOBODY, NOBODY)
    try:
        yield base
    finally:
        for dirpath, _, _ in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base)


def owned_tree(root: Path) -> None:
    write(root, "a.txt", "a\n")
    write(root, "ro/f.txt", "f\n")
    write(root, "ro/victim.txt", "v\n")
    if os.geteuid() == 0:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.chown(name, NOBODY, NOBODY)
    (root / "ro").chmod(0o555)


def test_read_only_directory_fails_the_whole_patch(shared_dir):
    owned_tree(shared_dir)
    before = snapshot(shared_dir)
    patch = MODIFY_A + "--- a/ro/f.txt\n+++ b/ro/f.txt\n@@ -1 +1 @@\n-f\n+F\n"
    res = unprivileged(lambda: apply(shared_dir, patch))
    assert res["kind"] == "io_error" and res["retryable"] is True, res
    assert "Permission denied" in res["message"]
    assert snapshot(shared_dir) == before


def test_new_file_in_read_only_directory(shared_dir):
    owned_tree(shared_dir)
    before = snapshot(shared_dir)
    patch = MODIFY_A + "--- /dev/null\n+++ b/ro/sub/new.txt\n@@ -0,0 +1 @@\n+n\n"
    res = unprivileged(lambda: apply(shared_dir, patch))
    assert res["kind"] == "io_error", res
    assert snapshot(shared_dir) == before


@pytest.mark.parametrize(
    "patch",
    [
        MODIFY_A + "--- a/ro/victim.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-v\n",
        "diff --git a/ro/victim.txt b/moved.txt\nrename from ro/victim.txt\nrename to moved.txt\n",
    ],
    ids=["delete", "rename-out"],
)
def test_unlink_in_read_only_directory_is_all_or_nothing(shared_dir, patch):
    owned_tree(shared_dir)
    before = snapshot(shared_dir)
    res = unprivileged(lambda: apply(shared_dir, patch))
    assert snapshot(shared_dir) == before
    assert res["kind"] == "io_error", res


# -- git sections without hunks: empty files, metadata only; whole-file deletes --

EMPTY_ADD = (
    "diff --git a/pkg/py.typed b/pkg/py.typed\nnew file mode 100644\nindex 0000000..e69de29\n"
)
EMPTY_DELETE = (
    "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"
)
MODE_ONLY = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
BINARY = (
    "diff --git a/img.png b/img.png\nindex 1234567..89abcde 100644\n"
    "Binary files a/img.png and b/img.png differ\n"
)


def test_empty_new_file_is_created(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    assert apply(tmp_path, EMPTY_ADD + MODIFY_A) == {"kind": None}
    after = snapshot(tmp_path)
    assert after["pkg/py.typed"] == ("file", NEW_FILE_MODE, b"")
    assert after["a.txt"] == ("file", 0o644, b"A\n")


def test_empty_new_file_that_exists_is_refused(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "pkg/py.typed", "")
    before = snapshot(tmp_path)
    assert apply(tmp_path, MODIFY_A + EMPTY_ADD)["kind"] == "existing_file"
    assert snapshot(tmp_path) == before


def test_new_file_mode_is_recorded_and_the_new_file_gets_the_default_mode(tmp_path):
    """The RFC: `new file mode 100755` must not mark the file executable."""
    patch = "diff --git a/run.sh b/run.sh\nnew file mode 100755\n--- /dev/null\n+++ b/run.sh\n"
    patch += "@@ -0,0 +1 @@\n+#!/bin/sh\n"
    [change] = plan(tmp_path, tmp_path, parse_patch(patch))
    assert change.patch.ignored_metadata == ["new file mode 100755"]
    assert change.mode == NEW_FILE_MODE
    commit([change])
    assert os.stat(tmp_path / "run.sh").st_mode & 0o7777 == NEW_FILE_MODE
    assert apply(tmp_path, "diff --git a/e b/e\nnew file mode 100755\n") == {"kind": None}
    assert os.stat(tmp_path / "e").st_mode & 0o7777 == NEW_FILE_MODE


def test_empty_file_delete(tmp_path):
    write(tmp_path, "empty.txt", "")
    assert apply(tmp_path, EMPTY_DELETE) == {"kind": None}
    assert not (tmp_path / "empty.txt").exists()


def test_empty_file_delete_of_a_file_with_content_is_refused(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "empty.txt", "not empty\n")
    before = snapshot(tmp_path)
    res = apply(tmp_path, MODIFY_A + EMPTY_DELETE)
    assert res["kind"] == "partial_delete"
    assert "no hunks, which deletes only an empty file: 1 line would be left" in res["message"]
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "before, lines",
    [
        (0o755, "old mode 100755\nnew mode 100644\n"),
        (0o640, "old mode 100644\nnew mode 100755\n"),
        (0o700, "old mode 100644\nnew mode 100755\n"),  # an old mode that does not match
        (0o644, "old mode 100644\nnew mode 100664\n"),
    ],
)
def test_a_mode_only_section_changes_nothing(tmp_path, before, lines):
    write(tmp_path, "run.sh", "#!/bin/sh\n", before)
    write(tmp_path, "a.txt", "a\n")
    changes = plan(
        tmp_path, tmp_path, parse_patch(f"diff --git a/run.sh b/run.sh\n{lines}" + MODIFY_A)
    )
    assert (changes[0].patch.op, changes[0].dst, changes[0].diagnostics) == ("metadata", None, [])
    commit(changes)
    assert snapshot(tmp_path)["run.sh"] == ("file", before, b"#!/bin/sh\n")
    assert (tmp_path / "a.txt").read_text() == "A\n"


@pytest.mark.parametrize("mode", [0o755, 0o700, 0o644])
def test_an_edited_or_renamed_file_keeps_its_permissions_whatever_its_mode_lines_say(
    tmp_path, mode
):
    write(tmp_path, "a.txt", "a\n", mode)
    write(tmp_path, "tool.py", "print()\n", mode)
    write(tmp_path, "old.sh", "echo a\n", mode)
    flip = (
        "old mode 100755\nnew mode 100644\n"
        if mode & 0o100
        else "old mode 100644\nnew mode 100755\n"
    )
    patch = f"diff --git a/a.txt b/a.txt\n{flip}" + MODIFY_A
    patch += (
        f"diff --git a/tool.py b/bin/tool\nsimilarity index 100%\n{flip}"
        "rename from tool.py\nrename to bin/tool\n"
        f"diff --git a/old.sh b/new.sh\n{flip}similarity index 50%\n"
        "rename from old.sh\nrename to new.sh\n--- a/old.sh\n+++ b/new.sh\n"
        "@@ -1 +1 @@\n-echo a\n+echo b\n"
    )
    assert apply(tmp_path, patch) == {"kind": None}
    after = snapshot(tmp_path)
    assert after["a.txt"] == ("file", mode, b"A\n")
    assert after["bin/tool"] == ("file", mode, b"print()\n") and "tool.py" not in after
    assert after["new.sh"] == ("file", mode, b"echo b\n") and "old.sh" not in after


def test_mode_only_change_of_a_missing_file_is_refused(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    before = snapshot(tmp_path)
    assert apply(tmp_path, MODIFY_A + MODE_ONLY)["kind"] == "missing_file"
    assert snapshot(tmp_path) == before


def test_partial_delete_is_refused_and_nothing_changes(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, "doc.md", "one\ntwo\nthree\n")
    before = snapshot(tmp_path)
    res = apply(tmp_path, MODIFY_A + "--- a/doc.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n")
    assert res["kind"] == "partial_delete"
    assert "its hunks' '-' lines are not the whole file: 1 line would be left" in res["message"]
    assert snapshot(tmp_path) == before


def test_delete_with_context_lines_leaves_them_and_is_refused(tmp_path):
    write(tmp_path, "doc.md", "one\ntwo\n")
    res = apply(tmp_path, "--- a/doc.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n one\n-two\n")
    assert res["kind"] == "partial_delete"
    assert (tmp_path / "doc.md").exists()


def test_whole_file_delete_with_drifted_header_applies(tmp_path):
    write(tmp_path, "doc.md", "one\ntwo\n")
    assert apply(tmp_path, "--- a/doc.md\n+++ /dev/null\n@@ -7,9 +0,0 @@\n-one\n-two\n") == {
        "kind": None
    }
    assert not (tmp_path / "doc.md").exists()


def test_binary_section_fails_the_whole_patch_naming_its_path(tmp_path):
    write(tmp_path, "a.txt", "a\n")
    before = snapshot(tmp_path)
    res = apply(tmp_path, MODIFY_A + EMPTY_ADD + BINARY)
    assert res["kind"] == "unsupported_git_patch_feature"
    assert res["message"].startswith("img.png: line 11: this section is a binary file change")
    assert snapshot(tmp_path) == before
