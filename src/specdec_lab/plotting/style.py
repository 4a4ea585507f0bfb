"""The look of the course's figures: the Chinese font, the colours, the sizes, and a new figure.

Importing this module registers the Traditional Chinese font shipped in ``specdec_lab/fonts/``
(a subset of Noto Sans CJK TC) and puts it first in matplotlib's sans-serif list, so your own
plots can use Chinese too, and lets a ``Figure`` that ends a notebook cell show as a PNG.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
from pathlib import Path


class _QuietFontCache(logging.Filter):
    """Drops matplotlib's "building the font cache" warning.

    Pyodide's matplotlib 3.8.4 ships a font list stamped with a version its own font manager does
    not accept, so it rebuilds the list (a fraction of a second) and prints that warning into the
    first output of every fresh page. The list is mended below; this stays for when it cannot be.
    Only that message is dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "building the font cache" not in record.getMessage()


logging.getLogger("matplotlib.font_manager").addFilter(_QuietFontCache())

import matplotlib  # noqa: E402  (after the filter: importing font_manager may log the warning)

# Pyodide's list (matplotlib/fontlist.json) was written on a Mac by a newer matplotlib: stamped 390
# where 3.8 wants 330, and 488 of its 526 TrueType entries are macOS fonts Pyodide does not have;
# the rest are what the rebuild finds, all but Humor Sans. So in Pyodide: keep the fonts that are
# there, stamp the list for 3.8, add back the bundled fonts it lacks. The same font list as the
# rebuild's, without the rebuild: importing this package 1.29 -> 0.86 s (median of 6 paired runs,
# Pyodide under Node.js).
# A matplotlib with another version number rejects the stamp and rebuilds, as before.
FONT_LIST_VERSION = 330   # matplotlib 3.8's FontManager.__version__


def usable_font_list(font_list: dict, data_path: str) -> dict:
    """``font_list`` (a matplotlib fontlist.json) without its entries for fonts that are not there
    (``fname`` relative to ``data_path`` or absolute), stamped ``FONT_LIST_VERSION``."""
    def there(entry: dict) -> bool:
        return os.path.isfile(os.path.join(data_path, entry["fname"]))
    return {**font_list, "_version": FONT_LIST_VERSION,
            "ttflist": [e for e in font_list["ttflist"] if there(e)],
            "afmlist": [e for e in font_list["afmlist"] if there(e)]}


_SHIPPED_FONT_LIST = Path(matplotlib.__file__).with_name("fontlist.json")   # where Pyodide reads it
_FIX_FONT_LIST = sys.platform == "emscripten" and _SHIPPED_FONT_LIST.is_file()
if _FIX_FONT_LIST:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):   # else: rebuilt, as before
        _SHIPPED_FONT_LIST.write_text(json.dumps(usable_font_list(
            json.loads(_SHIPPED_FONT_LIST.read_text()), matplotlib.get_data_path())))

from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def add_missing_bundled_fonts(manager: font_manager.FontManager) -> list[str]:
    """Add matplotlib's own fonts (mpl-data/fonts) that ``manager`` lacks; returns their paths."""
    fonts = os.path.join(matplotlib.get_data_path(), "fonts")
    folders = [os.path.join(fonts, sub) for sub in ("afm", "pdfcorefonts", "ttf")]
    known = {os.path.realpath(f.fname) for f in manager.ttflist + manager.afmlist}
    bundled = [*font_manager.findSystemFonts(folders, fontext="afm"),
               *font_manager.findSystemFonts(folders, fontext="ttf")]
    missing = [path for path in bundled if os.path.realpath(path) not in known]
    for path in missing:
        manager.addfont(path)
    return missing


if _FIX_FONT_LIST:
    add_missing_bundled_fonts(font_manager.fontManager)

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


def register_font() -> str:
    """Register the shipped font with matplotlib and make it the first sans-serif choice."""
    if FONT_FAMILY not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(FONT_PATH))
    rc = matplotlib.rcParams
    rc["font.sans-serif"] = [FONT_FAMILY, *[f for f in rc["font.sans-serif"] if f != FONT_FAMILY]]
    rc["font.family"] = "sans-serif"
    return FONT_FAMILY


@contextlib.contextmanager
def course_figure(width: float, height: float, ncols: int = 1, *, wide: bool = False):
    """``with course_figure(w, h) as (fig, ax):`` a Figure outside pyplot (nothing global to
    close) in the course's style, ``ncols`` panels side by side; draw inside the block.

    ``wide=True`` uses the larger type of ``WIDE`` throughout (titles, legends, axis and tick
    labels), for side-by-side panels that a phone shrinks.
    """
    with matplotlib.rc_context({**STYLE, **WIDE} if wide else STYLE):
        fig = Figure(figsize=(width, height), dpi=DPI, facecolor="white", layout="constrained")
        axes = fig.subplots(1, ncols)
        yield fig, axes


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, cropped the way a notebook shows it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def show_figures_in_notebooks() -> None:
    """Let a Figure that ends a notebook cell display as a PNG.

    The figures here are made without pyplot (no global state to clean up), so matplotlib's
    inline backend, which would register this, is never loaded. Only when running under IPython.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


register_font()
show_figures_in_notebooks()
