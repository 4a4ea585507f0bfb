"""Material's search box typed into, in a Firefox or WebKit page (tests/support/firefox.py and
webkit.py: both have click, type, press and evaluate, as Playwright's page does).

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
