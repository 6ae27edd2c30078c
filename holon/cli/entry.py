"""The `holon` executable: a plain `holon enqueue` runs without click (holon.cli.fastpath);
every other command line goes to the click group (holon.cli.main)."""

from __future__ import annotations

import sys

from holon.procguard import guard_environment


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    guard_environment()  # a key in the environment is not for the agent's commands to read
    if args[:1] == ["enqueue"]:  # every other command (an idle tick above all) loads no more
        from holon.cli import fastpath

        options = fastpath.parse(args)
        if options is not None:
            from holon.cli import failures
            from holon.cli.terminal import guard_terminal

            guard_terminal()  # as holon.cli.main does: a terminal sees untrusted text escaped
            return failures.guarded(lambda: fastpath.run(options))
    from holon.cli.main import main as full

    return full(argv)
