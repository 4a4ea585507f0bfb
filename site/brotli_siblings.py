"""Brotli siblings: `name.br` beside every text and WebAssembly file of the built site where
Brotli beats gzip, for servers that send a precompressed sibling to a browser that accepts `br`
(site/serve.py does; so do nginx's brotli_static, Caddy's precompressed, GitLab Pages).

Brotli at quality 11 is slow (pyodide.asm.wasm, 10 MB: about a minute) but its output is kept:
each sibling is cached by its file's sha256 in ${XDG_CACHE_HOME:-~/.cache}/specdec-lab/brotli/,
so a rebuild compresses only what changed (JupyterLite's bundles and Pyodide's core never do).
What it buys, measured on the lab's cold visit: pyodide.asm.wasm 3.16 MB with gzip -> 2.27 MB,
JupyterLite's JavaScript about 0.4 MB less. Browsers ask for `br` only over HTTPS and from
localhost / 127.0.0.1; over plain http://<a LAN IP> (a classroom on `make serve HOST=0.0.0.0`)
they take gzip.
"""
from __future__ import annotations

import gzip
import hashlib
import re
import tempfile
from pathlib import Path

from lab.builder import fetch

import brotli

# what site/serve.py compresses (text and WebAssembly), by name
SUFFIXES = re.compile(r"\.(html|css|js|mjs|json|ipynb|webmanifest|svg|xml|txt|wasm|map)$")
MIN_BYTES = 1024


def compressed(data: bytes) -> bytes:
    """`data` at Brotli's best, from the cache when this content was compressed before."""
    cache = fetch.cache_dir() / "brotli"
    entry = cache / (hashlib.sha256(data).hexdigest() + ".br")
    if entry.is_file():
        body = entry.read_bytes()
        if brotli.decompress(body) == data:     # checked on every use, as every cached download is
            return body
    body = brotli.compress(data, quality=11)
    cache.mkdir(parents=True, exist_ok=True)
    # a name of its own: two builds at once (the test suite's workers) may compress the same file
    with tempfile.NamedTemporaryFile(dir=cache, suffix=".part", delete=False) as partial:
        partial.write(body)
    Path(partial.name).replace(entry)            # a new entry, complete or absent
    return body


def write_siblings(site: Path) -> dict:
    """Write name.br beside each text or wasm file of `site` where Brotli beats gzip -6."""
    written, saved = 0, 0
    for path in sorted(site.rglob("*")):
        if not (path.is_file() and SUFFIXES.search(path.name)) or path.stat().st_size < MIN_BYTES:
            continue
        data = path.read_bytes()
        body = compressed(data)
        against = len(gzip.compress(data, compresslevel=6, mtime=0))
        sibling = path.with_name(path.name + ".br")
        if len(body) < against:
            sibling.write_bytes(body)
            written += 1
            saved += against - len(body)
        elif sibling.exists():
            sibling.unlink()
    return {"files": written, "saved": saved}
