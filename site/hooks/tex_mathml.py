"""Formulas to MathML at build time: the page ships no math JavaScript and no math web font.

Authors write `$...$` (inline) and `$$...$$` (display). pymdownx.arithmatex in generic mode turns
them into `<span class="arithmatex">\\(...\\)</span>` and `<div class="arithmatex">\\[...\\]</div>`;
`tex_to_mathml_html` replaces those with MathML from latex2mathml, which Chromium, Firefox and
Safari render natively.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from latex2mathml.converter import convert

ARITHMATEX_RE = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*'
    r'(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<block>.*?)\\\])'
    r'\s*</(?P=tag)>',
    re.S,
)

# latex2mathml marks operator names such as \min as <mo>; MathML Core spaces and styles them
# better as identifiers.
OPERATOR_NAME_RE = re.compile(r"<mo>(min|max|arg|argmax|argmin|log|exp|norm|Pr|lim|sup|inf)</mo>")
# p' comes out as a prime in a superscript, which renders as a tiny prime far above the p; the prime
# glyph is already a raised mark, so it follows the base at normal size.
PRIME_RE = re.compile(r"<msup>(<mi>[^<]*</mi>)(?:<mrow>)?<mi>(&#x0203[234];)</mi>(?:</mrow>)?</msup>")
UNKNOWN_COMMAND_RE = re.compile(r"<m[ion][^>]*>(\\[A-Za-z]+)")
# MathML Core has no named spaces; latex2mathml emits the MathML 3 keywords for \! \, \; \quad.
NAMED_SPACES = {
    "negativethinmathspace": "-0.1667em",
    "thinmathspace": "0.1667em",
    "mediummathspace": "0.2222em",
    "thickmathspace": "0.2778em",
}


# MathML Core's elements that take a fixed number of children (base, script, ...). Firefox draws
# one with another count as an error box and reports "Invalid markup: Incorrect number of children"
ARITY = {"msub": 2, "msup": 2, "msubsup": 3, "munder": 2, "mover": 2, "munderover": 3,
         "mfrac": 2, "mroot": 2}


class MathError(ValueError):
    """A formula latex2mathml cannot convert; the message quotes the TeX."""


class _ChildCounts(HTMLParser):
    """The elements of a MathML string whose number of child elements is not ARITY's (a
    self-closed one, <mspace/>, goes through HTMLParser's handle_startendtag: start, then end)."""

    def __init__(self):
        super().__init__()
        self.open: list[list] = []          # [tag, children so far] from the root down
        self.wrong: list[tuple[str, int]] = []

    def handle_starttag(self, tag, attrs):
        if self.open:
            self.open[-1][1] += 1
        self.open.append([tag, 0])

    def handle_endtag(self, tag):
        name, children = self.open.pop()
        if name in ARITY and children != ARITY[name]:
            self.wrong.append((name, children))


def wrong_child_counts(mathml: str) -> list[tuple[str, int]]:
    """(element, children) for each element of `mathml` with the wrong number of children."""
    counts = _ChildCounts()
    counts.feed(mathml)
    counts.close()
    return counts.wrong


def tex_to_mathml(tex: str, display: bool) -> str:
    try:
        mathml = convert(tex.strip(), display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many types for bad TeX
        raise MathError(f"無法轉換公式 `{tex.strip()}`：{type(error).__name__} {error}".rstrip()) \
            from error
    unknown = UNKNOWN_COMMAND_RE.search(mathml)
    if unknown:   # latex2mathml passes unknown commands through as text
        raise MathError(f"無法轉換公式 `{tex.strip()}`：不認得的指令 {unknown.group(1)}")
    mathml = OPERATOR_NAME_RE.sub(r"<mi>\1</mi>", mathml)
    mathml = PRIME_RE.sub(r'\1<mo lspace="0" rspace="0">\2</mo>', mathml)
    for name, width in NAMED_SPACES.items():
        mathml = mathml.replace(f'width="{name}"', f'width="{width}"')
    for name, children in wrong_child_counts(mathml):
        raise MathError(f"公式 `{tex.strip()}` 轉出的 MathML 不合規：<{name}> 有 {children} 個子元素，"
                        f"應該是 {ARITY[name]} 個")
    return mathml


def tex_to_mathml_html(page_html: str) -> str:
    """Replace every arithmatex span/div in rendered HTML with MathML."""
    def replace(match: re.Match) -> str:
        display = match.group("block") is not None
        tex = html.unescape(match.group("block") if display else match.group("inline"))
        mathml = tex_to_mathml(tex, display)
        if display:
            return f'<div class="sd-math">{mathml}</div>'
        return mathml
    return ARITHMATEX_RE.sub(replace, page_html)
