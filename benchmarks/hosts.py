"""How fast lesson 1's 實驗場 gives its first live output, per browser and per host setup.

    python benchmarks/hosts.py [--runs 3] [--links loopback,4g]

One build of the whole site for http://127.0.0.1:PORT/specdec-lab/, served two ways:
  - serve.py, root:      site/serve.py's server (what `make serve` runs: gzip, cache headers) with
                         the site at / ;
  - plain, subpath:      the standard library's static server (as `python -m http.server`: no gzip,
                         no cache headers) from the folder above, the site at /specdec-lab/ ;
each opened in headless Debian Chromium (Playwright) and Debian firefox-esr (puppeteer-core over
WebDriver BiDi), a fresh browser context every time, Run all pressed at once (it waits for Python).
Seconds from opening the page until Python is ready (kernel) and until its first output (output);
medians of --runs, runs interleaved, ratios against Chromium on serve.py. --links: each setup on
each link profile in the same run (benchmarks/throttle.py: a throttling proxy in this process in
front of each server, nothing changed on the machine). Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.firefox import firefox  # noqa: E402
from support.lab import EngineLab, LabPage  # noqa: E402
from support.server import chromium, serve_plain, serve_site  # noqa: E402
from support.site import build_site  # noqa: E402
sys.path.insert(0, str(ROOT / "benchmarks"))
from throttle import LINKS, throttled  # noqa: E402


def visit(lab) -> dict:
    lab.run_all(early=True)
    kernel = lab.wait_for("kernelReady", timeout=240)
    return {"kernel": kernel, "output": lab.first_output(timeout=240)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--links", default="loopback", help="comma-separated: " + ", ".join(LINKS))
    args = parser.parse_args(argv)
    links = [LINKS[name] for name in args.links.split(",")]
    with tempfile.TemporaryDirectory(prefix="specdec-hosts-") as tmp:
        www = Path(tmp) / "www"
        www.mkdir()
        with serve_plain(www) as (plain_root, _):
            site = build_site(Path(tmp) / "build", site_url=plain_root + "specdec-lab/")
            site = site.rename(www / "specdec-lab")
            with serve_site(site) as own_root, chromium() as chrome, firefox() as fox, \
                    contextlib.ExitStack() as stack:
                direct = {"serve.py, root": own_root, "plain, subpath": plain_root + "specdec-lab/"}
                hosts = {(link.name, h): stack.enter_context(throttled(url, link))
                         for link in links for h, url in direct.items()}
                setups = [(b, h) for b in ("Chromium", "Firefox") for h in hosts]
                seen = {s: [] for s in setups}
                for run in range(args.runs):
                    for browser, host in setups:
                        if browser == "Chromium":
                            lab = LabPage.open(chrome, hosts[host])
                            try:
                                seen[(browser, host)].append(visit(lab))
                            finally:
                                lab.context.close()
                        else:
                            lab = EngineLab.open(fox, hosts[host])
                            try:
                                seen[(browser, host)].append(visit(lab))
                            finally:
                                lab.close()
                        last = seen[(browser, host)][-1]
                        print(f"run {run + 1}: {browser:8} {' '.join(host):25} kernel {last['kernel']:5.1f} s"
                              f"  output {last['output']:5.1f} s", file=sys.stderr)
    median = {s: {k: statistics.median(r[k] for r in runs) for k in ("kernel", "output")}
              for s, runs in seen.items()}
    print(f"\nlesson 1, first live output (median of {args.runs}; Run all pressed at once; "
          "ratio to Chromium on serve.py over the same link)")
    print(f"{'browser':10}{'link':11}{'host':18}{'kernel s':>10}{'output s':>10}{'ratio':>8}")
    for (browser, (link, host)), m in median.items():
        base = median[("Chromium", (link, "serve.py, root"))]["output"]
        print(f"{browser:10}{link:11}{host:18}{m['kernel']:10.1f}{m['output']:10.1f}{m['output'] / base:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
