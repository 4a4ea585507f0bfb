# Run in Pyodide under Node.js by tests/test_lab_build.py (site/lab/node/run_in_pyodide.mjs, which
# installs site/lab/kernel/specdec_kernel/later_import.py as the kernel's loader does in the browser):
#     sys.argv = [this, modules.json, output.json]
# With the kernel's start packages loaded, imports each of modules.json's modules (which only a
# .later.zip holds; an extension module among them), raises through the standard library and numpy, and writes where each module
# came from, each traceback, a function's source and which later archives were fetched, and when.
import json
import sys
import traceback

import pyodide_js
from pyodide.ffi import to_js

await pyodide_js.loadPackage(to_js(["numpy", "ipython"]))  # noqa: F704  (top-level await: Pyodide runs it)
import inspect  # noqa: E402

import IPython  # noqa: E402,F401  (the kernel's start)
import numpy  # noqa: E402

(finder,) = [f for f in sys.meta_path if type(f).__name__ == "Later"]
seen = {"fetched_at_start": sorted(finder.unpacked), "files": {}, "tracebacks": {}}
with open(sys.argv[1]) as f:
    for name in json.load(f):
        module = __import__(name, fromlist=["_"])
        seen["files"][name] = module.__file__
for name, fail in [("json", lambda: json.loads("{bad")), ("numpy", lambda: numpy.linspace(0, 1, -3))]:
    try:
        fail()
    except Exception:
        seen["tracebacks"][name] = traceback.format_exc()
seen["source"] = inspect.getsource(json.dumps)
seen["fft"] = numpy.fft.fft([1.0, 2.0, 3.0, 4.0]).real.tolist()
# IPython's start met the stand-ins (site/lab/kernel/specdec_kernel/stand_ins.py): no terminal, no sqlite3 package; a
# cell's `import sqlite3` loads the package (as Pyodide loads a cell's imports), then it is real
seen["terminal_imported"] = sorted(m for m in sys.modules if m.startswith(("prompt_toolkit", "IPython.terminal.embed")) and not getattr(sys.modules[m], "__stand_in__", False))
seen["sqlite3_stand_in"] = getattr(sys.modules.get("sqlite3"), "__stand_in__", False)
await pyodide_js.loadPackagesFromImports("import sqlite3")  # noqa: F704
import sqlite3  # noqa: E402
seen["sqlite3"] = sqlite3.connect(":memory:").execute("select 6 * 7").fetchone()[0]
seen["sqlite3_connection"] = isinstance(sqlite3.connect(":memory:"), sqlite3.Connection)
seen["fetched"] = sorted(finder.unpacked)
with open(sys.argv[2], "w") as f:
    json.dump(seen, f)
