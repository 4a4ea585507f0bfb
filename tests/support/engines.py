"""One page interface for the three engines the course is tested in: Chromium (Playwright),
Firefox ESR (firefox.py: puppeteer-core over WebDriver BiDi) and WebKitGTK (webkit.py:
WebKitWebDriver and MiniBrowser under Xvfb). A check written against `Page` runs in each.

    with started("firefox", folder / "site", lambda url: build_site(folder, url)) as (browser, url):
        page = browser.open(url, width=390, height=844, init=[script])  # loaded, at that viewport
        page.evaluate("(s) => document.querySelector(s).textContent", ".sd-toy")
        page.click(sel); page.focus(sel); page.press("Enter"); page.type("3.44")
        wait_for(page, "() => document.fonts.status === 'loaded'", 20, what="fonts")
        page.screenshot(path); page.close(); page.log()["errors"]
        browser.outside                       # requests that left 127.0.0.1 (None: not recorded)

What only one engine has stays in its own module: WebKit's crash restart and phone frame, Firefox's
background tabs and request proxy, Playwright's locators and CDP in the Chromium tests.
"""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Callable, Protocol
from urllib.parse import urlsplit

from .lab import wait_until
from .server import LOCAL_HOSTS, chromium, serve_site

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("chromium", "firefox", "webkit")


class Page(Protocol):
    """A loaded page of one engine. JS is given as function text (called with `arg`; a promise
    is awaited) or an expression, as Playwright's page.evaluate takes it; every call is bounded."""

    def evaluate(self, fn: str, arg=None, timeout: float = 60): ...
    def goto(self, url: str, wait_until: str = "load", timeout: float = 120): ...
    def reload(self, timeout: float = 120): ...
    def click(self, selector: str, timeout: float = 30): ...
    def focus(self, selector: str, timeout: float = 30): ...
    def press(self, key: str, timeout: float = 30): ...   # Playwright's key names ("Shift+Enter")
    def type(self, text: str, timeout: float = 30): ...
    def screenshot(self, path, full_page: bool = False, timeout: float = 60): ...
    def log(self) -> dict: ...                             # {"errors": [uncaught errors], ...}
    def close(self): ...


class Browser(Protocol):
    """Opens pages of one engine, each in a window (and storage) of its own."""

    outside: list[str] | None

    def open(self, url: str, width: int = 1440, height: int = 900, init: list[str] = ()) -> Page:
        ...


def wait_for(page: Page, predicate_js: str, timeout: float, what: str, arg=None, step: float = 0.1):
    """The truthy value of `predicate_js` in the page, polled until `timeout` seconds; else a
    TimeoutError that says `what` it waited for."""
    return wait_until(lambda: page.evaluate(predicate_js, arg), timeout, step=step, what=what)


def stop(process: subprocess.Popen, grace: float, terminate: bool = True) -> None:
    """End a driver's child process: SIGTERM (unless told it is already ending), `grace` seconds
    to exit, then SIGKILL."""
    if terminate:
        process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


# --------------------------------------------------------------------------- Chromium

class ChromiumPage:
    """A Playwright page (in a context of its own) as a `Page`."""

    def __init__(self, page, outside: list[str] | None = None):
        self.page, self.outside = page, outside
        self.errors: list[str] = []
        self.closed_log: dict | None = None
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def evaluate(self, fn: str, arg=None, timeout: float = 60):
        return self.page.evaluate(fn, arg)

    def goto(self, url: str, wait_until: str = "load", timeout: float = 120):
        self.page.goto(url, wait_until=wait_until, timeout=timeout * 1000)
        return self.page.url

    def reload(self, timeout: float = 120):
        self.page.reload(timeout=timeout * 1000)

    def click(self, selector: str, timeout: float = 30):
        self.page.click(selector, timeout=timeout * 1000)

    def focus(self, selector: str, timeout: float = 30):
        self.page.focus(selector, timeout=timeout * 1000)

    def press(self, key: str, timeout: float = 30):
        self.page.keyboard.press(key)

    def type(self, text: str, timeout: float = 30):
        self.page.keyboard.type(text)

    def screenshot(self, path, full_page: bool = False, timeout: float = 60):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page, timeout=timeout * 1000)
        return str(path)

    @property
    def url(self) -> str:
        return self.page.url

    def log(self) -> dict:
        return self.closed_log or {"errors": list(self.errors)}

    def close(self):
        if self.closed_log is None:
            self.closed_log = self.log()
            self.page.context.close()


class ChromiumPages:
    """Debian's Chromium (server.chromium) opening `ChromiumPage`s; every request to a host other
    than 127.0.0.1 is stopped and listed in `outside`."""

    def __init__(self, browser):
        self.browser = browser
        self.outside: list[str] = []

    def _guard(self, route):
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlsplit(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, url: str, width: int = 1440, height: int = 900, init: list[str] = ()):
        context = self.browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", self._guard)
        for script in init:
            context.add_init_script(script)
        page = ChromiumPage(context.new_page(), self.outside)
        page.goto(url)
        return page


# --------------------------------------------------------------------------- starting one

@contextlib.contextmanager
def started(engine: str, site: Path, build: Callable[[str], object], log_name: str | None = None):
    """A server for the folder `site` on a free port, `build(url)` run once it listens (a site built
    for its own URL, as a deployment is), and `engine`'s browser; yields (browser, base_url). The
    driver's log goes to build/test-output/<log_name or "<engine>-driver">.log."""
    Path(site).mkdir(parents=True, exist_ok=True)
    log = ROOT / "build" / "test-output" / f"{log_name or engine + '-driver'}.log"
    if engine == "webkit":
        from .webkit import serve_recorded, webkit
        with serve_recorded(site) as (url, server):
            build(url)
            with webkit(server, log) as browser:
                yield browser, url
    elif engine == "firefox":
        from .firefox import firefox
        with serve_site(site) as url:
            build(url)
            with firefox(log) as browser:
                yield browser, url
    elif engine == "chromium":
        with serve_site(site) as url:
            build(url)
            with chromium() as browser:
                yield ChromiumPages(browser), url
    else:
        raise ValueError(f"engine {engine!r}: one of {', '.join(ENGINES)}")


@contextlib.contextmanager
def opener(browser: Browser, base_url: str, lab_shown: bool = True):
    """open(path="", width=1440, height=None, seed=None, init=(), lab=lab_shown) -> a loaded page
    of base_url + path (height 900, or 844 under 500 px wide; `seed`: a seeded Math.random; `lab`:
    the lab panel shown, as for a new learner, or folded so that the lab does not start). On
    leaving: each page closed, no uncaught error in any, no request outside 127.0.0.1 (where the
    engine records them)."""
    from .lesson import LAB_FOLDED, LAB_SHOWN, SEEDED_RANDOM
    opened = []

    def open_(path="", width=1440, height=None, seed=None, init=(), lab=lab_shown):
        seeded = [SEEDED_RANDOM % seed] if seed is not None else []
        page = browser.open(base_url + path, width=width, height=height or (900 if width > 500 else 844),
                            init=[LAB_SHOWN if lab else LAB_FOLDED, *init, *seeded])
        opened.append(page)
        return page

    yield open_
    for page in opened:
        page.close()
        assert page.log()["errors"] == [], f"page errors: {page.log()['errors']}"
    if browser.outside is not None:
        assert browser.outside == [], f"requests left 127.0.0.1: {browser.outside}"
