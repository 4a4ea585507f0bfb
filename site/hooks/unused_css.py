"""Drop the theme's selectors that name a class no built page and no script of the site has.

Material's stylesheet styles every feature it offers: content tabs, grids of cards, a blog, cookie
consent, keys... The course uses a few of them, yet a browser tries every selector whose last part
has no class, tag or id of its own (`… > input:nth-child(4):checked ~ .tabbed-labels >
:nth-child(4)`) against every element of the page, at each full style recalculation. On lesson 1
the content tabs' 194 such selectors were a third of the matching time Chromium's selector
statistics counted; without the unused ones the page's style time fell by 5-10 % on a phone, and
main.css by a third (benchmarks/README.md, 「主題樣式表裡用不到的選擇器」).

A selector that requires a class (a `.name` outside any `:not()`, `:is()` or other parentheses)
can only match if some element has that class. Elements get classes from the built HTML and from
scripts; a class counts as used if it is in a `class` attribute of any built page, a word of any
script the site ships, or starts with a word of a script ending in `--` (Material writes
`tabbed-control--${e}`). Every other selector goes; a rule left with none goes too. Rules inside
@media, @supports, @layer and @container are pruned alike; @keyframes, @font-face and the rest are
kept as they are. The lab (lab/) is not read: its documents have their own stylesheets. When a
lesson starts to use a feature (an instructor writes `=== "Tab"`), its class appears in the HTML
and its rules stay.

    used_classes(site_dir) -> the pages' class names and the scripts' words
    prune_css(text, used) -> (text, number of selectors dropped)
    drop_unused_selectors(site_dir) -> number of selectors dropped from assets/stylesheets/*.css
"""
from __future__ import annotations

import re
from pathlib import Path

import tinycss2

CLASS_ATTR_RE = re.compile(r"""\bclass=(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")
WORD_RE = re.compile(r"[A-Za-z_][\w-]*")
NESTED_RULES = {"media", "supports", "layer", "container"}


def used_classes(site_dir: str | Path) -> set[str]:
    site = Path(site_dir)
    # the lab's documents have their own stylesheets (and site/build.py adds lab/ after MkDocs)
    files = [f for f in site.rglob("*") if f.suffix in (".html", ".js")
             and f.relative_to(site).parts[0] != "lab"]
    used: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html":
            for match in CLASS_ATTR_RE.finditer(text):
                used.update((match.group(1) or match.group(2) or match.group(3)).split())
        else:
            used.update(WORD_RE.findall(text))
    return used


def _is_used(name: str, used: set[str]) -> bool:
    if name in used:
        return True
    # a class written from a template (`md-tag--${kind}`): its prefix up to a `--`
    cut = name.find("--")
    while cut > 0:
        if name[:cut + 2] in used:
            return True
        cut = name.find("--", cut + 2)
    return False


def _selectors(prelude: list) -> list[list]:
    """A selector list's top-level comma-separated selectors, as token lists."""
    selectors, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append(current)
            current = []
        else:
            current.append(token)
    selectors.append(current)
    return selectors


def _required_classes(selector: list) -> list[str]:
    """The classes a selector requires: `.name` at its top level (parentheses and brackets are
    their own tokens, so a class inside `:not(...)` or `[...]` is not seen)."""
    return [b.value for a, b in zip(selector, selector[1:])
            if a.type == "literal" and a.value == "." and b.type == "ident"]


class _Source:
    """The stylesheet's text, and the offset of a parsed node in it (tinycss2 gives lines and
    columns): kept rules are copied byte for byte, only a shortened selector list is rewritten."""

    def __init__(self, text: str):
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, node) -> int:
        return self.line_starts[node.source_line - 1] + node.source_column - 1


def _prune_rules(source: _Source, rules: list, end: int, used: set[str]) -> tuple[str, int]:
    """`rules` tile source.text up to `end`; the text with unused selectors left out."""
    out, dropped = [], 0
    for rule, after in zip(rules, rules[1:] + [None]):
        start, stop = source.at(rule), end if after is None else source.at(after)
        text = source.text[start:stop]
        if rule.type == "qualified-rule":
            selectors = _selectors(rule.prelude)
            kept = [s for s in selectors
                    if all(_is_used(name, used) for name in _required_classes(s))]
            dropped += len(selectors) - len(kept)
            if len(kept) == len(selectors):
                out.append(text)
            elif kept:
                body = source.text[source.at(rule.content[0]):stop] if rule.content else "}"
                out.append(",".join(tinycss2.serialize(s).strip() for s in kept) + "{" + body)
        elif rule.type == "at-rule" and rule.lower_at_keyword in NESTED_RULES and rule.content:
            inner_start, inner_end = source.at(rule.content[0]), source.text.rindex("}", start, stop)
            inner_rules = tinycss2.parse_rule_list(rule.content)
            inner, count = _prune_rules(source, inner_rules, inner_end, used)
            dropped += count
            if inner.strip():
                out.append(source.text[start:inner_start] + inner + source.text[inner_end:stop])
        else:
            out.append(text)
    return "".join(out), dropped


def prune_css(text: str, used: set[str]) -> tuple[str, int]:
    return _prune_rules(_Source(text), tinycss2.parse_stylesheet(text), len(text), used)


def drop_unused_selectors(site_dir: str | Path) -> int:
    used = used_classes(site_dir)
    dropped = 0
    for css in sorted(Path(site_dir, "assets", "stylesheets").glob("*.css")):
        text, count = prune_css(css.read_text(encoding="utf-8"), used)
        if count:
            css.write_text(text, encoding="utf-8")
            dropped += count
    return dropped
