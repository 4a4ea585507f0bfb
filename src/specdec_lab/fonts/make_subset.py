"""Regenerate the Traditional Chinese font that the plots use (run from the repository root):

    .venv/bin/python src/specdec_lab/fonts/make_subset.py

Pyodide's matplotlib ships only DejaVu, STIX and Computer Modern, so Chinese labels need a font
of our own. Source: Debian's ``fonts-noto-cjk`` (``apt-get install fonts-noto-cjk``), whose
``NotoSansCJK-Regular.ttc`` holds "Noto Sans CJK TC" as font number 3. Kept glyphs:

* the 5,401 common characters of Big5 level 1 (常用字, read from Python's own big5 codec), so
  what a learner types into a plot title renders too;
* every character that the package, the notebooks and the lessons use;
* ASCII, Latin-1, Greek (α, σ), Bopomofo, CJK and full-width punctuation, arrows, a few math
  signs — where the source font has them.

Hinting and OpenType layout features are dropped (matplotlib's Agg renderer uses neither); the
family is renamed "Noto Sans CJK TC Subset" so that it can never be confused with a complete
Noto CJK installed on the machine. The font is under the SIL Open Font License 1.1, written next
to it as OFL.txt (the license allows subsetting and redistribution; its only reserved font name
is "Source", which the subset does not use).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from fontTools import subset

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
SOURCE_FONT_NUMBER = 3  # 0 JP, 1 KR, 2 SC, 3 TC, 4 HK
DEBIAN_COPYRIGHT = Path("/usr/share/doc/fonts-noto-cjk/copyright")
FAMILY = "Noto Sans CJK TC Subset"
POSTSCRIPT = "NotoSansCJKtcSubset-Regular"
OUTPUT = HERE / "NotoSansCJKtc-Subset.otf"
LICENSE = HERE / "OFL.txt"

RANGES = [
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x00FF),  # Latin-1 (×, ÷, ±, °, ·)
    (0x0391, 0x03C9),  # Greek (α, σ, τ)
    (0x2010, 0x2027),  # dashes, quotes, bullet, ellipsis
    (0x2030, 0x203B),  # ‰ ′ ″ ※
    (0x2070, 0x209F),  # super- and subscripts
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # math operators (−, ≈, ≤, ≥, ∞, Σ, √)
    (0x2460, 0x2473),  # ① … ⑳
    (0x25A0, 0x25FF),  # ■ ● ▲ ◆
    (0x2605, 0x2606),  # ★ ☆
    (0x2713, 0x2718),  # ✓ ✔ ✕ ✗ ✘
    (0x3000, 0x303F),  # CJK punctuation 「」『』、。
    (0x3105, 0x312F),  # Bopomofo
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF01, 0xFF65),  # full-width forms (，：；！？（）)
]
CONTENT_GLOBS = ["src/specdec_lab/**/*.py", "notebooks/*.ipynb", "lessons/**/*.md"]


def big5_level1() -> set[str]:
    """The 5,401 frequently used hanzi of Big5 (lead bytes 0xA4–0xC6)."""
    chars = set()
    for lead in range(0xA4, 0xC7):
        for trail in [*range(0x40, 0x7F), *range(0xA1, 0xFF)]:
            try:
                ch = bytes([lead, trail]).decode("big5")
            except UnicodeDecodeError:
                continue
            if "\u4e00" <= ch <= "\u9fff":
                chars.add(ch)
    return chars


def content_chars() -> set[str]:
    """Every non-ASCII character in the project's own text."""
    found = set()
    for pattern in CONTENT_GLOBS:
        for path in ROOT.glob(pattern):
            found.update(ch for ch in path.read_text(encoding="utf-8") if ord(ch) > 0x7E)
    return found


def wanted_text() -> str:
    chars = big5_level1() | content_chars()
    for lo, hi in RANGES:
        chars.update(chr(c) for c in range(lo, hi + 1))
    return "".join(sorted(chars))


def rename(font) -> None:
    names = font["name"]
    for record in names.names:
        text = record.toUnicode()
        if record.nameID in (1, 4, 16):
            record.string = FAMILY
        elif record.nameID in (3, 6):
            record.string = text.replace("NotoSansCJKtc-Regular", POSTSCRIPT)
    top = font["CFF "].cff.topDictIndex[0]
    top.FamilyName, top.FullName = FAMILY, FAMILY
    font["CFF "].cff.fontNames = [POSTSCRIPT]


def write_license(copyright_notice: str) -> None:
    """OFL 1.1 as Debian ships it, preceded by the font's copyright line."""
    text = DEBIAN_COPYRIGHT.read_text(encoding="utf-8")
    block = re.search(r"^License: SIL-1\.1\n((?: .*\n)+)", text, re.M).group(1)
    body = "\n".join("" if line == " ." else line[1:] for line in block.splitlines())
    header = (
        f"{FAMILY} ({OUTPUT.name}) is a subset of Noto Sans CJK TC, made by\n"
        f"src/specdec_lab/fonts/make_subset.py from Debian's fonts-noto-cjk.\n\n"
        f"Copyright {copyright_notice.removeprefix('© ').rstrip('.')}, with Reserved Font Name 'Source'.\n"
        "Noto is a trademark of Google LLC.\n\n"
        "This Font Software is licensed under the SIL Open Font License, Version 1.1.\n\n"
    )
    LICENSE.write_text(header + body.strip() + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="NotoSansCJK-Regular.ttc")
    args = parser.parse_args()
    options = subset.Options()
    options.font_number = SOURCE_FONT_NUMBER
    options.hinting = False
    options.layout_features = []
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6]
    options.notdef_outline = True
    font = subset.load_font(str(args.source), options)
    copyright_notice = font["name"].getDebugName(0)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=wanted_text())
    subsetter.subset(font)
    rename(font)
    font.recalcTimestamp = False  # the same input gives the same bytes
    subset.save_font(font, str(OUTPUT), options)
    write_license(copyright_notice)
    cmap = font.getBestCmap()
    print(f"{OUTPUT.relative_to(ROOT)}: {len(cmap)} characters, {OUTPUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
