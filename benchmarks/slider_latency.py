"""How fast a slider answers in the 實驗場: seconds from an arrow key on a slider until the redrawn
figure is on screen, for every slider figure of every lab page, in headless Debian Chromium.

    python benchmarks/slider_latency.py [--steps 10] [--site build/site] [--variant NAME=SITE ...]

Each lab page (lesson 1, the lossless lab, the your-gpu page) is opened with a fresh profile, its
notebook run in Pyodide (Run all), and on every cell with a slider panel the first slider (α) is
focused and moved --steps times with → (each step waits for the previous figure). In the lab's
frame, per step:
  - key:     the keydown on the slider handle (time 0);
  - sent:    the slider's new value leaves for the kernel (comm_msg);
  - back:    the kernel's redrawn figure arrives (comm_msg with the Output widget's outputs);
  - dom:     a new <img> src is in the panel's output;
  - shown:   that image decoded (img.decode()) and the next animation frame has started, i.e.
             the browser is about to paint it;
printed as median and max of 'shown' per figure, with the medians of the parts. Then a burst:
--burst → presses 50 ms apart (the key's own auto-repeat is ~33 ms), and the seconds from the last
press until the last figure is on screen, with how many figures were drawn for them.
--variant NAME=SITE measures another build in the same run (e.g. the code before a change).
Every wait is bounded and says what it waited for. Prints, asserts nothing; `measure_site` returns
the figures for other benchmarks (page_load.py) to print.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.lab import SITE, LabPage, serve_site, wait_until  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

PAGES = {"lesson1": "", "lossless": "lossless-lab/", "your_gpu": "your-gpu/"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# in the lab's frame: the cells that show a slider figure (index, first line). A slider figure
# (specdec_lab.plotting.LiveFigure) is one output holding both the widget and the PNG of its
# figure; another widget (your-gpu's FileUpload) has no figure and no slider to time
SLIDER_CELLS = """() => {
  const nb = window.jupyterapp.shell.currentWidget;
  const found = [];
  for (let i = 0; i < nb.model.cells.length; i++) {
    const c = nb.model.cells.get(i);
    if (c.type !== 'code') continue;
    const outputs = c.outputs.toJSON();
    if (outputs.some((o) => o.data && o.data['%s'] && o.data['image/png']))
      found.push({index: i, source: c.sharedModel.getSource().split('\\n')[0]});
  }
  return found;
}""" % WIDGET_VIEW

# in the lab's frame: watch one cell's output for the steps of its slider
PROBE = """(index) => {
  const old = window.__sliderProbe;
  if (old) { old.observer.disconnect(); old.stop(); }
  const cell = document.querySelector(`.jp-Cell[data-windowed-list-index="${index}"]`);
  const area = cell.querySelector('.jp-Cell-outputArea') || cell;
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const probe = {steps: [], current: null, painted: [], keys: [], shown: null};
  const onKey = (e) => {
    if (!e.target.classList || !e.target.classList.contains('noUi-handle')) return;
    probe.current = {key: performance.now()};
    probe.keys.push(probe.current.key);
  };
  document.addEventListener('keydown', onKey, true);
  const onMessage = (_, {msg, direction}) => {
    if (!probe.current || msg.header.msg_type !== 'comm_msg') return;
    const state = (msg.content.data || {}).state || {};
    if (direction === 'send' && probe.current.sent === undefined) probe.current.sent = performance.now();
    if (direction === 'recv' && 'outputs' in state && probe.current.back === undefined)
      probe.current.back = performance.now();
  };
  kernel.anyMessage.connect(onMessage);
  probe.stop = () => { document.removeEventListener('keydown', onKey, true); kernel.anyMessage.disconnect(onMessage); };
  const srcOf = () => [...area.querySelectorAll('img')].map((img) => img.src).join(' ');
  probe.shown = srcOf();
  probe.observer = new MutationObserver(() => {
    const now = performance.now();
    const src = srcOf();
    if (src === probe.shown || !src) return;
    probe.shown = src;
    const step = probe.current || {};
    probe.current = null;
    step.dom = now;
    const images = [...area.querySelectorAll('img')];
    Promise.all(images.map((img) => img.decode().catch(() => null))).then(() =>
      requestAnimationFrame(() => { step.shown = performance.now(); probe.steps.push(step); }));
  });
  probe.observer.observe(area, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  window.__sliderProbe = probe;
  return srcOf().length > 0;
}"""

PROBE_STEPS = "() => window.__sliderProbe.steps"
PROBE_KEYS = "() => window.__sliderProbe.keys"
KERNEL_IDLE = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'"
PARTS = ["sent", "back", "dom", "shown"]


def open_and_run(context, url: str):
    """The lab page at `url`, its notebook run to the end in Pyodide; the LabPage."""
    lab = LabPage.open(context, url)
    lab.run_all(early=True)
    lab.wait_for("notebookShown", timeout=240)
    lab.wait_all_run(timeout=400)
    return lab


def measure_cell(lab: LabPage, cell: dict, steps: int, burst: int, key: str = "ArrowRight") -> dict:
    """One slider figure: `steps` single steps of its first slider, then a burst of `burst` presses."""
    frame = lab.frame()
    lab.in_app("return nb.content.scrollToItem(arg, 'start').catch(() => null).then(() => true);",
               cell["index"])
    output = frame.locator(f'.jp-Cell[data-windowed-list-index="{cell["index"]}"] .jp-OutputArea-output')
    handle = output.locator(".noUi-handle").first
    handle.wait_for(timeout=30_000)
    wait_until(lambda: frame.evaluate(PROBE, cell["index"]), 30, what=f"figure of cell {cell['index']} on screen")
    label = output.locator(".widget-label").first.inner_text()
    handle.focus()
    timings = []
    for i in range(steps):
        handle.press(key)
        got = wait_until(lambda: len(frame.evaluate(PROBE_STEPS)) > i and frame.evaluate(PROBE_STEPS), 30,
                         step=0.01, what=f"figure redrawn after step {i + 1} of cell {cell['index']}")
        step = got[i]
        timings.append({part: (step[part] - step["key"]) / 1000 if part in step else float("nan")
                        for part in PARTS})
        wait_until(lambda: frame.evaluate(KERNEL_IDLE), 30, step=0.01, what="kernel idle after the step")
    before = len(frame.evaluate(PROBE_STEPS))
    for _ in range(burst):
        handle.press(key)
        time.sleep(0.05)
    # the burst is over when the kernel has been idle and no figure has come for a second
    quiet_since = [time.time(), before]

    def settled():
        count = len(frame.evaluate(PROBE_STEPS))
        if count != quiet_since[1] or not frame.evaluate(KERNEL_IDLE):
            quiet_since[:] = [time.time(), count]
        return time.time() - quiet_since[0] > 1.0 and count > before
    wait_until(settled, 120, step=0.05, what=f"figures after a burst of {burst} presses in cell {cell['index']}")
    steps_now, keys = frame.evaluate(PROBE_STEPS), frame.evaluate(PROBE_KEYS)
    burst_s = (steps_now[-1]["shown"] - keys[-1]) / 1000
    shown = [t["shown"] for t in timings]
    return {"cell": cell["index"], "source": cell["source"], "slider": label, "steps": timings,
            "median": statistics.median(shown), "max": max(shown),
            "parts": {p: statistics.median(t[p] for t in timings) for p in PARTS},
            "burst": burst, "burst_s": burst_s, "burst_figures": len(steps_now) - before}


def measure_page(playwright, base: str, page: str, steps: int = 10, burst: int = 10) -> list[dict]:
    """Slider latency of every slider figure of one lab page (a key of PAGES) of the site served
    at `base`, in a fresh browser profile: one row per figure (page, cell, slider, median and max
    seconds until the figure is on screen, the parts' medians, the burst)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="specdec-slider-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1440, "height": 900})
        try:
            lab = open_and_run(context, base + PAGES[page])
            cells = lab.frame().evaluate(SLIDER_CELLS)
            if not cells:
                rows.append({"page": page, "cell": None, "source": "(no slider figure)"})
            for cell in cells:
                try:
                    rows.append({"page": page, **measure_cell(lab, cell, steps, burst)})
                except Exception as err:   # report the figure that could not be measured, go on
                    rows.append(not_measured(page, f"[{cell['index']}] {cell['source'][:30]}", err))
            if lab.errors:
                print(f"  ! page errors on {page}: {lab.errors[:3]}")
        except Exception as err:           # the page did not run: report it, go on with the next
            rows.append(not_measured(page, "the page", err))
        finally:
            context.close()
    return rows


def not_measured(page: str, what: str, err: Exception) -> dict:
    """A row saying what could not be measured and why (printed in the table, left out of ratios)."""
    reason = str(err).strip().splitlines()[0][:120] if str(err).strip() else type(err).__name__
    print(f"  ! {page}: {what} not measured: {reason}")
    return {"page": page, "cell": None, "source": f"(not measured: {what}: {reason})"}


def measure_site(playwright, base: str, steps: int = 10, burst: int = 10, pages=tuple(PAGES)) -> list[dict]:
    """measure_page for every lab page of the site served at `base`."""
    return [row for page in pages for row in measure_page(playwright, base, page, steps, burst)]


def print_rows(results: dict[str, list[dict]], steps: int, header: bool = True) -> None:
    if header:
        print(f"\nslider step → figure on screen, seconds ({steps} steps of the first slider; "
              "goal: median ≤ 0.15, max ≤ 0.3)")
        print(f"{'build':12} {'page':9} {'figure':40} {'median':>7} {'max':>6} | parts, median: "
              f"{'sent':>5} {'back':>5} {'dom':>5} | burst: last press → shown, figures")
    for name, rows in results.items():
        for r in rows:
            if r["cell"] is None:
                print(f"{name:12} {r['page']:9} {r['source']}")
                continue
            figure = f"[{r['cell']}] {r['source'].removeprefix('plotting.')[:22]} · {r['slider']}"
            p = r["parts"]
            print(f"{name:12} {r['page']:9} {figure:40} {r['median']:7.3f} {r['max']:6.3f} | {'':15}"
                  f"{p['sent']:5.3f} {p['back']:5.3f} {p['dom']:5.3f} | {r['burst']} presses: "
                  f"{r['burst_s']:.2f} s, {r['burst_figures']} figures")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--burst", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1, help="visits per build (interleaved)")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=SITE_FOLDER: another build of the site to measure in the same run")
    parser.add_argument("--page", action="append", choices=list(PAGES), help="only these lab pages")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sites = {"course": args.site}
    for spec in args.variant:
        name, _, folder = spec.partition("=")
        sites[name] = Path(folder)
    pages = args.page or list(PAGES)
    results = {name: [] for name in sites}
    print_rows({}, args.steps)
    with sync_playwright() as playwright, contextlib.ExitStack() as servers:
        bases = {name: servers.enter_context(serve_site(folder)) for name, folder in sites.items()}
        # builds interleaved page by page (each takes each slot in turn): the machine's load
        # changes by the minute, and only ratios within a short span mean much
        for run in range(args.runs):
            for i, page in enumerate(pages):
                order = list(sites)
                shift = (run + i) % len(order)
                for name in order[shift:] + order[:shift]:
                    rows = measure_page(playwright, bases[name], page, args.steps, args.burst)
                    results[name] += rows
                    print_rows({f"{name} #{run + 1}": rows}, args.steps, header=False)
    if len(sites) > 1 or args.runs > 1:   # every run's steps of a figure together
        merged = {}
        for name, rows in results.items():
            by_figure = {}
            for r in rows:
                by_figure.setdefault((r["page"], r["cell"]), []).append(r)
            merged[name] = []
            for same in by_figure.values():
                if same[0]["cell"] is None:
                    merged[name].append(same[0])
                    continue
                timings = [t for r in same for t in r["steps"]]
                shown = [t["shown"] for t in timings]
                merged[name].append({**same[0], "median": statistics.median(shown), "max": max(shown),
                                     "parts": {p: statistics.median(t[p] for t in timings) for p in PARTS},
                                     "burst_s": statistics.median(r["burst_s"] for r in same),
                                     "burst_figures": statistics.median(r["burst_figures"] for r in same)})
        print(f"\nall {args.runs} run(s) together, builds side by side:")
        print_rows({name: rows for name, rows in merged.items()}, args.steps * args.runs)
        for name in list(merged)[1:]:
            ratios = [f"{a['page']}[{a['cell']}] {b['median'] / a['median']:.2f}"
                      for a, b in zip(merged["course"], merged[name])
                      if a["cell"] is not None and b["cell"] is not None]
            print(f"  {name} / course, median: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
