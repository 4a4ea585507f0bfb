"""The offline manifest (offline.json at the site's root): every file of the built site with the
sha256 of its content and its size, and the build's version, a hash of that list. The service
workers (site/offline/offline-sw.js) keep one cache per version and take a file into it only if
its bytes have the manifest's hash, so a cache never mixes two builds; a file whose hash did not
change is copied from the old cache instead of fetched again."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

MANIFEST = "offline.json"
# not cached: compressed siblings (the server picks them), the manifest itself and the workers'
# scripts (the browser fetches a worker's scripts itself, past every worker)
LEFT_OUT_SUFFIXES = (".br", ".gz")
LEFT_OUT_NAMES = {MANIFEST, "sw.js", "offline-sw.js", "lab/service-worker.js"}


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest(site: Path) -> dict:
    """{"version": hash of "files", "files": {path under site: [sha256, bytes]}}, paths sorted."""
    files = {}
    for path in sorted(site.rglob("*")):
        name = path.relative_to(site).as_posix()
        if path.is_file() and not name.endswith(LEFT_OUT_SUFFIXES) and name not in LEFT_OUT_NAMES:
            files[name] = [file_hash(path), path.stat().st_size]
    listing = json.dumps(files, sort_keys=True, separators=(",", ":")).encode()
    return {"version": hashlib.sha256(listing).hexdigest()[:16], "files": files}


def write_manifest(site: Path) -> dict:
    """Write site/offline.json (replacing, never writing through a hard link) and return it."""
    data = manifest(site)
    target = site / MANIFEST
    if target.exists():
        target.unlink()
    target.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    return data
