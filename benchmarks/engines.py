"""Each lab page's first live output and Run all in Chromium, Firefox and WebKit, in one run.

    python benchmarks/engines.py [--runs 2] [--pages lesson1,lesson2,lossless,your-gpu] [--variant NAME=SITE ...]

One build of the whole site, served by site/serve.py's server (what `make serve` runs: gzip, cache
headers; tests/support/webkit.py's serve_recorded, which also puts the WebKit driver's small recorder
in each HTML page). Per visit a browser with an empty cache: headless Debian Chromium (a new
Playwright context), firefox-esr (a new browser context, puppeteer-core), WebKitGTK's MiniBrowser
(a new WebDriver session under Xvfb). Run all is pressed at once (it waits for Python). Seconds from
opening the page until: the notebook is shown (JupyterLite's JS), the kernel's worker starts, Python
is ready, the first live output, every cell has run. Runs interleaved; medians; ratios against
Chromium. Beside the seconds, the CPU seconds the browsers (every process this script started:
the three browsers, their drivers, Xvfb) spent from opening the page until the first output, read
from /proc: on a shared machine wall time follows the others' load, CPU time much less. For WebKit
also the part of it in Mesa's llvmpipe threads: under Xvfb, with no GPU, WebKitGTK composites
every frame in software on the CPU (Safari composites on the GPU), so "WebKit CPU - llvmpipe" is the
nearer figure for a learner's device; and the part in its WebAssembly compiler threads (one on a
2-core machine; Python's start and every library it loads wait for it). Then, where the time goes:
the same page's WebAssembly.compile of pyodide.asm.wasm (compileStreaming from the server, and
compile of the bytes already fetched) in each engine. A WebKit visit whose page crashed or hung
(JavaScriptCore's worker thread segfaulted twice in 2026-12-03's runs, during Run all) is counted,
said and left out of the medians; the run goes on. Before the runs, each engine visits the first
page once, not counted (the first visit of a run was always the slowest). Prints, asserts
nothing. The machine may be shared: compare within one run.

--variant NAME=SITE (repeatable) measures another built site folder beside it, as it is (no
instrumentation: webkit_probe.py's timing loader itself loads pyodide.js and pyodide.asm.js, so it
cannot see a change in how they are loaded), each engine's visits of the builds interleaved, the
order turned around every other run; its rows say NAME, its ratios are against Chromium's on the
same build.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from support.firefox import firefox  # noqa: E402
from support.lab import EngineLab, LabPage  # noqa: E402
from support.server import chromium  # noqa: E402
from support.site import build_site  # noqa: E402
from support.webkit import WebKit, jsc_segfaults, serve_recorded, xvfb  # noqa: E402
from webkit_probe import CpuSampler  # noqa: E402

PAGES = {"lesson1": "", "lesson2": "draft-trees/", "lossless": "lossless-lab/", "your-gpu": "your-gpu/"}
KEYS = ("shown", "start", "kernel", "output", "all")
CPU_KEYS = ("cpu", "llvmpipe", "wasmjit")
# WebKit's WebAssembly compiler threads, "Wasm Worklist Helper Thread" (Linux keeps a thread name's
# last 15 characters); JavaScriptCore starts cores - 1 of them (the count follows
# JSC_numberOfWasmCompilerThreads), one on a 2-core machine
WASM_COMPILER = "  thread t Helper Thread"

# in a page of the site: how long the engine takes to compile Pyodide's WebAssembly
COMPILE = """async (url) => {
  const t0 = performance.now();
  await WebAssembly.compileStreaming(fetch(url, {cache: 'no-store'}));
  const t1 = performance.now();
  const bytes = await (await fetch(url, {cache: 'no-store'})).arrayBuffer();
  const t2 = performance.now();
  await WebAssembly.compile(bytes);
  const t3 = performance.now();
  return {streaming: (t1 - t0) / 1000, fetch: (t2 - t1) / 1000, compile: (t3 - t2) / 1000,
          mb: bytes.byteLength / 1e6};
}"""


def cpu_until(sampler: CpuSampler, t0: float, t1: float) -> dict:
    """CPU seconds of every process the sampler sees between t0 and t1, of llvmpipe's threads and
    of WebKit's WebAssembly compiler threads."""
    got = sampler.between(t0, t1)
    return {"cpu": sum(v for k, v in got.items() if not k.startswith("  thread")),
            "llvmpipe": sum(v for k, v in got.items() if k.startswith("  thread llvmpipe")),
            "wasmjit": got.get(WASM_COMPILER, 0.0)}


def label(engine: str, build: str) -> str:
    """A table row's engine column: 'WebKit', or 'WebKit old' for a --variant named old."""
    return f"{(engine + ' ' + build).strip():14}"


def visit(lab, sampler: CpuSampler) -> dict:
    lab.run_all(early=True)
    out = {"kernel": lab.wait_for("kernelReady", timeout=300), "output": lab.first_output(timeout=300)}
    opened = lab.navigation_start()
    out.update(cpu_until(sampler, opened, opened + out["output"]))
    out["shown"] = lab.wait_for("notebookShown", timeout=10)
    out["start"] = lab.wait_for("stage", "start", timeout=10)
    lab.wait_all_run(timeout=600)
    out["all"] = lab.in_app("return Date.now();") / 1000 - lab.navigation_start()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--pages", default=",".join(PAGES))
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=SITE_FOLDER: another built site, measured alongside as it is")
    args = parser.parse_args(argv)
    pages = args.pages.split(",")
    engines = ("Chromium", "Firefox", "WebKit")
    variants = [v.split("=", 1) for v in args.variant]
    for name, folder in variants:
        if not name or not (Path(folder) / "lab" / "jupyter-lite.json").is_file():
            raise SystemExit(f"--variant {name}={folder}: not NAME=a built site folder (no lab/jupyter-lite.json)")
    builds = [""] + [name for name, _ in variants]
    seen = {(e, p, b): [] for p in pages for e in engines for b in builds}
    lost = []          # WebKit visits whose page crashed or hung (WebDriver lost the session)
    compiled = {}
    with tempfile.TemporaryDirectory(prefix="specdec-engines-") as tmp:
        (Path(tmp) / "site").mkdir()
        with serve_recorded(Path(tmp) / "site") as (base, server), contextlib.ExitStack() as stack:
            site = build_site(Path(tmp), site_url=base)
            served = {"": (base, server)}
            for name, folder in variants:
                served[name] = stack.enter_context(serve_recorded(Path(folder)))
            wasm = base + str(next(site.glob("lab/static/pyodide-*/pyodide.asm.wasm")).relative_to(site))
            with chromium() as chrome, firefox() as fox, xvfb() as display:
                log = Path(tmp) / "webkit-driver.log"
                sampler = CpuSampler(os.getpid())      # every process started here, and their threads

                def one(engine, path, build):
                    base, server = served[build]
                    if engine == "Chromium":
                        lab = LabPage.open(chrome, base + path)
                        try:
                            return visit(lab, sampler), lab
                        finally:
                            lab.context.close()
                    if engine == "Firefox":
                        lab = EngineLab.open(fox, base + path)
                        try:
                            return visit(lab, sampler), lab
                        finally:
                            lab.close()
                    browser = WebKit(display, log)       # a new session: an empty cache
                    browser.server = server
                    try:
                        lab = EngineLab.open(browser, base + path)
                        return visit(lab, sampler), lab
                    finally:
                        browser.close()

                # one visit per engine and build before the runs, not counted: in each of
                # 2026-12-03's seven runs the run's first visit (Chromium's, lesson 1) was that
                # page's slowest in the run (notebook shown 3.9-7.1 s against 2.6-4.8 s in later
                # runs; CPU 13-21 s against 9-14); with --runs 2 the median is the mean of two
                for engine, build in [(e, b) for e in engines for b in builds]:
                    try:
                        result, _ = one(engine, PAGES[pages[0]], build)
                        print(f"warm-up: {pages[0]:9} {label(engine, build)} output {result['output']:5.1f}"
                              " (not counted)", file=sys.stderr)
                    except RuntimeError as error:
                        if engine != "WebKit":
                            raise
                        print(f"warm-up: {pages[0]} WebKit {build}: {error}", file=sys.stderr)
                crashes_before = len(jsc_segfaults())
                for run in range(args.runs):
                    for page in pages:
                        order = builds if run % 2 == 0 else builds[::-1]
                        for engine, build in [(e, b) for e in engines for b in order]:
                            try:
                                result, _ = one(engine, PAGES[page], build)
                            except RuntimeError as error:     # WebDriver's answer: the page is gone
                                if engine != "WebKit":
                                    raise
                                said = str(error).strip().splitlines()[-1][-160:]
                                lost.append(f"run {run + 1}: {page} WebKit {build}: {said}")
                                print(lost[-1], file=sys.stderr)
                                continue
                            seen[(engine, page, build)].append(result)
                            print(f"run {run + 1}: {page:9} {label(engine, build)} "
                                  + "  ".join(f"{k} {result[k]:5.1f}" for k in KEYS + CPU_KEYS), file=sys.stderr)
                # where the time goes: compiling Pyodide's 8 MB of WebAssembly, per engine
                page = chrome.new_page()
                page.goto(base + "knowledge-card/")
                compiled["Chromium"] = page.evaluate(COMPILE, wasm)
                page.close()
                fpage = fox.open(base + "knowledge-card/")
                compiled["Firefox"] = fpage.evaluate(COMPILE, wasm, timeout=120)
                fpage.close()
                browser = WebKit(display, log)
                browser.server = server
                try:
                    compiled["WebKit"] = browser.open(base + "knowledge-card/").evaluate(COMPILE, wasm, timeout=120)
                finally:
                    browser.close()
                sampler.stop()
                crashes_after = len(jsc_segfaults())
    print(f"\nseconds from opening the page (median of {args.runs}; Run all pressed at once; "
          "ratio: first output / Chromium's)")
    rows = [(page, engine, build) for page in pages for build in builds for engine in engines]
    print(f"{'page':10}{'engine':14}" + "".join(f"{k:>9}" for k in KEYS) + f"{'ratio':>8}{'all ratio':>10}")
    for page, engine, build in rows:
        got, chromium_got = seen[(engine, page, build)], seen[("Chromium", page, build)]
        if not got:
            print(f"{page:10}{label(engine, build)}  every visit lost")
            continue
        m = {k: statistics.median(r[k] for r in got) for k in KEYS}
        base_output = statistics.median(r["output"] for r in chromium_got)
        base_all = statistics.median(r["all"] for r in chromium_got)
        print(f"{page:10}{label(engine, build)}" + "".join(f"{m[k]:9.1f}" for k in KEYS)
              + f"{m['output'] / base_output:8.2f}{m['all'] / base_all:10.2f}")
    print(f"\nCPU seconds of the browsers from opening the page until the first output (median of {args.runs}; "
          "WebKit: also without Mesa's llvmpipe threads, its software compositing under Xvfb; wasm-jit: "
          "the part of WebKit's in its WebAssembly compiler threads, one on a 2-core machine, which "
          "Python and each library it loads wait for)")
    print(f"{'page':10}{'engine':14}{'cpu':>8}{'ratio':>8}{'llvmpipe':>10}{'cpu-llvm':>10}{'ratio':>8}{'wasm-jit':>10}")
    for page, engine, build in rows:
        got = seen[(engine, page, build)]
        if not got:
            continue
        base_cpu = statistics.median(r["cpu"] for r in seen[("Chromium", page, build)])
        cpu = statistics.median(r["cpu"] for r in got)
        llvm = statistics.median(r["llvmpipe"] for r in got)
        rest = statistics.median(r["cpu"] - r["llvmpipe"] for r in got)
        jit = statistics.median(r["wasmjit"] for r in got)
        print(f"{page:10}{label(engine, build)}{cpu:8.1f}{cpu / base_cpu:8.2f}{llvm:10.1f}{rest:10.1f}{rest / base_cpu:8.2f}"
              + (f"{jit:10.1f}" if engine == "WebKit" else f"{'-':>10}"))
    if lost:
        print(f"\nWebKit visits lost ({len(lost)} of {args.runs * len(pages) * len(builds)}; left out of the medians above; "
              f"JavaScriptCore segfaults in the kernel's log during the run: {crashes_after - crashes_before}):")
        for line in lost:
            print("  " + line)
    print("\npyodide.asm.wasm in each engine (s): compileStreaming from the server | fetch | compile of the bytes")
    for engine, c in compiled.items():
        print(f"{engine:10}{c['streaming']:8.2f}{c['fetch']:8.2f}{c['compile']:8.2f}   ({c['mb']:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
