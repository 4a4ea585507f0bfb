"""How fast lesson 1's 實驗場 comes alive, in headless Debian Chromium against the built site.

    python benchmarks/page_load.py [--runs 3] [--site build/site]

For a cold profile (a fresh browser profile folder) and a reload (same profile, page reloaded),
the seconds from navigation start until
  - notebook: the notebook with its stored outputs is on screen;
  - kernel:   Python is ready (kernel idle);
  - output:   the first live output of the kernel, Run-all having been pressed as soon as the
              notebook was on screen (lesson 1's first output comes after the imports);
  - all:      every cell has run;
the median of --runs runs, and the site's size (total and Pyodide). Needs a built site
(`python site/build.py`). Prints figures; asserts nothing.
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
from support.lab import SITE, LabPage, serve_site  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

COLUMNS = ["notebook", "kernel", "output", "all"]


def measure(lab: LabPage) -> dict:
    notebook = lab.wait_for("notebookShown")
    lab.run_all()
    output = lab.first_output()
    kernel = lab.wait_for("stage", "ready")
    lab.wait_all_run()
    return {"notebook": notebook, "kernel": kernel, "output": output,
            "all": time.time() - lab.navigation_start()}


def one_run(playwright, url: str) -> tuple[dict, dict, list[str]]:
    with tempfile.TemporaryDirectory(prefix="specdec-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1440, "height": 900})
        try:
            lab = LabPage.open(context, url)
            cold = measure(lab)
            lab.reload()
            reload = measure(lab)
            return cold, reload, lab.outside
        finally:
            context.close()


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", type=Path, default=SITE)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = {"cold": [], "reload": []}
    outside = []
    with serve_site(args.site) as base, sync_playwright() as playwright:
        for run in range(args.runs):
            cold, reload, leaked = one_run(playwright, base)
            results["cold"].append(cold)
            results["reload"].append(reload)
            outside += leaked
            print(f"run {run + 1}: cold " + "  ".join(f"{k} {cold[k]:5.1f}" for k in COLUMNS)
                  + " | reload " + "  ".join(f"{k} {reload[k]:5.1f}" for k in COLUMNS), flush=True)
    print(f"\nlesson 1, seconds from opening the page (median of {args.runs}):")
    print(f"{'':8}" + "".join(f"{c:>10}" for c in COLUMNS))
    for mode, rows in results.items():
        print(f"{mode:8}" + "".join(f"{statistics.median(r[c] for r in rows):10.1f}" for c in COLUMNS))
    print(f"\nsite: {folder_mb(args.site):.1f} MB, of which Pyodide "
          f"{folder_mb(args.site / 'lab' / 'static' / 'pyodide'):.1f} MB")
    print(f"requests that left 127.0.0.1: {len(outside)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
