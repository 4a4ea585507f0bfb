"""The offline manifest (site/offline/manifest.py): every file with its content hash, a version
that follows content only, compressed siblings and the workers' scripts left out."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site"))
from offline.manifest import MANIFEST, manifest, write_manifest  # noqa: E402


def make_site(root: Path) -> Path:
    for name, text in {"index.html": "<h1>一</h1>", "index.html.br": "xx", "your-gpu/index.html": "<h1>二</h1>",
                       "lab/service-worker.js": "sw", "lab/static/pyodide-abc/numpy.whl": "wheel",
                       "sw.js": "root sw", "search/search_index.json": "{}"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_every_file_has_its_content_hash_and_size(tmp_path):
    site = make_site(tmp_path)
    files = manifest(site)["files"]
    assert sorted(files) == ["index.html", "lab/static/pyodide-abc/numpy.whl", "search/search_index.json",
                             "your-gpu/index.html"]
    for name, (digest, size) in files.items():
        data = (site / name).read_bytes()
        assert digest == hashlib.sha256(data).hexdigest() and size == len(data), name


def test_the_version_follows_content_only(tmp_path):
    site = make_site(tmp_path)
    first = manifest(site)["version"]
    (site / "index.html").touch()                       # a new mtime, same bytes
    assert manifest(site)["version"] == first
    (site / "index.html.br").write_text("changed")        # a sibling left out
    assert manifest(site)["version"] == first
    (site / "your-gpu/index.html").write_text("<h1>改</h1>", encoding="utf-8")
    changed = manifest(site)
    assert changed["version"] != first
    assert changed["files"]["index.html"] == manifest(make_site(tmp_path / "again"))["files"]["index.html"]


def test_written_beside_the_site_and_not_listed_in_itself(tmp_path):
    site = make_site(tmp_path)
    written = write_manifest(site)
    assert json.loads((site / MANIFEST).read_text(encoding="utf-8")) == written
    assert write_manifest(site) == written               # writing it again changes nothing
    assert MANIFEST not in written["files"]
