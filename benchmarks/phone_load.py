"""Where a lesson page's load goes on a phone: Chromium's own trace, 412 px wide, CPU 4x slower.
    python benchmarks/phone_load.py [--runs 3] [--pages index,your-gpu] [--variant NAME=DIR ...]

Lighthouse (benchmarks/lighthouse.py) scores a page and names the script that started each long
task; this says what the page's main thread spent its time on, from the page's opening until
--settle seconds after its load event, in a fresh context each visit (cold cache; a phone's
viewport: 412 x 823, touch, no lab panel): milliseconds of HTML parsing, style (the style
recalculations, and how many elements the largest one touched), layout, script and paint; the
tasks over 50 ms; and the style recalculations a script forced (it read a layout value right after
a change), summed by the script and function that forced them. Medians over --runs, builds
interleaved. Prints figures, asserts nothing; every wait is bounded and says what it waited for.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.lab import SITE, serve_site  # noqa: E402
from support.server import chromium  # noqa: E402

CATEGORIES = ",".join(["devtools.timeline", "v8", "disabled-by-default-devtools.timeline",
                       "disabled-by-default-devtools.timeline.stack"])
# trace event -> what the main thread was doing
KINDS = {"ParseHTML": "parse", "UpdateLayoutTree": "style", "Layout": "layout",
         "EvaluateScript": "script", "FunctionCall": "script", "v8.compile": "script",
         "EventDispatch": "script", "TimerFire": "script", "FireAnimationFrame": "script",
         "FireIdleCallback": "script", "Paint": "paint", "PrePaint": "paint", "Layerize": "paint"}
PHONE = {"viewport": {"width": 412, "height": 823}, "device_scale_factor": 1.75, "is_mobile": True,
         "has_touch": True}


def trace(browser, url: str, settle: float, bound: float) -> list[dict]:
    """The trace events of one cold visit to `url`."""
    context = browser.new_context(**PHONE)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        events, complete = [], []
        cdp.on("Tracing.dataCollected", lambda e: events.extend(e["value"]))
        cdp.on("Tracing.tracingComplete", lambda e: complete.append(True))
        cdp.send("Tracing.start", {"categories": CATEGORIES, "transferMode": "ReportEvents"})
        page.goto(url, wait_until="load", timeout=bound * 1000)
        page.wait_for_timeout(settle * 1000)
        cdp.send("Tracing.end")
        end = time.time() + bound
        while not complete:
            if time.time() > end:
                raise TimeoutError(f"the trace's last events within {bound:.0f} s")
            page.wait_for_timeout(100)
    finally:
        context.close()
    return events


def main_thread(events: list[dict]) -> list[dict]:
    """The complete events of the page's main thread (its renderer's CrRendererMain)."""
    pid = None
    for e in events:
        if e.get("name") == "TracingStartedInBrowser":
            pid = next((f["processId"] for f in e["args"]["data"].get("frames", []) if not f.get("parent")), pid)
    tid = next((e["tid"] for e in events if e.get("ph") == "M" and e.get("pid") == pid
                and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"), None)
    return [e for e in events if e.get("ph") == "X" and e.get("pid") == pid and e.get("tid") == tid]


def summary(events: list[dict]) -> dict:
    ms = collections.Counter()
    forced = collections.Counter()
    tasks, largest = [], 0
    for e in main_thread(events):
        duration = e.get("dur", 0) / 1000
        name = e["name"]
        if name == "RunTask" and duration > 50:
            tasks.append(duration)
        if name in KINDS:
            ms[KINDS[name]] += duration
        if name == "UpdateLayoutTree":
            begin = e.get("args", {}).get("beginData") or {}
            largest = max(largest, e.get("args", {}).get("elementCount") or 0)
            stack = begin.get("stackTrace") or []
            if stack:
                frame = stack[0]
                forced[f"{frame.get('url', '').rsplit('/', 1)[-1]} {frame.get('functionName') or '(anonymous)'}"] += duration
    return {"ms": ms, "tasks": sorted(tasks, reverse=True), "largest": largest, "forced": forced}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default="index", help="pages under the site, comma-separated ('index' is lesson 1)")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--settle", type=float, default=5, help="seconds traced after the load event")
    parser.add_argument("--bound", type=float, default=120, help="seconds a visit may take")
    args = parser.parse_args()
    variants = dict(v.split("=", 1) for v in args.variant) or {"site": str(args.site)}
    for folder in variants.values():
        if not (Path(folder) / "index.html").exists():
            sys.exit(f"no site in {folder}: python site/build.py")
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    results = collections.defaultdict(list)
    print(f"load average at start: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    with contextlib.ExitStack() as stack, chromium() as browser:
        urls = {name: stack.enter_context(serve_site(Path(folder))) for name, folder in variants.items()}
        for run in range(args.runs):
            for name in (list(variants) if run % 2 == 0 else list(variants)[::-1]):
                for page in pages:
                    url = urls[name] + ("" if page == "index" else page.strip("/") + "/")
                    try:
                        results[name, page].append(summary(trace(browser, url, args.settle, args.bound)))
                    except Exception as error:
                        print(f"{name} {page} run {run}: failed: {str(error)[:200]}", file=sys.stderr)
    print(f"load average at end: {os.getloadavg()[0]:.1f}", file=sys.stderr)

    def med(values):
        return statistics.median(values) if values else float("nan")
    print(f"Main thread of the page, 412 px, CPU 4x slower, cold, until {args.settle:g} s after load; "
          f"median of {args.runs} visit(s), ms\n")
    print("| build | page | parse | style (largest, elements) | layout | script | paint | longest task "
          "| tasks > 50 ms | forced style recalcs: script, function (mean per visit) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (name, page), rows in results.items():
        ms = {k: med([r["ms"][k] for r in rows]) for k in ("parse", "style", "layout", "script", "paint")}
        forced = collections.Counter()
        for r in rows:
            forced.update({k: v / len(rows) for k, v in r["forced"].items()})
        culprits = "; ".join(f"{k} {v:,.0f}" for k, v in forced.most_common(4) if v >= 1) or "-"
        print(f"| {name} | {page} | {ms['parse']:,.0f} | {ms['style']:,.0f} ({med([r['largest'] for r in rows]):,.0f}) "
              f"| {ms['layout']:,.0f} | {ms['script']:,.0f} | {ms['paint']:,.0f} "
              f"| {med([r['tasks'][0] if r['tasks'] else 0 for r in rows]):,.0f} "
              f"| {med([len(r['tasks']) for r in rows]):.0f} | {culprits} |")


if __name__ == "__main__":
    main()
