"""The course offline after one visit (issue 45, docs/offline.md), in Chromium.

The whole site is built once, served by site/serve.py on a fixed port (a service worker belongs
to its origin, port included), visited online (lesson 1, its lab run), then the server is
stopped: every page of the sitemap opens with its widgets and search, and lesson 1's lab starts
and runs every cell. A new build (the same site with a lesson's text changed, its offline.json
written again) served on the same origin: the page stays on the old build until 「課程已更新」's
reload, then shows the new one, and only the new build's cache is left. The lab's drive (the
kernel's files, through JupyterLite's relay in the worker) and an upload still reach Python with
the course's worker in control. An insecure origin (http://classroom.test, mapped to 127.0.0.1:
not localhost, so not a secure context) has no worker and the lab still runs.
Screenshots: offline-*.png.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support.lab import TIMELINE, LabPage, wait_until
from support.server import CHROMIUM, CHROMIUM_FLAGS
from support.site import ROOT, build_site
from support.workers import worker_sessions
from test_lab_browser import RUN_CELL
from test_site_browser import search

sys.path.insert(0, str(ROOT / "site"))
import serve  # noqa: E402  (site/serve.py)
from offline.manifest import write_manifest  # noqa: E402

pytestmark = pytest.mark.browser

SHOTS = ROOT / "build" / "test-output" / "screenshots"
CLASSROOM = "classroom.test"      # an http origin that is not localhost: no service worker


class Server:
    """site/serve.py's server for a folder, on a port that stays the same across stop and start."""

    def __init__(self, root: Path, port: int = 0):
        self.server = serve.make_server(root, port=port, tell_leaving=False)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The whole site, built (SPECDEC_LAB_SITE=<folder>: one built already, only served)."""
    if os.environ.get("SPECDEC_LAB_SITE"):
        return Path(os.environ["SPECDEC_LAB_SITE"])
    return build_site(tmp_path_factory.mktemp("offline") / "build")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS + [
            f"--host-resolver-rules=MAP {CLASSROOM} 127.0.0.1"])
        try:
            yield instance
        finally:
            instance.close()


def sitemap_paths(site: Path) -> list[str]:
    locs = [e.text for e in ET.parse(site / "sitemap.xml").getroot().iter() if e.tag.endswith("loc")]
    return [re.sub(r"^https?://[^/]+/", "", loc) for loc in locs]


def run_every_cell(lab: LabPage) -> list:
    """Run all; the errors of the code cells (none expected) after checking each one ran."""
    lab.run_all(early=True)
    ran = lab.wait_all_run(timeout=400)
    cells = [c for c in ran["cells"] if c["type"] == "code" and c["source"].strip()]
    assert sorted(c["count"] for c in cells) == list(range(1, len(cells) + 1))
    return [(c["source"][:60], o.get("ename"), o.get("evalue"))
            for c in cells for o in c["outputs"] if o["output_type"] == "error"]


def visit_online(context, base: str) -> LabPage:
    """Lesson 1 with its lab run, then wait until the worker kept the lab (bounded)."""
    lab = LabPage.open(context, base)
    assert run_every_cell(lab) == []
    wait_until(lambda: (lab.page.evaluate("() => window.specdecOffline && window.specdecOffline.kept") or 0) > 0,
               180, step=0.5, what="the worker keeping the lab's files")
    return lab


# the version of the build whose cache the worker has filled whole (offline-sw.js's state), or null
BUILD_CACHE_COMPLETE = """(site) => caches.open('specdec-offline-state')
    .then((c) => c.match(site + 'offline.json?state'))
    .then((r) => r ? r.json() : {}).then((s) => s.current || null)"""


REGISTERED = """() => navigator.serviceWorker.getRegistrations().then((found) =>
    found.map((r) => [r.scope, r.active && r.active.scriptURL]).sort())"""


def caches_held(page) -> list[str]:
    """The course's build caches (not its state, nor JupyterLite's empty 'precache')."""
    return sorted(name for name in page.evaluate("() => caches.keys()")
                  if name.startswith("specdec-") and name != "specdec-offline-state")


@pytest.fixture(params=["root", "subpath"])
def where(request, site, tmp_path):
    """(folder served, path of the site under it): the site at the root, or under specdec-lab/
    as on a GitHub Pages project site (the same build: its pages link relatively)."""
    if request.param == "root":
        return site, ""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "specdec-lab").symlink_to(site.resolve())
    return tmp_path / "www", "specdec-lab/"


def test_after_one_visit_every_page_and_the_visited_lab_work_with_the_server_stopped(browser, site, where):
    served, subpath = where
    server = Server(served)
    base = f"http://127.0.0.1:{server.port}/{subpath}"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        lab = visit_online(context, base)
        assert lab.page.evaluate(REGISTERED) == [[base, base + "sw.js"],
                                                 [base + "lab/", base + "lab/service-worker.js?enableCache=false"]]
        server.stop()
        server = None
        failed, pending = [], {}
        page = None

        def open_offline(url):
            """In a new tab: the page's document and the theme's bundle; then its own load (the
            lab's frame beside it included), or what is still pending after 30 s."""
            nonlocal page
            if page:
                page.close()
            page = context.new_page()
            page.on("requestfailed", lambda r: (failed.append((r.failure, r.url)), pending.pop(r.url, None)))
            page.on("request", lambda r: pending.__setitem__(r.url, r.resource_type))
            page.on("requestfinished", lambda r: pending.pop(r.url, None))
            page.goto(url, wait_until="domcontentloaded", timeout=30_000)
            wait_until(lambda: page.evaluate("() => !!window.document$"), 30, what=f"the theme's bundle on {url}")
            try:
                page.wait_for_load_state("load", timeout=30_000)
            except Exception:
                raise AssertionError(f"{url} offline: still pending after 30 s: {pending}") from None
        for path in sitemap_paths(site):
            open_offline(base + path)
            assert page.locator("h1").first.inner_text().strip(), path
        open_offline(base)
        toy = page.locator(".sd-toy button").first
        wait_until(lambda: toy.count() == 1, 30, what="the toy's buttons")
        assert page.locator(".sd-progress").count() == 1
        assert page.locator(".sd-progress").inner_text().strip()
        assert search(page, "接受率"), "search offline"
        page.screenshot(path=str(SHOTS / f"offline-lesson1-{subpath.strip('/') or 'root'}.png"))
        # (a page left while its lab frame or search worker still loads cancels those: ERR_ABORTED)
        assert [f for f in failed if "/lab/" not in f[1] and f[0] != "net::ERR_ABORTED"] == []
        offline_lab = LabPage.open(context, base)
        assert run_every_cell(offline_lab) == []
        offline_lab.page.screenshot(path=str(SHOTS / f"offline-lab-ran-{subpath.strip('/') or 'root'}.png"))
        assert offline_lab.errors == []
    finally:
        context.close()
        if server:
            server.stop()


def service_worker_heaps(context, page) -> dict:
    """MB of each service worker's V8 heap as found, no collection forced (DevTools'
    Runtime.getHeapUsage): {script's name: (used, its ArrayBuffers' memory)}."""
    out = {}
    with worker_sessions(context, page) as workers:
        for info, session in workers.attached:
            if info["type"] != "service_worker":
                continue
            usage = workers.call(session, "Runtime.getHeapUsage")
            assert usage, f"no heap usage from {info['url']} within 20 s"
            name = info["url"].rsplit("/", 1)[-1].split("?")[0]
            out[name] = (usage["usedSize"] / 2**20, usage["backingStorageSize"] / 2**20)
    return out


def test_keeping_the_first_visits_lab_leaves_no_copies_of_its_files_in_the_workers(browser, site):
    """Issue 46: the lab's files are kept with the browser checking their hash (a fetch's
    integrity) and the cache reading them from the network, so neither worker holds a copy of
    them in its heap. Each file's bytes hashed in the worker (a clone read whole) were garbage
    there until its next collection: 6.5 and 9.9 MB of ArrayBuffers in the two workers right
    after lesson 1's Run all (0.1 MB each since), 20 to 40 MB of PSS each (lab_memory.py)."""
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        lab = visit_online(context, base)
        heaps = service_worker_heaps(context, lab.page)
        assert sorted(heaps) == ["service-worker.js", "sw.js"], heaps
        assert all(buffers < 2 for _, buffers in heaps.values()), heaps
        # and the lab is kept whole: Python's WebAssembly is in the cache
        files = json.loads((site / "offline.json").read_text())["files"]
        wasm = next(p for p in files if p.endswith("pyodide.asm.wasm"))
        assert lab.page.evaluate("(key) => caches.match(key).then((r) => !!r)", base + wasm)
    finally:
        context.close()
        server.stop()


def new_build(site: Path, folder: Path) -> Path:
    """The same site with lesson 1's title changed and its offline.json written again."""
    copy = folder / "site2"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("*.br"))
    page = copy / "index.html"
    html = page.read_text(encoding="utf-8")
    page.unlink()
    page.write_text(html.replace("</h1>", "（新版）</h1>", 1), encoding="utf-8")
    write_manifest(copy)
    return copy


def test_a_new_build_replaces_the_old_one_whole_after_the_notice(browser, site, tmp_path):
    server = Server(site)
    port = server.port
    base = f"http://127.0.0.1:{port}/"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        lab = visit_online(context, base)
        old = caches_held(lab.page)
        assert len(old) == 1, old
        server.stop()
        server = Server(new_build(site, tmp_path), port=port)
        page = context.new_page()
        page.goto(base + "your-gpu/")
        notice = page.locator(".sd-update")
        wait_until(lambda: notice.count() == 1, 120, step=0.5, what="the 課程已更新 notice")
        assert "課程已更新" in notice.inner_text()
        page.screenshot(path=str(SHOTS / "offline-update-notice.png"))
        page.goto(base)
        assert "（新版）" not in page.locator("h1").first.inner_text()   # still the old build
        wait_until(lambda: page.locator(".sd-update").count() == 1, 30, what="the notice again")
        page.locator(".sd-update a").click(no_wait_after=True)
        wait_until(lambda: "（新版）" in page.locator("h1").first.inner_text(), 30, what="the new build")
        held = caches_held(page)
        new_version = json.loads((tmp_path / "site2" / "offline.json").read_text())["version"]
        assert held == [f"specdec-{new_version}"]
        # the lab's files came over: Python is in the new cache, not fetched again
        wasm = next(p for p in json.loads((tmp_path / "site2" / "offline.json").read_text())["files"]
                    if p.endswith("pyodide.asm.wasm"))
        assert page.evaluate("(key) => caches.match(key).then((r) => !!r)", base + wasm)
    finally:
        context.close()
        if server:
            server.stop()


# a file Python writes in the lab's drive reaches the page's contents (JupyterLite's /api/drive
# relay, in the worker)
DRIVE = "open('offline-check.txt', 'w').write('離線')"


def test_the_labs_drive_and_an_upload_reach_python_through_the_sites_worker(browser, site):
    """A page without a lab first (the knowledge card): the site's worker is in control of the
    next page's lab too (JupyterLite's own is never registered), and carries JupyterLite's relay:
    the kernel lists the drive's notebooks, an upload reaches the bench cell."""
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        first = context.new_page()
        first.goto(base + "knowledge-card/")
        wait_until(lambda: first.evaluate(REGISTERED) == [[base, base + "sw.js"]], 60, step=0.25,
                   what="the site's worker active")
        first.close()
        chosen = sorted(p for p in (ROOT / "tests" / "fixtures" / "vllm" / "bench").glob("*.json")
                        if re.search(r"-concurrency(16|32|64)-", p.name))
        lab = LabPage.open(context, base + "your-gpu/")
        assert lab.page.evaluate("() => navigator.serviceWorker.controller.scriptURL") == base + "sw.js"
        lab.run_all(early=True)
        lab.wait_all_run(timeout=400)
        frame_worker = lab.frame().evaluate("() => navigator.serviceWorker.controller && "
                                            "navigator.serviceWorker.controller.scriptURL")
        assert frame_worker == base + "sw.js"
        assert lab.page.evaluate(REGISTERED) == [[base, base + "sw.js"]]
        listing = lab.in_app("""return new Promise((done) => {
            const future = nb.sessionContext.session.kernel.requestExecute({code: arg});
            let out = null;
            future.onIOPub = (m) => { if (m.header.msg_type === 'execute_result') out = m.content.data['text/plain']; };
            future.done.then(() => done(out));
          });""", DRIVE)
        assert listing == "2", listing            # characters written
        seen = lab.in_app("return app.serviceManager.contents.get('offline-check.txt', "
                          "{content: true, format: 'text'}).then((m) => m.content);")
        assert seen == "離線"
        lab.show_cell("upload")
        frame = lab.frame()
        button = frame.locator("button.widget-upload")
        wait_until(lambda: button.count() == 1 and button.is_visible(), 30, what="the upload button on screen")
        with lab.page.expect_file_chooser(timeout=30_000) as chooser:
            button.click(timeout=30_000)
        chooser.value.set_files([str(p) for p in chosen])
        wait_until(lambda: "(6)" in button.text_content(), 30, what="the button counting 6 files")
        outputs = lab.in_app(RUN_CELL, lab.show_cell("bench"))
        printed = "".join(o["text"] for o in outputs if o["output_type"] == "stream") \
            if isinstance(outputs, list) else outputs
        assert re.findall(r"併發\s+(\d+)：", printed) == ["16", "32", "64"], printed
        assert lab.errors == []
    finally:
        context.close()
        server.stop()


def test_an_insecure_classroom_origin_has_no_worker_and_the_lab_runs(browser, site):
    server = Server(site)
    base = f"http://{CLASSROOM}:{server.port}/"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        lab = LabPage.open(context, base + "your-gpu/")
        assert lab.page.evaluate("() => [window.isSecureContext, 'serviceWorker' in navigator, "
                                 "window.specdecOffline === undefined]") == [False, False, True]
        assert run_every_cell(lab) == []
        assert lab.errors == []
    finally:
        context.close()
        server.stop()


def test_the_whole_course_on_request_then_cleared_on_request(browser, site):
    """Lesson 1's progress view: the storage line, 「整門課離線用」 saying its megabytes, which
    fetches every file of the build when pressed (a progress bar, then a sentence); then
    「清除離線資料」 asks first and says it cleared: no build cache left."""
    files = json.loads((site / "offline.json").read_text())["files"]
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(base)
        wait_until(lambda: page.evaluate(REGISTERED) == [[base, base + "sw.js"]], 60, step=0.25,
                   what="the site's worker active")
        page.reload()
        whole = page.locator(".sd-offline__whole")
        wait_until(lambda: "下載" in whole.inner_text(), 30, what="the whole course's megabytes")
        megabytes = float(re.search(r"（下載 ([\d.]+)\u00a0MB）", whole.inner_text())[1])
        assert 0 < megabytes <= sum(size for _, size in files.values()) / 1e6
        assert re.search(r"存了 [\d.]+\u00a0MB", page.locator(".sd-offline__used").inner_text())
        whole.scroll_into_view_if_needed()
        whole.click()
        said = page.locator(".sd-offline__said")
        wait_until(lambda: page.locator(".sd-offline__bar").is_visible() or "整門課已存好" in said.inner_text(),
                   60, step=0.1, what="the progress bar")
        if page.locator(".sd-offline__bar").is_visible():
            page.locator(".sd-offline").screenshot(path=str(SHOTS / "offline-whole-progress-390.png"))
        wait_until(lambda: "整門課已存好" in said.inner_text(), 300, step=0.5, what="the whole course kept")
        assert whole.is_hidden()
        (held,) = caches_held(page)
        count = page.evaluate("(name) => caches.open(name).then((c) => c.keys()).then((k) => k.length)", held)
        assert count == len(files) + 1                          # and the build's manifest
        page.locator(".sd-offline").screenshot(path=str(SHOTS / "offline-whole-done-390.png"))
        asked = []
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        page.locator(".sd-offline__clear").click()
        wait_until(lambda: "已清除離線資料" in said.inner_text(), 30, what="the clearing said")
        assert asked and "離線資料" in asked[0]
        assert caches_held(page) == []
    finally:
        context.close()
        server.stop()


SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection', {configurable: true,
  get: () => ({saveData: true, effectiveType: '4g', addEventListener() {}})});"""


def test_a_browser_saving_data_stores_nothing_until_the_learner_asks(browser, site):
    """With save-data on, lesson 1 registers no worker and caches nothing by itself (its load and
    5 s more); 「整門課離線用」 still says its megabytes, and pressed, registers the worker and
    keeps the whole build."""
    files = json.loads((site / "offline.json").read_text())["files"]
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_init_script(SAVE_DATA)
    try:
        page = context.new_page()
        page.goto(base)
        whole = page.locator(".sd-offline__whole")
        wait_until(lambda: "MB" in whole.inner_text(), 30, what="the whole course's megabytes")
        page.wait_for_timeout(5000)
        assert page.evaluate(REGISTERED) == [] and caches_held(page) == []
        whole.scroll_into_view_if_needed()
        whole.click()
        said = page.locator(".sd-offline__said")
        wait_until(lambda: "整門課已存好" in said.inner_text(), 300, step=0.5, what="the whole course kept")
        (held,) = caches_held(page)
        count = page.evaluate("(name) => caches.open(name).then((c) => c.keys()).then((k) => k.length)", held)
        assert count == len(files) + 1
    finally:
        context.close()
        server.stop()


@pytest.fixture(scope="module")
def firefox_browser():
    from support.firefox import firefox
    with firefox(ROOT / "build" / "test-output" / "firefox-offline-driver.log") as instance:
        yield instance


def test_firefox_opens_every_page_offline_after_one_visit(firefox_browser, site):
    """Firefox ESR: the knowledge card visited (no lab: the worker registers at its load and keeps
    every lesson page), the server stopped, every page of the sitemap opens in a new tab of the
    same window with its title and the theme's bundle, twice over. The labs were not kept: each
    lab frame gets the worker's 「離線中」 page, and the worker is still registered after them all
    (Firefox unregisters a worker that fails three navigations: it did, on the third lab page)."""
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    try:
        first = firefox_browser.open(base + "knowledge-card/")
        wait_until(lambda: first.evaluate(REGISTERED) == [[base, base + "sw.js"]], 60, step=0.5,
                   what="the site's worker active in Firefox")
        # the worker names the build's cache current only once every lesson page is in it
        wait_until(lambda: first.evaluate(BUILD_CACHE_COMPLETE, base), 120, step=0.5,
                   what="the worker to name the build's cache complete (offline-state's current)")
        server.stop()
        server = None
        lab_frames = 0
        for path in sitemap_paths(site) * 2:
            page = firefox_browser.open(base + path, beside=first)
            assert page.evaluate("() => document.querySelector('h1').textContent.trim()"), path
            assert page.evaluate("() => !!window.document$"), path
            if page.evaluate("() => !!document.querySelector('.sd-lab__frame')"):
                wait_until(lambda: "離線中" in (page.evaluate(FRAME_TEXT) or ""), 30, step=0.5,
                           what=f"the 離線中 page in {path}'s lab frame")
                # the panel says so too (it said 「這裡沒有實驗場…mkdocs serve」 to an offline learner)
                wait_until(lambda: "離線中" in page.evaluate(PANEL_STATUS), 30, step=0.5,
                           what=f"the 離線中 status in {path}'s lab panel")
                lab_frames += 1
            if path == "":
                page.screenshot(SHOTS / "offline-firefox-lesson1.png")
            page.close()
        assert lab_frames >= 3
        assert first.evaluate(REGISTERED) == [[base, base + "sw.js"]]
    finally:
        if server:
            server.stop()


# the lab panel's status line
PANEL_STATUS = "() => (document.querySelector('.sd-lab__status-text') || {}).textContent || ''"

# the text of a lesson page's lab frame (same origin), or null before it has a body
FRAME_TEXT = """() => { const f = document.querySelector('.sd-lab__frame');
  return f && f.contentDocument && f.contentDocument.body ? f.contentDocument.body.innerText : null; }"""


def test_firefox_runs_the_visited_lab_offline(firefox_browser, site):
    """Firefox ESR: lesson 1 with its lab run online (the worker keeps what it fetched), the
    server stopped: in a new tab of the same window the lab starts and runs every cell."""
    from support.lab import EngineLab
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    try:
        online = EngineLab.open(firefox_browser, base)
        assert run_every_cell(online) == []
        wait_until(lambda: (online.page.evaluate("() => window.specdecOffline && window.specdecOffline.kept") or 0) > 0,
                   180, step=0.5, what="the worker keeping the lab's files in Firefox")
        server.stop()
        server = None
        offline = EngineLab(firefox_browser.open(base, init=[TIMELINE], beside=online.page))
        assert run_every_cell(offline) == []
        offline.page.screenshot(SHOTS / "offline-firefox-lab-ran.png")
        assert offline.errors == []
    finally:
        if server:
            server.stop()


def test_webkit_opens_every_page_and_runs_the_visited_lab_offline(site):
    """WebKitGTK (Safari's engine): lesson 1 with its lab run online, the server stopped: every
    page of the sitemap opens in a new window with its title and the theme's bundle, and lesson 1's
    lab starts and runs every cell. (site/serve.py's own server: the recording one of test_webkit
    changes the pages' bytes, which the worker would rightly refuse to keep.)"""
    from types import SimpleNamespace
    from support.lab import EngineLab
    from support.webkit import webkit
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    try:
        with webkit(SimpleNamespace(init=[], lab_init=[]),
                    ROOT / "build" / "test-output" / "webkit-offline-driver.log") as browser:
            online = EngineLab(browser.open(base))
            assert run_every_cell(online) == []
            wait_until(lambda: (online.page.evaluate("() => window.specdecOffline && window.specdecOffline.kept")
                                or 0) > 0, 180, step=0.5, what="the worker keeping the lab's files in WebKit")
            wait_until(lambda: online.page.evaluate(BUILD_CACHE_COMPLETE, base), 120, step=0.5,
                       what="the worker to name the build's cache complete")
            server.stop()
            server = None
            for path in sitemap_paths(site):
                page = browser.open(base + path)
                assert page.evaluate("() => document.querySelector('h1').textContent.trim()"), path
                wait_until(lambda: page.evaluate("() => !!window.document$"), 30, what=f"the theme's bundle on {path}")
                page.close()
            offline = EngineLab(browser.open(base))
            assert run_every_cell(offline) == []
            offline.page.screenshot(SHOTS / "offline-webkit-lab-ran.png")
    finally:
        if server:
            server.stop()
