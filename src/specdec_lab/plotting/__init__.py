"""The figures of the 實驗場 notebooks, with Chinese labels (the only package that imports matplotlib).

Each ``*_figure`` function (and ``tokens_histogram``) takes the same numbers as the package's
functions, draws one figure and returns it (a ``matplotlib.figure.Figure``; a notebook shows it
when it is a cell's last value). ``explore_*`` put sliders in front of a figure (needs
ipywidgets). ``round_table`` shows one verification round position by position.

One job per module:

* ``style``   — the shipped Traditional Chinese font (registered when ``style`` is imported, so
  your own plots can use Chinese too), the Okabe–Ito colours, the sizes, ``course_figure`` and
  ``figure_png``;
* ``figures`` — lesson 1's figures: ``tokens_histogram``, ``speedup_figure``, ``serving_figure``;
* ``live``    — slider panels: ``LiveFigure``, ``explore_tokens``, ``explore_speedup``,
  ``explore_serving`` (lesson 1) and ``explore_tree_serving`` (lesson 2's 6️⃣); they keep their figure (``figures.TokensPlot``, ``SpeedupPlot``,
  ``ServingPlot``) and update it, and ``canvas.PanelCanvas`` draws it once per step;
* ``beyond``  — the lossless lab's and your vLLM numbers' figures: ``transition_figure``,
  ``positional_figure``, ``bench_sweep_figure``;
* ``trees``   — lesson 2's tree figures: ``tree_mask_figure``, ``tree_scaling_figure``,
  ``tree_serving_figure``.

``Table`` and ``round_table`` live in ``specdec_lab.tables`` (text, no matplotlib) and are
re-exported here, next to the figures the notebook shows them with.

``import specdec_lab.plotting`` is quick: each name is imported from its module when first used,
and matplotlib with it (the first figure takes the extra second or so). For your own matplotlib
plots with Chinese labels, call ``plotting.register_font()`` first (drawing any course figure
does it too).
"""
import importlib

from ..tables import Table, round_table

# where each name lives; a name is imported when first used (PEP 562), so that importing this
# module does not import matplotlib: in the browser that takes about 1.4 s, which then comes with
# the first figure rather than with the notebook's first cell. style is always imported before a
# figure is drawn (every figure module imports it), so the font and the PNG display are set up then.
_HOME = {
    "style": ["FONT_PATH", "FONT_FAMILY", "register_font", "show_figures_in_notebooks",
              "BLUE", "VERMILLION", "GREEN", "ORANGE", "SKY", "PURPLE", "GREY", "BLACK",
              "LOSS_FILL", "LOSS_HATCH", "STYLE", "WIDE", "DPI", "course_figure", "figure_png"],
    "figures": ["tokens_histogram", "speedup_figure", "serving_figure"],
    "live": ["LiveFigure", "explore_tokens", "explore_speedup", "explore_serving", "explore_tree_serving"],
    "beyond": ["transition_figure", "positional_figure", "bench_sweep_figure"],
    "trees": ["tree_mask_figure", "tree_scaling_figure", "tree_serving_figure"],
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}
# what the figure modules import beyond numpy (the wheel's "plot" extra); in the 實驗場 they are
# loaded before the first cell that uses this module's contents (site/lab/kernel/specdec_kernel/load_on_use.py)
_NEEDS = ("matplotlib", "ipywidgets")


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f"{__name__}.{_MODULE_OF[name]}")
    except ModuleNotFoundError as error:
        if error.name not in _NEEDS:
            raise
        raise ModuleNotFoundError(
            f"specdec_lab.plotting.{name} 需要 {error.name}，但 Python 找不到它。在實驗場裡，"
            f"用到 plotting.… 的那一格執行前會自動載入它；若是用別的寫法取用，"
            f"先在一格裡執行 import {error.name}。在自己的電腦上：pip install 'specdec-lab[plot]'",
            name=error.name) from error
    value = getattr(module, name)
    globals()[name] = value      # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["Table", "round_table", *_MODULE_OF]
