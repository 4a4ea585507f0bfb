"""Measure, in a browser, how lesson text is broken into lines and whether display formulas fit.

Both are JavaScript functions (as text) for Playwright's `page.evaluate(fn, root)` or
tests/support/firefox.py's `page.evaluate(fn, root)`; `root` is a CSS selector (by default the
lesson's article) and each returns plain JSON.

LINE_START_PROBLEMS: every place in the running text (p, li, td, th, dd, dt, summary, figcaption,
    .admonition-title) where a line starts with a closing CJK punctuation mark (，。、；：」）…)
    or ends with an opening one (「（…). It walks the block's visible leaves in order, each
    character of a text node (Range.getClientRects) and each <math> or <img> as one item, and
    says a line starts at an item whose vertical middle lies below the previous item's bottom.
    Returns [{page, before, mark, after, kind}] (kind: "starts" or "ends").

DISPLAY_FORMULAS: every visible .sd-math block: its width and the width of its formula, whether
    it scrolls (scrollWidth > clientWidth), its overflow-x, the side a11y.js says has more of it
    (data-sd-more: right, left, both or null), the mask that course.css fades that side with, and
    the formula's font size (to check it is still legible).

WIDE_TABLES: the same for every visible table scroll box (Material's .md-typeset__scrollwrap):
    whether it scrolls, the side a11y.js says has more of it and course.css's mask there.

CODE_SPLIT_IN_TABLES: every inline code in a table cell that is broken across lines inside a
    word: the character before each line break (measured per character with a Range) must end a
    word part ("-", "_", "/", "=", a space). Returns [{page, code, at}] ("--speculat|ive-config").

MALFORMED_MATH: every MathML script, fraction or root in the page whose number of child elements
    is not what MathML Core asks (site/hooks/tex_mathml.py's ARITY), as "msub (1): <msub>…".

OPTIONS_SPLIT_AFTER_HYPHENS: every inline code that starts with hyphens (`--max-num-seqs`) broken
    into lines right after them. Returns [{page, code}].

OPTIONS_IN_TOC: every command-line option in a shown table-of-contents entry (plain text there, no
    <code>), with the tops of the lines its first 16 characters are on (one line: kept whole).
    Returns [{option, tops}].

PUNCTUATION_WIDTHS: the width of the first of each of `marks` in running text under a selector (in
    the lab's frame if inFrame), measured with a Range, in ems of its font (MARKS: full-width
    punctuation, a full em; SIGNS: × ÷ ± · ≈, narrower, signs_not_narrow).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site" / "hooks"))
from tex_mathml import ARITY  # noqa: E402

CLOSING = "，。、；：！？」』）】〕》〉”’…‥・"
OPENING = "「『（【〔《〈“‘"

# every worked answer and hint (<details>) opened: a learner reads them too, and a closed one has no
# lines to check (Firefox ran an opened answer 100 px past a phone's edge, unseen while closed)
OPEN_ANSWERS = "() => document.querySelectorAll('.md-typeset details').forEach((d) => { d.open = true; })"

LINE_START_PROBLEMS = r"""
(rootSelector) => {
  const CLOSING = new Set([...%s]);
  const OPENING = new Set([...%s]);
  const root = document.querySelector(rootSelector || "article.md-content__inner");
  if (!root) return null;
  const blocks = root.querySelectorAll(
    "p, li, td, th, dd, dt, summary, figcaption, .admonition-title");
  const ATOMIC = new Set(["math", "img", "svg", "input", "button"]);
  const problems = [];
  const seen = new Set();

  function visible(el) {
    return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  }
  // the block's leaves in order: {rect(), char} for characters, {rect(), atom} for math/img
  function leaves(block) {
    const out = [];
    (function walk(node) {
      for (const child of node.childNodes) {
        if (child.nodeType === Node.TEXT_NODE) {
          const text = child.data;
          for (let i = 0; i < text.length; i++) {
            const ch = text[i];
            if (/\s/.test(ch)) continue;
            const node = child, offset = i;
            out.push({ch, rect() {
              const r = document.createRange();
              r.setStart(node, offset); r.setEnd(node, offset + 1);
              const rects = [...r.getClientRects()].filter((b) => b.width > 0 || b.height > 0);
              return rects[0] || null;
            }});
          }
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          const name = child.localName;
          if (!visible(child)) continue;
          if (name === "br") { out.push({br: true}); continue; }
          if (ATOMIC.has(name)) {
            const el = child;
            out.push({atom: name, text: el.textContent.trim().slice(0, 20),
                      rect() { return el.getBoundingClientRect(); }});
            continue;
          }
          // a nested block (a list inside a list item) is measured on its own
          const display = getComputedStyle(child).display;
          if (!display.startsWith("inline") && display !== "contents") {
            out.push({br: true});
            continue;
          }
          walk(child);
        }
      }
    })(block);
    return out;
  }
  const label = (item) => item ? (item.atom ? "<" + item.atom + ">" + item.text : item.ch) : "";
  function context(items, i, step) {
    let s = "";
    for (let j = i + step; j >= 0 && j < items.length && s.length < 8; j += step) {
      if (items[j].br) break;
      s = step < 0 ? label(items[j]) + s : s + label(items[j]);
    }
    return s;
  }

  for (const block of blocks) {
    if (!visible(block)) continue;
    const items = leaves(block);
    for (let i = 1; i < items.length; i++) {
      const prev = items[i - 1], item = items[i];
      if (prev.br || item.br) continue;
      const startsBad = item.ch && CLOSING.has(item.ch);
      const endsBad = prev.ch && OPENING.has(prev.ch);
      if (!startsBad && !endsBad) continue;
      const a = prev.rect(), b = item.rect();
      if (!a || !b) continue;
      const newLine = (b.top + b.bottom) / 2 > a.bottom;
      if (!newLine) continue;
      const entry = {page: location.pathname, before: context(items, i, -1), mark: label(item),
                     after: context(items, i - 1, 1), kind: startsBad ? "starts" : "ends"};
      if (endsBad) entry.mark = label(prev);
      const key = JSON.stringify(entry);
      if (!seen.has(key)) { seen.add(key); problems.push(entry); }
    }
  }
  return problems;
}
""" % (repr(CLOSING).replace("'", '"'), repr(OPENING).replace("'", '"'))

DISPLAY_FORMULAS = r"""
(rootSelector) => [...document.querySelectorAll((rootSelector || ".md-typeset") + " .sd-math")]
  .filter((block) => block.getClientRects().length > 0)
  .map((block) => {
    const math = block.querySelector("math");
    const box = block.getBoundingClientRect(), formula = math.getBoundingClientRect();
    return {
      page: location.pathname,
      text: math.textContent.replace(/\s+/g, "").slice(0, 30),
      blockWidth: block.clientWidth,
      contentWidth: block.scrollWidth,
      formulaWidth: formula.width,
      blockRight: box.right,
      viewport: document.documentElement.clientWidth,
      scrolls: block.scrollWidth > block.clientWidth + 1,
      overflowX: getComputedStyle(block).overflowX,
      more: block.getAttribute("data-sd-more"),
      mask: (() => { const st = getComputedStyle(block);
                     return st.maskImage || st.webkitMaskImage || "none"; })(),
      fontSize: parseFloat(getComputedStyle(math).fontSize),
    };
  })
"""

# true once a11y.js (on the frame after the page and its fonts are ready) has marked every display
# formula that scrolls with the side that has more of it, and none that fits
SCROLL_HINTS_SETTLED = """() => [...document.querySelectorAll('.md-typeset .sd-math')].every((block) =>
    (block.scrollWidth > block.clientWidth + 1) === block.hasAttribute('data-sd-more'))"""


# each formula carries a line of text for the search index (site/hooks/tex_mathml.py, searchable)
# in an <annotation-xml> that must never be drawn: how many formulas have one, and those drawn
SEARCH_TEXT_DRAWN = """() => {
  const notes = [...document.querySelectorAll('.md-typeset math > semantics > annotation-xml')];
  return {searchable: notes.length, drawn: notes.filter((note) => {
    const box = note.getBoundingClientRect();
    return box.width > 0 || box.height > 0;
  }).map((note) => note.closest('math').outerHTML.slice(0, 160))}; }"""


MALFORMED_MATH = """() => { const arity = %s;
  return [...document.querySelectorAll(Object.keys(arity).join(','))]
    .filter((el) => el.children.length !== arity[el.localName])
    .map((el) => `${el.localName} (${el.children.length}): ${el.outerHTML.slice(0, 160)}`); }""" % json.dumps(ARITY)


def check_display_formulas(formulas: list[dict], must_fit: bool = False) -> None:
    """DISPLAY_FORMULAS' measures, in either browser: each formula readable (≥ 16 px) and inside
    the page; one that fits does not fade; one that does not fit scrolls, faded on the right.
    must_fit (the lessons at a phone's 390 px): none is wider than its column, as a learner
    expects (a long one is written with \\allowbreak, site/hooks/tex_mathml.py)."""
    for f in formulas:
        assert f["fontSize"] >= 16, f"formula drawn too small to read: {f}"
        assert f["blockRight"] <= f["viewport"] + 1, f"formula block wider than the page: {f}"
        assert not (must_fit and f["scrolls"]), f"formula wider than its column, cut behind a fade: {f}"
        if not f["scrolls"]:
            assert (f["more"], f["mask"]) == (None, "none"), f"a formula that fits fades: {f}"
            continue
        assert f["overflowX"] in ("auto", "scroll"), f"formula cut off, not scrollable: {f}"
        assert f["more"] == "right" and "gradient" in f["mask"], \
            f"formula scrolls without a cue that more is to the right: {f}"


WIDE_TABLES = r"""
() => [...document.querySelectorAll(".md-typeset .md-typeset__scrollwrap")]
  .filter((box) => box.getClientRects().length > 0)
  .map((box) => ({
    page: location.pathname,
    inLab: !!box.closest(".sd-lab"),      // the notebook's static preview, in the lab's panel
    head: box.querySelector("tr").textContent.replace(/\s+/g, " ").trim().slice(0, 30),
    boxWidth: box.clientWidth, tableWidth: box.scrollWidth,
    scrolls: box.scrollWidth > box.clientWidth + 1,
    more: box.getAttribute("data-sd-more"),
    mask: (() => { const st = getComputedStyle(box); return st.maskImage || st.webkitMaskImage || "none"; })(),
  }))
"""

# true once a11y.js has marked every table box that scrolls, and none that fits
TABLE_HINTS_SETTLED = """() => [...document.querySelectorAll('.md-typeset .md-typeset__scrollwrap')].every((box) =>
    (box.scrollWidth > box.clientWidth + 1) === box.hasAttribute('data-sd-more'))"""


def check_wide_tables(tables: list[dict]) -> None:
    """WIDE_TABLES' measures: a table that fits does not fade; one that does not fit fades on the
    right (the cue that it scrolls)."""
    for t in tables:
        if not t["scrolls"]:
            assert (t["more"], t["mask"]) == (None, "none"), f"a table that fits fades: {t}"
        else:
            assert t["more"] == "right" and "gradient" in t["mask"], \
                f"table cut at the column's edge without a cue that more is to the right: {t}"


# every short path in inline code (no space, a slash, at most 16 characters: `/metrics`,
# `Qwen/Qwen3-0.6B`) that is drawn on more than one line: [{page, code}]
SHORT_CODE_SPLIT = r"""() => [...document.querySelectorAll(".md-typeset code")]
  .filter((code) => !code.closest("pre") && code.getClientRects().length
          && /^\S{1,16}$/.test(code.textContent) && code.textContent.includes("/")
          && new Set([...code.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > 1)
  .map((code) => ({page: location.pathname, code: code.textContent}))"""

CODE_SPLIT_IN_TABLES = r"""
() => {
  const WORD_END = /[-_\/=\s]/;
  const split = [];
  for (const code of document.querySelectorAll(".md-typeset td code, .md-typeset th code")) {
    if (!code.getClientRects().length || code.closest("pre")) continue;
    let text = "", prevTop = null;
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = [...range.getClientRects()].find((r) => r.width > 0);
        const ch = node.data[i];
        if (rect) {
          if (prevTop !== null && rect.top > prevTop + rect.height / 2 && !WORD_END.test(text.slice(-1)) && !/\s/.test(ch)) {
            split.push({page: location.pathname, code: code.textContent, at: text + "|" + node.data.slice(i)});
          }
          prevTop = rect.top;
        }
        text += ch;
      }
    }
  }
  return split;
}
"""


# the width of the first of each full-width punctuation mark in running text (headings, paragraphs,
# lists, tables; not code or formulas) under `selector` (in the lab's frame if inFrame) that is drawn,
# measured with a Range, in ems of its font: {"， text": {width, size, em, context}, "： heading": ...}
PUNCTUATION_WIDTHS = """([selector, marks, inFrame]) => {
  const doc = inFrame ? document.querySelector('.sd-lab__frame').contentDocument : document;
  const root = doc.querySelector(selector);
  if (!root) return null;
  const skip = 'pre, code, math, script, style, .headerlink, .sd-visually-hidden, .cm-editor'
               + (root.closest('.sd-lab') ? '' : ', .sd-lab');
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: (n) =>
      n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const found = {};
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const where = node.parentElement.closest('h1, h2, h3, p, li, td, th');
    const tag = where ? where.tagName.toLowerCase() : 'other';
    for (const mark of marks) {
      const key = mark + ' ' + (tag === 'h1' || tag === 'h2' || tag === 'h3' ? 'heading' : 'text');
      const i = node.textContent.indexOf(mark);
      if (i < 0 || found[key]) continue;
      const range = doc.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const size = parseFloat(getComputedStyle(node.parentElement).fontSize);
      // one box: drawn on one line (WebKit adds the end of the line before to a mark that starts
      // one); none: not drawn (a cell JupyterLab keeps off screen). Else the next one.
      const boxes = [...range.getClientRects()].filter((r) => r.width > 0);
      if (boxes.length !== 1) continue;
      const width = boxes[0].width;
      found[key] = {width, size, em: width / size,
                    context: node.textContent.slice(Math.max(0, i - 6), i + 6)};
    }
  }
  return found;
}"""
MARKS = ["，", "。", "：", "「", "」", "、"]
# × ÷ ± · ≈ in Chinese text: the text's CJK font draws them a full em wide ("0.62 × 0.55" spaced
# out); site/hooks/signs.py and course.css's .sd-sign give them a Latin font (Liberation Sans:
# 0.55–0.58 em, · 0.28; DejaVu Sans 0.84 at most)
SIGNS = ["×", "÷", "±", "·", "≈"]


def signs_not_narrow(widths: dict, px_slack: float = 0) -> dict:
    """PUNCTUATION_WIDTHS' measures of SIGNS that are 0.9 em wide or more (a CJK font's full em):
    (width px, font px, text around it). px_slack: WebKitGTK draws each glyph a whole number of
    pixels wide."""
    return {key: (round(w["width"], 1), w["size"], w["context"]) for key, w in widths.items()
            if w["width"] - px_slack >= 0.9 * w["size"]}


def not_one_em(widths: dict, px_slack: float = 0) -> dict:
    """PUNCTUATION_WIDTHS' measures that are not about 1 em wide (0.9 to 1.1 em): (width px, font
    px, text around it). px_slack: WebKitGTK draws every glyph a whole number of pixels wide
    (measured: an ideograph and a 、 at 13.6 px are both 14 px); a half-width mark is half."""
    return {key: (round(w["width"], 1), w["size"], w["context"]) for key, w in widths.items()
            if not 0.9 * w["size"] - px_slack <= w["width"] <= 1.1 * w["size"] + px_slack}


# every inline code that starts with hyphens (a command-line option) whose first word begins a
# line after them: "--" / "max-num-seqs" (site/hooks/punctuation.py keeps them together)
OPTIONS_SPLIT_AFTER_HYPHENS = r"""
() => {
  const rectOf = (code, index) => {        // the box of the index-th character of code's text
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (index < node.length) {
        const range = document.createRange();
        range.setStart(node, index);
        range.setEnd(node, index + 1);
        return [...range.getClientRects()].find((r) => r.width > 0);
      }
      index -= node.length;
    }
  };
  return [...document.querySelectorAll(".md-typeset code")]
    .filter((code) => !code.closest("pre") && code.getClientRects().length && /^-+[^\s-]/.test(code.textContent))
    .filter((code) => {
      const first = rectOf(code, 0), word = rectOf(code, code.textContent.match(/^-+/)[0].length);
      return first && word && word.top > first.top + first.height / 2;
    })
    .map((code) => ({page: location.pathname, code: code.textContent}));
}
"""


# a command-line option in a table-of-contents entry (the TOC repeats a heading as plain text):
# the tops of the lines its first 16 characters (punctuation.OPTION_WHOLE) are drawn on
OPTIONS_IN_TOC = r"""
() => [...document.querySelectorAll(".md-nav__link")].filter((link) => link.getClientRects().length)
  .flatMap((link) => [...link.textContent.matchAll(/(?<![\w-])-{1,2}[A-Za-z][A-Za-z0-9.]*(?:-[A-Za-z0-9.]+)*/g)]
    .map((match) => {
      const tops = new Set();
      const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
      let at = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.length; i++, at++) {
          if (at < match.index || at >= match.index + Math.min(match[0].length, 16)) continue;
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const box = [...range.getClientRects()].find((r) => r.width > 0);
          if (box) tops.add(Math.round(box.top));
        }
      }
      return {option: match[0], tops: [...tops]};
    }))
"""
