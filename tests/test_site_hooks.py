"""Build-time helpers of the lesson site that are not the quiz: TeX → MathML, keeping a formula or
code with the Chinese punctuation beside it, × ÷ ± · marked to be drawn narrow, the toy's no-JS
round, the notebook's static preview."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from tex_mathml import (MathError, linear_text, tex_to_mathml, tex_to_mathml_html,  # noqa: E402
                        wrong_child_counts)
from toy_fallback import example_round, fill_toys  # noqa: E402
from notebook_preview import preview_html, preview_name  # noqa: E402
from punctuation import keep_options_in_title, keep_with_punctuation  # noqa: E402
from signs import narrow_signs  # noqa: E402


def test_arithmatex_output_becomes_mathml():
    page = ('<p>α 是 <span class="arithmatex">\\(\\alpha &lt; 1\\)</span>。</p>\n'
            '<div class="arithmatex">\\[\n\\frac{1-\\alpha^{K+1}}{1-\\alpha}\n\\]</div>')
    html = tex_to_mathml_html(page)
    assert "arithmatex" not in html
    assert html.count("<math") == 2
    assert 'display="inline"' in html and 'display="block"' in html
    assert "<mfrac>" in html and ("&lt;" in html or "&#x0003C;" in html)
    assert '<div class="sd-math">' in html


def test_a_display_formula_breaks_where_it_allows():
    """\\allowbreak splits a display formula into pieces of one wrapping block (course.css): side
    by side where they fit, the next on the next line on a phone (issue 46); each piece is its
    own display formula with the MathML of the same TeX; elsewhere nothing changes."""
    left, right = r"\mathbb{E}[N] \;=\; 1 + \alpha + \cdots + \alpha^K", r"\;=\; \frac{1-\alpha^{K+1}}{1-\alpha}"
    html = tex_to_mathml_html(f'<div class="arithmatex">\\[\n{left} \\allowbreak {right}\n\\]</div>')
    assert html == ('<div class="sd-math sd-math--wraps">'
                    f"{tex_to_mathml(left, True)}{tex_to_mathml(right, True)}</div>")
    assert "allowbreak" not in html and html.count('display="block"') == 2
    one = tex_to_mathml_html(f'<div class="arithmatex">\\[{left}\\]</div>')
    assert one == f'<div class="sd-math">{tex_to_mathml(left, True)}</div>'
    searchable = tex_to_mathml_html(f'<div class="arithmatex">\\[{left}\\allowbreak{right}\\]</div>',
                                    for_search=True)
    assert searchable.count("<annotation-xml") == 2 and "sd-math--wraps" in searchable


@pytest.mark.parametrize("tex", [r"\frac{a \allowbreak b}{c}", r"x^{2 \allowbreak}"])
def test_a_break_inside_braces_is_refused(tex):
    with pytest.raises(MathError, match="allowbreak"):
        tex_to_mathml_html(f'<div class="arithmatex">\\[{tex}\\]</div>')


@pytest.mark.parametrize("tex, text", [
    (r"\alpha,\alpha^2,\alpha^3,\dots", "α,α<sup>2</sup>,α<sup>3</sup>,…"),
    (r"1+\sum_i \prod_{j\le i}\alpha_j", "1+∑<sub>i</sub>∏<sub>j≤i</sub>α<sub>j</sub>"),
    (r"\frac{1-\alpha^{K+1}}{1-\alpha}", "(1−α<sup>K+1</sup>)/(1−α)"),
    (r"\hat{p}(x) < \sqrt{x}", "p\u0302(x)&lt;√x"),
    (r"\sum_{i=1}^{K} x_i^2", "∑<sub>i=1</sub><sup>K</sup>x<sub>i</sub><sup>2</sup>"),
])
def test_a_formula_reads_in_one_line_for_the_search_index(tex, text):
    assert linear_text(tex_to_mathml(tex, display=False)) == text


def test_a_pages_formula_keeps_its_drawing_and_gives_the_index_its_line():
    html = tex_to_mathml_html('<span class="arithmatex">\\(\\alpha^2\\)</span>', for_search=True)
    drawn, _, note = html.partition('<annotation-xml encoding="text/html">')
    assert '<semantics><mpadded data-search-exclude="">' in drawn and "<msup>" in drawn
    assert note.startswith("α<sup>2</sup></annotation-xml></semantics></math>")
    assert "semantics" not in tex_to_mathml_html('<span class="arithmatex">\\(x\\)</span>')  # previews


def test_operator_names_are_identifiers_and_spaces_are_lengths():
    mathml = tex_to_mathml(r"\min\!\left(1, \frac{p}{q}\right)", display=False)
    assert "<mi>min</mi>" in mathml
    assert "negativethinmathspace" not in mathml


def test_a_prime_follows_its_base_instead_of_a_tiny_superscript():
    mathml = tex_to_mathml(r"p'(x) = q^{\prime}", display=False)
    assert "<msup>" not in mathml
    assert mathml.count('<mo lspace="0" rspace="0">&#x02032;</mo>') == 2


@pytest.mark.parametrize("tex", [r"a^", r"\left( x", r"\notacommand{x}"])
def test_bad_tex_is_an_error_quoting_the_formula(tex):
    with pytest.raises(MathError, match=re.escape(tex)):
        tex_to_mathml(tex, display=True)


def test_every_script_and_fraction_has_the_children_mathml_core_asks():
    # Firefox reports another count as "Invalid markup: Incorrect number of children": the build
    # proves the formulas it ships right, so a report seen in a browser is a moment of the parse
    assert wrong_child_counts(tex_to_mathml(r"\sum_y p(y) = x_{i}^{2} + \frac{a}{b} + \sqrt[3]{x}",
                                            display=True)) == []
    assert wrong_child_counts("<math><msub><mo>&#x02211;</mo></msub><mfrac><mn>1</mn><mn>2</mn>"
                              "<mn>3</mn></mfrac><msup><mi>a</mi><mspace width=\"1em\"/></msup></math>") \
        == [("msub", 1), ("mfrac", 3)]


def test_a_formula_whose_mathml_would_be_malformed_fails_the_build(monkeypatch):
    import tex_mathml
    monkeypatch.setattr(tex_mathml, "convert", lambda tex, display: "<math><msub><mi>x</mi></msub></math>")
    with pytest.raises(MathError, match=r"x_\{\}.*<msub> 有 1 個子元素，應該是 2 個"):
        tex_to_mathml("x_{}", display=False)


MATH = ('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'
        '<msup><mi>α</mi><mn>2</mn></msup></math>')


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.parametrize("before, after", [
    (f"是 {MATH}，依此類推", f'是 <span class="sd-nobr">{MATH}，</span>依此類推'),
    (f"（{MATH}）。下一句", f'<span class="sd-nobr">（{MATH}）。</span>下一句'),
    ("最右邊「<code>x</code>」", '最右邊<span class="sd-nobr">「<code>x</code>」</span>'),
    ("<li><strong><code>method</code></strong>：草稿",
     '<li><span class="sd-nobr"><strong><code>method</code></strong>：</span>草稿'),
    (f"、{MATH}、收下", f'、<span class="sd-nobr">{MATH}、</span>收下'),   # a line may end with 、
    # two kept runs side by side: a line may end between them (Firefox found no break there)
    (f"是 {MATH}：{MATH}。只猜", f'是 <span class="sd-nobr">{MATH}：</span><wbr><span class="sd-nobr">{MATH}。</span>只猜'),
    (f"{MATH}，<code>x</code>。", f'<span class="sd-nobr">{MATH}，</span><wbr><span class="sd-nobr"><code>x</code>。</span>'),
])
def test_a_formula_or_code_is_kept_with_the_punctuation_beside_it(before, after):
    html = keep_with_punctuation(before)
    assert html == after
    assert _text(html) == _text(before)            # no text added: search and copying unchanged


@pytest.mark.parametrize("html", [
    f"<p>{MATH} 和 <code>x</code> 之後是空格</p>",   # nothing to keep together
    '<div class="sd-math"><math display="block"><mi>x</mi></math></div>。',   # a display formula
    "<pre><code>print(1)</code>，</pre>",            # a code block is not running text
    # never a long run: a formula at the end of a long bold phrase is left alone (none in the
    # lessons; the browser tests would show one that breaks before the ，)
    f"<strong>一段比十二個字還要長很多的粗體文字 {MATH}</strong>，",
])
def test_only_the_formula_or_code_and_its_marks_are_wrapped(html):
    assert keep_with_punctuation(html) == html


@pytest.mark.parametrize("before, after", [
    ("<code>--max-num-seqs</code>", '<code><span class="sd-opt">--max-num-seqs</span></code>'),
    ("<code>-n</code>", '<code><span class="sd-opt">-n</span></code>'),
    ("<code>--dataset-path examples/offline_inference/x.py</code>",
     '<code><span class="sd-opt">--dataset-path</span> examples/<wbr>offline_<wbr>inference/<wbr>x.py</code>'),
    ("<code>--max-num-seqs=32</code>", '<code><span class="sd-opt">--max-num-seqs</span>=32</code>'),
    # a longer one: the hyphens stay with the first word only
    ("<code>--num-speculative-tokens</code>",
     '<code><span class="sd-opt">--num</span>-speculative-tokens</code>'),
    ("<code>vllm --x</code>", "<code>vllm --x</code>"),           # hyphens inside: as it was
    ("<code>--</code>", "<code>--</code>"),
    # a short path stays whole (Firefox broke "/" / "metrics"); a long one breaks at its slashes
    ("<code>/metrics</code>", '<code><span class="sd-opt">/metrics</span></code>'),
    ("<code>vllm/config/speculative.py</code>", "<code>vllm/config/speculative.py</code>"),
    ("<code>a b/c</code>", "<code>a b/c</code>"),
    ("<pre><code>--a-b</code></pre>", "<pre><code>--a-b</code></pre>"),    # a code block
])
def test_a_command_line_option_stays_on_one_line(before, after):
    html = keep_with_punctuation(before)
    assert html == after
    assert _text(html) == _text(before)


@pytest.mark.parametrize("before, after", [
    ("<td>1.898 ± 0.013</td>", '<td><span class="sd-value">1.898 ± 0.013</span></td>'),
    ("<p>約 21,236 ± 1,024 字。</p>", '<p>約 <span class="sd-value">21,236 ± 1,024</span> 字。</p>'),
    ("<p>α ± 1、x ± 0.1、1 ±2</p>", "<p>α ± 1、x ± 0.1、1 ±2</p>"),        # not a number ± a number
    ("<pre><code>1.0 ± 0.1</code></pre>", "<pre><code>1.0 ± 0.1</code></pre>"),   # a code block
    ("<td>公式 1，K = 4</td>", '<td><span class="sd-value">公式 1</span>，<span class="sd-value">K = 4</span></td>'),
    ("<p>代進公式 12。</p>", '<p>代進<span class="sd-value">公式 12</span>。</p>'),
    ("<p>在 α = 0.734、K = 6 時</p>",
     '<p>在 <span class="sd-value">α = 0.734</span>、<span class="sd-value">K = 6</span> 時</p>'),
    ("<p>E = 1 + α，K = 12。</p>", '<p><span class="sd-value">E = 1</span> + α，<span class="sd-value">K = 12</span>。</p>'),
    ('<a title="K = 4" href="#k">k = x、NK = 4</a>', '<a title="K = 4" href="#k">k = x、NK = 4</a>'),  # an attribute, no value
])
def test_a_value_and_its_error_stay_on_one_line(before, after):
    assert keep_with_punctuation(before) == after


@pytest.mark.parametrize("title, after", [
    ("步驟 6：找出你的交叉點，設定 --max-num-seqs", '步驟 6：找出你的交叉點，設定 <span class="sd-opt">--max-num-seqs</span>'),
    ("用 --num-speculative-tokens 調 K", '用 <span class="sd-opt">--num</span>-speculative-tokens 調 K'),
    ("-tp 與 --max-num-seqs", '<span class="sd-opt">-tp</span> 與 <span class="sd-opt">--max-num-seqs</span>'),
    ("K-1、α-β、2 - 1 與 —", "K-1、α-β、2 - 1 與 —"),    # hyphens that start no option
])
def test_an_option_in_a_table_of_contents_entry_stays_on_one_line(title, after):
    """The TOC shows a heading as plain text, no <code>: "--max-num-seqs" broke there at its hyphens."""
    assert keep_options_in_title(title) == after
    assert _text(after) == title


def test_signs_in_running_text_are_marked_to_be_drawn_narrow():
    SIGN = '<span class="sd-sign">{}</span>'
    before = "<p>路徑機率 0.62 × 0.55 ≈ 0.34，花 (1 + K·c) 個單位；3.44 ± 0.01、接受 ÷ 草稿、K−1 ≤ 5 ≥ 2</p>"
    html = narrow_signs(before)
    assert html == before.replace("×", SIGN.format("×")).replace("≈", SIGN.format("≈")).replace(
        "·", SIGN.format("·")).replace("±", SIGN.format("±")).replace("÷", SIGN.format("÷")).replace(
        "−", SIGN.format("−")).replace("≤", SIGN.format("≤")).replace("≥", SIGN.format("≥"))
    assert _text(html) == _text(before)            # no text added: search and copying unchanged


def test_each_run_of_superscript_digits_is_marked_to_be_drawn_in_one_font():
    before = "<p>p 值 &lt; 10⁻³⁰⁰，1.3 × 10⁻⁴⁸；m² 與 x⁺</p>"
    html = narrow_signs(before)
    assert html == ('<p>p 值 &lt; 10<span class="sd-sup">⁻³⁰⁰</span>，1.3 <span class="sd-sign">×</span> '
                    '10<span class="sd-sup">⁻⁴⁸</span>；m<span class="sd-sup">²</span> 與 x<span class="sd-sup">⁺</span></p>')
    assert _text(html) == _text(before)
    assert narrow_signs("<pre><code>10⁻³⁰⁰</code></pre>") == "<pre><code>10⁻³⁰⁰</code></pre>"


@pytest.mark.parametrize("html", [
    "<pre><code>a × b</code></pre>",                     # a code block
    "<p><code>2×</code> 與 <code class=\"x\">a·b</code></p>",   # inline code
    '<p><math display="inline"><mi>K</mi><mo>·</mo><mi>c</mi></math></p>',   # a formula: its own fonts
    '<p title="2 × 3" data-x="a·b">沒有符號</p>',       # attributes
    "<script>const x = 2 × 3;</script><style>/* × */</style>",
])
def test_signs_outside_running_text_are_left_alone(html):
    assert narrow_signs(html) == html


def test_long_inline_code_can_break_at_slashes_and_underscores_only():
    path = "<code>examples/offline_inference/spec_decode.py</code>）。"
    html = keep_with_punctuation(path)
    assert "examples/<wbr>offline_<wbr>inference/<wbr>spec_<wbr>decode.py" in html
    assert _text(html) == _text(path)
    short = "<code>spec_decode_offline.py</code>，"     # under 30 characters: left whole
    assert "<wbr>" not in keep_with_punctuation(short)
    name = "a_very_long_identifier_name_here_x"
    highlighted = f'<code class="highlight"><span class="n">{name}</span></code>'
    assert '<span class="n">a_<wbr>very_<wbr>long' in keep_with_punctuation(highlighted)
    assert "<wbr>" not in keep_with_punctuation(f"<pre><code>{name}/y</code></pre>")


@pytest.mark.parametrize("k", range(1, 9))
def test_example_round_is_consistent(k):
    html = example_round(k)
    verdicts = re.findall(r'sd-toy__verdict" data-state="(\w+)"', html)
    states = verdicts[:k]
    assert len(states) == k
    accepted = states.count("accept")
    assert states[:accepted] == ["accept"] * accepted          # hits come first
    assert states.count("reject") == (1 if accepted < k else 0)
    produced = int(re.search(r"<strong>(\d+) 個字</strong>", html).group(1))
    assert produced == accepted + 1
    assert ("修正" in html) == (accepted < k) and ("★</span> bonus" in html) == (accepted == k)


def test_fill_toys_keeps_attributes_and_excludes_the_example_from_search():
    html = fill_toys('<div class="sd-toy" data-k="3" data-alpha="0.6">\n</div>')
    assert html.startswith('<div class="sd-toy" data-k="3" data-alpha="0.6" data-search-exclude>')
    assert "草稿猜 3 個" in html


# ------------------------------------------------------------------------- the notebook's static preview

def fake_markdown(text: str) -> str:
    """Stands in for the site's Markdown: marks what it was given, so the tests see what went in."""
    return f"<md>{text}</md>"


def write_notebook(tmp_path, cells) -> Path:
    import json
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}),
                    encoding="utf-8")
    return path


def code(source, outputs=(), count=1):
    return {"cell_type": "code", "source": source, "outputs": list(outputs), "execution_count": count,
            "metadata": {}}


def test_preview_keeps_cells_in_order_with_prompts_and_escapes_printed_text(tmp_path):
    path = write_notebook(tmp_path, [
        {"cell_type": "markdown", "source": ["# 標題\n", "文字"], "metadata": {}},
        code("print('<b>')", [{"output_type": "stream", "name": "stdout", "text": ["<b>\n"]}], count=3),
        code("", count=None),
        code("1/0", [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                      "traceback": []}], count=4),
    ])
    html = preview_html(path, fake_markdown)
    assert [int(n) for n in re.findall(r'data-cell="(\d+)"', html)] == [0, 1, 2, 3]
    assert "<md># 標題\n文字</md>" in html
    assert "[3]:" in html and "[ ]:" in html and "[4]:" in html
    assert "<pre class=\"sd-nb__stream\">&lt;b&gt;" in html and "<b>\n" not in html
    assert "ZeroDivisionError: division by zero" in html
    assert "<md>```python\nprint('<b>')\n```</md>" in html


def tiny_png(width: int, height: int) -> str:
    import base64
    import io

    import matplotlib.image
    import numpy as np
    buf = io.BytesIO()
    matplotlib.image.imsave(buf, np.zeros((height, width, 3)), format="png")
    return base64.b64encode(buf.getvalue()).decode()


TINY_PNG = tiny_png(3, 2)


def test_preview_shows_figures_html_and_plain_results(tmp_path):
    path = write_notebook(tmp_path, [
        code("fig", [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                      "data": {"image/png": TINY_PNG + "\n", "text/plain": "<Figure>"}}]),
        code("table", [{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                        "data": {"text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "t"}}]),
        code("x", [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                    "data": {"text/plain": "1.66 < 2"}}]),
    ])
    html = preview_html(path, fake_markdown)
    assert f'width="3" height="2" src="data:image/png;base64,{TINY_PNG}"' in html
    assert "&lt;Figure&gt;" not in html
    assert '<div class="sd-nb__html" tabindex="0" role="group" aria-label="輸出"><table><tr><td>1</td></tr></table></div>' in html
    assert "1.66 &lt; 2" in html


def test_a_code_fence_inside_a_cell_cannot_close_the_preview_block(tmp_path):
    path = write_notebook(tmp_path, [code('s = """\n```\n"""')])
    html = preview_html(path, fake_markdown)
    assert "<md>````python\n" in html and html.count("````") == 2


def test_notebook_headings_go_two_levels_down_without_ids_or_permalinks(tmp_path):
    path = write_notebook(tmp_path, [{"cell_type": "markdown", "source": "# a", "metadata": {}}])
    rendered = preview_html(path, lambda text: '<h1 id="a">a<a class="headerlink" href="#a">&para;</a></h1>'
                                               '<h2 id="b">b</h2><details>')
    assert "<h3>a</h3><h4>b</h4>" in rendered and "headerlink" not in rendered
    # the headings' ids are gone; the cell keeps its own (where a lesson's 「實驗場 N️⃣」 points)
    assert re.findall(r' id="([^"]+)"', rendered) == ["sd-nb-cell-0"]
    assert preview_name("lesson1.ipynb") == "lesson1.html"


# ------------------------------------------------------------- blocks laid out near the screen
from render_later import mark_render_later  # noqa: E402
from theme_palette import drop_switching_rule  # noqa: E402

LATER = ' class="sd-later"'
LEAD = "<h1>課</h1>\n<p>" + "讀" * 1200 + "</p>\n"       # the first screens: never marked


def later(html: str) -> str:
    """mark_render_later on a page that starts with LEAD, without LEAD."""
    out = mark_render_later(LEAD + html)
    assert out.startswith(LEAD)
    return out[len(LEAD):]


@pytest.mark.parametrize("block, marked", [
    ("<p>α 是 <code>K</code>，<a href='#x'>連結</a>。</p>", '<p class="sd-later">'),
    ("<ul>\n<li>一</li>\n<li>二</li>\n</ul>", '<ul class="sd-later">'),
    ('<div class="admonition note">\n<p class="admonition-title">注意</p>\n<p>文字</p>\n</div>',
     '<div class="admonition note sd-later">'),
    ('<div class="language-python highlight"><pre><span></span><code>x = 1\n</code></pre></div>',
     '<div class="language-python highlight sd-later">'),
    ('<p>行內 <math display="inline"><mi>α</mi></math><span class="sd-nobr">。</span></p>',
     '<p class="sd-later">'),
])
def test_a_plain_block_is_marked_to_be_laid_out_near_the_screen(block, marked):
    html = later(block)
    assert html.startswith(marked) and html.count("sd-later") == 1
    assert re.sub(r"\s*\bsd-later\b|" + LATER, "", html) == block


@pytest.mark.parametrize("block", [
    '<div class="sd-math"><math display="block"><mi>x</mi></math></div>',      # a11y.js measures it
    '<p>式子：</p>'.replace("：", '<math display="block"><mi>x</mi></math>'),
    "<table><tr><td>1</td></tr></table>",
    '<div class="sd-toy" data-k="5"></div>',                                      # widgets' scripts measure them
    '<section class="sd-calc"><input type="text"></section>',
    '<section class="sd-quiz"><details><summary>A</summary>為什麼</details></section>',   # feedback read as innerText
    '<p><span class="sd-value">3</span></p>',
    "<ul>\n<li>\n<p>鬆散的清單</p>\n</li>\n</ul>",                              # its margins would stop collapsing
    '<h2 id="a">標題</h2>',
    '<p><img src="a.png" alt=""></p>',
    "<details><summary>答案</summary><p>1</p></details>",
    '<div class="grid"><p>一</p></div>',
])
def test_a_block_that_is_measured_or_may_spill_is_left_alone(block):
    assert later(block) == block


def test_only_top_level_blocks_are_marked_and_void_tags_do_not_confuse_the_depth():
    html = ('<p>一<br>二</p>\n<div class="admonition tip"><p>內</p><ul><li>x</li></ul></div>\n'
            '<hr>\n<p>三</p>\n<div class="sd-page" data-page="/"></div>')
    out = later(html)
    assert out.count("sd-later") == 3
    assert '<p class="sd-later">一<br>二</p>' in out and '<p class="sd-later">三</p>' in out
    assert "<p>內</p>" in out and "<ul><li>x</li></ul>" in out        # inside the admonition: not again
    assert '<div class="sd-page" data-page="/"></div>' in out


def test_the_blocks_of_the_first_screens_are_left_alone():
    """They are on screen at once; marked, they were painted a frame later (Lighthouse's LCP)."""
    blocks = "".join(f"<p>{'讀' * 300}</p>\n" for _ in range(6))      # 1,200 characters: four of them
    marked = ["sd-later" in line for line in mark_render_later(blocks).splitlines()]
    assert marked == [False, False, False, False, True, True]


PALETTE_CSS = ('@media screen{[data-md-color-scheme=slate]{--md-hue:232}[data-md-color-switching] *,'
               '[data-md-color-switching] :after,[data-md-color-switching] :before{transition-duration:0s!important}}'
               '[data-md-color-accent=red]{--md-accent-fg-color:#ff1947}')


def test_the_palettes_switching_rule_is_dropped_and_nothing_else(tmp_path):
    css = tmp_path / "assets" / "stylesheets" / "palette.x.min.css"
    css.parent.mkdir(parents=True)
    css.write_text(PALETTE_CSS, encoding="utf-8")
    assert drop_switching_rule(tmp_path) == 1
    assert css.read_text(encoding="utf-8") == ('@media screen{[data-md-color-scheme=slate]{--md-hue:232}}'
                                               '[data-md-color-accent=red]{--md-accent-fg-color:#ff1947}')
    assert drop_switching_rule(tmp_path) == 0


# ------------------------------------------------------- the theme's selectors no page can match
from unused_css import drop_unused_selectors, prune_css, used_classes  # noqa: E402

USED = {"md-typeset", "admonition", "md-tag--"}


@pytest.mark.parametrize("css, pruned", [
    # a selector naming an unused class goes; the rest of its list stays
    (".md-typeset .tabbed-set>input:checked,.md-typeset .admonition{margin:0}",
     ".md-typeset .admonition{margin:0}"),
    # a rule with no selector left goes whole
    ("a{color:red}.tabbed-set :nth-child(2){order:2}b{color:blue}", "a{color:red}b{color:blue}"),
    # inside parentheses a class is not required: :not(.x) matches without any .x
    (".md-typeset :not(.tabbed-set),:is(.grid,.admonition){x:1}",
     ".md-typeset :not(.tabbed-set),:is(.grid,.admonition){x:1}"),
    # nor inside an attribute selector
    ('[class*=" tabbed-set"]{x:1}', '[class*=" tabbed-set"]{x:1}'),
    # a class written from a template literal (`md-tag--${kind}`)
    (".md-tag--new,.md-tag-shadow{x:1}", ".md-tag--new{x:1}"),
    # @media is pruned inside, and goes when empty; @keyframes and @font-face stay as they are
    ("@media screen{.grid{x:1}.admonition{x:2}}@media print{.grid{x:1}}"
     "@keyframes grid{0%{x:1}to{x:2}}@font-face{font-family:g}",
     "@media screen{.admonition{x:2}}@keyframes grid{0%{x:1}to{x:2}}@font-face{font-family:g}"),
    # nothing to drop: the text comes back byte for byte, escapes and comments included
    (".admonition:nth-child(1n+2){background:url(\"data:x,\\3c svg\")}/*# sourceMappingURL=m.map */",
     ".admonition:nth-child(1n+2){background:url(\"data:x,\\3c svg\")}/*# sourceMappingURL=m.map */"),
])
def test_selectors_naming_an_unused_class_are_dropped(css, pruned):
    assert prune_css(css, USED)[0] == pruned


def test_the_themes_stylesheet_comes_back_whole_when_every_class_is_used():
    import material

    class Everything(set):
        def __contains__(self, name):
            return True

    for css in sorted((Path(material.__file__).parent / "templates" / "assets" / "stylesheets").glob("*.min.css")):
        text = css.read_text(encoding="utf-8")
        assert prune_css(text, Everything()) == (text, 0), css.name


def test_used_classes_are_the_pages_classes_and_the_scripts_words(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<div class="md-typeset sd-x"><p class=admonition>x</p><span class=\'one two\'></span></div>',
        encoding="utf-8")
    (tmp_path / "bundle.js").write_text('x("div",{class:"md-search__output"});`md-tag--${e}`',
                                        encoding="utf-8")
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "index.html").write_text('<div class="lab-only">', encoding="utf-8")
    (tmp_path / "lab" / "lab.js").write_text('"tabbed-set"', encoding="utf-8")
    used = used_classes(tmp_path)
    assert {"md-typeset", "sd-x", "admonition", "one", "two", "md-search__output", "md-tag--"} <= used
    assert "lab-only" not in used and "tabbed-set" not in used


def test_only_the_themes_stylesheets_are_pruned(tmp_path):
    (tmp_path / "index.html").write_text('<div class="admonition">', encoding="utf-8")
    theme = tmp_path / "assets" / "stylesheets" / "main.x.min.css"
    course = tmp_path / "assets" / "course" / "course.css"
    for css in theme, course:
        css.parent.mkdir(parents=True)
        css.write_text(".admonition{x:1}.grid{x:2}", encoding="utf-8")
    assert drop_unused_selectors(tmp_path) == 1
    assert theme.read_text(encoding="utf-8") == ".admonition{x:1}"
    assert course.read_text(encoding="utf-8") == ".admonition{x:1}.grid{x:2}"
    assert drop_unused_selectors(tmp_path) == 0
