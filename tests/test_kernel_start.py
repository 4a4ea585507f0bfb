"""site/lab/kernel/specdec_kernel/__init__.py and off_the_drive.py in this CPython's IPython: what
the kernel's loader asks of specdec_kernel (start, packages_for, started) does each piece's job,
in order, and a piece that fails costs that piece only. In Pyodide, through the lab's loader:
tests/test_lab_build.py (the kernel's start under Node.js) and the browser tests."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
import specdec_kernel  # noqa: E402  (plain Python, run inside Pyodide)
from specdec_kernel import off_the_drive, stand_ins  # noqa: E402

pytestmark = pytest.mark.fast

HINTS = {"first_cells": {"lesson1.ipynb": {"expected_tokens": "import"}}, "cells": {"lesson1.ipynb": ["c1"]}}


@pytest.fixture
def python(monkeypatch):
    """sys.path and sys.meta_path as they were after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))


@pytest.fixture
def shell(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)     # get_ipython() answers it
    yield shell
    InteractiveShell.clear_instance()


def test_the_start_runs_off_the_drive_and_comes_back_first_once(python):
    sys.path[:] = ["/lib/python312.zip", "", "/site-packages", ""]
    assert off_the_drive.leave() is True and sys.path == ["/lib/python312.zip", "/site-packages", ""]
    off_the_drive.come_back()
    assert sys.path == ["", "/lib/python312.zip", "/site-packages"]
    sys.path[:] = ["/lib/python312.zip"]
    assert off_the_drive.leave() is False and sys.path == ["/lib/python312.zip"]


def test_start_installs_the_stand_ins_and_leaves_the_drive(python):
    sys.path.insert(0, "")
    kernel = specdec_kernel.start({"zip_imported": [], "later": [], "loaded_on_use": {}, "not_loaded": []})
    assert isinstance(sys.meta_path[0], stand_ins.StandIns) and "" not in sys.path
    assert kernel.started() == [] and sys.path[0] == ""        # no shell yet: only the path comes back


def test_start_without_the_drive_on_the_path_leaves_it_off(python):
    while "" in sys.path:
        sys.path.remove("")
    kernel = specdec_kernel.start({})
    kernel.started()
    assert "" not in sys.path


def test_packages_for_a_cell_come_from_the_learners_namespace(python, shell):
    kernel = specdec_kernel.Kernel({"loaded_on_use": {"specdec_lab.plotting": ["matplotlib", "ipywidgets"]}})
    assert kernel.packages_for("x = 1") == []
    assert kernel.packages_for("from specdec_lab.plotting import explore_tokens") == ["matplotlib", "ipywidgets"]
    import specdec_lab.plotting
    shell.user_ns["plots"] = specdec_lab.plotting       # bound by an earlier cell
    assert kernel.packages_for("plots.explore_tokens()") == ["matplotlib", "ipywidgets"]
    assert kernel.packages_for("plots.explore_tokens()", namespace={}) == []


def test_started_installs_the_hints_the_float_display_and_ipythons_completer(python, shell):
    shell.Completer.use_jedi = True                       # as pyodide_kernel leaves it
    kernel = specdec_kernel.Kernel({"not_loaded": ["jedi", "ssl"]})
    assert kernel.started(HINTS, shell=shell) == []
    assert shell.display_formatter.format(2.3833599999999997)[0]["text/plain"] == "2.38336"
    assert shell.Completer.use_jedi is False
    result = shell.run_cell("expected_tokens(0.6, 5)")
    assert "「expected_tokens」" in " ".join(getattr(result.error_in_exec, "__notes__", []))


def test_a_piece_that_fails_is_named_and_the_others_are_installed(python, shell):
    shell.Completer.use_jedi = True
    kernel = specdec_kernel.Kernel({"not_loaded": []})      # jedi shipped: its completer stays
    failed = kernel.started({"first_cells": {}}, shell=shell)    # hints without "cells"
    assert len(failed) == 1 and failed[0].startswith("name hints: TypeError")
    assert shell.display_formatter.format(0.1 + 0.2)[0]["text/plain"] == "0.3"
    assert shell.Completer.use_jedi is True
    assert specdec_kernel.Kernel({}).started(None, shell=shell) == []     # no hints: a hint less
