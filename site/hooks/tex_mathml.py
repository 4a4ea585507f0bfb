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
from xml.etree import ElementTree

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


# how a formula reads in one line of text, for the search index (linear_text)
ACCENTS = {"^": "\u0302", "~": "\u0303", "\u02dc": "\u0303", "\u00af": "\u0304", "\u203e": "\u0304",
           "\u02d9": "\u0307", ".": "\u0307", "\u2192": "\u20d7"}
SCRIPTS = {"msub": ("sub",), "msup": ("sup",), "msubsup": ("sub", "sup"),
           "munder": ("sub",), "mover": ("sup",), "munderover": ("sub", "sup")}


def linear_text(mathml: str) -> str:
    """A formula in one line of HTML: its symbols in order, scripts as <sub>/<sup> (the tags the
    search index keeps), a fraction as (a)/(b), an accent as a combining mark: α<sup>2</sup>,
    1+∑<sub>i</sub>∏<sub>j≤i</sub>α<sub>j</sub>, (1−α<sup>K+1</sup>)/(1−α), p̂."""
    def plain(part: str) -> str:
        return re.sub(r"<[^>]*>", "", part)

    def grouped(part: str) -> str:
        return part if len(plain(part)) <= 1 else f"({part})"

    def walk(el) -> str:
        tag = el.tag.rpartition("}")[2]
        kids = list(el)
        if tag in ("mi", "mn", "mo", "mtext", "ms"):
            return html.escape(el.text or "", quote=False)
        if tag == "mspace":
            return " "
        if tag == "mphantom":
            return ""
        if tag in SCRIPTS and len(kids) == len(SCRIPTS[tag]) + 1:
            base, *scripts = [walk(kid) for kid in kids]
            if tag == "mover" and plain(scripts[0]) in ACCENTS:
                return base + ACCENTS[plain(scripts[0])]
            return base + "".join(f"<{t}>{s}</{t}>" for t, s in zip(SCRIPTS[tag], scripts))
        if tag == "mfrac" and len(kids) == 2:
            return "/".join(grouped(walk(kid)) for kid in kids)
        if tag == "msqrt":
            return "\u221a" + grouped("".join(walk(kid) for kid in kids))
        if tag == "mroot" and len(kids) == 2:
            return f"<sup>{walk(kids[1])}</sup>\u221a" + grouped(walk(kids[0]))
        if tag == "mtable":
            return "; ".join(" ".join(walk(cell) for cell in row) for row in kids)
        return "".join(walk(kid) for kid in kids)

    return walk(ElementTree.fromstring(mathml))


def searchable(mathml: str) -> str:
    """The formula as drawn, plus linear_text for Material's search index: a <semantics> whose
    first child (the one browsers draw) the index skips (data-search-exclude) and whose
    annotation-xml (never drawn: MathML Core's user-agent style hides it) it reads. The index then
    shows α<sup>2</sup> where it showed "α2" (the text of <msup><mi>α</mi><mn>2</mn></msup>)."""
    head, _, rest = mathml.partition(">")
    body = rest.removesuffix("</math>")
    # The index's parser ends a skip at the first end tag with the skipped element's name, so the
    # drawn part goes in an element that nothing inside it repeats (an <mpadded> with no attributes
    # lays out as an <mrow>); a formula that has one of its own keeps its flat text.
    if "<mpadded" in body:
        return mathml
    return (f'{head}><semantics><mpadded data-search-exclude="">{body}</mpadded>'
            f'<annotation-xml encoding="text/html">{linear_text(mathml)}</annotation-xml>'
            "</semantics></math>")


def tex_to_mathml_html(page_html: str, for_search: bool = False) -> str:
    """Replace every arithmatex span/div in rendered HTML with MathML (for_search: searchable)."""
    def replace(match: re.Match) -> str:
        display = match.group("block") is not None
        tex = html.unescape(match.group("block") if display else match.group("inline"))
        pieces = break_points(tex) if display else [tex]
        mathml = [tex_to_mathml(piece, display) for piece in pieces]
        if for_search:
            mathml = [searchable(one) for one in mathml]
        if len(mathml) > 1:     # pieces side by side where they fit, one under another where not
            return f'<div class="sd-math sd-math--wraps">{"".join(mathml)}</div>'
        if display:
            return f'<div class="sd-math">{mathml[0]}</div>'
        return mathml[0]
    return ARITHMATEX_RE.sub(replace, page_html)


def break_points(tex: str) -> list[str]:
    """A display formula split where it says `\\allowbreak` outside any braces: TeX's own word
    for "a line may break here". A formula too wide for a phone (390 px) goes on at its next
    break on the next line, and stays on one line where it fits; MathML in browsers breaks no
    display formula by itself. A break inside braces is an error (it would split a group)."""
    pieces, depth, start = [], 0, 0
    for match in re.finditer(r"\\[{}]|[{}]|\\allowbreak(?![A-Za-z])", tex):
        token = match.group()
        if token in "{}":
            depth += 1 if token == "{" else -1
        elif token == "\\allowbreak":
            if depth:
                raise MathError(f"公式 `{tex.strip()}` 的 \\allowbreak 在大括號裡：只能斷在最外層")
            pieces.append(tex[start:match.start()])
            start = match.end()
    pieces.append(tex[start:])
    return [piece for piece in pieces if piece.strip()]


# A `$` left in a page's text after arithmatex and the MathML above, just before TeX (a backslash,
# a letter, a brace, a script mark) or another `$`: a formula whose other `$` is missing (or sits in
# another paragraph). arithmatex leaves it as text, so the page would show "$\alpha 越高".
# A price ("$2", "$ 5") does not look like this; `\$` writes a `$` on purpose (stray_dollar_lines).
STRAY_DOLLAR_RE = re.compile(r"\${1,2}(?=[\\A-Za-z{}^_$])")
_NOT_TEXT_RE = re.compile(r"<(code|pre|math|script|style|kbd)\b.*?</\1>", re.S)


def stray_dollars(page_html: str) -> list[str]:
    """Each stray math `$` in the page's text with what follows it (up to 12 characters)."""
    text = html.unescape(re.sub(r"<[^>]*>", "", _NOT_TEXT_RE.sub(" ", page_html)))
    return [text[m.start():m.start() + 12].split("\n")[0] for m in STRAY_DOLLAR_RE.finditer(text)]


def stray_dollar_lines(source: str, snippet: str) -> list[int] | None:
    """The lines of a page's Markdown where `snippet` (from stray_dollars; the shown text, so
    shorter and shorter beginnings of it are looked for) starts with an unescaped `$`; None when
    each one found is written `\\$` (a dollar sign meant as one)."""
    for length in (len(snippet), 6, 2):
        lines, escaped = [], False
        for number, line in enumerate(source.split("\n"), start=1):
            start = line.find(snippet[:length])
            while start >= 0:
                if line[:start].endswith("\\"):
                    escaped = True
                elif number not in lines:
                    lines.append(number)
                start = line.find(snippet[:length], start + 1)
        if lines or escaped:
            return lines or None
    return []
