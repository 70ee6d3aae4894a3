"""Claude Code sessions: the reader of its transcript files and a store over its config
directory (docs/harnesses.md §Claude Code)."""
