"""Runs INSIDE the kernel's Pyodide: the modules and source lines that come later.

The archives Python fetches as the kernel starts hold bytecode, not sources, and none of the
modules nothing imported when the build profiled the kernel and the notebooks (site/lab/builder/later.py
moved them to a `.later.zip` beside each archive and listed them in later.json). This puts them
back the moment they are wanted:
  - an import of a listed module, which no start archive holds (`import this`, a pygments
    lexer for a language the lessons never show, numpy.fft and its extension module, which
    Python opens from the file system as it opens any) fetches that archive's later part once,
    unpacks it into /lib/later/, and imports the module from there; a package of the start
    archive gets that folder on its __path__, so its other later modules import as usual;
  - a source line a traceback, a warning or `inspect.getsource` asks for (through linecache)
    of a module that runs from bytecode is read from the same later part, fetched the same way.
`read(name)` returns a later archive's bytes: in the browser a synchronous request from the
kernel's worker (over_http: a worker may make one; no WebAssembly stack switching, which Safari
lacks, is involved), under Node.js a file read (from_folder: site/lab/node/run_in_pyodide.mjs).
Plain Python, tested in CPython (tests/test_later.py).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import io
import linecache
import os
import sys
import tokenize
import zipfile

FOLDER = "/lib/later"


def module_name(path: str) -> str:
    """'email/mime/__init__.py' -> 'email.mime', 'json/decoder.py' -> 'json.decoder',
    'numpy/fft/_pocketfft_umath.cpython-312-wasm32-emscripten.so' -> 'numpy.fft._pocketfft_umath'"""
    folder, _, file = path.rpartition("/")
    names = (folder.split("/") if folder else []) + [file.split(".")[0]]
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


class Later(importlib.abc.MetaPathFinder):
    """Just before the finder of sys.path on sys.meta_path, so that a later package whose folder
    in the start archive kept a data file is not taken for a namespace package; finds only the
    modules later.json lists, which no start archive holds."""

    def __init__(self, archives: list[dict], read, folder: str = FOLDER):
        self.read, self.folder = read, folder
        self.by_module, self.by_source, self.unpacked = {}, {}, {}
        for archive in archives:
            for path in archive["modules"]:
                self.by_module.setdefault(module_name(path), archive)
            for path in archive["modules"] + archive["sources"]:
                if path.endswith(".py"):
                    self.by_source[archive["root"] + path] = (archive, path)

    def find_spec(self, fullname, path=None, target=None):
        archive = self.by_module.get(fullname)
        parent = fullname.rpartition(".")[0]
        if archive is None or (parent and parent not in sys.modules):
            return None
        where = os.path.join(self.unpack(archive), *parent.split(".")) if parent else self.unpack(archive)
        spec = importlib.machinery.PathFinder.find_spec(fullname, [where])
        search = getattr(sys.modules.get(parent), "__path__", None) if parent else None
        if spec is not None and isinstance(search, list) and where not in search:
            search.append(where)          # the package's other later modules: found as usual
        return spec

    def unpack(self, archive: dict) -> str:
        """The folder of `archive`'s later part, fetched and unpacked the first time."""
        folder = self.unpacked.get(archive["file"])
        if folder is None:
            try:
                data = self.read(archive["file"])
            except Exception as error:
                raise ImportError(f"{archive['file']} 取不到（{error}）：這個模組要從它載入") from error
            folder = os.path.join(self.folder, archive["file"].removesuffix(".zip"))
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                z.extractall(folder)
            self.unpacked[archive["file"]] = folder
        return folder

    def source_lines(self, filename: str) -> list[str]:
        """The lines of a module that runs from bytecode, put into linecache ([] if not ours)."""
        found = self.by_source.get(filename)
        if found is None:
            return []
        archive, path = found
        try:
            with tokenize.open(os.path.join(self.unpack(archive), path)) as f:
                lines = f.readlines()
        except (ImportError, OSError, SyntaxError):     # a traceback must not fail for its lines
            return []
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)   # never stale
        return lines


def install(archives: list[dict], read, folder: str = FOLDER) -> Later:
    """Put a Later finder before the finder of sys.path and behind linecache; returns it."""
    later = Later(archives, read, folder)
    finders = sys.meta_path
    at = finders.index(importlib.machinery.PathFinder) if importlib.machinery.PathFinder in finders else len(finders)
    finders.insert(at, later)
    updatecache = linecache.updatecache

    def update_or_fetch(filename, module_globals=None):
        return updatecache(filename, module_globals) or later.source_lines(filename)
    linecache.updatecache = update_or_fetch
    return later


def over_http(base: str):
    """read(name): `base + name` fetched with a synchronous XMLHttpRequest (the kernel's worker)."""
    def read(name: str) -> bytes:
        from js import XMLHttpRequest
        request = XMLHttpRequest.new()
        request.open("GET", base + name, False)
        request.responseType = "arraybuffer"
        request.send()
        if request.status != 200:
            raise OSError(f"{base + name}: HTTP {request.status}")
        return request.response.to_bytes()
    return read


def from_folder(base: str):
    """read(name): the file `base + name` (a folder of the file system, or one Node.js mounts)."""
    def read(name: str) -> bytes:
        with open(base + name, "rb") as f:
            return f.read()
    return read
