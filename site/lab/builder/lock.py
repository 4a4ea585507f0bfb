"""Register pure-Python wheels in pyodide-lock.json, so a plain `import name` in the kernel loads
the wheel and its dependencies (Pyodide's loadPackagesFromImports) with no %pip cell."""
from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

from lab.builder.fetch import BuildError
from lab.builder.pyodide_dist import LOCK, normalize

# the environment markers of the kernel: Pyodide 0.27.x runs CPython 3.12 on Emscripten
PYODIDE_MARKERS = dict(default_environment(), python_version="3.12", python_full_version="3.12.7",
                       sys_platform="emscripten", platform_system="Emscripten",
                       platform_machine="wasm32", implementation_name="cpython")


def wheel_entry(wheel: Path, extras: tuple[str, ...] = (), data_only: bool = False) -> dict:
    """The lock entry for a pure-Python wheel: its import names and its runtime dependencies
    (plus those of the given extras). A `data_only` wheel (files for another package's folder,
    site/lab/builder/split_wheel.py) has no import names: an import never loads it, its module does."""
    name, version = wheel.name.split("-")[:2]
    if not wheel.name.endswith("-none-any.whl"):
        raise BuildError(f"{wheel.name}: 只能登錄純 Python 的 wheel")
    with zipfile.ZipFile(wheel) as z:
        tops = sorted({n.split("/")[0].removesuffix(".py") for n in z.namelist()
                       if not n.split("/")[0].endswith((".dist-info", ".data"))})
        meta = HeaderParser().parsestr(z.read(f"{name}-{version}.dist-info/METADATA").decode())
    depends = []
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        wanted = [""] + list(extras)
        if req.marker is None or any(req.marker.evaluate(dict(PYODIDE_MARKERS, extra=e))
                                     for e in wanted):
            depends.append(normalize(req.name))
    return {"name": normalize(name), "version": version, "file_name": wheel.name,
            "install_dir": "site", "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
            "package_type": "package", "imports": [] if data_only else tops, "depends": sorted(set(depends)),
            "unvendored_tests": False}


def register(pyodide_dir: Path, wheels: list[tuple[Path, dict]], not_loaded: list[str] = ()) -> list[str]:
    """Copy each (wheel, wheel_entry keyword arguments) into `pyodide_dir` and add it to the lock there,
    then take the `not_loaded` packages (runtime.toml [kernel] not_loaded and loaded_on_import)
    out of every entry's depends, so Pyodide never loads them with another (a cell's import of
    one still loads it, if shipped). Every dependency must itself be in the lock: a dangling one would
    break the import in the browser."""
    lock_path = pyodide_dir / LOCK
    lock = json.loads(lock_path.read_text())
    added = []
    for wheel, options in wheels:
        entry = wheel_entry(wheel, **options)
        shutil.copy(wheel, pyodide_dir / wheel.name)
        lock["packages"][entry["name"]] = entry
        added.append(entry["name"])
    dropped = {normalize(n) for n in not_loaded}
    for entry in lock["packages"].values():
        entry["depends"] = [d for d in entry["depends"] if normalize(d) not in dropped]
    known = {normalize(k) for k in lock["packages"]}
    for name in added:
        missing = set(lock["packages"][name]["depends"]) - known
        if missing:
            raise BuildError(f"{name} 依賴的 {sorted(missing)} 不在 pyodide-lock.json 裡")
    lock_path.write_text(json.dumps(lock, ensure_ascii=False, indent=1))
    return added
