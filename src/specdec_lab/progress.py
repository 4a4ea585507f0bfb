"""One line that says how far a long computation has got, for the notebooks' slow cells.

In a notebook (Jupyter in CPython, or the 實驗場's Pyodide kernel) ``Progress`` shows a line such
as「取樣：已寫 8,100 / 16,200 字（50%），54 段中 20 段寫完，約剩 2 秒」once the work has run ``delay`` seconds,
updates it in place at most every ``every`` seconds, and empties it when done: the cell keeps an
output with nothing in it, which shows nothing and which notebooks/execute.py does not store, so
a notebook file keeps no trace of it however fast the machine was. Anywhere else (a script, the
tests) it shows nothing, and it never imports IPython itself.
"""
from __future__ import annotations

import math
import sys
import time

__all__ = ["Progress"]


def _notebook_display():
    """IPython's ``display`` when running in a notebook kernel, else None."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or "Terminal" in type(shell).__name__:
        return None
    from IPython.display import display

    return display


class Progress:
    """``update(done)`` as the work goes (``done`` of ``total`` units); ``close()`` (or leaving a
    ``with`` block) when it is finished. ``show`` replaces the notebook display (for tests): it
    is called with each line, then with None."""

    def __init__(self, what: str, total: int, unit: str = "字", *, sequences: int | None = None,
                 delay: float = 1.0, every: float = 0.25, clock=time.perf_counter, show=None):
        self.what, self.total, self.unit, self.sequences = what, int(total), unit, sequences
        self.delay, self.every, self.clock = delay, every, clock
        self.start = clock()
        self._last = -math.inf
        self._show = show
        self._handle = None
        self.shown = False

    def text(self, done: int, finished: int | None = None, now: float | None = None) -> str:
        """The line for ``done`` units (and ``finished`` of the ``sequences``) finished: how many
        of how many, and the time left at the pace so far."""
        now = self.clock() if now is None else now
        line = f"{self.what}：已寫 {done:,} / {self.total:,} {self.unit}（{done / max(self.total, 1):.0%}）"
        if self.sequences and finished is not None:
            line += f"，{self.sequences} 段中 {finished} 段寫完"
        if 0 < done < self.total:
            left = (now - self.start) * (self.total - done) / done
            line += f"，約剩 {max(1, round(left))} 秒"
        return line

    def update(self, done: int, finished: int | None = None) -> None:
        now = self.clock()
        if now - self.start < self.delay or now - self._last < self.every:
            return
        self._last = now
        self._put(self.text(done, finished, now))

    def _put(self, line: str | None) -> None:
        if self._show is not None:
            self._show(line)
            self.shown = self.shown or line is not None
            return
        if self._handle is None:
            if line is None:
                return
            display = _notebook_display()
            if display is None:
                return
            self._handle = display({"text/plain": line}, raw=True, display_id=True)
            self.shown = True
        else:
            self._handle.update({"text/plain": line} if line is not None else {}, raw=True)

    def close(self) -> None:
        """Empty the line (if one was shown)."""
        if self.shown:
            self._put(None)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *_) -> None:
        self.close()
