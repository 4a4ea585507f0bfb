"""The suite's Chromium survives its browser process dying (tests/support/server.py's Chromium).

Once in CI Chromium's browser process crashed as lesson 1 was to open, and every later test of
its module failed. Here Chromium is made to crash on purpose (the DevTools protocol's
Browser.crash) and the next page must open in a new browser, with a warning that says so; the error
the crash raises must be the one pyproject's only_rerun reruns, and nothing else that fails is.
"""
import os
import re
import tomllib
from pathlib import Path

import pytest
from playwright.sync_api import Error

from support.server import ChromiumDied, chromium, open_page

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ONLY_RERUN = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["only_rerun"]


def rerun(error: BaseException) -> bool:
    """Whether pytest-rerunfailures reruns a test that raised `error` (it matches "Type: message")."""
    return any(re.search(pattern, f"{type(error).__name__}: {error}") for pattern in ONLY_RERUN)


def test_a_browser_that_died_is_launched_again_and_the_test_in_flight_rerun(tmp_path):
    # its crash report goes to a folder of the test's, not to ~/.config/chromium
    with chromium(env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}) as browser:
        page, _ = open_page(browser, "data:text/html,<p>before</p>")
        with pytest.warns(ChromiumDied), pytest.raises(Error) as crashed:
            browser.new_browser_cdp_session().send("Browser.crash")
        assert rerun(crashed.value)
        with pytest.raises(Error) as in_flight:
            page.text_content("p")           # what the test in flight saw
        assert rerun(in_flight.value)

        page, outside = open_page(browser, "data:text/html,<p>after</p>")
        assert page.text_content("p") == "after"
        assert outside == []


def test_a_failure_that_is_not_the_browser_dying_is_not_rerun():
    with chromium() as browser:
        page, _ = open_page(browser, "data:text/html,<p>here</p>")
        with pytest.raises(Error) as missing:
            page.locator("#nowhere").click(timeout=200)
        assert not rerun(missing.value)
        with pytest.raises(Error) as thrown:
            page.evaluate("() => { throw new Error('a page error') }")
        assert not rerun(thrown.value)
        page.context.close()
        with pytest.raises(Error) as closed_by_the_test:
            page.text_content("p")
        # a test that closes its own page and goes on gets one more try, and fails again: accepted
        assert rerun(closed_by_the_test.value)
