"""The course's own static server on 127.0.0.1 and Debian's Chromium through Playwright, for
browser tests and benchmarks.

    with serve_site(path) as base_url:                 # http://127.0.0.1:<free port>/
        with chromium() as browser:
            page, outside = open_page(browser, base_url, width=1440)
            ...
            assert outside == []                        # no request left 127.0.0.1

Never `playwright install`: the browser is Debian's /usr/bin/chromium with the team's flags.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import sys
import threading
import warnings
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1"}


class QuietServer(http.server.ThreadingHTTPServer):
    """A threaded test server that says nothing when a browser stops reading (a download aborted
    as the page moved on): the standard library prints a traceback for each."""
    daemon_threads = True

    def handle_error(self, request, address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, address)


@contextlib.contextmanager
def serve_site(root: Path, cache_hashed: bool = True, compress: bool = True, lab_isolation: bool = False):
    """site/serve.py's server (what `make serve` runs, without live reload) for `root` on a free
    port, quiet about browsers that leave mid-download; yields the base URL (ending in '/')."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site"))
    import serve  # site/serve.py
    server = serve.make_server(root, port=0, cache_hashed=cache_hashed, compress=compress, tell_leaving=False,
                               lab_isolation=lab_isolation)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def serve_plain(root: Path, port: int = 0, missing_page: str | None = None):
    """A plain static server, as `python -m http.server --directory root` is: the standard
    library's SimpleHTTPRequestHandler, no gzip, no cache headers. missing_page (a path under root,
    e.g. "specdec-lab/404.html") is sent with status 404 for a missing file, as GitHub Pages does.
    Yields (base URL ending in '/', served), served being every request it answered as
    (status, path), whoever sent it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site"))
    import serve  # site/serve.py: the site's own 404 page, sent as serve.py sends it
    served: list[tuple[int, str]] = []
    fallback = Path(root) / missing_page if missing_page else None

    class Handler(http.server.SimpleHTTPRequestHandler):
        def send_error(self, code, message=None, explain=None):
            if code != 404 or fallback is None or not serve.send_not_found_page(self, fallback):
                super().send_error(code, message, explain)

        def log_request(self, code="-", size="-"):
            served.append((int(getattr(code, "value", code)), self.path))

        def log_message(self, format, *args):      # quiet, like the tests' other server
            pass

    server = QuietServer(("127.0.0.1", port), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class ChromiumDied(UserWarning):
    """Chromium's browser process ended while the suite was using it (a crash, not a page's)."""


class Chromium:
    """Debian's Chromium that comes back if its browser process dies.

    It died under CI once (2026-12-06, Debian's 156.0.8078.129): a SIGSEGV in the browser process
    18 s after it started, as its module's site build ended and lesson 1 was to open, the minidump's
    address in no library; every later test of the module failed at `new_context` (44 failed, 41
    errors). Now the next use after a death launches
    a new browser and warns (pytest's warnings summary names the test); the test in flight is rerun
    once by pytest-rerunfailures, for this error only (pyproject's only_rerun), at most three times a
    run. A page that crashes or a test that fails otherwise still fails. Anything not written here
    is the Playwright Browser's own.
    """

    def __init__(self, playwright, **launch_options):
        self._playwright = playwright
        self._options = launch_options
        self._closing = False
        self._browser = self._launch()

    def _launch(self):
        browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                                                   **self._options)
        browser.on("disconnected", lambda _: self._disconnected())
        return browser

    def _disconnected(self):
        if not self._closing:
            warnings.warn(ChromiumDied("Chromium's browser process died; the next use launches a new one"))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if not self._closing and not self._browser.is_connected():
            self._browser = self._launch()
        return getattr(self._browser, name)

    def close(self):
        self._closing = True
        if self._browser.is_connected():
            self._browser.close()


@contextlib.contextmanager
def chromium(**launch_options):
    """Headless Debian Chromium (Playwright's Python package drives it), relaunched if it dies;
    `launch_options` go to Playwright's launch with the team's flags."""
    global _running
    if _running is not None and not launch_options:
        yield _running      # one Playwright per process: a second sync_playwright() refuses to start
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = Chromium(playwright, **launch_options)
        if not launch_options:
            _running = browser
        try:
            yield browser
        finally:
            if _running is browser:
                _running = None
            browser.close()


_running = None     # the process's Chromium with the default flags, while one runs


def open_page(browser, url=None, width=1440, height=900, reduced_motion="no-preference", **context_args):
    """A new page in its own context. Every request to a host other than 127.0.0.1 is blocked and
    recorded in the returned list (tests assert it stays empty). Navigates to `url` if given."""
    context = browser.new_context(viewport={"width": width, "height": height},
                                  reduced_motion=reduced_motion, **context_args)
    outside: list[str] = []

    def guard(route):
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    if url:
        page.goto(url)
    return page, outside
