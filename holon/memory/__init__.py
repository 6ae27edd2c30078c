"""Memory search: an SQLite FTS5 index over what the agent has written and done (index.py), the
documents its sources become (sources.py), and the CJK-aware projection and query quoting
(project.py). Writers of its sources call `Home.mark_memory_dirty()`; sqlite3 is loaded only by
index.py and the modules it uses (schema, catchup, files, ranking)."""

DEFAULT_LIMIT, MAX_LIMIT = 10, 50  # results of one search
DEFAULT_CHARS, MAX_CHARS = 12_000, 50_000  # characters of one MemoryGet
