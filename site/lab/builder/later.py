"""Archives Python needs before the first output (and the first figure) hold what Python runs;
what it only might read comes later, from a sibling archive fetched on first use.

Every byte the kernel fetches before lesson 1's first output is time a learner on 4G or a class of
30 on one Wi-Fi waits for. Once site/lab/builder/bytecode.py has compiled every module the kernel and the
notebooks import, the standard library's zip and the wheels loaded at start (and with the first
figure: matplotlib, pillow, ipywidgets ...) still carry, for nothing then:
  - the source (.py) of every compiled module (2.9 MB): Python runs the .pyc; the source only
    shows lines in a traceback;
  - every module nothing imported in the profile (2.7 MB: most of the standard library, pygments'
    300 lexers, numpy's f2py and testing), and files only a compiler or a type checker reads
    (numpy's C headers, .pyi stubs, .pxd);
  - every extension module (.so) of an unpacked wheel nothing imported (numpy.fft's, numpy's test
    modules, PIL's WebP and FreeType plugins, matplotlib's triangulation): Pyodide compiles and
    links every .so of a package as it loads it, used or not; one that comes later is opened
    by Python's import as any extension module is (dlopen, from the file system).
This step moves those members of each such archive into `<archive>.later.zip` beside it and
writes later.json, which lists them; the kernel's Pyodide loader fetches a later archive the
first time Python wants one of its modules or a source line from it (site/lab/kernel/specdec_kernel/later_import.py).
The project's own wheel keeps its sources (its tracebacks are the lessons' own).

A start archive keeps every other member as it was (name, date, compression, bytes), in order; a
later archive holds the moved members as they were. For an unpacked wheel (Python reads it from
the file system, not from the zip: numpy) the .pyc moves from <folder>/__pycache__/<module>.<tag>.pyc
to <folder>/<module>.pyc, where Python runs bytecode with no source beside it. rejoin() undoes
the split, so the build's tests check what is served against the official files.
The wheel's RECORD still describes the whole wheel (it is not read at run time).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from lab.builder import fetch
from lab.builder.bytecode import SITE_PACKAGES, STDLIB_PATH
from lab.builder.fetch import BuildError
from lab.builder.pyodide_dist import LOCK

SUFFIX = ".later.zip"
INDEX = "later.json"
# read by C compilers, Cython and type checkers only: nothing in a browser tab builds extensions
BUILD_ONLY = (".pyi", ".h", ".pxd", ".pxi", ".pyx", ".c", ".a")
CACHE_TAG = "cpython-312"               # Pyodide 0.27's interpreter
EXTENSION = ".cpython-312-wasm32-emscripten.so"   # its extension modules' suffix (not a plain lib*.so)


def later_name(archive: str) -> str:
    """numpy-2.0.2-…-wasm32.whl -> numpy-2.0.2-…-wasm32.later.zip"""
    return archive.removesuffix(".whl").removesuffix(".zip") + SUFFIX


def root(archive: str, kind: str) -> str:
    """Where the archive's members live in Pyodide: the path its modules' code names."""
    return {"stdlib": STDLIB_PATH, "zipimport": f"{SITE_PACKAGES}{archive}/", "wheel": SITE_PACKAGES}[kind]


def cached_pyc(member: str, tag: str = CACHE_TAG) -> str:
    """pkg/mod.py -> pkg/__pycache__/mod.cpython-312.pyc"""
    folder, _, module = member.rpartition("/")
    cached = f"__pycache__/{module[:-3]}.{tag}.pyc"
    return f"{folder}/{cached}" if folder else cached


def goes_later(member: str) -> bool:
    top = member.split("/", 1)[0]
    if member.endswith("/") or top.endswith((".dist-info", ".data")):
        return False
    return member.endswith(".py") or member.endswith(BUILD_ONLY)


def split(archive: Path, kind: str, tag: str = CACHE_TAG, keep_sources: bool = False,
          imported: set[str] | None = None) -> dict[str, list[str]]:
    """Rewrite `archive` (kind "stdlib", "zipimport" or "wheel", as in site/lab/node/add_bytecode.py)
    without its later members and write them to later_name(archive) beside it. Returns the
    modules moved, as later.json lists them: "modules" (no bytecode stays: Python imports them
    from the later archive; .py, or the extension modules moved) and "sources" (of modules that
    run from the bytecode left). `tag`: the interpreter's cache tag, in the names of an unpacked
    wheel's bytecode. `keep_sources`: the sources of compiled modules stay (a package that reads
    its own lines as it runs). `imported`: the files the import profile found imported (paths in
    Pyodide); an unpacked wheel's extension modules not among them move too (None: none move)."""
    unused_extension = (lambda name: imported is not None and kind == "wheel" and name.endswith(EXTENSION)
                        and root(archive.name, kind) + name not in imported)
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        names = {info.filename for info in infos}

        def compiled(source: str) -> bool:
            return source[:-3] + ".pyc" in names or cached_pyc(source, tag) in names
        kept, moved = [], []
        for info in infos:
            data = z.read(info)
            name = info.filename
            if (goes_later(name) and not (keep_sources and name.endswith(".py") and compiled(name))
                    or unused_extension(name)):
                moved.append((info, data))
                continue
            if kind == "wheel" and not keep_sources and "/__pycache__/" in f"/{name}":
                folder, _, cached = name.rpartition("__pycache__/")
                stem = cached.partition(".")[0]
                if cached == f"{stem}.{tag}.pyc" and f"{folder}{stem}.py" in names:
                    info = _renamed(info, f"{folder}{stem}.pyc")    # run without its source
            kept.append((info, data))
    if not moved:
        return {"modules": [], "sources": []}
    _write(archive, kept)
    _write(archive.with_name(later_name(archive.name)), moved)
    sources = [info.filename for info, _ in moved if info.filename.endswith(".py")]
    extensions = [info.filename for info, _ in moved if info.filename.endswith(EXTENSION)]
    bytecode = {info.filename for info, _ in kept if info.filename.endswith(".pyc")}
    stranded = [n for n in bytecode if "__pycache__/" in n and not keep_sources]
    if stranded:        # bytecode of another interpreter, which would run nothing without its source
        raise BuildError(f"later：{archive.name} 的 {stranded[0]} 不是 {tag} 的 bytecode")
    return {"modules": [p for p in sources if not compiled(p)] + extensions,
            "sources": [p for p in sources if compiled(p)]}


def rejoin(start: Path, later: Path, kind: str, out: Path, tag: str = CACHE_TAG) -> None:
    """What split() was given, as a set of members (the order aside): the start archive's members,
    each bytecode file under its old name, and the later ones."""
    with zipfile.ZipFile(start) as a, zipfile.ZipFile(later) as b:
        entries = [(info, b.read(info)) for info in b.infolist()]
        for info in a.infolist():
            name = info.filename
            if kind == "wheel" and name.endswith(".pyc") and "__pycache__/" not in name:
                info = _renamed(info, cached_pyc(name[:-1], tag))
            entries.append((info, a.read(name)))
    _write(out, entries)


def _renamed(info: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    new = zipfile.ZipInfo(name, date_time=info.date_time)
    new.compress_type, new.external_attr, new.create_system = info.compress_type, info.external_attr, info.create_system
    return new


def _write(path: Path, entries) -> None:
    staged = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(staged, "w") as out:
        for info, data in entries:
            out.writestr(info, data, compress_type=info.compress_type)
    staged.replace(path)


def split_archives(pyodide_dir: Path, archives: dict[str, str], keep_sources: set[str] = frozenset(),
                   imported: set[str] | None = None) -> dict:
    """split() each of `archives` (file name -> kind) in `pyodide_dir`, the sources of those in
    `keep_sources` (file names) staying, the extension modules not in `imported` (the import
    profile's files) moving, the lock's sha256 following,
    and write later.json there: [{"file": later archive, "root": where its members live in Pyodide,
    "modules": [...], "sources": [...]} (its .py members, as split() returns them), ...].
    Returns bytes moved and kept, for the build log."""
    lock_path = pyodide_dir / LOCK
    lock = json.loads(lock_path.read_text())
    index, moved, kept = [], 0, 0
    for name, kind in archives.items():
        path = pyodide_dir / name
        if not path.is_file():
            raise BuildError(f"later：{name} 不在 {pyodide_dir}")
        before = path.stat().st_size
        paths = split(path, kind, keep_sources=name in keep_sources, imported=imported)
        kept += path.stat().st_size
        if paths["modules"] or paths["sources"]:
            moved += before - path.stat().st_size
            index.append({"file": later_name(name), "root": root(name, kind), **paths})
    for entry in lock["packages"].values():
        if entry["file_name"] in archives:
            entry["sha256"] = fetch.sha256_of(pyodide_dir / entry["file_name"])
    lock_path.write_text(json.dumps(lock, ensure_ascii=False, indent=1))
    (pyodide_dir / INDEX).write_text(json.dumps(index, separators=(",", ":")))
    return {"moved": moved, "kept": kept, "archives": len(index)}
