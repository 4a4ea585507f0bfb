"""`make serve`: build the course (site/build.py) and serve build/site/ on http://127.0.0.1:8000/.

While it runs, editing a lesson (lessons/, mkdocs.yml, site/overrides/, site/assets/, site/hooks/)
rebuilds the pages and reloads open tabs; editing a notebook (notebooks/) rebuilds the lab.

    python site/serve.py [--port 8000] [--no-build] [--no-watch]
"""
from __future__ import annotations

import argparse
import functools
import http.server
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


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right types. Content-addressed files are cached for a year; the rest
    is `no-cache` (revalidated, 304 when unchanged) so an edit shows on the next reload. With live
    reload, lesson pages get a small script that reloads them after a rebuild."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".ipynb": "application/json", ".whl": "application/zip",
        ".webmanifest": "application/manifest+json", ".svg": "image/svg+xml",
    }
    reloader: "Reloader | None" = None
    cache_hashed = True     # False: revalidate everything (to measure what the long cache is worth)

    def end_headers(self):
        immutable = self.cache_hashed and IMMUTABLE.match(self.path.split("?", 1)[0])
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        super().end_headers()

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
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
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
                print(f"重建失敗：{err}", file=sys.stderr)
                continue
            with self.changed:
                self.version = str(time.time())
                self.changed.notify_all()


def make_server(root: Path, port: int, host: str = "127.0.0.1", reloader: Reloader | None = None,
                cache_hashed: bool = True) -> http.server.ThreadingHTTPServer:
    options = {"reloader": reloader, "cache_hashed": cache_hashed}
    handler = functools.partial(type("Handler", (SiteHandler,), options), directory=str(root))
    http.server.ThreadingHTTPServer.daemon_threads = True
    return http.server.ThreadingHTTPServer((host, port), handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
    parser.add_argument("--no-build", action="store_true", help="直接服務現有的 build/site")
    parser.add_argument("--no-watch", action="store_true", help="不監看原始檔、不自動重新整理")
    args = parser.parse_args(argv)
    if not args.no_build and build.main([]) != 0:
        return 1
    reloader = None if args.no_watch else Reloader()
    if reloader:
        threading.Thread(target=reloader.watch, daemon=True).start()
    server = make_server(build.SITE, args.port, reloader=reloader)
    print(f"課程在 http://127.0.0.1:{args.port}/ （Ctrl+C 結束）", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
