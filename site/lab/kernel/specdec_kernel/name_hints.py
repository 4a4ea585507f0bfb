"""Runs INSIDE the kernel's Pyodide: a NameError for a name the notebook's first cell binds (its
imports, say `expected_tokens`, `np`, `plotting`; lossless.ipynb's `target` too) ends with one line
that says what to do, after the usual traceback: a learner sent to the 挑戰 cells at the bottom who
runs one before the first cell otherwise gets only `NameError: name 'expected_tokens' is not
defined`.

    💡 「expected_tokens」在最上面的第一格匯入：先執行那一格（或按工具列的 ⏩ 從頭執行全部），再執行這一格。

The line is a PEP 678 note on the exception (IPython prints an exception's notes under its last
line), so it is part of the traceback the kernel sends: a line printed after showtraceback() would
come first in the lab, where pyodide_kernel sends the traceback once the cell has ended.

Which names, per notebook, comes from the lab's notebooks at build time (site/lab/builder/contents.py
name_hints, the lab's specdec-name-hints.json, which the loader reads), with the id of every cell, so
that the cell being run (JupyterLab sends its id with the request) says which notebook it is in.
A cell of unknown id (one the learner added) gets the hint for a name every notebook's first cell
binds, and for another the notebooks whose first cell binds it, by name. Nothing else gets a hint:
a NameError raised inside a function of a module (the innermost frame's globals are not the
learner's), an UnboundLocalError, a name the running cell's notebook does not bind in its first
cell.

A ValueError or TypeError that the course's package (specdec_lab) raised about what the learner
gave it is shown from the learner's own line: the traceback stops at the last frame of the
learner's code, and the message, which names the parameter, the value and the valid range, follows
right under it. A wrong file uploaded to your-gpu's bench cell had shown 26 lines of the
package's source first, on a phone taller than the screen, with the explanation at the very end.
An error raised anywhere else (numpy, Python, the learner's own function) keeps its whole traceback.

Kernel.started (this package's __init__) calls install(shell, first_cells, cells) once the kernel
has started, before any cell. No imports. Plain Python, tested
in CPython's IPython (tests/test_name_hints.py); CPython's own runs of the notebooks
(notebooks/execute.py) never install it.
"""
from __future__ import annotations

VERBS = {"import": "匯入", "define": "定義"}


def hint(name: str, notebook: str | None, first_cells: dict[str, dict[str, str]]) -> str | None:
    """The line for a NameError of `name` in a cell of `notebook` (None: unknown), or None.
    first_cells: notebook -> {name its first cell binds: "import" or "define"}."""
    where = [nb for nb, names in first_cells.items() if name in names]
    if not where:
        return None
    verb = VERBS.get(first_cells[notebook if notebook in where else where[0]][name], VERBS["define"])
    if notebook in where or (notebook is None and len(where) == len(first_cells)):
        return (f"💡 「{name}」在最上面的第一格{verb}：先執行那一格"
                f"（或按工具列的 ⏩ 從頭執行全部），再執行這一格。")
    if notebook is None:
        return (f"💡 「{name}」在 {'、'.join(where)} 最上面的第一格{verb}：在那本筆記本先執行那一格"
                f"（或按工具列的 ⏩ 從頭執行全部），再執行這一格。")
    return None


def running_cell(shell) -> str | None:
    """The id of the cell being run, as JupyterLab sends it (the request's metadata.cellId), from
    the kernel's parent message (pyodide_kernel's and ipykernel's get_parent()); None without one."""
    try:
        cell = shell.kernel.get_parent()["metadata"]["cellId"]
    except Exception:
        return None
    return cell if isinstance(cell, str) else None


def learners_name(error: NameError, tb, namespace: dict) -> str | None:
    """The name of a NameError raised in the learner's own code (the innermost frame runs in
    `namespace`, the learner's, where the notebook's first cell binds its names), or None."""
    name = getattr(error, "name", None)
    if type(error) is not NameError or not isinstance(name, str) or tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if frame.f_globals is not namespace or name in namespace or name in frame.f_code.co_freevars:
        return None
    return name


PACKAGE = "specdec_lab"


def from_the_learners_line(tb, namespace: dict):
    """`tb` cut after the learner's last frame (one that runs in `namespace`) when every frame
    after it is the course package's; None when the error did not come that way."""
    last, frames = None, []
    while tb is not None:
        frames.append(tb)
        if tb.tb_frame.f_globals is namespace:
            last = len(frames) - 1
        tb = tb.tb_next
    rest = frames[last + 1:] if last is not None else []
    if not rest or not all(str(f.tb_frame.f_globals.get("__name__", "")).split(".")[0] == PACKAGE
                           for f in rest):
        return None
    frames[last].tb_next = None
    return frames[0]


def install(shell, first_cells: dict[str, dict[str, str]], cells: dict[str, list[str]]) -> None:
    """Have `shell` (IPython's) show every NameError with its hint, if it has one, and the
    package's ValueError or TypeError about the learner's input from the learner's line.
    cells: notebook -> the ids of its cells."""
    notebook_of = {cell: notebook for notebook, ids in cells.items() for cell in ids}

    def show(shell, etype, value, tb, tb_offset=None):
        if isinstance(value, NameError):
            name = learners_name(value, tb, shell.user_global_ns)
            if name is not None:
                line = hint(name, notebook_of.get(running_cell(shell)), first_cells)
                if line and line not in getattr(value, "__notes__", ()):
                    value.add_note(line)
        elif type(value) in (ValueError, TypeError):
            tb = from_the_learners_line(tb, shell.user_global_ns) or tb
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    shell.set_custom_exc((NameError, ValueError, TypeError), show)
