"""Runs INSIDE the kernel's Pyodide: which packages to load before a cell runs, for the modules that
are loaded when first used rather than when their package is imported (runtime.toml [kernel]
loaded_on_use: specdec_lab.plotting needs matplotlib and ipywidgets, `import specdec_lab` does not).

Pyodide loads, before each cell, the packages of the modules the cell imports (top-level names
only: `from specdec_lab import plotting` says specdec_lab). This adds those of a loaded-on-use
module whose contents the cell uses: `plotting.explore_tokens(…)` (through any name that holds the
module, bound by an earlier cell or by an import in the same cell), `specdec_lab.plotting.…`,
`from specdec_lab.plotting import …`, `import specdec_lab.plotting.figures`. Importing the module
itself does not count (`from specdec_lab import plotting` is quick: it imports no matplotlib).

The kernel's Pyodide loader (site/lab/kernel/pyodide-loader.js, in the browser, through
Kernel.packages_for) and the build's import profile (site/lab/node/import_profile.py, under
Node.js) both call packages_to_load(code, on_use, namespace) before each cell. Plain Python,
tested in CPython (tests/test_load_on_use.py).
"""
from __future__ import annotations

import ast
from types import ModuleType


def imported_names(tree: ast.AST) -> dict[str, str]:
    """Names the cell's own imports bind, with the dotted name each one stands for."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def dotted_name(node: ast.AST, bound: dict[str, str], namespace: dict) -> str | None:
    """`a.b.c` in the cell as the dotted name of what it refers to, when `a` is bound by the
    cell's imports or holds a module in `namespace`: `plotting.explore` ->
    'specdec_lab.plotting.explore'. None for anything else."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    if node.id in bound:
        base = bound[node.id]
    elif isinstance(namespace.get(node.id), ModuleType):
        base = namespace[node.id].__name__
    else:
        return None
    return ".".join([base, *reversed(attributes)])


def names_used(code: str, namespace: dict) -> set[str]:
    """The dotted names the cell imports or refers to through a module."""
    try:
        tree = ast.parse(code)
    except SyntaxError:       # the cell's own error comes when it runs
        return set()
    bound = imported_names(tree)
    used = set(bound.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            used.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Attribute):
            name = dotted_name(node, bound, namespace)
            if name:
                used.add(name)
    return used


def packages_to_load(code: str, on_use: dict[str, list[str]], namespace: dict) -> list[str]:
    """The packages (in on_use order, no repeats) of every module in `on_use` (module -> package
    names) whose contents the cell uses."""
    used = names_used(code, namespace)
    wanted = []
    for module, packages in on_use.items():
        if any(name.startswith(module + ".") for name in used):
            wanted += [p for p in packages if p not in wanted]
    return wanted
