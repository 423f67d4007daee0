"""The layers of ``pipeline/`` as the README's "Architecture" draws them, held by reading the source.

import-linter (``lint-imports``, run by ``.ci/run``) holds the layers contract of ``pyproject.toml``; these tests
hold what it does not say: no import cycle between modules at all (imports inside functions and under
``TYPE_CHECKING`` included), few imports inside functions outside the CLI, and a docstring on every package.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest
from radon.complexity import cc_visit

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"

#: The most imports inside functions the modules outside ``pipeline/commands/`` and ``pipeline/cli.py`` may have.
#: Each is a deliberate lazy import (a heavy library a run rarely needs, or a module a cached run never imports).
MOST_LAZY_IMPORTS = 15


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> Dict[str, ast.Module]:
    return {_module_name(path): ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, tree: ast.Module, modules: Set[str]) -> List[Tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for each import of a ``pipeline`` module by *name*."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pipeline":
            targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                       for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names if alias.name.split(".")[0] == "pipeline"]
        else:
            continue
        nested, up = False, node
        while up in parents and not nested:
            up = parents[up]
            nested = isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef))
        found += [(target, node.lineno, nested) for target in targets if target != name]
    return found


def _lazy_imports(tree: ast.Module) -> List[int]:
    """The lines of every import statement inside a function of *tree* (any module, not only ``pipeline``)."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            up = node
            while up in parents:
                up = parents[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines.append(node.lineno)
                    break
    return lines


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_its_way_back_to_itself() -> None:
    modules = _modules()
    graph = {name: {target for target, _, _ in _imports(name, tree, set(modules)) if target in modules}
             for name, tree in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_inside_functions_are_few_outside_the_cli() -> None:
    lazy = {name: _lazy_imports(tree) for name, tree in _modules().items()
            if not name.startswith("pipeline.commands") and name != "pipeline.cli"}
    assert sum(len(lines) for lines in lazy.values()) <= MOST_LAZY_IMPORTS, \
        {name: lines for name, lines in lazy.items() if lines}


def test_every_layer_named_in_the_contract_is_a_package_with_a_docstring_and_nothing_is_left_out() -> None:
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    children = sorted(path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
                      if (path.suffix == ".py" and path.stem != "__init__")
                      or (path.is_dir() and (path / "__init__.py").exists()))
    assert sorted(contract["layers"]) == children
    for layer in contract["layers"]:
        source = PACKAGE / layer / "__init__.py" if (PACKAGE / layer).is_dir() else PACKAGE / f"{layer}.py"
        assert ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))), layer


@pytest.mark.parametrize("layer, below", [
    ("spec", ()),
    ("pricing", ("spec",)),
    ("check", ("importer", "pricing", "spec")),
])
def test_the_core_imports_nothing_above_it(layer: str, below: Tuple[str, ...]) -> None:
    """The core (spec, pricing, check) imports nothing of cache, catalogue, reporters or commands: caches wrap it
    from above. (import-linter says the same of every layer; this names the core's own rule.)"""
    modules = _modules()
    allowed = {f"pipeline.{name}" for name in (layer, *below)} | {"pipeline"}
    for name, tree in modules.items():
        if name.startswith(f"pipeline.{layer}"):
            for target, line, _ in _imports(name, tree, set(modules)):
                owner = ".".join(target.split(".")[:2])
                assert owner in allowed, f"{name}:{line} imports {target}"


#: The most branches a function of pipeline/ may take (radon's cyclomatic complexity; issue 26: above 20, split it).
MOST_COMPLEX = 20


def test_no_function_is_more_complex_than_twenty() -> None:
    found = [(str(path.relative_to(PACKAGE.parent)), block.name, block.complexity)
             for path in sorted(PACKAGE.rglob("*.py"))
             for block in cc_visit(path.read_text(encoding="utf-8")) if block.complexity > MOST_COMPLEX]
    assert found == []
