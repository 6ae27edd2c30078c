"""holon: a runtime for long-lived LLM agents built from files, locks and short-lived ticks."""

__version__ = "0.1.0"
