"""The offline copy's cost and gain (issue 45, docs/offline.md), in headless Debian Chromium.

    python benchmarks/offline.py [--runs 3] [--on SITE] [--off SITE] [--step-timeout 240]

Two builds of the same course: with its offline copy (the default build) and without it
(SPECDEC_OFFLINE=0); both are built into build/bench/offline-{on,off}/ unless given. Each run, for
each build, a fresh browser profile on site/serve.py's server (a fixed port: a service worker
belongs to its origin):
  - cold:      lesson 1 opened for the first time, Run all pressed at once: seconds to the first
               live output (then every cell run, and with the worker, its cache filled);
  - warm:      the same tab reloaded, server up (today's warm reload: the HTTP cache);
  - offline:   (with the worker) the server stopped, the tab reloaded: seconds to the first output;
  - next day:  the server up again, every tab closed, lesson 1 in a new tab: seconds to the first
               output and every request the server saw (path and status). A day later changes
               nothing here: serve.py sends the hashed files for a year and the rest `no-cache`
               (revalidated on every visit, a day later too); the browser checks its workers'
               scripts on each navigation whatever their age.
Runs interleaved (on, off, on, off, ...); medians. Every wait is bounded (--step-timeout) and says
what it waited for. Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import functools
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "site"))
from support.lab import LabPage, wait_until  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from support.site import build_site  # noqa: E402
import serve  # noqa: E402  (site/serve.py)

BENCH = ROOT / "build" / "bench"
# the build's cache named complete by the worker (site/offline/offline-sw.js's state)
CACHE_COMPLETE = """(site) => caches.open('specdec-offline-state')
    .then((c) => c.match(site + 'offline.json?state'))
    .then((r) => r ? r.json() : {}).then((s) => s.current || null)"""
KEPT = "() => (window.specdecOffline && window.specdecOffline.kept) || 0"


class Server:
    """site/serve.py's server on a given port, recording each request's path and status."""

    def __init__(self, root: Path, port: int):
        self.seen: list[tuple[str, int]] = []
        self.server = serve.make_server(root, port=port, tell_leaving=False)
        seen = self.seen
        handler = self.server.RequestHandlerClass
        recording = type("Recording", (handler.func,), {
            "log_request": lambda self, code="-", size="-": seen.append((self.path, int(code)))})
        self.server.RequestHandlerClass = functools.partial(recording, **handler.keywords)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_output(lab: LabPage, bound: float) -> float:
    """Run all pressed at once; seconds from the navigation to the kernel's first output."""
    lab.run_all(early=True, timeout=bound)
    return lab.first_output(timeout=bound)


def one_run(playwright, site: Path, worker: bool, bound: float) -> dict:
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    server = Server(site, port)
    out = {}
    with tempfile.TemporaryDirectory(prefix="specdec-offline-bench-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1440, "height": 900})
        try:
            lab = LabPage.open(context, base)
            out["cold"] = first_output(lab, bound)
            lab.wait_all_run(timeout=bound)
            if worker:
                wait_until(lambda: lab.page.evaluate(KEPT) > 0, bound, step=0.5, what="the worker keeping the lab")
                wait_until(lambda: lab.page.evaluate(CACHE_COMPLETE, base), bound, step=0.5,
                           what="the worker naming the build's cache complete")
            lab.reload()
            out["warm"] = first_output(lab, bound)
            lab.wait_all_run(timeout=bound)
            if worker:
                server.stop()
                lab.reload()
                out["offline"] = first_output(lab, bound)
                lab.wait_all_run(timeout=bound)
                server = Server(site, port)
            server.seen.clear()
            blank = context.new_page()                  # (the context stays open with a tab)
            for page in context.pages:
                if page is not blank:
                    page.close()
            again = LabPage.open(context, base)
            out["next_day"] = first_output(again, bound)
            again.wait_all_run(timeout=bound)
            out["next_day_requests"] = list(server.seen)
        finally:
            context.close()
            server.stop()
    return out


def median(runs: list[dict], key: str) -> str:
    values = [r[key] for r in runs if key in r]
    return f"{statistics.median(values):.1f} s" if values else "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--on", type=Path, help="a build with the offline copy (default: built)")
    parser.add_argument("--off", type=Path, help="a build without it (default: built, SPECDEC_OFFLINE=0)")
    parser.add_argument("--step-timeout", type=float, default=240)
    args = parser.parse_args(argv)
    sites = {"on": args.on or build_site(BENCH / "offline-on", offline=True),
             "off": args.off or build_site(BENCH / "offline-off", offline=False)}
    from playwright.sync_api import sync_playwright
    runs = {"on": [], "off": []}
    with sync_playwright() as playwright:
        for i in range(args.runs):
            for name in ("on", "off"):
                t0 = time.time()
                runs[name].append(one_run(playwright, sites[name], name == "on", args.step_timeout))
                print(f"run {i + 1} {name}: {runs[name][-1]} ({time.time() - t0:.0f} s)", file=sys.stderr)
    print(f"lesson 1, Chromium, medians of {args.runs} runs (seconds to the first live output)\n")
    print("| | with the worker | without |")
    print("| --- | --- | --- |")
    for key, label in (("cold", "cold first visit"), ("warm", "warm reload (server up)"),
                       ("offline", "offline reload (server stopped)"), ("next_day", "next day, new tab")):
        print(f"| {label} | {median(runs['on'], key)} | {median(runs['off'], key)} |")
    cold_on, cold_off = (statistics.median(r["cold"] for r in runs[n]) for n in ("on", "off"))
    print(f"\ncold first visit with / without the worker: {cold_on / cold_off:.3f}")
    for name in ("on", "off"):
        seen = runs[name][-1]["next_day_requests"]
        statuses = sorted({status for _, status in seen})
        print(f"\nnext day, {name}: {len(seen)} requests reached the server (statuses {statuses})")
        for path, status in seen[:12]:
            print(f"  {status} {path}")
        if len(seen) > 12:
            print(f"  ... {len(seen) - 12} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
