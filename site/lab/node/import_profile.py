"""Runs INSIDE Pyodide (under Node.js, started by site/lab/builder/bytecode.py): which Python files the
實驗場 imports when the kernel starts and a notebook runs, so the build compiles those.

    python import_profile.py PACKAGES.json ON_USE.json MODULES.json NOTEBOOK.ipynb OUT.json

Loads the packages the kernel preloads (PACKAGES.json, from jupyter-lite.json), imports what the
kernel's worker imports at start (piplite, pyodide_kernel), runs every code cell of NOTEBOOK
through the kernel (which loads what the cells import, and, as the kernel's loader does in the
browser, the packages of ON_USE.json's modules before a cell that uses them:
specdec_kernel.load_on_use), imports MODULES.json's modules (what the kernel imports in a
browser only: runtime.toml [bytecode] also_imported), and writes the sorted paths of every
module file imported, or looked for and found (an import that raised ImportError), to OUT.json, with the cells that failed (a run without a browser may lack
something a cell needs; this is only about imports).
"""
import json
import os
import sys

import importlib.machinery

import pyodide_js
from pyodide.ffi import to_js
from specdec_kernel.load_on_use import packages_to_load   # loaded by run_in_pyodide.mjs

# every module Python looked for, found or not: one whose import failed (dateutil.tz.win, tried
# in a try/except) is looked for again on every page, so it is compiled and stays at start too
looked_for = set()
sys.addaudithook(lambda event, args: looked_for.add(args[0]) if event == "import" else None)

packages_file, on_use_file, modules_file, notebook_file, out_file = sys.argv[1:]
with open(packages_file) as f:
    await pyodide_js.loadPackage(to_js(json.load(f)))  # noqa: F704 (top-level await in Pyodide)
import piplite.piplite  # noqa: E402,F401  (the worker's initPackageManager)
import pyodide_kernel  # noqa: E402  (its initKernel)
import pyodide_kernel.kernel  # noqa: E402

kernel = pyodide_kernel.kernel_instance
with open(on_use_file) as f:
    on_use = json.load(f)
from_imports = pyodide_kernel.kernel._load_packages_from_imports


async def load_packages(code):
    await from_imports(code)
    wanted = packages_to_load(code, on_use, kernel.interpreter.user_ns)
    if wanted:
        await pyodide_js.loadPackage(to_js(wanted))
pyodide_kernel.kernel._load_packages_from_imports = load_packages
kernel.interpreter.send_comm = lambda *args, **kwargs: None   # the worker sets a JavaScript function
cells = []
if os.path.exists(notebook_file):      # (without it: the kernel's start only)
    with open(notebook_file, encoding="utf-8") as f:
        cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                 for c in json.load(f)["cells"] if c["cell_type"] == "code"]
failed = []
for number, source in enumerate(cells):
    result = await kernel.run(source)  # noqa: F704
    if result.get("status") != "ok":
        failed.append({"cell": number, "error": f"{result.get('ename')}: {result.get('evalue')}"})
with open(modules_file) as f:
    for name in json.load(f):
        __import__(name)
files = {m.__file__ for m in list(sys.modules.values()) if isinstance(getattr(m, "__file__", None), str)}
for name in sorted(looked_for - set(sys.modules)):
    parent = name.rpartition(".")[0]
    if parent and not hasattr(sys.modules.get(parent), "__path__"):
        continue
    spec = importlib.machinery.PathFinder.find_spec(name, sys.modules[parent].__path__ if parent else None)
    if spec is not None and isinstance(spec.origin, str) and spec.origin.endswith(".py"):
        files.add(spec.origin)          # found, but its code raised ImportError (or it never ran)
files = sorted(files)
with open(out_file, "w") as f:
    json.dump({"files": files, "failed_cells": failed}, f, indent=1)
