"""Powers are written as powers wherever a learner reads them: α⁶ or α<sup>K</sup> in text,
\\alpha^K inside a formula, never the caret notation "α^6" or "α^K" of plain text. Checked in the
lessons and the notebooks (their text outside formulas and code, and the outputs stored in them)
and in the strings the lesson widgets write (site/assets/*.js)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
NOTEBOOKS = ROOT / "notebooks"
# a caret raising something: α^6, x^2, )^(k+1), ^{K}, α^${k + 1} (a JS template)
CARET = re.compile(r"[\w)\]}]\^[\w({$]")
# formulas and code, where ^ is a formula's or a program's own notation
MATH_AND_CODE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$", re.S)
JS_COMMENTS = re.compile(r"/\*.*?\*/|(?<![:\\\"'])//[^\n]*", re.S)
JS_STRINGS = re.compile(r"`(?:[^`\\]|\\.)*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")


def carets(text: str) -> list[str]:
    """Each caret power in `text` with a few characters around it."""
    return [text[max(0, m.start() - 8):m.end() + 4] for m in CARET.finditer(text)]


def prose(markdown: str, instead: str = " ") -> str:
    """markdown with each formula and code span or block `instead`."""
    return MATH_AND_CODE.sub(instead, markdown)


def js_strings(source: str) -> list[str]:
    """The string and template literals of a script, its comments left out."""
    return JS_STRINGS.findall(JS_COMMENTS.sub(" ", source))


def notebook_texts(path: Path, instead: str = " ") -> list[tuple[str, str]]:
    """(where, text) of a notebook's Markdown cells (prose only) and its stored outputs."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            found.append((f"{path.name} cell {i}", prose(source, instead)))
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(out.get("text", "")) + "".join(data.get("text/plain", "")) + "".join(data.get("text/html", ""))
            found.append((f"{path.name} cell {i} output", text))
    return found


def texts_learners_read(instead: str = " ") -> list[tuple[str, str]]:
    """(where, text): the lessons' and the notebooks' prose, formulas and code each `instead`, the
    notebooks' stored outputs, the widgets' strings."""
    found = [(path.name, prose(path.read_text(encoding="utf-8"), instead))
             for path in sorted((ROOT / "lessons").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        found += notebook_texts(path, instead)
    for path in sorted((ROOT / "site" / "assets").glob("*.js")):
        found += [(path.name, literal) for literal in js_strings(path.read_text(encoding="utf-8"))]
    return found


def test_no_caret_powers_in_what_learners_read():
    """The toy said "(1 − α^6)" after 歸零 and lesson 1's notebook "分子只多賺 α^K"."""
    found = {where: carets(text) for where, text in texts_learners_read() if carets(text)}
    assert found == {}


@pytest.mark.parametrize("text, found", [
    ("`公式 (1 − α^${k + 1}) / (1 − α)`", 1),              # (a JS template literal, as js_strings gives it)
    ("分子只多賺 α^K（越往後越少），x^2 與 (1-a)^(k+1)", 3),
    ("分子只多賺 α<sup>K</sup>，$\\alpha^{K+1}$，$$x^2$$，`x ^ y`、`2**k`", 0),
])
def test_the_caret_check_finds_a_caret_power(text, found):
    checked = text if text.startswith("`公式") else prose(text)
    assert len(carets(checked)) == found, carets(checked)


def test_js_strings_leave_comments_out():
    source = "// (1 − α^(K+1))\nconst a = `α^${k}`; /* x^2 */ const b = 'http://x'; const c = \"y^2\";"
    assert js_strings(source) == ["`α^${k}`", "'http://x'", "\"y^2\""]


# a full-width mark that ends a clause, then a space (or a bold lead-in's "**" and a space): the mark
# has its own room, and the space showed as a gap ("**先看啟動 log。** vLLM" drew "log。 vLLM")
SPACE_AFTER_FULL_WIDTH = re.compile(r"[。，、；：！？](?:\*\*)? (?=[^\s|])")


def test_no_space_after_full_width_punctuation_in_what_learners_read():
    """In the lessons, the notebooks' Markdown and stored outputs, and the widgets (the outputs read
    "投機解碼寫出： 產生…" and "2-gram 草稿： α ≈ 0.489" where print() put a space after a label)."""
    found = {where: [text[max(0, m.start() - 8):m.end() + 6] for m in SPACE_AFTER_FULL_WIDTH.finditer(text)]
             for where, text in texts_learners_read(instead="x")}
    assert {where: spots for where, spots in found.items() if spots} == {}


@pytest.mark.parametrize("text, found", [
    ("**先看啟動 log。** vLLM 會印出", 1), ("第一步。 用", 1), ("**先看啟動 log。**vLLM，然後 `x。 y`", 0),
    ("| 填 x？ |", 0),
])
def test_the_space_check_finds_a_space_after_full_width_punctuation(text, found):
    assert len(SPACE_AFTER_FULL_WIDTH.findall(prose(text, "x"))) == found


# the draft tokens of a round are K, upper case, as in every formula of the course; a lower-case k
# standing alone is the other notation ("建議 k = 3", "(E − 1)/k" in the vLLM readers' printing, while
# the lesson beside it wrote K). Code keeps its parameter `k`; a JS template's ${k} is code too.
LOWER_K = re.compile(r"(?<![\w$.{\-])k(?![\w(}\-])")
JS_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


def test_draft_length_is_upper_case_k_in_what_learners_read():
    found = {where: [text[max(0, m.start() - 10):m.end() + 6] for m in LOWER_K.finditer(JS_PLACEHOLDER.sub(" ", text))]
             for where, text in texts_learners_read()}
    assert {where: spots for where, spots in found.items() if spots} == {}


# in a formula too: "$k$ 個候選" (the knowledge card had four); an index (a_k), a word inside
# \text{}, a command (\kappa) are not a lone k
FORMULA = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
LOWER_K_IN_TEX = re.compile(r"(?<![\\\w])k(?!\w)")


def lower_k_in_formulas(markdown: str) -> list[str]:
    return [f for f in FORMULA.findall(markdown)
            if LOWER_K_IN_TEX.search(re.sub(r"\\(text|mathrm|operatorname)\{[^}]*\}", " ", f))]


def test_draft_length_is_upper_case_k_in_the_formulas_too():
    pages = {path.name: lower_k_in_formulas(path.read_text(encoding="utf-8")) for path in LESSONS.glob("*.md")}
    notebooks = {path.name: lower_k_in_formulas("\n".join("".join(c["source"]) for c in
                                                           json.loads(path.read_text(encoding="utf-8"))["cells"]
                                                           if c["cell_type"] == "markdown"))
                 for path in NOTEBOOKS.glob("*.ipynb")}
    assert {name: found for name, found in {**pages, **notebooks}.items() if found} == {}


@pytest.mark.parametrize("text, found", [
    ("草稿產生 $k$ 個候選，$\\alpha^{k+1}$，$$E = 1 + k$$", 3),
    ("草稿產生 $K$ 個，$a_k$、$\\kappa$、$\\text{token}$、$\\alpha^{K+1}$", 0),
])
def test_the_formula_check_finds_a_lower_case_k(text, found):
    assert len(lower_k_in_formulas(text)) == found


@pytest.mark.parametrize("text, found", [
    ("建議 k = 3（加速 2.17×）；= (E − 1)/k，不是 α；不滿 k 個", 3),
    ("建議 K = 3；`k=3`、`best_k(alpha)`；5k tokens、k8s、`--sd-i:${k}`、speculative-k", 0),
])
def test_the_lower_case_k_check_finds_one(text, found):
    assert len(LOWER_K.findall(JS_PLACEHOLDER.sub(" ", prose(text)))) == found


# T is the temperature (lesson 1 §3: greedy is T = 0, sampling T > 0); a time is a lower-case t
# (t₀ the time to read the weights once, t_FLOP, t_draft). Lesson 1 had T as §5's time unit too, and
# T_draft / T_target in §6's formula.
UPPER_T_IN_TEX = re.compile(r"(?<![\\\w])T(?![A-Za-z])")
TEMPERATURE = re.compile(r"\s*(?:[=<>≤≥]|\\[lg]eq?\b)")


def times_written_with_t(markdown: str) -> list[str]:
    """The formulas where a T stands for something other than a temperature comparison."""
    found = []
    for formula in FORMULA.findall(markdown):
        bare = re.sub(r"\\(text|mathrm|operatorname)\{[^}]*\}", " ", formula)
        if any(not TEMPERATURE.match(bare, m.end()) for m in UPPER_T_IN_TEX.finditer(bare)):
            found.append(formula)
    return found


def test_t_is_the_temperature_and_times_are_lower_case_t():
    pages = {path.name: times_written_with_t(path.read_text(encoding="utf-8")) for path in LESSONS.glob("*.md")}
    assert {name: found for name, found in pages.items() if found} == {}


@pytest.mark.parametrize("text, found", [
    ("花費時間 $T$、$\\approx T$，每 $T$ 幾個；$\\dfrac{T_\\text{draft}}{T_\\text{target}}$", 4),
    ("溫度 $T=0$、$T>0$、$T \\ge 0$；$t_0$、$t_\\text{draft}$、$\\text{TPOT}$、$\\mathbb{E}[N]$", 0),
])
def test_the_t_check_finds_a_time_written_with_t(text, found):
    assert len(times_written_with_t(text)) == found
