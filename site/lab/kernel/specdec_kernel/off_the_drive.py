"""Runs INSIDE the kernel's Pyodide: the kernel's start runs without '' (the working directory) on
sys.path, and '' is first again once it has started, before any cell, as Pyodide had it.

For each import Python asks every sys.path entry in turn, and for '' it first asks the working
directory's mtime; that directory is then the lab's drive, and each question a synchronous request
through JupyterLite's service worker and the lab's page (76 in one start in Chromium, about 0.5 s of
waiting; in WebKit a worker's requests also wait for the page's main thread, busy with JupyterLab's
start). A learner's file named like one of the start's modules no longer breaks the start either.
IPython's shell puts '' back itself, before site-packages, for the start's last imports.
Plain Python, tested in CPython (tests/test_kernel_start.py).
"""
from __future__ import annotations

import sys


def leave() -> bool:
    """Take '' off sys.path; whether it was there."""
    if "" not in sys.path:
        return False
    sys.path.remove("")
    return True


def come_back() -> None:
    """'' once on sys.path, first."""
    while "" in sys.path:
        sys.path.remove("")
    sys.path.insert(0, "")
