"""How fast lesson 1's 實驗場 comes alive, in headless Debian Chromium, against a stock JupyterLite.

    python benchmarks/page_load.py [--runs 3] [--site build/site] [--variant NAME=SITE ...]
                                   [--links loopback,broadband,4g,slow]

For each site and a cold profile (a fresh browser profile folder) then a reload (same profile),
the seconds from opening lesson 1 until
  - toy:      the lesson's toy and quiz answer a click (their JS has mounted);
  - preview:  the notebook's static preview (its stored cells and outputs, as HTML) is in the panel;
  - notebook: the live notebook (JupyterLite), with its stored outputs, is on screen;
  - kernel:   Python is ready (kernel idle);
  - output:   the first live output of the kernel, Run all having been pressed at once (it waits
              for Python); lesson 1's first output comes after its imports;
  - all:      every cell has run;
and the bytes the browser received for the lesson page alone, for the whole visit, and before the
first live output.

Links (--links, one table row per site and link): `loopback` is 127.0.0.1 as it is; `broadband`
(50 Mbit/s, +10 ms), `4g` (20 Mbit/s, +50 ms) and `slow` (5 Mbit/s, +100 ms round trip) put the
throttling proxy of benchmarks/throttle.py between the browser and the server: an asyncio proxy in
this process, one token bucket per direction shared by every connection, the latency added to
every chunk. Nothing is changed on the machine (no tc qdisc: the loopback is shared), and the proxy
ends with the benchmark. Every site is measured on every link in the same run, interleaved.
The stock recipe (../shared/reference/jupyterlite-offline: JupyterLite defaults, the same Pyodide,
`import numpy, matplotlib` as its first output) is built into build/bench/stock and measured in the
same run, runs interleaved; the ratios are ours / stock. Medians of --runs. Prints, asserts nothing.

Every visit (cold, then reload, one fresh profile) runs in a child process in which every step
waits at most --step-timeout seconds; the parent stops a visit whose step runs past that (a
Playwright call that never returns: benchmarks/bounded.py) or that takes over --visit-timeout in
all, says where it was stuck, and retries it once with a fresh profile. The table says how many
visits were retried or failed; medians are over the visits that completed. Exit status 1 if any
visit failed twice.

Then the slider latency of every build but the stock one (benchmarks/slider_latency.py: every
slider figure of every lab page, --slider-steps arrow-key steps each, median and max seconds until
the redrawn figure is on screen), bounded the same way.
"""
from __future__ import annotations

import argparse
import hashlib
import inspect
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
from lab.builder import build_lab  # noqa: E402  (site/lab/builder)
from bounded import report, run_bounded, step  # noqa: E402  (benchmarks/bounded.py)
from throttle import LINKS, throttled  # noqa: E402  (benchmarks/throttle.py)

STOCK = ROOT / "build" / "bench" / "stock"
COLUMNS = ["toy", "preview", "notebook", "kernel", "output", "all"]
NAN = float("nan")

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
    from lab.builder import fetch, pyodide_dist
    cfg = build_lab.load_config()
    # stock jupyterlite-pyodide-kernel installs jedi as its kernel starts, with PyPI off: a Pyodide
    # without it (the course's, runtime.toml [kernel] not_loaded) leaves the stock kernel 'unknown'
    cfg["packages"]["kernel"] = cfg["packages"]["kernel"] + ["jedi"]
    cfg["kernel"] = dict(cfg["kernel"], not_loaded=[])
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
    (out / STOCK_STAMP).write_text(stock_recipe_digest())
    return out


STOCK_STAMP = ".recipe-sha256"


def stock_recipe_digest() -> str:
    """What the stock build is made from: this recipe, runtime.toml, the JupyterLite versions.
    (A stock build left from an older recipe is rebuilt: one made before the course stopped
    shipping jedi kept working, a fresh one of the same recipe did not.)"""
    from importlib.metadata import version
    parts = [inspect.getsource(build_stock), json.dumps([STOCK_NOTEBOOK, STOCK_CONFIG]),
             (ROOT / "site" / "lab" / "runtime.toml").read_text(encoding="utf-8"),
             version("jupyterlite-core"), version("jupyterlite-pyodide-kernel")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def stock_is_stale(out: Path = STOCK) -> bool:
    stamp = out / STOCK_STAMP
    return not stamp.exists() or stamp.read_text() != stock_recipe_digest()


STOCK_STATE = """() => {
  const app = window.jupyterapp; const w = app && app.shell.currentWidget;
  if (!w || !w.sessionContext || !w.model || w.model.cells.length < 3) return null;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return {kernel: k ? k.status : null, cells: w.model.cells.length,
          out1: w.model.cells.get(1).outputs.length, out2: w.model.cells.get(2).outputs.length};
}"""
# Run all, not waited for: the command's promise settles only when every cell has run, and never
# if the kernel never starts; page.evaluate would wait for it with no timeout.
STOCK_RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"


def measure_stock(page, url: str, bound: float, at_output=lambda: None) -> dict:
    """The reference's way: open the notebook page, wait for the kernel object (Run before it
    exists would open 'Select Kernel'), Run all, time the first output."""
    t0 = time.time()
    page.goto(url, timeout=bound * 1000)
    state = lambda: page.evaluate(STOCK_STATE) or {}  # noqa: E731
    wait_until(lambda: state().get("cells"), step("stock notebook", bound), what="stock notebook")
    notebook = time.time() - t0
    wait_until(lambda: state().get("kernel"), step("stock kernel object", bound), what="stock kernel object")
    page.evaluate(STOCK_RUN_ALL)
    wait_until(lambda: state().get("out1"), step("stock first output", bound), step=0.05,
               what=f"stock first output (kernel {state().get('kernel')})")
    output = time.time() - t0
    at_output()
    wait_until(lambda: state().get("out2"), step("stock plot", bound), what="stock plot")
    return {"toy": NAN, "preview": NAN, "notebook": notebook, "kernel": NAN, "output": output,
            "all": time.time() - t0}


# ours -------------------------------------------------------------------------------------------------

def measure_lesson(lab: LabPage, bound: float, at_output=lambda: None) -> dict:
    toy = lab.widgets_mounted(step("toy and quiz mounted", bound))
    has_preview = lab.page.evaluate("() => !!document.querySelector('.sd-lab[data-preview]')")
    preview = lab.preview_shown(step("notebook preview", bound)) if has_preview else NAN  # (an older build: none)
    lab.run_all(early=True, timeout=step("Run all pressed in the lab", bound))
    notebook = lab.wait_for("notebookShown", timeout=step("live notebook shown", bound))
    output = lab.first_output(step("first live output", bound))
    at_output()
    kernel = lab.wait_for("stage", "ready", timeout=step("kernel ready", bound))
    lab.wait_all_run(step("every cell run", bound))
    return {"toy": toy, "preview": preview, "notebook": notebook, "kernel": kernel, "output": output,
            "all": time.time() - lab.navigation_start()}


def watch(page) -> None:
    """Tell the parent about a dialog, a crash, an error on a page's console (its workers' too).
    A dialog is answered (with a listener, Playwright no longer does it): 'leave' to the notebook's
    unsaved-changes question on reload, dismissed otherwise."""
    def on_dialog(dialog):
        report(event=f"dialog {dialog.type}: {dialog.message[:80]}")
        dialog.accept() if dialog.type == "beforeunload" else dialog.dismiss()
    seen = {"console": 0}

    def on_console(message):    # (a failed request's console line has no URL: on_response says it)
        if (message.type == "error" and seen["console"] < 10
                and not message.text.startswith("Failed to load resource")):
            seen["console"] += 1
            report(event=f"console error: {message.text[:200]}")

    def on_response(response):
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            report(event=f"HTTP {response.status} {response.url}")
    page.on("dialog", on_dialog)
    page.on("crash", lambda _: report(event="the page crashed"))
    page.on("pageerror", lambda error: report(event=f"page error: {str(error)[:200]}"))
    page.on("console", on_console)
    page.on("response", on_response)


def one_visit(name: str, url: str, profile: str, bound: float, reload_too: bool = True) -> dict:
    """In the child process: (cold, reload, bytes) for one fresh profile."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1440, "height": 900}, timeout=bound * 1000)
        context.set_default_timeout(bound * 1000)      # goto, reload, clicks: Playwright's own bound
        context.on("page", watch)
        for page in context.pages:
            watch(page)
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
        outside = []
        before_output = {}
        snapshot = lambda: before_output.update(received) if not before_output else None  # noqa: E731
        try:
            if name == "stock":
                page = context.pages[0] if context.pages else context.new_page()
                cold = measure_stock(page, url + "notebooks/index.html?path=lesson1.ipynb", bound, snapshot)
                bytes_cold = dict(received)
                reload = (measure_stock(page, url + "notebooks/index.html?path=lesson1.ipynb", bound)
                          if reload_too else dict.fromkeys(COLUMNS, NAN))
            else:
                step("lesson page loaded", bound)
                lab = LabPage.open(context, url)
                cold = measure_lesson(lab, bound, snapshot)
                bytes_cold = dict(received)
                reload = dict.fromkeys(COLUMNS, NAN)
                if reload_too:
                    step("lesson page reloaded", bound)
                    lab.reload()
                    reload = measure_lesson(lab, bound)
                outside = lab.outside
            step("closing the browser", bound)
        finally:
            context.close()
    bytes_cold["before_output"] = sum(before_output.values())
    return {"cold": cold, "reload": reload, "bytes": bytes_cold, "outside": outside}


SLIDER_BOUND = 900     # seconds for benchmarks/slider_latency.py's visits of every lab page


def slider_visit(url: str, steps: int) -> list[dict]:
    """In the child process: benchmarks/slider_latency.py's rows for the site at `url` (every lab
    page in a fresh profile of its own, every slider figure, `steps` steps each)."""
    import slider_latency
    from playwright.sync_api import sync_playwright
    step("slider latency, every lab page", SLIDER_BOUND)
    with sync_playwright() as playwright:
        return slider_latency.measure_site(playwright, url, steps=steps)


def child_main(args) -> int:
    """--visit: one visit, reported to the parent on stdout (benchmarks/bounded.py)."""
    try:
        if args.visit == "sliders":
            report(result=slider_visit(args.url, args.slider_steps))
            return 0
        report(result=one_visit(args.visit, args.url, args.profile, args.step_timeout,
                                reload_too=not args.no_reload))
    except Exception as error:   # a wait's own timeout, a crashed page, …: the parent retries
        report(error=f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:300]}")
        return 1
    return 0


def visit(name: str, url: str, args, kind: str | None = None, link=LINKS["loopback"]) -> tuple[dict | None, list[str]]:
    """One visit (cold, then reload; kind "sliders": the slider latency) in a child process with
    every step bounded; a visit that fails or gets stuck is retried once with a fresh browser
    profile. Returns (the visit's result or None, what went wrong on the way)."""
    notes = []
    bound = SLIDER_BOUND + 60 if kind == "sliders" else args.visit_timeout
    # a shaped link adds the time ~50 MB take on it, to every step and twice to the visit
    allowance = 50e6 * 8 / link.rate if link.rate else 0
    step_bound, bound = args.step_timeout + allowance, bound + 2 * allowance
    for attempt in (1, 2):
        with tempfile.TemporaryDirectory(prefix="specdec-profile-", ignore_cleanup_errors=True) as profile:
            argv = [sys.executable, __file__, "--visit", kind or name, "--url", url, "--profile", profile,
                    "--step-timeout", str(step_bound), "--slider-steps", str(args.slider_steps)]
            argv += ["--no-reload"] if args.no_reload else []
            outcome = run_bounded(argv, Path(profile), visit_bound=bound)
        if outcome.result is not None:
            return outcome.result, notes
        seen = f" (saw: {'; '.join(outcome.events[:3])})" if outcome.events else ""
        notes.append(f"attempt {attempt} {outcome.failure}{seen}")
        print(f"  ! {name}: attempt {attempt} {outcome.failure}{seen}"
              + ("; retrying with a fresh profile" if attempt == 1 else "; given up"), flush=True)
    return None, notes


def print_links(by_link: dict, links: list, sites: dict) -> None:
    """One row per link and site: cold first live output, cold Run all, MB received before the
    first output and in the whole cold visit, and the first output's ratio to stock's."""
    def med(rows):
        return statistics.median(rows) if rows else NAN
    print("\nlesson 1 per link, cold (fresh profile): seconds from opening the page, MB received "
          "(median of the runs that completed, n):")
    header = ["link", "site", "first output s", "Run all s", "MB before output", "MB visit",
              "output ÷ stock", "n"]
    print(f"{header[0]:36}{header[1]:10}" + "".join(f"{h:>17}" for h in header[2:]))
    for link in links:
        results = by_link[link.name]
        stock_output = med([c["output"] for c in results.get("stock", {}).get("cold", [])])
        for name in sites:
            rows = results[name]
            if not rows["cold"]:
                continue
            output = med([c["output"] for c in rows["cold"]])
            cells = [output, med([c["all"] for c in rows["cold"]]),
                     med([b["before_output"] for b in rows["bytes"]]) / 1e6,
                     med([b["lesson"] + b["lab"] for b in rows["bytes"]]) / 1e6,
                     output / stock_output if "stock" in sites else NAN]
            print(f"{link.describe():36}{name:10}" + "".join(f"{c:17.2f}" for c in cells)
                  + f"{len(rows['cold']):17d}")


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
    parser.add_argument("--no-reload", action="store_true", help="cold visits only (no reload after each)")
    parser.add_argument("--links", default="loopback",
                        help="comma-separated link profiles, each site measured on each in the same run: "
                             + ", ".join(link.describe() for link in LINKS.values()))
    parser.add_argument("--step-timeout", type=float, default=120,
                        help="seconds any one step of a visit may take (default 120)")
    parser.add_argument("--visit-timeout", type=float, default=480,
                        help="seconds a whole visit, cold and reload, may take (default 480)")
    parser.add_argument("--slider-steps", type=int, default=10,
                        help="arrow-key steps per slider figure (benchmarks/slider_latency.py); 0: none")
    parser.add_argument("--visit", help=argparse.SUPPRESS)      # the child process: one visit
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.visit:
        return child_main(args)

    sites = {"course": args.site}
    for spec in args.variant:
        name, _, folder = spec.partition("=")
        sites[name] = Path(folder)
    if not args.no_stock:
        if stock_is_stale():
            print("building the stock recipe into build/bench/stock …", flush=True)
            build_stock()
        sites["stock"] = STOCK
    links = [LINKS[name.strip()] for name in args.links.split(",")]
    by_link = {link.name: {name: {"cold": [], "reload": [], "bytes": []} for name in sites} for link in links}
    visits, retried, failed = 0, [], []
    for run in range(args.runs):
        order = list(sites.items())
        order = order[run % len(order):] + order[:run % len(order)]   # each site takes each slot
        for link in links:
            for name, folder in order:
                folder, _, flags = str(folder).partition("#")
                folder, flags = Path(folder), flags.split(",")
                with serve_site(folder, cache_hashed="nocache" not in flags,
                                compress="nogzip" not in flags) as base, throttled(base, link) as url:
                    got, notes = visit(name, url, args, link=link)
                visits += 1
                where = f"run {run + 1} {link.name} {name}"
                if notes:
                    retried.append(f"{where}: {notes[0]}")
                if got is None:
                    failed.append(f"{where}: {notes[-1]}")
                    print(f"{where}: no result (both attempts failed)", flush=True)
                    continue
                cold, reload = got["cold"], got["reload"]
                results = by_link[link.name]
                results[name]["cold"].append(cold)
                results[name]["reload"].append(reload)
                results[name]["bytes"].append(got["bytes"])
                if got["outside"]:
                    print(f"  ! {len(got['outside'])} requests left 127.0.0.1: {got['outside'][:3]}")
                print(f"{where}: cold " + " ".join(f"{k} {cold[k]:5.1f}" for k in COLUMNS)
                      + f" ({got['bytes']['before_output'] / 1e6:.1f} MB before output)"
                      + " | reload " + " ".join(f"{k} {reload[k]:5.1f}" for k in COLUMNS), flush=True)
    if len(links) > 1:
        print_links(by_link, links, sites)
    results = by_link[links[0].name]
    if len(links) > 1:
        print(f"\n(the tables below: the {links[0].describe()} link)")

    def med(rows, key):
        return statistics.median(r[key] for r in rows) if rows else NAN
    print(f"\nlesson 1, seconds from opening the page (median of the runs that completed, n):")
    print(f"{'':16}" + "".join(f"{c:>10}" for c in COLUMNS) + f"{'n':>4}")
    for name in sites:
        for mode in ("cold", "reload"):
            rows = results[name][mode]
            print(f"{name + ' ' + mode:16}" + "".join(f"{med(rows, c):10.1f}" for c in COLUMNS)
                  + f"{len(rows):4d}")
    if "stock" in sites and results["stock"]["cold"]:
        print("\nfirst live output, ratio to stock (goal: cold ≤ 0.50, reload ≤ 0.25):")
        for name in sites:
            if name == "stock":
                continue
            ratios = [f"{mode} {med(results[name][mode], 'output') / med(results['stock'][mode], 'output'):.2f}"
                      for mode in ("cold", "reload")]
            paired = [f"{mode} {statistics.median(o['output'] / s['output'] for o, s in zip(results[name][mode], results['stock'][mode])):.2f}"
                      for mode in ("cold", "reload")] if len(results[name]["cold"]) == len(results["stock"]["cold"]) else ["n/a (a run failed)"]
            print(f"  {name}: " + ", ".join(ratios) + "   (median of each run's own ratio: " + ", ".join(paired) + ")")
    if args.slider_steps:
        import slider_latency
        sliders = {}
        for name, folder in sites.items():
            if name == "stock":
                continue
            with serve_site(Path(str(folder).partition("#")[0])) as base:
                rows, notes = visit(name, base, args, kind="sliders")
            visits += 1
            if notes:
                retried.append(f"{name} sliders: {notes[0]}")
            if rows is None:
                failed.append(f"{name} sliders: {notes[-1]}")
            else:
                sliders[name] = rows
        slider_latency.print_rows(sliders, args.slider_steps)
    print(f"visits: {visits} ({args.runs} runs × {len(sites)} sites"
          + (", and the sliders of each build" if args.slider_steps else "")
          + f"), retried: {len(retried)}, failed after a retry: {len(failed)}")
    for note in retried:
        print(f"  retried {note}")
    for note in failed:
        print(f"  FAILED  {note}")
    print("\nbytes received on a cold visit (until every cell has run), and on disk:")
    for name, folder in sites.items():
        folder = Path(str(folder).partition("#")[0])
        if not results[name]["bytes"]:
            continue
        got = {part: statistics.median(b[part] for b in results[name]["bytes"]) for part in ("lesson", "lab")}
        line = f"  {name}: lab {got['lab'] / 1e6:.1f} MB"
        if name != "stock":
            line += (f", lesson page without the lab {got['lesson'] / 1e3:.0f} KB; site "
                     f"{folder_mb(folder):.1f} MB (Pyodide {folder_mb(build_lab.pyodide_dir(folder / 'lab')):.1f} MB)")
        else:
            line += f"; site {folder_mb(folder):.1f} MB"
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
