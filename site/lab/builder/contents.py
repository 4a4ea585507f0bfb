"""The notebooks as the lab serves them (files/NAME.ipynb): the same notebook, with each output's
multi-line text as one string: a stream's (what a cell printed) and each text value of a result or
a display (text/plain, text/html, text/markdown, image/svg+xml ...; a JSON value is not text).

nbformat lets a multi-line string be stored as a list of lines, to be joined with "" (nbformat
itself writes them that way). JupyterLite 0.6.4's notebook model (@jupyter/ydoc,
YCodeCell.createOutputs) joins a stream's list with Array.prototype.join's default separator, so
until Python re-runs a cell every continued line of what it printed started with ","; the same
for a result's list (lesson 1's 挑戰 2 showed a numpy array's continued lines as ",       3.469 …").
A single string is read the same by every reader, that model included.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path


def is_json(mimetype: str) -> bool:
    return mimetype == "application/json" or mimetype.endswith("+json")


def joined_texts(notebook: dict) -> dict:
    """`notebook` (nbformat JSON) with every output text stored as a list of lines joined into one
    string: a stream's text, and each non-JSON value of an output's data."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
            for mimetype, value in output.get("data", {}).items():
                if isinstance(value, list) and not is_json(mimetype):
                    output["data"][mimetype] = "".join(value)
    return notebook


def copy_notebook(source: Path, target: Path) -> None:
    """Write `source` to `target` as the lab serves it (written as nbformat writes a notebook)."""
    notebook = joined_texts(json.loads(source.read_text(encoding="utf-8")))
    target.write_text(json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")


def first_cell_names(notebook: dict) -> dict[str, str]:
    """The names the notebook's first code cell binds in the learner's namespace, each with how:
    "import" (an import) or "define" (an assignment, a def, a class, a for ...); nothing from
    inside a def, a class, a lambda or a comprehension. IPython's own syntax (%magic, !command)
    is read as IPython reads it."""
    from IPython.core.inputtransformer2 import TransformerManager

    cell = next((c for c in notebook.get("cells", []) if c.get("cell_type") == "code"), None)
    if cell is None:
        return {}
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    names: dict[str, str] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.setdefault(alias.asname or alias.name.split(".")[0], "import")
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name, "define")
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, "define")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(TransformerManager().transform_cell(source)))
    return names


def name_hints(notebooks: list[Path]) -> dict:
    """What site/lab/kernel/specdec_kernel/name_hints.py needs of the lab's notebooks, by file name: "first_cells",
    first_cell_names; "cells", the ids of its cells."""
    first_cells, cells = {}, {}
    for path in notebooks:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        first_cells[path.name] = first_cell_names(notebook)
        cells[path.name] = [c["id"] for c in notebook.get("cells", []) if c.get("id")]
    return {"first_cells": first_cells, "cells": cells}
