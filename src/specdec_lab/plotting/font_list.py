"""Pyodide's matplotlib font list, mended instead of rebuilt on every page.

Pyodide's ``matplotlib/fontlist.json`` was written on a Mac by a newer matplotlib: stamped 390
where 3.8 wants 330, and 488 of its 526 TrueType entries are macOS fonts Pyodide does not have;
the rest are what a rebuild finds, all but Humor Sans. Rejected, it is rebuilt on every fresh
page. Mended (the fonts that are there, stamped for 3.8, the missing bundled fonts added back) it
gives the rebuild's font list without the rebuild: importing ``specdec_lab.plotting`` 1.29 → 0.86 s
(median of 6 paired runs, Pyodide under Node.js). A matplotlib with another version number
rejects the stamp and rebuilds, as before. ``plotting.style`` calls :func:`mend_shipped_list`
before it imports ``matplotlib.font_manager``; in CPython nothing changes.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import matplotlib

FONT_LIST_VERSION = 330   # matplotlib 3.8's FontManager.__version__


def usable_font_list(font_list: dict, data_path: str) -> dict:
    """``font_list`` (a matplotlib fontlist.json) without its entries for fonts that are not there
    (``fname`` relative to ``data_path`` or absolute), stamped ``FONT_LIST_VERSION``."""
    def there(entry: dict) -> bool:
        return os.path.isfile(os.path.join(data_path, entry["fname"]))
    return {**font_list, "_version": FONT_LIST_VERSION,
            "ttflist": [e for e in font_list["ttflist"] if there(e)],
            "afmlist": [e for e in font_list["afmlist"] if there(e)]}


def add_missing_bundled_fonts(manager) -> list[str]:
    """Add matplotlib's own fonts (mpl-data/fonts) that ``manager`` (a ``FontManager``) lacks;
    returns their paths."""
    from matplotlib import font_manager

    fonts = os.path.join(matplotlib.get_data_path(), "fonts")
    folders = [os.path.join(fonts, sub) for sub in ("afm", "pdfcorefonts", "ttf")]
    known = {os.path.realpath(f.fname) for f in manager.ttflist + manager.afmlist}
    bundled = [*font_manager.findSystemFonts(folders, fontext="afm"),
               *font_manager.findSystemFonts(folders, fontext="ttf")]
    missing = [path for path in bundled if os.path.realpath(path) not in known]
    for path in missing:
        manager.addfont(path)
    return missing


def mend_shipped_list() -> bool:
    """In Pyodide, rewrite the shipped list so ``font_manager`` takes it as is; call before
    ``matplotlib.font_manager`` is first imported. True when it did (then call
    :func:`add_missing_bundled_fonts` on ``font_manager.fontManager``)."""
    shipped = Path(matplotlib.__file__).with_name("fontlist.json")   # where Pyodide reads it
    if sys.platform != "emscripten" or not shipped.is_file():
        return False
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):   # else: rebuilt, as before
        shipped.write_text(json.dumps(usable_font_list(json.loads(shipped.read_text()),
                                                       matplotlib.get_data_path())))
        return True
    return False
