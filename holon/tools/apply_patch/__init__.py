"""ApplyPatch: unified diff parsing, context-first application and transactional writes."""
