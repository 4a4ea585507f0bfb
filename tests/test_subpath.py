"""Browser layer on another host: the whole site built for http://127.0.0.1:PORT/specdec-lab/
(SPECDEC_SITE_URL, as for a GitHub Pages project site) and served from the folder above it by a
plain static server (the standard library's, as `python -m http.server`: no gzip, no cache
headers; a missing file gets the site's 404.html, as on GitHub Pages).

In Chromium: every page (the sitemap's) loads with no failed request and no error, instant
navigation moves between pages without a reload, search finds 接受率, each lab page goes live and
runs every cell, the 404 page is styled (as /specdec-lab/404.html and for a missing URL; also for a
build not told its URL). In Firefox: lesson 1 and its lab. Screenshots: subpath-*.png.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from support.firefox import firefox
from support.cjk_lines import MALFORMED_MATH
from support.lab import EngineLab, LabPage, wait_until
from support.lab_checks import note_first_output
from support.lesson import nav_link_to, rounds_drawn
from support.search import search
from support.server import chromium, serve_plain
from support.site import ROOT, build_site, lab_pages

pytestmark = pytest.mark.browser

SHOTS = ROOT / "build" / "test-output" / "screenshots"
SUBPATH = "specdec-lab/"
# every lesson with a lab, in mkdocs.yml's nav order: {"lesson1": "", "lesson2": "draft-trees/", …}
LAB_PAGES = {notebook.removesuffix(".ipynb").replace("_", "-"): path for notebook, path in lab_pages().items()}


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """www/specdec-lab/ is the site as built for its URL (what an instructor uploads). A build not
    told its URL cannot have a working 404 page under a subpath (its assets are absolute paths
    under the URL), so `make site` refuses to build without one (tests/test_deploy.py)."""
    folder = tmp_path_factory.mktemp("subpath")
    www = folder / "www"
    www.mkdir()
    with serve_plain(www, missing_page=SUBPATH + "404.html") as (root_url, served):
        base = root_url + SUBPATH
        build_site(folder / "build", site_url=base).rename(www / SUBPATH)
        yield SimpleNamespace(base=base, root=root_url, served=served, www=www)


@pytest.fixture(scope="module")
def browser():
    with chromium() as instance:
        yield instance


class Visit:
    """A Chromium page in its own context that records every response status, failed request,
    page error and request to another host, and what the server answered meanwhile."""

    def __init__(self, browser, host, width=1440, height=900):
        self.host, self.server_from = host, len(host.served)
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.responses, self.failed, self.documents = [], [], []
        self.context.on("response", lambda r: self.responses.append((r.status, r.url)))
        self.context.on("requestfailed", lambda r: self.failed.append((r.failure, r.url)))
        self.context.on("request", lambda r: r.resource_type == "document" and self.documents.append(r.url))

    def lab(self, url, wait_until: str = "load") -> LabPage:
        self.page_lab = LabPage.open(self.context, url, wait_until=wait_until)
        return self.page_lab

    def lab_frame_loads(self) -> list[str]:
        """Every request for the lab's page (the frame beside the lesson): one per visit."""
        return [u for u in self.documents if u.startswith(self.host.base + "lab/notebooks/")]

    def problems(self, left_page: bool = False) -> dict:
        """left_page: the learner moved to another page, which cancels what the lab was still
        fetching: net::ERR_ABORTED in the page, net::ERR_FAILED in the lab's kernel worker, which
        ends with its frame (seen for pyodide.asm.wasm); not failed requests. The server's own
        answers are still checked."""
        lab = self.page_lab
        cancelled = lambda f, u: left_page and (  # noqa: E731
            f == "net::ERR_ABORTED" or (f == "net::ERR_FAILED" and u.startswith(self.host.base + "lab/")))
        return {"http errors": [(s, u) for s, u in self.responses if s >= 400],
                "failed": [(f, u) for f, u in self.failed if not cancelled(f, u)],
                "page errors": lab.errors, "outside": lab.outside,
                "server errors": [(s, p) for s, p in self.host.served[self.server_from:] if s >= 400]}

    def close(self):
        self.context.close()


NO_PROBLEMS = {"http errors": [], "failed": [], "page errors": [], "outside": [], "server errors": []}


def sitemap_pages(host) -> list[str]:
    locs = [e.text for e in ET.parse(host.www / SUBPATH / "sitemap.xml").getroot().iter()
            if e.tag.endswith("loc")]
    assert locs and all(loc.startswith(host.base) for loc in locs), locs
    return [loc[len(host.base):] for loc in locs]


# --------------------------------------------------------------------------- Chromium

def test_every_page_loads_with_no_failed_request(browser, host):
    """Every page of the sitemap; a lab page's own files too, Python up and every cell run, in
    test_each_lab_page_goes_live_and_runs_every_cell (one visit each: a Python start is the
    costliest thing a test does)."""
    pages = sitemap_pages(host)
    assert set(LAB_PAGES.values()) | {"knowledge-card/"} <= set(pages), pages
    for path in sorted(set(pages) - set(LAB_PAGES.values())):
        visit = Visit(browser, host)
        try:
            lab = visit.lab(host.base + path)
            lab.page.wait_for_load_state("networkidle")
            assert lab.page.locator("h1").first.inner_text().strip(), path
            lab.page.screenshot(path=str(SHOTS / f"subpath-{path.strip('/')}.png"))
            assert visit.problems() == NO_PROBLEMS, path
        finally:
            visit.close()


def to_the_knowledge_card(page, host) -> None:
    """Follow the sidebar's link to knowledge-card/ (Material's instant navigation), the page
    marked first so that a reload would show (window.__sameDocument gone)."""
    page.evaluate("window.__sameDocument = true")
    nav_link_to(page, host.base + "knowledge-card/").click()
    page.wait_for_url("**/specdec-lab/knowledge-card/")
    page.wait_for_function("() => document.querySelector('article h1')")


def test_instant_navigation_moves_between_pages_without_a_reload(browser, host):
    visit = Visit(browser, host)
    try:
        page = visit.lab(host.base).page
        to_the_knowledge_card(page, host)
        nav_link_to(page, host.base).click()
        page.wait_for_function("() => document.querySelector('.sd-toy .sd-toy__box')")
        assert page.evaluate("window.__sameDocument === true"), "navigation reloaded the page (not instant)"
        assert page.url == host.base
        before = rounds_drawn(page)
        page.locator(".sd-toy .sd-toy__draw").click()
        assert rounds_drawn(page) == before + 1
        assert visit.problems(left_page=True) == NO_PROBLEMS
    finally:
        visit.close()


# the lab folded (the prefetch of Python's start runs only while the lab does not load), and the
# page's idle moments held back until the test lets them go (lab-prefetch.js starts in one)
FOLDED_AND_IDLE_HELD = """localStorage.setItem('specdec-lab:layout', JSON.stringify({folded: true}));
window.__idle = []; window.requestIdleCallback = (f) => { window.__idle.push(f); return window.__idle.length; };"""


def test_the_start_prefetch_asks_for_the_lab_where_it_is_after_instant_navigation(browser, host):
    """lab-prefetch.js starts in an idle moment, which can come after Material's instant navigation
    moved to a page in another folder (knowledge-card/): it still asks for lab/specdec-boot.json
    under the site's root, not under that folder."""
    visit = Visit(browser, host)
    visit.context.add_init_script(FOLDED_AND_IDLE_HELD)
    try:
        page = visit.lab(host.base).page
        to_the_knowledge_card(page, host)
        assert page.evaluate("window.__sameDocument === true"), "navigation reloaded the page (not instant)"
        page.evaluate("window.__idle.splice(0).forEach((f) => f({didTimeout: false, timeRemaining: () => 50}))")
        page.wait_for_function("() => ['done', 'failed'].includes(document.documentElement.dataset.sdLabPrefetch)",
                               timeout=120_000)
        assert page.evaluate("document.documentElement.dataset.sdLabPrefetch") == "done"
        assert visit.problems(left_page=True) == NO_PROBLEMS
    finally:
        visit.close()


def test_search_finds_接受率(browser, host):
    visit = Visit(browser, host)
    try:
        page = visit.lab(host.base).page
        found = set(search(page, "接受率"))
        assert {host.base, host.base + "knowledge-card/"} <= found, sorted(found)
        page.screenshot(path=str(SHOTS / "subpath-search-接受率.png"))
        assert visit.problems() == NO_PROBLEMS
    finally:
        visit.close()


@pytest.mark.parametrize("name", list(LAB_PAGES))
def test_each_lab_page_goes_live_and_runs_every_cell(browser, host, name):
    visit = Visit(browser, host)
    try:
        lab = visit.lab(host.base + LAB_PAGES[name])
        assert lab.page.locator("h1").first.inner_text().strip(), name
        lab.run_all(early=True)
        ran = lab.wait_all_run(timeout=400)
        cells = [c for c in ran["cells"] if c["type"] == "code" and c["source"].strip()]
        errors = [(c["source"][:60], o.get("ename"), o.get("evalue"))
                  for c in cells for o in c["outputs"] if o["output_type"] == "error"]
        assert errors == []
        assert sorted(c["count"] for c in cells) == list(range(1, len(cells) + 1))
        note_first_output(f"Chromium, plain server, subpath, {name}", lab.first_output())
        lab.page.screenshot(path=str(SHOTS / f"subpath-lab-{name}-ran.png"))
        assert visit.problems() == NO_PROBLEMS
        assert len(visit.lab_frame_loads()) == 1, visit.lab_frame_loads()
    finally:
        visit.close()


def test_the_lab_frame_loads_once_when_the_themes_bundle_starts_after_it(browser, host):
    """Material's bundle, as it starts, makes every relative src and href in the page absolute by
    assigning it to itself, and that loads an iframe again. The lab's frame goes in after the
    lesson's first paint, which can come while the bundle is still on its way (a busy machine):
    then its first load was aborted (net::ERR_ABORTED, the server's BrokenPipe) and the lab loaded
    twice. Here the bundle is held back until the frame is in."""
    visit = Visit(browser, host)
    held, released = [], []
    visit.context.route("**/assets/javascripts/bundle.*.min.js",
                        lambda route: route.continue_() if released else held.append(route))
    try:
        lab = visit.lab(host.base + LAB_PAGES["your-gpu"], wait_until="commit")
        # (the page's answer first: Playwright hands over the held request only during a call)
        wait_until(lambda: lab.page.evaluate("() => !!document.querySelector('.sd-lab__frame')") and held,
                   30, what="the lab's frame in, the theme's bundle held back")
        released.append(True)
        for route in held:
            route.continue_()
        wait_until(lambda: lab.page.evaluate("() => !!window.document$"), 30, what="the theme's bundle started")
        lab.wait_for("notebookShown", timeout=120)
        assert visit.lab_frame_loads() == [host.base + "lab/notebooks/index.html?path=your_gpu.ipynb"]
        assert visit.problems() == NO_PROBLEMS
    finally:
        visit.close()


# the page as styled by the theme: its style sheets loaded, the header sticky, the logo icon small
STYLED = """() => ({
  sheets: [...document.querySelectorAll('link[rel=stylesheet]')].map((l) => {
    let rules = 0;
    try { rules = l.sheet ? l.sheet.cssRules.length : 0; } catch (e) { /* not readable */ }
    return [l.href, rules > 0]; }),
  header: getComputedStyle(document.querySelector('.md-header')).position,
  logo: Math.round(document.querySelector('.md-header .md-logo svg, .md-header .md-logo img').getBoundingClientRect().height),
  heading: (document.querySelector('article h1') || {}).textContent || '',
})"""


@pytest.mark.parametrize("path, status", [(SUBPATH + "404.html", 200),
                                          (SUBPATH + "no/such/page/", 404)],
                         ids=["404.html", "missing URL"])
def test_the_404_page_is_styled(browser, host, path, status):
    visit = Visit(browser, host)
    try:
        page = visit.context.new_page()
        response = page.goto(host.root + path)
        assert response.status == status
        page.wait_for_load_state("networkidle")
        name = re.sub(r"\W+", "-", path).strip("-")
        page.screenshot(path=str(SHOTS / f"subpath-{name}.png"))
        styled = page.evaluate(STYLED)
        unloaded = [href for href, loaded in styled["sheets"] if not loaded]
        assert len(styled["sheets"]) >= 3 and unloaded == [], unloaded
        assert styled["header"] == "sticky" and styled["logo"] <= 48, styled
        assert "404" in styled["heading"] or "找不到" in styled["heading"], styled["heading"]
        failed = [(s, u) for s, u in visit.responses if s >= 400 and u != host.root + path]
        assert failed == [] and visit.failed == []
    finally:
        visit.close()


# --------------------------------------------------------------------------- Firefox

@pytest.fixture(scope="module")
def firefox_browser():
    with firefox(ROOT / "build" / "test-output" / "firefox-subpath-driver.log") as instance:
        yield instance


def firefox_problems(browser, page, server_from, host) -> dict:
    log = page.log()
    return {"http errors": [(r["status"], r["url"]) for r in log["responses"] if r["status"] >= 400],
            "failed": log["failed"],
            "page errors": log["errors"], "outside": browser.outside,
            "server errors": [(s, p) for s, p in host.served[server_from:] if s >= 400]}


def test_firefox_opens_lesson_1_on_the_subpath(firefox_browser, host):
    server_from = len(host.served)
    page = firefox_browser.open(host.base)
    try:
        wait_until(lambda: page.evaluate("() => !!document.querySelector('.sd-toy .sd-toy__box')"
                                         " && !!document.querySelector('.sd-quiz--live')"), 30,
                   what="toy and quiz mounted")
        before = rounds_drawn(page)
        page.click(".sd-toy .sd-toy__draw")
        assert rounds_drawn(page) == before + 1
        page.screenshot(SHOTS / "subpath-firefox-lesson1.png")
        assert firefox_problems(firefox_browser, page, server_from, host) == NO_PROBLEMS
    finally:
        page.close()


def test_firefox_lab_goes_live_on_the_subpath(firefox_browser, host):
    server_from = len(host.served)
    lab = EngineLab.open(firefox_browser, host.base)
    try:
        lab.run_all(early=True)
        ran = lab.wait_all_run(timeout=400)
        cells = [c for c in ran["cells"] if c["type"] == "code" and c["source"].strip()]
        assert [o for c in cells for o in c["outputs"] if o["output_type"] == "error"] == []
        assert sorted(c["count"] for c in cells) == list(range(1, len(cells) + 1))
        note_first_output("Firefox, plain server, subpath, lesson1", lab.first_output())
        lab.page.screenshot(SHOTS / "subpath-firefox-lab-ran.png")
        assert firefox_problems(firefox_browser, lab.page, server_from, host) == NO_PROBLEMS
        assert lab.page.evaluate(MALFORMED_MATH) == []     # (Firefox's layout reports: firefox.mjs)
        # once: a second load (lab-panel.js's frame loaded again by Material's bundle) may come
        # from Firefox's cache, with nothing failed
        lab_page = host.base + "lab/notebooks/index.html?path=lesson1.ipynb"
        assert [u for u in lab.page.log()["requests"] if u == lab_page] == [lab_page]
    finally:
        lab.close()
