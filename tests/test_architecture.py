"""The package's shape (docs/architecture.md): imports point down the layers, no cycles,
no module over 400 lines, and ``codecs`` is never a top-level import name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sessionref"
#: Layers from the bottom up; a module may import only from its own layer or below.
LAYERS = (
    (
        "sessionref.errors",
        "sessionref.types",
        "sessionref.transcript",
        "sessionref.pool",
        "sessionref.pool_start",
        "sessionref.pool_worker",
        "sessionref.worker_deaths",
        "sessionref.collector",
        "sessionref.controls",
    ),
    ("sessionref.codecs",),
    ("sessionref.log", "sessionref.claude_code", "sessionref.codex"),
    ("sessionref.pipeline",),
    ("sessionref.snapshot",),
    ("sessionref.redact",),
    ("sessionref.index",),
    (
        "sessionref.cancellation",
        "sessionref.rules",
        "sessionref.listing",
        "sessionref.resolver",
        "sessionref.roots",
        "sessionref.layouts",
    ),
    ("sessionref.conform",),
    ("sessionref.batch",),
    ("sessionref.views",),
    ("sessionref.cli", "sessionref.mcp", "sessionref.__init__", "sessionref.__main__"),
    ("sessionref.testing",),
)
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 2 else parts)


def layer_of(module: str) -> int:
    for level, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    raise AssertionError(f"{module} belongs to no layer of docs/architecture.md")


def imported(path: Path) -> set[str]:
    """Every ``sessionref`` module a file imports, at any depth of the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "sessionref":
            # ``from sessionref import conform`` imports a submodule; other names the root
            for alias in node.names:
                submodule = PACKAGE / alias.name
                found = submodule.is_dir() or submodule.with_suffix(".py").is_file()
                names.add(f"sessionref.{alias.name}" if found else "sessionref")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return {name for name in names if name == "sessionref" or name.startswith("sessionref.")}


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_layers(path: Path) -> None:
    here = module_name(path)
    for name in imported(path):
        if name == "sessionref":
            name = "sessionref.__init__"  # the public face: only the top layers use it
        assert layer_of(name) <= layer_of(here), f"{here} imports {name}, a higher layer"


def test_the_import_graph_has_no_cycle() -> None:
    graph = {module_name(p): {n for n in imported(p) if n != "sessionref"} for p in MODULES}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 2:
            return
        assert state.get(node) != 1, "import cycle: " + " -> ".join([*trail, node])
        state[node] = 1
        for child in sorted(graph.get(node, ())):
            visit(child, [*trail, node])
        state[node] = 2

    for module in sorted(graph):
        visit(module, [])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_the_line_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines"


def test_codecs_is_never_a_top_level_import_name() -> None:
    """``sessionref.codecs`` never shadows the standard library's ``codecs``."""
    import codecs

    assert PACKAGE not in Path(codecs.__file__).resolve().parents
