"""Draw × ÷ ± · − ≈ ≤ ≥ in running text at a Latin font's width.

Noto Sans CJK TC, which draws the lessons' whole text where it is installed (course.css says
why), gives these signs a full em, as it does ideographs: "0.62 × 0.55 × 0.48 ≈ 0.065" and
"(1 + K·c)" read spaced out. Each one in running text is wrapped in <span class="sd-sign">, which
course.css draws with a Latin font of the machine.

    narrow_signs(html) -> html

Only text between tags is touched: never a tag or its attributes, nor what is inside <pre>,
<code>, <math>, <script>, <style> or <textarea>. The span adds no text, so the search index and
copied text are unchanged.
"""
from __future__ import annotations

import re

SIGNS = "×÷±·−≈≤≥"
SIGN_RE = re.compile(f"[{SIGNS}]")
KEPT_RE = re.compile(r"<(pre|code|math|script|style|textarea)\b.*?</\1>", re.S)
TAG_RE = re.compile(r"(<[^>]*>)")


def _in_text(html: str) -> str:
    parts = TAG_RE.split(html)
    parts[::2] = [SIGN_RE.sub(r'<span class="sd-sign">\g<0></span>', text) for text in parts[::2]]
    return "".join(parts)


def narrow_signs(html: str) -> str:
    """Wrap each sign of SIGNS in running text in <span class="sd-sign"> (see the module's doc)."""
    out, last = [], 0
    for kept in KEPT_RE.finditer(html):
        out.append(_in_text(html[last:kept.start()]))
        out.append(kept.group(0))
        last = kept.end()
    out.append(_in_text(html[last:]))
    return "".join(out)
