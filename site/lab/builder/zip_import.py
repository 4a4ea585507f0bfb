"""Wheels served ready to be imported from as they are (runtime.toml [kernel] zip_imported).

Pyodide installs a wheel by unzipping every file into its in-memory file system, on every page
load. For the listed pure-Python packages the kernel's Pyodide loader (site/lab/kernel/pyodide-loader.js)
instead writes the wheel into site-packages unopened and puts it on sys.path, and CPython's
zipimport reads modules straight from it. Two things zipimport needs that a wheel does not carry:
  - a directory entry ("pkg/sub/") for every folder: zipimport has no implicit directories, so a
    namespace package (a folder without __init__.py, e.g. micropip._vendored) is not found
    without one. This module adds them (the build's own CPython; nothing else changes);
  - bytecode beside each module (pkg/mod.pyc, not pkg/__pycache__/...): site/lab/builder/bytecode.py adds
    it for these wheels in that layout ("zipimport" in site/lab/node/add_bytecode.py).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from lab.builder import fetch
from lab.builder.fetch import BuildError
from lab.builder.pyodide_dist import LOCK, normalize

FIXED_TIME = (1980, 1, 1, 0, 0, 0)     # the same input, the same output


def missing_directories(names: list[str]) -> list[str]:
    """The folders of `names` (member names) that have no entry of their own, parents first."""
    have = set(names)
    wanted = {"/".join(parts[:i]) + "/" for name in names
              for parts in [name.split("/")[:-1]] for i in range(1, len(parts) + 1)}
    return sorted(wanted - have)


def make_importable(wheel: Path) -> int:
    """Rewrite `wheel` in place with a directory entry for every folder, after its own members
    (copied unchanged, in order). Refuses a wheel with a compiled extension. Returns the number
    of entries added."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        compiled = [n for n in names if n.endswith(".so") or ".so." in n.rsplit("/", 1)[-1]]
        if compiled:
            raise BuildError(f"{wheel.name}：有編譯過的擴充（{compiled[0]}），不能從 zip 匯入"
                             "（runtime.toml [kernel] zip_imported）")
        folders = missing_directories(names)
        if not folders:
            return 0
        staged = wheel.with_name(wheel.name + ".tmp")
        with zipfile.ZipFile(staged, "w") as out:
            for info in z.infolist():
                out.writestr(info, z.read(info), compress_type=info.compress_type)
            for folder in folders:
                out.writestr(zipfile.ZipInfo(folder, FIXED_TIME), b"")
    staged.replace(wheel)
    return len(folders)


def prepare(pyodide_dir: Path, packages: list[str]) -> dict[str, int]:
    """make_importable for each of `packages` (lock names) in `pyodide_dir`, the lock's sha256
    following. Every name must be a wheel in the lock (a typo would otherwise do nothing).
    Returns wheel file name -> directory entries added."""
    lock_path = pyodide_dir / LOCK
    lock = json.loads(lock_path.read_text())
    entries = {normalize(name): entry for name, entry in lock["packages"].items()}
    unknown = [p for p in packages if normalize(p) not in entries
               or not entries[normalize(p)]["file_name"].endswith(".whl")]
    if unknown:
        raise BuildError(f"runtime.toml [kernel] zip_imported：{unknown} 不是 lock 裡的 wheel")
    added = {}
    for name in packages:
        entry = entries[normalize(name)]
        wheel = pyodide_dir / entry["file_name"]
        added[wheel.name] = make_importable(wheel)
        entry["sha256"] = fetch.sha256_of(wheel)
    lock_path.write_text(json.dumps(lock, ensure_ascii=False, indent=1))
    return added
