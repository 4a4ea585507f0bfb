"""What a lesson page holds, read the same way in every engine (a `Page` of tests/support/engines.py,
or a Playwright page: both have evaluate): the toy's round, the quiz's state, the pages to visit.

    page = browser.open(base_url, init=[SEEDED_RANDOM % 7]); mounted(page)
    page.click(".sd-toy .sd-toy__draw"); check_round(toy_round(page)); rounds_drawn(page)
    page.click(option(1, "B")); answered(page, 1, "B")["feedback"]      # "right" or "wrong"
"""
from __future__ import annotations

import json
import re

from .cjk_lines import MARKS, PUNCTUATION_WIDTHS, SIGNS
from .lab import wait_until, wait_until_still
from .site import ROOT, lab_pages

K = 5                                   # the toy's drafts a round
LABELS = ["A", "B", "C", "D"]           # a quiz question's options

# a seeded Math.random (mulberry32), so the toy's rounds are reproducible in tests
SEEDED_RANDOM = """
(() => { let s = %d >>> 0;
  Math.random = () => { s = (s + 0x6D2B79F5) >>> 0; let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; })();
"""


# every lesson page (lessons/*.md), as served: index.md is the site's root
LESSON_PAGES = sorted("" if p.stem == "index" else f"{p.stem}/"
                      for p in (ROOT / "lessons").glob("*.md"))


# every lesson with a lab, in mkdocs.yml's nav order: {"lesson1": ("", "lesson1.ipynb"), "lesson2": …}
LAB_PAGES = {notebook.removesuffix(".ipynb").replace("_", "-"): (path, notebook)
             for notebook, path in lab_pages().items()}


# the lab panel folded (as a learner leaves it): the lab does not start beside a lesson whose toy,
# quiz or text is checked (in WebKit that takes the checks ~20 s of a busy page each); or shown, as
# it opens for a new learner
LAB_FOLDED = "localStorage.setItem('specdec-lab:layout', JSON.stringify({folded: true}));"
LAB_SHOWN = "localStorage.removeItem('specdec-lab:layout');"


# the notebook's static preview is in the lesson page for a few seconds only: measured the moment
# it is put in
MEASURE_PREVIEW = """new MutationObserver((_, observer) => {
  if (!document.querySelector('.sd-lab__preview .sd-nb')) return;
  observer.disconnect();
  const measure = %s;
  window.__previewPunctuation = measure(['.sd-lab__preview', %s, false]);
  window.__previewSigns = measure(['.sd-lab__preview', %s, false]);
}).observe(document, {childList: true, subtree: true});""" % (PUNCTUATION_WIDTHS, json.dumps(MARKS), json.dumps(SIGNS))


def mounted(page):
    wait_until(lambda: page.evaluate("() => !!document.querySelector('.sd-toy .sd-toy__box')"
                                     " && !!document.querySelector('.sd-quiz--live')"), 30,
               what="toy and quiz mounted")


def toy_round(page):
    """The round on screen: verdict states, yield, output chips, status text."""
    return page.evaluate("""() => {
        const toy = document.querySelector('.sd-toy');
        const verdicts = [...toy.querySelectorAll('tbody tr:nth-child(3) td')].map(td => td.dataset.state || '');
        return {
            states: verdicts.slice(0, -1), plus: verdicts[verdicts.length - 1],
            produced: parseInt(toy.querySelector('.sd-toy__yield').textContent, 10),
            chips: [...toy.querySelectorAll('.sd-toy__output .sd-toy__token')].map(c => c.dataset.state),
            status: toy.querySelector('[role=status]').textContent,
            tally: toy.querySelector('.sd-toy__tally').textContent,
        }; }""")


# before a screenshot: the toy's cells have appeared and the header's title has changed (their CSS
# animations and transitions ended); a screenshot taken sooner showed half a round, or the header's
# two titles crossfading ("投機解碼互動課程後驗"). The lab's frame is another document: not waited for.
MOTION_ENDED = """() => !document.getAnimations().some((a) => a.playState === 'running' && a.effect
    && a.effect.target && a.effect.target.closest('.sd-toy, .md-header'))"""


def wait_for_motion_to_end(page) -> None:
    """Before a screenshot (a Playwright, Firefox or WebKit page: each has evaluate)."""
    wait_until(lambda: page.evaluate(MOTION_ENDED), 10, step=0.1, what="the toy's and the header's motion ended")


def check_round(r):
    accepted = r["states"].count("accept")
    assert len(r["states"]) == K
    assert r["states"][:accepted] == ["accept"] * accepted, r      # hits come first
    if accepted < K:
        assert r["states"][accepted] == "reject"
        assert r["states"][accepted + 1:] == ["discard"] * (K - accepted - 1)
        assert r["chips"] == ["accept"] * accepted + ["correction"] and r["plus"] == ""
    else:
        assert r["chips"] == ["accept"] * K + ["bonus"] and r["plus"] == "bonus"
    assert r["produced"] == accepted + 1


def rounds_drawn(page) -> int:
    match = re.search(r"已抽 (\d+) 輪", toy_round(page)["tally"])
    return int(match.group(1)) if match else 0


def round_at_alpha_one(page) -> dict:
    """With the toy's slider focused: End (α = 1, every guess accepted), then a round drawn with
    Enter; that round."""
    page.press("End")
    page.focus(".sd-toy .sd-toy__draw")
    page.press("Enter")
    return toy_round(page)


TOY_CELLS_OVERFLOWING = """() => [...document.querySelectorAll('.sd-toy__table td, .sd-toy__table th')]
    .filter((cell) => cell.scrollWidth > cell.clientWidth + 1)
    .map((cell) => [cell.textContent.trim(), cell.scrollWidth, cell.clientWidth])
  .concat([...document.querySelectorAll('.sd-toy__table td')].flatMap((cell) => {
    const words = [], walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[A-Za-z]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) words.push([word[0] + " (split)", lines.size, cell.clientWidth]);
      }
    }
    return words;
  }))"""


def toy_cells_overflowing(page, focus, press) -> list:
    """Draws 40 rounds at the toy's α (every sentence, the 3-character tokens such as 大部分 among
    them, on a seeded page), then an all-accepted round (α = 1, the "★ bonus" verdict) and an
    all-rejected one (α = 0); returns the cells that overflowed in any. focus(selector) and
    press(key) are the browser driver's."""
    overflowing = []
    focus(".sd-toy .sd-toy__draw")
    for _ in range(40):
        press("Enter")
        overflowing += page.evaluate(TOY_CELLS_OVERFLOWING)
    for key in ("End", "Home"):
        focus(".sd-toy .sd-toy__slider")
        press(key)
        focus(".sd-toy .sd-toy__draw")
        press("Enter")
        overflowing += page.evaluate(TOY_CELLS_OVERFLOWING)
    return sorted(set(map(tuple, overflowing)))


QUIZ_STATE = """(n) => { const q = document.getElementById('sd-quiz-' + n);
  const f = q.querySelector('.sd-quiz__feedback');
  return {feedback: f.dataset.state || '', text: f.textContent.replace(/\\s+/g, ''),
          role: f.getAttribute('role'), live: f.getAttribute('aria-live'),
          options: Object.fromEntries([...q.querySelectorAll('.sd-quiz__option')].map(
            (o) => [o.dataset.label, o.dataset.state || ''])),
          focused: document.activeElement.closest('.sd-quiz__option')
                   ? document.activeElement.closest('.sd-quiz__option').dataset.label : null}; }"""


def answered(page, number: int, label: str) -> dict:
    """The question's state once the feedback for `label` is written (the quiz writes it a moment
    after the click)."""
    return wait_until(lambda: (lambda s: s if s["options"][label] and s["text"] else None)(
        page.evaluate(QUIZ_STATE, number)), 10, what=f"feedback of Q{number} {label}")


def option(number: int, label: str) -> str:
    return f'#sd-quiz-{number} .sd-quiz__option[data-label="{label}"] .sd-quiz__button'


def answer_by_keys(page, number: int, label: str, key: str) -> dict:
    """Question `number` answered from the keyboard: its first option focused, Tab to `label`
    (asserted focused), then `key` (" " or "Enter"); the question's state once answered."""
    page.focus(option(number, "A"))
    for _ in range(LABELS.index(label)):
        page.press("Tab")
    assert page.evaluate(QUIZ_STATE, number)["focused"] == label
    page.press(key)
    return answered(page, number, label)


def nav_link_to(page, url):
    """The primary navigation's link to `url` (absolute)."""
    links = page.locator(".md-sidebar--primary a.md-nav__link")
    hrefs = links.evaluate_all("as => as.map(a => a.href)")
    return links.nth(hrefs.index(url))


# where each of the article's blocks lies (its top and height, px), every block laid out first (the
# page scrolled through, then back to the top)
BLOCK_PLACES = """async () => {
  document.querySelectorAll('.sd-lab, .sd-lab-open').forEach((el) => { el.style.display = 'none'; });  // (its status changes)
  for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight / 2) {
    scrollTo(0, y);
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
  scrollTo(0, 0);
  return [...document.querySelector('article').children].map((block) => {
    const box = block.getBoundingClientRect();
    return [block.tagName + '.' + block.className, block.textContent.trim().slice(0, 20),
            Math.round(box.top + scrollY), Math.round(box.height)];
  });
}"""
def scroll_to_settled(page, selector: str, timeout: float = 10) -> None:
    """Scroll the element `selector` names to the middle of the screen and wait until it stays in
    place: the blocks around it laid out near the screen (render_later.py) take their real heights
    a frame later, and a click at once could land where the element was before (seen under load:
    Firefox's calculator input, Chromium's folded answer on a page without JavaScript). A reader
    sees the page after that frame. (Polled from here: a page without JavaScript runs no
    requestAnimationFrame callback, and a promise waiting for one never settled.)"""
    page.evaluate("(s) => document.querySelector(s).scrollIntoView({block: 'center'})", selector)
    wait_until_still(lambda: page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect();"
                                           " return [r.top, r.height]; }", selector),
                     timeout, what=f"{selector} to stay in place after scrolling to it")


# the same blocks laid out as if render_later.py had not marked them
LATER_OFF = """() => {
  const style = document.createElement('style');
  style.textContent = '.md-typeset .sd-later { content-visibility: visible !important; }';
  document.head.append(style);
}"""
