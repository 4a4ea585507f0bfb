"""How fast lesson 1's 實驗場 comes alive, in headless Debian Chromium, against a stock JupyterLite.

    python benchmarks/page_load.py [--runs 3] [--site build/site] [--variant NAME=SITE ...]

For each site and a cold profile (a fresh browser profile folder) then a reload (same profile),
the seconds from opening lesson 1 until
  - toy:      the lesson's toy and quiz answer a click (their JS has mounted);
  - preview:  the notebook's static preview (its stored cells and outputs, as HTML) is in the panel;
  - notebook: the live notebook (JupyterLite), with its stored outputs, is on screen;
  - kernel:   Python is ready (kernel idle);
  - output:   the first live output of the kernel, Run all having been pressed at once (it waits
              for Python); lesson 1's first output comes after its imports;
  - all:      every cell has run;
and the bytes the browser received for the lesson page alone and for the whole visit.
The stock recipe (../shared/reference/jupyterlite-offline: JupyterLite defaults, the same Pyodide,
`import numpy, matplotlib` as its first output) is built into build/bench/stock and measured in the
same run, runs interleaved; the ratios are ours / stock. Medians of --runs. Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "site"))
from support.lab import SITE, LabPage, serve_site, wait_until  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from lab import build_lab  # noqa: E402  (site/lab)

STOCK = ROOT / "build" / "bench" / "stock"
COLUMNS = ["toy", "preview", "notebook", "kernel", "output", "all"]

# the stock recipe ------------------------------------------------------------------------------------

STOCK_NOTEBOOK = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python", "display_name": "Python (Pyodide)", "language": "python"},
                 "language_info": {"name": "python"}},
    "cells": [
        {"cell_type": "markdown", "id": "c0", "metadata": {}, "source": "# 第一課：移動平均"},
        {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import numpy, matplotlib; print(numpy.__version__, matplotlib.__version__)"},
        {"cell_type": "code", "id": "c2", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import matplotlib.pyplot as plt\nimport numpy as np\nx = np.linspace(0, 6.28, 100)\n"
                   "plt.plot(x, np.sin(x)); plt.title('sin'); plt.show()"},
    ],
}
STOCK_CONFIG = {"jupyter-lite-schema-version": 0, "jupyter-config-data": {
    "exposeAppInBrowser": True, "enableMemoryStorage": True,
    "contentsStorageDrivers": ["memoryStorageDriver"], "settingsStorageDrivers": ["memoryStorageDriver"],
    "workspacesStorageDrivers": ["memoryStorageDriver"],
    "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": {"disablePyPIFallback": True}}}}


def build_stock(out: Path = STOCK) -> Path:
    """The reference recipe: stock JupyterLite 0.6.4 + pyodide-kernel 0.6.1, the same checked and
    trimmed Pyodide (nothing added to its lock), comm in pypi/, default apps."""
    from lab import fetch, pyodide_dist
    cfg = build_lab.load_config()
    with tempfile.TemporaryDirectory(prefix="stock-lite-") as tmp:
        lite = Path(tmp)
        (lite / "files").mkdir()
        (lite / "pypi").mkdir()
        (lite / "files" / "lesson1.ipynb").write_text(json.dumps(STOCK_NOTEBOOK, ensure_ascii=False))
        (lite / "jupyter-lite.json").write_text(json.dumps(STOCK_CONFIG))
        (lite / "overrides.json").write_text(
            json.dumps({"@jupyter-notebook/application-extension:top": {"visible": "no"}}))
        pyodide_dist.assemble(lite / "static" / "pyodide", cfg)
        comm = next(line.split() for line in cfg["lock"]["pypi"] if line.startswith("comm=="))
        shutil.copy(fetch.pypi_wheel(*comm), lite / "pypi")
        if out.exists():
            shutil.rmtree(out)
        subprocess.run([sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite),
                        "--output-dir", str(out), "--no-sourcemaps"], cwd=lite, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


STOCK_STATE = """() => {
  const app = window.jupyterapp; const w = app && app.shell.currentWidget;
  if (!w || !w.sessionContext || !w.model || w.model.cells.length < 3) return null;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return {kernel: k ? k.status : null, cells: w.model.cells.length,
          out1: w.model.cells.get(1).outputs.length, out2: w.model.cells.get(2).outputs.length};
}"""


def measure_stock(page, url: str) -> dict:
    """The reference's way: open the notebook page, wait for the kernel object (Run before it
    exists would open 'Select Kernel'), Run all, time the first output."""
    t0 = time.time()
    page.goto(url)
    state = lambda: page.evaluate(STOCK_STATE)  # noqa: E731
    wait_until(lambda: (state() or {}).get("cells"), 120, what="stock notebook")
    notebook = time.time() - t0
    wait_until(lambda: (state() or {}).get("kernel"), 120, what="stock kernel object")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_until(lambda: (state() or {}).get("out1"), 240, step=0.05, what="stock first output")
    output = time.time() - t0
    wait_until(lambda: (state() or {}).get("out2"), 240, what="stock plot")
    return {"toy": float("nan"), "preview": float("nan"), "notebook": notebook, "kernel": float("nan"),
            "output": output,
            "all": time.time() - t0}


# ours -------------------------------------------------------------------------------------------------

def measure_lesson(lab: LabPage) -> dict:
    toy = lab.widgets_mounted()
    has_preview = lab.page.evaluate("() => !!document.querySelector('.sd-lab[data-preview]')")
    preview = lab.preview_shown() if has_preview else float("nan")    # (an older build: none)
    lab.run_all(early=True)
    notebook = lab.wait_for("notebookShown")
    output = lab.first_output()
    kernel = lab.wait_for("stage", "ready")
    lab.wait_all_run()
    return {"toy": toy, "preview": preview, "notebook": notebook, "kernel": kernel, "output": output,
            "all": time.time() - lab.navigation_start()}


def one_visit(playwright, name: str, url: str) -> tuple[dict, dict, dict]:
    """(cold, reload, bytes) for one fresh profile."""
    with tempfile.TemporaryDirectory(prefix="specdec-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1440, "height": 900})
        received = {"lesson": 0, "lab": 0}

        def count(request):
            # the panel's notebook preview is the lab's (fetched when the lab loads, not by phones
            # that never open it): the lesson page alone is the page without its 實驗場
            lab_part = "/lab/" in request.url or "/notebook-preview/" in request.url
            part = "lab" if lab_part or name == "stock" else "lesson"
            try:
                sizes = request.sizes()
            except Exception:   # the context closed meanwhile
                return
            received[part] += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        context.on("requestfinished", count)
        try:
            if name == "stock":
                page = context.pages[0] if context.pages else context.new_page()
                cold = measure_stock(page, url + "notebooks/index.html?path=lesson1.ipynb")
                bytes_cold = dict(received)
                reload = measure_stock(page, url + "notebooks/index.html?path=lesson1.ipynb")
                return cold, reload, bytes_cold
            lab = LabPage.open(context, url)
            cold = measure_lesson(lab)
            bytes_cold = dict(received)
            lab.reload()
            reload = measure_lesson(lab)
            if lab.outside:
                print(f"  ! {len(lab.outside)} requests left 127.0.0.1: {lab.outside[:3]}")
            return cold, reload, bytes_cold
        finally:
            context.close()


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=SITE_FOLDER: another build of the site to measure alongside; "
                             "NAME=SITE_FOLDER#nocache serves it with every file revalidated, "
                             "#nogzip without compression (flags join with commas)")
    parser.add_argument("--no-stock", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sites = {"course": args.site}
    for spec in args.variant:
        name, _, folder = spec.partition("=")
        sites[name] = Path(folder)
    if not args.no_stock:
        if not (STOCK / "index.html").exists():
            print("building the stock recipe into build/bench/stock …", flush=True)
            build_stock()
        sites["stock"] = STOCK
    results = {name: {"cold": [], "reload": [], "bytes": []} for name in sites}
    with sync_playwright() as playwright:
        for run in range(args.runs):
            order = list(sites.items())
            order = order[run % len(order):] + order[:run % len(order)]   # each site takes each slot
            for name, folder in order:
                folder, _, flags = str(folder).partition("#")
                folder, flags = Path(folder), flags.split(",")
                with serve_site(folder, cache_hashed="nocache" not in flags,
                                compress="nogzip" not in flags) as base:
                    cold, reload, received = one_visit(playwright, name, base)
                results[name]["cold"].append(cold)
                results[name]["reload"].append(reload)
                results[name]["bytes"].append(received)
                print(f"run {run + 1} {name:>8}: cold " + " ".join(f"{k} {cold[k]:5.1f}" for k in COLUMNS)
                      + " | reload " + " ".join(f"{k} {reload[k]:5.1f}" for k in COLUMNS), flush=True)

    med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
    print(f"\nlesson 1, seconds from opening the page (median of {args.runs} runs):")
    print(f"{'':16}" + "".join(f"{c:>10}" for c in COLUMNS))
    for name in sites:
        for mode in ("cold", "reload"):
            print(f"{name + ' ' + mode:16}" + "".join(f"{med(results[name][mode], c):10.1f}" for c in COLUMNS))
    if "stock" in sites:
        print("\nfirst live output, ratio to stock (goal: cold ≤ 0.50, reload ≤ 0.25):")
        for name in sites:
            if name == "stock":
                continue
            ratios = [f"{mode} {med(results[name][mode], 'output') / med(results['stock'][mode], 'output'):.2f}"
                      for mode in ("cold", "reload")]
            paired = [f"{mode} {statistics.median(o['output'] / s['output'] for o, s in zip(results[name][mode], results['stock'][mode])):.2f}"
                      for mode in ("cold", "reload")]
            print(f"  {name}: " + ", ".join(ratios) + "   (median of each run's own ratio: " + ", ".join(paired) + ")")
    print("\nbytes received on a cold visit (until every cell has run), and on disk:")
    for name, folder in sites.items():
        folder = Path(str(folder).partition("#")[0])
        got = {part: statistics.median(b[part] for b in results[name]["bytes"]) for part in ("lesson", "lab")}
        line = f"  {name}: lab {got['lab'] / 1e6:.1f} MB"
        if name != "stock":
            line += (f", lesson page without the lab {got['lesson'] / 1e3:.0f} KB; site "
                     f"{folder_mb(folder):.1f} MB (Pyodide {folder_mb(build_lab.pyodide_dir(folder / 'lab')):.1f} MB)")
        else:
            line += f"; site {folder_mb(folder):.1f} MB"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
