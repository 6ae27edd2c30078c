"""Skip marks for tests that need the kernel's sandbox features."""

from __future__ import annotations

import sys

import pytest

from holon.sandbox import landlock

needs_landlock = pytest.mark.skipif(
    not sys.platform.startswith("linux") or landlock.abi() < 4,
    reason="needs Linux with Landlock ABI 4 or later (TCP rules)",
)
