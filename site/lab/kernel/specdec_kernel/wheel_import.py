"""Runs INSIDE the kernel's Pyodide: the pure-Python wheels of runtime.toml [kernel] zip_imported
are imported straight from the wheel (CPython's zipimport) instead of being unzipped, file by file,
into Pyodide's in-memory file system on every page load.

Pyodide looks up the Python function that installs a package (pyodide._package_loader.unpack_buffer)
anew for every package it loads; install() replaces it, for those wheels, by one that writes the
wheel into site-packages as it is and puts it on sys.path. Every later load (a cell's imports,
%pip) goes through the same function. Two changes to zipimport keep imports from these wheels, and
from the standard library's zip, from being read twice (see _filename and _keeping).
The build serves the wheels ready for that (site/lab/builder/zip_import.py). Plain Python, tested
in CPython (tests/test_wheel_import.py) with a stand-in for Pyodide's package loader.
"""
from __future__ import annotations

import sys
import zipimport


def unpacking(unzip, names: set[str], unchanging: set[str], canonical, to_js):
    """Pyodide's unpack_buffer, but a wheel of `names` (canonical names) is written as it is and
    put on sys.path; `unchanging` gets its path."""
    def unpack_buffer(buffer, *, filename="", extract_dir=None, calculate_dynlibs=False, **options):
        name = filename.rpartition("/")[2]
        if not (name.endswith(".whl") and extract_dir and canonical(name.split("-")[0]) in names):
            return unzip(buffer, filename=filename, extract_dir=extract_dir,
                         calculate_dynlibs=calculate_dynlibs, **options)
        wheel = f"{extract_dir}/{name}"
        with open(wheel, "wb") as file:
            buffer._into_file(file)
        unchanging.add(wheel)
        sys.path.append(wheel)
        return to_js([]) if calculate_dynlibs else None     # no shared libraries to load
    return unpack_buffer


def _filename(self, fullname):
    """zipimporter.get_filename without reading the module: Python 3.12's reads, inflates and
    unmarshals it only to learn its file name, and the import then does it all again. The file
    name is that of the first entry found, which is the one loaded (the build's bytecode is never
    stale here)."""
    path = zipimport._get_module_path(self, fullname)
    for suffix, isbytecode, ispackage in zipimport._zip_searchorder:
        entry = self._files.get(path + suffix)
        if entry is not None:
            return entry[0]
    raise zipimport.ZipImportError(f"can't find module {fullname!r}", name=fullname)


def _keeping(unchanging: set[str], invalidate):
    """zipimporter.invalidate_caches, but not for the archives in `unchanging`: Pyodide calls it
    after every package it loads, and it re-reads the whole directory of every archive imported
    from; these never change."""
    def invalidate_caches(self):
        if self.archive not in unchanging:
            invalidate(self)
    return invalidate_caches


def install(names: list[str], package_loader=None, to_js=None) -> set[str]:
    """Have Pyodide's package loader (`package_loader`: pyodide._package_loader) import the wheels
    of `names` as they are, and zipimport read the standard library's zip and those wheels once.
    Returns the set of archives taken as unchanging (it grows as wheels arrive)."""
    if package_loader is None:
        from pyodide import _package_loader as package_loader
        from pyodide.ffi import to_js
    unchanging = {p for p in sys.path if p.endswith(".zip")}    # the standard library's
    zipimport.zipimporter.get_filename = _filename
    zipimport.zipimporter.invalidate_caches = _keeping(unchanging, zipimport.zipimporter.invalidate_caches)
    canonical = package_loader.canonicalize_name
    package_loader.unpack_buffer = unpacking(package_loader.unpack_buffer, {canonical(n) for n in names},
                                             unchanging, canonical, to_js)
    return unchanging
