"""The start archives hold bytecode; sources and unused modules come later (site/lab/builder/later.py splits
them at build time, site/lab/kernel/specdec_kernel/later_import.py brings them back inside Pyodide). Here both run in this
CPython on small made-up archives, with bytecode this CPython compiles (site/lab/node/add_bytecode.py):
the split is reversible and moves only what Python can do without at start; an import or a
traceback line fetches a later archive once, and nothing else does."""
from __future__ import annotations

import importlib
import linecache
import site
import sys
import traceback
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site"))
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
from lab.node import add_bytecode as compiler  # noqa: E402  (site/lab/node/add_bytecode.py)
from lab.builder import later  # noqa: E402
from specdec_kernel import later_import  # noqa: E402  (plain Python, run inside Pyodide)

MODULES = {
    "pkg/__init__.py": "VALUE = 1\n",
    "pkg/used.py": "def fail():\n    raise ValueError('from used')  # the line a traceback shows\n",
    "pkg/unused.py": "NAME = 'unused'\n",
    "pkg/sub/__init__.py": "from pkg.sub.deep import DEEP\n",
    "pkg/sub/deep.py": "DEEP = 'deep'\n",
    "pkg/sub/sibling.py": "SIBLING = 2\n",
    "pkg/data.json": "{}",
    "pkg/api.pyi": "VALUE: int\n",
    "pkg/include/api.h": "int f(void);\n",
    "alone.py": "ALONE = True\n",
}
COMPILED = ["pkg/__init__.py", "pkg/used.py"]    # what the import profile found
TAG = sys.implementation.cache_tag                # this CPython's, not Pyodide's cpython-312


def archive(tmp_path: Path, kind: str) -> Path:
    """A wheel (or, for "stdlib", a zip) of MODULES with this CPython's bytecode for COMPILED, laid
    out as the build lays out `kind`."""
    out = tmp_path / ("python_stdlib.zip" if kind == "stdlib" else "pkg-1.0-py3-none-any.whl")
    (tmp_path / "original").mkdir(exist_ok=True)
    source = tmp_path / "original" / out.name        # (its name is in the code's file names)
    with zipfile.ZipFile(source, "w") as z:
        for name, text in MODULES.items():
            z.writestr(name, text)
        if kind != "stdlib":
            z.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\nVersion: 1.0\n")
            z.writestr("pkg-1.0.dist-info/RECORD", "")
    compiler.add_bytecode(str(source), str(out), kind, COMPILED)
    return out


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


@pytest.mark.parametrize("kind", ["stdlib", "zipimport", "wheel"])
def test_the_split_leaves_bytecode_and_data_and_rejoins_to_the_original(tmp_path, kind):
    served = archive(tmp_path, kind)
    original = members(served)
    listed = later.split(served, kind, TAG)
    start = members(served)
    moved = members(served.with_name(later.later_name(served.name)))
    assert not [n for n in start if n.endswith(".py") or n.endswith(later.BUILD_ONLY)]
    assert {"pkg/data.json"} <= set(start) and not set(start) & set(moved)
    assert set(moved) == {n for n in MODULES if n != "pkg/data.json"}
    assert listed == {"modules": ["pkg/unused.py", "pkg/sub/__init__.py", "pkg/sub/deep.py",
                                  "pkg/sub/sibling.py", "alone.py"],
                      "sources": ["pkg/__init__.py", "pkg/used.py"]}
    if kind == "wheel":            # unpacked: the bytecode sits where Python runs it without source
        assert {"pkg/__init__.pyc", "pkg/used.pyc"} <= set(start)
        assert not [n for n in start if "__pycache__" in n]
    rejoined = tmp_path / "rejoined.zip"
    later.rejoin(served, served.with_name(later.later_name(served.name)), kind, rejoined, TAG)
    assert members(rejoined) == original


@pytest.mark.parametrize("kind", ["zipimport", "wheel"])
def test_a_package_that_reads_its_own_lines_keeps_its_compiled_sources(tmp_path, kind):
    """runtime.toml [later] keep_sources (pyparsing reads source lines through
    traceback.extract_stack as it runs): only unused modules, stubs and headers move."""
    served = archive(tmp_path, kind)
    original = members(served)
    listed = later.split(served, kind, TAG, keep_sources=True)
    start = members(served)
    assert {"pkg/__init__.py", "pkg/used.py"} <= set(start)
    assert {n: d for n, d in start.items() if n.endswith(".pyc")} == \
        {n: d for n, d in original.items() if n.endswith(".pyc")}       # where they were
    assert listed == {"modules": ["pkg/unused.py", "pkg/sub/__init__.py", "pkg/sub/deep.py",
                                  "pkg/sub/sibling.py", "alone.py"], "sources": []}
    rejoined = tmp_path / "rejoined.zip"
    later.rejoin(served, served.with_name(later.later_name(served.name)), kind, rejoined, TAG)
    assert members(rejoined) == original


def test_bytecode_of_another_interpreter_stops_the_split(tmp_path):
    """An unpacked wheel's bytecode named for another Python would be left with no source."""
    served = archive(tmp_path, "wheel")
    with pytest.raises(later.BuildError, match="的 bytecode"):
        later.split(served, "wheel", "cpython-312" if TAG != "cpython-312" else "cpython-313")


def test_an_archive_with_nothing_to_move_is_left_alone(tmp_path):
    wheel = tmp_path / "data-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("data/font.ttf", b"\0")
        z.writestr("data-1.0.dist-info/RECORD", "")
    before = wheel.read_bytes()
    assert later.split(wheel, "wheel") == {"modules": [], "sources": []}
    assert wheel.read_bytes() == before and not (tmp_path / later.later_name(wheel.name)).exists()


@pytest.fixture
def fresh_imports(monkeypatch):
    """sys.meta_path, sys.path, sys.modules and linecache as they were, after the test."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(linecache, "updatecache", linecache.updatecache)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]
    linecache.clearcache()


@pytest.mark.parametrize("kind", ["zipimport", "wheel"])
def test_later_modules_and_source_lines_are_fetched_once_when_wanted(tmp_path, kind, fresh_imports):
    served = archive(tmp_path, kind)
    listed = later.split(served, kind, TAG)
    importlib.invalidate_caches()
    # where the module's code says it lives, as add_bytecode.py compiled it (later.root in Pyodide)
    site_packages = site.getsitepackages()[0]
    if kind == "zipimport":             # Python reads the wheel as it is
        where, root = str(served), f"{site_packages}/{served.name}/"
    else:                               # Python reads it unpacked (from site-packages in Pyodide)
        where, root = str(tmp_path / "site-packages"), f"{site_packages}/"
        zipfile.ZipFile(served).extractall(where)
    sys.path.insert(0, where)
    fetched = []

    def read(name):
        fetched.append(name)
        return (tmp_path / name).read_bytes()
    finder = later_import.install([{"file": later.later_name(served.name), "root": root, **listed}],
                                  read, folder=str(tmp_path / "later"))
    assert sys.meta_path.index(finder) == sys.meta_path.index(importlib.machinery.PathFinder) - 1

    import pkg
    import pkg.used
    assert pkg.VALUE == 1 and pkg.used.__file__.endswith(".pyc") and fetched == []
    # a module that missed the absence of its package is not ours to find
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pkg.never_shipped")
    assert fetched == []
    # a traceback through a module without its source: the line is fetched with its archive
    try:
        pkg.used.fail()
    except ValueError:
        text = traceback.format_exc()
    assert "raise ValueError('from used')  # the line a traceback shows" in text
    assert fetched == [later.later_name(served.name)]
    # later modules import from the fetched archive, packages and siblings too, with no new fetch
    from pkg import unused
    from pkg.sub import DEEP
    import pkg.sub.sibling
    import alone
    assert (unused.NAME, DEEP, pkg.sub.sibling.SIBLING, alone.ALONE) == ("unused", "deep", 2, True)
    assert fetched == [later.later_name(served.name)]
    assert str(tmp_path / "later") in pkg.unused.__file__


def test_a_later_package_is_not_taken_for_a_namespace_package(tmp_path, fresh_imports):
    """A package whose folder in the start archive kept a data file (numpy.f2py) would be found by
    the path finder as a namespace package with no code, were the later finder behind it."""
    site = tmp_path / "site-packages"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "template.txt").write_text("data")
    with zipfile.ZipFile(tmp_path / "pkg.later.zip", "w") as z:
        z.writestr("pkg/sub/__init__.py", "CODE = 'here'\n")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    later_import.install([{"file": "pkg.later.zip", "root": f"{site}/", "modules": ["pkg/sub/__init__.py"],
                           "sources": []}], lambda name: (tmp_path / name).read_bytes(), folder=str(tmp_path / "l"))
    import pkg.sub
    assert pkg.sub.CODE == "here"


def test_a_later_archive_that_cannot_be_fetched_says_which(tmp_path, fresh_imports):
    def offline(name):
        raise OSError("HTTP 404")
    later_import.install([{"file": "lost.later.zip", "root": "/nowhere/", "modules": ["lost_module.py"],
                           "sources": ["kept.py"]}], offline, folder=str(tmp_path / "l"))
    with pytest.raises(ImportError, match=r"lost\.later\.zip 取不到（HTTP 404）"):
        importlib.import_module("lost_module")
    assert linecache.getlines("/nowhere/kept.py") == []     # a traceback goes on without the line


EXTENSIONS = {"pkg/_core.cpython-312-wasm32-emscripten.so": b"\0asm core",       # imported
              "pkg/_fft.cpython-312-wasm32-emscripten.so": b"\0asm fft",         # not imported
              "pkg/libhelper.so": b"\0asm helper"}          # a shared library, not a module


@pytest.mark.parametrize("kind", ["zipimport", "wheel"])
def test_an_extension_module_nothing_imported_comes_later_from_an_unpacked_wheel_only(tmp_path, kind):
    """Pyodide compiles every .so of a package it loads: an unpacked wheel's extension module
    that the import profile did not find imported goes later, listed as a module. Not a plain
    shared library (one module may need it), not from a wheel read as a zip (none has a .so),
    and none when no profile is given."""
    served = archive(tmp_path, kind)
    with zipfile.ZipFile(served, "a") as z:
        for name, data in EXTENSIONS.items():
            z.writestr(name, data)
    original = members(served)
    profiled = {later.root(served.name, kind) + "pkg/_core.cpython-312-wasm32-emscripten.so"}
    listed = later.split(served, kind, TAG, imported=profiled)
    start = members(served)
    assert {"pkg/_core.cpython-312-wasm32-emscripten.so", "pkg/libhelper.so"} <= set(start)
    fft = "pkg/_fft.cpython-312-wasm32-emscripten.so"
    assert (fft in listed["modules"]) == (fft not in start) == (kind == "wheel")
    assert not [n for n in listed["modules"] + listed["sources"] if n.endswith(".so") and n != fft]
    rejoined = tmp_path / "rejoined.zip"
    later.rejoin(served, served.with_name(later.later_name(served.name)), kind, rejoined, TAG)
    assert members(rejoined) == original


def test_without_a_profile_every_extension_module_stays(tmp_path):
    served = archive(tmp_path, "wheel")
    with zipfile.ZipFile(served, "a") as z:
        for name, data in EXTENSIONS.items():
            z.writestr(name, data)
    later.split(served, "wheel", TAG)
    assert set(EXTENSIONS) <= set(members(served))


@pytest.mark.parametrize("path, module", [
    ("email/mime/__init__.py", "email.mime"), ("json/decoder.py", "json.decoder"), ("alone.py", "alone"),
    ("numpy/fft/_pocketfft_umath.cpython-312-wasm32-emscripten.so", "numpy.fft._pocketfft_umath"),
    ("_sqlite3.cpython-312-wasm32-emscripten.so", "_sqlite3")])
def test_a_listed_path_names_its_module(path, module):
    assert later_import.module_name(path) == module
