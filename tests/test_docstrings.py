"""The examples in the package's docstrings are true."""
import doctest

import pytest

import specdec_lab.closed_form
import specdec_lab.monte_carlo
import specdec_lab.serving

MODULES = [specdec_lab.closed_form, specdec_lab.monte_carlo, specdec_lab.serving]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, raise_on_error=False)
    assert result.attempted > 0 and result.failed == 0
