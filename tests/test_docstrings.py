"""The examples in the package's docstrings are true: every module with a `>>>` example is run."""
import doctest
import importlib
from pathlib import Path

import pytest

import specdec_lab

PACKAGE = Path(specdec_lab.__file__).parent
MODULES = sorted(
    ".".join(("specdec_lab", *path.relative_to(PACKAGE).with_suffix("").parts))
    for path in PACKAGE.rglob("*.py") if ">>>" in path.read_text(encoding="utf-8")
)


def test_the_examples_are_found():
    assert {"specdec_lab.closed_form", "specdec_lab.monte_carlo", "specdec_lab.serving",
            "specdec_lab.positional"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), raise_on_error=False)
    assert result.attempted > 0 and result.failed == 0
