"""holon.errors: one exception tree with stable kinds and exit codes; the CLI reports both."""

from __future__ import annotations

import pytest

from holon import errors
from holon.errors import (
    AlreadyExists,
    HolonError,
    InvalidInput,
    NotRunnable,
    OperationFailed,
    UnknownAgent,
    UsageError,
)


@pytest.mark.parametrize(
    "cls, parent, kind, code",
    [
        (HolonError, Exception, "error", 1),
        (UsageError, HolonError, "usage", 2),
        (InvalidInput, UsageError, "invalid_input", 2),
        (UnknownAgent, UsageError, "unknown_agent", 2),
        (AlreadyExists, UsageError, "already_exists", 2),
        (NotRunnable, HolonError, "agent_not_runnable", 3),
        (OperationFailed, HolonError, "operation_failed", 1),
    ],
)
def test_tree_kinds_and_exit_codes(cls, parent, kind, code):
    assert issubclass(cls, parent)
    err = cls("boom")
    assert (err.kind, err.exit_code, err.message, err.hint) == (kind, code, "boom", None)
    assert str(err) == "boom"


def test_per_instance_overrides_leave_the_class_alone():
    err = NotRunnable("stopped", kind="agent_stopped", hint="resume it", exit_code=4)
    assert (err.kind, err.hint, err.exit_code) == ("agent_stopped", "resume it", 4)
    assert NotRunnable("x").kind == "agent_not_runnable" and NotRunnable.exit_code == 3


def test_to_dict():
    assert InvalidInput("bad", kind="oversize_body", hint="shorter").to_dict() == {
        "kind": "oversize_body",
        "message": "bad",
        "hint": "shorter",
    }
    assert OperationFailed("failed").to_dict() == {
        "kind": "operation_failed",
        "message": "failed",
        "hint": None,
    }


def test_every_public_error_is_a_holon_error():
    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert len(classes) >= 7
    assert all(issubclass(c, HolonError) for c in classes)


def test_cli_prints_kind_message_hint_and_exits_with_code():
    from scenario_helpers import cli

    code, out, err = cli("status", "nosuch")
    assert code == UnknownAgent.exit_code == 2
    assert out == ""
    assert "unknown_agent: no agent 'nosuch'" in err
    assert "hint:" in err and "holon init --agent-id nosuch" in err
