"""The 實驗場's own part of the learner's kernel (Pyodide in the kernel's web worker).

The kernel worker's Pyodide loader (site/lab/kernel/pyodide-loader.js) loads this package from
the lab's lock as soon as Python is up and makes one call, with the one JSON object the build
wrote into the loader (runtime.toml's [kernel] settings, later.json):

    kernel = specdec_kernel.start(config)      # before Pyodide loads the kernel's packages
    kernel.packages_for(code)                   # before each cell: what else to load
    kernel.started(name_hints)                  # once "import pyodide_kernel" has ended

Each piece is a module with one job, plain Python, tested in CPython: wheel_import, stand_ins,
later_import, off_the_drive, load_on_use, name_hints, float_display.
"""
from __future__ import annotations

import sys

from . import float_display, later_import, load_on_use, name_hints, off_the_drive, stand_ins, wheel_import


def start(config: dict, read=None) -> Kernel:
    """Before Pyodide loads the kernel's packages: the wheels of config["zip_imported"] imported
    as they are, the stand-ins, the modules and sources of config["later"] (read with `read`,
    else over HTTP from config["base"]), and the kernel's start kept off the drive."""
    if config.get("zip_imported"):
        wheel_import.install(config["zip_imported"])
    stand_ins.install()
    if config.get("later"):
        later_import.install(config["later"], read or later_import.over_http(config["base"]))
    return Kernel(config, left_the_drive=off_the_drive.leave())


class Kernel:
    """What the loader asks of the kernel's Python once started."""

    def __init__(self, config: dict, left_the_drive: bool = False):
        self.on_use = dict(config.get("loaded_on_use") or {})
        self.without_jedi = "jedi" in (config.get("not_loaded") or [])
        self.left_the_drive = left_the_drive

    def packages_for(self, code: str, namespace: dict | None = None) -> list[str]:
        """The packages of runtime.toml [kernel.loaded_on_use] the cell `code` needs (the
        learner's namespace: IPython's, when not given)."""
        if namespace is None:
            ipython = sys.modules.get("IPython")
            shell = ipython.get_ipython() if ipython is not None else None
            namespace = shell.user_ns if shell is not None else {}
        return load_on_use.packages_to_load(code, self.on_use, namespace)

    def started(self, hints: dict | None = None, shell=None) -> list[str]:
        """Once the kernel's start has run, failed or not, before any cell: '' back on sys.path,
        and in IPython's shell the name hints (`hints`, the lab's specdec-name-hints.json; none:
        a hint less), the float display and, without jedi, IPython's own completer. Returns what
        could not be installed (a hint less; never a kernel less)."""
        if self.left_the_drive:
            off_the_drive.come_back()
        shell = shell if shell is not None else _shell()
        if shell is None:
            return []
        failed = []
        steps = [("name hints", lambda: name_hints.install(shell, **hints) if hints else None),
                 ("float display", lambda: float_display.install(shell))]
        if self.without_jedi:       # pyodide_kernel turns jedi on, and without it nothing completes
            steps.append(("completer", lambda: setattr(shell.Completer, "use_jedi", False)))
        for what, step in steps:
            try:
                step()
            except Exception as error:
                failed.append(f"{what}: {error!r}")
        return failed


def _shell():
    """pyodide_kernel's IPython shell, once "import pyodide_kernel" has made it; else None."""
    kernel = sys.modules.get("pyodide_kernel")
    return getattr(kernel, "ipython_shell", None)
