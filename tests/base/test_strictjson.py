"""holon.strictjson: JSON from outside is refused when it could not be stored or would recurse."""

from __future__ import annotations

import pytest

from holon import strictjson


@pytest.mark.parametrize(
    "raw",
    [
        "NaN",
        '{"a": -Infinity}',
        "1e400",
        "[" * 100_000,
        "[" * 65 + "]" * 65,
        '"\\ud800"',
        '{"\\udc00": 1}',
        "{",
        b"\xff",
    ],
    ids=[
        "nan",
        "inf",
        "overflow",
        "deep-100k",
        "deep-65",
        "surrogate",
        "surrogate-key",
        "torn",
        "bytes",
    ],
)
def test_refused(raw: str | bytes) -> None:
    with pytest.raises(strictjson.InvalidJson) as exc:
        strictjson.loads(raw)
    assert "\n" not in str(exc.value) and len(str(exc.value)) <= 200


def test_accepted() -> None:
    assert strictjson.loads("[" * 64 + "]" * 64) is not None
    assert strictjson.loads('{"a": [1, 2.5, "é", null, true]}') == {"a": [1, 2.5, "é", None, True]}
    assert strictjson.loads("1e300") == 1e300


def test_check_refuses_what_a_lenient_parser_let_through() -> None:
    import json

    for value in (json.loads('{"a": NaN}'), [float("inf")], ["\ud800"]):
        with pytest.raises(strictjson.InvalidJson):
            strictjson.check(value)
