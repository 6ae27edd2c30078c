"""Golden-file comparison: HOLON_UPDATE_GOLDEN=1 rewrites the file instead of comparing."""

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def check_golden(relative: str, actual: str) -> None:
    path = GOLDEN / relative
    if os.environ.get("HOLON_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with HOLON_UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(encoding="utf-8"), f"{path} differs; review and rerun with HOLON_UPDATE_GOLDEN=1"
