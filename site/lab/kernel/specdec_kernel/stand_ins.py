"""Runs INSIDE the kernel's Pyodide: stand-ins for two modules IPython imports as the kernel starts
but the kernel never uses, so that Python neither fetches nor imports what they pull in.

  - `sqlite3`: IPython's history module imports it at the top, for a history database the
    kernel keeps switched off (pyodide_kernel's history manager is not enabled); at start it only
    reads `sqlite3.Connection`, to check that the history's database is one (it is IPython's
    DummyDB). Pyodide's sqlite3 package is a 1.4 MB WebAssembly library (0.56 MB to download)
    compiled as the kernel starts. The package is still shipped: a cell that imports sqlite3
    loads it first (Pyodide loads the packages of a cell's imports), and from then on every
    attribute of the stand-in is the real module's.
  - `IPython.terminal.embed`: `import IPython` imports it for `IPython.embed`, which opens an
    IPython prompt in a terminal; it imports IPython's terminal shell and prompt_toolkit (115
    modules, 0.66 MB to download). The stand-in's `embed` imports the real module when called;
    any other name of the module imports it when asked for.

A stand-in answers only the first import of its module (the kernel's start); a name it does not
hold is looked up in the real module, imported then (the stand-in leaves sys.modules), and if the
real module cannot be imported yet, the stand-in's fallback for that name is given, or an
AttributeError that says what to do. specdec_kernel.start (for the kernel's Pyodide loader) and
the build's import profile (site/lab/node/run_in_pyodide.mjs) install them before Python imports
anything of the kernel. Plain Python, tested in CPython (tests/test_stand_ins.py).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types


class NotAConnection:
    """sqlite3.Connection while sqlite3 is not loaded: no object is one."""


def stood_in(module: str, attribute: str):
    """A function that calls the real `module`'s `attribute`, imported when first called."""
    def call(*args, **kwargs):
        return getattr(real(module), attribute)(*args, **kwargs)
    call.__name__ = call.__qualname__ = attribute
    call.__doc__ = f"{module}.{attribute}，第一次呼叫時才匯入 {module}。"
    return call


STAND_INS = {
    # module: (names the stand-in holds itself, names it gives while the real one cannot be imported)
    "sqlite3": ({}, {"Connection": NotAConnection}),
    "IPython.terminal.embed": ({"embed": stood_in("IPython.terminal.embed", "embed")}, {}),
}


def real(name: str) -> types.ModuleType:
    """The real module `name`, imported now if its stand-in is in sys.modules (ImportError if it
    cannot be imported; the stand-in then stays)."""
    module = sys.modules.get(name)
    if module is not None and not getattr(module, "__stand_in__", False):
        return module
    sys.modules.pop(name, None)
    try:
        return importlib.import_module(name)
    except ImportError:
        if module is not None:
            sys.modules[name] = module
        raise


class StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """First on sys.meta_path: the first import of a module of `stand_ins` gets its stand-in."""

    def __init__(self, stand_ins: dict):
        self.waiting = dict(stand_ins)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.waiting:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        held, fallback = self.waiting.pop(name)
        module.__dict__.update(held, __stand_in__=True)

        def __getattr__(attribute):
            if attribute.startswith("__"):
                raise AttributeError(attribute)
            try:
                return getattr(real(name), attribute)
            except ImportError as error:
                if attribute in fallback:
                    return fallback[attribute]
                raise AttributeError(f"{name}.{attribute}：{name} 還沒載入（{error}）；"
                                     f"在一格裡先寫 import {name} 再用") from error
        module.__getattr__ = __getattr__


def install(stand_ins: dict = STAND_INS) -> StandIns:
    finder = StandIns(stand_ins)
    sys.meta_path.insert(0, finder)
    return finder
