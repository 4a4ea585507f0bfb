"""Runs INSIDE Pyodide (its CPython 3.12, started under Node.js by site/lab/builder/bytecode.py): adds
compiled bytecode to wheels and to the standard library's zip, so that the browser imports them
without first compiling every module in WebAssembly (the slow part of starting the kernel).

    python add_bytecode.py JOBS.json REPORT.json

JOBS.json is [[source, target, kind, modules], ...]: kind "wheel", "zipimport" (a wheel Python
imports from as it is, runtime.toml [kernel] zip_imported) or "stdlib" (python_stdlib.zip),
modules the .py members to compile (null: all). REPORT.json gets the count compiled per target.

Every member of the input is copied unchanged, in order; what is added is bytecode only:
  - a wheel: <folder>/__pycache__/<module>.<cache tag>.pyc after each <module>.py, and a line for
    each in the wheel's RECORD (the one member that changes);
  - a "zipimport" wheel: <module>.pyc after each <module>.py, where zipimport looks first (it
    never reads __pycache__), and the RECORD lines; compiled for the path the module has in
    Pyodide, <site-packages>/<wheel file name>/<member>, as zipimport does not correct it;
  - the standard library's zip: <module>.pyc after each <module>.py, as for "zipimport".
The .py files stay, so tracebacks still show source lines. The bytecode is "unchecked hash-based"
(PEP 552): it carries its source's hash, and Python uses it without re-reading the source, which
is right for files that never change once served. A .py that does not compile (a test file
written for another Python) is left without bytecode, as importing it would fail anyway.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import marshal
import site
import sys
import warnings
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)     # added members get a fixed date: the same input, the same output
UNCHECKED_HASH = (0b01).to_bytes(4, "little")   # PEP 552 flags: hash-based, do not check the source


def pyc(source: bytes, filename: str) -> bytes | None:
    """The .pyc for `source` (None when it does not compile); `filename` is where the module will
    live, for tracebacks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            code = compile(source, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
    return importlib.util.MAGIC_NUMBER + UNCHECKED_HASH + importlib.util.source_hash(source) + marshal.dumps(code)


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pyc_name(member: str, kind: str) -> str:
    folder, _, module = member.rpartition("/")
    stem = module[:-3]
    if kind in ("stdlib", "zipimport"):
        return f"{folder}/{stem}.pyc" if folder else f"{stem}.pyc"
    cached = f"__pycache__/{stem}.{sys.implementation.cache_tag}.pyc"
    return f"{folder}/{cached}" if folder else cached


def add_bytecode(source: str, target: str, kind: str, modules: list[str] | None = None) -> tuple[int, int]:
    """Write `target`: `source` with bytecode added for `modules` (member names; None: every .py).
    Returns (modules compiled, modules that do not compile)."""
    wanted = None if modules is None else set(modules)
    site_packages = site.getsitepackages()[0]     # where Pyodide installs (sysconfig says "//lib/…")
    if kind == "stdlib":
        prefix = f"/lib/python{sys.version_info.major}{sys.version_info.minor}.zip/"
    elif kind == "zipimport":      # the served wheel keeps its file name in site-packages
        prefix = f"{site_packages}/{source.rpartition('/')[2]}/"
    else:
        prefix = site_packages + "/"
    compiled, failed, added, record = 0, 0, [], None
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        members = zin.infolist()
        for info in members:
            data = zin.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                record = info, data
                continue
            zout.writestr(info, data, compress_type=info.compress_type)
            top = info.filename.split("/", 1)[0]
            if not info.filename.endswith(".py") or top.endswith((".dist-info", ".data")):
                continue
            if wanted is not None and info.filename not in wanted:
                continue
            code = pyc(data, prefix + info.filename)
            if code is None:
                failed += 1
                continue
            name = pyc_name(info.filename, kind)
            zout.writestr(zipfile.ZipInfo(name, FIXED_TIME), code, compress_type=zipfile.ZIP_DEFLATED)
            added.append(record_line(name, code))
            compiled += 1
        if kind != "stdlib":
            if record is None:
                raise ValueError(f"{source}: a wheel without a RECORD")
            info, data = record
            text = data.decode("utf-8")
            text = text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(added) + "\n"
            zout.writestr(info, text.encode("utf-8"), compress_type=info.compress_type)
    return compiled, failed


def main(argv: list[str]) -> int:
    jobs_file, report_file = argv
    with open(jobs_file) as f:
        jobs = json.load(f)
    report = []
    for source, target, kind, modules in jobs:
        compiled, failed = add_bytecode(source, target, kind, modules)
        report.append({"target": target, "compiled": compiled, "failed": failed})
    with open(report_file, "w") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    main(sys.argv[1:])
