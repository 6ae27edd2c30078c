"""`python -m holon` runs the CLI."""

from holon.cli.main import main

raise SystemExit(main())
