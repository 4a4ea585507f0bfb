"""How long each cell of the three lab notebooks takes, today's code against an older commit's,
in one run: CPython (a Jupyter kernel, as notebooks/execute.py runs them) and, with --pyodide, the
lab's own Pyodide under Node.js (site/lab/node/run_in_pyodide.mjs; the built site's Pyodide, the
package from each side's src/). Each notebook's cells run in order in one IPython shell.

    python benchmarks/lossless_lab.py [--base REV] [--runs 2] [--notebooks lossless.ipynb ...] [--pyodide [SITE]]

The old side is REV's notebooks/ and src/ (default: where this branch left main), unpacked with
`git archive` into build/bench/; it goes first on sys.path. Runs alternate old, new, old, new
(the machine may be shared: only same-run ratios mean much). A cell's time is CPU seconds in
CPython (other processes on the machine don't count; wall seconds beside them), wall seconds in
Pyodide; medians over --runs. The
Chromium and WebKit timings of the built site are in benchmarks/lab_cells_browser.py. Prints,
asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import io
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "build" / "bench"
NOTEBOOKS = ["lossless.ipynb", "lesson1.ipynb", "your_gpu.ipynb"]


# the last commit before the batched decoder (issue 18): the lossless lab's one-sequence-at-a-time code
BEFORE_BATCHING = "8bc7650"


def unpack(rev: str) -> Path:
    """REV's src/ and notebooks/ in build/bench/old-REV/."""
    out = BENCH / f"old-{rev[:10]}"
    if not (out / "src").exists():
        data = subprocess.run(["git", "archive", rev, "src", "notebooks"], cwd=ROOT, capture_output=True,
                              check=True).stdout
        out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(out)
    return out


DRIVER = r"""
import json, sys, time, io, contextlib
PYODIDE = sys.platform == "emscripten"
sys.path.insert(0, sys.argv[3])
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell("%matplotlib agg" if not PYODIDE else "import matplotlib; matplotlib.use('agg')", store_history=False)
cells = json.loads(open(sys.argv[2]).read())
out = []
for source in cells:
    clock = time.perf_counter if PYODIDE else time.process_time   # CPU time where there is one
    t, w = clock(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        result = shell.run_cell(source, store_history=False)
    out.append([clock() - t, time.perf_counter() - w])
    if not result.success:
        raise RuntimeError(f"cell failed: {source[:60]}: {result.error_in_exec or result.error_before_exec}")
open(sys.argv[1], "w").write(json.dumps(out))
"""


# top-level await: run_in_pyodide.mjs runs the script with runPythonAsync
PYODIDE_PRELUDE = """import pyodide_js
await pyodide_js.loadPackage(["numpy", "matplotlib", "ipywidgets", "pillow"])
"""


def code_cells(tree: Path, notebook: str) -> list[str]:
    import nbformat
    return [c.source for c in nbformat.read(tree / "notebooks" / notebook, as_version=4).cells if c.cell_type == "code"]


def run_cells(tree: Path, notebook: str, site: Path | None = None, timeout: float = 900) -> list[list[float]]:
    """[seconds, wall seconds] of each code cell of tree's notebook, run in order by IPython with
    tree/src first on sys.path: in CPython (CPU seconds), or with ``site`` in that built site's
    Pyodide under Node.js (wall seconds; the Node.js process runs on one core)."""
    BENCH.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BENCH) as tmp:
        driver, cells, result = Path(tmp) / "driver.py", Path(tmp) / "cells.json", Path(tmp) / "result.json"
        cells.write_text(json.dumps(code_cells(tree, notebook)))
        driver.write_text(DRIVER if site is None else PYODIDE_PRELUDE + DRIVER)
        result.write_text("")
        if site is None:
            command = [sys.executable, str(driver), str(result), str(cells), str(tree / "src")]
        else:
            sys.path.insert(0, str(ROOT / "site"))
            from lab.builder import build_lab
            pyodide = build_lab.pyodide_dir(site / "lab")
            # run_in_pyodide.mjs puts /host in front of every argument
            command = [shutil.which("node"), str(ROOT / "site" / "lab" / "node" / "run_in_pyodide.mjs"),
                       str(pyodide.resolve()), str(driver), str(result.resolve()), str(cells.resolve()),
                       str((tree / "src").resolve())]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=tree / "notebooks")
        if done.returncode != 0 or not result.read_text():
            raise RuntimeError(f"run failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        return json.loads(result.read_text())


def print_table(title: str, labels: list[str], old: list, new: list) -> None:
    """old, new: per run, per cell [seconds, wall seconds]."""
    print(f"\n{title}: median of {len(old)} runs each, alternating old/new")
    print(f"  {'cell':58} {'old':>7} {'new':>7} {'old/new':>8}   {'wall old':>8} {'wall new':>8}")
    med = lambda runs, i: [statistics.median(c[i] for c in cell) for cell in zip(*runs)]  # noqa: E731
    o, n, ow, nw = med(old, 0), med(new, 0), med(old, 1), med(new, 1)
    for label, a, b, c, d in zip(labels, o, n, ow, nw):
        print(f"  {label:58} {a:7.2f} {b:7.2f} {a / b if b else float('nan'):8.1f}   {c:8.2f} {d:8.2f}")
    print(f"  {'all code cells':58} {sum(o):7.2f} {sum(n):7.2f} {sum(o) / sum(n):8.1f}   {sum(ow):8.2f} {sum(nw):8.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=None, help=f"the old side's commit (default {BEFORE_BATCHING}, before the batched decoder)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--notebooks", nargs="*", default=["lossless.ipynb"], help=f"of {NOTEBOOKS}")
    parser.add_argument("--pyodide", nargs="?", type=Path, const=ROOT / "build" / "site", default=None,
                        metavar="SITE", help="also in the Pyodide of this built site (default build/site)")
    parser.add_argument("--no-cpython", action="store_true")
    args = parser.parse_args()
    rev = args.base or BEFORE_BATCHING
    old_tree = unpack(rev)
    print(f"old: {rev[:10]} ({old_tree}), new: the working tree ({ROOT})")
    for notebook in args.notebooks:
        labels = [source.splitlines()[0][:56] for source in code_cells(ROOT, notebook)]
        if len(code_cells(old_tree, notebook)) != len(labels):
            print(f"{notebook}: the old and new notebooks have different code cells; cells are listed as the new one's")
        sides = ([] if args.no_cpython else [("CPython, CPU seconds", None)]) + \
            ([(f"Pyodide under Node.js ({args.pyodide}), wall seconds", args.pyodide)] if args.pyodide else [])
        for title, site in sides:
            old, new = [], []
            for _ in range(args.runs):
                old.append(run_cells(old_tree, notebook, site))
                new.append(run_cells(ROOT, notebook, site))
            print_table(f"{notebook}, {title}", labels, old, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
