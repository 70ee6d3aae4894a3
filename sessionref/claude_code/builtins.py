"""The names of Claude Code's built-in slash commands, which its resume picker never titles
a session by (docs/harnesses.md §Claude Code §Title).

Claude Code's picker titles a session by its first prompt, passing over a slash command
that is built in (its name or an alias is one of the running Claude Code's own commands,
``builtInCommandNames()``) or that has no arguments; a command of the person's own (a
Markdown file of ``~/.claude/commands/`` or a project's ``.claude/commands/``, a skill's, a
plugin's) with arguments titles it as typed, ``/name args`` (``extractFirstPromptFromChunk``
in ``src/utils/sessionStorage.ts`` of Claude Code 2.1, as public copies of its source have
it). The names are those of Claude Code's command reference
(code.claude.com/docs/en/commands, as of 2026-08-22): every command and alias it lists but
the bundled skills and workflows (marked so there, ``/review`` the alias of one), which are
prompts handed to Claude as a person's own skills are, and not built into the CLI.
"""

from __future__ import annotations

from typing import Final

_NAMES: Final = """
    add-dir advisor agents allowed-tools android app artifacts auto-mode-setup autocompact
    autofix-pr background bg branch btw bug cd checkpoint chrome clear color compact config
    context continue copy cost design-login desktop diff effort exit export fast feedback
    focus fork goal heapdump help hooks ide import init insights install-github-app
    install-slack-app ios keybindings list-agents login logout mcp memory mobile model new
    passes permissions plan plugin powerup pr-comments privacy-settings quit radio rc recap
    release-notes reload-plugins reload-skills remote-control remote-env rename reset resume
    rewind routines sandbox schedule scroll-speed security-review settings setup-bedrock
    setup-vertex share skills stats status statusline stickers stop subtask tasks
    team-onboarding teleport terminal-setup theme tui ultraplan ultrareview undo upgrade
    usage usage-credits vim voice web-setup workflows
"""
BUILT_IN_COMMANDS: Final = frozenset(_NAMES.split())
"""The names (without their ``/``) of Claude Code's built-in commands and their aliases."""


def titles_by_command(name: str, arguments: str) -> bool:
    """Whether Claude Code's resume picker titles a session by the slash command ``name``
    (with or without its ``/``, as its ``<command-name>`` tag holds it) run with
    ``arguments`` (trimmed): one that is not built in, with arguments.

    >>> titles_by_command("/fix-issue", "123"), titles_by_command("/fix-issue", "")
    (True, False)
    >>> titles_by_command("/model", "opus"), titles_by_command("simplify", "the parser")
    (False, True)
    """
    return bool(arguments) and name.removeprefix("/") not in BUILT_IN_COMMANDS
