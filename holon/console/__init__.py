"""`holon console`: the operator console, a terminal UI over an agent's files (Textual)."""
