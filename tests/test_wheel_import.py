"""site/lab/kernel/specdec_kernel/wheel_import.py in this CPython, with a stand-in for Pyodide's
package loader: a wheel of runtime.toml [kernel] zip_imported is written as it is, put on sys.path
and imported from the zip; any other package is unzipped by Pyodide's own function; zipimport
learns a module's file name without reading it and never re-reads an archive that cannot change.
In Pyodide, through the lab's loader: tests/test_lab_build.py (the kernel's start under Node.js)."""
from __future__ import annotations

import os
import re
import sys
import types
import zipfile
import zipimport
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
from specdec_kernel import wheel_import  # noqa: E402  (plain Python, run inside Pyodide)

pytestmark = pytest.mark.fast


class Buffer:
    """What Pyodide hands unpack_buffer: a JavaScript buffer that writes itself into a file."""

    def __init__(self, data: bytes):
        self.data = data

    def _into_file(self, file):
        file.write(self.data)


def a_wheel(folder: Path, name: str, value: int) -> bytes:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/__init__.py", f"VALUE = {value}\n")
        z.writestr(f"{name}-1.0.dist-info/METADATA", f"Name: {name}\nVersion: 1.0\n")
    data = path.read_bytes()
    path.unlink()
    return data


@pytest.fixture
def loader(monkeypatch):
    """A stand-in for pyodide._package_loader, its unpack_buffer noting what it was asked to unzip;
    sys.path, sys.modules and zipimport as they were after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("get_filename", "invalidate_caches"):
        monkeypatch.setattr(zipimport.zipimporter, name, getattr(zipimport.zipimporter, name))
    before = set(sys.modules)
    unzipped = []
    package_loader = types.SimpleNamespace(
        canonicalize_name=lambda name: re.sub(r"[-_.]+", "-", name).lower(),
        unpack_buffer=lambda buffer, **options: unzipped.append(options) or "unzipped")
    package_loader.unzipped = unzipped
    yield package_loader
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_a_listed_wheel_is_imported_from_the_zip_and_others_are_unzipped(loader, tmp_path):
    wheel_import.install(["Tiny-Wheel"], package_loader=loader, to_js=list)
    site = tmp_path / "site-packages"
    site.mkdir()
    data = a_wheel(tmp_path, "tiny_wheel", 42)
    got = loader.unpack_buffer(Buffer(data), filename="https://x/pyodide/tiny_wheel-1.0-py3-none-any.whl",
                               extract_dir=str(site), calculate_dynlibs=True)
    assert got == [] and loader.unzipped == []             # no shared libraries; nothing unzipped
    wheel = site / "tiny_wheel-1.0-py3-none-any.whl"
    assert wheel.read_bytes() == data and sys.path[-1] == str(wheel)
    import tiny_wheel
    assert tiny_wheel.VALUE == 42 and tiny_wheel.__file__.startswith(str(wheel))
    other = loader.unpack_buffer(Buffer(b""), filename="numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl",
                                 extract_dir=str(site), calculate_dynlibs=False)
    assert other == "unzipped" and loader.unzipped[0]["filename"].startswith("numpy-")
    assert loader.unpack_buffer(Buffer(b""), filename="tiny_wheel-1.0.tar", extract_dir=str(site)) == "unzipped"


def test_zipimport_names_a_modules_file_without_reading_it(loader, tmp_path):
    path = tmp_path / "mod.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("pkg/__init__.py", "")
        z.writestr("broken.py", "def (\n")                 # compiling it would raise SyntaxError
    with pytest.raises(SyntaxError):
        zipimport.zipimporter(str(path)).get_filename("broken")
    wheel_import.install([], package_loader=loader, to_js=list)
    importer = zipimport.zipimporter(str(path))
    assert importer.get_filename("broken") == f"{path}{os.sep}broken.py"
    assert importer.get_filename("pkg") == f"{path}{os.sep}pkg{os.sep}__init__.py"
    with pytest.raises(zipimport.ZipImportError, match="nothing"):
        importer.get_filename("nothing")


def test_an_unchanging_archive_keeps_its_directory_and_another_is_read_again(loader, tmp_path):
    kept, changing = tmp_path / "kept.zip", tmp_path / "changing.zip"
    for path in (kept, changing):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a.py", "")
    unchanging = wheel_import.install([], package_loader=loader, to_js=list)
    unchanging.add(str(kept))
    importers = {path: zipimport.zipimporter(str(path)) for path in (kept, changing)}
    for path in (kept, changing):
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("b.py", "")
        importers[path].invalidate_caches()
    assert importers[kept].find_spec("b") is None            # its directory as first read
    assert importers[changing].find_spec("b") is not None
