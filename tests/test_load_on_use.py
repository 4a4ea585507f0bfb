"""site/lab/kernel/specdec_kernel/load_on_use.py: which packages the kernel loads before a cell, for a module loaded when
first used (specdec_lab.plotting: matplotlib and ipywidgets, not with `import specdec_lab`).
The same module runs in the browser's kernel (specdec_kernel) and the build's import profile."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import specdec_lab
from specdec_lab import plotting

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site" / "lab" / "kernel"))
from specdec_kernel.load_on_use import packages_to_load  # noqa: E402

ON_USE = {"specdec_lab.plotting": ["ipywidgets", "matplotlib"]}
PLOT = ["ipywidgets", "matplotlib"]
# the learner's namespace after lesson 1's first cell (and an alias of the package)
NAMESPACE = {"plotting": plotting, "sl": specdec_lab, "np": object(), "check": 3}


@pytest.mark.parametrize("code", [
    "plotting.explore_tokens(alpha=0.8, k=5, seed=1)",                 # lesson 1's figure cells
    "draft = [1]\nplotting.round_table(result, draft, vocab)",
    "display(plotting.transition_figure(correct.test))",
    "sl.plotting.speedup_figure(0.8, 0.05)",                           # through the package
    "import specdec_lab\nspecdec_lab.plotting.speedup_figure(0.8, 0.05)",
    "from specdec_lab.plotting import speedup_figure",                 # from the module
    "from specdec_lab.plotting import *",
    "import specdec_lab.plotting.figures",
    "from specdec_lab import plotting as p\np.speedup_figure(0.8, 0.05)",   # bound in the same cell
    "def later():\n    return plotting.speedup_figure(0.8, 0.05)",      # named, even if not called yet
])
def test_a_cell_that_uses_the_plotting_module_loads_its_packages(code):
    assert packages_to_load(code, ON_USE, NAMESPACE) == PLOT


@pytest.mark.parametrize("code", [
    # lesson 1's first cell: importing the module is quick and needs no matplotlib
    "import numpy as np\nfrom specdec_lab import (best_k, crossover_concurrency, expected_tokens,\n"
    "                         knee_k, monte_carlo_check, speedup)\nfrom specdec_lab import plotting",
    "import specdec_lab.plotting",
    "print(check)",
    "check.plotting.figure",            # a name that holds no module
    "plotting",                         # the module itself, shown
    "def broken(:",                     # a syntax error is the cell's own, when it runs
])
def test_a_cell_that_does_not_use_it_loads_nothing_more(code):
    assert packages_to_load(code, ON_USE, NAMESPACE) == []


def test_a_name_from_an_earlier_cell_counts_only_if_it_holds_the_module():
    assert packages_to_load("plotting.speedup_figure(0.8, 0.05)", ON_USE, {}) == []
    assert packages_to_load("fig.speedup_figure(0.8, 0.05)", ON_USE, {"fig": plotting}) == PLOT
    assert packages_to_load("x = 1", {}, NAMESPACE) == []
