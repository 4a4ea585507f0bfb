"""Draw × ÷ ± · − ≈ ≤ ≥ in running text at a Latin font's width, and each run of superscript
digits (10⁻³⁰⁰) in one font.

Noto Sans CJK TC, which draws the lessons' whole text where it is installed (course.css says
why), gives these signs a full em, as it does ideographs: "0.62 × 0.55 × 0.48 ≈ 0.065" and
"(1 + K·c)" read spaced out. Each one in running text is wrapped in <span class="sd-sign">, which
course.css draws with a Latin font of the machine. (The live lab's Markdown, which JupyterLab
renders in the browser, gets the same spans from the lab's page script: site/lab/page/looks.js, 22.)

Superscript digits: Noto Sans CJK TC has ¹ ² ³ (Latin-1) but not ⁰ ⁴–⁹ ⁻ ⁺, which the browser
then takes from another font, so "10⁻³⁰⁰" was drawn in two (its ³ smaller and higher than its ⁰s:
it read like "10⁻³ºº"). Each run is wrapped in <span class="sd-sup">, drawn by one font that has
them all (course.css).

    narrow_signs(html) -> html

Only text between tags is touched: never a tag or its attributes, nor what is inside <pre>,
<code>, <math>, <script>, <style> or <textarea>. The span adds no text, so the search index and
copied text are unchanged.
"""
from __future__ import annotations

import re

SIGNS = "×÷±·−≈≤≥"
SIGN_RE = re.compile(f"[{SIGNS}]")
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
SUPERSCRIPT_RUN_RE = re.compile(f"[{SUPERSCRIPTS}]+")
KEPT_RE = re.compile(r"<(pre|code|math|script|style|textarea)\b.*?</\1>", re.S)
TAG_RE = re.compile(r"(<[^>]*>)")


def _in_text(html: str) -> str:
    parts = TAG_RE.split(html)
    parts[::2] = [SUPERSCRIPT_RUN_RE.sub(r'<span class="sd-sup">\g<0></span>',
                                         SIGN_RE.sub(r'<span class="sd-sign">\g<0></span>', text))
                  for text in parts[::2]]
    return "".join(parts)


def narrow_signs(html: str) -> str:
    """Wrap each sign of SIGNS in running text in <span class="sd-sign">, each run of SUPERSCRIPTS
    in <span class="sd-sup"> (see the module's doc)."""
    out, last = [], 0
    for kept in KEPT_RE.finditer(html):
        out.append(_in_text(html[last:kept.start()]))
        out.append(kept.group(0))
        last = kept.end()
    out.append(_in_text(html[last:]))
    return "".join(out)
