"""`python -m holon` runs the CLI."""

from holon.cli.entry import main

raise SystemExit(main())
