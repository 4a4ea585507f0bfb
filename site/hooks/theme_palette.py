"""Drop one rule of the theme's palette stylesheet that made every page restyle itself twice.

As Material's bundle starts (and at each switch between light and dark), it sets
`data-md-color-switching` on <body>, reads a computed style, and removes the attribute at the
next frame. Its stylesheet has `[data-md-color-switching] *, … :before, … :after
{transition-duration: 0s}` (no colour transitions during a switch), so both changes invalidated
the style of every element of the page: on lesson 1 about 3,000, some 130 ms on a phone at 4x
slowdown (benchmarks/README.md, 「手機上第 1 課的載入花在哪」). Without the rule, the attribute
matches nothing and costs nothing; a switch of palette then lets the theme's short colour
transitions run (0.25 s), which is all the rule prevented.

    drop_switching_rule(site_dir) -> number of rules dropped
"""
from __future__ import annotations

import re
from pathlib import Path

# one rule: a selector list naming the attribute, and its block
SWITCHING_RULE_RE = re.compile(r"(?<=[{}])[^{}]*\[data-md-color-switching\][^{}]*\{[^{}]*\}")


def drop_switching_rule(site_dir: str | Path) -> int:
    dropped = 0
    for css in sorted(Path(site_dir, "assets", "stylesheets").glob("*.css")):
        text = css.read_text(encoding="utf-8")
        new, count = SWITCHING_RULE_RE.subn("", text)
        if count:
            css.write_text(new, encoding="utf-8")
            dropped += count
    return dropped
