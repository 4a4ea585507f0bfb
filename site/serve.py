"""`make serve`: build the course (site/build.py) and serve build/site/ on http://127.0.0.1:8000/.

While it runs, editing a lesson (lessons/, mkdocs.yml, site/overrides/, site/assets/, site/hooks/)
rebuilds the pages and reloads open tabs; editing a notebook (notebooks/) rebuilds the lab.

    python site/serve.py [--host 127.0.0.1] [--port 8000] [--no-build] [--no-watch]

Only this computer can reach it unless --host says otherwise: `--host 0.0.0.0` serves a classroom
on the local network (the README's 部署 section).
"""
from __future__ import annotations

import argparse
import email.utils
import functools
import gzip
import http.server
import io
import os
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site"))
import build  # noqa: E402  (site/build.py)

LESSON_SOURCES = ["lessons", "mkdocs.yml", "site/overrides", "site/assets", "site/hooks"]
LAB_SOURCES = ["notebooks"]
RELOAD_PATH = "/__reload"
RELOAD_SCRIPT = b"""<script>(function poll(v){fetch('%s?v='+v).then(r=>r.text()).then(n=>{
if(v!==null&&n!==v)location.reload();else poll(n)}).catch(()=>setTimeout(()=>poll(v),2000))})(null)
</script>""" % RELOAD_PATH.encode()


# URLs whose content never changes while the URL exists: Pyodide in its content-addressed folder,
# JupyterLite's bundles and extension chunks and Material's bundles, named by their hash
IMMUTABLE = re.compile(r"^(/lab/static/pyodide-[0-9a-f]{12}/"
                       r"|/lab/(build|extensions)/.*[.-][0-9a-f]{7,}\.(js|css)$"
                       r"|/assets/(javascripts|stylesheets)/.*\.[0-9a-f]{8}\.min\.(js|css)$)")


# Types worth compressing: text and WebAssembly (wheels, zips, images and fonts are compressed already)
COMPRESSIBLE = re.compile(r"^(text/|application/(javascript|json|manifest\+json|xml|wasm)|image/svg\+xml)")


def send_not_found_page(handler, page: Path) -> bool:
    """Answers ``handler``'s request with ``page`` and status 404; False if there is no such page."""
    if not page.is_file():
        return False
    body = page.read_bytes()
    handler.send_response(404)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)
    return True

class GzipCache:
    """gzip bodies of files, made on first request and kept while the file is unchanged
    (path, size and mtime), shared by every server in the process. Any static host compresses
    text the same way; this makes the local server send what a deployment would."""

    def __init__(self):
        self.bodies: dict[str, tuple[tuple, bytes]] = {}
        self.locks: dict[str, threading.Lock] = {}
        self.lock = threading.Lock()

    def get(self, path: str, st: os.stat_result) -> bytes:
        stamp = (st.st_size, st.st_mtime_ns)
        with self.lock:
            cached = self.bodies.get(path)
            if cached and cached[0] == stamp:
                return cached[1]
            file_lock = self.locks.setdefault(path, threading.Lock())
        # one compression per file even when requests race; other files' requests do not wait
        # for it (30 students asking at once for files not yet compressed)
        with file_lock:
            cached = self.bodies.get(path)
            if cached and cached[0] == stamp:
                return cached[1]
            with open(path, "rb") as f:
                body = gzip.compress(f.read(), compresslevel=6, mtime=0)
            with self.lock:
                self.bodies[path] = (stamp, body)
            return body


GZIP = GzipCache()


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right types. Content-addressed files are cached for a year; the rest
    is `no-cache` (revalidated, 304 when unchanged) so an edit shows on the next reload. Text and
    WebAssembly go compressed to browsers that accept it (`Vary: Accept-Encoding`): the build's
    Brotli sibling (name.br) when the browser takes br, else gzip. With live
    reload, lesson pages get a small script that reloads them after a rebuild."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".ipynb": "application/json", ".whl": "application/zip",
        ".webmanifest": "application/manifest+json", ".svg": "image/svg+xml",
    }
    reloader: "Reloader | None" = None
    cache_hashed = True     # False: revalidate everything (to measure what the long cache is worth)
    compress = True         # False: send every file as it is (to measure what compression is worth)
    lab_isolation = False   # True: the lab's pages in a process of their own in Chromium (make_server)
    tell_leaving = True     # False: not even that line (the tests, whose browsers leave pages mid-download)

    def handle(self):
        """A browser that leaves mid-download (a closed tab, a student's Wi-Fi dropping) costs the
        terminal one short line, not the BrokenPipe or ConnectionReset traceback socketserver
        prints: with a classroom on the server that would bury every other message."""
        try:
            super().handle()
        except ConnectionError:
            self.close_connection = True
            path = getattr(self, "path", "")
            # (a preview tab reloading after a rebuild drops its wait for the next one: not a learner)
            if self.tell_leaving and not path.startswith(RELOAD_PATH):
                sys.stderr.write(f"{self.client_address[0]} 中途離開：{path[:80]}\n")

    def send_response(self, code, message=None):
        self.status = code
        super().send_response(code, message)

    def end_headers(self):
        immutable = (self.cache_hashed and getattr(self, "status", 0) in (200, 304)
                     and IMMUTABLE.match(self.path.split("?", 1)[0]))
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        if self.lab_isolation and self.path.startswith("/lab/") and self.path.split("?", 1)[0].endswith(".html"):
            self.send_header("Document-Isolation-Policy", "isolate-and-require-corp")
        super().end_headers()

    def send_head(self):
        path = self._file()
        ctype = self.guess_type(path) if path else ""
        if not (self.compress and COMPRESSIBLE.match(ctype)):
            return super().send_head()
        st = os.stat(path)
        if self._unmodified_since(st.st_mtime):
            self.send_response(304)
            self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return None
        sibling = path + ".br"    # precompressed by the build (site/brotli_siblings.py)
        if self._accepts("br") and os.path.isfile(sibling) and os.stat(sibling).st_mtime >= st.st_mtime:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Vary", "Accept-Encoding")
            self.send_header("Content-Encoding", "br")
            self.send_header("Content-Length", str(os.stat(sibling).st_size))
            self.send_header("Last-Modified", self.date_time_string(st.st_mtime))
            self.end_headers()
            return open(sibling, "rb")
        gzipped = self._accepts_gzip()
        body = GZIP.get(path, st) if gzipped else None
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Vary", "Accept-Encoding")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body) if gzipped else st.st_size))
        self.send_header("Last-Modified", self.date_time_string(st.st_mtime))
        self.end_headers()
        return io.BytesIO(body) if gzipped else open(path, "rb")

    def send_error(self, code, message=None, explain=None):
        """A missing URL gets the site's own 404 page, as GitHub Pages and most static hosts answer."""
        if code != 404 or not send_not_found_page(self, Path(self.directory) / "404.html"):
            super().send_error(code, message, explain)

    def _file(self) -> str | None:
        """The file a GET of this URL sends (a folder's index.html), or None (a redirect, a
        listing, a missing file: the base class answers those)."""
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return None
            path = os.path.join(path, "index.html")
        return path if os.path.isfile(path) else None

    def _accepts_gzip(self) -> bool:
        return self._accepts("gzip")

    def _accepts(self, coding: str) -> bool:
        for offer in self.headers.get("Accept-Encoding", "").split(","):
            name, _, params = offer.partition(";")
            if name.strip() == coding:
                try:
                    return float(params.replace(" ", "").removeprefix("q=") or 1) > 0
                except ValueError:
                    return True
        return False

    def _unmodified_since(self, mtime: float) -> bool:
        if "If-None-Match" in self.headers or "If-Modified-Since" not in self.headers:
            return False
        try:
            since = email.utils.parsedate_to_datetime(self.headers["If-Modified-Since"]).timestamp()
        except (TypeError, IndexError, OverflowError, ValueError):
            return False
        return int(mtime) <= since

    def do_GET(self):
        if self.reloader and self.path.startswith(RELOAD_PATH):
            return self.reloader.answer(self)
        page = self._lesson_page() if self.reloader else None
        if page:
            return self._send_with_reload(page)
        return super().do_GET()

    def _lesson_page(self) -> Path | None:
        """The HTML file of a lesson page (not the lab's), if that is what was asked for."""
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        if url_path.startswith("/lab/"):
            return None
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not url_path.endswith("/"):
                return None   # the base class redirects to the URL with a slash
            path = path / "index.html"
        return path if path.suffix == ".html" and path.is_file() else None

    def _send_with_reload(self, path: Path):
        body = path.read_bytes()
        at = body.rfind(b"</body>")
        body = body[:at] + RELOAD_SCRIPT + body[at:] if at >= 0 else body + RELOAD_SCRIPT
        gzipped = self.compress and self._accepts_gzip()
        if gzipped:
            body = gzip.compress(body, compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Vary", "Accept-Encoding")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        if args and str(args[1])[0] in "45":
            super().log_message(format, *args)


class Reloader:
    """Watch source folders (mtime polling), rebuild, and answer the pages' long-poll."""

    def __init__(self):
        self.version = str(time.time())
        self.changed = threading.Condition()

    def answer(self, handler):
        seen = handler.path.partition("v=")[2]
        with self.changed:
            if seen == self.version:
                self.changed.wait(timeout=25)
            body = self.version.encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    @staticmethod
    def snapshot(paths: list[str]) -> dict:
        stamp = {}
        for rel in paths:
            base = ROOT / rel
            for p in [base, *base.rglob("*")] if base.is_dir() else [base]:
                if p.is_file():
                    stamp[str(p)] = p.stat().st_mtime_ns
        return stamp

    def watch(self, interval: float = 0.5):
        lessons, lab = self.snapshot(LESSON_SOURCES), self.snapshot(LAB_SOURCES)
        while True:
            time.sleep(interval)
            now_lessons, now_lab = self.snapshot(LESSON_SOURCES), self.snapshot(LAB_SOURCES)
            if now_lessons == lessons and now_lab == lab:
                continue
            rebuild_lab = now_lab != lab
            lessons, lab = now_lessons, now_lab
            print("改動了：重建" + ("實驗場與" if rebuild_lab else "") + "課文頁…", file=sys.stderr)
            try:
                build.build(lessons=True, lab=rebuild_lab)
            except Exception as err:  # keep serving the last good build
                print(f"重建失敗：{build.failure(err)}", file=sys.stderr)
                continue
            with self.changed:
                self.version = str(time.time())
                self.changed.notify_all()


def make_server(root: Path, port: int, host: str = "127.0.0.1", reloader: Reloader | None = None,
                cache_hashed: bool = True, compress: bool = True,
                tell_leaving: bool = True, lab_isolation: bool = False) -> http.server.ThreadingHTTPServer:
    """lab_isolation (an experiment, benchmarks/lab_boot.py): the lab's pages get a
    Document-Isolation-Policy, so that Chromium runs them in a process of their own, off the
    lesson's thread; the lesson's scripts then cannot reach into the lab's frame (they do today)."""
    options = {"reloader": reloader, "cache_hashed": cache_hashed, "compress": compress,
               "tell_leaving": tell_leaving, "lab_isolation": lab_isolation}
    handler = functools.partial(type("Handler", (SiteHandler,), options), directory=str(root))
    return SiteServer((host, port), handler)


class SiteServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # a classroom opens ~180 connections at once (30 browsers × 6); socketserver's backlog of 5
    # would drop most of their SYNs, each retried a second or more later
    request_queue_size = 256


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=os.environ.get("HOST") or "127.0.0.1",
                        help="聽哪個位址（預設 127.0.0.1，只有這台電腦連得到；0.0.0.0 讓區網裡的電腦也連得到）")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000))
    parser.add_argument("--no-build", action="store_true", help="直接服務現有的 build/site")
    parser.add_argument("--no-watch", action="store_true", help="不監看原始檔、不自動重新整理")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_options(argv)
    reloader = None if args.no_watch else Reloader()
    try:     # the port first: a busy one is said at once, not after the build
        server = make_server(build.SITE, args.port, host=args.host, reloader=reloader)
    except OSError as err:
        print(f"沒辦法在 {args.host}:{args.port} 提供課程：{err.strerror}。這個埠也許已經有另一個 make serve"
              f"（或別的程式）在用：關掉它，或換一個埠，例如 make serve PORT={args.port + 1}", file=sys.stderr)
        return 2
    if args.host == "127.0.0.1" and not os.environ.get("SPECDEC_SITE_URL"):
        # the lesson pages are built for the address they are served at: Material's instant
        # navigation only follows links to the site's own URL (on another port every click reloaded)
        os.environ["SPECDEC_SITE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/"
    if not args.no_build and build.main([]) != 0:
        server.server_close()
        return 1
    if reloader:
        threading.Thread(target=reloader.watch, daemon=True).start()
    print(f"課程在 http://127.0.0.1:{args.port}/ （Ctrl+C 結束）", file=sys.stderr)
    if args.host != "127.0.0.1":
        print(f"也在 http://{'<這台電腦的 IP>' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}/"
              "（同一個網路裡的電腦連這個；IP 用 hostname -I 查）", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
