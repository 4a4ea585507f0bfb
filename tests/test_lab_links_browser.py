"""Lesson ↔ lab navigation in Chromium, on the whole site (lessons and lab) built for its server:
a click (or Enter) on lesson 1's 「實驗場 3️⃣」 opens the 實驗場 — beside the lesson on a wide screen
even when the learner had folded it, over the lesson on a phone — with that section's heading on
top: in the static preview before Python is live (the lab's page is held back), in the live
notebook after. Back on a phone closes the lab and leaves the learner in the lesson. Without
JavaScript the link opens the notebook's preview at that section. Screenshots:
build/test-output/screenshots/lab-link-*.png.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support.lab import LabPage, wait_until
from support.server import chromium, serve_site
from support.site import ROOT

pytestmark = pytest.mark.browser

SHOTS = ROOT / "build" / "test-output" / "screenshots"
NOTEBOOK = json.loads((ROOT / "notebooks" / "lesson1.ipynb").read_text(encoding="utf-8"))


def section(number: str) -> int:
    """The index of the notebook's Markdown cell headed N️⃣ (lesson 1's own notebook)."""
    return next(i for i, c in enumerate(NOTEBOOK["cells"])
                if c["cell_type"] == "markdown" and "".join(c["source"]).startswith(f"## {number}\ufe0f\u20e3"))


FOLDED = "localStorage.setItem('specdec-lab:layout', JSON.stringify({folded: true}));"
PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
DESKTOP = dict(viewport={"width": 1440, "height": 900})
# where the heading of preview cell `arg` is, against the preview's own box (px from its top)
PREVIEW_HEADING = """(i) => { const p = document.querySelector('.sd-lab__preview');
  const h = p && p.querySelector(`[data-cell="${i}"] :is(h3, h4, h5, h6)`);
  if (!h) return null;
  const box = p.getBoundingClientRect(), r = h.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
  return {top: r.top - box.top, bottom: box.bottom - r.bottom, seen: !!hit && h.contains(hit), text: h.textContent}; }"""
# the same for the live notebook's cell `arg` (run with the lab's app bound: LabPage.in_app)
LIVE_CELL_TOP = """
  const cell = nb.content.widgets[arg];
  if (!cell || !cell.node.isConnected) return null;
  return cell.node.getBoundingClientRect().top - nb.content.outerNode.getBoundingClientRect().top;"""


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """The whole site, built for the URL it is served at (SPECDEC_LAB_SITE=<folder>: one built
    already, as test_lab_browser.py takes it)."""
    if os.environ.get("SPECDEC_LAB_SITE"):
        with serve_site(Path(os.environ["SPECDEC_LAB_SITE"])) as url:
            yield url
        return
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    build_dir = tmp_path_factory.mktemp("lab-links")
    (build_dir / "site").mkdir()
    with serve_site(build_dir / "site") as url:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("SPECDEC_SITE_URL", url)
            build.build(build_dir=build_dir)
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as instance:
        yield instance


@pytest.fixture
def held_lab(browser, base_url):
    """held_lab(phone) -> LabPage of lesson 1 whose lab page is held back (Python never starts),
    the panel folded on a wide screen."""
    contexts = []

    def open_(phone: bool):
        context = browser.new_context(**(PHONE if phone else DESKTOP))
        context.add_init_script(FOLDED)
        context.route("**/lab/notebooks/index.html*", lambda route: None)       # held: never answered
        contexts.append(context)
        return LabPage.open(context, base_url, wait_until="domcontentloaded")

    yield open_
    for context in contexts:
        context.close()


def marker(page, number: str):
    return page.locator(f'a.sd-lab-link[data-lab-cell="{section(number)}"]').first


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_a_marker_opens_the_lab_at_its_section_before_python_is_live(held_lab, phone):
    lab = held_lab(phone)
    page = lab.page
    assert not page.evaluate("document.body.classList.contains('sd-lab-shown')")   # folded / closed
    for number in ("3", "1", "4"):                 # later, earlier, later again
        if number != "3" and phone:                # (the open lab covers the lesson: Back first)
            page.go_back()
            wait_until(lambda: not page.evaluate("document.body.classList.contains('sd-lab-shown')"), 10,
                       what="the lab closed by Back")
        link = marker(page, number)
        assert link.get_attribute("href").endswith(f"notebook-preview/lesson1.html#sd-nb-cell-{section(number)}")
        link.click()
        assert page.evaluate("document.body.classList.contains('sd-lab-shown')"), "the lab did not open"
        where = wait_until(lambda: (lambda w: w if w and abs(w["top"]) <= 2 else None)(
            page.evaluate(PREVIEW_HEADING, section(number))), 30, what=f"section {number}'s heading on top")
        assert where["seen"] and where["text"].startswith(f"{number}\ufe0f\u20e3"), where
        assert page.evaluate("document.activeElement.id") == "sd-lab"      # the keyboard is in the lab now
    if phone:
        page.go_back()
        wait_until(lambda: not page.evaluate("document.body.classList.contains('sd-lab-shown')"), 10,
                   what="the lab closed by Back")
        # still in the lesson (its hash is the theme's: navigation.tracking names the section read)
        assert urlsplit(page.url).path == "/" and page.locator("#sd-lab").count() == 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"lab-link-preview-{'phone' if phone else 'desktop'}.png"))
    assert lab.errors == []


def test_enter_on_a_marker_does_what_a_click_does(held_lab):
    lab = held_lab(False)
    marker(lab.page, "2").focus()
    lab.page.keyboard.press("Enter")
    where = wait_until(lambda: (lambda w: w if w and abs(w["top"]) <= 2 else None)(
        lab.page.evaluate(PREVIEW_HEADING, section("2"))), 30, what="section 2's heading on top")
    assert where["seen"]
    assert urlsplit(lab.page.url).path == "/"              # the lesson, not the preview's file


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_a_marker_shows_its_section_in_the_live_notebook(browser, base_url, phone):
    context = browser.new_context(**(PHONE if phone else DESKTOP))
    try:
        lab = LabPage.open(context, base_url)
        page = lab.page
        if phone:
            page.click(".sd-lab-open")
        lab.wait_for("notebookShown")
        wait_until(lambda: not page.evaluate("!!document.querySelector('.sd-lab__preview')"), 10, what="preview gone")
        if phone:
            page.go_back()                                   # back to the lesson, the lab kept
            wait_until(lambda: not page.evaluate("document.body.classList.contains('sd-lab-shown')"), 10,
                       what="the lab closed by Back")
        for number in ("3", "1"):
            if phone and number == "1":
                page.go_back()
                wait_until(lambda: not page.evaluate("document.body.classList.contains('sd-lab-shown')"), 10,
                           what="the lab closed by Back")
            marker(page, number).click()
            assert page.evaluate("document.body.classList.contains('sd-lab-shown')")
            wait_until(lambda: abs(lab.in_app(LIVE_CELL_TOP, section(number)) or 1e9) <= 30, 30,
                       what=f"cell {section(number)} (section {number}) on top of the live notebook")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"lab-link-live-{'phone' if phone else 'desktop'}.png"))
        assert lab.errors == []
    finally:
        context.close()


def test_without_javascript_a_marker_opens_the_notebooks_preview_there(browser, base_url):
    context = browser.new_context(java_script_enabled=False, **DESKTOP)
    try:
        page = context.new_page()
        page.goto(base_url)
        marker(page, "3").click()
        page.wait_for_url(f"**/notebook-preview/lesson1.html#sd-nb-cell-{section('3')}", timeout=10_000)
        assert page.evaluate("document.characterSet") == "UTF-8"
        heading = page.locator(f"#sd-nb-cell-{section('3')} h4")
        assert heading.inner_text().startswith("3\ufe0f\u20e3 K 該設多大")
        cell = page.locator(f"#sd-nb-cell-{section('3')}").bounding_box()
        assert abs(cell["y"]) <= 2 and heading.bounding_box()["y"] + heading.bounding_box()["height"] > 0
    finally:
        context.close()
