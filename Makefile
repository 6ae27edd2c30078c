# One place for the checks. The README's two set-up commands stay the source of truth for CI.
PY ?= .venv/bin/python

.PHONY: test lint bench golden-update man

test:
	$(PY) -m pytest

lint:
	$(PY) -m ruff check holon tests || true
	$(PY) -m pytest tests/test_manpages.py tests/test_imports_and_help.py

bench:
	$(PY) benchmarks/run.py

golden-update:
	$(PY) -m pytest --update-golden

man:
	$(PY) -m holon.cli.manpage man
