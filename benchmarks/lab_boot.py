"""Does the 實驗場's background start stall the lesson? Desktop Chromium (1440 wide), lesson 1 cold.
    python benchmarks/lab_boot.py [--runs 3] [--page ""] [--variant before=DIR --variant after=build/site]

The lab is a same-origin iframe: Chromium runs JupyterLab's bundles on the lesson's own thread. From
opening the lesson until the lab's first live output (Run all pressed as soon as JupyterLite's app
exists, as benchmarks/page_load.py does), this presses ↓ / ↑ in the lesson every --every seconds
(a learner scrolling with the keyboard; a keydown is an input the lesson's thread must answer) and
records, on the lesson's thread:
  - the long tasks (Long Tasks API, buffered, in the lesson page: tasks of the lesson and of every
    same-origin frame on its thread), the longest and the total blocking time (sum of each task's
    time over 50 ms) up to the first output;
  - every keydown's input delay (from the key's timestamp to its handler) and how long the browser
    took to acknowledge it (Playwright's round trip: the key reached the page);
  - the longest gap between two animation frames of the lesson (a frame gap is a stutter);
  - the seconds to the first live output.
Per build the medians of --runs visits, interleaved (before, after, before, ...) so that the
machine's load falls on all alike; every visit is a fresh browser context (cold cache). Prints
figures, asserts nothing; every wait is bounded and says what it waited for.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.lab import SITE, serve_site, wait_until  # noqa: E402
from support.server import chromium  # noqa: E402

# in the lesson page: long tasks, keydown delays, frame gaps
# and in the lab's frame: Run all as soon as JupyterLite's app exists, and the time of the first
# live output posted to the lesson (a message crosses to a frame in another process too)
WATCH = """(() => {
  if (window.top !== window) {
    if (!location.pathname.includes('/lab/notebooks/')) return;
    const poll = setInterval(() => {
      const app = window.jupyterapp;
      const nb = app && app.shell.currentWidget && app.shell.currentWidget.sessionContext ? app.shell.currentWidget : null;
      if (app && !window.__ranAll) { app.commands.execute('notebook:run-all-cells'); window.__ranAll = true; }
      if (!nb || window.__iopub) return;
      window.__iopub = true;
      clearInterval(poll);
      nb.sessionContext.iopubMessage.connect((_, msg) => {
        if (window.__iopub === 'sent' || !['stream', 'execute_result', 'display_data', 'error'].includes(msg.header.msg_type)) return;
        window.__iopub = 'sent';
        parent.postMessage({labBootFirstOutput: Date.now()}, '*');
      });
    }, 20);
    return;
  }
  const boot = window.__boot = {tasks: [], keys: [], gaps: []};
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) boot.tasks.push({start: e.startTime, duration: e.duration, name: e.name});
    }).observe({type: 'longtask', buffered: true});
  } catch (e) { boot.noLongTasks = String(e); }
  addEventListener('keydown', (e) => { boot.keys.push({at: e.timeStamp, delay: performance.now() - e.timeStamp}); }, true);
  let last = null;
  const tick = (t) => { if (last !== null) boot.gaps.push({at: last, gap: t - last}); last = t; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  addEventListener('message', (e) => { if (e.data && e.data.labBootFirstOutput) boot.first = e.data.labBootFirstOutput; });
})();"""

def visit(browser, url: str, every: float, bound: float) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        context.add_init_script(WATCH)
        page = context.new_page()
        page.goto(url, wait_until="commit")
        start = page.evaluate("() => performance.timeOrigin")
        acks, first = [], None
        end = time.time() + bound
        down = True
        while first is None:
            if time.time() > end:
                raise TimeoutError(f"first live output within {bound:.0f} s")
            t0 = time.perf_counter()
            page.keyboard.press("ArrowDown" if down else "ArrowUp")
            acks.append(1000 * (time.perf_counter() - t0))
            down = not down
            at = page.evaluate("() => window.__boot.first || 0")
            if at:
                first = (at - start) / 1000
            time.sleep(every)
        boot = page.evaluate("() => window.__boot")
    finally:
        context.close()
    until = first * 1000
    tasks = [t for t in boot["tasks"] if t["start"] < until]
    keys = [k["delay"] for k in boot["keys"] if k["at"] < until]
    gaps = [g["gap"] for g in boot["gaps"] if g["at"] < until]
    return {"first": first, "longest": max((t["duration"] for t in tasks), default=0.0),
            "long": len(tasks), "tbt": sum(max(0.0, t["duration"] - 50) for t in tasks),
            "key_median": statistics.median(keys) if keys else float("nan"),
            "key_max": max(keys, default=float("nan")), "keys": len(keys),
            "ack_max": max(acks, default=float("nan")), "gap_max": max(gaps, default=float("nan")),
            "frames": {t["name"] for t in tasks}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--page", default="", help="a lab page under the site ('' is lesson 1)")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--isolated", action="append", default=[], metavar="NAME=DIR",
                        help="a build served with the lab's pages isolated (Document-Isolation-Policy: "
                             "Chromium runs the lab in a process of its own); the lesson's scripts cannot "
                             "reach into its frame then, so the lab's download button and tests differ")
    parser.add_argument("--every", type=float, default=0.1, help="seconds between key presses")
    parser.add_argument("--bound", type=float, default=180, help="seconds a visit may take")
    args = parser.parse_args()
    variants = dict(v.split("=", 1) for v in args.variant + args.isolated) or {"": str(args.site)}
    isolated = {v.split("=", 1)[0] for v in args.isolated}
    for folder in variants.values():
        if not (Path(folder) / "index.html").exists():
            sys.exit(f"no site in {folder}: python site/build.py")
    results = {name: [] for name in variants}
    failures = {name: [] for name in variants}
    print(f"load average at start: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    with contextlib.ExitStack() as stack, chromium() as browser:
        urls = {name: stack.enter_context(serve_site(Path(folder), lab_isolation=name in isolated)) for name, folder in variants.items()}
        names = list(variants)
        for run in range(args.runs + 1):                # the first round warms the machine, not counted
            order = names if run % 2 == 0 else names[::-1]
            for name in order:
                try:
                    r = visit(browser, urls[name] + args.page, args.every, args.bound)
                except Exception as error:
                    failures[name].append(str(error)[:200])
                    print(f"{name or 'site'} run {run}: failed: {str(error)[:200]}", file=sys.stderr)
                    continue
                print(f"{name or 'site'} run {run}{' (warm-up)' if run == 0 else ''}: first output {r['first']:.2f} s, "
                      f"longest task {r['longest']:.0f} ms, {r['long']} tasks > 50 ms, TBT {r['tbt']:.0f} ms, "
                      f"key delay median {r['key_median']:.0f} / max {r['key_max']:.0f} ms ({r['keys']} keys), "
                      f"frame gap max {r['gap_max']:.0f} ms; culprits {sorted(r['frames'])}", file=sys.stderr)
                if run:
                    results[name].append(r)
    print(f"load average at end: {os.getloadavg()[0]:.1f}", file=sys.stderr)

    def med(rows, key):
        return statistics.median([r[key] for r in rows]) if rows else float("nan")
    print(f"Lesson page {args.page or '(lesson 1)'} at 1440 wide, cold, until the lab's first live output; "
          f"median of {args.runs} visit(s) per build (ms unless said)\n")
    print("| build | first output | longest task | tasks > 50 ms | TBT | key input delay median / max "
          "| key round trip max | frame gap max |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in results.items():
        if not rows:
            print(f"| {name or 'site'} | failed: {failures[name][:1]} | | | | | | |")
            continue
        print(f"| {name or 'site'} | {med(rows, 'first'):.2f} s | {med(rows, 'longest'):,.0f} | {med(rows, 'long'):.0f} "
              f"| {med(rows, 'tbt'):,.0f} | {med(rows, 'key_median'):.0f} / {med(rows, 'key_max'):,.0f} "
              f"| {med(rows, 'ack_max'):,.0f} | {med(rows, 'gap_max'):,.0f} |")


if __name__ == "__main__":
    main()
