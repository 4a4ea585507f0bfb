"""A phone that opens the 實驗場 after reading for a while: does the prefetch (site/assets/lab-prefetch.js) pay?

    python benchmarks/phone_prefetch.py [--runs 2] [--read 20] [--links 4g] [--site build/site]

Headless Debian Chromium at a phone's size (390 × 844, touch), a fresh profile each visit, lesson 1
through a shaped link (benchmarks/throttle.py: a throttling proxy in this process; nothing changed
on the machine). The learner reads for --read seconds, then taps 🧪 實驗場 and Run all at once;
measured: seconds from the tap until the first live output and until every cell has run. (Whether
the kernel took the prefetched files from the HTTP cache is checked by tests/test_lab_prefetch.py
at the server; Playwright's per-request sizes here do not tell cache hits from downloads.) Two
ways, interleaved in the same run:
  - prefetch:    as shipped (what Python needs as it starts is fetched while the learner reads);
  - no prefetch: the same page with navigator.connection.saveData on (the browser asks to save
                 data, so the page fetches nothing ahead).
Each visit runs in a child process with every step bounded (benchmarks/bounded.py). Prints,
asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from bounded import report, run_bounded, step  # noqa: E402
from support.lab import SITE, LabPage, serve_site  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from throttle import LINKS, throttled  # noqa: E402

SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection', {configurable: true,
  get: () => ({saveData: true, effectiveType: '4g', addEventListener() {}})});"""
WAYS = {"prefetch": None, "no prefetch": SAVE_DATA}


def one_visit(way: str, url: str, profile: str, read: float, bound: float) -> dict:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True, timeout=bound * 1000,
            viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        context.set_default_timeout(bound * 1000)
        if WAYS[way]:
            context.add_init_script(WAYS[way])
        try:
            step("lesson page", bound)
            lab = LabPage.open(context, url)
            step("reading", read + 10)
            time.sleep(read)            # the learner reads: the scenario itself, not a wait for a state
            state = lab.page.evaluate("() => document.documentElement.dataset.sdLabPrefetch || ''")
            step("tap 🧪 實驗場", bound)
            lab.page.locator(".sd-lab-open").click()
            tapped = time.time()
            lab.run_all(early=True, timeout=step("Run all pressed", bound))
            lab.first_output(step("first live output", bound))
            output = time.time() - tapped
            lab.wait_all_run(step("every cell run", bound))
            every = time.time() - tapped
        finally:
            context.close()
    return {"output": output, "all": every, "prefetch": state}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--read", type=float, default=20, help="seconds of reading before the tap")
    parser.add_argument("--links", default="4g")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--step-timeout", type=float, default=240)
    parser.add_argument("--visit", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.visit:
        try:
            report(result=one_visit(args.visit, args.url, args.profile, args.read, args.step_timeout))
        except Exception as error:
            report(error=f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:300]}")
            return 1
        return 0
    links = [LINKS[name] for name in args.links.split(",")]
    rows = {(link.name, way): [] for link in links for way in WAYS}
    for run in range(args.runs):
        for link in links:
            ways = list(WAYS) if run % 2 == 0 else list(WAYS)[::-1]
            for way in ways:
                with serve_site(args.site) as base, throttled(base, link) as url, \
                        tempfile.TemporaryDirectory(prefix="specdec-phone-", ignore_cleanup_errors=True) as profile:
                    argv = [sys.executable, __file__, "--visit", way, "--url", url, "--profile", profile,
                            "--read", str(args.read), "--step-timeout", str(args.step_timeout)]
                    outcome = run_bounded(argv, Path(profile), visit_bound=args.read + 4 * args.step_timeout)
                got = outcome.result
                if got is None:
                    print(f"run {run + 1} {link.name} {way}: failed: {outcome.failure}", flush=True)
                    continue
                rows[(link.name, way)].append(got)
                print(f"run {run + 1} {link.name:9} {way:12}: prefetch '{got['prefetch']}' at the tap; after it: "
                      f"first output {got['output']:.1f} s, Run all {got['all']:.1f} s", flush=True)
    print(f"\nlesson 1 on a phone, the lab opened after {args.read:g} s of reading: seconds from the tap "
          "(median of the runs, n)")
    print(f"{'link':36}{'':14}{'first output':>14}{'Run all':>10}{'n':>4}")
    for link in links:
        for way in WAYS:
            got = rows[(link.name, way)]
            if not got:
                continue
            med = lambda key: statistics.median(r[key] for r in got)  # noqa: E731
            print(f"{link.describe():36}{way:14}{med('output'):14.1f}{med('all'):10.1f}{len(got):4d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
