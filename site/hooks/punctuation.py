"""Keep an inline formula or inline code on the same line as the Chinese punctuation around it.

Chinese typography never starts a line with a closing mark (，。、；：」）…) nor ends one with an
opening mark (「（…). Browsers keep to that between characters, but not next to an inline formula:
<math> is laid out as an atomic inline, and the web allows a line break before and after every
atomic inline whatever the character beside it (CSS Text 3, §5.1), so "α²，依此類推" could break
into "α²" / "，依此類推". Next to inline <code> the same happens when a long name fills the line
and the browser breaks it wherever it can (overflow-wrap), e.g. "spec_decode.py）" / "。因為…".

    keep_with_punctuation(html) -> html

wraps each inline formula or inline code, together with the opening marks right before it and the
closing marks right after it, in <span class="sd-nobr">. course.css gives that span
`white-space: nowrap` and its children `white-space: normal`: a break between the formula or code
and the marks beside it is decided by the span (their nearest common ancestor, CSS Text 3 §4.1)
and is gone, while long code can still break inside itself. Only that short run is wrapped,
never the sentence. The span adds no text, so the search index and copied text are unchanged.
A formula or code wrapped in one inline element (<strong><code>x</code></strong>：) is kept with
that element, when the element holds only a few characters besides it.

Long inline code (30 characters or more, most of a phone line) also gets a <wbr> after each "/"
and "_" inside a name (examples/<wbr>offline_<wbr>inference/…). Without them a path or identifier has no break
opportunity; one that fills a line would be broken by overflow-wrap at the last place that fits,
which can be right between the code and the "）。" after it. With them the browser breaks the name
at a slash or an underscore first, as typesetters break paths. <wbr> adds no text either.

Inline code that starts with hyphens (a command-line option, `--max-num-seqs`) is kept on one
line (<span class="sd-opt">--max-num-seqs</span>; course.css: nowrap): the browser may break a
line after any hyphen, and broke one right after the leading "--", another into "--max-num-" /
"seqs" in a heading. An option longer than OPTION_WHOLE characters keeps only its hyphens with
its first word, and may break at its later hyphens. The table of contents repeats a heading as
plain text, with no <code> around its option: keep_options_in_title(title) keeps the option there
the same way (the TOC beside your-gpu broke "設定 --max-num-seqs" into "--max-num-" / "seqs").
A short path (`/metrics`, at most OPTION_WHOLE characters) is kept whole the same way: Firefox
breaks a line after a slash before a letter.

A measured value with its error ("1.898 ± 0.013"), a short assignment ("K = 4", "α = 0.734") and
a numbered formula's name ("公式 1") are kept on one line too (<span class="sd-value">; course.css:
nowrap): a phone broke table cells into "1.898 ±" / "0.013" and "K =" / "4".

Two kept runs side by side ("α^K：" then "1 + 0.9 + … = 3.439。") get a <wbr> after the first one's
closing mark: Firefox found no break between them and ran the pair past a phone's edge.
"""
from __future__ import annotations

import re

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


def _keep_values(html: str) -> str:
    """Each value of VALUE_RE in the text between tags (never in a tag's attributes) in a
    <span class="sd-value">."""
    parts = TAG_RE.split(html)
    parts[::2] = [VALUE_RE.sub(r'<span class="sd-value">\g<0></span>', text) for text in parts[::2]]
    return "".join(parts)


# a kept run that ends with a closing mark, right before another formula, code or kept run:
# Firefox sees no break between two such runs ("α^K：" "1 + 0.9 + … = 3.439。" ran 100 px past a
# phone's edge), though a line may always end after a closing mark. A <wbr> gives it one.
BREAK_BETWEEN_RUNS_RE = re.compile(rf"([{CLOSING}]</span>)(?=<(?:span|math|code)\b)")


def _running_text(html: str) -> str:
    kept = KEEP_RE.sub(_keep, CODE_RE.sub(_break_points, _keep_values(html)))
    return BREAK_BETWEEN_RUNS_RE.sub(r"\1<wbr>", kept)


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
