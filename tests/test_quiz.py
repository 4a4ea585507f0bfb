"""The `/// quiz` format: parser, validator (file:line messages), renderer; the lesson's five questions.

Fast layer: pure functions from site/hooks/quiz_format.py, no MkDocs build.
"""
import re
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from quiz_format import QuizError, find_quizzes, parse_quizzes, render_quiz  # noqa: E402
from support.site import LESSON1_QUIZ_ANSWERS  # noqa: E402

GOOD = textwrap.dedent("""\
    # 一課

    前面的文字。

    /// quiz | Q1 · 情境題
    題目第一段。

    ```python
    - [ ] 這行在 code block 裡，不是選項
    ///
    ```

    - [ ] A. 選項 A
        A 的解釋，
        第二行。
    - [ ] B. 選項 `B`
        B 的解釋。

        B 的第二段。
    - [x] C. 正確的 C
        C 的解釋。
    - [ ] D. 選項 D
        D 的解釋。
    ///

    後面的文字。
    """)


def broken(body: str) -> str:
    """A page whose quiz starts on line 3."""
    return "# 頁\n\n" + textwrap.dedent(body)


def error_of(text: str, path="lessons/xyz.md") -> QuizError:
    with pytest.raises(QuizError) as info:
        parse_quizzes(text, path=path)
    return info.value


def test_parses_title_question_options_answer_and_lines():
    [quiz] = parse_quizzes(GOOD, path="lessons/a.md")
    assert quiz.title == "Q1 · 情境題"
    assert quiz.line == 5 and quiz.end_line == 24
    assert quiz.question.startswith("題目第一段。")
    assert "這行在 code block 裡" in quiz.question          # fenced lines stay in the question
    assert [o.label for o in quiz.options] == ["A", "B", "C", "D"]
    assert [o.correct for o in quiz.options] == [False, False, True, False]
    assert quiz.answer == "C"
    assert [o.line for o in quiz.options] == [13, 16, 20, 22]
    assert quiz.options[0].explanation == "A 的解釋，\n第二行。"
    assert quiz.options[1].text == "選項 `B`"
    assert quiz.options[1].explanation == "B 的解釋。\n\nB 的第二段。"


def test_find_quizzes_gives_the_block_span():
    [(quiz, start, end)] = find_quizzes(GOOD)
    lines = GOOD.split("\n")
    assert lines[start].startswith("/// quiz") and lines[end] == "///"


def test_first_line_offsets_line_numbers_for_front_matter():
    [quiz] = parse_quizzes(GOOD, first_line=4)       # three lines of front matter stripped
    assert quiz.line == 8 and quiz.options[0].line == 16


def test_quiz_inside_a_code_block_is_not_a_quiz():
    text = "```markdown\n/// quiz | 範例\n題目\n- [x] A. a\n///\n```\n"
    assert parse_quizzes(text) == []


def test_several_quizzes_and_uppercase_x():
    two = GOOD + "\n" + GOOD.replace("- [x] C.", "- [X] C.")
    assert [q.answer for q in parse_quizzes(two)] == ["C", "C"]


@pytest.mark.parametrize("body, line, message", [
    ("""\
     /// quiz | Q
     題目
     - [ ] A. a
         解釋
     - [ ] B. b
         解釋
     ///
     """, 3, "沒有正確答案"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     - [x] B. b
         解釋
     ///
     """, 7, "只能有一個正確答案"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     ///
     """, 3, "至少要有兩個選項"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     - [ ] B. b
     - [ ] C. c
         解釋
     ///
     """, 7, "選項 B 沒有解釋"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     - [ ] C. c
         解釋
     ///
     """, 7, "應為 B，這裡寫的是 C"),
    ("""\
     /// quiz | Q
     題目
     - [x] a 沒有標號
         解釋
     - [ ] B. b
         解釋
     ///
     """, 5, "選項要以標號開頭"),
    ("""\
     /// quiz | Q
     題目
     - [x] A.
         解釋
     - [ ] B. b
         解釋
     ///
     """, 5, "選項 A 沒有文字"),
    ("""\
     /// quiz | Q
     題目
     - [v] A. a
         解釋
     - [ ] B. b
         解釋
     ///
     """, 5, "`[ ]` 或 `[x]`"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     - [ ] B. b
       只縮排兩格的解釋
     ///
     """, 8, "必須縮排四格"),
    ("""\
     /// quiz | Q
     - [x] A. a
         解釋
     - [ ] B. b
         解釋
     ///
     """, 3, "沒有題目"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     - [ ] B. b
         解釋
     """, 3, "沒有結束"),
    ("""\
     /// quiz | Q
     題目
     - [x] A. a
         解釋
     /// quiz | Q2
     題目
     ///
     """, 7, "還沒用一行 `///` 結束"),
])
def test_broken_quiz_names_file_line_and_problem(body, line, message):
    error = error_of(broken(body))
    assert str(error).startswith(f"lessons/xyz.md:{line}: ")
    assert message in str(error)
    assert (error.path, error.line) == ("lessons/xyz.md", line)


def test_quiz_error_is_a_value_error():
    assert issubclass(QuizError, ValueError)


# --------------------------------------------------------------------------- rendering

class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def fake_markdown(text: str) -> str:
    return "<p>" + text.replace("\n\n", "</p><p>") + "</p>"


def test_render_without_js_is_a_list_with_folded_explanations():
    [quiz] = parse_quizzes(GOOD)
    html = render_quiz(quiz, 3, fake_markdown)
    collector = _Collector()
    collector.feed(html)
    tags = collector.tags
    section = tags[0]
    assert section[0] == "section" and section[1]["id"] == "sd-quiz-3"
    assert section[1]["data-answer"] == "C"
    options = [a for t, a in tags if t == "li"]
    assert [o["data-label"] for o in options] == ["A", "B", "C", "D"]
    assert [o["data-correct"] for o in options] == ["false", "false", "true", "false"]
    assert sum(1 for t, _ in tags if t == "details") == 4
    assert sum(1 for t, _ in tags if t == "summary") == 4
    assert html.count("✓ 正確答案") == 1 and html.count("✗ 不是最佳答案") == 3
    assert "<p>B 的第二段。</p>" in html                       # explanations keep their paragraphs
    assert '<span class="sd-quiz__text">選項 `B`</span>' in html  # one-line option: no <p> wrapper
    assert "Q1 · 情境題" in html


def test_render_escapes_the_title():
    [quiz] = parse_quizzes(GOOD.replace("Q1 · 情境題", "a <b> & c"))
    assert "a &lt;b&gt; &amp; c" in render_quiz(quiz, 1, fake_markdown)


# --------------------------------------------------------------------------- the real lesson

LESSON = ROOT / "lessons" / "index.md"
ANSWERS = LESSON1_QUIZ_ANSWERS          # Q1 C, Q2 B, Q3 D, Q4 B, Q5 A


def test_lesson_one_has_the_five_quiz_questions_with_the_agreed_answers():
    text = LESSON.read_text(encoding="utf-8")
    quizzes = parse_quizzes(text, path="lessons/index.md")
    assert [q.answer for q in quizzes] == ANSWERS
    for number, quiz in enumerate(quizzes, start=1):
        assert re.match(rf"Q{number}\b", quiz.title), quiz.title
        assert [o.label for o in quiz.options] == ["A", "B", "C", "D"]
        assert all(len(o.explanation) >= 10 for o in quiz.options)


def test_every_lesson_quiz_is_valid():
    for path in sorted((ROOT / "lessons").glob("*.md")):
        parse_quizzes(path.read_text(encoding="utf-8"), path=str(path.relative_to(ROOT)))
