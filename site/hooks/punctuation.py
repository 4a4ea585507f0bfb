"""Line breaks in running text as Chinese typesetting wants them, in one pass over a table of rules.

    keep_with_punctuation(html) -> html     # a page's content (code blocks, <pre>, left alone)
    keep_options_in_title(title) -> title   # a table-of-contents entry

Chinese never starts a line with a closing mark (，。」）…) nor ends one with an opening mark
(「（). Browsers keep to that between characters, but may break before and after an inline formula
(<math> is an atomic inline, CSS Text 3 §5.1) or inside long inline code (overflow-wrap), and after
any hyphen or slash. Each rule of RULES wraps a short run in a span that course.css keeps on one
line (sd-nobr, sd-opt, sd-value) or adds a <wbr> where a break should be; none adds text, so the
search index and copied text are unchanged. sd-nobr is nowrap with its children normal: the break
between a formula or code and its marks is gone, while long code can still break inside itself.
Each rule says which break it prevents; the rules run in the table's order (the later ones see the
spans of the earlier ones).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

CLOSING = "，。、；：！？」』）】〕》〉”’…‥・"
OPENING = "「『（【〔《〈“‘"

_MATH = r'<math\b[^>]*\bdisplay="inline"[^>]*>(?:(?!</math>).)*</math>'
_CODE = r"<code\b[^>]*>(?:(?!</?code\b).)*</code>"
_UNIT = rf"(?:{_MATH}|{_CODE})"
# one inline element around the unit, with at most a few characters of plain text before it
_WRAPPED = rf"<(?P<tag>strong|em|b|i|mark|a)\b[^>]*>[^<]{{0,12}}{_UNIT}</(?P=tag)>"
KEEP_RE = re.compile(
    rf"(?P<before>[{OPENING}]*)(?P<unit>{_WRAPPED}|{_UNIT})(?P<after>[{CLOSING}]*)", re.S)
# inline code inside a code block (<pre>…</pre>) is not running text
PRE_RE = re.compile(r"<pre\b.*?</pre>", re.S)


CODE_RE = re.compile(r"(<code\b[^>]*>)((?:(?!</?code\b).)*)(</code>)", re.S)
TAG_RE = re.compile(r"(<[^>]*>)")
BREAK_AFTER_RE = re.compile(r"([/_])(?=[^\s/_])")
LONG_CODE = 30          # characters: about 3/4 of a phone line of code (about 43 at 390 px)
# "--max-num-seqs": a line may break after any hyphen, and broke after the leading "--" (WebKit at
# 390 px: "--" / "max-num-seqs") and into "--max-num-" / "seqs"; the option stays whole, or a
# long one its hyphens with its first word
_WORD = r"[^\s\-/_<=]+"
OPTION_RE = re.compile(rf"^-+{_WORD}(?:-{_WORD})*")
FIRST_WORD_RE = re.compile(rf"^-+{_WORD}")
# characters: "--max-num-seqs" (14) stays whole. A longer one kept whole pushed lesson 1 wider than
# a phone in Firefox ("、--num-speculative-tokens": no break after a 、 that ends a nowrap span)
OPTION_WHOLE = 16
# a short path with a slash in it (`/metrics`): Firefox breaks a line after a "/" before a letter,
# and left "/" at the end of one line of the knowledge card and "metrics" at the start of the next
SHORT_PATH_RE = re.compile(rf"^(?=[^\s]*/)[^\s<-][^\s<]{{0,{OPTION_WHOLE - 1}}}$")


def _keep_option(text: str) -> str:
    option = OPTION_RE.match(text)
    if not option:
        return text
    kept = option if len(option.group(0)) <= OPTION_WHOLE else FIRST_WORD_RE.match(text)
    return f'<span class="sd-opt">{kept.group(0)}</span>{text[kept.end():]}'


def _break_points(match: re.Match) -> str:
    """<wbr> after / and _ inside a long inline code's text (not inside its tags); a command-line
    option kept on one line, and a short path too."""
    start, body, end = match.groups()
    parts = TAG_RE.split(body)
    if sum(len(part) for part in parts[::2]) >= LONG_CODE:
        parts[::2] = [BREAK_AFTER_RE.sub(r"\1<wbr>", part) for part in parts[::2]]
    elif len(parts) == 1 and SHORT_PATH_RE.match(body):
        return f'{start}<span class="sd-opt">{body}</span>{end}'
    parts[0] = _keep_option(parts[0])
    return start + "".join(parts) + end


def _keep(match: re.Match) -> str:
    if not match.group("before") and not match.group("after"):
        return match.group(0)
    return f'<span class="sd-nobr">{match.group(0)}</span>'


# a measured value with its error, "1.898 ± 0.013", a short assignment, "K = 4", "α = 0.734", and
# the name of a numbered formula, "公式 1": a phone broke them into "1.898 ±" / "0.013", "K =" / "4"
# and (WebKit, a table header at 390 px) "公式" / "1"
_NUMBER = r"\d(?:[\d.,]*\d)?"
VALUE_RE = re.compile(rf"(?:(?<![\w.])(?:{_NUMBER} ± {_NUMBER}|[A-Za-z\u03b1-\u03c9] = {_NUMBER})|公式 \d+)(?![\w.])")


# a kept run that ends with a closing mark, right before another formula, code or kept run:
# Firefox sees no break between two such runs ("α^K：" "1 + 0.9 + … = 3.439。" ran 100 px past a
# phone's edge), though a line may always end after a closing mark. A <wbr> gives it one.
BREAK_BETWEEN_RUNS_RE = re.compile(rf"([{CLOSING}]</span>)(?=<(?:span|math|code)\b)")


@dataclass(frozen=True)
class Rule:
    """One line-break rule: `pattern` in the HTML (or only in the text between its tags) is
    replaced by `replace` (a template or a function of the match)."""

    prevents: str
    pattern: re.Pattern
    replace: str | Callable[[re.Match], str]
    text_only: bool = False

    def apply(self, html: str) -> str:
        if not self.text_only:
            return self.pattern.sub(self.replace, html)
        parts = TAG_RE.split(html)       # never inside a tag's attributes
        parts[::2] = [self.pattern.sub(self.replace, text) for text in parts[::2]]
        return "".join(parts)


RULES = (
    Rule("a value with its error or a short assignment split: '1.898 ±' / '0.013', 'K =' / '4', '公式' / '1'",
         VALUE_RE, r'<span class="sd-value">\g<0></span>', text_only=True),
    Rule("long code broken anywhere, an option after its hyphens ('--' / 'max-num-seqs'), a short "
         "path after its slash ('/' / 'metrics')", CODE_RE, _break_points),
    Rule("a formula or code apart from the punctuation beside it: 'α²' / '，依此類推'", KEEP_RE, _keep),
    Rule("two kept runs side by side with no break between them (Firefox ran them past a phone's edge)",
         BREAK_BETWEEN_RUNS_RE, r"\1<wbr>"),
)


def _running_text(html: str) -> str:
    for rule in RULES:
        html = rule.apply(html)
    return html


def keep_with_punctuation(html: str) -> str:
    """Wrap every inline formula or code that touches Chinese punctuation, and give long inline
    code break points (see the module's doc). Code blocks (<pre>) are left as they are."""
    out, last = [], 0
    for pre in PRE_RE.finditer(html):
        out.append(_running_text(html[last:pre.start()]))
        out.append(pre.group(0))
        last = pre.end()
    out.append(_running_text(html[last:]))
    return "".join(out)


# an option in a heading's plain text (the table of contents): hyphens that start a word, then
# ASCII letters, digits and dots joined by single hyphens ("--max-num-seqs", "-tp")
TITLE_OPTION_RE = re.compile(r"(?<![\w-])-{1,2}[A-Za-z][A-Za-z0-9.]*(?:-[A-Za-z0-9.]+)*")


def keep_options_in_title(title: str) -> str:
    """A table-of-contents entry's text (HTML, as the TOC shows it) with each command-line option
    in it kept on one line, as in running text: "設定 <span class="sd-opt">--max-num-seqs</span>"."""
    return TITLE_OPTION_RE.sub(lambda option: _keep_option(option.group(0)), title)
