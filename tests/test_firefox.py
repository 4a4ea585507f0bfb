"""Browser layer in Firefox: Debian's firefox-esr driven over WebDriver BiDi by npm puppeteer-core
(tests/support/firefox.py; Playwright's Firefox needs a browser build of its own that cannot be
fetched here), against the whole site built for and served by site/serve.py's server.

The checks every engine runs (tests/support/every_engine.py: Chinese text measured, search, each
lab page live and run) and Firefox's own, through the same page interface (tests/support/engines.py).
Lesson text draws full-width punctuation at full width (measured) and, on a phone, no line starts
with ，。、 beside a formula or code, and a display formula too wide scrolls with a fading edge; the
toy and every quiz question answer clicks and keys, search finds the course's terms, each lab page goes live in Pyodide and runs
every cell (the stored outputs shown before it, as the notebook file has them; every image output
loaded after it), with no page error and no request leaving 127.0.0.1. Screenshots for people go to
build/test-output/screenshots/firefox-*.png.
"""
from __future__ import annotations

import pytest

from specdec_lab import expected_tokens
from support.cjk_lines import (CODE_SPLIT_IN_TABLES, DISPLAY_FORMULAS, LINE_START_PROBLEMS, MALFORMED_MATH,
                               MARKS, OPEN_ANSWERS, OPTIONS_SPLIT_AFTER_HYPHENS, PUNCTUATION_WIDTHS,
                               SCROLL_HINTS_SETTLED, SEARCH_TEXT_DRAWN, SHORT_CODE_SPLIT,
                               TABLE_HINTS_SETTLED, WIDE_TABLES, check_display_formulas, check_wide_tables,
                               not_one_em)
from support.engines import opener, started
from support.every_engine import SHOTS, EveryEngineLab, EveryEnginePage, PhonePrefetch
from support.lab import EngineLab, wait_until
from support.lab_checks import IMAGE_OUTPUTS, KEYS_IN_LESSON, STREAM_TEXTS, press_keys_through_the_start
from support.lesson import (LAB_PAGES, LABELS, LATER_OFF, LESSON_PAGES, QUIZ_STATE,
                            answer_by_keys, answered, check_round, mounted, option,
                            round_at_alpha_one, rounds_drawn, scroll_to_settled,
                            toy_cells_overflowing, toy_round,
                            wait_for_motion_to_end)
from support.site import LESSON1_QUIZ_ANSWERS, LESSON2_QUIZ_ANSWERS, build_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("firefox")
    with started("firefox", folder / "site", lambda url: build_site(folder, site_url=url)) as both:
        yield both


@pytest.fixture
def open_page(browser, base_url):
    """open_page(path="", width=1440, seed=None, lab=True) -> a Firefox page that has loaded; after
    the test, asserts that no script error happened in it and no request left 127.0.0.1."""
    with opener(browser, base_url, lab_shown=True) as open_:
        yield open_


class TestEveryEnginePage(EveryEnginePage):
    name = "firefox"


class TestPhonePrefetch(PhonePrefetch):
    name = "firefox"


class TestEveryEngineLab(EveryEngineLab):
    name = "firefox"


# --------------------------------------------------------------------------- lesson text


@pytest.mark.parametrize("path", LESSON_PAGES)
def test_phone_lines_and_display_formulas(open_page, path):
    """At 390 px: no line starts with a closing Chinese mark (nor ends with an opening one) beside
    an inline formula or code (Firefox decides the break after a <math> by the formula's own
    white-space); a display formula fits, or scrolls inside its block with the side that has more
    of it faded, and so does a table wider than the phone, the code in it broken only between words
    (test_site_browser has the same for Chromium)."""
    page = open_page(path, width=390, height=844)
    wait_until(lambda: page.evaluate("() => document.fonts.status === 'loaded'"), 20,
               what="fonts loaded")
    page.evaluate(OPEN_ANSWERS)
    # every formula whole in the page (Firefox's "Invalid markup" reports are kept apart from script
    # errors: tests/support/firefox.mjs)
    assert page.evaluate(MALFORMED_MATH) == []
    assert page.evaluate(SEARCH_TEXT_DRAWN)["drawn"] == []     # (the search index's line of text)
    problems = page.evaluate(LINE_START_PROBLEMS)
    assert problems == [], f"a line starts with a closing mark (or ends with an opening one): {problems}"
    try:                                # a11y.js marks the formulas a frame after the fonts
        wait_until(lambda: page.evaluate(SCROLL_HINTS_SETTLED), 5, what="formulas' scroll hints")
    except TimeoutError:
        pass                            # the checks below say which formula and how
    formulas = wait_until(lambda: page.evaluate(DISPLAY_FORMULAS), 10, what="formulas measured") \
        if page.evaluate("() => !!document.querySelector('.md-typeset .sd-math')") else []
    check_display_formulas(formulas, must_fit=True)     # at 390 (issue 46: three were cut)
    if path == "":
        for i in range(page.evaluate("() => document.querySelectorAll('.sd-math--wraps').length")):
            page.evaluate(f"() => document.querySelectorAll('.sd-math--wraps')[{i}].scrollIntoView({{block: 'center'}})")
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(SHOTS / f"firefox-phone-formula-{i}.png")
    if any(f["scrolls"] for f in formulas):
        first = "document.querySelector('.md-typeset .sd-math[data-sd-scroll]')"
        page.evaluate(f"() => {{ const b = {first}; b.scrollIntoView({{block: 'center'}});"
                      " b.scrollLeft = b.scrollWidth; }")
        wait_until(lambda: page.evaluate(f"() => {first}.dataset.sdMore") == "left", 5,
                   what="the fade on the left once scrolled to the end")
        if path == "":
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(SHOTS / "firefox-phone-formula-scrolled.png")
    # a table wider than the phone fades on the right as a formula does; code in it breaks only
    # between words (test_site_browser has both for Chromium, at 1440 too)
    try:
        wait_until(lambda: page.evaluate(TABLE_HINTS_SETTLED), 5, what="tables' scroll hints")
    except TimeoutError:
        pass                            # check_wide_tables says which table and how
    check_wide_tables(page.evaluate(WIDE_TABLES))
    assert page.evaluate(CODE_SPLIT_IN_TABLES) == []
    assert page.evaluate(OPTIONS_SPLIT_AFTER_HYPHENS) == []    # no "--" / "max-num-seqs"
    assert page.evaluate(SHORT_CODE_SPLIT) == []               # no "/" / "metrics"
    if path == "":
        page.evaluate("() => document.querySelector('.md-typeset__scrollwrap[data-sd-more]').scrollIntoView({block: 'center'})")
        page.screenshot(SHOTS / "firefox-phone-table-fading.png")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_code_blocks_keep_the_themes_thin_scrollbar(open_page):
    """course.css's ::-webkit-scrollbar rule is for WebKit and Chromium. Firefox knows that selector
    too, and under the rule it drew a light 12 px track under every code block that scrolls (a
    stranger's review; worst in the dark scheme): Material's thin scrollbar stays in Firefox."""
    page = open_page("knowledge-card/", width=390, height=844)
    widths = page.evaluate("() => [...document.querySelectorAll('.md-typeset pre > code')]"
                           ".map((code) => getComputedStyle(code).scrollbarWidth)")
    assert widths and set(widths) == {"thin"}, widths

# --------------------------------------------------------------------------- toy and quiz

# every heading with a permalink: how far its box reaches below its text, and where the permalink
# starts (px from the window's left edge)
HEADINGS = """() => [...document.querySelectorAll('.md-typeset :is(h1, h2, h3, h4)')]
  .filter((h) => h.querySelector(':scope > .headerlink')).map((h) => {
    const link = h.querySelector(':scope > .headerlink');
    const text = document.createRange();
    text.setStartBefore(h.firstChild);
    text.setEndBefore(link);
    const bottom = Math.max(...[...text.getClientRects()].map((r) => r.bottom));
    return {heading: h.textContent.slice(0, -1), below: Math.round(h.getBoundingClientRect().bottom - bottom),
            left: Math.round(link.getBoundingClientRect().left)};
  })"""


@pytest.mark.parametrize("width", [1440, 1280, 390])
@pytest.mark.parametrize("path", LESSON_PAGES)
def test_no_heading_has_an_empty_line_under_its_text(open_page, path, width):
    """A heading's permalink (¶, seen on hover or focus) came after its text as an inline-block,
    before which a line may break: a heading whose text just filled its line got a second line,
    empty to the eye (Firefox at 1440 px: the lossless page's title, two of your-gpu's steps; at
    1280 px lesson 1's section 5). It hangs left of the heading now: no heading reaches more than
    a few pixels below its text, every permalink is inside the window (a phone's margin too) and
    the page is no wider than the window."""
    page = open_page(path, width=width, height=900 if width > 500 else 844)
    wait_until(lambda: page.evaluate("() => document.fonts.status === 'loaded'"), 20, what="fonts loaded")
    headings = page.evaluate(HEADINGS)
    assert headings and [h for h in headings if h["below"] > 8 or h["left"] < 0] == []
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_toy_answers_clicks(open_page):
    page = open_page("", seed=7)
    mounted(page)
    before = rounds_drawn(page)
    seen = set()
    for i in range(1, 21):
        page.click(".sd-toy .sd-toy__draw")
        r = toy_round(page)
        check_round(r)
        seen.add(r["produced"])
        assert rounds_drawn(page) == before + i
        assert f"這一輪共 {r['produced']} 個字" in r["status"]
    assert len(seen) >= 3, "20 seeded rounds at α=0.7 should show several different yields"
    page.click(".sd-toy .sd-toy__many")
    assert rounds_drawn(page) == before + 120
    page.evaluate("() => document.querySelector('.sd-toy').scrollIntoView()")
    wait_for_motion_to_end(page)
    page.screenshot(SHOTS / "firefox-toy.png")


def test_toy_answers_keys(open_page):
    # (at phone width: the lab loads only when asked, so it cannot take the focus; see
    # test_the_lab_leaves_the_keyboard_focus_in_the_lesson)
    page = open_page("", width=390, height=844, seed=11)
    mounted(page)
    page.focus(".sd-toy .sd-toy__draw")
    before = rounds_drawn(page)
    page.press("Enter")
    page.press(" ")
    assert rounds_drawn(page) == before + 2
    check_round(toy_round(page))
    page.focus(".sd-toy .sd-toy__slider")
    page.press("ArrowRight")
    assert page.evaluate("() => document.querySelector('.sd-toy__slider').value") == "0.75"
    assert "還沒抽" in toy_round(page)["tally"]
    assert f"= {expected_tokens(0.75, 5):.2f}" in toy_round(page)["tally"]
    r = round_at_alpha_one(page)                           # every guess is accepted
    assert r["states"] == ["accept"] * 5 and r["produced"] == 6 and r["plus"] == "bonus"
    page.focus(".sd-toy .sd-toy__slider")
    page.press("Home")                                     # α = 0: the first guess is rejected
    page.focus(".sd-toy .sd-toy__draw")
    page.press(" ")
    r = toy_round(page)
    assert r["states"] == ["reject"] + ["discard"] * 4 and r["produced"] == 1


@pytest.mark.parametrize("width", [1440, 1100, 768, 390])
def test_every_toy_cell_fits_its_text(open_page, width):
    """Firefox draws "★ bonus" wider than Chromium: with the lab beside the lesson at 1440 it ran
    over its cell's border (seen in firefox-lab-lesson1-stored.png)."""
    page = open_page("", width=width, height=900 if width > 500 else 844, seed=5)
    mounted(page)
    assert toy_cells_overflowing(page, page.focus, page.press) == []


@pytest.mark.parametrize("number", range(1, len(LESSON1_QUIZ_ANSWERS) + 1))
def test_quiz_question_answers_clicks(open_page, number):
    page = open_page("")
    mounted(page)
    right = LESSON1_QUIZ_ANSWERS[number - 1]
    wrong = next(label for label in LABELS if label != right)
    page.click(option(number, wrong))
    state = answered(page, number, wrong)
    assert state["feedback"] == "wrong" and "✗不對" in state["text"] and state["options"][wrong] == "wrong"
    assert (state["role"], state["live"]) == ("status", "polite")
    page.click(option(number, right))
    state = answered(page, number, right)
    assert state["feedback"] == "right" and "✓答對了" in state["text"] and state["options"][right] == "right"
    if number == 1:
        page.evaluate("() => document.getElementById('sd-quiz-1').scrollIntoView()")
        page.screenshot(SHOTS / "firefox-quiz-q1-answered.png")
    page.click(f"#sd-quiz-{number} .sd-quiz__retry")
    assert page.evaluate(QUIZ_STATE, number)["options"] == {label: "" for label in LABELS}


@pytest.mark.parametrize("number", range(1, len(LESSON2_QUIZ_ANSWERS) + 1))
def test_lesson_two_quiz_question_answers_clicks(open_page, number):
    """Lesson 2 (draft-trees/): each question, a wrong option then the right one."""
    page = open_page("draft-trees/")
    wait_until(lambda: page.evaluate("() => !!document.querySelector('.sd-quiz--live')"), 30, what="quiz mounted")
    right = LESSON2_QUIZ_ANSWERS[number - 1]
    wrong = next(label for label in LABELS if label != right)
    page.click(option(number, wrong))
    assert answered(page, number, wrong)["feedback"] == "wrong"
    page.click(option(number, right))
    state = answered(page, number, right)
    assert state["feedback"] == "right" and "✓答對了" in state["text"] and state["options"][right] == "right"


@pytest.mark.parametrize("width", [1440, 390])
def test_lesson_two_at_desktop_and_phone_width(open_page, width):
    """Lesson 2 at 1440 and 390: Chinese drawn with a CJK font, nothing wider than the window."""
    page = open_page("draft-trees/", width=width, height=900 if width > 500 else 844)
    wait_until(lambda: page.evaluate("() => document.fonts.status === 'loaded'"), 20, what="fonts loaded")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert page.evaluate("() => document.querySelectorAll('.sd-tree-toy').length") == 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate(LATER_OFF)     # (a whole-page capture draws blocks not yet laid out blank)
    page.screenshot(SHOTS / f"firefox-lesson2-{width}.png", full_page=True)


def test_quiz_answers_keys(open_page):
    page = open_page("", width=390, height=844)           # (as test_toy_answers_keys)
    mounted(page)
    number, right = 3, LESSON1_QUIZ_ANSWERS[2]
    wrong = next(label for label in LABELS if label != right)
    for label, key in [(wrong, " "), (right, "Enter")]:
        state = answer_by_keys(page, number, label, key)
        assert state["options"][label] == ("right" if label == right else "wrong"), (label, state)
    assert page.evaluate(QUIZ_STATE, number)["feedback"] == "right"
    score = page.evaluate("() => document.querySelector('.sd-quiz-score').textContent")
    questions = page.evaluate("() => document.querySelectorAll('.sd-quiz, .sd-calc').length")
    assert questions == len(LESSON1_QUIZ_ANSWERS) + 2       # and lesson 1's two numeric questions
    assert f"已作答 1 / {questions} 題" in score


def test_quiz_answers_stay_after_a_reload(open_page):
    """Firefox keeps a learner's answers too (localStorage of the page's own origin): a choice
    and a number shown again after a reload, the score from the first tries. The lab is folded, as
    the WebKit layer's non-lab checks have it: reloaded mid-start, the lab's frame threw its aborted
    chunk loads into the page's error list (a fresh clone on a loaded machine, 2026-12-05)."""
    page = open_page("", lab=False)
    mounted(page)
    right = LESSON1_QUIZ_ANSWERS[1]
    wrong = next(label for label in LABELS if label != right)
    page.click(option(2, wrong))
    page.click(option(2, right))
    scroll_to_settled(page, "#sd-calc-1")      # (clicked at once, the number was typed nowhere)
    page.click("#sd-calc-1 .sd-quiz__input")
    page.type("3.44")
    page.press("Enter")
    wait_until(lambda: page.evaluate("() => document.querySelector('#sd-calc-1').dataset.state") == "right",
               10, what="the number checked")
    page.reload()
    mounted(page)
    state = page.evaluate(QUIZ_STATE, 2)
    assert state["options"] == {label: {wrong: "wrong", right: "right"}.get(label, "") for label in LABELS}
    assert state["feedback"] == "right"
    assert page.evaluate("() => [document.querySelector('#sd-calc-1 input').value,"
                         " document.querySelector('#sd-calc-1').dataset.state]") == ["3.44", "right"]
    score = page.evaluate("() => document.querySelector('.sd-quiz-score').textContent")
    assert "已作答 2 / 7 題，第一次就答對 1 題" in score


def test_the_lab_leaves_the_keyboard_focus_in_the_lesson(browser, base_url):
    """A learner who is using the keyboard in the lesson keeps the focus while the lab beside it
    loads (JupyterLab focuses its notebook as it appears; Chromium does the same)."""
    lab = EngineLab.open(browser, base_url)
    try:
        lab.page.focus(option(1, "A"))
        lab.wait_for("kernelReady")
        focused = lab.page.evaluate("() => `${document.activeElement.tagName}.${document.activeElement.className}`")
        assert "sd-quiz__button" in focused, f"the focus moved to {focused}"
    finally:
        lab.close()


def test_no_key_pressed_in_the_lesson_is_lost_while_the_lab_starts(browser, base_url):
    """As in Chromium (test_lab_browser): ← → pressed on the panel's edge all through the lab's
    start each reach it, and the lesson never loses the focus."""
    lab = EngineLab.open(browser, base_url, init=[KEYS_IN_LESSON])
    try:
        keys = press_keys_through_the_start(lab, lab.page.focus, lab.page.press)
        assert keys["notebookShownAt"] and keys["readyAt"] > keys["notebookShownAt"], keys
        assert (keys["atHandle"], keys["blurs"]) == (keys["sent"], 0), keys
        assert keys["focused"].startswith("DIV.sd-lab__resize"), keys
    finally:
        lab.close()


def test_knowledge_card_and_phone_width(open_page):
    page = open_page("knowledge-card/", width=390, height=844)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.evaluate(LATER_OFF)     # (a whole-page capture draws blocks not yet laid out blank)
    page.screenshot(SHOTS / "firefox-knowledge-card-390.png", full_page=True)


# In a lab page: the notebook misses the session specdec-lab.js started early, as it did in a
# background tab on a busy machine (in a hidden page JupyterLab's list of sessions is not refreshed,
# and the early session can come between the notebook's look at it and its own start): for 8 s
# from the app's start, the list of running sessions the notebook looks in is empty. (Hooked
# right after specdec-lab.js's own start.)
MISSED_SESSION = """(() => {
  const define = Object.defineProperty;
  Object.defineProperty = function (target, key, descriptor) {
    if (target === window && key === 'jupyterapp' && descriptor && descriptor.set) {
      Object.defineProperty = define;
      const set = descriptor.set;
      descriptor = {...descriptor, set(app) {
        set(app);
        app.started.then(() => {
          const sessions = app.serviceManager.sessions, running = sessions.running.bind(sessions);
          const until = Date.now() + 8000;
          sessions.running = () => (Date.now() < until ? [].values() : running());
        });
      }};
    }
    return define(target, key, descriptor);
  };
})();"""

LAB_STATE = """() => {
  const app = window.jupyterapp, nb = app && app.shell.currentWidget;
  const session = nb && nb.sessionContext && nb.sessionContext.session;
  return {lab: window.specdecLab ? window.specdecLab.state() : null, visibility: document.visibilityState,
          kernel: session && session.kernel ? session.kernel.status : null};
}"""


def test_a_lab_opened_in_a_background_tab_starts(browser, base_url):
    """A learner on lesson 1 opens a lab in a background tab of the same window (a middle-click):
    its Python starts there, one Python, and it is ready when they switch to it. In a hidden page
    JupyterLab's list of sessions is not refreshed: the notebook missed the session specdec-lab.js
    had started early, asked for one of its own, got the early one back from JupyterLite at another
    path and shut it down as stale; the lab never started ("e.session is null", "Session … not
    found"), or two Pythons started. Seen on a busy machine; MISSED_SESSION makes the notebook
    miss it every time. (The tab opens the lab's own page: Firefox runs init scripts in the top
    page only, not in a lesson's lab frame.)"""
    lesson = EngineLab.open(browser, base_url)
    tab = None
    try:
        tab = browser.open(base_url + "lab/notebooks/index.html?path=lossless.ipynb", init=[MISSED_SESSION],
                           beside=lesson.page, background=True)
        states = []

        def ready():
            states.append(tab.evaluate(LAB_STATE))
            lab = states[-1]["lab"]
            return lab and (lab["kernelReady"] or lab["stage"] == "error")
        try:
            wait_until(ready, 120, step=0.5, what="Python ready in the background tab")
        except TimeoutError as error:
            raise AssertionError(f"{error}: {states[-1]}, page errors {tab.log()['errors']}") from None
        errors = tab.log()["errors"]
        seen = states[-1]
        assert seen["visibility"] == "hidden", seen
        assert seen["lab"]["kernelReady"] and not errors, (seen, errors)
        tab.front()
        wait_until(lambda: tab.evaluate(LAB_STATE)["kernel"] == "idle", 60, step=0.5,
                   what="the notebook's kernel idle once the tab is shown")
        assert tab.evaluate("() => window.specdecLab.state().workers") == 1, "more than one Python"
        assert tab.log()["errors"] == [] and lesson.errors == []
    finally:
        if tab:
            tab.close()
        lesson.close()
    assert browser.outside == []


# --------------------------------------------------------------------------- the lab

@pytest.fixture(scope="module", params=list(LAB_PAGES), ids=list(LAB_PAGES))
def lab_run(request, browser, base_url):
    """A lab page: the stored outputs as shown before Python runs, then Run all in Pyodide."""
    path, notebook = LAB_PAGES[request.param]
    lab = EngineLab.open(browser, base_url + path)
    try:
        lab.wait_for("notebookShown")
        shown_path = lab.in_app("return nb.context.path;")
        # the first Markdown cell with a ， on screen (JupyterLab draws only the cells near the view)
        lab.in_app("""for (let i = 0; i < nb.model.cells.length; i++) {
                        const c = nb.model.cells.get(i);
                        if (c.type === 'markdown' && c.sharedModel.getSource().includes('，'))
                          return nb.content.scrollToItem(i, 'start').then(() => i, () => i); }
                      return -1;""")
        def drawn_punctuation():   # JupyterLab lays a scrolled-to cell out a moment later
            found = lab.page.evaluate(PUNCTUATION_WIDTHS, [".jp-Notebook", MARKS, True])
            return found if found and {"， text", "。 text"} <= set(found) else None
        punctuation = wait_until(drawn_punctuation, 20, step=0.2, what="a Markdown cell with ， and 。 drawn")
        stored = lab.page.evaluate(STREAM_TEXTS, timeout=120)
        lab.page.screenshot(SHOTS / f"firefox-lab-{request.param}-stored.png")
        lab.run_all()
        ran = lab.wait_all_run(timeout=400)
        images = lab.page.evaluate(IMAGE_OUTPUTS, timeout=180)
        lab.page.screenshot(SHOTS / f"firefox-lab-{request.param}-ran.png")
        yield dict(lab=lab, notebook=notebook, shown_path=shown_path, stored=stored, ran=ran,
                   images=images, punctuation=punctuation)
    finally:
        lab.close()


def test_the_live_notebook_draws_full_width_punctuation(lab_run):
    widths = lab_run["punctuation"]
    assert {"， text", "。 text"} <= set(widths), sorted(widths)
    assert not_one_em(widths) == {}


def test_the_request_guard_can_fail(browser, base_url):
    """The guard itself: a page's requests to other hosts, and a worker's, are stopped and listed."""
    page = browser.open(base_url + "knowledge-card/")
    try:
        before = len(browser.outside)
        page.evaluate("""() => {
          fetch('http://example.com/from-the-page').catch(() => null);
          const code = "fetch('https://example.org/from-a-worker').catch(() => null)";
          new Worker(URL.createObjectURL(new Blob([code], {type: 'text/javascript'})));
          return true; }""")
        # (both hosts: the worker's request alone is listed twice, its proxy CONNECT and its URL)
        both = lambda o: o if any("example.com" in s for s in o) and any("example.org" in s for s in o) else None  # noqa: E731
        seen = wait_until(lambda: both(browser.outside[before:]) or None, 30,
                          what="requests to example.com (page) and example.org (worker) recorded")
        assert any("example.com" in s for s in seen) and any("example.org" in s for s in seen), seen
    finally:
        page.close()
        browser.pages.remove(page)      # (the other tests assert the list stays empty)
        browser.proxy.seen.clear()
