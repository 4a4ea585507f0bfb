"""The figures of the 實驗場 notebooks, with Chinese labels (the only package that imports matplotlib).

Each ``*_figure`` function (and ``tokens_histogram``) takes the same numbers as the package's
functions, draws one figure and returns it (a ``matplotlib.figure.Figure``; a notebook shows it
when it is a cell's last value). ``explore_*`` put sliders in front of a figure (needs
ipywidgets). ``round_table`` shows one verification round position by position.

One job per module:

* ``style``   — the shipped Traditional Chinese font (registered on import, so your own plots can
  use Chinese too), the Okabe–Ito colours, the sizes, ``course_figure`` and ``figure_png``;
* ``figures`` — lesson 1's figures: ``tokens_histogram``, ``speedup_figure``, ``serving_figure``;
* ``live``    — slider panels: ``LiveFigure``, ``explore_tokens``, ``explore_speedup``,
  ``explore_serving``;
* ``beyond``  — the lossless lab's and your vLLM numbers' figures: ``transition_figure``,
  ``positional_figure``, ``bench_sweep_figure``.

``Table`` and ``round_table`` live in ``specdec_lab.tables`` (text, no matplotlib) and are
re-exported here, next to the figures the notebook shows them with.
"""
# style first: it quiets matplotlib's font-cache message before anything imports matplotlib
from .style import (
    BLACK,
    BLUE,
    DPI,
    FONT_FAMILY,
    FONT_PATH,
    GREEN,
    GREY,
    LOSS_FILL,
    LOSS_HATCH,
    ORANGE,
    PURPLE,
    SKY,
    STYLE,
    VERMILLION,
    WIDE,
    course_figure,
    figure_png,
    register_font,
    show_figures_in_notebooks,
)
from ..tables import Table, round_table
from .figures import serving_figure, speedup_figure, tokens_histogram
from .live import LiveFigure, explore_serving, explore_speedup, explore_tokens
from .beyond import bench_sweep_figure, positional_figure, transition_figure

__all__ = [
    "FONT_PATH", "FONT_FAMILY", "register_font", "show_figures_in_notebooks",
    "BLUE", "VERMILLION", "GREEN", "ORANGE", "SKY", "PURPLE", "GREY", "BLACK", "LOSS_FILL", "LOSS_HATCH",
    "STYLE", "WIDE", "DPI", "course_figure", "figure_png",
    "tokens_histogram", "speedup_figure", "serving_figure",
    "Table", "round_table",
    "LiveFigure", "explore_tokens", "explore_speedup", "explore_serving",
    "transition_figure", "positional_figure", "bench_sweep_figure",
]
