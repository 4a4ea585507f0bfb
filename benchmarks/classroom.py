"""A classroom of 30 on one link: 30 students open lesson 1 and its 實驗場 at once, cold.

    python benchmarks/classroom.py [--clients 30] [--rate 100] [--site build/site]
    python benchmarks/classroom.py --record      # re-record the request list from a real visit

Each client makes the requests of a real cold visit (tests/fixtures/cold_visit.json: what headless
Chromium requested, in order, opening lesson 1 and running every cell; `--record` takes it again),
six connections at a time and keep-alive as a browser does, `Accept-Encoding: gzip, deflate` (what
Chromium sends over plain http:// to a LAN address; br only over HTTPS and from localhost),
every body read to the end. All 30 go through ONE shaped link (benchmarks/throttle.py: a throttling
proxy in this process, --rate Mbit/s shared by every connection, +5 ms; loopback only, 127.0.0.1,
nothing changed on the machine) to a server started for the run:
  - serve.py:        site/serve.py's server on 127.0.0.1 (what `make serve` runs, without the watcher);
  - http.server:     python -m http.server --bind 127.0.0.1 (no compression, no cache headers).
For each: requests done and failed, MB through the link, when the last client finished, and that
against the link's limit (MB × 8 ÷ rate): the link is used well when the ratio is near 1 (goal
≤ 1.3). Bounded: --clients clients, each request at most --request-timeout s, the whole class at
most --bound s (then what was unfinished is counted as failed). Prints, asserts nothing.
"""
from __future__ import annotations

import argparse
import http.client
import json
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "site"))
from throttle import Link, throttle_for  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "cold_visit.json"
SITE = ROOT / "build" / "site"
PYODIDE = "{pyodide}"      # the fixture's name for the content-addressed Pyodide folder
CONNECTIONS = 6            # per client, as a browser opens per host
# what Chromium asks for over plain http:// to a LAN address (the classroom's make serve HOST=0.0.0.0):
# no br, which it takes only over HTTPS and from localhost
ACCEPT = "gzip, deflate"


def pyodide_folder(site: Path) -> str:
    from lab.builder import build_lab  # site/lab/builder
    return build_lab.pyodide_dir(site / "lab").relative_to(site).as_posix()


def request_list(site: Path, fixture: Path = FIXTURE) -> tuple[list[str], set[str]]:
    """The recorded visit's paths, for this build (its Pyodide folder), and those a visit is
    answered 404 for (JupyterLite asks whether the server has a drive)."""
    recorded = json.loads(fixture.read_text())
    folder = pyodide_folder(site)
    return ([path.replace(PYODIDE, folder) for path in recorded["paths"]],
            {path.replace(PYODIDE, folder) for path in recorded["missing"]})


# the servers -----------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVERS = {
    # what `make serve` runs (site/serve.py --no-build --no-watch), for any built folder
    "serve.py": lambda site, port: [sys.executable, "-c", "import sys; sys.path.insert(0, 'site'); import serve; "
                                    f"serve.make_server(__import__('pathlib').Path({str(site)!r}), {port})"
                                    ".serve_forever()"],
    "http.server": lambda site, port: [sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                                       "--directory", str(site), str(port)],
}


class Server:
    """A server in a process of its own (its own GIL, as in a classroom), stopped by its id."""

    def __init__(self, kind: str, site: Path):
        self.port = free_port()
        self.log = tempfile.TemporaryFile(mode="w+")     # what it says (not a pipe: never fills)
        self.process = subprocess.Popen(SERVERS[kind](site, self.port), cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=self.log, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:        # until it answers
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{kind} did not start listening on {self.port} within 30 s")

    def stop(self) -> str:
        """Stop it; returns what it wrote to stderr."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.seek(0)
        return self.log.read()


# the clients ---------------------------------------------------------------------------------------

def client(port: int, paths: list[str], timeout: float, deadline: float, missing=frozenset()) -> dict:
    """One student: `paths` over CONNECTIONS keep-alive connections, each body read to the end."""
    todo: queue.Queue = queue.Queue()
    for path in paths:
        todo.put(path)
    done = {"ok": 0, "errors": [], "bytes": 0}
    lock = threading.Lock()

    def connection():
        conn = None
        while time.monotonic() < deadline:
            try:
                path = todo.get_nowait()
            except queue.Empty:
                break
            for attempt in (1, 2):        # a keep-alive connection the server closed: once more
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
                    conn.request("GET", "/" + path, headers={"Accept-Encoding": ACCEPT})
                    response = conn.getresponse()
                    size = 0
                    while chunk := response.read(65536):
                        size += len(chunk)
                        if time.monotonic() > deadline:
                            raise TimeoutError("the class's time bound")
                    with lock:
                        if response.status == 200 or (response.status == 404 and path in missing):
                            done["ok"] += 1
                        else:
                            done["errors"].append(f"{response.status} {path}")
                        done["bytes"] += size
                    if response.getheader("Connection", "").lower() == "close" or response.version == 10:
                        conn.close()
                        conn = None
                    break
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                    conn.close()
                    conn = None
                    if attempt == 2:
                        with lock:
                            done["errors"].append(f"{type(error).__name__} {path}")
                except (OSError, http.client.HTTPException) as error:
                    if conn:
                        conn.close()
                    conn = None
                    with lock:
                        done["errors"].append(f"{type(error).__name__}: {error} {path}")
                    break
        if conn:
            conn.close()

    threads = [threading.Thread(target=connection, daemon=True) for _ in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()) + timeout)
    with lock:
        done["errors"] += [f"unfinished {todo.qsize()} requests"] if todo.qsize() else []
        done["finished"] = time.monotonic()
    return done


def classroom(port: int, paths: list[str], clients: int, link: Link, timeout: float, bound: float,
              missing=frozenset()) -> dict:
    """`clients` students at once through one `link` to the server on `port`."""
    with throttle_for(f"http://127.0.0.1:{port}/", link) as (url, proxy):
        proxy_port = int(url.rsplit(":", 1)[1].strip("/"))
        started = time.monotonic()
        deadline = started + bound
        results: list[dict] = [None] * clients

        def student(i):
            results[i] = client(proxy_port, paths, timeout, deadline, missing)
        threads = [threading.Thread(target=student, args=(i,), daemon=True) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()) + 2 * timeout)
        through = proxy.sent
    ended = [r for r in results if r is not None]
    return {
        "clients": clients, "finished": len(ended),
        "ok": sum(r["ok"] for r in ended), "requests": clients * len(paths),
        "errors": [e for r in ended for e in r["errors"]] + ["a client never ended"] * (clients - len(ended)),
        "body_bytes": sum(r["bytes"] for r in ended), "link_bytes": through,
        "last": max((r["finished"] for r in ended), default=started) - started,
        "first": min((r["finished"] for r in ended), default=started) - started,
    }


# recording a real visit ------------------------------------------------------------------------------

def record(site: Path, fixture: Path = FIXTURE) -> None:
    """Open lesson 1 in headless Chromium (fresh context), Run all, wait for every cell; write every
    request of the page and its workers, in order, as paths (the Pyodide folder as {pyodide})."""
    sys.path.insert(0, str(ROOT / "tests"))
    from support.lab import LabPage, serve_site
    from support.server import chromium
    folder = pyodide_folder(site)
    with serve_site(site) as base, chromium() as browser:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        paths: list[str] = []
        context.on("request", lambda r: paths.append(r.url) if r.url.startswith(base) else None)
        lab = LabPage.open(context, base)
        lab.run_all(early=True, timeout=120)
        lab.first_output(240)
        lab.wait_all_run(300)
        context.close()
        # what the server answers 404 (asked from the kernel's worker, Playwright sees no response)
        missing = set()
        for url in set(paths):
            try:
                urllib.request.urlopen(url, timeout=30).close()
            except urllib.error.HTTPError as error:
                if error.code == 404:
                    missing.add(url)
    seen, ordered = set(), []
    for url in paths:
        path = url[len(base):].split("#", 1)[0]
        if path not in seen and "__reload" not in path:
            seen.add(path)
            ordered.append(path.replace(folder, PYODIDE))
    absent = sorted({url[len(base):].split("#", 1)[0].replace(folder, PYODIDE) for url in missing})
    fixture.write_text(json.dumps({
        "what": "every request (first time each) of a cold visit of lesson 1 with Run all, in order, "
                "recorded by benchmarks/classroom.py --record in headless Chromium; the Pyodide folder "
                "is {pyodide}; `missing` were answered 404 in the visit too (JupyterLite asks for them)",
        "missing": absent, "paths": ordered}, indent=1) + "\n")
    print(f"recorded {len(ordered)} requests into {fixture.relative_to(ROOT)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--rate", type=float, default=100, help="the link's Mbit/s (default 100)")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--servers", default="serve.py,http.server")
    parser.add_argument("--request-timeout", type=float, default=120)
    parser.add_argument("--bound", type=float, default=600, help="seconds the whole class may take")
    parser.add_argument("--record", action="store_true", help="re-record the request list, then stop")
    args = parser.parse_args()
    if args.record:
        record(args.site)
        return 0
    paths, missing = request_list(args.site)
    link = Link("classroom", args.rate * 1e6, 0.005)
    print(f"{args.clients} clients × {len(paths)} requests of a cold visit, through {link.describe()}")
    rows = {}
    for kind in args.servers.split(","):
        server = Server(kind, args.site)
        try:
            rows[kind] = classroom(server.port, paths, args.clients, link, args.request_timeout, args.bound,
                                   missing)
        finally:
            said = server.stop()
        row = rows[kind]
        row["stderr_lines"] = len([line for line in said.splitlines() if line.strip()])
        print(f"  {kind}: done", flush=True)
    print(f"\n{'server':14}{'ok':>8}{'errors':>8}{'MB link':>10}{'MB/client':>11}{'first s':>9}"
          f"{'last s':>8}{'limit s':>9}{'last÷limit':>11}{'log lines':>10}")
    for kind, r in rows.items():
        limit = r["link_bytes"] * 8 / link.rate
        print(f"{kind:14}{r['ok']:8d}{len(r['errors']):8d}{r['link_bytes'] / 1e6:10.0f}"
              f"{r['link_bytes'] / 1e6 / args.clients:11.1f}{r['first']:9.1f}{r['last']:8.1f}"
              f"{limit:9.1f}{r['last'] / limit if limit else float('nan'):11.2f}{r['stderr_lines']:10d}")
        for error in r["errors"][:5]:
            print(f"    error: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
