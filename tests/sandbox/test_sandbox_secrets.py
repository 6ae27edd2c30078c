"""The key that seals admitted messages is out of the agent's commands' reach: masked in a mount
namespace, under a `.holon/` they cannot write."""

from __future__ import annotations

import pytest
from sandbox_marks import needs_landlock

from holon.home.layout import Home
from holon.sandbox import mountns, places

pytestmark = needs_landlock


def test_the_admission_key_is_a_secret_file_of_the_home(home):
    assert places.secret_files(Home(home))[-1].endswith("admission.key")


@pytest.mark.skipif(not mountns.available(), reason="needs a private mount namespace")
@pytest.mark.parametrize("mode", ["workspace-write", "read-only", "full-access"])
def test_a_command_reads_nothing_of_the_admission_key(home, sh, holon, mode):
    proc = holon("enqueue", str(home), "--kind", "channel_event", "--text", "hi")
    assert proc.returncode == 0, proc.stderr
    key = Home(home).admission_key
    assert len(key.read_bytes()) > 32
    proc = holon("sandbox", "set", str(home), mode, "--network", "deny")
    assert proc.returncode == 0, proc.stderr
    before = key.read_bytes()
    _, out, _ = sh(home, "wc -c < .holon/admission.key; echo x > .holon/admission.key")
    assert out.strip() == "0", out  # /dev/null is bound over it: empty, and writes vanish
    assert key.read_bytes() == before
