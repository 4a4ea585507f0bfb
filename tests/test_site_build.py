"""Build layer: the lessons build with `mkdocs build --strict` and zero warnings; quizzes, formulas and
the toy are rendered at build time; nothing is loaded from outside; Chinese search finds the course's
terms on the right pages; a broken quiz or formula stops the build with file:line."""
import html as html_module
import json
import re
import shutil
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support.site import LESSON1_QUIZ_ANSWERS, LESSON2_QUIZ_ANSWERS, ROOT, build_lessons, lab_pages, nav_pages

pytestmark = pytest.mark.build

ANSWERS = LESSON1_QUIZ_ANSWERS          # Q1 C, Q2 B, Q3 D, Q4 B, Q5 A


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    site = tmp_path_factory.mktemp("lessons") / "site"
    result = build_lessons(site)
    assert result.returncode == 0, result.output
    return site, result


def page(site: Path, name: str) -> str:
    return (site / name).read_text(encoding="utf-8")


def test_strict_build_has_zero_warnings(built):
    _, result = built
    assert result.warnings == []


def test_formulas_are_mathml_with_no_math_javascript(built):
    site, _ = built
    html = page(site, "index.html")
    assert html.count("<math") >= 5
    assert 'class="arithmatex"' not in html and "\\(" not in html
    assert not re.search(r"katex|mathjax", html, re.I)


def test_a_lessons_plain_blocks_are_marked_to_be_laid_out_near_the_screen(built):
    """render_later.py: about half of lesson 1's article (its paragraphs, tight lists, admonitions
    and code) is laid out only near the screen; its formulas, tables and widgets never are."""
    site, _ = built
    html = page(site, "index.html")
    marked = re.findall(r'<(\w+) class="([^"]*\bsd-later\b[^"]*)"', html)
    assert len(marked) >= 50
    assert {tag for tag, _ in marked} <= {"p", "ul", "ol", "div"}
    assert not any(re.search(r"\bsd-(math|toy|quiz|calc|lab)\b", classes) for _, classes in marked)


def test_the_theme_no_longer_restyles_every_element_as_it_starts(built):
    """theme_palette.py: no stylesheet of the built site has a rule on data-md-color-switching (the
    attribute Material's bundle sets on <body> as it starts), so setting it invalidates nothing."""
    site, _ = built
    sheets = list((site / "assets" / "stylesheets").glob("*.css"))
    assert any(s.name.startswith("palette.") for s in sheets)
    assert [s.name for s in sheets if "data-md-color-switching" in s.read_text(encoding="utf-8")] == []
    bundle = next((site / "assets" / "javascripts").glob("bundle.*.min.js")).read_text(encoding="utf-8")
    assert "data-md-color-switching" in bundle      # (what the rule was for is still there)


CLOSING_MARKS = "，。、；：！？」』）】〕》〉"


@pytest.mark.parametrize("name", [
    "index.html", "draft-trees/index.html", "knowledge-card/index.html", "your-gpu/index.html",
    "notebook-preview/lesson1.html", "notebook-preview/lesson2.html", "notebook-preview/your_gpu.html"])
def test_inline_formulas_and_code_are_kept_with_the_marks_after_them(built, name):
    """Every inline formula or code followed by ，。、… is in a short <span class="sd-nobr"> with
    it (site/hooks/punctuation.py), in the pages and in the notebook previews beside them."""
    site, _ = built
    html = page(site, name)
    loose = re.findall(rf"</(?:math|code)>[{CLOSING_MARKS}]", re.sub(
        rf'<span class="sd-nobr">.*?</(?:math|code)>(?:</[a-z]+>)?[{CLOSING_MARKS}]+</span>', "",
        html, flags=re.S))
    assert html.count('class="sd-nobr"') > 0 and loose == []
    # never a long unbreakable run: the span's own text (outside the formula or code, which keep
    # their own line breaks) is the marks and at most a few characters of a <strong> around it
    for run in re.findall(r'<span class="sd-nobr">(.*?</(?:math|code)>.*?)</span>', html, re.S):
        text = re.sub(r"<(math|code)\b.*?</\1>|<[^>]+>", "", run, flags=re.S)
        assert len(html_module.unescape(text)) <= 16, run


def test_the_search_index_reads_formulas_with_their_superscripts(built):
    """A formula's text in the index is its line (site/hooks/tex_mathml.py, searchable), not the
    run of its symbols: α<sup>2</sup>, never "α2", which the search results showed."""
    site, _ = built
    text = " ".join(doc["text"] for doc in json.loads(page(site, "search/search_index.json"))["docs"])
    assert "α,α<sup>2</sup>,α<sup>3</sup>" in text and "α,α2,α3" not in text
    assert "公式\u200b 1+∑<sub>i</sub>∏<sub>j≤i</sub>α<sub>j</sub>。" in text    # nothing of the drawn part


def test_the_search_index_does_not_see_the_wrapping(built):
    site, _ = built
    raw = page(site, "search/search_index.json")
    assert "sd-nobr" not in raw and "wbr" not in raw
    docs = json.loads(raw)["docs"]
    lesson = "".join(d["text"] for d in docs if d["location"].split("#")[0] == "")
    assert "依此類推" in lesson.replace("\u200b", "")


def test_the_five_quiz_questions_are_rendered_in_order(built):
    site, _ = built
    html = page(site, "index.html")
    answers = re.findall(r'<section class="sd-quiz" id="sd-quiz-\d+" data-answer="([A-Z])"', html)
    assert answers == ANSWERS
    assert "/// quiz" not in html and "sd-quiz-slot" not in html
    assert html.count('<details class="sd-quiz__why">') == 4 * len(ANSWERS)


def test_lesson_two_draft_trees_renders_its_quiz_answers_toy_and_lab(built):
    """Lesson 2 (lessons/draft-trees.md): its five questions in order with LESSON2_QUIZ_ANSWERS, its
    two numeric answers as the build computed them with specdec_lab, the tree toy, its lab."""
    site, _ = built
    html = page(site, "draft-trees/index.html")
    answers = re.findall(r'<section class="sd-quiz" id="sd-quiz-\d+" data-answer="([A-Z])"', html)
    assert answers == LESSON2_QUIZ_ANSWERS
    assert html.count('<details class="sd-quiz__why">') == 4 * len(LESSON2_QUIZ_ANSWERS)
    assert "/// quiz" not in html and "sd-quiz-slot" not in html
    calcs = re.findall(r'<section class="sd-calc"[^>]*>', html)
    assert len(calcs) == 2
    folded = re.sub(r"<[^>]+>", "", html)
    assert "答案：2.16" in folded and "答案：0.69" in folded
    assert '<div class="sd-tree-toy"' in html
    assert "lab/notebooks/index.html?path=lesson2.ipynb" in html
    assert "TREE_" not in html and "_TABLE" not in html, "a placeholder is left in lesson 2"


def test_the_toy_has_a_static_round_without_javascript(built):
    site, _ = built
    html = page(site, "index.html")
    toy = re.search(r'<div class="sd-toy"[^>]*>(.*?)</div>\s*</div>', html, re.S)
    assert toy, "no toy on lesson 1"
    assert 'data-k="5"' in toy.group(0) and "sd-toy__static" in toy.group(1)
    assert "✓</span> 接受" in toy.group(1)


class _Resources(HTMLParser):
    """URLs a page loads by itself (scripts, styles, images, frames, fonts via <link>)."""

    LOADS = {"script": "src", "img": "src", "iframe": "src", "source": "src", "audio": "src",
             "video": "src", "embed": "src", "object": "data"}

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and attrs.get("rel") not in ("canonical", "alternate", "next", "prev"):
            self.urls.append(attrs.get("href"))
        elif tag in self.LOADS and attrs.get(self.LOADS[tag]):
            self.urls.append(attrs[self.LOADS[tag]])


def test_pages_load_nothing_from_outside_the_site(built):
    site, _ = built
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 2
    for path in pages:
        parser = _Resources()
        parser.feed(path.read_text(encoding="utf-8"))
        outside = [u for u in parser.urls if u and urlsplit(u).netloc]
        assert outside == [], f"{path.relative_to(site)} loads {outside}"
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", text), css
        assert "@import" not in text or not re.search(r"@import\s+url\(\s*['\"]?https?:", text), css
    assert "fonts.googleapis" not in "".join(p.read_text(encoding="utf-8") for p in pages)


def test_widget_assets_are_served_from_the_site(built):
    site, _ = built
    html = page(site, "index.html")
    for asset in ("course.css", "toy.css", "quiz.css", "dom.js", "toy.js", "quiz.js", "progress.js"):
        assert f"assets/course/{asset}" in html
        assert (site / "assets" / "course" / asset).is_file()


# --------------------------------------------------------------------------- Chinese search

def search_hits(site: Path, term: str) -> list[str]:
    """Locations of the index entries in which `term` is one whole token, tokenised with the
    separator the browser uses (jieba has put \\u200b between words at build time)."""
    index = json.loads(page(site, "search/search_index.json"))
    separator = re.compile(index["config"]["separator"])
    return [doc["location"] for doc in index["docs"]
            if term in separator.split(re.sub(r"<[^>]+>", " ", doc["title"] + " " + doc["text"]))]


@pytest.mark.parametrize("term, pages", [
    ("接受率", ["", "knowledge-card/"]),
    ("草稿模型", [""]),
    ("投機解碼", ["", "knowledge-card/"]),
    ("草稿樹", ["draft-trees/"]),
    ("不放回", ["draft-trees/"]),
])
def test_search_index_keeps_course_terms_whole_on_the_right_pages(built, term, pages):
    site, _ = built
    hits = search_hits(site, term)
    found_pages = {location.split("#")[0] for location in hits}
    for expected in pages:
        assert expected in found_pages, f"{term!r} not found on page {expected!r}: {sorted(found_pages)}"


def test_search_index_is_written_as_utf8_not_escapes(built):
    site, _ = built
    raw = page(site, "search/search_index.json")
    assert "投機解碼" in raw and "\\u6295" not in raw
    assert json.loads(raw)["config"]["lang"] == ["zh"]


def test_search_user_dictionary_is_what_keeps_the_terms_whole():
    """Without the user dictionary, jieba cuts 接受率 and 投機解碼 apart: the dictionary matters."""
    import jieba

    tokenizer = jieba.Tokenizer()
    assert "接受率" not in tokenizer.lcut("草稿的接受率越高越好") or \
        "投機解碼" not in tokenizer.lcut("投機解碼的原理")
    tokenizer.load_userdict(str(ROOT / "site" / "search" / "userdict.txt"))
    assert "接受率" in tokenizer.lcut("草稿的接受率越高越好")
    assert "投機解碼" in tokenizer.lcut("投機解碼的原理")
    assert "草稿模型" in tokenizer.lcut("換一個草稿模型")


# every lesson page with a lab (its front matter's `lab:`), from mkdocs.yml's nav
LAB_PAGES = {f"{path}index.html": notebook for notebook, path in lab_pages().items()}
assert {"index.html", "draft-trees/index.html"} <= set(LAB_PAGES), LAB_PAGES


@pytest.mark.parametrize("page_name, notebook", LAB_PAGES.items())
def test_each_lab_page_links_its_notebooks_static_preview(built, page_name, notebook):
    """The panel shows this HTML until the live notebook is on screen: every cell in order, each code
    cell's source, the stored figures, the formulas as MathML, nothing from another site."""
    site, _ = built
    link = re.search(r'data-preview="([^"]+)"', page(site, page_name))[1]
    preview_file = (site / page_name).parent / link
    assert preview_file.resolve() == (site / "notebook-preview" / notebook.replace(".ipynb", ".html")).resolve()
    preview = preview_file.read_text(encoding="utf-8")
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    assert [int(n) for n in re.findall(r'data-cell="(\d+)"', preview)] == list(range(len(cells)))
    text = re.sub(r"<[^>]+>", "", preview)
    text = html_module.unescape(text)
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            for line in source.splitlines():
                assert line.strip() in text, line
    figures = sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
    assert figures and preview.count('class="sd-nb__figure"') == figures
    formulas = any("$" in "".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "arithmatex" not in preview and ("<math" in preview) == formulas
    assert not re.search(r'(?:src|href)="(?:https?:)?//', preview)
    # no clash with the page's own headings (a cell's id, the target of 「實驗場 N️⃣」, is sd-nb-cell-N)
    assert not re.search(r'<h[12][ >]| id="(?!sd-nb-cell-\d+")', preview)


# --------------------------------------------------------------------------- broken input stops the build

@pytest.fixture
def project(tmp_path):
    """A throw-away project that inherits the real mkdocs.yml and hooks, with its own lessons/."""
    (tmp_path / "mkdocs.yml").write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\nnav:\n  - index.md\n",
                                         encoding="utf-8")
    (tmp_path / "site").symlink_to(ROOT / "site")
    (tmp_path / "lessons").mkdir()

    def build(markdown: str):
        (tmp_path / "lessons" / "index.md").write_text(textwrap.dedent(markdown), encoding="utf-8")
        return build_lessons(tmp_path / "out", config_file=tmp_path / "mkdocs.yml", cwd=tmp_path)
    return build


def test_a_valid_quiz_in_a_fresh_project_builds(project):
    result = project("""\
        # 頁

        /// quiz | Q1
        題目 $\\alpha$

        - [x] A. a
            解釋 A
        - [ ] B. b
            解釋 B
        ///
        """)
    assert result.returncode == 0, result.output
    assert result.warnings == []


def test_a_broken_quiz_fails_the_build_with_file_and_line(project):
    result = project("""\
        ---
        title: 壞掉的測驗
        ---
        # 頁

        /// quiz | Q1
        題目

        - [x] A. a
            解釋 A
        - [ ] B. b
        ///
        """)
    assert result.returncode != 0
    assert "lessons/index.md:11: 選項 B 沒有解釋" in result.output


def test_two_right_answers_fail_the_build(project):
    result = project("""\
        # 頁

        /// quiz | Q1
        題目

        - [x] A. a
            解釋 A
        - [x] B. b
            解釋 B
        ///
        """)
    assert result.returncode != 0
    assert "lessons/index.md:8: quiz 只能有一個正確答案" in result.output


def test_a_bad_formula_fails_the_build_with_file_and_line(project):
    result = project("""\
        # 頁

        一條式子：

        $$
        \\frac{1}{\\notacommand{x}}
        $$
        """)
    assert result.returncode != 0
    assert "lessons/index.md:6: 無法轉換公式" in result.output


def test_a_page_naming_a_notebook_that_is_not_there_fails_the_build(project):
    result = project("""\
        ---
        lab: nope.ipynb
        ---
        # 頁
        """)
    assert result.returncode != 0
    assert "lessons/index.md:2: 前言的 lab: nope.ipynb 不在 notebooks/ 裡；notebooks/ 裡還沒有筆記本" \
        in result.output


def test_a_notebook_that_is_not_there_is_named_beside_those_that_are(project, tmp_path):
    (tmp_path / "notebooks").mkdir()
    for name in ("lesson1.ipynb", "your_gpu.ipynb", "notes.txt"):
        (tmp_path / "notebooks" / name).write_text("{}", encoding="utf-8")
    result = project("""\
        ---
        title: 頁
        lab: lesson_1.ipynb
        ---
        # 頁
        """)
    assert result.returncode != 0
    assert ("lessons/index.md:3: 前言的 lab: lesson_1.ipynb 不在 notebooks/ 裡；"
            "那裡有：lesson1.ipynb、your_gpu.ipynb") in result.output


@pytest.mark.parametrize("markdown, line, shown", [
    ("接受率 $\\alpha 越高，K 就該設大一點。\n", 3, "$\\alpha 越高，K」"),
    ("一輪的期望：$E = 1 + \\alpha$，和 $K 的關係\n", 3, "$K 的關係」"),
    ("上面一段。\n\n$$\n\\frac{1}{2}\n\n下面一段。\n", 5, "$$」"),
])
def test_a_formula_missing_its_closing_dollar_fails_the_build_at_its_line(project, markdown, line, shown):
    result = project("# 頁\n\n" + markdown)
    assert result.returncode != 0
    assert f"lessons/index.md:{line}: 公式少了一個 $（會照字印出「{shown}" in result.output


def test_a_dollar_sign_meant_as_one_builds(project):
    result = project("""\
        # 頁

        一張卡一小時 $2，兩張 \\$4；寫成 \\$K 的也照印。`$x` 在程式碼裡。
        """)
    assert result.returncode == 0, result.output
    assert result.warnings == []


# --------------------------------------------------------------------------- a new lesson in two files

@pytest.fixture
def course_copy(tmp_path):
    """A temporary copy of the course (mkdocs.yml, lessons/, notebooks/; site/ linked) with a new
    lesson in two files, as docs/authoring.md「加一課」 describes: lessons/k-sweep.md naming its
    notebook in its front matter, and notebooks/k_sweep.ipynb."""
    import shutil
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "lessons", tmp_path / "lessons")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (tmp_path / "site").symlink_to(ROOT / "site")
    shutil.copy(ROOT / "notebooks" / "lesson1.ipynb", tmp_path / "notebooks" / "k_sweep.ipynb")
    (tmp_path / "lessons" / "k-sweep.md").write_text(textwrap.dedent("""\
        ---
        title: K 掃一遍
        lab: k_sweep.ipynb
        ---
        # K 掃一遍

        /// quiz | Q1 · 算算看
        α = 0.85、草稿成本 6% 時，最好的 K 是多少？

        答案：`best_k(0.85, 0.06)` ± 0
            K = 9。
        ///
        """), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("mistake", ["a broken link", "a nav entry naming no file"])
def test_site_builds_command_stops_on_a_broken_link_or_nav_entry(course_copy, mistake):
    """What `make serve` and `make site` run (site/build.py) stops, as docs/authoring.md says, where a
    link or the menu points at no page. (With --quiet MkDocs 1.6 counted no warnings, and --strict
    built both pages: a link to a 404, a menu item "None".)"""
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    config = course_copy / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("  - your-gpu.md\n", "  - your-gpu.md\n  - k-sweep.md\n"), encoding="utf-8")
    assert build.build_lessons(course_copy / "good", config=config)      # as it is, it builds
    if mistake == "a broken link":
        lesson = course_copy / "lessons" / "index.md"
        text = lesson.read_text(encoding="utf-8")
        assert "(knowledge-card.md)" in text
        lesson.write_text(text.replace("(knowledge-card.md)", "(knowledge-cards.md)", 1), encoding="utf-8")
    else:
        config.write_text(config.read_text(encoding="utf-8").replace("  - k-sweep.md\n", "  - k-sweeps.md\n"),
                          encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError):
        build.build_lessons(course_copy / "out", config=config)


def test_a_half_width_comma_in_a_quiz_option_stops_the_build_at_its_line_and_no_raw_command(
        course_copy, capfd):
    """The build names the file and line; its last line names the tool that stopped, not the
    `Command '[…]' returned non-zero exit status 1` of the subprocess it ran."""
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    config = course_copy / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - your-gpu.md\n", "  - your-gpu.md\n  - k-sweep.md\n"),
                      encoding="utf-8")
    lesson = course_copy / "lessons" / "k-sweep.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + textwrap.dedent("""\

        /// quiz | Q2 · 選一個
        草稿成本變大時？

        - [x] A. K 要變小,草稿太貴
            對。
        - [ ] B. K 要變大
            不對。
        ///
        """), encoding="utf-8")
    line = lesson.read_text(encoding="utf-8").splitlines().index("- [x] A. K 要變小,草稿太貴") + 1
    with pytest.raises(subprocess.CalledProcessError) as info:
        build.build_lessons(course_copy / "out", config=config)
    said = capfd.readouterr().err
    assert f"lessons/k-sweep.md:{line}: 選項 A 的中文裡有半形的「,」" in said, said
    last = build.failure(info.value)
    assert "mkdocs build" in last and "Command" not in last and "[" not in last, last


def test_a_lesson_missing_from_the_nav_fails_the_build_saying_where_to_add_it(course_copy):
    result = build_lessons(course_copy / "out", config_file=course_copy / "mkdocs.yml", cwd=course_copy)
    assert result.returncode != 0
    assert ("lessons/k-sweep.md: 這一課不在 mkdocs.yml 的 nav 裡，選單裡不會出現它。"
            "在 mkdocs.yml 的 `nav:` 下、你要它出現的位置加一行：`  - k-sweep.md`") in result.output


def test_a_new_lesson_added_to_the_nav_builds_with_its_lab_menu_and_progress(course_copy):
    config = course_copy / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("  - your-gpu.md\n", "  - your-gpu.md\n  - k-sweep.md\n"), encoding="utf-8")
    result = build_lessons(course_copy / "out", config_file=config, cwd=course_copy)
    assert result.returncode == 0, result.output
    assert result.warnings == []
    new = page(course_copy / "out", "k-sweep/index.html")
    assert 'id="sd-lab"' in new                                  # the 實驗場 panel beside it
    assert "lab/notebooks/index.html?path=k_sweep.ipynb" in new
    assert (course_copy / "out" / "notebook-preview" / "k_sweep.html").is_file()
    home = page(course_copy / "out", "index.html")
    assert 'href="k-sweep/"' in home                                # in the menu
    course = json.loads(html_module.unescape(re.search(r'class="sd-progress" data-course="([^"]*)"', home)[1]))
    assert course[-1] == {"page": "k-sweep/", "href": "k-sweep/", "title": "K 掃一遍",
                          "quizzes": [re.search(r'<section class="sd-calc" id="sd-calc-1" data-key="(\w+)"', new)[1]],
                          "lab": "k_sweep.ipynb"}
    assert [lesson["page"] for lesson in course] == nav_pages() + ["k-sweep/"]


def test_a_notebook_formula_missing_its_closing_dollar_fails_the_build_naming_the_cell(course_copy):
    """The lab's MathJax leaves such a `$` as text as the preview would: "$\\alpha 越高"."""
    config = course_copy / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - your-gpu.md\n", "  - your-gpu.md\n  - k-sweep.md\n"),
                      encoding="utf-8")
    path = course_copy / "notebooks" / "k_sweep.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    index = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "markdown" and i > 0)
    notebook["cells"][index]["source"] = "## 掃 K\n\n接受率 $\\alpha 越高，K 可以設大一點。\n"
    path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    result = build_lessons(course_copy / "out", config_file=config, cwd=course_copy)
    assert result.returncode != 0
    assert (f"notebooks/k_sweep.ipynb 第 {index + 1} 格（Markdown；lessons/k-sweep.md 的實驗場）: "
            "公式少了一個 $（會照字印出「$\\alpha 越高，K」") in result.output


def test_a_failed_rebuild_leaves_the_last_good_site_in_place(tmp_path, monkeypatch):
    """`make serve` rebuilds on every edit; a rebuild that fails (a quiz typo) must leave the site
    being served as it was. MkDocs empties its output folder before it fails, so the site is built
    beside the last one and swapped in only when whole (site/build.py)."""
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    site = tmp_path / "site"
    (site / "lab").mkdir(parents=True)
    (site / "index.html").write_text("last good build", encoding="utf-8")

    def mkdocs_fails(target, config=None):          # as MkDocs: the folder emptied, then the error
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        raise subprocess.CalledProcessError(1, "mkdocs build --strict")
    monkeypatch.setattr(build, "build_lessons", mkdocs_fails)
    with pytest.raises(subprocess.CalledProcessError):
        build.build(lessons=True, lab=False, build_dir=tmp_path)
    assert (site / "index.html").read_text(encoding="utf-8") == "last good build"
    assert (site / "lab").is_dir()


def test_a_new_site_takes_the_old_ones_place_whole(tmp_path):
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    site, new = tmp_path / "site", tmp_path / "site.next"
    (site / "old-page").mkdir(parents=True)
    (new / "lab").mkdir(parents=True)
    (new / "index.html").write_text("new", encoding="utf-8")
    build.swap_in(new, site)
    assert sorted(p.name for p in site.iterdir()) == ["index.html", "lab"]
    assert not new.exists() and not (tmp_path / "site.old").exists()
