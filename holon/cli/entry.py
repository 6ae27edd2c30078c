"""The `holon` executable: a plain `holon enqueue` runs without click (holon.cli.fastpath), and
so does a scheduler's `holon tick` that finds nothing due (holon.cli.tickfast); every other
command line goes to the click group (holon.cli.main)."""

from __future__ import annotations

import sys

from holon.procguard import guard_environment


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    guard_environment()  # a key in the environment is not for the agent's commands to read
    if args[:1] == ["enqueue"]:  # the commands run many times a minute skip click
        from holon.cli import fastpath

        options = fastpath.parse(args)
        if options is not None:
            from holon.cli import failures
            from holon.cli.terminal import guard_terminal

            guard_terminal()  # as holon.cli.main does: a terminal sees untrusted text escaped
            return failures.guarded(lambda: fastpath.run(options))
    elif args[:1] == ["tick"]:
        code = _idle_tick(args)
        if code is not None:
            return code
    from holon.cli.main import main as full

    return full(argv)


def _idle_tick(args: list[str]) -> int | None:
    """The exit code of a scheduler's tick that found nothing due; None: click runs it."""
    from holon.cli import tickfast

    options = tickfast.parse(args)
    if options is None:
        return None
    from holon.cli import failures
    from holon.cli.terminal import guard_terminal

    guard_terminal()
    return failures.guarded(lambda: tickfast.run(options))  # type: ignore[arg-type,return-value]
