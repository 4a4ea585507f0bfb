"""Execute the course notebooks in CPython and store their outputs, so the 實驗場 opens with its
figures already drawn. Run after changing a notebook or anything in src/specdec_lab:

    .venv/bin/python notebooks/execute.py             # every notebook in notebooks/
    .venv/bin/python notebooks/execute.py lesson1.ipynb

tests/test_notebook.py executes them again and fails when the stored outputs are stale.

The stored notebook keeps what a browser can show before any kernel runs: text, tables and
figures. A slider panel (``specdec_lab.plotting.LiveFigure``) is displayed with two
representations, the live widget and a PNG of its first figure; the widget view is dropped here,
because without a kernel it would show only "Loading widget...". Run the cell and the sliders
come back. A slow cell's progress line is emptied when its work is done and is not stored.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

HERE = Path(__file__).resolve().parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SHOWABLE = ("image/png", "image/svg+xml", "text/html", "text/markdown", "text/latex")
CPYTHON_KERNEL = "python3"  # the notebooks name Pyodide's kernel ("python"); CI runs ipykernel
# the lab's kernel displays floats with at most 12 significant digits; so does CPython's here
FLOAT_DISPLAY = HERE.parent / "site" / "lab" / "kernel" / "specdec_kernel" / "float_display.py"
TIMEOUT = 600


def execute(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` executed top to bottom, with outputs as they would be stored."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="specdec-kernel-") as sockets:
        run(nb, path, sockets)
    return merge_streams(drop_empty_outputs(strip_widget_views(nb)))


def run(nb: nbformat.NotebookNode, path: Path, sockets: str) -> None:
    """Run every cell of `nb` in a CPython kernel. The kernel talks over Unix sockets in `sockets`
    (ipykernel warns on every start that TCP without CurveZMQ keys is unencrypted)."""
    client = NotebookClient(
        nb,
        config=Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}}),
        kernel_name=CPYTHON_KERNEL,
        timeout=TIMEOUT,
        record_timing=False,
        store_widget_state=True,  # nbclient needs it for Output widgets; dropped below
        extra_arguments=[kernel_runs(f"import runpy; runpy.run_path({str(FLOAT_DISPLAY)!r})"
                                     "['install'](get_ipython()); del runpy")],
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()


def kernel_runs(line: str) -> str:
    """The kernel's command-line argument that has it run `line` before the notebook's cells,
    outside them (it leaves no output and no history)."""
    return f"--IPKernelApp.exec_lines={json.dumps([line])}"


def merge_streams(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """One stream output for each run of consecutive prints to the same stream, as Jupyter shows
    them: the kernel flushes stdout on a timer, so how a cell's prints were split into messages
    depends on how busy the machine was, and the stored notebook should not."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            previous = merged[-1] if merged else None
            if (output.output_type == "stream" and previous is not None
                    and previous.output_type == "stream" and previous.name == output.name):
                previous.text += output.text
            else:
                merged.append(output)
        cell.outputs = merged
    return nb


def drop_empty_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop displays left with nothing in them: a progress line (specdec_lab.progress) is emptied
    when its work is done, and whether one was shown at all depends on how fast the machine was."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "display_data" and not o.get("data"))]
    return nb


def strip_widget_views(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop widget views from stored outputs, keeping a static representation where there is one."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.outputs:
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                if not any(mime in data for mime in SHOWABLE):
                    continue  # a bare widget: nothing to show without a kernel
                data.pop("text/plain", None)  # the widget's repr, not a description of the figure
            kept.append(output)
        cell.outputs = kept
    nb.metadata.pop("widgets", None)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    args = parser.parse_args(argv)
    paths = [p if p.is_absolute() or p.exists() else HERE / p for p in args.notebooks]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        have = "、".join(sorted(p.name for p in HERE.glob("*.ipynb")))
        print(f"找不到筆記本 {missing[0]}：notebooks/ 裡有 {have}", file=sys.stderr)
        return 2
    for path in paths or sorted(HERE.glob("*.ipynb")):
        nb = execute(path)
        nbformat.write(nb, path)
        figures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
        print(f"{path.name}: {len(nb.cells)} cells executed, {figures} figures stored")
        for warning in undrawn_figures(nb, path.name):
            print(warning, file=sys.stderr)
    return 0


DRAWS = re.compile(r"\bcourse_figure\(|\bplt\.|\bFigure\(")
FIGURE = ("image/png", "image/svg+xml")


def undrawn_figures(nb: nbformat.NotebookNode, name: str) -> list[str]:
    """A warning for each code cell that draws a figure (course_figure, pyplot, Figure) but stored
    none: a course_figure is shown only when the cell ends with it, after its `with` block."""
    return [f"警告：{name} 第 {index + 1} 格畫了圖，卻沒有存下任何圖。"
            "用 course_figure 畫時，圖在 `with` 區塊之後才顯示：在區塊外、格子最後一行寫 `fig`"
            "（docs/authoring.md「加一課」）"
            for index, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and DRAWS.search(cell.source)
            and not any(mime in o.get("data", {}) for o in cell.outputs for mime in FIGURE)]


if __name__ == "__main__":
    sys.exit(main())
