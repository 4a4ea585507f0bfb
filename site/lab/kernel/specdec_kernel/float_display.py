"""Runs in both of the course's kernels: a float a cell displays (its last expression, alone or
inside a list, dict or tuple) shows at most 12 significant digits, so that the value of a closed
form reads as the lesson writes it:

    expected_tokens(0.6, 5)              2.38336        (not 2.3833599999999997)
    crossover_concurrency(0.8, 5, 0.05, t_flop=0.02)
                                         28.6606666667  (not 28.66066666666667)

A float that needs no more keeps Python's own repr (1.0, 0.05, 1e-20, nan, inf); print(), str()
and f-strings are not touched, nor numpy's numbers and arrays (they print themselves). Twelve
digits are far more than any number of the course means and far fewer than the 17 where a
floating-point error shows; the learner still gets a float (`1.0`, not `1`).

Kernel.started (this package's __init__) calls install(shell) once the kernel has started, before
any cell; notebooks/execute.py has CPython's kernel do the same
before it runs a notebook, so the outputs stored in the notebooks read as the lab shows them.
No imports. Plain Python, tested in CPython's IPython (tests/test_float_display.py).
"""
from __future__ import annotations

DIGITS = 12


def short_repr(value: float) -> str:
    """repr of `value` rounded to DIGITS significant digits."""
    return repr(float(f"{value:.{DIGITS}g}"))


def install(shell) -> None:
    """Have IPython's plain-text display of `shell` (an InteractiveShell) show floats this way."""
    formatter = shell.display_formatter.formatters["text/plain"]
    formatter.for_type(float, lambda value, printer, cycle: printer.text(short_repr(value)))
