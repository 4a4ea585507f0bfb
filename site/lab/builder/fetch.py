"""Downloads from the package registries, cached outside the repo and checked on every use.

The cache is ${XDG_CACHE_HOME:-~/.cache}/specdec-lab/; a cached file that no longer matches its
pinned digest is fetched again, a fresh download that does not match fails the build.
"""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path


class BuildError(RuntimeError):
    """The build cannot go on (a digest mismatch, a missing file, a failed download)."""


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    path = Path(root) / "specdec-lab"
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _matches_sri(path: Path, integrity: str) -> bool:
    """npm's dist.integrity, e.g. 'sha512-<base64>'."""
    algo, _, expected = integrity.partition("-")
    digest = hashlib.new(algo)
    digest.update(path.read_bytes())
    return base64.b64encode(digest.digest()).decode() == expected


def npm_tarball(url: str, integrity: str) -> Path:
    """The npm tarball at `url`, checked against the registry's dist.integrity."""
    dest = cache_dir() / "npm" / url.rsplit("/", 1)[-1]
    if dest.exists() and _matches_sri(dest, integrity):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    print(f"  下載 {url}", file=sys.stderr)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        with urllib.request.urlopen(url, timeout=180) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                tmp.write(block)
    tmp_path = Path(tmp.name)
    if not _matches_sri(tmp_path, integrity):
        tmp_path.unlink()
        raise BuildError(f"{url}: 內容與 npm 登錄的 dist.integrity {integrity} 不符")
    tmp_path.replace(dest)
    return dest


def pypi_wheel(requirement: str, sha256: str) -> Path:
    """The wheel for `name==version` from PyPI (pip download --no-deps), checked against `sha256`."""
    name, _, version = requirement.partition("==")
    if not version:
        raise BuildError(f"{requirement!r}: 需要固定版本（name==version）")
    folder = cache_dir() / "pypi"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_').lower()}-{version}-"
    for cached in folder.glob("*.whl"):
        if cached.name.lower().startswith(stem) and sha256_of(cached) == sha256:
            return cached
    print(f"  下載 {requirement}（PyPI）", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(f"{requirement} --hash=sha256:{sha256}\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--require-hashes", "-r", str(req), "-d", tmp],
            check=True,
        )
        (wheel,) = Path(tmp).glob("*.whl")
        if sha256_of(wheel) != sha256:  # pip checked it too; this keeps the promise local
            raise BuildError(f"{wheel.name}: sha256 與釘選值 {sha256} 不符")
        return Path(wheel.replace(folder / wheel.name))
