"""Where one slider step's time goes in Python, for every slider panel: the numbers, the figure,
drawing it, the PNG, base64 — in CPython and in the lab's own Pyodide (under Node.js).

    python benchmarks/slider_profile.py [--steps 10] [--pyodide [SITE]] [--no-cpython]

A step is what a slider panel (``specdec_lab.plotting.LiveFigure``) does when a slider moves:
``LiveFigure.step(...)`` timed whole, and its parts timed one by one as the panel's code does them
(the compute alone, the figure built, drawn, encoded). With --pyodide the same function runs in the
Pyodide of a built site (default build/site) through site/lab/node/run_in_pyodide.mjs. The browser's
share (the widget message, the image decode) is in benchmarks/slider_latency.py. Prints, asserts
nothing.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# CPU time where there is one (other processes on the machine don't count); Pyodide's is always 0,
# so there wall time (the Node.js process runs alone on a core)
CLOCK = time.perf_counter if sys.platform == "emscripten" else time.process_time


def _timed(fn, repeat: int) -> tuple[float, object]:
    """Median seconds of `repeat` calls of fn(i), and the last result."""
    times, result = [], None
    for i in range(repeat):
        t0 = CLOCK()
        result = fn(i)
        times.append(CLOCK() - t0)
    return statistics.median(times), result


def profile(steps: int = 10) -> dict:
    """{panel: {part: median CPU seconds, ..., "... bytes": n}} for each slider panel, each part
    timed over `steps` slider values (α from 0.80 up by 0.01, as arrow keys move it). Parts that a
    build of the package lacks (the kept figures, PanelCanvas) are left out."""
    import base64
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    from specdec_lab import monte_carlo_check
    from specdec_lab.plotting import explore_serving, explore_speedup, explore_tokens, figure_png
    from specdec_lab.plotting import figures
    try:
        from specdec_lab.plotting.canvas import PanelCanvas
    except ImportError:      # a build from before the kept figures
        PanelCanvas = None

    alphas = [round(0.8 + 0.01 * (i + 1), 2) for i in range(steps)]
    panels = {
        "1️⃣ explore_tokens": (explore_tokens, lambda a: monte_carlo_check(a, 5, rounds=30_000, seed=1),
                              figures.tokens_histogram, "TokensPlot", (5, 30_000)),
        "3️⃣ explore_speedup": (explore_speedup, lambda a: (a, 0.05), lambda args: figures.speedup_figure(*args),
                               "SpeedupPlot", ()),
        "4️⃣ explore_serving": (explore_serving, lambda a: (a, 5, 0.05, 0.02),
                               lambda args: figures.serving_figure(*args), "ServingPlot", ()),
    }
    out = {}
    for name, (make, compute, figure, kept, kept_args) in panels.items():
        panel = make()
        slider = next(iter(panel.sliders.values()))
        row = {}
        row["whole step"], _ = _timed(lambda i: setattr(slider, "value", alphas[i]), steps)
        row["compute"], _ = _timed(lambda i: compute(alphas[i]), steps)
        row["new figure"], fig = _timed(lambda i: figure(compute(alphas[i])), steps)
        row["new figure"] -= row["compute"]
        row["one Agg draw"], _ = _timed(lambda i: FigureCanvasAgg(figure(compute(alphas[i]))).draw(), steps)
        row["one Agg draw"] -= row["new figure"] + row["compute"]
        row["figure_png (tight)"], png = _timed(lambda i: figure_png(figure(compute(alphas[i]))), steps)
        row["figure_png (tight)"] -= row["new figure"] + row["compute"]
        if hasattr(figures, kept) and PanelCanvas:
            plot = getattr(figures, kept)(*kept_args)
            update = (lambda a: plot.update(compute(a))) if kept == "TokensPlot" else (lambda a: plot.update(*compute(a)))
            row["update kept figure"], fig = _timed(lambda i: update(alphas[i]), steps)
            row["update kept figure"] -= row["compute"]
            canvas = PanelCanvas()
            canvas.png(update(0.8))
            row["PanelCanvas.png"], _ = _timed(lambda i: canvas.png(update(alphas[i])), steps)
            row["PanelCanvas.png"] -= row["update kept figure"] + row["compute"]
        row["base64"], _ = _timed(lambda i: base64.b64encode(png).decode("ascii"), steps)
        row["figure_png bytes"] = len(png)
        row["panel png bytes"] = len(panel.png)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        for level in (6, 1):
            def encode(_, level=level):
                buf = io.BytesIO()
                image.save(buf, format="png", compress_level=level)
                return buf.getvalue()
            row[f"PNG encode, level {level}"], data = _timed(encode, steps)
            row[f"PNG level {level} bytes"] = len(data)
        out[name] = row
    return out


def print_profile(title: str, result: dict) -> None:
    print(f"\n{title}: median seconds per step (CPU in CPython, wall in Pyodide), bytes where it says so")
    parts = list(dict.fromkeys(part for row in result.values() for part in row))
    print(f"{'':22}" + "".join(f"{name:>22}" for name in result))
    for part in parts:
        cells = "".join(f"{'-':>22}" if part not in row else f"{row[part]:>22,}" if "bytes" in part
                        else f"{row[part]:>22.4f}" for row in result.values())
        print(f"{part:22}{cells}")


PYODIDE_DRIVER = """
import json, sys
import pyodide_js
await pyodide_js.loadPackage(["specdec-lab", "ipywidgets", "specdec-lab-fonts"])
sys.path.insert(0, {benchmarks!r})
import slider_profile
result = slider_profile.profile({steps})
open(sys.argv[1], "w").write(json.dumps(result))
"""


def profile_in_pyodide(site: Path, steps: int, timeout: float = 600) -> dict:
    """profile() run in the Pyodide of the built site `site` under Node.js."""
    sys.path.insert(0, str(ROOT / "site"))
    from lab.builder import build_lab

    pyodide = build_lab.pyodide_dir(site / "lab")
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        driver, result = Path(tmp) / "driver.py", Path(tmp) / "result.json"
        driver.write_text(PYODIDE_DRIVER.format(benchmarks="/host" + str(Path(__file__).resolve().parent),
                                                steps=steps))
        result.write_text("")
        done = subprocess.run([shutil.which("node"), str(ROOT / "site" / "lab" / "node" / "run_in_pyodide.mjs"),
                               str(pyodide.resolve()), str(driver), str(result.resolve())],
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or not result.read_text():
            raise RuntimeError(f"Pyodide run failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        return json.loads(result.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--pyodide", nargs="?", type=Path, const=ROOT / "build" / "site", default=None,
                        metavar="SITE", help="also in the Pyodide of this built site (default build/site)")
    parser.add_argument("--no-cpython", action="store_true")
    args = parser.parse_args()
    if not args.no_cpython:
        print_profile("CPython", profile(args.steps))
    if args.pyodide:
        print_profile(f"Pyodide ({args.pyodide})", profile_in_pyodide(args.pyodide, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
