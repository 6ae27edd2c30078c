# One place for the checks. The README's two set-up commands stay the source of truth for CI.
PY ?= .venv/bin/python
SOURCES = holon tests benchmarks

.PHONY: test lint format bench golden-update man

test:
	$(PY) -m pytest

# Fails on any finding: ruff (100 columns), the formatter, the package shape, docs drift.
lint:
	$(PY) -m ruff check $(SOURCES)
	$(PY) -m ruff format --check $(SOURCES)
	$(PY) -m pytest -q tests/test_architecture.py tests/cli/test_manpages.py tests/cli/test_imports_and_help.py

format:
	$(PY) -m ruff check --fix $(SOURCES)
	$(PY) -m ruff format $(SOURCES)

bench:
	$(PY) benchmarks/run.py

golden-update:
	$(PY) -m pytest --update-golden

man:
	$(PY) -m holon.cli.manpage man
