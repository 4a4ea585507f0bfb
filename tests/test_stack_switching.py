"""Safari has no WebAssembly stack switching (JSPI): nothing the course runs in Pyodide 0.27.7 may
need it. What needs it there: `pyodide.ffi.run_sync` (and `can_run_sync`, which only asks), the
event loop's `run_until_complete` (Pyodide turns it into run_sync: enableRunUntilComplete is on by
default), hence `asyncio.run` and `loop.run_until_complete`; from JS `callPromising`/`callSyncifying`
and `runPythonSyncifying`. Without JSPI each raises "WebAssembly stack switching not supported".

Here: none of them is in the course's code that runs in the kernel or the lab (the package, the
notebooks' code cells, site/lab's Python and JS, the Python the kernel's loader runs, the page
scripts), nor in the kernel's own Python (pyodide_kernel, which awaits loadPackagesFromImports and
runs a cell with run_cell_async or IPython's run_cell, neither of which blocks on a promise). The
WebKit layer (tests/test_webkit.py) runs every cell of every lab page in an engine without JSPI,
and shows that such a call fails there.
"""
from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON_CALLS = {"run_sync", "can_run_sync", "run_until_complete", "callPromising", "callSyncifying"}
JS_CALLS = re.compile(r"\b(run_sync|can_run_sync|run_until_complete|callPromising|callSyncifying|"
                      r"runPythonSyncifying|asyncio\.run)\b")


def python_uses(source: str, where: str) -> list[str]:
    """Each call or name in Python source that needs stack switching: 'where:line name'."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name)
                else None)
        if name in PYTHON_CALLS:
            found.append(f"{where}:{node.lineno} {name}")
        if (isinstance(node, ast.Attribute) and node.attr == "run" and isinstance(node.value, ast.Name)
                and node.value.id == "asyncio"):
            found.append(f"{where}:{node.lineno} asyncio.run")
        if isinstance(node, ast.ImportFrom) and any(a.name in PYTHON_CALLS for a in node.names):
            found.append(f"{where}:{node.lineno} import of {[a.name for a in node.names]}")
    return found


def js_uses(source: str, where: str) -> list[str]:
    return [f"{where}:{source.count(chr(10), 0, m.start()) + 1} {m.group(1)}"
            for m in JS_CALLS.finditer(source)]


def course_python() -> dict[str, str]:
    """Every piece of Python the course runs in the kernel: the package, the notebooks' code
    cells (IPython's magics aside) and site/lab's modules (specdec_kernel runs in the kernel; its
    loader holds no Python)."""
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
               for p in sorted((ROOT / "src" / "specdec_lab").rglob("*.py"))}
    sources.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                    for p in sorted((ROOT / "site" / "lab").rglob("*.py"))})
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                sources[f"{path.name} cell {i}"] = "\n".join(
                    line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    return sources


def test_the_course_calls_nothing_that_needs_stack_switching():
    pieces = course_python()
    assert len([k for k in pieces if "cell" in k]) > 20 and "site/lab/kernel/specdec_kernel/wheel_import.py" in pieces
    found = [use for where, source in pieces.items() for use in python_uses(source, where)]
    scripts = sorted((ROOT / "site" / "lab").rglob("*.js")) + sorted((ROOT / "site" / "assets").glob("*.js"))
    found += [use for path in scripts for use in js_uses(path.read_text(encoding="utf-8"), path.name)]
    assert found == [], "needs WebAssembly stack switching, which Safari has not: " + "; ".join(found)


def test_the_kernels_own_python_calls_nothing_that_needs_it():
    """pyodide_kernel's Python, from the wheel the build takes (jupyterlite-pyodide-kernel's)."""
    extension = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite" / "pyodide-kernel-extension"
    wheels = sorted((extension / "static" / "pypi").glob("pyodide_kernel-*.whl"))
    assert wheels, f"no pyodide_kernel wheel in {extension} (is jupyterlite-pyodide-kernel installed?)"
    with zipfile.ZipFile(wheels[-1]) as wheel:
        sources = {n: wheel.read(n).decode("utf-8") for n in wheel.namelist() if n.endswith(".py")}
    assert "pyodide_kernel/kernel.py" in sources
    found = [use for where, source in sources.items() for use in python_uses(source, where)]
    assert found == [], found


@pytest.mark.parametrize("source, name", [
    ("import asyncio\nasyncio.run(main())", "asyncio.run"),
    ("asyncio.get_event_loop().run_until_complete(f)", "run_until_complete"),
    ("from pyodide.ffi import run_sync\nrun_sync(fetch(url))", "run_sync"),
    ("import pyodide.ffi as f\nif f.can_run_sync(): pass", "can_run_sync"),
])
def test_the_check_finds_a_call_that_needs_it(source, name):
    assert any(name in use for use in python_uses(source, "cell")), python_uses(source, "cell")


def test_the_check_finds_it_in_js():
    assert js_uses("const r = await f.callPromising(1);\npyodide.runPythonSyncifying(s)", "x.js") == \
        ["x.js:1 callPromising", "x.js:2 runPythonSyncifying"]
