"""Brotli siblings (site/brotli_siblings.py) and site/serve.py sending them: a browser that takes
`br` gets the build's name.br, one that does not gets gzip, and a sibling older than its file
(an edit after the build) is never sent."""
import gzip
import os
import sys
import threading
import urllib.request

import brotli
import pytest

from support.site import ROOT

sys.path.insert(0, str(ROOT / "site"))
import brotli_siblings  # noqa: E402  (site/brotli_siblings.py)
import serve  # noqa: E402  (site/serve.py)

SCRIPT = ("function f(x) { return x * 2; }\n" * 400).encode()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_siblings_decode_to_their_file_and_only_where_brotli_beats_gzip(tmp_path, cache):
    site = tmp_path / "site"
    (site / "lab").mkdir(parents=True)
    (site / "lab" / "app.js").write_bytes(SCRIPT)
    (site / "lab" / "tiny.css").write_bytes(b"a{}")               # too small to bother
    (site / "lab" / "pkg.whl").write_bytes(SCRIPT)                # a zip: not text, not wasm
    done = brotli_siblings.write_siblings(site)
    assert sorted(p.name for p in site.rglob("*.br")) == ["app.js.br"]
    assert brotli.decompress((site / "lab" / "app.js.br").read_bytes()) == SCRIPT
    assert done["files"] == 1 and done["saved"] > 0
    # a second build takes the sibling from the cache, byte for byte
    (site / "lab" / "app.js.br").unlink()
    brotli_siblings.write_siblings(site)
    assert brotli.decompress((site / "lab" / "app.js.br").read_bytes()) == SCRIPT


def get(base, path, accept):
    request = urllib.request.Request(base + path, headers={"Accept-Encoding": accept})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Content-Encoding"), response.read()


def test_serve_sends_the_brotli_sibling_to_a_browser_that_takes_br(tmp_path, cache):
    (tmp_path / "app.js").write_bytes(SCRIPT)
    brotli_siblings.write_siblings(tmp_path)
    server = serve.make_server(tmp_path, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        coding, body = get(base, "app.js", "gzip, deflate, br, zstd")
        assert coding == "br" and brotli.decompress(body) == SCRIPT
        coding, body = get(base, "app.js", "gzip, deflate")
        assert coding == "gzip" and gzip.decompress(body) == SCRIPT
        coding, body = get(base, "app.js", "br;q=0, gzip")
        assert coding == "gzip"
        # edited after the build: the sibling is stale, so gzip of the file as it is now
        (tmp_path / "app.js").write_bytes(SCRIPT + b"// edited\n")
        stamp = os.stat(tmp_path / "app.js.br").st_mtime + 5
        os.utime(tmp_path / "app.js", (stamp, stamp))
        coding, body = get(base, "app.js", "gzip, br")
        assert coding == "gzip" and gzip.decompress(body).endswith(b"// edited\n")
    finally:
        server.shutdown()
        server.server_close()
