"""Lighthouse over every page of the nav, mobile and desktop presets: performance, total blocking
time, LCP and the course's own longest tasks, median of a few runs.

    (cd benchmarks && npm ci --no-audit --no-fund)      # Lighthouse 12.2.3 into node_modules/
    python site/build.py                                # the site, as `make serve` serves it
    python benchmarks/lighthouse.py [--runs 3] [--presets mobile,desktop] [--pages index,your-gpu]
                                    [--variant before=DIR --variant after=build/site]

Lighthouse (npm, pinned: 13 wants Node 22) drives Debian's Chromium (CHROME_PATH, the test suite's
flags: tests/support/server.py) against site/serve.py on 127.0.0.1; nothing leaves the machine.
The mobile preset is Lighthouse's default: a mid-range phone, 4x CPU slowdown and slow 4G,
simulated; desktop is --preset=desktop. Per page and preset it prints the medians of the
performance score, TBT and LCP, then each course script (site/assets, served at assets/course/)
with the median over the runs of its longest task (the `long-tasks` audit, attributed by
Lighthouse to a script URL) and of its main-thread time (`bootup-time`). --variant NAME=DIR (one
or more) measures other builds in the same run, each served on its own port, their runs
interleaved (before, after, before, ...) so that the machine's load falls on all alike. Prints
figures, asserts nothing; every Lighthouse run is bounded (--bound seconds) and stopped with its
browser past it; a run that fails (on a loaded machine Lighthouse sometimes gives up waiting for
DevTools) is tried once more, and the failures are counted on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.server import CHROMIUM, CHROMIUM_FLAGS, serve_site  # noqa: E402

LIGHTHOUSE = ROOT / "benchmarks" / "node_modules" / ".bin" / "lighthouse"
SITE = ROOT / "build" / "site"
COURSE_SCRIPTS = "/assets/course/"


def nav_pages() -> list[str]:
    """The nav's pages as paths under the site ("" for index.md, "your-gpu/" for your-gpu.md)."""
    from mkdocs.config import load_config
    files = []

    def walk(items):
        for item in items:
            if isinstance(item, str):
                files.append(item)
            elif isinstance(item, dict):
                for value in item.values():
                    walk(value if isinstance(value, list) else [value])
    walk(load_config(str(ROOT / "mkdocs.yml"))["nav"])
    return ["" if f == "index.md" else f.removesuffix(".md") + "/" for f in files]


def lighthouse(url: str, preset: str, bound: float) -> dict:
    """One Lighthouse run (performance only); the report as a dict. Raises RuntimeError if it fails
    or runs past `bound` seconds (it and its Chromium are stopped)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        argv = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
                "--only-categories=performance", f"--chrome-flags={' '.join(CHROMIUM_FLAGS)}"]
        if preset == "desktop":
            argv.append("--preset=desktop")
        env = {**os.environ, "CHROME_PATH": CHROMIUM, "TMPDIR": tmp}
        child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        try:
            _, err = child.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)     # Lighthouse and the Chromium it launched
            child.communicate()
            raise RuntimeError(f"Lighthouse on {url} ({preset}) ran past {bound:.0f} s") from None
        if child.returncode != 0 or not out.exists():
            raise RuntimeError(f"Lighthouse on {url} ({preset}) exited {child.returncode}: "
                               + " | ".join(err.strip().splitlines()[-3:]))
        return json.loads(out.read_text(encoding="utf-8"))


def figures(report: dict) -> dict:
    """Score, TBT, LCP and, per course script, its longest task and its main-thread time (ms)."""
    audits = report["audits"]
    score = report["categories"]["performance"]["score"]
    longest, bootup = {}, {}
    for item in (audits.get("long-tasks", {}).get("details") or {}).get("items", []):
        url = str(item.get("url", ""))
        if COURSE_SCRIPTS in url:
            name = url.rsplit("/", 1)[-1].split("?")[0]
            longest[name] = max(longest.get(name, 0.0), float(item["duration"]))
    for item in (audits.get("bootup-time", {}).get("details") or {}).get("items", []):
        url = str(item.get("url", ""))
        if COURSE_SCRIPTS in url:
            bootup[url.rsplit("/", 1)[-1].split("?")[0]] = float(item["total"])
    return {"score": None if score is None else round(score * 100),
            "tbt": audits["total-blocking-time"]["numericValue"],
            "lcp": audits["largest-contentful-paint"]["numericValue"],
            "longest": longest, "bootup": bootup,
            "longest_any": max([float(i["duration"]) for i in
                                (audits.get("long-tasks", {}).get("details") or {}).get("items", [])],
                               default=0.0)}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--presets", default="mobile,desktop")
    parser.add_argument("--pages", default="", help="names of nav pages (index, your-gpu, ...); all by default")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=DIR",
                        help="a build to measure beside the others, in the same run (repeatable)")
    parser.add_argument("--bound", type=float, default=180, help="seconds one Lighthouse run may take")
    args = parser.parse_args()
    variants = dict(v.split("=", 1) for v in args.variant) if args.variant else {"": str(args.site)}
    if not LIGHTHOUSE.exists():
        sys.exit("Lighthouse is not installed: cd benchmarks && npm ci --no-audit --no-fund")
    for folder in variants.values():
        if not (Path(folder) / "index.html").exists():
            sys.exit(f"no site in {folder}: python site/build.py")
    pages = nav_pages()
    if args.pages:
        wanted = {"" if p == "index" else p.strip("/") + "/" for p in args.pages.split(",")}
        pages = [p for p in pages if p in wanted]
    presets = args.presets.split(",")

    rows = []
    with contextlib.ExitStack() as stack:
        urls = {name: stack.enter_context(serve_site(Path(folder))) for name, folder in variants.items()}
        for preset in presets:
            for page in pages:
                runs = {name: [] for name in variants}
                failures = {name: [] for name in variants}
                for _ in range(args.runs):
                    for name, base_url in urls.items():      # interleaved: load falls on all alike
                        for attempt in range(2):    # a run that fails is tried once more, said in the table
                            try:
                                runs[name].append(figures(lighthouse(base_url + page, preset, args.bound)))
                                break
                            except RuntimeError as error:
                                failures[name].append(str(error))
                for name in variants:
                    label = (page or "index") + (f" ({name})" if name else "")
                    rows.append((preset, label, runs[name], failures[name]))
                    print(f"{preset:7} {label:25} {len(runs[name])} run(s)"
                          + (f", {len(failures[name])} failed: {failures[name][0]}" if failures[name] else ""),
                          file=sys.stderr)

    print(f"Lighthouse 12.2.3, median of {args.runs} run(s) per row; longest task and main-thread time of the")
    print("course's own scripts (site/assets) in ms, median over the runs (a script with no task over 50 ms: -)\n")
    print("| preset | page | performance | TBT | LCP | longest task | course scripts: longest task / main-thread time |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for preset, page, runs, failures in rows:
        if not runs:
            print(f"| {preset} | {page} | failed | | | | {failures[0] if failures else ''} |")
            continue
        scripts = sorted({name for r in runs for name in (*r["longest"], *r["bootup"])})
        course = []
        for name in scripts:
            longest = median([r["longest"].get(name, 0.0) for r in runs])
            bootup = median([r["bootup"].get(name) for r in runs])
            head = f"{name} {longest:,.0f}" if longest else f"{name} -"
            course.append((longest or 0.0, head + (f" / {bootup:,.0f}" if bootup is not None else "")))
        if not course:
            course = [(0, "-")]
        course.sort(key=lambda c: -c[0])
        print(f"| {preset} | {page} | {median([r['score'] for r in runs])} "
              f"| {median([r['tbt'] for r in runs]):,.0f} ms | {median([r['lcp'] for r in runs]) / 1000:.1f} s "
              f"| {median([r['longest_any'] for r in runs]):,.0f} ms | {'; '.join(c[1] for c in course)} |")


if __name__ == "__main__":
    main()
