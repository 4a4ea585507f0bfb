"""The look of the course's figures: the Chinese font, the colours, the sizes, and a new figure.

Importing this module registers the Traditional Chinese font shipped in ``specdec_lab/fonts/``
(a subset of Noto Sans CJK TC) and puts it first in matplotlib's sans-serif list, so your own
plots can use Chinese too, and lets a ``Figure`` that ends a notebook cell show as a PNG.
"""
from __future__ import annotations

import base64
import contextlib
import io
import logging
import os
import sys
from pathlib import Path


class _QuietFontCache(logging.Filter):
    """Drops matplotlib's "building the font cache" warning.

    Pyodide's matplotlib 3.8.4 ships a font list stamped with a version its own font manager does
    not accept, so it rebuilds the list (a fraction of a second) and prints that warning into the
    first output of every fresh page. plotting.font_list mends the list; this stays for when it
    cannot.
    Only that message is dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "building the font cache" not in record.getMessage()


logging.getLogger("matplotlib.font_manager").addFilter(_QuietFontCache())

import matplotlib  # noqa: E402  (after the filter: importing font_manager may log the warning)

from . import font_list  # noqa: E402

_MENDED = font_list.mend_shipped_list()   # Pyodide only; before font_manager reads the list

from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

if _MENDED:
    font_list.add_missing_bundled_fonts(font_manager.fontManager)

FONT_PATH = Path(__file__).resolve().parents[1] / "fonts" / "NotoSansCJKtc-Subset.otf"
FONT_FAMILY = "Noto Sans CJK TC Subset"

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour deficiency
BLUE, VERMILLION, GREEN, ORANGE = "#0072B2", "#D55E00", "#009E73", "#E69F00"
SKY, PURPLE, GREY, BLACK = "#56B4E9", "#CC79A7", "#666666", "#000000"
LOSS_FILL, LOSS_HATCH = (0.835, 0.369, 0.0, 0.06), (0.835, 0.369, 0.0, 0.28)  # vermillion, faint

# sizes for a figure about 5 inches wide shown in a ~450 px notebook column
STYLE = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "legend.framealpha": 0.92,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 2.0,
    "lines.markersize": 6,
    "hatch.linewidth": 1.2,
}
# two panels side by side are shown smaller: larger type keeps them legible
WIDE = {"font.size": 13, "axes.titlesize": 14, "axes.labelsize": 13, "xtick.labelsize": 12.5,
        "ytick.labelsize": 12.5, "legend.fontsize": 12}
DPI = 100
# A notebook narrower than NARROW_BELOW CSS px (a phone's, a narrow panel) gets figures laid out
# for it: at most NARROW_WIDTH inches wide, two panels one above the other, so that a phone shows
# them a little smaller instead of at half size (their labels were 6-8 px). The lab's page
# (site/lab/page/phone-width.js, 20.) writes the notebook's width into the lab's drive, LAB_WIDTH_FILE;
# SPECDEC_LAB_WIDTH in the environment says it instead (and wins).
NARROW_BELOW = 520
NARROW_WIDTH = 4.0
LAB_WIDTH_FILE = Path("/drive/.specdec-lab-width")


def register_font() -> str:
    """Register the shipped font with matplotlib and make it the first sans-serif choice."""
    if FONT_FAMILY not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(FONT_PATH))
    rc = matplotlib.rcParams
    rc["font.sans-serif"] = [FONT_FAMILY, *[f for f in rc["font.sans-serif"] if f != FONT_FAMILY]]
    rc["font.family"] = "sans-serif"
    return FONT_FAMILY


def course_style(wide: bool = False):
    """``with course_style():`` the course's sizes for artists added to a figure after
    ``course_figure`` made it (a figure a slider panel updates)."""
    return matplotlib.rc_context({**STYLE, **WIDE} if wide else STYLE)


@contextlib.contextmanager
def course_figure(width: float, height: float, ncols: int = 1, *, wide: bool = False):
    """``with course_figure(w, h) as (fig, ax):`` a Figure outside pyplot (nothing global to
    close) in the course's style, ``ncols`` panels side by side; draw inside the block.

    ``wide=True`` uses the larger type of ``WIDE`` throughout (titles, legends, axis and tick
    labels), for side-by-side panels that a phone shrinks.
    """
    rows, cols = 1, ncols
    if notebook_is_narrow():
        rows, cols = ncols, 1
        width, height = min(width, NARROW_WIDTH), height * (1 if ncols == 1 else 0.8 * ncols)
    with course_style(wide):
        fig = Figure(figsize=(width, height), dpi=DPI, facecolor="white", layout="constrained")
        axes = fig.subplots(rows, cols)
        yield fig, axes


def notebook_is_narrow() -> bool:
    """Whether the notebook the figures are shown in is narrower than NARROW_BELOW CSS px, as the
    lab says (unknown, as in CPython or Jupyter: no)."""
    width = os.environ.get("SPECDEC_LAB_WIDTH")
    if width is None:
        try:
            width = LAB_WIDTH_FILE.read_text(encoding="utf-8")   # (ascii would import encodings.ascii)
        except (OSError, ValueError):
            return False
    width = width.strip()
    return width.isdigit() and 0 < int(width) < NARROW_BELOW


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, cropped the way a notebook shows it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def figure_png_base64(fig: Figure) -> str:
    """The figure as PNG, base64-encoded ASCII text: what a notebook stores and a kernel sends."""
    return base64.b64encode(figure_png(fig)).decode("ascii")


def show_figures_in_notebooks() -> None:
    """Let a Figure display as a PNG, whether it ends a notebook cell or is passed to display().

    The figures here are made without pyplot (no global state to clean up), so matplotlib's
    inline backend, which would register this, is never loaded. Only when running under IPython.
    The formatter gives base64 text, as that backend does (IPython's print_figure(base64=True)):
    ipykernel would encode raw bytes on either path, but Pyodide's kernel encodes them only for a
    cell's last value and hands display()'s bytes to the browser as they are, which then shows
    ``data:image/png;base64,[object Object]``.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png_base64)


register_font()
show_figures_in_notebooks()
