"""The `/// quiz` block of a lesson: parse, validate, render.

Pure functions, no MkDocs import, so tests can use them directly:

    quizzes = parse_quizzes(markdown_text, path="lessons/index.md")   # raises QuizError
    html = render_quiz(quizzes[0], number=1, markdown_to_html=some_function)

The authoring format (fixed in the team conventions):

    /// quiz | Q1 · 情境題
    題目文字（可多段，可含 code block）。

    - [ ] A. 選項文字
        這個選項的解釋（縮排四格）。
    - [x] B. 正確選項
        解釋。
    ///

Exactly one option is marked `[x]`, there are at least two options labelled A, B, C, … in order,
and every option has an explanation. Anything else is a `QuizError` whose message starts with
`path:line:` so the build log points at the line to fix.

A numeric question has one `答案：` line instead of options, then its explanation indented four
spaces; the answer is a number, a specdec_lab call the build evaluates, or both (quiz_numbers.py):

    /// quiz | 算算看 · 每輪產出
    α = 0.8、K = 5 時，每輪驗證平均產出幾個 token？

    答案：`expected_tokens(0.8, 5)` = 3.69 ± 0.01
        解釋（縮排四格）。
    ///

Each quiz has a `key`, a hash of what it asks (question, options and which is right, or the
numeric answer; not the explanations): the browser keeps a learner's answer under it, so a
question the instructor changes starts fresh while a reworded explanation keeps the answers.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from typing import Callable

from quiz_numbers import NumberError, NumericAnswer, parse_answer

OPEN_RE = re.compile(r"^///\s*quiz\b\s*(?:\|\s*(?P<title>.*?))?\s*$")
CLOSE_RE = re.compile(r"^///\s*$")
# what an opening line with a typo looks like ("/// qiuz | …", "/// Quiz", "/// quiz Q1", "// quiz |"):
# the lessons use /// for quizzes only, and a line like these would be shown as text, the answers too
NEAR_OPEN_RE = re.compile(r"^\s*(?:/{3,}|/{2}\s*q)", re.I)
# (a box with a stray space, "[ x]", is an option with a wrong box, not text after the options)
OPTION_RE = re.compile(r"^[-*+] \[(?P<mark>[^\]]?|[\sxX]{2,3})\](?P<rest>.*)$")
LABEL_RE = re.compile(r"^\s*(?P<label>[A-Za-z])\s*[.．、)）]\s*(?P<text>.*?)\s*$")
ANSWER_RE = re.compile(r"^答案\s*[:：]\s*(?P<spec>.*?)\s*$")
FENCE_RE = re.compile(r"^\s{0,3}(?P<fence>`{3,}|~{3,})")
INDENT = "    "
LABELS = "ABCDEFGHIJ"
# a half-width , or . beside Chinese (after a CJK character or full-width mark, or before one):
# Chinese text takes ，and 。 (a decimal point, code and formulas are left alone)
CJK = "\u3400-\u9fff\u3000-\u303f\uff01-\uff60"
HALF_WIDTH_IN_CHINESE = re.compile(rf"(?<=[{CJK}])[,.](?!\d)|[,.](?=[ \t]*[{CJK}])")
CODE_OR_FORMULA = re.compile(r"`[^`]*`|\$[^$]*\$|\]\([^)]*\)")


class QuizError(ValueError):
    """A quiz block that breaks the format; str() is `path:line: 訊息`."""

    def __init__(self, path: str, line: int, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}")


@dataclass
class Option:
    label: str          # "A", "B", …
    text: str           # Markdown, one line
    explanation: str    # Markdown, dedented, may span lines
    correct: bool
    line: int           # 1-based line of the `- [ ] A.` line in the source file


@dataclass
class Quiz:
    title: str          # text after `/// quiz |`, may be ""
    question: str       # Markdown
    options: list[Option] = field(default_factory=list)
    line: int = 0       # 1-based line of the `/// quiz` line
    end_line: int = 0   # 1-based line of the closing `///`
    number: NumericAnswer | None = None   # a numeric question: its answer (then no options)
    explanation: str = ""                 # a numeric question: its explanation (Markdown)
    answer_line: int = 0                  # a numeric question: the line of `答案：`

    @property
    def kind(self) -> str:
        return "number" if self.number else "choice"

    @property
    def answer(self) -> str:
        if self.number:
            return self.number.shown
        return next(o.label for o in self.options if o.correct)

    @property
    def key(self) -> str:
        """12 hex digits of a hash of what the question asks (explanations left out)."""
        if self.number:
            asked = [self.question, self.number.value, self.number.tolerance]
        else:
            asked = [self.question] + [[o.label, o.text, o.correct] for o in self.options]
        digest = hashlib.sha256(json.dumps(asked, ensure_ascii=False).encode("utf-8"))
        return digest.hexdigest()[:12]


class _Fences:
    """Tracks whether a line is inside a fenced code block (``` or ~~~)."""

    def __init__(self):
        self.open: str | None = None

    def inside_after(self, line: str) -> bool:
        """Feed one line; True if this line belongs to a fenced block (fence lines included)."""
        m = FENCE_RE.match(line)
        if self.open is None:
            if m:
                self.open = m.group("fence")
                return True
            return False
        if m and m.group("fence")[0] == self.open[0] and len(m.group("fence")) >= len(self.open) \
                and not line.strip()[len(m.group("fence")):].strip():
            self.open = None
        return True


def parse_quizzes(text: str, path: str = "<markdown>", first_line: int = 1) -> list[Quiz]:
    """Every `/// quiz` block in `text`, validated. `first_line` is the file line of text's line 1
    (so front matter stripped by MkDocs still gives the file's line numbers)."""
    return [quiz for quiz, _start, _end in find_quizzes(text, path, first_line)]


def find_quizzes(text: str, path: str = "<markdown>", first_line: int = 1):
    """Yield (Quiz, start_index, end_index): the block spans lines[start_index:end_index + 1]."""
    lines = text.split("\n")
    fences = _Fences()
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if fences.inside_after(line):
            i += 1
            continue
        m = OPEN_RE.match(line)
        if m:
            end = _closing_line(lines, i, path, first_line)
            quiz = _parse_block(lines[i + 1:end], m.group("title") or "", path, first_line + i)
            quiz.end_line = first_line + end
            found.append((quiz, i, end))
            i = end + 1
            continue
        if CLOSE_RE.match(line):
            raise QuizError(path, first_line + i, "這一行 `///` 結束一個 quiz，但前面沒有開頭的 "
                            "`/// quiz | 標題`（開頭那一行打錯了，或被刪掉了？）")
        if NEAR_OPEN_RE.match(line):
            raise QuizError(path, first_line + i, f"這一行看起來是 quiz 的開頭，卻不是它的寫法：「{line.strip()[:40]}」。"
                            "開頭要寫成 `/// quiz | 標題`（三條斜線、小寫 quiz、直線 | 再接標題），"
                            "結尾一行 `///`")
        i += 1
    return found


def _closing_line(lines: list[str], start: int, path: str, first_line: int) -> int:
    fences = _Fences()
    for j in range(start + 1, len(lines)):
        if fences.inside_after(lines[j]):
            continue
        if CLOSE_RE.match(lines[j]):
            return j
        if OPEN_RE.match(lines[j]):
            raise QuizError(path, first_line + j,
                            f"上一個 quiz（第 {first_line + start} 行）還沒用一行 `///` 結束，"
                            "就開始了新的 `/// quiz`")
    raise QuizError(path, first_line + start, "quiz 區塊沒有結束：請在最後一個選項的解釋之後加一行 `///`")


def _parse_block(body: list[str], title: str, path: str, open_line: int) -> Quiz:
    quiz = Quiz(title=title.strip(), question="", line=open_line)
    question: list[str] = []
    question_fences = _Fences()
    raw_options: list[dict] = []
    numeric: dict | None = None
    for offset, line in enumerate(body, start=1):
        lineno = open_line + offset
        m = OPTION_RE.match(line)
        answer = ANSWER_RE.match(line)
        if numeric is not None:
            if m or answer:
                raise QuizError(path, lineno, "數值題只有一行「答案：」，不能再有選項或第二個答案")
            if line.strip() and not (line.startswith(INDENT) or line.startswith("\t")):
                raise QuizError(path, lineno,
                                "「答案：」之後的文字必須縮排四格（屬於答案的解釋）："
                                f"「{line.strip()[:30]}」")
            numeric["expl"].append(line[4:] if line.startswith(INDENT) else line[1:])
        elif answer and not question_fences.open:
            if raw_options:
                raise QuizError(path, lineno, "一題不能同時有選項和「答案：」：選擇題標 [x]，數值題只寫答案")
            numeric = {"spec": answer.group("spec"), "line": lineno, "expl": []}
        elif m and not (not raw_options and question_fences.open):
            raw_options.append({"mark": m.group("mark"), "rest": m.group("rest"),
                                "line": lineno, "expl": []})
        elif not raw_options:
            question.append(line)
            question_fences.inside_after(line)
        elif not line.strip():
            raw_options[-1]["expl"].append("")
        elif line.startswith(INDENT) or line.startswith("\t"):
            raw_options[-1]["expl"].append(line[4:] if line.startswith(INDENT) else line[1:])
        else:
            raise QuizError(path, lineno,
                            "選項之後的文字必須縮排四格（屬於上一個選項的解釋）："
                            f"「{line.strip()[:30]}」")
    quiz.question = _trim(question)
    if not quiz.question:
        raise QuizError(path, open_line, "quiz 沒有題目：在 `/// quiz` 下一行寫題目，再寫選項")
    if numeric is not None:
        return _numeric_quiz(quiz, numeric, path)
    if len(raw_options) < 2:
        raise QuizError(path, open_line,
                        f"quiz 至少要有兩個選項（`- [ ] A. …`），這裡只有 {len(raw_options)} 個")
    for index, raw in enumerate(raw_options):
        quiz.options.append(_parse_option(raw, index, path))
    right = [o for o in quiz.options if o.correct]
    if not right:
        raise QuizError(path, open_line,
                        "quiz 沒有正確答案：恰好一個選項要標成 `- [x]`")
    if len(right) > 1:
        raise QuizError(path, right[1].line,
                        f"quiz 只能有一個正確答案，但 {right[0].label} 和 {right[1].label} "
                        "都標了 `[x]`")
    return quiz


def _numeric_quiz(quiz: Quiz, numeric: dict, path: str) -> Quiz:
    try:
        quiz.number = parse_answer(numeric["spec"])
    except NumberError as error:
        raise QuizError(path, numeric["line"], str(error)) from None
    quiz.answer_line = numeric["line"]
    quiz.explanation = _trim(numeric["expl"])
    if not quiz.explanation:
        raise QuizError(path, numeric["line"],
                        "數值題的答案沒有解釋：在「答案：」下一行縮排四格寫出怎麼算")
    return quiz


def _parse_option(raw: dict, index: int, path: str) -> Option:
    mark, line = raw["mark"], raw["line"]
    if mark not in (" ", "x", "X"):
        raise QuizError(path, line, f"選項的方框只能是 `[ ]` 或 `[x]`，這裡是 `[{mark}]`")
    expected = LABELS[index] if index < len(LABELS) else "?"
    m = LABEL_RE.match(raw["rest"])
    if not m:
        raise QuizError(path, line,
                        f"選項要以標號開頭，例如 `- [ ] {expected}. 選項文字`")
    label = m.group("label").upper()
    if label != expected:
        raise QuizError(path, line,
                        f"選項標號要依序是 A、B、C…：第 {index + 1} 個選項應為 {expected}，"
                        f"這裡寫的是 {label}")
    if not m.group("text"):
        raise QuizError(path, line, f"選項 {label} 沒有文字")
    explanation = _trim(raw["expl"])
    if not explanation:
        raise QuizError(path, line,
                        f"選項 {label} 沒有解釋：在下一行縮排四格寫出為什麼它對或錯")
    fences = _Fences()
    for offset, text in enumerate([m.group("text"), *raw["expl"]]):
        if offset and fences.inside_after(text):
            continue
        half = HALF_WIDTH_IN_CHINESE.search(CODE_OR_FORMULA.sub(lambda c: " " * len(c[0]), text))
        if half:
            full = "，" if half[0] == "," else "。"
            raise QuizError(path, line + offset,
                            f"選項 {label} 的中文裡有半形的「{half[0]}」："
                            f"「{text.strip()[:40]}」，中文要用全形的「{full}」")
    return Option(label=label, text=m.group("text"), explanation=explanation,
                  correct=mark in ("x", "X"), line=line)


def _trim(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n").rstrip()


# --------------------------------------------------------------------------- rendering

def render_quiz(quiz: Quiz, number: int, markdown_to_html: Callable[[str], str]) -> str:
    """Progressive-enhancement HTML for one quiz.

    Without JavaScript it reads as the question, the options (A–D) and, folded under each option,
    its explanation with a ✓/✗ verdict. site/assets/quiz.js turns the options into buttons with
    instant feedback; it reads the same markup (data-correct, the explanation inside <details>).
    """
    if quiz.number:
        return _render_numeric(quiz, number, markdown_to_html)
    qid = f"sd-quiz-{number}"
    title = quiz.title or f"第 {number} 題"
    parts = [
        f'<section class="sd-quiz" id="{qid}" data-answer="{quiz.answer}" data-key="{quiz.key}" '
        f'aria-labelledby="{qid}-title">',
        f'<p class="sd-quiz__title" id="{qid}-title"><strong>{html.escape(title)}</strong></p>',
        f'<div class="sd-quiz__question">\n{markdown_to_html(quiz.question)}\n</div>',
        f'<ul class="sd-quiz__options" aria-label="{html.escape(title)} 的選項">',
    ]
    for option in quiz.options:
        verdict = ("✓ 正確答案" if option.correct else "✗ 不是最佳答案")
        parts.append(
            f'<li class="sd-quiz__option" data-label="{option.label}" '
            f'data-correct="{"true" if option.correct else "false"}">'
            f'<p class="sd-quiz__choice"><span class="sd-quiz__letter">{option.label}.</span> '
            f'<span class="sd-quiz__text">{_inline(markdown_to_html(option.text))}</span></p>'
            f'<details class="sd-quiz__why"><summary>{option.label} 的解釋</summary>'
            f'<p class="sd-quiz__verdict"><strong>{verdict}</strong></p>\n'
            f'{markdown_to_html(option.explanation)}\n</details></li>'
        )
    parts.append("</ul>\n</section>")
    return "\n".join(parts)


def _render_numeric(quiz: Quiz, number: int, markdown_to_html: Callable[[str], str]) -> str:
    """A numeric question: without JavaScript, the question and, folded, the answer the build
    computed with its explanation; quiz.js adds an input and checks the learner's number against
    data-value within data-tolerance."""
    qid = f"sd-calc-{number}"
    title = quiz.title or f"算算看 {number}"
    answer = quiz.number
    source = (f'<p class="sd-quiz__source">由 <code>{html.escape(answer.call)}</code> 算出'
              '（可以在實驗場裡自己跑一次）</p>\n' if answer.call else "")
    return "\n".join([
        f'<section class="sd-calc" id="{qid}" data-key="{quiz.key}" '
        f'data-value="{answer.value!r}" data-tolerance="{answer.tolerance!r}" '
        f'data-shown="{html.escape(answer.shown)}" aria-labelledby="{qid}-title">',
        f'<p class="sd-quiz__title" id="{qid}-title"><strong>{html.escape(title)}</strong></p>',
        f'<div class="sd-quiz__question">\n{markdown_to_html(quiz.question)}\n</div>',
        f'<details class="sd-quiz__why sd-quiz__solution"><summary>看答案與解釋</summary>'
        f'<p class="sd-quiz__verdict"><strong>答案：{html.escape(answer.shown)}</strong>'
        f'（與它相差不超過 {_plain(answer.tolerance)} 都算對）</p>\n'
        f'{source}{markdown_to_html(quiz.explanation)}\n</details>',
        "</section>",
    ])


def _plain(x: float) -> str:
    return f"{x:.12g}"


def _inline(rendered: str) -> str:
    """Strip the single <p> that Markdown wraps around a one-line fragment."""
    s = rendered.strip()
    if s.startswith("<p>") and s.endswith("</p>") and s.count("<p>") == 1:
        return s[3:-4]
    return s
