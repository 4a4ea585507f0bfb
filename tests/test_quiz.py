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
from quiz_numbers import CALLABLE  # noqa: E402
import specdec_lab  # noqa: E402
from support.site import LESSON1_QUIZ_ANSWERS, LESSON2_QUIZ_ANSWERS  # noqa: E402

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


@pytest.mark.parametrize("opening", ["/// qiuz | Q1 · 情境題", "/// Quiz | Q1", "/// quiz Q1 · 情境題",
                                     "/// quiz: Q1", "// quiz | Q1", "//// quiz | Q1"])
def test_a_mistyped_opening_line_is_an_error_not_a_page_showing_the_answers(opening):
    """Such a line matched no quiz, and the page showed it as text, the [x] answer and every
    explanation with it (an instructor's typo)."""
    text = GOOD.replace(GOOD.split("\n")[4], opening)
    assert opening in text
    error = error_of(text)
    assert error.line == 5 and "/// quiz | 標題" in str(error) and opening[:20] in str(error)


def test_a_closing_line_without_its_opening_is_an_error():
    error = error_of("# 頁\n\n題目\n- [x] A. a\n///\n")
    assert error.line == 5 and "前面沒有開頭" in str(error)


@pytest.mark.parametrize("box", ["[ x]", "[x ]", "[  ]"])
def test_a_box_with_a_stray_space_is_named_as_the_box(box):
    """"- [ x] C." was read as text after the options and got "選項之後的文字必須縮排四格"."""
    text = GOOD.replace("- [x] C.", f"- {box} C.")
    assert f"- {box} C." in text
    error = error_of(text)
    assert "方框只能是 `[ ]` 或 `[x]`" in str(error) and f"`{box}`" in str(error)


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


@pytest.mark.parametrize("option, explanation, line, mark", [
    ("接受率高,所以 K 可以大", "解釋。", 3, ","),          # a half-width comma after Chinese
    ("K 越大越好.", "解釋。", 3, "."),                     # a half-width full stop
    ("比 token 多。", "因為 draft, 所以被退回。", 4, ","),   # in the explanation, before Chinese
])
def test_half_width_comma_or_full_stop_in_an_options_chinese_fails_with_its_line(option, explanation,
                                                                                 line, mark):
    body = f"/// quiz | Q\n題目\n- [ ] A. {option}\n    {explanation}\n- [x] B. b\n    解釋。\n///\n"
    error = error_of(body)
    assert (error.path, error.line) == ("lessons/xyz.md", line)
    assert f"選項 A 的中文裡有半形的「{mark}」" in str(error)


def test_decimals_code_formulas_and_latin_keep_their_half_width_marks():
    body = ("/// quiz | Q\n題目\n- [ ] A. α = 0.9 時是 3.44，`np.mean(x)` 與 $x_1, x_2$\n"
            "    See e.g. Leviathan et al.\n- [x] B. b\n    解釋。\n///\n")
    assert len(parse_quizzes(body, "lessons/xyz.md")[0].options) == 2


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
    quizzes = [q for q in parse_quizzes(text, path="lessons/index.md") if q.kind == "choice"]
    got = [q.answer for q in quizzes]
    assert got == ANSWERS, (f"lesson 1's questions answer {got}; tests/support/site.py LESSON1_QUIZ_ANSWERS says "
                            f"{ANSWERS}: whoever changes, adds or removes a lesson 1 question updates that list (docs/authoring.md)")
    for number, quiz in enumerate(quizzes, start=1):
        assert re.match(rf"Q{number}\b", quiz.title), quiz.title
        assert [o.label for o in quiz.options] == ["A", "B", "C", "D"]
        assert all(len(o.explanation) >= 10 for o in quiz.options)


def test_lesson_two_has_its_five_quiz_questions_and_two_numeric_ones():
    """lessons/draft-trees.md: five scenario questions with the answers in LESSON2_QUIZ_ANSWERS, each
    option explained, and two numeric questions whose answers the build computes with specdec_lab."""
    path = ROOT / "lessons" / "draft-trees.md"
    quizzes = parse_quizzes(path.read_text(encoding="utf-8"), path="lessons/draft-trees.md")
    choices = [q for q in quizzes if q.kind == "choice"]
    got = [q.answer for q in choices]
    assert got == LESSON2_QUIZ_ANSWERS, (
        f"lesson 2's questions answer {got}; tests/support/site.py LESSON2_QUIZ_ANSWERS says "
        f"{LESSON2_QUIZ_ANSWERS}: whoever changes, adds or removes a lesson 2 question updates that list")
    for number, quiz in enumerate(choices, start=1):
        assert re.match(rf"Q{number}\b", quiz.title), quiz.title
        assert [o.label for o in quiz.options] == ["A", "B", "C", "D"]
        assert all(len(o.explanation) >= 10 for o in quiz.options)
    numeric = [q for q in quizzes if q.kind != "choice"]
    assert len(numeric) == 2
    assert all(q.number.call and q.number.call.split("(")[0] in ("expected_tokens_tree", "multi_draft_acceptance")
               for q in numeric), [q.number.call for q in numeric]


def test_every_lesson_quiz_is_valid():
    for path in sorted((ROOT / "lessons").glob("*.md")):
        parse_quizzes(path.read_text(encoding="utf-8"), path=str(path.relative_to(ROOT)))


# --------------------------------------------------------------------------- numeric questions

def numeric(answer: str, explanation="    先算每輪產出。") -> str:
    """A page whose numeric quiz starts on line 3; its 答案 line is line 6."""
    return f"# 頁\n\n/// quiz | 算算看\nα = 0.8、K = 5，每輪產出幾個？\n\n答案：{answer}\n{explanation}\n///\n"


@pytest.mark.parametrize("answer, shown, value, tolerance, call", [
    ("`expected_tokens(0.8, 5)` = 3.69 ± 0.01", "3.69", specdec_lab.expected_tokens(0.8, 5), 0.01,
     "expected_tokens(0.8, 5)"),
    ("`expected_tokens(0.8, 5)` ± 0.01", "3.69", specdec_lab.expected_tokens(0.8, 5), 0.01,
     "expected_tokens(0.8, 5)"),
    ("expected_tokens(0.8, 5) ± 0.005", "3.69", specdec_lab.expected_tokens(0.8, 5), 0.005,
     "expected_tokens(0.8, 5)"),
    ("`expected_tokens(0.8, 5)` ± 0.0001", "3.6893", specdec_lab.expected_tokens(0.8, 5), 0.0001,
     "expected_tokens(0.8, 5)"),
    ("`best_k(0.85, 0.06)` ± 0", "9", 9.0, 0.0, "best_k(0.85, 0.06)"),
    ("`knee_k(0.85, 0.06, fraction=0.95)` ± 0", "6", 6.0, 0.0, "knee_k(0.85, 0.06, fraction=0.95)"),
    ("3.7 ± 0.05", "3.7", 3.7, 0.05, None),
    ("`expected_tokens_positional([0.9, 0.8])` ± 0.001", "2.620",
     specdec_lab.expected_tokens_positional([0.9, 0.8]), 0.001, "expected_tokens_positional([0.9, 0.8])"),
    # lesson 2: a tree's tokens per round, and Sequoia App. F.3 (two candidates, without replacement)
    ("`expected_tokens_tree([-1, -1, 0], [0.5, 0.25, 0.5])` ± 0.01", "2.00", 2.0, 0.01,
     "expected_tokens_tree([-1, -1, 0], [0.5, 0.25, 0.5])"),
    ("`multi_draft_acceptance([1, 0], [0.5, 0.5], 2)` ± 0.01", "0.75", 0.75, 0.01,
     "multi_draft_acceptance([1, 0], [0.5, 0.5], 2)"),
    ("`multi_draft_acceptance([1, 0], [0.5, 0.5], 2, replacement=False)` ± 0.01", "1.00", 1.0, 0.01,
     "multi_draft_acceptance([1, 0], [0.5, 0.5], 2, replacement=False)"),
])
def test_numeric_answer_is_computed_by_the_build(answer, shown, value, tolerance, call):
    [quiz] = parse_quizzes(numeric(answer))
    assert quiz.kind == "number" and quiz.options == []
    assert quiz.answer == shown and quiz.number.shown == shown
    assert quiz.number.value == pytest.approx(value, rel=1e-12)
    assert quiz.number.tolerance == tolerance and quiz.number.call == call
    assert quiz.answer_line == 6 and quiz.explanation == "先算每輪產出。"


@pytest.mark.parametrize("answer, message", [
    ("`expected_tokens(0.8, 5)` = 3.68 ± 0.01", "答案寫 3.68，但 `expected_tokens(0.8, 5)` = 3.68928"),
    ("`expected_tokens(0.8, 5)` = 3.7 ± 0.1", "四捨五入到小數第 1 位是 3.7"),   # (agrees: not raised)
    ("`expected_tokens(1.2, 5)` ± 0.01", "`expected_tokens(1.2, 5)` 算不出來：ValueError: alpha"),
    ("`expected_tokens(0.8)` ± 0.01", "算不出來：TypeError"),
    ("`speedup(0.6, [1, 5], 0.3)` ± 0.01", "的結果不是一個數"),
    ("`simulate_rounds(0.8, 5)` ± 0.01", "`simulate_rounds` 不能用在答案裡"),
    ("`multi_draft_acceptance([1, 0], [0.5, 0.5], [1, 2])` ± 0.01", "的結果不是一個數"),
    ("`multi_draft_acceptance([1, 0.5], [0.5, 0.5], 2)` ± 0.01", "算不出來：ValueError: p"),
    ("`multi_draft_sample([1, 0], [0.5, 0.5], 2)` ± 0.01", "`multi_draft_sample` 不能用在答案裡"),
    ("`__import__('os').system('true')` ± 1", "要是一個函式呼叫"),
    ("`specdec_lab.expected_tokens(0.8, 5)` ± 1", "要是一個函式呼叫"),
    ("`open('/etc/passwd')` ± 1", "`open` 不能用在答案裡"),
    ("`expected_tokens(x, 5)` ± 0.01", "只能直接寫數字"),
    ("`expected_tokens(0.4 + 0.4, 5)` ± 0.01", "只能直接寫數字"),
    ("`expected_tokens(*[0.8, 5])` ± 0.01", "只能直接寫數字"),
    ("`expected_tokens(0.8, 5` ± 0.01", "不是一個能讀懂的呼叫"),
    ("3.69", "要寫容許誤差"),
    ("3.69 ± -1", "不小於 0"),
    ("三點六九 ± 0.01", "答案要是一個數字"),
    ("`expected_tokens(0.8, 5)` = 3.69 ± 0", "讀者照著答案填也會被判錯"),
    ("± 0.01", "少了數字"),
])
def test_broken_numeric_answer_names_file_line_and_problem(answer, message):
    if "= 3.7 ± 0.1" in answer:                       # a typed number that agrees builds
        assert parse_quizzes(numeric(answer))[0].answer == "3.7"
        return
    error = error_of(numeric(answer))
    assert str(error).startswith("lessons/xyz.md:6: "), str(error)
    assert message in str(error), str(error)


def test_numeric_answer_needs_an_explanation_and_no_options():
    assert "沒有解釋" in str(error_of(numeric("3.69 ± 0.01", explanation="")))
    with_option = numeric("3.69 ± 0.01", explanation="    解釋\n- [x] A. 3.69")
    assert str(error_of(with_option)).startswith("lessons/xyz.md:8: ")
    options_first = "/// quiz\n題目\n- [x] A. a\n    解釋\n- [ ] B. b\n    解釋\n答案：3 ± 1\n///\n"
    assert "不能同時有選項" in str(error_of(options_first))


def test_the_whitelist_is_specdec_lab_closed_forms():
    for name in CALLABLE:
        assert callable(getattr(specdec_lab, name))
    assert "simulate_rounds" not in CALLABLE and "monte_carlo_check" not in CALLABLE


def test_numeric_question_reads_without_javascript():
    [quiz] = parse_quizzes(numeric("`expected_tokens(0.8, 5)` ± 0.01"))
    html = render_quiz(quiz, 2, fake_markdown)
    assert html.startswith('<section class="sd-calc" id="sd-calc-2" ')
    assert f'data-value="{specdec_lab.expected_tokens(0.8, 5)!r}"' in html and 'data-tolerance="0.01"' in html
    assert "<summary>看答案與解釋</summary>" in html and "<strong>答案：3.69</strong>" in html
    assert "<code>expected_tokens(0.8, 5)</code>" in html and "<p>先算每輪產出。</p>" in html


def test_a_quiz_key_changes_with_what_it_asks_not_with_its_explanations():
    [base] = parse_quizzes(GOOD)
    same = parse_quizzes(GOOD.replace("A 的解釋，", "A 的解釋改寫過，"))[0]
    assert same.key == base.key and re.fullmatch(r"[0-9a-f]{12}", base.key)
    for edited in (GOOD.replace("題目第一段。", "題目改了。"), GOOD.replace("選項 D", "選項 D 改了"),
                   GOOD.replace("- [x] C.", "- [ ] C.").replace("- [ ] D.", "- [x] D.")):
        assert parse_quizzes(edited)[0].key != base.key
    [n] = parse_quizzes(numeric("3.69 ± 0.01"))
    assert parse_quizzes(numeric("3.69 ± 0.01", explanation="    另一種解釋。"))[0].key == n.key
    assert parse_quizzes(numeric("3.7 ± 0.01"))[0].key != n.key
    assert parse_quizzes(numeric("3.69 ± 0.02"))[0].key != n.key
    assert render_quiz(base, 1, fake_markdown).count(f'data-key="{base.key}"') == 1


def test_lesson_one_has_two_numeric_questions_the_build_computes():
    quizzes = [q for q in parse_quizzes(LESSON.read_text(encoding="utf-8"), path="lessons/index.md")
               if q.kind == "number"]
    assert [(q.number.call, q.number.value) for q in quizzes] == [
        ("expected_tokens(0.9, 3)", pytest.approx((1 - 0.9 ** 4) / (1 - 0.9))),   # Eq. 1 by hand
        ("best_k(0.85, 0.15)", max(range(1, 21), key=lambda k: specdec_lab.speedup(0.85, k, 0.15))),
    ]
    assert [q.answer for q in quizzes] == ["3.44", "6"]
    # the explanation's worked sum is the answer's value, and the lesson's exercise section holds them
    assert "0.729 = 3.439" in quizzes[0].explanation
    assert f"{specdec_lab.expected_tokens(0.7, 10):.2f}" == "3.27" and "3.27" in quizzes[0].question
    peak = [f"{specdec_lab.speedup(0.85, specdec_lab.best_k(0.85, c), c):.2f}" for c in (0.06, 0.15)]
    assert f"約 {peak[0]} 掉到約 {peak[1]}" in quizzes[1].explanation       # 3.48 -> 2.38
    text = LESSON.read_text(encoding="utf-8")
    exercises = text.index("## 換你動手"), text.index("## 情境測驗")
    assert all(exercises[0] < text.index(f"/// quiz | {q.title}") < exercises[1] for q in quizzes)
