"""Where WebKit's extra seconds go before the lab's first live output: the same probes in Chromium
and WebKitGTK's MiniBrowser, in one run.

    python benchmarks/webkit_probe.py [--site build/site] [--page ""] [--engines Chromium,WebKit]

1. Engine basics, on a plain page of the site: the page's visibility and focus, a JS loop and a
   WebAssembly loop (is the JIT on), the same JS loop in a worker, a chain of 50 setTimeout(0)
   and the requestAnimationFrame rate in one second (are timers throttled).
2. One cold visit of a lab page (an instrumented hard-linked copy, benchmarks/lab_breakdown.py's
   timing loader in the kernel's worker, its marks sent to the lesson page over a
   BroadcastChannel): a timeline of the page script's and the worker's marks (with each
   synchronous request the worker makes: the lab's drive, a .later.zip), the lab frame's
   resources (JupyterLite's JS: first request .. last byte), and, in WebKit, the CPU seconds of
   each of MiniBrowser's processes in each phase (from /proc).
3. --ab: WebKit visits of the same page with variants of it, interleaved round by round: the first
   live output and the CPU seconds until it, of every MiniBrowser process and of Mesa's llvmpipe
   threads (WebKitGTK under Xvfb composites each frame on the CPU), medians. A variant is
   MiniBrowser's environment and/or style put into the pages as they are served (still, pagestill,
   flat: the lesson page; labstill: the lab's frame; covered, away: the frame hidden) or a second site:
   what keeps WebKit compositing frames while Python starts. MiniBrowser's environment takes
   JavaScriptCore's options: 'one:;three:JSC_numberOfWasmCompilerThreads=3' showed that on a
   2-core machine (one WebAssembly compiler thread, JSC's default of cores - 1) numpy's first
   library waits 1.5-1.9 s behind the optimising of Python's interpreter (benchmarks/README.md; since then the
   kernel's loader compiles libraries synchronously, at the head of that queue: the timeline's
   'sync: compile' lines, where 'split: compile' was the asynchronous compile's wait). Beside the
   medians, when each variant's worker got to its script, the module, Python, the packages,
   the kernel and the first output: where a variant's seconds went.
Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_breakdown import instrumented_copy  # noqa: E402
from support.lab import SITE, EngineLab, LabPage, TIMELINE, wait_until  # noqa: E402
from support.server import chromium  # noqa: E402
from support.webkit import WebKit, serve_recorded, xvfb  # noqa: E402

# the worker's marks reach the lesson page over a BroadcastChannel (WebDriver has no console)
COLLECT = """window.__marks = []; new BroadcastChannel('specdec-mark').onmessage = (e) => window.__marks.push(e.data);"""

BASICS = r"""async () => {
  const out = {visibility: document.visibilityState, focus: document.hasFocus(), hidden: document.hidden,
               ua: navigator.userAgent, cores: navigator.hardwareConcurrency};
  const jsLoop = () => { let s = 0; for (let i = 0; i < 3e7; i++) { s = (s * 31 + i) | 0; } return s; };
  let t = performance.now(); jsLoop(); out.js = (performance.now() - t) / 1000;
  t = performance.now(); const o = []; for (let i = 0; i < 3e5; i++) o.push({a: i, b: String(i)});
  JSON.parse(JSON.stringify(o)); out.objects = (performance.now() - t) / 1000;
  const bytes = new Uint8Array([0,97,115,109,1,0,0,0, 1,6,1,96,1,127,1,127, 3,2,1,0, 7,5,1,1,102,0,0,
    10,30,1,28,1,1,127, 3,64, 32,1,65,31,108,32,0,106,33,1, 32,0,65,1,107,34,0,13,0, 11, 32,1, 11]);
  const {instance} = await WebAssembly.instantiate(bytes);
  instance.exports.f(1e5);   // let the tiers kick in
  t = performance.now(); instance.exports.f(3e8); out.wasm = (performance.now() - t) / 1000;
  const src = `onmessage = () => { const t = performance.now(); let s = 0;
      for (let i = 0; i < 3e7; i++) { s = (s * 31 + i) | 0; } postMessage((performance.now() - t) / 1000); };`;
  const w = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
  out.worker_js = await new Promise((r) => { w.onmessage = (e) => r(e.data); w.postMessage(0); });
  w.terminate();
  t = performance.now();
  await new Promise((r) => { let n = 0; const step = () => (++n < 50 ? setTimeout(step, 0) : r()); step(); });
  out.timeouts50 = (performance.now() - t) / 1000;
  t = performance.now();
  await new Promise((r) => { const c = new MessageChannel(); let n = 0;
    c.port1.onmessage = () => (++n < 1000 ? c.port2.postMessage(0) : r()); c.port2.postMessage(0); });
  out.messages1000 = (performance.now() - t) / 1000;
  out.raf = await new Promise((r) => { let n = 0; const end = performance.now() + 1000;
    const f = () => { n++; if (performance.now() < end) requestAnimationFrame(f); else r(n); };
    requestAnimationFrame(f); setTimeout(() => r(n), 3000); });
  return out;
}"""

# appended to the timing loader: WebAssembly.instantiate(bytes, imports) timed as its two halves,
# compile of the bytes and instantiation of the module (linking its imports, running its start)
SPLIT_INSTANTIATE = """
(function () {
  // finalization callbacks that run while Python has released the GIL (the NoGilError's cause):
  // counted, the first few with the JS stack they run on
  const gilChannel = new BroadcastChannel('specdec-mark');
  const Real = self.FinalizationRegistry;
  let seen = 0;
  self.FinalizationRegistry = class extends Real {
    constructor(callback) {
      super((value) => {
        const m = self.__probeModule;
        if (m && !m._PyGILState_Check() && ++seen <= 3) {
          gilChannel.postMessage({name: `finalizer without the GIL #${seen}: ` + new Error().stack.split('\\n').slice(1, 12).join(' | '),
                                  t: performance.timeOrigin + performance.now()});
        }
        return callback(value);
      });
    }
  };
})();
(function () {
  const now = () => performance.timeOrigin + performance.now();
  const channel = new BroadcastChannel('specdec-mark');
  // and a synchronous compile (new WebAssembly.Module), timed
  const RealModule = WebAssembly.Module;
  const SyncModule = function (bytes) {
    const t0 = now();
    const module = new RealModule(bytes);
    channel.postMessage({name: `sync: compile ${bytes.byteLength} B`, start: t0, t: now()});
    return module;
  };
  SyncModule.prototype = RealModule.prototype;
  for (const key of ['imports', 'exports', 'customSections']) SyncModule[key] = RealModule[key];
  WebAssembly.Module = SyncModule;
  const realInstantiate = WebAssembly.instantiate;
  const realCompile = WebAssembly.compile.bind(WebAssembly);
  WebAssembly.instantiate = async function (source, imports) {
    if (source instanceof WebAssembly.Module) return realInstantiate.call(WebAssembly, source, imports);
    const t0 = now();
    const module = await realCompile(source);
    const t1 = now();
    const n = WebAssembly.Module.imports(module).length;
    const instance = await realInstantiate.call(WebAssembly, module, imports);
    const t2 = now();
    channel.postMessage({name: `split: compile ${source.byteLength} B`, start: t0, t: t1});
    channel.postMessage({name: `split: instantiate (${n} imports)`, start: t1, t: t2});
    return {module, instance};
  };
})();
(function () {
  // every synchronous request of the worker (the lab's drive through the service worker, a
  // .later.zip), timed: Python waits for each one
  const channel = new BroadcastChannel('specdec-mark');
  const now = () => performance.timeOrigin + performance.now();
  const open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
  let count = 0, total = 0;
  XMLHttpRequest.prototype.open = function (method, url, async) {
    this.__probe = { url: String(url).split('/').pop(), sync: async === false };
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    const t0 = now();
    try { return send.apply(this, arguments); } finally {
      if (this.__probe && this.__probe.sync) {
        total += now() - t0;
        channel.postMessage({name: `sync request #${++count} ${this.__probe.url} (${(total / 1000).toFixed(2)} s so far)`,
                             start: t0, t: now()});
      }
    }
  };
})();
"""

def style(css: str) -> str:
    """An init script that adds `css` to the page (lesson page or lab frame) as it is parsed."""
    return ("(() => { const s = document.createElement('style'); s.textContent = %s;"
            " (document.head || document.documentElement).append(s); })();" % json.dumps(css))


# A/B variants (--ab): what may keep WebKit compositing frames while Python starts
STILL = style(".sd-lab__meter-fill { animation: none !important; }")       # the lesson's meter
LAB_STILL = style("*, *::before, *::after { animation: none !important; transition: none !important; }")
COVERED = style(".sd-lab__body:has(.sd-lab__preview) > .sd-lab__frame { visibility: hidden; }")
AWAY = style(".sd-lab__frame { visibility: hidden !important; }")        # (a bound: never shown)
PAGE_STILL = LAB_STILL                                                    # every animation of the lesson page
# no scroll container and no mask in the lesson (each inline formula, display formula and wide table is one)
FLAT = style(".md-typeset math, .md-typeset .sd-math, .md-typeset__scrollwrap, .md-typeset [data-sd-scroll] {"
             " overflow: visible !important; -webkit-mask-image: none !important; mask-image: none !important; }")
LESSON_VARIANTS = {"still": STILL, "covered": COVERED, "away": AWAY, "pagestill": PAGE_STILL, "flat": FLAT}
# WebKit has no requestIdleCallback; JupyterLab's stand-in runs an idle callback 1 ms later, so the
# notebook's cells are laid out one after another while Python starts. This one waits the timeout
# the caller gave (JupyterLab's cell rendering: 3 s)
IDLE_AT_TIMEOUT = """if (!window.requestIdleCallback) {
  window.requestIdleCallback = (f, o) => setTimeout(() => f({didTimeout: true, timeRemaining: () => 0}), (o && o.timeout) || 1);
  window.cancelIdleCallback = (id) => clearTimeout(id); }"""
LAB_VARIANTS = {"labstill": LAB_STILL, "idletimeout": IDLE_AT_TIMEOUT}

FRAME_RESOURCES = """() => { const f = document.querySelector('.sd-lab__frame'); const w = f && f.contentWindow;
  if (!w) return null; const t0 = performance.timeOrigin;
  return {origin: w.performance.timeOrigin - t0, entries: w.performance.getEntriesByType('resource').map((e) =>
    ({name: e.name.split('/').slice(-2).join('/'), start: e.startTime, end: e.responseEnd,
      fetch: e.responseEnd - e.startTime, size: e.transferSize || e.encodedBodySize || 0})),
    nav: w.performance.getEntriesByType('navigation').map((e) => ({dcl: e.domContentLoadedEventEnd, load: e.loadEventEnd}))}; }"""


def descendants(pid: int) -> list[int]:
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _cpu_of_stat(path: str) -> tuple[str, float] | None:
    """(name, user + system CPU s) from a /proc stat file; None once the process or thread is gone."""
    try:
        stat = Path(path).read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat.rsplit(")", 1)[1].split()
    return name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> tuple[str, float] | None:
    return _cpu_of_stat(f"/proc/{pid}/stat")


def cpu_of_task(pid: int, tid: int) -> tuple[str, float] | None:
    """(thread name, CPU s) of one thread; a thread that ended is gone from /proc, so a sum over
    names undercounts threads that came and went (each sample keeps the live ones)."""
    return _cpu_of_stat(f"/proc/{pid}/task/{tid}/stat")


class CpuSampler:
    """CPU seconds of each descendant of `root` (by process name), sampled every 0.25 s."""

    def __init__(self, root: int):
        self.root, self.samples, self._stop = root, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop.is_set():
            now, per = time.time(), {}
            for pid in descendants(self.root):
                got = cpu_of(pid)
                if got:
                    per[f"{got[0]}[{pid}]"] = got[1]
                if got and got[0].startswith("WebKitWebProces"):
                    threads = {}
                    for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
                        t = cpu_of_task(pid, int(tid))
                        if t:
                            threads[t[0]] = threads.get(t[0], 0.0) + t[1]
                    for name, secs in threads.items():
                        per[f"  thread {name}"] = per.get(f"  thread {name}", 0.0) + secs
            self.samples.append((now, per))
            self._stop.wait(0.25)

    def stop(self):
        self._stop.set()
        self.thread.join(5)

    def between(self, t0: float, t1: float) -> dict[str, float]:
        def at(t):
            return min(self.samples, key=lambda s: abs(s[0] - t))[1]
        a, b = at(t0), at(t1)
        return {k: b[k] - a.get(k, 0.0) for k in b if b[k] - a.get(k, 0.0) > 0.05}


def visit(lab, engine: str, sampler: CpuSampler | None, quiet: bool = False):
    wall0 = time.time()
    lab.run_all(early=True)
    first = lab.first_output(timeout=300)
    if not quiet:            # (the A/B rounds compare the first output only)
        lab.wait_all_run(timeout=600)
    time.sleep(0.5)
    t0 = lab.navigation_start()
    events = lab.events()
    marks = events[-1]["marks"] if events else {}
    worker = lab.page.evaluate("() => window.__marks || []")
    res = lab.page.evaluate(FRAME_RESOURCES)
    rows = [(0.0, None, "lesson navigation start")]
    rows += [(t / 1000 - t0, None, f"page script: {k}") for k, t in marks.items()]
    for m in worker:
        if m.get("name") == "importtime":
            continue
        s = m.get("start")
        rows.append((((s or m["t"]) / 1000) - t0, (m["t"] - s) / 1000 if s else None, "worker: " + m["name"]))
    if res:
        rows.append((res["origin"] / 1000, None, "lab frame navigation start"))
        js = [e for e in res["entries"] if e["name"].endswith(".js")]
        if js:
            a, b = min(e["start"] for e in js), max(e["end"] for e in js)
            rows.append(((res["origin"] + a) / 1000, (b - a) / 1000, f"lab frame: {len(js)} JS files, first request .. last byte"))
        for n in res["nav"]:
            rows.append(((res["origin"] + n["dcl"]) / 1000, None, "lab frame DOMContentLoaded"))
            rows.append(((res["origin"] + n["load"]) / 1000, None, "lab frame load"))
    rows.append((first, None, "FIRST OUTPUT"))
    rows.sort(key=lambda r: r[0])
    if quiet:
        summary = {"output": first, "all": None}
        for t, d, what in rows:
            for key in ("worker: timing script", "kernelReady", "emscripten module ready", "preloaded packages",
                        "interpreter start"):
                if key in what:
                    summary[key.split(": ")[-1].split(" (")[0]] = round(t + (d or 0), 2)
        if sampler:
            cpu = sampler.between(t0, t0 + first)
            summary["cpu_total"] = round(sum(v for k, v in cpu.items() if not k.startswith("  thread")), 1)
            summary["llvmpipe"] = round(sum(v for k, v in cpu.items() if k.startswith("  thread llvmpipe")), 1)
            summary["cpu"] = {k.strip().replace("thread ", ""): round(v, 1) for k, v in cpu.items() if v >= 0.3}
        return summary
    print(f"\n{engine}: timeline (s from opening the lesson page)")
    for t, d, what in rows:
        print(f"  {t:7.2f}" + (f" +{d:6.2f}" if d is not None else " " * 8) + f"  {what}")
    if res:
        slow = sorted(res["entries"], key=lambda e: -e["fetch"])[:8]
        print(f"  slowest of {len(res['entries'])} frame resources (start, fetch s, bytes):")
        for e in slow:
            print(f"    {(res['origin'] + e['start']) / 1000:6.2f} {e['fetch'] / 1000:6.2f} {e['size']:>9} {e['name']}")
    if sampler:
        bounds = [("open..worker", wall0 - 1, None), ]
        start = next((m["t"] / 1000 for m in worker if m["name"].startswith("worker: timing")), None)
        ready = marks.get("kernelReady") or marks.get("ready")
        phases = [("lesson open .. worker script", t0, start), ("worker script .. first output", start, t0 + first)]
        for name, a, b in phases:
            if a and b:
                cpu = sampler.between(a, b)
                print(f"  CPU s in '{name}' ({b - a:.1f} s wall):")
                for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]):
                    print(f"    {v:6.1f}  {k}")
        del bounds, ready
    return first


def probe_copy(source: Path, out: Path) -> Path:
    """benchmarks/lab_breakdown.py's instrumented copy, its marks also sent over a BroadcastChannel."""
    site = instrumented_copy(source, out)
    timing = next(site.glob("lab/static/pyodide-*/specdec-timing.js"))
    text = timing.read_text()
    timing.unlink()      # hard link: write a new file
    text = text.replace(
        "const post = (data) => console.debug('specdec-mark ' + JSON.stringify(data));",
        "const channel = new BroadcastChannel('specdec-mark');\n"
        "  const post = (data) => { console.debug('specdec-mark ' + JSON.stringify(data)); channel.postMessage(data); };")
    text = text.replace("mark('interpreter start (after the module)', { start: t });",
                        "mark('interpreter start (after the module)', { start: t }); self.__probeModule = pyodide._module;")
    timing.write_text(text + SPLIT_INSTANTIATE)
    return site


# the worker's steps --ab prints for each variant (the visit's marks), and their column labels
MILESTONES = {"timing script": "worker", "emscripten module ready": "module", "interpreter start": "python",
              "preloaded packages": "packages", "kernelReady": "kernel", "output": "output"}


def ab(args, servers, tmp: Path) -> int:
    variants = []
    for item in args.ab.split(";"):
        name, _, spec = item.partition(":")
        words = [w for w in spec.split(",") if w]
        env = dict(e.split("=", 1) for e in words if "=" in e)
        unknown = [w for w in words if "=" not in w and w not in {*LESSON_VARIANTS, *LAB_VARIANTS, "site-b"}]
        if unknown:
            raise SystemExit(f"--ab {name}: unknown {unknown}; known: {sorted({*LESSON_VARIANTS, *LAB_VARIANTS})}")
        variants.append((name, env, [LESSON_VARIANTS[w] for w in words if w in LESSON_VARIANTS],
                         [LAB_VARIANTS[w] for w in words if w in LAB_VARIANTS], "site-b" in words))
    results = {name: [] for name, *_ in variants}
    with xvfb() as display:
        for r in range(args.rounds):
            for name, env, lesson_init, lab_init, other in variants:
                base, server = servers["b" if other else ""]
                server.lab_init[:] = lab_init
                saved = dict(os.environ)
                os.environ.update(env)
                try:
                    browser = WebKit(display, tmp / "driver.log")
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
                browser.server = server
                sampler = CpuSampler(browser.process.pid)
                try:
                    shown = "localStorage.removeItem('specdec-lab:layout');"
                    lab = EngineLab(browser.open(base + args.page, init=[shown, TIMELINE, COLLECT] + lesson_init))
                    got = visit(lab, "WebKit", sampler, quiet=True)
                    got["errors"] = lab.errors[:3]
                finally:
                    sampler.stop()
                    browser.close()
                results[name].append(got)
                print(f"round {r + 1} {name:10}", json.dumps(got), flush=True)
    print(f"\nmedians of {args.rounds} interleaved visits (first output s; CPU s until it: every "
          "MiniBrowser process, and llvmpipe's threads)")
    print(f"  {'variant':10} {'output':>7} {'ratio':>6} {'cpu':>6} {'llvmpipe':>9}   first outputs")
    first_median = None
    for name, got in results.items():
        med = {k: statistics.median(g[k] for g in got) for k in ("output", "cpu_total", "llvmpipe")}
        first_median = first_median or med["output"]
        outs = ", ".join(f"{g['output']:.1f}" for g in got)
        print(f"  {name:10} {med['output']:7.2f} {med['output'] / first_median:6.2f} {med['cpu_total']:6.1f}"
              f" {med['llvmpipe']:9.1f}   {outs}")
    print("\nthe same visits, median seconds from opening the page until the worker's script ran, then until"
          " each step was done (- where a variant's visits lack the mark):")
    print("  " + f"{'variant':10}" + "".join(f"{label:>10}" for label in MILESTONES.values()))
    for name, got in results.items():
        steps = [statistics.median(g[m] for g in got) if all(g.get(m) is not None for g in got) else None
                 for m in MILESTONES]
        print("  " + f"{name:10}" + "".join(f"{t:10.2f}" if t is not None else f"{'-':>10}" for t in steps))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--page", default="")
    parser.add_argument("--engines", default="Chromium,WebKit")
    parser.add_argument("--no-lab", action="store_true")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for MiniBrowser (WebKit)")
    parser.add_argument("--still", action="store_true", help="the lesson page's loading meter does not move")
    parser.add_argument("--ab", help="WebKit only: variants to interleave, ';'-separated, each "
                        "'name:' and a ','-separated list of KEY=VAL (MiniBrowser's environment) and of "
                        "still (the lesson's meter does not move), pagestill (no animation or transition "
                        "in the lesson page), flat (no formula, table or wide block of the lesson is a scroll container "
                        "or masked), labstill (none in the lab's frame), covered (the lab's frame "
                        "hidden while the notebook's preview covers it), away (the frame never shown), "
                        "site-b; e.g. 'base:;still:still;labstill:still,labstill'")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--site-b", type=Path, help="a second built site, for variants marked site-b")
    args = parser.parse_args(argv)
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory(prefix="specdec-probe-") as tmp:
        site = probe_copy(args.site, Path(tmp) / "site")
        if args.site_b:
            site_b = probe_copy(args.site_b, Path(tmp) / "site-b")
        with serve_recorded(site) as (base, server):
            if args.ab:
                if not args.site_b:
                    return ab(args, {"": (base, server)}, Path(tmp))
                with serve_recorded(site_b) as (base_b, server_b):
                    return ab(args, {"": (base, server), "b": (base_b, server_b)}, Path(tmp))
            if "Chromium" in engines:
                with chromium() as chrome:
                    page = chrome.new_page()
                    page.goto(base + "knowledge-card/")
                    print("Chromium basics:", json.dumps(page.evaluate(BASICS)))
                    page.close()
                    if not args.no_lab:
                        context = chrome.new_context(viewport={"width": 1440, "height": 900})
                        context.add_init_script(COLLECT)
                        lab = LabPage.open(context, base + args.page)
                        try:
                            visit(lab, "Chromium", None)
                        finally:
                            context.close()
            if "WebKit" in engines:
                with xvfb() as display:
                    browser = WebKit(display, Path(tmp) / "driver.log")
                    browser.server = server
                    try:
                        print("WebKit basics:", json.dumps(browser.open(base + "knowledge-card/").evaluate(BASICS, timeout=120)))
                    finally:
                        browser.close()
                    if not args.no_lab:
                        saved = dict(os.environ)
                        os.environ.update(dict(e.split("=", 1) for e in args.env))
                        try:
                            browser = WebKit(display, Path(tmp) / "driver.log")
                        finally:
                            os.environ.clear()
                            os.environ.update(saved)
                        browser.server = server
                        sampler = CpuSampler(browser.process.pid)
                        try:
                            shown = "localStorage.removeItem('specdec-lab:layout');"
                            lab = EngineLab(browser.open(base + args.page, init=[shown, TIMELINE, COLLECT] + ([STILL] if args.still else [])))
                            visit(lab, "WebKit", sampler)
                        finally:
                            sampler.stop()
                            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
