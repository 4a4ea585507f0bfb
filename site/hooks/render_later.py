"""Mark the lesson's plain blocks that the browser may lay out only when they come near the screen.

Lesson 1 is about 3,000 elements. On a phone (Lighthouse's mobile preset, 4x CPU slowdown) the
first style and layout passes over all of them, and those the theme's bundle forces again as it
starts, made tasks of 300-600 ms (benchmarks/README.md, 「手機上第 1 課的載入花在哪」). course.css
gives each marked block `content-visibility: auto`: off screen, it is neither styled nor laid out.

    mark_render_later(html) -> html      (a page's content, after the other hooks)

Only top-level blocks whose box cannot spill out of itself are marked (`content-visibility`
brings paint containment: what overflows a marked block is clipped): paragraphs, tight lists
(no <p> inside, whose margins would stop collapsing), admonitions and code blocks (a code block
scrolls inside itself). A block holding a display formula, a table, an image, a heading or a
widget (the toys, quizzes, calculators and the lab panel) is left alone: a11y.js measures
formulas and tables as they are first laid out, to mark the ones that scroll, and that must not
wait for the learner to scroll there. Nor are the blocks of the first screens (FIRST_SCREENS)
marked.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

CLASS = "sd-later"
# the blocks that start within this many characters of text from the top are left alone: they are
# on the first screen(s) anyway (a phone shows some 450, a desktop beside the lab some 1,000), and a
# marked block is painted a frame later, which made Lighthouse's simulated LCP wait for the theme's
# bundle (lesson 1 on its mobile preset: 1.4 -> 3.2 s)
FIRST_SCREENS = 1200
TAG_RE = re.compile(r"<[^>]*>")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
# what keeps a block from being marked (searched in the block's whole HTML): what a11y.js measures
# or may be wider than the text, and the widgets (a quiz too: the text of its feedback, read as
# innerText, was empty while the quiz was off screen)
SPILL_RE = re.compile(r'<math\b[^>]*display="block"|<(?:table|img|iframe|svg|video|audio|canvas|'
                      r'h[1-6])\b', re.I)
WIDGET_RE = re.compile(r'<(?:form|input|button|select|textarea)\b|'
                       r'class="[^"]*\bsd-(?!(?:sign|sup|nobr|opt|lab-link)\b)', re.I)
HIGHLIGHT_RE = re.compile(r'\bclass="(?:[^"]*\s)?highlight(?:\s[^"]*)?"')
ADMONITION_RE = re.compile(r'\bclass="(?:[^"]*\s)?admonition(?:\s[^"]*)?"')


class _TopLevel(HTMLParser):
    """The spans (start, end of start tag, end, tag) of the fragment's top-level elements."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=False)
        self.lines = [0]
        for line in html.split("\n")[:-1]:
            self.lines.append(self.lines[-1] + len(line) + 1)
        self.html = html
        self.depth = 0
        self.open: tuple[int, int, str] | None = None
        self.blocks: list[tuple[int, int, int, str]] = []
        self.feed(html)
        self.close()

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        if self.depth == 0:
            start = self._offset()
            self.open = (start, start + len(self.get_starttag_text()), tag)
        self.depth += 1

    def handle_endtag(self, tag):
        if tag in VOID or self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0 and self.open:
            start, tag_end, name = self.open
            end = self.html.index(">", self._offset()) + 1
            self.blocks.append((start, tag_end, end, name))
            self.open = None


def _markable(tag: str, start_tag: str, block: str) -> bool:
    if SPILL_RE.search(block) or WIDGET_RE.search(block):
        return False
    if tag == "p":
        return True
    if tag in ("ul", "ol"):
        return "<p" not in block
    if tag == "div":
        return bool(ADMONITION_RE.search(start_tag) or HIGHLIGHT_RE.search(start_tag))
    return False


def _with_class(start_tag: str) -> str:
    match = re.search(r'\bclass="([^"]*)"', start_tag)
    if match:
        return start_tag[:match.start(1)] + match.group(1) + " " + CLASS + start_tag[match.end(1):]
    return re.sub(r"^<(\w+)", rf'<\1 class="{CLASS}"', start_tag)


def mark_render_later(html: str) -> str:
    out, last, text_before = [], 0, 0
    for start, tag_end, end, tag in _TopLevel(html).blocks:
        start_tag = html[start:tag_end]
        if text_before >= FIRST_SCREENS and _markable(tag, start_tag, html[start:end]):
            out.append(html[last:start])
            out.append(_with_class(start_tag))
            last = tag_end
        text_before += len(TAG_RE.sub("", html[start:end]).strip())
    out.append(html[last:])
    return "".join(out)
