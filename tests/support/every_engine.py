"""The browser checks that hold in every engine, written once. A browser test module runs them in
its engine by subclassing, with its own fixtures (one site, one browser, one run of each lab page
a module, and xdist keeps one module to a worker):

    class TestEveryEnginePage(EveryEnginePage):       # fixtures: open_page, base_url
        name = "firefox"
    class TestEveryEngineLab(EveryEngineLab):         # fixtures: lab_run, browser
        name = "firefox"

open_page is tests/support/engines.py's opener; lab_run a dict of one lab page visited and run:
{lab (an EngineLab), notebook, shown_path, stored (STREAM_TEXTS before Python), ran (the notebook's
state after Run all), images (IMAGE_OUTPUTS after it)}. What only one engine has stays in its module.
"""
from __future__ import annotations

import json

import pytest

from .cjk_lines import MARKS, PUNCTUATION_WIDTHS, SIGNS, not_one_em, signs_not_narrow
from .engines import wait_for
from .lab import kernel_prints
from .lab_checks import LATER_PROBE, broken_images, later_fetched, stream_texts_of
from .lesson import BLOCK_PLACES, LATER_OFF, MEASURE_PREVIEW
from .search import IME_WAYS, search_finds, search_follows_input_method
from .site import ROOT

SHOTS = ROOT / "build" / "test-output" / "screenshots"


class Engine:
    name = ""           # the engine: its screenshots are build/test-output/screenshots/<name>-*.png
    px_slack = 0        # a glyph's width measured against an em, give or take this many px
    scroll_anchoring = True     # keeps the reader's place as content above changes height (not WebKit)

    def shot(self, page, what: str, full_page: bool = False):
        if full_page:       # (a whole-page capture draws blocks not yet laid out blank)
            page.evaluate(LATER_OFF)
        page.screenshot(SHOTS / f"{self.name}-{what}.png", full_page=full_page)


class EveryEnginePage(Engine):
    """Lesson pages: Chinese text measured, search typed into."""

    def test_signs_in_chinese_text_are_drawn_narrow(self, open_page):
        """× ÷ ± · ≈ in the lesson's Chinese text at a Latin font's width ("0.62 × 0.55 × 0.48 ≈"),
        not the full em the text's CJK font gives them (site/hooks/signs.py, course.css .sd-sign)."""
        page = open_page("your-gpu/")
        wait_for(page, "() => document.fonts.status === 'loaded'", 20, what="fonts")
        widths = page.evaluate(PUNCTUATION_WIDTHS, [".md-content article", SIGNS, False])
        assert {f"{sign} text" for sign in SIGNS} <= set(widths), sorted(widths)
        assert signs_not_narrow(widths, px_slack=self.px_slack) == {}

    def test_plain_blocks_wait_for_the_screen_only_with_scroll_anchoring(self, open_page):
        """Lesson 1's plain blocks (render_later.py) get content-visibility: auto where the engine
        keeps the reader's place as their guessed heights become real (Chromium, Firefox), and are
        laid out as usual where it does not (WebKit: scrolling up, the text would jump)."""
        page = open_page("", width=390, height=844)
        wait_for(page, "() => document.fonts.status === 'loaded'", 20, what="fonts")
        shown = page.evaluate("""() => [...new Set([...document.querySelectorAll('article .sd-later')]
            .map((block) => getComputedStyle(block).contentVisibility))]""")
        assert shown == ["auto" if self.scroll_anchoring else "visible"]

    @pytest.mark.parametrize("width", [1440, 390])
    def test_laying_blocks_out_later_moves_nothing(self, open_page, width):
        """Once laid out, a block marked by render_later.py sits where it would without its
        content-visibility, and so does everything after it (its containment stops margins
        collapsing through its edge: a code block's came out 32 px taller before course.css made
        up for it). Lessons 1 and 2."""
        for path in ("", "draft-trees/"):
            page = open_page(path, width=width, height=900 if width > 500 else 844)
            wait_for(page, "() => document.fonts.status === 'loaded'", 20, what="fonts")
            later = page.evaluate(BLOCK_PLACES, timeout=120)
            page.evaluate(LATER_OFF)
            plain = page.evaluate(BLOCK_PLACES, timeout=120)
            moved = [(a, b) for a, b in zip(later, plain) if abs(a[2] - b[2]) > 1 or abs(a[3] - b[3]) > 1]
            assert len(later) == len(plain) > 20 and moved == [], f"{path or 'lesson 1'}: blocks moved: {moved[:3]}"
            page.close()

    @pytest.mark.parametrize("width", [1440, 390])
    def test_full_width_punctuation_is_drawn_full_width(self, open_page, width):
        """A ， or 。 in Chinese text takes a full em, as the ideographs beside it do (with the
        theme's font-feature-settings "kern", "liga" on CJK text Firefox drew them half-width): in
        the lesson, and in the notebook's static preview beside it (on a phone once the lab is
        opened), measured with a Range."""
        page = open_page("", width=width, init=[MEASURE_PREVIEW], lab=True)
        if width < 500:
            page.click(".sd-lab-open")
        self.shot(page, f"lesson1-top-{width}")
        widths = page.evaluate(PUNCTUATION_WIDTHS, [".md-content article", MARKS, False])
        assert {"， text", "。 text", "： heading", "： text", "「 text", "、 text"} <= set(widths), sorted(widths)
        preview = wait_for(page, "() => window.__previewPunctuation", 60, what="the notebook preview measured")
        assert {"， text", "。 text", "： text"} <= set(preview), sorted(preview)
        assert (not_one_em(widths, self.px_slack), not_one_em(preview, self.px_slack)) == ({}, {}), \
            "full-width punctuation not 1 em wide (lesson, preview: width px, font px, text)"
        signs = page.evaluate("() => window.__previewSigns")     # the notebook's · and ×, narrow there too
        assert signs and signs_not_narrow(signs, px_slack=self.px_slack) == {}, signs
        ideographs = page.evaluate("""() => { const s = document.createElement('span');
            s.textContent = '投機解碼投機解碼'; s.style.fontSize = '20px';
            document.querySelector('.md-typeset').append(s);
            const w = s.getBoundingClientRect().width; s.remove(); return w; }""")
        assert 150 <= ideographs <= 170            # a CJK font: eight ideographs, eight ems
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width

    def test_search_finds_the_course_terms(self, open_page, base_url):
        page = open_page("")
        search_finds(page, "接受率", {base_url, base_url + "knowledge-card/"})
        self.shot(page, "search-接受率")
        # an option as the lessons write it: lunr read the leading "-" as "must not contain" and
        # found nothing (site/assets/search-query.js)
        search_finds(page, "--max-num-seqs", {base_url, base_url + "knowledge-card/", base_url + "your-gpu/"})
        search_finds(page, "草稿樹", {base_url + "draft-trees/"})

    @pytest.mark.parametrize("how", IME_WAYS)
    def test_search_follows_text_from_an_input_method(self, open_page, base_url, how):
        """Issue 46: text committed without a key going up (an input method's candidate picked
        with the mouse, a paste from the menu) left the results on the previous query, or on
        「打字進行搜尋」, until one more key press; and WebKit's Enter that commits Zhuyin (after
        compositionend, keyCode 229) opened the first result (site/assets/search-ime.js).
        "enter-chromium" passed before too (Material skips keys inside a composition): it guards
        that the fix keeps it. The results follow to 接受率 and Enter does not open a result."""
        page = open_page("")
        search_follows_input_method(page, how, base_url)
        if how == "enter-webkit":
            self.shot(page, "search-ime-接受率")


class PhonePrefetch(Engine):
    """On a phone the lab stays folded; lab-prefetch.js fetches Python's start files in a worker
    started from its own file (not on the lesson's thread). Chromium's own checks of it are in
    tests/test_lab_prefetch.py, against a site built with its lab."""

    def test_a_phone_prefetches_pythons_start_in_a_worker(self, open_page):
        page = open_page("", width=390, height=844)
        state = wait_for(page, "() => !['', 'fetching'].includes(document.documentElement.dataset.sdLabPrefetch || '')"
                         " && document.documentElement.dataset.sdLabPrefetch", 120, step=0.5,
                         what="the prefetch of Python's start files")
        assert state == "done"
        assert page.evaluate("() => !!document.querySelector('.sd-lab__frame')") is False


class EveryEngineLab(Engine):
    """Each lab page, visited once a module and run (the `lab_run` fixture)."""

    def page_errors(self, errors: list[str]) -> list[str]:
        """The lab page's errors that fail a test (an engine may know one it cannot help)."""
        return errors

    def test_the_lab_goes_live_and_runs_every_cell(self, lab_run, browser):
        ran = lab_run["ran"]
        assert lab_run["shown_path"] == lab_run["notebook"]
        assert ran["dialogs"] == 0
        cells = [c for c in ran["cells"] if c["type"] == "code" and c["source"].strip()]
        errors = [(c["source"][:60], o.get("ename"), o.get("evalue"))
                  for c in cells for o in c["outputs"] if o["output_type"] == "error"]
        assert errors == []
        assert sorted(c["count"] for c in cells) == list(range(1, len(cells) + 1))
        assert [e["stage"] for e in lab_run["lab"].events()][-1] == "ready"
        assert self.page_errors(lab_run["lab"].errors) == []
        if browser.outside is not None:
            assert browser.outside == []

    def test_every_image_output_has_loaded_after_run_all(self, lab_run):
        assert lab_run["images"], "no image output after Run all"
        assert broken_images(lab_run["images"]) == []

    def test_stored_outputs_show_the_notebooks_text_before_python_runs(self, lab_run):
        notebook = json.loads((ROOT / "notebooks" / lab_run["notebook"]).read_text(encoding="utf-8"))
        expected = stream_texts_of(notebook)
        shown = {c["cell"]: c.get("text", "") for c in lab_run["stored"]}
        assert set(shown) == set(expected)
        differ = {i: (shown[i][:120], expected[i][:120]) for i in expected
                  if shown[i].rstrip("\n") != expected[i].rstrip("\n")}
        assert differ == {}, f"shown vs stored: {differ}"

    def test_a_module_and_a_source_line_that_come_later_arrive(self, lab_run):
        """A module only a .later.zip holds imports, and a traceback through the standard library
        shows its lines (site/lab/kernel/later_import.py: a synchronous request from the kernel's worker,
        which Firefox and WebKit allow, as they must: no WebAssembly stack switching in WebKit)."""
        assert later_fetched(kernel_prints(lab_run["lab"], LATER_PROBE)) == []
