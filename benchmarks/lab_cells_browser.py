"""Each notebook cell's seconds in the live lab, Run all after clearing the outputs with the kernel
already idle, for two builds of the site in one run: headless Debian Chromium, and with --webkit
WebKitGTK (MiniBrowser under Xvfb, driven by WebKitWebDriver over plain W3C WebDriver HTTP).

    python benchmarks/lab_cells_browser.py [--site build/site] [--old build/bench/old-tree/build/site]
        [--notebooks lossless.ipynb ...] [--runs 1] [--webkit] [--no-chromium]

A cell's seconds run from the kernel's execute_input for it to the kernel's next idle status
(iopub messages, timed in the lesson page). Also counted: the progress lines (display and
update_display_data messages of specdec_lab.progress) each cell sent while it ran, with the last
text shown. The old build is any older site (e.g. `git archive REV | tar -x -C build/bench/old-tree`,
then its site/build.py). Builds alternate old, new per run. Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.lab import NOTEBOOK_STATE, WITH_APP, wait_until  # noqa: E402
from support.server import CHROMIUM, CHROMIUM_FLAGS, serve_site  # noqa: E402

PAGES = {"lesson1.ipynb": "", "lesson2.ipynb": "draft-trees/", "lossless.ipynb": "lossless-lab/",
         "your_gpu.ipynb": "your-gpu/"}

# in the lesson page: once the notebook is there and its kernel idle, clear the outputs, listen to
# iopub, press Run all
START = WITH_APP % """() => {
  if (!nb || !nb.sessionContext.session || !nb.sessionContext.session.kernel
      || nb.sessionContext.session.kernel.status !== 'idle') return false;
  if (win.__cells) return true;
  win.__cells = [];
  nb.sessionContext.iopubMessage.connect((_, msg) => {
    const c = msg.content || {};
    const text = c.data ? c.data['text/plain'] : undefined;
    win.__cells.push({t: Date.now(), type: msg.header.msg_type, state: c.execution_state || null,
                      text: text === undefined ? null : String(text).slice(0, 160)});
  });
  app.commands.execute('notebook:clear-all-cell-outputs');
  app.commands.execute('notebook:run-all-cells');
  return true;
}"""
MESSAGES = WITH_APP % "() => win.__cells || []"


def cell_times(messages: list[dict], cells: int):
    """[(seconds, progress messages, last progress text)] per code cell, or None until done."""
    inputs = [i for i, m in enumerate(messages) if m["type"] == "execute_input"]
    if len(inputs) < cells:
        return None
    out = []
    for n, start in enumerate(inputs):
        end = next((j for j in range(start + 1, len(messages)) if messages[j]["state"] == "idle"), None)
        if end is None:
            return None
        shown = [m for m in messages[start:end] if m["type"] in ("display_data", "update_display_data")
                 and m["text"] and "已寫" in m["text"]]
        out.append((round((messages[end]["t"] - messages[start]["t"]) / 1000, 2), len(shown),
                    shown[-1]["text"] if shown else ""))
    return out


def code_cell_count(notebook: str) -> int:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip())


# scroll the notebook to the cell that is showing a progress line
SHOW_RUNNING = WITH_APP % """() => {
  const cells = nb.content.widgets;
  for (let i = 0; i < cells.length; i++) {
    const node = cells[i].node;
    if (node.querySelector('.jp-OutputArea-output') && node.textContent.includes('已寫')) {
      return nb.content.scrollToItem(i, 'center').catch(() => null).then(() => i);
    }
  }
  return -1;
}"""


def chromium_run(base: str, notebook: str, timeout: float = 300, shot: Path | None = None):
    """Per-cell times of one Run all; with ``shot``, a screenshot the first time a progress line
    is on screen."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="specdec-cells-") as profile:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                                                       headless=True, viewport={"width": 1440, "height": 900})
        try:
            page = context.new_page()
            page.goto(base + PAGES[notebook], wait_until="load")
            wait_until(lambda: page.evaluate(START), 240, step=0.2, what="idle kernel, Run all pressed")
            taken = []

            def done():
                messages = page.evaluate(MESSAGES)
                if shot and not taken and any(m["text"] and "已寫" in m["text"] for m in messages):
                    if page.evaluate(SHOW_RUNNING) >= 0:
                        page.wait_for_timeout(150)
                        page.screenshot(path=str(shot))
                        taken.append(shot)
                return cell_times(messages, code_cell_count(notebook))
            return wait_until(done, timeout, step=0.25, what="every cell run")
        finally:
            context.close()


# --- WebKitGTK over W3C WebDriver ------------------------------------------------------------------

MINIBROWSER = next(iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-*/MiniBrowser"))), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def webkit_session():
    """A WebKitGTK MiniBrowser session under a private Xvfb display; yields a function
    call(method, path, body) for the session's WebDriver commands."""
    display = f":{free_port() % 400 + 100}"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1440x900x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    driver = subprocess.Popen(["WebKitWebDriver", f"--port={port}"], env=dict(os.environ, DISPLAY=display),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def http(method, path, body=None, timeout=120):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"{}").get("value")

    session = None
    try:
        wait_until(lambda: _answers(http), 30, what="WebKitWebDriver")
        caps = {"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {
            "binary": str(MINIBROWSER), "args": ["--automation", "--geometry=1440x900"]}}}}
        session = http("POST", "/session", caps)["sessionId"]
        yield lambda method, path, body=None: http(method, f"/session/{session}{path}", body)
    finally:
        with contextlib.suppress(Exception):
            if session:
                http("DELETE", f"/session/{session}", timeout=20)
        for proc in (driver, xvfb):
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            if proc.poll() is None:
                proc.kill()


def _answers(http) -> bool:
    with contextlib.suppress(OSError):
        http("GET", "/status", timeout=2)
        return True
    return False


def webkit_run(base: str, notebook: str, timeout: float = 400):
    with webkit_session() as call:
        call("POST", "/url", {"url": base + PAGES[notebook]})
        run = lambda js: call("POST", "/execute/sync", {"script": f"return ({js})();", "args": []})  # noqa: E731
        wait_until(lambda: run(START), 300, step=0.5, what="idle kernel, Run all pressed (WebKit)")
        return wait_until(lambda: cell_times(run(MESSAGES), code_cell_count(notebook)), timeout, step=0.5,
                          what="every cell run (WebKit)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--old", type=Path, default=ROOT / "build" / "bench" / "old-tree" / "build" / "site")
    parser.add_argument("--notebooks", nargs="*", default=["lossless.ipynb"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--webkit", action="store_true")
    parser.add_argument("--no-chromium", action="store_true")
    parser.add_argument("--shot", type=Path, help="Chromium, new build: a screenshot of the first progress line")
    args = parser.parse_args()
    browsers = ([] if args.no_chromium else [("Chromium", chromium_run)]) + ([("WebKit", webkit_run)] if args.webkit else [])
    sites = [("old", args.old)] if args.old and args.old.exists() else []
    sites.append(("new", args.site))
    for notebook in args.notebooks:
        for name, run in browsers:
            results: dict[str, list] = {label: [] for label, _ in sites}
            for _ in range(args.runs):
                for label, site in sites:
                    with serve_site(site) as base:
                        extra = {"shot": args.shot} if args.shot and run is chromium_run and label == "new" else {}
                        results[label].append(run(base, notebook, **extra))
            print(f"\n{notebook}, {name}: seconds per code cell (median of {args.runs}), progress lines sent")
            columns = [(label, [statistics.median(r[i][0] for r in runs) for i in range(len(runs[0]))], runs[-1])
                       for label, runs in results.items()]
            for i in range(len(columns[0][1])):
                print("  cell %2d  " % (i + 1) + "  ".join(f"{label} {times[i]:6.2f} s" for label, times, _ in columns)
                      + f"   progress lines: {columns[-1][2][i][1]}  {columns[-1][2][i][2]}")
            print("  all      " + "  ".join(f"{label} {sum(times):6.2f} s" for label, times, _ in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
