"""Debian's firefox-esr for the browser tests, driven over WebDriver BiDi by npm puppeteer-core
(tests/support/firefox.mjs; Playwright's Firefox needs a browser build of its own, which cannot be
fetched here).

    with firefox() as browser:
        page = browser.open(base_url, width=1440)       # a page in its own browser context (engines.Page)
        page.evaluate("() => document.title")           # the JS function text Playwright takes
        page.click(".sd-toy button"); page.press("Enter"); page.screenshot(path)
        page.log()["errors"]                             # page errors, requests, responses, console, layout
        assert browser.outside == []                     # no request left 127.0.0.1

Firefox sends every request to another host through a recording proxy on 127.0.0.1 that answers
403 (requests of workers and of the browser itself included), and the driver records the page's
own requests too: `browser.outside` lists both. Every command has a bound and says what it waited
for. puppeteer-core is installed by `npm ci` into tests/support/node_modules (git-ignored) the first
time it is needed.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import socketserver
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from .engines import stop


HERE = Path(__file__).resolve().parent
DRIVER = HERE / "firefox.mjs"
FIREFOX = shutil.which("firefox-esr") or "/usr/bin/firefox-esr"
LOCAL_HOSTS = {"127.0.0.1"}


def install_puppeteer(timeout: float = 300) -> None:
    """`npm ci` in tests/support when node_modules is missing or older than the lock file."""
    installed = HERE / "node_modules" / ".package-lock.json"
    newest = max((HERE / name).stat().st_mtime for name in ("package.json", "package-lock.json"))
    if installed.exists() and installed.stat().st_mtime >= newest:
        return
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("Firefox 測試需要 Node.js 與 npm（Debian：apt-get install nodejs npm）")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True,
                   timeout=timeout)


class _RecordingProxy(socketserver.ThreadingTCPServer):
    """Where Firefox sends any request that is not for 127.0.0.1: the request line is recorded
    ("CONNECT host:443" or "GET http://host/path") and answered 403. A request for this server
    itself ("GET /path": the browser's own Remote Settings, pointed here) is answered 404 and not
    recorded: it never meant to leave the machine."""
    daemon_threads = True

    def __init__(self):
        self.seen: list[str] = []

        class Handler(socketserver.StreamRequestHandler):
            def handle(handler):
                line = handler.rfile.readline(4096).decode("latin-1").strip()
                target = line.split(" ")[1] if line.count(" ") >= 2 else line
                if target.startswith("/"):
                    status = b"404 Not Found"
                else:
                    self.seen.append(line)
                    status = b"403 Forbidden"
                handler.wfile.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

        super().__init__(("127.0.0.1", 0), Handler)


def _prefs(proxy_port: int) -> dict:
    return {
        "network.proxy.type": 1, "network.proxy.http": "127.0.0.1", "network.proxy.http_port": proxy_port,
        "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": proxy_port,
        "network.proxy.no_proxies_on": "", "network.proxy.allow_hijacking_localhost": False,
        "network.dns.disablePrefetch": True, "network.prefetch-next": False, "network.trr.mode": 5,
        "browser.safebrowsing.malware.enabled": False, "browser.safebrowsing.phishing.enabled": False,
        # the captive-portal check (Firefox ESR 140 asks detectportal.firefox.com as it starts)
        "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
        # the browser's own Remote Settings (puppeteer points them to a dummy host; here they go
        # to the proxy as a plain server, and Firefox takes it with MOZ_REMOTE_SETTINGS_DEVTOOLS)
        "services.settings.server": f"http://127.0.0.1:{proxy_port}/remote-settings-off/v1",
    }


class FirefoxPage:
    """One page (tab in its own browser context) of the driven Firefox."""

    def __init__(self, browser: "Firefox", page_id: int):
        self.browser, self.id = browser, page_id
        self.closed_log: dict | None = None     # the log as it was when the page was closed

    def _do(self, op: str, timeout: float = 60, what: str = "", **args):
        return self.browser.command(op, timeout=timeout, what=what, page=self.id, **args)

    def evaluate(self, fn: str, arg=None, timeout: float = 60):
        """`fn` (a JS function as text, or an expression) run in the page with `arg`; its value."""
        return self._do("eval", timeout, what=fn.strip()[:80], fn=fn, arg=arg)

    def goto(self, url: str, wait_until: str = "load", timeout: float = 120):
        return self._do("goto", timeout, what=f"load of {url}", url=url, waitUntil=wait_until)

    def reload(self, timeout: float = 120):
        return self._do("reload", timeout, what="reload")

    def click(self, selector: str, timeout: float = 30):
        return self._do("click", timeout, what=f"click on {selector}", selector=selector)

    def focus(self, selector: str, timeout: float = 30):
        return self._do("focus", timeout, what=f"focus on {selector}", selector=selector)

    def press(self, key: str, timeout: float = 30):
        return self._do("press", timeout, what=f"key {key}", key=key)

    def type(self, text: str, timeout: float = 30):
        return self._do("type", timeout, what=f"typing {text!r}", text=text)

    def front(self, timeout: float = 30):
        """Bring this page's tab to the front (the learner switching to it)."""
        return self._do("front", timeout, what="bringing the tab to the front")

    def screenshot(self, path, full_page: bool = False, timeout: float = 60):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return self._do("screenshot", timeout, what=f"screenshot {path}", path=str(path), fullPage=full_page)

    @property
    def url(self) -> str:
        return self._do("url", 10, what="page URL")

    def log(self) -> dict:
        """requests (URLs), responses ({url, status}), failed ({url, error}), errors (uncaught
        exceptions), layout (Firefox's "Invalid markup" reports: firefox.mjs), console ({type,
        text}) of the page and its frames so far."""
        return self.closed_log or self._do("log", 10, what="page log")

    def close(self):
        if self.closed_log is None:
            self.closed_log = self.log()
            self.browser.command("close", timeout=30, what="closing the page", page=self.id)


class Firefox:
    """firefox-esr with the driver (tests/support/firefox.mjs) as a child process."""

    def __init__(self, log_path: Path):
        install_puppeteer()
        self.proxy = _RecordingProxy()
        threading.Thread(target=self.proxy.serve_forever, daemon=True).start()
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        self._stderr = open(log_path, "w", encoding="utf-8")
        options = {"executablePath": FIREFOX, "prefs": _prefs(self.proxy.server_address[1])}
        # Firefox takes puppeteer's dummy Remote Settings server (its own traffic, not the page's)
        # only with this set
        env = {**os.environ, "MOZ_REMOTE_SETTINGS_DEVTOOLS": "1"}
        self.process = subprocess.Popen(["node", str(DRIVER), json.dumps(options)], cwd=HERE, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, text=True, encoding="utf-8")
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0
        self.pages: list[FirefoxPage] = []
        self.version = None

    def _read(self):
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                self._replies.put(json.loads(line))
        self._replies.put(None)          # the driver ended

    def command(self, op: str, timeout: float, what: str = "", **args):
        self._next += 1
        self.process.stdin.write(json.dumps({"id": self._next, "op": op, **args}) + "\n")
        self.process.stdin.flush()
        end = time.time() + timeout
        while True:
            try:
                message = self._replies.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                raise TimeoutError(f"Firefox {op} ({what}): no answer within {timeout:.0f} s") from None
            if message is None:
                raise RuntimeError(f"Firefox driver ended during {op} ({what}); see {self._stderr.name}")
            if message.get("id") == self._next:
                if not message["ok"]:
                    raise RuntimeError(f"Firefox {op} ({what}): {message['error']}")
                return message["value"]

    def open(self, url: str | None = None, width: int = 1440, height: int = 900,
             init: list[str] = (), timeout: float = 120, beside: FirefoxPage | None = None,
             background: bool = False) -> FirefoxPage:
        """A page in a browser context of its own; `beside=page`: a tab in that page's context
        (the same window, as a learner's second tab), `background=True` behind the others."""
        page = FirefoxPage(self, self.command("open", timeout, what=f"opening {url}", url=url,
                                              width=width, height=height, init=list(init),
                                              beside=beside.id if beside else None, background=background))
        self.pages.append(page)
        return page

    @property
    def outside(self) -> list[str]:
        """Requests to a host other than 127.0.0.1: those the proxy saw and those of the pages."""
        seen = list(self.proxy.seen)
        for page in self.pages:
            with contextlib.suppress(RuntimeError, TimeoutError):
                seen += [u for u in page.log()["requests"] if not u.startswith(("data:", "blob:", "about:"))
                         and urlsplit(u).hostname not in LOCAL_HOSTS]
        return seen

    def close(self):
        with contextlib.suppress(Exception):
            self.command("quit", timeout=30, what="closing Firefox")
        stop(self.process, 30, terminate=False)        # (quit ends it)
        self.proxy.shutdown()
        self.proxy.server_close()
        self._stderr.close()


@contextlib.contextmanager
def firefox(log_path: Path | None = None):
    """Headless firefox-esr; the driver's messages go to log_path (a temp file by default)."""
    if log_path is None:
        log_path = Path(tempfile.mkstemp(prefix="firefox-driver-", suffix=".log")[1])
    browser = Firefox(log_path)
    try:
        yield browser
    finally:
        browser.close()

