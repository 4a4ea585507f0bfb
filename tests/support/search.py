"""Material's search box typed into, in a page of any engine (tests/support/engines.py's `Page`:
click, type, press and evaluate; a Playwright page as ChromiumPage(page)).

    pages = search_finds(page, "接受率", {base_url, base_url + "knowledge-card/"})

clears the box, types the term, presses End (Material reads the query on keyup) and waits until
every expected page is among the results' links (paths without query or fragment); returns them.
"""
from __future__ import annotations

import re

from .lab import wait_until

RESULT_LINKS = "() => [...document.querySelectorAll('.md-search-result__item > a')].map(a => a.href)"


def search_finds(page, term: str, expected: set[str], timeout: float = 30) -> set[str]:
    wait_until(lambda: page.evaluate("() => window.document$ !== undefined"), timeout, what="Material's bundle")
    page.click(".md-search__input")
    page.evaluate("() => { document.querySelector('.md-search__input').value = ''; }")
    page.type(term)
    page.press("End")
    seen = set()

    def found():
        seen.clear()
        seen.update(re.sub(r"[?#].*$", "", href) for href in page.evaluate(RESULT_LINKS))
        return expected <= seen

    try:
        wait_until(found, timeout, what=f"search results for {term}")
    except TimeoutError as error:
        raise AssertionError(f"{error}: {sorted(seen)}, not all of {sorted(expected)}") from None
    return set(seen)


# Text put into the search box as an input method, a paste or voice input puts it: events only, no
# key going up after the text (Material reads the query on keyup). COMPOSE(args) with args =
# {before, steps, how}: the box holds `before`, then
#   how "click":  a composition whose candidate is picked with the mouse (compositionstart, each of
#                 `steps` as compositionupdate + input insertCompositionText with isComposing, then
#                 compositionend): no key at all;
#   how "enter-chromium": the same, committed by Enter as Chromium and Firefox send it: keydown Enter
#                 (isComposing, keyCode 229) before the last input and compositionend, keyup after;
#   how "enter-webkit": committed by Enter as WebKit (Safari) sends it: compositionend first, then
#                 keydown Enter with keyCode 229 and isComposing false, then keyup;
#   how "paste":  the last step's text pasted (input insertFromPaste), as from the context menu.
# The box ends up holding before + the last step. Returns whether anything cancelled a key event.
COMPOSE = r"""(args) => {
  const box = document.querySelector('.md-search__input');
  box.focus();
  box.value = args.before;
  const fire = (event) => box.dispatchEvent(event);
  const key = (type, composing) => {
    const event = new KeyboardEvent(type, {key: 'Enter', code: 'Enter', bubbles: true,
                                           cancelable: true, isComposing: composing});
    const code = type === 'keydown' ? 229 : 13;   // keyCode of a key the input method processes
    Object.defineProperty(event, 'keyCode', {get: () => code});
    Object.defineProperty(event, 'which', {get: () => code});
    return event;
  };
  const last = args.steps[args.steps.length - 1];
  if (args.how === 'paste') {
    box.value = args.before + last;
    fire(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste', data: last}));
    return false;
  }
  let cancelled = false;
  const press = (type, composing) => { cancelled = !fire(key(type, composing)) || cancelled; };
  const update = (text) => {
    box.value = args.before + text;
    fire(new CompositionEvent('compositionupdate', {bubbles: true, data: text}));
    fire(new InputEvent('input', {bubbles: true, inputType: 'insertCompositionText', data: text,
                                  isComposing: true}));
  };
  fire(new CompositionEvent('compositionstart', {bubbles: true, data: ''}));
  args.steps.slice(0, -1).forEach(update);
  if (args.how === 'enter-chromium') press('keydown', true);
  update(last);
  fire(new CompositionEvent('compositionend', {bubbles: true, data: last}));
  if (args.how === 'enter-webkit') press('keydown', false);
  if (args.how !== 'click') press('keyup', false);
  return cancelled;
}"""

# Zhuyin for 率 (ㄌㄩˋ), then the candidate picked: typed after 接受 it makes 接受率
ZHUYIN_STEPS = ["ㄌ", "ㄌㄩ", "ㄌㄩˋ", "率"]
IME_WAYS = ["click", "enter-chromium", "enter-webkit", "paste"]
ITEMS = ".md-search-result__item"
# the results drawn after the marked ones went, with `term` among their marked words
REDRAWN_FOR = f"""(term) => {{ const items = [...document.querySelectorAll('{ITEMS}')];
  return items.length > 0 && items.every(i => !('sdStale' in i.dataset))
    && [...document.querySelectorAll('.md-search-result mark')].some(m => m.textContent === term); }}"""
RESULTS_SHOWN = f"""() => ({{meta: document.querySelector('.md-search-result__meta').textContent,
  stale: document.querySelectorAll('{ITEMS}[data-sd-stale]').length,
  fresh: document.querySelectorAll('{ITEMS}:not([data-sd-stale])').length}})"""


def search_follows_input_method(page, how: str, base_url: str, timeout: float = 30) -> set[str]:
    """With 接受 typed key by key and its results shown, 率 comes in `how` (COMPOSE): the results
    must follow to 接受率 (their marked words) while the search stays open on the same page.
    Returns the result links for 接受率. `page`: an engines.Page."""
    search_finds(page, "接受", {base_url}, timeout)
    # the results for 接受 are marked; the ones for 接受率 are new elements (Material redraws the list)
    page.evaluate(f"() => document.querySelectorAll('{ITEMS}').forEach(i => i.dataset.sdStale = '')")
    page.evaluate(COMPOSE, {"before": "接受", "steps": ZHUYIN_STEPS, "how": how})
    wait_until(lambda: page.evaluate("() => document.querySelector('.md-search__input').value") == "接受率",
               5, what="the composed text in the box")
    try:
        wait_until(lambda: page.evaluate(REDRAWN_FOR, "接受率"), timeout, what=f"results for 接受率 after {how}")
    except TimeoutError as error:
        raise AssertionError(f"{error}: the results still are {page.evaluate(RESULTS_SHOWN)}") from None
    assert page.evaluate("() => document.getElementById('__search').checked"), \
        f"{how}: the search closed (a result was opened?)"
    assert page.evaluate("() => location.href").split("#")[0] == base_url, f"{how}: the page moved"
    return {re.sub(r"[?#].*$", "", href) for href in page.evaluate(RESULT_LINKS)}


def search(page, term):
    """Type a query into Material's search box of a Playwright page; the result links (paths
    without query/hash)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    page.wait_for_function("() => window.document$ !== undefined")
    box = page.locator(".md-search__input")
    box.click()
    box.fill(term)
    found = "() => document.querySelectorAll('.md-search-result__item').length > 0"
    for attempt in range(4):  # under load a query went unanswered once (15 s): type it again
        box.press("End")      # Material reads the query on keyup
        try:
            page.wait_for_function(found, timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 3:
                raise AssertionError(f"no search results for {term!r} within 40 s") from None
    hrefs = page.eval_on_selector_all(".md-search-result__item > a", "as => as.map(a => a.href)")
    return [re.sub(r"[?#].*$", "", href) for href in hrefs]
