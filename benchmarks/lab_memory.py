"""How much memory lesson 1's tab adds after Run all, in headless Debian Chromium, beside stock
JupyterLite running the same notebook.

    python benchmarks/lab_memory.py [--runs 3] [--site build/site] [--variant NAME=SITE ...]
                                    [--width 1440] [--settle 8] [--no-lab-alone]

Each visit launches a fresh browser (a fresh profile folder) on about:blank, waits --settle
seconds and sums the PSS (proportional set size: shared pages split between the processes that
map them; /proc/<pid>/smaps_rollup) of every process of that browser: the browser process and
all its descendants (zygotes, renderers, GPU and utility processes). Then, in the same tab:
  - course:      lesson 1 (the lesson page with its 實驗場 beside it), Run all in the lab;
  - course-lab:  our lab alone, the lab page lesson 1's panel loads (lab/notebooks/index.html?
                 path=lesson1.ipynb) opened as the tab's page, Run all: like with like with stock;
  - stock:       stock JupyterLite 0.6.4 + pyodide-kernel 0.6.1 (JupyterLite's defaults, the same
                 Pyodide) opening the same notebook (notebooks/lesson1.ipynb, unchanged: its
                 `import specdec_lab` loads the project's wheel, which the recipe registers in
                 Pyodide's lock with what its plotting needs), Run all;
waits until every code cell has run and the kernel is idle, lets the page settle (--settle s),
and sums the PSS again (the median of three samples a second apart). The figure is what was
added over the idle browser, per kind of process and in all. Then it asks the page and the
kernel where memory is: the page's V8 heap (the lesson page and the lab's same-origin frame
share one), the DOM's nodes, Pyodide's WebAssembly memory (pyodide._module.HEAP8.length: it
grows and never shrinks), what Python's allocator holds, matplotlib's figures kept by pyplot,
ipywidgets' models, the images in the notebook's outputs.

Sites are visited in turn, each run in a different order; medians of --runs. Every visit runs
in a child process whose steps are bounded (benchmarks/bounded.py), retried once with a fresh
profile if it fails or gets stuck. Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
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
sys.path.insert(0, str(ROOT / "benchmarks"))
from support.lab import SITE, PAINTED, serve_site, wait_until  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from support.workers import worker_sessions  # noqa: E402
from bounded import browser_pids, report, run_bounded, step  # noqa: E402
import page_load  # noqa: E402  (its stock recipe)

STOCK_LESSON = ROOT / "build" / "bench" / "stock-lesson1"
NOTEBOOK = ROOT / "notebooks" / "lesson1.ipynb"
LAB_PATH = "lab/notebooks/index.html?path=lesson1.ipynb"
STOCK_PATH = "notebooks/index.html?path=lesson1.ipynb"
KINDS = ["browser", "renderer", "gpu", "utility", "other"]
NAN = float("nan")

# the stock recipe, with lesson 1's notebook ----------------------------------------------------------

def build_stock_lesson(out: Path = STOCK_LESSON) -> Path:
    """page_load's stock recipe (build/bench/stock), its notebook replaced by lesson 1's and the
    course's wheels registered in its Pyodide lock (ipywidgets, comm, the project's wheel with its
    fonts and with the "plot" extra's requirements as dependencies, so `import specdec_lab` loads
    matplotlib and ipywidgets too): what stock JupyterLite needs to run the notebook unchanged."""
    from lab.builder import build_lab, fetch, lock
    if page_load.stock_is_stale():
        page_load.build_stock()
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(page_load.STOCK, out)
    shutil.copy(NOTEBOOK, out / "files" / "lesson1.ipynb")   # (the drive reads the file itself)
    cfg = build_lab.load_config()
    pyodide = out / "static" / "pyodide"
    wheels = []
    for line in cfg["lock"]["pypi"]:
        requirement, sha256 = line.split()
        wheels.append((fetch.pypi_wheel(requirement, sha256), {}))
    with tempfile.TemporaryDirectory(prefix="stock-wheel-") as tmp:
        project = build_lab.project_wheel(Path(tmp))
        wheels.append((project, {"extras": ("plot",)}))
        # (ipywidgets' two front-end wheels are not shipped: JupyterLite serves the front end)
        lock.register(pyodide, wheels, not_loaded=["widgetsnbextension", "jupyterlab-widgets"])
    (out / ".notebook-sha256").write_text(fetch.sha256_of(NOTEBOOK))
    return out


def stock_lesson_is_stale(out: Path = STOCK_LESSON) -> bool:
    from lab.builder import fetch
    stamp = out / ".notebook-sha256"
    return (page_load.stock_is_stale() or not stamp.exists()
            or stamp.read_text() != fetch.sha256_of(NOTEBOOK)
            or any(p.stat().st_mtime > stamp.stat().st_mtime for p in (ROOT / "src").rglob("*.py")))


# processes and their PSS -----------------------------------------------------------------------------

def descendants(roots: list[int]) -> list[int]:
    """The processes `roots` and everything started under them (by parent id, from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    seen, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(children.get(pid, []))
    return seen


def kind_of(pid: int) -> str:
    """browser, renderer, gpu, utility or other (zygotes, ...), from --type= (Chromium rewrites its
    command line as one string: split on spaces too)."""
    try:
        cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return "gone"
    types = [a.split(b"=", 1)[1].decode() for a in cmdline if a.startswith(b"--type=")]
    if not types:
        return "browser"
    return {"renderer": "renderer", "gpu-process": "gpu", "utility": "utility"}.get(types[0], "other")


def smaps_rollup(pid: int) -> dict:
    """kB per line of /proc/<pid>/smaps_rollup (Pss, Pss_Anon, Pss_File, Pss_Shmem, ...)."""
    out = {}
    try:
        for line in (Path("/proc") / str(pid) / "smaps_rollup").read_text().splitlines()[1:]:
            key, value = line.split(":", 1)
            out[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return out


def browser_pss(profile: str) -> dict:
    """MB per kind of process (KINDS) and in all, for the browser started with `profile`:
    "pss" all of it (the issue's measure), "anon" its anonymous and shared-memory part (Pss_Anon +
    Pss_Shmem: the heaps, the pages' and workers' own memory). The file-backed rest (Pss_File:
    Chromium's code, fonts) is shared with every other Chromium on the machine, so it moves with
    whatever else runs here, not with the page."""
    totals = {m: dict.fromkeys(KINDS, 0.0) for m in ("pss", "anon")}
    pids = descendants(browser_pids(Path(profile)))
    for pid in pids:
        kind = kind_of(pid)
        if kind == "gone":
            continue
        rollup = smaps_rollup(pid)
        totals["pss"][kind] += rollup.get("Pss", 0) / 1024
        totals["anon"][kind] += (rollup.get("Pss_Anon", 0) + rollup.get("Pss_Shmem", 0)) / 1024
    for by_kind in totals.values():
        by_kind["total"] = sum(by_kind[k] for k in KINDS)
    return {f"{m}_{k}": v for m, by_kind in totals.items() for k, v in by_kind.items()} | {"processes": len(pids)}


def sampled_pss(profile: str, samples: int = 3, gap: float = 1.0) -> dict:
    """The median of `samples` readings `gap` seconds apart (memory moves as the heaps collect)."""
    readings = []
    for i in range(samples):
        if i:
            time.sleep(gap)
        readings.append(browser_pss(profile))
    return {key: statistics.median(r[key] for r in readings) for key in readings[0]}


# driving the notebook (the app is the tab's own, or in the lesson's lab frame) --------------------------

FIND_APP = """
  const frame = document.querySelector('.sd-lab__frame');
  const win = window.jupyterapp ? window : (frame && frame.contentWindow);
  const app = win && win.jupyterapp;
  const nb = app && app.shell.currentWidget && app.shell.currentWidget.sessionContext
             ? app.shell.currentWidget : null;
"""
STATE = "() => {" + FIND_APP + """
  if (!nb || !nb.model) return null;
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  let code = 0;
  for (let i = 0; i < nb.model.cells.length; i++) {
    const c = nb.model.cells.get(i);
    if (c.type === 'code' && c.sharedModel.getSource().trim()) code++;
  }
  const kinds = win.__mem ? win.__mem.map((m) => m.type) : [];
  return {kernel: kernel ? kernel.status : null, code, inputs: kinds.filter((k) => k === 'execute_input').length,
          error: kinds.includes('error'), listening: !!win.__mem};
}"""
# Run all, not waited for (its promise settles only when every cell has run): the iopub listener first
RUN_ALL = "() => {" + FIND_APP + """
  if (!nb || !nb.sessionContext.session || !nb.sessionContext.session.kernel) return false;
  if (!win.__mem) {
    win.__mem = [];
    nb.sessionContext.iopubMessage.connect((_, msg) => win.__mem.push({type: msg.header.msg_type}));
    app.commands.execute('notebook:run-all-cells');
  }
  return true;
}"""
# What the page holds: its V8 heap (the lab's same-origin frame shares it), its DOM, the notebook's
# outputs and their images, the widget models the front end keeps
PAGE_PROBE = "() => {" + FIND_APP + """
  const heap = performance.memory ? performance.memory.usedJSHeapSize : null;
  const docs = [document, ...(win && win.document !== document ? [win.document] : [])];
  let images = 0, imageChars = 0, outputs = 0;
  if (nb) for (let i = 0; i < nb.model.cells.length; i++) {
    const c = nb.model.cells.get(i);
    if (c.type !== 'code') continue;
    for (const o of c.outputs.toJSON()) {
      outputs++;
      const png = o.data && o.data['image/png'];
      if (png) { images++; imageChars += png.length; }
    }
  }
  return {heapMB: heap / 1048576, nodes: docs.reduce((n, d) => n + d.getElementsByTagName('*').length, 0),
          lessonNodes: win && win.document !== document ? document.getElementsByTagName('*').length : 0,
          imgs: docs.reduce((n, d) => n + d.images.length, 0),
          outputs, images, imageMB: imageChars * 0.75 / 1048576};
}"""
# Asked of the kernel after the measurement (it adds nothing before it): one execution, not a cell
KERNEL_PROBE_CODE = r"""
def _specdec_memory_probe():
    import gc, json, sys
    out = {}
    try:
        import pyodide_js
        out["wasm_mb"] = pyodide_js._module.HEAP8.length / 2**20
    except Exception as error:
        out["wasm_mb"] = None
    out["gc_objects"] = len(gc.get_objects())
    out["modules"] = len(sys.modules)
    plt = sys.modules.get("matplotlib.pyplot")
    out["pyplot_figures"] = len(plt.get_fignums()) if plt else None
    widgets = sys.modules.get("ipywidgets")
    out["widgets"] = len(widgets.Widget.widgets) if widgets else None
    import os
    files = 0
    for top in ("/lib", "/home", "/tmp", "/drive"):
        for folder, _, names in os.walk(top):
            for n in names:
                try:
                    files += os.lstat(os.path.join(folder, n)).st_size
                except OSError:
                    pass
    out["files_mb"] = files / 2**20
    from matplotlib.figure import Figure
    out["figures_alive"] = sum(isinstance(o, Figure) for o in gc.get_objects())
    print("@@probe " + json.dumps(out))
_specdec_memory_probe(); del _specdec_memory_probe
"""
KERNEL_PROBE = "(code) => {" + FIND_APP + """
  const kernel = nb.sessionContext.session.kernel;
  return new Promise((resolve) => {
    setTimeout(() => resolve('no answer within 60 s'), 60000);
    const future = kernel.requestExecute({code, store_history: false, silent: false});
    let text = '';
    future.onIOPub = (msg) => {
      if (msg.header.msg_type === 'stream') text += msg.content.text;
      if (msg.header.msg_type === 'error') text += msg.content.ename + ': ' + msg.content.evalue;
    };
    future.done.then(() => resolve(text), (e) => resolve(String(e)));
  });
}"""


def heaps(context, page, bound: float = 20) -> dict:
    """MB of V8 heap (DevTools' Runtime.getHeapUsage) of the page (with its same-origin frames: one
    isolate) and of each worker it started (the kernel's, Material's search index, the service
    worker), as found and again after a forced garbage collection (HeapProfiler.collectGarbage)
    in each: "total" (the JavaScript heap), "backingStorage" (ArrayBuffers' memory: Pyodide's
    in-memory files, downloads), "embedderHeapUsed" (Blink's objects: the DOM)."""
    def mb(usage):
        return {k: (usage or {}).get(f"{k}Size", NAN) / 2**20
                for k in ("used", "total", "embedderHeapUsed", "backingStorage")}
    with worker_sessions(context, page, bound=bound) as workers:
        out = {"page": mb(workers.cdp.send("Runtime.getHeapUsage"))}
        names = {}
        for info, session in workers.attached:
            url = info["url"]
            names[session] = ("kernel" if "pyodide-kernel" in url else "search" if "search" in url
                              else "service" if info["type"] == "service_worker" else url.rsplit("/", 1)[-1][:20])
            out[names[session]] = mb(workers.call(session, "Runtime.getHeapUsage"))
        workers.cdp.send("HeapProfiler.collectGarbage")
        out["page_gc"] = mb(workers.cdp.send("Runtime.getHeapUsage"))
        for session, name in names.items():
            workers.call(session, "HeapProfiler.collectGarbage")
            out[name + "_gc"] = mb(workers.call(session, "Runtime.getHeapUsage"))
    return out


def run_notebook(page, bound: float) -> None:
    """Run all as soon as the notebook has its kernel object, then wait until every code cell has
    run (or one failed) and the kernel is idle again."""
    wait_until(lambda: page.evaluate(RUN_ALL), step("notebook with its kernel, Run all pressed", bound),
               step=0.1, what="notebook with its kernel")

    def done():
        s = page.evaluate(STATE) or {}
        return s.get("kernel") == "idle" and (s["inputs"] >= s["code"] or s["error"]) and s
    state = wait_until(done, step("every cell run, kernel idle", bound), step=0.25, what="every cell run")
    if state["error"]:
        report(event="a cell failed (Run all stopped there)")


PREFETCH_STATE = "() => document.documentElement.dataset.sdLabPrefetch || ''"


def open_lab_on_a_phone(page, bound: float) -> None:
    """A phone's lesson page loads the lab when the learner opens it (lab-panel.js), after the
    page's prefetch (lab-prefetch.js) has fetched Python's start into the cache: wait for that to
    end (or not start), then press the button that opens the lab."""
    wait_until(lambda: page.evaluate(PREFETCH_STATE) not in ("", "fetching"),
               step("the lesson's prefetch done", bound), step=0.25, what="the lesson's prefetch")
    step("opening the lab with its button", bound)
    page.locator(".sd-lab-open").click()


def one_visit(name: str, url: str, profile: str, bound: float, width: int, settle: float) -> dict:
    """In the child process: PSS idle on about:blank, then after Run all; what the page and the
    kernel hold. Width 390: a phone's screen (touch), the lesson's lab opened with its button."""
    from playwright.sync_api import sync_playwright
    phone = width < 600
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, timeout=bound * 1000,
            args=CHROMIUM_FLAGS + ["--enable-precise-memory-info"],
            viewport={"width": width, "height": 844 if phone else 900}, is_mobile=phone, has_touch=phone)
        context.set_default_timeout(bound * 1000)
        context.on("page", page_load.watch)
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page_load.watch(page)
            page.goto("about:blank")
            step(f"idle on about:blank ({settle:.0f} s)", settle + 30)
            time.sleep(settle)
            idle = sampled_pss(profile)
            t0 = time.time()
            step("opening the page", bound)
            page.goto(url, timeout=bound * 1000)
            if phone and "notebooks/" not in url:
                open_lab_on_a_phone(page, bound)
            run_notebook(page, bound)
            seconds = time.time() - t0
            step(f"settling ({settle:.0f} s)", settle + 30)
            page.evaluate(PAINTED)
            time.sleep(settle)
            after = sampled_pss(profile)
            step("V8 heaps over DevTools, a forced garbage collection", 120)
            usage = heaps(context, page)
            time.sleep(2)
            after_gc = sampled_pss(profile)
            step("the page's probe", 30)
            probe = page.evaluate(PAGE_PROBE)
            step("the kernel's probe", 90)
            text = page.evaluate(KERNEL_PROBE, KERNEL_PROBE_CODE)
            line = next((l for l in text.splitlines() if l.startswith("@@probe ")), None)
            probe.update(json.loads(line[len("@@probe "):]) if line else {"kernel_probe": text[:200]})
            for where, heap in usage.items():
                probe[f"{where}_heap"] = heap["total"]
                probe[f"{where}_backing"] = heap["backingStorage"]
                probe[f"{where}_blink"] = heap["embedderHeapUsed"]
            step("closing the browser", 60)
        finally:
            context.close()
    return {"idle": idle, "after": after, "after_gc": after_gc, "seconds": seconds, "probe": probe}


def child_main(args) -> int:
    try:
        report(result=one_visit(args.visit, args.url, args.profile, args.step_timeout, args.width, args.settle))
    except Exception as error:
        report(error=f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:300]}")
        return 1
    return 0


def visit(name: str, url: str, args) -> tuple[dict | None, list[str]]:
    """One visit in a child process, every step bounded; retried once with a fresh profile."""
    notes = []
    for attempt in (1, 2):
        with tempfile.TemporaryDirectory(prefix="specdec-memory-", ignore_cleanup_errors=True) as profile:
            argv = [sys.executable, __file__, "--visit", name, "--url", url, "--profile", profile,
                    "--step-timeout", str(args.step_timeout), "--width", str(args.width),
                    "--settle", str(args.settle)]
            outcome = run_bounded(argv, Path(profile), visit_bound=args.visit_timeout)
        if outcome.result is not None:
            for event in outcome.events:
                print(f"  ({name}: {event})", flush=True)
            return outcome.result, notes
        seen = f" (saw: {'; '.join(outcome.events[:3])})" if outcome.events else ""
        notes.append(f"attempt {attempt} {outcome.failure}{seen}")
        print(f"  ! {name}: attempt {attempt} {outcome.failure}{seen}"
              + ("; retrying with a fresh profile" if attempt == 1 else "; given up"), flush=True)
    return None, notes


def added(row: dict, key: str, when: str = "after") -> float:
    return row[when][key] - row["idle"][key]


def print_table(results: dict) -> None:
    med = lambda rows: statistics.median(rows) if rows else NAN  # noqa: E731
    cols = ["total", *KINDS]
    for measure, when, what in (
            ("pss", "after", "PSS, all of it (the issue's measure)"),
            ("anon", "after", "PSS of anonymous and shared memory (Pss_Anon + Pss_Shmem: without "
                              "Chromium's files, whose share moves with the other browsers on the machine)"),
            ("anon", "after_gc", "the same after a garbage collection forced in every JavaScript heap "
                                 "(DevTools; what was only waiting to be collected is gone)")):
        print(f"\nMB added over the idle browser (about:blank) after Run all, {what}; medians:")
        print(f"{'site':14}" + "".join(f"{c:>10}" for c in cols) + f"{'idle':>10}{'÷ stock':>9}{'n':>4}")
        stock = med([added(r, f"{measure}_total", when) for r in results.get("stock", [])])
        for name, rows in results.items():
            if not rows:
                continue
            cells = [med([added(r, f"{measure}_{c}", when) for r in rows]) for c in cols]
            print(f"{name:14}" + "".join(f"{a:10.0f}" for a in cells)
                  + f"{med([r['idle'][measure + '_total'] for r in rows]):10.0f}{cells[0] / stock:9.2f}{len(rows):4d}")
    keys = ["page_heap", "page_gc_heap", "page_backing", "page_blink", "kernel_heap", "kernel_gc_heap",
            "kernel_backing", "kernel_gc_backing", "search_heap", "service_heap", "wasm_mb", "files_mb", "gc_objects", "modules", "nodes", "lessonNodes", "imgs",
            "images", "imageMB", "widgets", "pyplot_figures", "figures_alive"]
    print("\nwhere it is (medians; MB unless a count): V8 heaps (DevTools' Runtime.getHeapUsage) of the page "
          "(with the lab's same-origin frame) as found and after the forced collection, its ArrayBuffers, "
          "Blink's objects; the kernel worker's heap and its ArrayBuffers, each as found and after the "
          "collection; Material's search worker; the service worker; Pyodide's WebAssembly memory; "
          "the bytes of its in-memory files; Python's gc-tracked objects; modules; DOM elements (in all, "
          "the lesson page's); <img>; PNG outputs and their MB; ipywidgets; pyplot figures; matplotlib "
          "Figures alive; Run all seconds:")
    print(f"{'site':14}" + "".join(f"{k[:9]:>10}" for k in keys) + f"{'Run all s':>10}")
    for name, rows in results.items():
        if not rows:
            continue
        cells = []
        for k in keys:
            values = [r["probe"].get(k) for r in rows if isinstance(r["probe"].get(k), (int, float))]
            cells.append((f"{med(values):10.0f}" if max(values) >= 1000 else f"{med(values):10.1f}")
                         if values else f"{'-':>10}")
        print(f"{name:14}" + "".join(cells) + f"{med([r['seconds'] for r in rows]):10.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=SITE_FOLDER: another build of the site, measured alongside (lesson page)")
    parser.add_argument("--no-stock", action="store_true")
    parser.add_argument("--no-lab-alone", action="store_true", help="not our lab alone (course-lab)")
    parser.add_argument("--width", type=int, default=1440,
                        help="the window's CSS width; under 600 a phone's (touch, 844 high, the lab opened with its button)")
    parser.add_argument("--settle", type=float, default=8, help="seconds to wait before each reading")
    parser.add_argument("--step-timeout", type=float, default=180)
    parser.add_argument("--visit-timeout", type=float, default=480)
    parser.add_argument("--visit", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.visit:
        return child_main(args)

    sites = {"course": (args.site, "")}
    if not args.no_lab_alone:
        sites["course-lab"] = (args.site, LAB_PATH)
    for spec in args.variant:
        name, _, folder = spec.partition("=")
        sites[name] = (Path(folder), "")
    if not args.no_stock:
        if stock_lesson_is_stale():
            print("building the stock recipe with lesson 1's notebook into build/bench/stock-lesson1 …", flush=True)
            build_stock_lesson()
        sites["stock"] = (STOCK_LESSON, STOCK_PATH)
    results = {name: [] for name in sites}
    failed = []
    for run in range(args.runs):
        order = list(sites.items())
        order = order[run % len(order):] + order[:run % len(order)]
        for name, (folder, path) in order:
            with serve_site(folder) as base:
                got, notes = visit(name, base + path, args)
            if got is None:
                failed.append(f"run {run + 1} {name}: {notes[-1]}")
                continue
            results[name].append(got)
            p = got["probe"]
            print(f"run {run + 1} {name}: PSS idle {got['idle']['pss_total']:.0f} MB, after Run all "
                  f"{got['after']['pss_total']:.0f} MB (+{added(got, 'pss_total'):.0f}; anonymous "
                  f"+{added(got, 'anon_total'):.0f}, renderers +{added(got, 'anon_renderer'):.0f}; after a "
                  f"forced GC +{added(got, 'anon_total', 'after_gc'):.0f}), "
                  f"Run all {got['seconds']:.1f} s; page V8 heap {p.get('page_heap', NAN):.0f} MB, "
                  f"kernel worker {p.get('kernel_heap', NAN):.0f} + {p.get('kernel_backing', NAN):.0f} MB, "
                  f"wasm {p.get('wasm_mb') or NAN:.0f} MB", flush=True)
    print_table(results)
    print(f"\nvisits failed after a retry: {len(failed)}")
    for note in failed:
        print(f"  FAILED  {note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
