"""Where lesson 1's seconds go until its first live output: a timeline of one cold visit and one
reload, in headless Debian Chromium, from marks (no guessing from totals).

    python benchmarks/lab_breakdown.py [--site build/site] [--runs 1] [--trace trace.json]

Measures an instrumented COPY of the built site (build/bench/breakdown-site, hard links; only
jupyter-lite.json differs): the kernel worker's `pyodideUrl` points at a small timing script
beside pyodide.js that loads Pyodide exactly as the worker would and marks each step
(pyodide.js, pyodide.asm.js, the WebAssembly compile, Python's start with the preloaded
packages, piplite, `import pyodide_kernel`, each cell's package loading) on the worker's
console. The lab page script's own marks (app, plugins, session, notebook) and the
kernel's iopub messages (each cell's start, the first output) complete the timeline.
--trace also records a Chromium trace of the reload (WebAssembly compile and code-cache events
are summarised). Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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

COPY = ROOT / "build" / "bench" / "breakdown-site"
TIMING_SCRIPT = "specdec-timing.js"

# Runs in the kernel's worker in place of the configured loader (jupyter-lite.json's pyodideUrl:
# pyodide.js, or a loader script of the lab's own, which it then wraps) and defines the loadPyodide
# the worker calls. Every mark is a console line.
WORKER_TIMING = r"""
(function () {
  const now = () => performance.timeOrigin + performance.now();
  const post = (data) => console.debug('specdec-mark ' + JSON.stringify(data));
  const mark = (name, extra) => post({ name, t: now(), ...(extra || {}) });
  mark('worker: timing script');
  const realFetch = self.fetch.bind(self);
  self.fetch = (url, init) => {
    const name = String(url).split('/').pop();
    const t = now();
    return realFetch(url, init).then((r) => { mark('fetch ' + name, { start: t }); return r; });
  };
  for (const fn of ['instantiateStreaming', 'compileStreaming', 'instantiate']) {
    const real = WebAssembly[fn].bind(WebAssembly);
    WebAssembly[fn] = async (...args) => {
      const t = now();
      const result = await real(...args);
      const size = args[0] && args[0].byteLength;
      mark('wasm ' + fn + (size ? ' ' + size : ''), { start: t });
      return result;
    };
  }
  self.loadPyodide = async (options) => {
    const base = options.indexURL;
    let t = now();
    importScripts(base + 'pyodide.js');
    mark('pyodide.js loaded', { start: t });
    t = now();
    importScripts(base + 'pyodide.asm.js');
    mark('pyodide.asm.js loaded', { start: t });
    let load = self.loadPyodide;    // Pyodide's, or the lab's own loader (which calls Pyodide's):
    if (LAB_LOADER) { importScripts(base + LAB_LOADER); load = self.loadPyodide; }
    const create = self._createPyodideModule;
    self._createPyodideModule = async (settings) => {
      const t0 = now();
      const module = await create(settings);
      mark('emscripten module ready (wasm + stdlib + FS)', { start: t0 });
      return module;
    };
    // Python's start and the preloaded packages, timed apart (Pyodide would overlap their
    // downloads; on a reload they come from the HTTP cache)
    // but for those the lab's loader keeps out of Pyodide (runtime.toml [kernel] not_loaded)
    const packages = (options.packages || []).filter((name) => !(load.notLoaded || []).includes(name));
    const lines = [];
    const stderr = (line) => {
      if (line.startsWith('import time:')) lines.push(line);
      else console.warn(line);
    };
    t = now();
    const pyodide = await load({ ...options, packages: [], stderr,
                                 env: { ...(options.env || {}), ...IMPORT_TIME_ENV } });
    mark('interpreter start (after the module)', { start: t });
    pyodide.runPython(`
import time
from pyodide import _package_loader as _pl
_pl._specdec_unpack = 0.0
_real_unpack = _pl.unpack_buffer
def _timed_unpack(*a, **k):
    t = time.perf_counter()
    try:
        return _real_unpack(*a, **k)
    finally:
        _pl._specdec_unpack += time.perf_counter() - t
_pl.unpack_buffer = _timed_unpack
`);
    const unpacked = () => pyodide.runPython('_pl._specdec_unpack');
    t = now();
    await pyodide.loadPackage(packages);
    mark(`preloaded packages (${packages.length} + deps; unzip in Python ${unpacked().toFixed(2)} s)`, { start: t });
    let seen = 0;
    setInterval(() => {
      const u = unpacked();
      if (u !== seen) { mark(`unzip in Python so far ${u.toFixed(2)} s`); seen = u; }
    }, 200);
    const flush = () => { if (lines.length) { post({ name: 'importtime', t: now(), lines: lines.splice(0) }); } };
    setInterval(flush, 100);
    const wrap = (name, label) => {
      const real = pyodide[name].bind(pyodide);
      pyodide[name] = async (arg, ...rest) => {
        const t0 = now();
        try { return await real(arg, ...rest); }
        finally { flush(); mark(label(arg), { start: t0 }); }
      };
    };
    wrap('runPythonAsync', (code) => 'python: ' + code.trim().split('\n').pop().trim().slice(0, 50));
    wrap('loadPackagesFromImports', (code) => 'cell packages: ' + code.trim().split('\n')[0].slice(0, 50));
    return pyodide;
  };
})();
"""

def instrumented_copy(site: Path, out: Path = COPY, import_time: bool = False) -> Path:
    """A hard-linked copy of `site` whose kernel loads Pyodide through the timing script."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(site, out, copy_function=os.link)
    lab = out / "lab"
    pyodide = build_lab.pyodide_dir(lab)
    with build_lab.editing_kernel_settings(lab) as settings:   # replaces the hard-linked file
        folder, _, loader = settings["pyodideUrl"].rpartition("/")
        settings["pyodideUrl"] = f"{folder}/{TIMING_SCRIPT}"
    env = '{PYTHONPROFILEIMPORTTIME: "1"}' if import_time else "{}"
    (pyodide / TIMING_SCRIPT).write_text(WORKER_TIMING.replace("IMPORT_TIME_ENV", env).replace(
        "LAB_LOADER", json.dumps(loader if loader != "pyodide.js" else "")))
    return out


def lab_frame(lab: LabPage):
    return wait_until(lambda: next((f for f in lab.page.frames if "/lab/notebooks/" in f.url), None),
                      60, what="lab frame")


def timeline(lab: LabPage, worker_marks: list[dict]) -> list[tuple[float, float | None, str]]:
    """(seconds from opening the lesson, duration or None, what) sorted by time."""
    t0 = lab.navigation_start() * 1000
    frame = lab_frame(lab)
    rows = [(0.0, None, "lesson page navigation start")]
    rows.append(((frame.evaluate("performance.timeOrigin") - t0) / 1000, None, "lab frame navigation start"))
    js = frame.evaluate("""() => { const r = performance.getEntriesByType('resource')
        .filter((e) => /\\/(build|extensions)\\/.*\\.js$/.test(e.name));
        return {n: r.length, first: Math.min(...r.map((e) => e.startTime)),
                last: Math.max(...r.map((e) => e.responseEnd)), origin: performance.timeOrigin}; }""")
    rows.append(((js["origin"] + js["first"] - t0) / 1000, (js["last"] - js["first"]) / 1000,
                 f"JupyterLite JS: {js['n']} files requested … last received"))
    events = lab.events()
    marks = events[-1]["marks"] if events else {}
    for name, t in marks.items():
        rows.append(((t - t0) / 1000, None, f"page script: {name}"))
    for m in worker_marks:
        if m["name"] == "importtime":
            for line in m["lines"]:     # "import time: self [us] | cumulative | name"
                _, cumulative, name = line.split(":", 1)[1].split("|")
                if cumulative.strip().isdigit() and not name.startswith("  ") and int(cumulative) >= 50_000:   # top level, >= 50 ms
                    rows.append(((m["t"] - t0) / 1000, int(cumulative) / 1e6,
                                 f"python import {name.strip()} (ended by then)"))
            continue
        start = m.get("start")
        rows.append((((start if start else m["t"]) - t0) / 1000,
                     (m["t"] - start) / 1000 if start else None, "worker: " + m["name"]))
    iopub = lab.in_app("return win.__iopub || [];")
    first_output = next((m for m in iopub if m["type"] in ("stream", "execute_result", "display_data")), None)
    cells = [m for m in iopub if m["type"] == "execute_input"]
    for i, m in enumerate(cells[:4]):
        rows.append(((m["t"] - t0) / 1000, None, f"iopub: execute_input #{i + 1}"))
    if first_output:
        rows.append(((first_output["t"] - t0) / 1000, None, f"iopub: FIRST OUTPUT ({first_output['type']})"))
    return sorted(rows, key=lambda r: r[0])


def print_timeline(title: str, rows) -> None:
    print(f"\n{title}")
    for t, dur, what in rows:
        span = f"{t:7.2f}–{t + dur:6.2f} ({dur:5.2f} s)" if dur is not None else f"{t:7.2f}" + " " * 21
        print(f"  {span}  {what}")


TRACE_CATEGORIES = ",".join([
    "devtools.timeline", "disabled-by-default-devtools.timeline", "v8.wasm", "v8", "blink.user_timing",
    "loading", "toplevel", "disabled-by-default-v8.compile"])


def start_trace(cdp) -> None:
    cdp.send("Tracing.start", {"categories": TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})


def stop_trace(cdp, page, path: Path) -> list[dict]:
    done = {}
    cdp.on("Tracing.tracingComplete", lambda params: done.update(params))
    cdp.send("Tracing.end")
    for _ in range(1200):   # Playwright delivers events while it waits
        if done:
            break
        page.wait_for_timeout(100)
    handle, chunks = done["stream"], []
    while True:
        piece = cdp.send("IO.read", {"handle": handle})
        chunks.append(piece["data"])
        if piece.get("eof"):
            break
    cdp.send("IO.close", {"handle": handle})
    data = json.loads("".join(chunks))
    events = data["traceEvents"] if isinstance(data, dict) else data
    path.write_text(json.dumps(events))
    return events


def summarise_trace(events: list[dict]) -> None:
    """WebAssembly compile / code-cache events, and busy time per worker thread."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    wasm = [e for e in events if "wasm" in e.get("name", "").lower() or "wasm" in e.get("cat", "").lower()]
    counts: dict[str, list[float]] = {}
    for e in wasm:
        counts.setdefault(e["name"], []).append(e.get("dur", 0) / 1e6)
    print("\ntrace: WebAssembly events (count, total s):")
    for name, durs in sorted(counts.items(), key=lambda kv: -sum(kv[1]))[:25]:
        print(f"  {len(durs):5d} {sum(durs):7.2f}  {name}")
    busy: dict[str, float] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") in ("RunTask", "ThreadControllerImpl::RunTask"):
            thread = names.get((e["pid"], e["tid"]), str(e["tid"]))
            busy[thread] = busy.get(thread, 0) + e.get("dur", 0) / 1e6
    print("trace: busy seconds per thread (top-level tasks):")
    for thread, secs in sorted(busy.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {secs:7.2f}  {thread}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--import-time", action="store_true",
                        help="also list Python's slow top-level imports (PYTHONPROFILEIMPORTTIME)")
    parser.add_argument("--copy", type=Path, default=COPY, help="where the instrumented copy goes")
    parser.add_argument("--trace", type=Path, help="record a Chromium trace of the reload into this file")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    site = instrumented_copy(args.site, args.copy, args.import_time)
    firsts: dict[str, list[float]] = {"cold": [], "reload": []}
    with sync_playwright() as playwright, serve_site(site) as base:
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="specdec-profile-") as profile:
                context = playwright.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
                    viewport={"width": 1440, "height": 900})
                worker_marks: list[dict] = []

                def on_console(message):
                    if message.text.startswith("specdec-mark "):
                        worker_marks.append(json.loads(message.text.removeprefix("specdec-mark ")))
                context.on("console", on_console)
                try:
                    lab = LabPage.open(context, base)
                    for mode in ("cold", "reload"):
                        cdp = None
                        if mode == "reload":
                            worker_marks.clear()
                            if args.trace:
                                cdp = context.new_cdp_session(lab.page)
                                start_trace(cdp)
                            lab.reload()
                        lab.run_all(early=True)
                        firsts[mode].append(lab.first_output())
                        lab.wait_all_run()
                        time.sleep(0.5)
                        print_timeline(f"run {run + 1}, {mode} (seconds from opening the lesson page)",
                                       timeline(lab, worker_marks))
                        if cdp:
                            summarise_trace(stop_trace(cdp, lab.page, args.trace))
                    if lab.outside:
                        print(f"  ! {len(lab.outside)} requests left 127.0.0.1")
                finally:
                    context.close()
    for mode, values in firsts.items():
        print(f"first live output, {mode}: median {statistics.median(values):.2f} s of {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
