"""Codex CLI sessions: the reader of its rollout files and a store over its home directory
(docs/harnesses.md §Codex)."""
