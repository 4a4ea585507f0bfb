"""site/lab/kernel/specdec_kernel/float_display.py in this CPython's IPython: a displayed float shows at most 12
significant digits (the lesson's 2.38336, not 2.3833599999999997), alone or inside a container,
and stays a float; print() and numpy's scalars are untouched. The kernel's loader installs it in
the browser (tests/test_lab_browser.py), notebooks/execute.py in CPython's kernel
(tests/test_notebook.py checks the stored outputs)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
from specdec_kernel import float_display  # noqa: E402  (plain Python, run inside Pyodide)

from specdec_lab import crossover_concurrency, expected_tokens  # noqa: E402

pytestmark = pytest.mark.fast


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    with pytest.MonkeyPatch.context() as env:
        env.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        config = Config()
        config.HistoryManager.enabled = False
        shell = InteractiveShell(config=config)
        float_display.install(shell)
        yield shell


def shown(shell, value) -> str:
    return shell.display_formatter.format(value)[0]["text/plain"]


@pytest.mark.parametrize("value, text", [
    (expected_tokens(0.6, 5), "2.38336"),
    (crossover_concurrency(0.8, 5, 0.05, t_flop=0.02), "28.6606666667"),
    (0.1 + 0.2, "0.3"),
    (1.0, "1.0"),                 # still a float to the eye
    (0.05, "0.05"),
    (-0.0, "-0.0"),
    (1e-20, "1e-20"),
    (6.02214076e23, "6.02214076e+23"),
    (123456789012.5, "123456789012.0"),   # 13 digits: the 13th goes
    (math.inf, "inf"),
    (math.nan, "nan"),
])
def test_a_float_shows_twelve_significant_digits_at_most(shell, value, text):
    assert expected_tokens(0.6, 5) == 2.3833599999999997       # what Python's repr would show
    assert shown(shell, value) == text


def test_the_shown_value_is_the_float_to_twelve_digits():
    for value in np.random.default_rng(7).lognormal(0, 8, size=2_000):
        text = float_display.short_repr(float(value))
        assert abs(float(text) - value) <= 5e-12 * value
        assert len(text.split("e")[0].replace(".", "").replace("-", "").lstrip("0")) <= 13   # "12.0"


def test_floats_inside_containers_show_the_same_way(shell):
    assert shown(shell, [expected_tokens(0.6, 5), 1.0]) == "[2.38336, 1.0]"
    assert shown(shell, {5: 0.1 + 0.2}) == "{5: 0.3}"
    assert shown(shell, (0.1 + 0.2,)) == "(0.3,)"


def test_print_numpy_and_other_types_are_untouched(shell, capsys):
    assert shown(shell, np.float64(0.1) + 0.2) == "np.float64(0.30000000000000004)"
    assert shown(shell, 3) == "3" and shown(shell, True) == "True"
    assert str(0.1 + 0.2) == "0.30000000000000004"
    assert shell.run_cell("print(0.1 + 0.2)").success
    assert capsys.readouterr().out == "0.30000000000000004\n"
