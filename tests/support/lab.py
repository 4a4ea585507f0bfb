"""Drive the 實驗場 beside a lesson in headless Debian Chromium: the browser tests of the lab
(tests/test_lab_browser.py) and the page-load benchmark (benchmarks/page_load.py) share it.

    with serve_site(SITE) as base:                       # tests/support/server.py: site/serve.py's
        with chromium() as browser:                      # server on a free port, and Chromium
            lab = LabPage.open(browser, base, profile=None, width=1440)
            lab.wait_for("notebookShown"); lab.run_all(); lab.wait_for_idle_after_run()
            lab.outputs()                                 # cells as the learner sees them

EngineLab gives the same readings on a Firefox or WebKit page (tests/support/engines.py's Page);
kernel_says and kernel_prints run code in the live kernel of either.

Requests are recorded, not routed (Playwright's routing turns the HTTP cache off, and the reload
timings need it): `lab.outside` lists every request to a host other than 127.0.0.1. `lab.console`
holds the warnings and errors the lesson page and the lab's frame wrote to the console.
"""
from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

from .server import serve_site  # noqa: F401  (the lab tests and the benchmark take it from here)

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"

# the lesson page keeps every report of the lab's page script, with wall-clock times, the moment
# the toy and the quiz have mounted (their buttons exist with their handlers) and the moment the
# notebook's static preview is in the panel
TIMELINE = """
window.__lab = {start: performance.timeOrigin, events: []};
window.addEventListener('message', (e) => {
  if (e.data && e.data.specdecLab) window.__lab.events.push({t: Date.now(), ...e.data.specdecLab});
});
new MutationObserver((_, observer) => {
  const now = Date.now();
  if (!window.__lab.widgetsMounted && document.querySelector('.sd-toy button')
      && document.querySelector('.sd-quiz--live')) window.__lab.widgetsMounted = now;
  if (!window.__lab.previewShown && document.querySelector('.sd-lab__preview .sd-nb')) window.__lab.previewShown = now;
  if (window.__lab.widgetsMounted && window.__lab.previewShown) observer.disconnect();
}).observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ['class']});
"""

# JS run in the lesson page; `app` is the lab's JupyterLite app, `nb` its notebook panel
WITH_APP = """(arg) => {
  const frame = document.querySelector('.sd-lab__frame');
  const win = frame && frame.contentWindow;
  const app = win && win.jupyterapp;
  const nb = app && app.shell.currentWidget && app.shell.currentWidget.sessionContext
             ? app.shell.currentWidget : null;
  return (%s)(arg);
}"""

NOTEBOOK_STATE = WITH_APP % """() => {
  if (!nb || !nb.model) return null;
  const cells = [];
  for (let i = 0; i < nb.model.cells.length; i++) {
    const c = nb.model.cells.get(i);
    cells.push({type: c.type, source: c.sharedModel.getSource(), tags: c.getMetadata('tags') || [],
                count: c.type === 'code' ? c.executionCount : null,
                outputs: c.type === 'code' ? c.outputs.toJSON() : null});
  }
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  return {kernel: kernel ? kernel.status : null, cells,
          dialogs: win.document.querySelectorAll('.jp-Dialog').length};
}"""

# records the wall-clock time of every output message the kernel sends (iopub)
LISTEN_IOPUB = WITH_APP % """() => {
  if (!nb || win.__iopub) return !!(win && win.__iopub);
  win.__iopub = [];
  nb.sessionContext.iopubMessage.connect((_, msg) => {
    win.__iopub.push({t: Date.now(), type: msg.header.msg_type, state: msg.content.execution_state});
  });
  return true;
}"""


# what a wait for the lab's page script saw instead, for its failure message: the reports the lesson
# page got, and the lab's frame as it is (its URL, whether its page script runs, how far JupyterLite
# came: specdecLab's marks, the notebook shown, the service worker in control)
LAB_SNAPSHOT = """async () => {
  const lab = window.__lab || {events: []};
  const s = (t) => +((t - performance.timeOrigin) / 1000).toFixed(1);    // seconds from navigation
  const out = {page: location.href, at: s(Date.now()), visibility: document.visibilityState,
               reports: lab.events.length,
               last: lab.events.slice(-8).map((e) => `${s(e.t)} ${e.stage}${e.notebookShown ? ' shown' : ''}`)};
  const frame = document.querySelector('.sd-lab__frame');
  if (!frame) return {...out, frame: null};
  out.frame = {src: frame.getAttribute('src'), shown: frame.getClientRects().length > 0};
  try {
    const win = frame.contentWindow, doc = frame.contentDocument, app = win.jupyterapp;
    const widget = app && app.shell.currentWidget;
    const sw = win.navigator.serviceWorker;
    Object.assign(out.frame, {url: win.location.href, readyState: doc && doc.readyState,
      marks: win.specdecLab ? Object.entries(win.specdecLab.state().marks).map(([k, t]) => `${k} ${s(t)}`)
                            : 'no specdecLab',
      widget: widget ? `${widget.constructor.name} ${widget.id} ${widget.title.label}` : null,
      kernel: widget && widget.sessionContext ? widget.sessionContext.kernelDisplayStatus : null,
      serviceWorker: sw ? (sw.controller ? `controlled (${sw.controller.state})` : 'not controlled') : 'none',
      resources: win.performance.getEntriesByType('resource').length,
      errors: win.__wk ? win.__wk.errors : undefined});
    if (sw) out.frame.registrations = (await Promise.race([sw.getRegistrations(), new Promise((r) => setTimeout(r, 2000))]) || ['none within 2 s'])
      .map((r) => r.scope ? `${r.scope}: ${['installing', 'waiting', 'active'].filter((k) => r[k]).map((k) => `${k} ${r[k].state}`)}` : r);
  } catch (e) { out.frame.error = String(e); }
  return out;
}"""


# two animation frames, so that what the page holds has been painted (bounded: a page that draws
# no frames, say one in the background, goes on after 2 s)
PAINTED = """() => Promise.race([new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
                               new Promise((r) => setTimeout(r, 2000))])"""


def wait_until(predicate, timeout: float, step: float = 0.05, what: str = "condition"):
    end = time.time() + timeout
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def wait_until_still(read, timeout: float, step: float = 0.1, times: int = 2, what: str = "value"):
    """Poll read() until it gives the same value `times` times in a row; that value."""
    seen = []

    def still():
        seen.append(read())
        return len(seen) >= times and all(v == seen[-1] for v in seen[-times:])
    wait_until(still, timeout, step=step, what=what)
    return seen[-1]


def where_thrown(error) -> str:
    """A page error (the lesson page's or the lab frame's) with the place it was thrown, so an
    error that shows once in a while says whose code it came from."""
    frames = [line.strip() for line in (error.stack or "").splitlines()[1:3] if line.strip()]
    return f"{error}" + (f" ({' / '.join(frames)})" if frames else "")


class LabPage:
    """A lesson page with its lab, and what happened while it loaded."""

    def __init__(self, page, context):
        self.page, self.context = page, context
        self.outside: list[str] = []
        self.requested: list[str] = []      # every URL asked for (the page's, its frame's, workers')
        self.errors: list[str] = []
        self.console: list[dict] = []
        for target in (page, context):
            target.on("request", self._record)
        page.on("pageerror", lambda e: self.errors.append(where_thrown(e)))
        page.on("console", self._console)

    @classmethod
    def open(cls, browser_or_context, url: str, width: int = 1440, height: int = 900,
             wait_until: str = "load", **context):
        context_ = (browser_or_context.new_context(viewport={"width": width, "height": height},
                                                   **context)
                    if hasattr(browser_or_context, "new_context") else browser_or_context)
        context_.add_init_script(TIMELINE)
        lab = cls(context_.new_page(), context_)
        lab.goto(url, wait_until)
        return lab

    def _console(self, message):
        if message.type in ("warning", "error"):
            self.console.append({"type": message.type, "text": message.text,
                                 "url": (message.location or {}).get("url", "")})

    def _record(self, request):
        url = request.url
        self.requested.append(url)
        if not url.startswith(("data:", "blob:")) and urlsplit(url).hostname != "127.0.0.1":
            self.outside.append(url)

    def goto(self, url: str, wait_until: str = "load"):
        self.page.goto(url, wait_until=wait_until)

    def reload(self):
        self.page.reload()

    # what the lab's page script reported --------------------------------------------------------
    def events(self) -> list[dict]:
        return self.page.evaluate("() => window.__lab ? window.__lab.events : []")

    def _page_mark(self, key: str, timeout: float, what: str) -> float:
        """Seconds from navigation start until TIMELINE's window.__lab[key] was set (in the page,
        so not delayed by the load event that page.goto waits for)."""
        t = wait_until(lambda: self.page.evaluate(f"() => window.__lab.{key} || 0"), timeout, what=what)
        return t / 1000 - self.navigation_start()

    def widgets_mounted(self, timeout: float = 60) -> float:
        """Seconds until the lesson's toy and quiz had mounted."""
        return self._page_mark("widgetsMounted", timeout, "toy and quiz mounted")

    def preview_shown(self, timeout: float = 60) -> float:
        """Seconds until the notebook's static preview was in the panel."""
        return self._page_mark("previewShown", timeout, "notebook preview")

    def navigation_start(self) -> float:
        return self.page.evaluate("() => window.__lab.start") / 1000

    def wait_for(self, key: str, value=True, timeout: float = 180) -> float:
        """Seconds from navigation start until the page script reported `key == value`
        (e.g. wait_for("notebookShown"), wait_for("stage", "ready"))."""
        event = self.until(lambda: next((e for e in self.events() if e.get(key) == value), None),
                           timeout, what=f"lab {key}={value}")
        return event["t"] / 1000 - self.navigation_start()

    def until(self, predicate, timeout: float, step: float = 0.05, what: str = "condition"):
        """wait_until, and if it times out, what the lab showed instead (snapshot) in the message."""
        try:
            return wait_until(predicate, timeout, step, what)
        except TimeoutError as error:
            raise TimeoutError(f"{error}; instead: {self.snapshot()}") from None

    def snapshot(self) -> dict | str:
        """LAB_SNAPSHOT: the lesson page's reports from the lab and the lab's frame as it is now."""
        try:
            return self.page.evaluate(LAB_SNAPSHOT)
        except Exception as error:    # (the page itself stuck: say so, not this)
            return f"no snapshot: {error}"[:500]

    # the notebook --------------------------------------------------------------------------------
    def state(self) -> dict | None:
        return self.page.evaluate(NOTEBOOK_STATE)

    def frame(self):
        """The lab's frame (Playwright Frame), for clicks and keys inside the notebook."""
        return wait_until(lambda: next((f for f in self.page.frames if "/lab/notebooks/" in f.url), None),
                          60, what="lab frame")

    def show_cell(self, tag: str) -> int:
        """Scroll the notebook to the first cell tagged `tag` (JupyterLab only draws the cells
        near the view); returns its index."""
        return self.in_app("""
            const cells = nb.model.cells;
            for (let i = 0; i < cells.length; i++) {
              if ((cells.get(i).getMetadata('tags') || []).includes(arg)) {
                return nb.content.scrollToItem(i, 'start').catch(() => null).then(() => i);
              }
            }
            return -1;""", tag)

    def in_app(self, body: str, arg=None):
        """Evaluate `(arg) => body` in the lesson page with `app`, `nb`, `win` bound."""
        return self.page.evaluate(WITH_APP % f"(arg) => {{ {body} }}", arg)

    def run_all(self, early: bool = False, timeout: float = 120):
        """Run every cell through the app's command registry (the way Run buttons and Shift+Enter
        go). early=True presses it the moment JupyterLite's app exists, before any kernel.
        (The command's promise settles only when every cell has run: never returned to Python.)"""
        if early:
            wait_until(lambda: self.in_app("if (!app) return false; app.commands.execute("
                                           "'notebook:run-all-cells'); return true;"),
                       timeout, step=0.01, what="JupyterLite app")
        wait_until(lambda: self.page.evaluate(LISTEN_IOPUB), timeout, what="notebook panel")
        if not early:
            self.in_app("app.commands.execute('notebook:run-all-cells'); return true;")

    def first_output(self, timeout: float = 240) -> float:
        """Seconds from navigation start to the first output message of the live kernel."""
        t = wait_until(lambda: self.in_app(
            "const m = (win.__iopub || []).find((m) => OUTPUT_TYPES.includes(m.type)); return m ? m.t : 0;"
            .replace("OUTPUT_TYPES", str(["stream", "execute_result", "display_data", "error"]))),
            timeout, what="first live output")
        return t / 1000 - self.navigation_start()

    def wait_all_run(self, timeout: float = 300) -> dict:
        """Wait until the kernel has taken every non-empty code cell (one execute_input each), or
        a cell failed (Run all stops there), and is idle again; returns the notebook state."""
        def done():
            s = self.state()
            if not s or s["kernel"] != "idle":
                return None
            code = [c for c in s["cells"] if c["type"] == "code" and c["source"].strip()]
            kinds = self.in_app("return (win.__iopub || []).map((m) => m.type);")
            finished = kinds.count("execute_input") >= len(code) or "error" in kinds
            return s if finished else None
        return wait_until(done, timeout, step=0.25, what="all cells run")


def kernel_says(lab: LabPage, code: str) -> dict:
    """`code` run in the lab's live kernel: what it prints ("printed", an error's name and value
    too) and the plain text of each value it displays or returns ("shown")."""
    return lab.in_app("""
        return new Promise((done) => {
          const future = nb.sessionContext.session.kernel.requestExecute({code: arg});
          const got = {printed: '', shown: []};
          future.onIOPub = (msg) => {
            const type = msg.header.msg_type;
            if (type === 'stream') got.printed += msg.content.text;
            if (type === 'error') got.printed += msg.content.ename + ': ' + msg.content.evalue;
            if (type === 'display_data' || type === 'execute_result') got.shown.push(msg.content.data['text/plain']);
          };
          future.done.then(() => done(got));
        });""", code)


def kernel_prints(lab: LabPage, code: str) -> str:
    """What `code` prints when run in the lab's live kernel (an error's name and value too)."""
    return kernel_says(lab, code)["printed"]


class EngineLab(LabPage):
    """LabPage on a page of tests/support/engines.py (Firefox's, WebKit's): the same in-page readings
    (events, wait_for, state, in_app, run_all, wait_all_run, first_output) through page.evaluate;
    what it requested is the driver's to say (Firefox: browser.outside)."""

    def __init__(self, page):
        self.page, self.context = page, None

    @classmethod
    def open(cls, browser, url: str, width: int = 1440, height: int = 900, init: list[str] = ()) -> "EngineLab":
        # (the panel as it opens for a new learner, not folded by an earlier page of the browser)
        shown = "localStorage.removeItem('specdec-lab:layout');"
        return cls(browser.open(url, width=width, height=height, init=[shown, TIMELINE, *init]))

    @property
    def errors(self) -> list[str]:
        return self.page.log()["errors"]

    def goto(self, url: str, wait_until: str = "load"):
        self.page.goto(url, wait_until)

    def reload(self):
        self.page.reload()

    def frame(self):
        raise NotImplementedError("reach the lab through in_app (the lesson page's frame)")

    def close(self):
        self.page.close()
