"""site/lab/kernel/specdec_kernel/name_hints.py in this CPython's IPython, with what the build takes from the lab's
notebooks (site/lab/builder/contents.py name_hints): a cell that uses a name the notebook's first cell
binds, run before that cell, ends its NameError traceback with one line saying to run the first
cell; a learner's typo, a NameError inside a module's function and an UnboundLocalError keep the
plain traceback. The kernel's loader installs it in the browser (tests/test_lab_browser.py runs a
挑戰 cell there); CPython's runs of the notebooks never install it."""
from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
sys.path.insert(0, str(ROOT / "site"))
from specdec_kernel import name_hints  # noqa: E402  (plain Python, run inside Pyodide)
from lab.builder import contents  # noqa: E402
from support.site import lab_pages  # noqa: E402

pytestmark = pytest.mark.fast

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
HINTS = contents.name_hints(NOTEBOOKS)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cell_id(notebook: str, starts: str) -> str:
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    return next(c["id"] for c in cells if "".join(c["source"]).startswith(starts))


class Kernel:
    """The kernel's get_parent(): the request being run, with the cell id JupyterLab sends."""
    def __init__(self):
        self.cell = None

    def get_parent(self):
        return {"header": {"msg_type": "execute_request"}, "metadata": {"cellId": self.cell}} if self.cell else {}


@pytest.fixture(scope="module")
def ipython(tmp_path_factory):
    """IPython's shell keeping the traceback it would show (as pyodide_kernel's does), no history."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Shell(InteractiveShell):
        def _showtraceback(self, etype, evalue, stb):
            self.shown = ANSI.sub("", "\n".join(stb)).splitlines()

    with pytest.MonkeyPatch.context() as env:
        env.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        config = Config()
        config.HistoryManager.enabled = False
        shell = Shell(config=config)
        yield shell


@pytest.fixture
def shell(ipython):
    """The shell with the hints installed, a fresh namespace and no cell id known."""
    ipython.reset(new_session=False)
    ipython.kernel = Kernel()
    name_hints.install(ipython, **HINTS)
    yield ipython
    ipython.set_custom_exc((), None)


def run(shell, code: str, cell: str | None = None) -> list[str]:
    shell.shown = None
    shell.kernel.cell = cell
    shell.run_cell(code)
    return shell.shown


def test_a_challenge_cell_run_before_the_first_cell_ends_with_the_hint(shell):
    shown = run(shell, "expected_tokens(alpha=0.40, k=5)",
                cell=cell_id("lesson1.ipynb", "expected_tokens(alpha=0.40"))
    assert shown[-2] == "NameError: name 'expected_tokens' is not defined"
    assert shown[-1] == ("💡 「expected_tokens」在最上面的第一格匯入：先執行那一格"
                         "（或按工具列的 ⏩ 從頭執行全部），再執行這一格。")
    assert "----> 1 expected_tokens(alpha=0.40, k=5)" in shown        # the usual traceback above it


def binding(name: str) -> str:
    """The notebooks whose first cell binds `name`, as the hint lists them."""
    return "、".join(nb for nb, names in HINTS["first_cells"].items() if name in names)


def where_said(name: str) -> str:
    """How a hint from a cell the learner added names where `name` is bound: nothing when every
    notebook's first cell binds it (as all the course's own bind np and plotting)."""
    every = all(name in names for names in HINTS["first_cells"].values())
    return "" if every else f" {binding(name)} "


def test_the_hint_follows_the_first_cells_of_the_lab_notebooks(shell):
    """A name only one notebook's first cell binds, from a cell the learner added (no id the build
    knows): the hint names that notebook; one every first cell binds needs no notebook; a name
    lossless.ipynb's first cell assigns is 定義, not 匯入; from a cell of another notebook, a name
    its own first cell does not bind gets no hint. (Which notebooks bind a name is read from
    notebooks/: a lesson an instructor adds, copied from lesson1.ipynb, binds these names too.)"""
    assert run(shell, "expected_tokens(0.4, 5)")[-1].startswith(
        f"💡 「expected_tokens」在 {binding('expected_tokens')} 最上面的第一格匯入：在那本筆記本先執行那一格")
    assert "lesson1.ipynb" in binding("expected_tokens") and "your_gpu.ipynb" not in binding("expected_tokens")
    assert run(shell, "np.arange(3)")[-1].startswith(f"💡 「np」在{where_said('np')}最上面的第一格匯入：")
    assert run(shell, "x = plotting")[-1].startswith(f"💡 「plotting」在{where_said('plotting')}最上面的第一格匯入：")
    assert run(shell, "print(target)", cell=cell_id("lossless.ipynb", "k = 4"))[-1].startswith(
        "💡 「target」在最上面的第一格定義：")
    gpu = cell_id("your_gpu.ipynb", "runs = read_bench_results")
    assert run(shell, "read_bench_results(None)", cell=gpu)[-1].startswith("💡 「read_bench_results」在最上面")
    assert run(shell, "expected_tokens(0.4, 5)", cell=gpu)[-1] == \
        "NameError: name 'expected_tokens' is not defined"


def test_a_learners_own_mistakes_keep_the_plain_traceback(shell):
    """A typo; an UnboundLocalError (a NameError too); a NameError raised in a module's own
    function (not the learner's namespace, where the first cell binds its names); a name the
    learner has bound (raised by hand)."""
    challenge = cell_id("lesson1.ipynb", "expected_tokens(alpha=0.40")
    assert run(shell, "expected_token(0.4, 5)", challenge)[-1] == "NameError: name 'expected_token' is not defined"
    shown = run(shell, "def f():\n    print(np)\n    np = 1\nf()", challenge)
    assert shown[-1].startswith("UnboundLocalError: cannot access local variable 'np'")
    module = types.ModuleType("learners_module")
    exec("def f():\n    return np.pi\n", module.__dict__)
    shell.user_ns["module"] = module
    assert run(shell, "module.f()", challenge)[-1] == "NameError: name 'np' is not defined"
    shell.user_ns["np"] = 1
    assert run(shell, "raise NameError('np', name='np')", challenge)[-1] == "NameError: np"
    assert not any("💡" in line for line in shell.shown)


def test_the_first_cell_run_the_cell_runs_and_the_hint_is_shown_once(shell):
    """The hint's advice works (the first cell defines the name), and a traceback shown again
    (%tb) carries the line once."""
    challenge = cell_id("lesson1.ipynb", "expected_tokens(alpha=0.40")
    shown = run(shell, "expected_tokens(alpha=0.40, k=5)", challenge)
    assert shown[-1].startswith("💡")
    shell.run_line_magic("tb", "")
    assert sum(line.startswith("💡") for line in shell.shown) == 1
    first = json.loads((ROOT / "notebooks" / "lesson1.ipynb").read_text(encoding="utf-8"))["cells"][1]
    assert "setup" in first["metadata"].get("tags", []), \
        "lesson1.ipynb's first code cell (its imports) lost its `setup` tag (docs/authoring.md「加一課」)"
    result = shell.run_cell("".join(first["source"]))
    assert result.success
    assert shell.run_cell("expected_tokens(alpha=0.40, k=5)").result == pytest.approx(1.65984)


def test_the_names_are_what_each_first_cell_binds():
    first = HINTS["first_cells"]
    assert set(first) == set(lab_pages())                 # every lesson's notebook (mkdocs.yml's nav)
    assert set(lab_pages()) >= {"lesson1.ipynb", "lesson2.ipynb", "lossless.ipynb", "your_gpu.ipynb"}
    assert {"np", "plotting", "expected_tokens", "speedup", "best_k"} <= set(first["lesson1.ipynb"])
    assert all(first[nb]["np"] == "import" for nb in ("lesson1.ipynb", "lossless.ipynb", "your_gpu.ipynb"))
    assert {k: first["lossless.ipynb"][k] for k in ("target", "draft", "run", "course_models")} == \
        {"target": "define", "draft": "define", "run": "define", "course_models": "import"}
    assert "EXAMPLE_METRICS" in first["your_gpu.ipynb"] and "expected_tokens" not in first["your_gpu.ipynb"]
    assert {"tree_attention_mask", "multi_draft_acceptance", "plotting"} <= set(first["lesson2.ipynb"])
    for nb in NOTEBOOKS:
        ids = [c["id"] for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]]
        assert HINTS["cells"][nb.name] == ids


def test_first_cell_names_reads_a_cell_as_ipython_does():
    source = ("%matplotlib inline\nimport numpy as np, os.path\nfrom a.b import (c, d as e)\n"
              "x, (y, *z) = 1, (2, 3)\nfor i in range(2): pass\nw: int = 1\nv = [q for q in range(3)]\n"
              "def f(a):\n    inner = a\nclass K:\n    attr = 1\nif (u := 1): pass\nfrom m import *\n")
    notebook = {"cells": [{"cell_type": "markdown", "source": "x = 1"},
                          {"cell_type": "code", "source": source.splitlines(keepends=True)},
                          {"cell_type": "code", "source": "later = 1"}]}
    assert contents.first_cell_names(notebook) == {
        "np": "import", "os": "import", "c": "import", "e": "import", "x": "define", "y": "define",
        "z": "define", "i": "define", "w": "define", "v": "define", "f": "define", "K": "define",
        "u": "define"}
    assert contents.first_cell_names({"cells": [{"cell_type": "markdown", "source": ""}]}) == {}


def test_the_packages_error_about_the_learners_input_is_shown_from_the_learners_line(shell):
    """A wrong file in your-gpu's bench cell showed 26 lines of the package's source before its
    message (a helper's phone review): now the traceback ends at the learner's line, and the
    message follows right under it. Errors from anywhere else keep their whole traceback."""
    shell.run_cell("from specdec_lab import expected_tokens\nfrom specdec_lab.vllm import read_bench_results")
    shown = run(shell, "runs = read_bench_results([{'max_concurrency': 1}])")
    assert shown[-1].startswith("ValueError: ") and "output_throughput" in shown[-1], shown
    assert "----> 1 runs = read_bench_results([{'max_concurrency': 1}])" in shown
    assert not any("specdec_lab" in line and ".py" in line for line in shown), shown   # no package frame
    assert len(shown) <= 8, shown
    shown = run(shell, "expected_tokens(alpha=1.2, k=5)")
    assert shown[-1].startswith("ValueError: alpha ") and not any("_validate" in line for line in shown)
    shown = run(shell, "expected_tokens(alpha=0.5, k='x')")
    assert shown[-1].startswith(("ValueError: k ", "TypeError: k ")), shown
    # numpy's own error, and one the learner's own function raises: the whole traceback
    shown = run(shell, "import numpy as np\nnp.ones(2) @ np.ones(3)")
    assert shown[-1].startswith("ValueError: matmul")
    shown = run(shell, "def f(x):\n    raise ValueError('mine')\nf(1)")
    assert shown[-1] == "ValueError: mine" and any("----> 2" in line for line in shown), shown
    # the package's error raised through a function of the learner's: cut after the learner's frame
    shown = run(shell, "def g():\n    return expected_tokens(alpha=-1, k=3)\ng()")
    assert shown[-1].startswith("ValueError: alpha ") and any("----> 2" in line for line in shown)
    assert not any("_validate" in line for line in shown), shown
