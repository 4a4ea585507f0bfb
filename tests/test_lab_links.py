"""Lesson ↔ lab navigation, build half (site/hooks/lab_links.py): every 「實驗場 N️⃣」 of a lab
page becomes a link to section N of its notebook (the static preview's cell, whose id the preview
carries); code and existing links are left alone; a marker naming a section the notebook lacks
stops the build with the page and what the notebook has. (Browser half: test_lab_links_browser.py.)"""
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from lab_links import LabLinkError, link_markers, section_cells  # noqa: E402
from notebook_preview import preview_html  # noqa: E402

SECTIONS = {"1": 2, "2": 6, "3": 13}


def test_each_section_heading_of_the_lessons_notebooks_is_found():
    assert section_cells(ROOT / "notebooks" / "lesson1.ipynb") == {"1": 2, "2": 6, "3": 13, "4": 16}
    cells = json.loads((ROOT / "notebooks" / "lesson1.ipynb").read_text(encoding="utf-8"))["cells"]
    for number, index in section_cells(ROOT / "notebooks" / "lesson1.ipynb").items():
        assert "".join(cells[index]["source"]).lstrip("# ").startswith(number + "\ufe0f\u20e3")


@pytest.mark.parametrize("before, cell", [
    ("<p>→ 到實驗場 <strong>1️⃣</strong> 拉動 α</p>", 2),
    ("<p>實驗場 2️⃣ 用一個</p>", 6),
    ("<p>主課文實驗場的 3️⃣，找出</p>", 13),
    ("<li>對應實驗場 3️⃣ 的圖。</li>", 13),
])
def test_a_marker_becomes_a_link_to_its_section(before, cell):
    after = link_markers(before, SECTIONS, "../notebook-preview/x.html")
    link = re.search(r'<a class="sd-lab-link" href="([^"]+)" data-lab-cell="(\d+)">(.*?)</a>', after)
    assert link and link[1] == f"../notebook-preview/x.html#sd-nb-cell-{cell}" and int(link[2]) == cell
    assert link[3].startswith("實驗場")
    assert re.sub(r"<a [^>]*>|</a>", "", after) == before        # the text itself unchanged


@pytest.mark.parametrize("html", [
    "<pre><code>實驗場 1️⃣</code></pre>", "<p><code>實驗場 1️⃣</code></p>",
    '<p><a href="x">實驗場 1️⃣</a></p>', "<p>用 4️⃣ 的預設值</p>", "<p>實驗場裡 1️⃣</p>",
])
def test_code_links_and_bare_numbers_are_left_alone(html):
    assert link_markers(html, SECTIONS, "p.html") == html


def test_a_marker_for_a_section_the_notebook_lacks_is_an_error_saying_what_it_has():
    with pytest.raises(LabLinkError) as error:
        link_markers("<p>實驗場 <strong>5️⃣</strong></p>", SECTIONS, "p.html", "lesson2.ipynb")
    assert str(error.value).startswith("「實驗場 5️⃣」找不到：筆記本 lesson2.ipynb 的標題裡有 1️⃣、2️⃣、3️⃣")


def test_the_preview_gives_each_markdown_cell_the_links_id(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": "## 1️⃣ 一", "metadata": {}},
        {"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [], "execution_count": 1}],
        "metadata": {}}), encoding="utf-8")
    page = preview_html(path, lambda text: f"<p>{text}</p>")
    assert page.startswith('<meta charset="utf-8">')     # opened by itself (no JavaScript), it reads as UTF-8
    assert re.findall(r' id="([^"]+)"', page) == ["sd-nb-cell-0"]


# --------------------------------------------------------------------------- the built site

@pytest.mark.build
def test_every_marker_of_lesson_1_links_its_section_in_the_built_site(tmp_path):
    from support.site import build_lessons
    result = build_lessons(tmp_path / "site")
    assert result.returncode == 0, result.output
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    source = (ROOT / "lessons" / "index.md").read_text(encoding="utf-8")
    markers = re.findall(r"實驗場的? ?(?:\*\*)?([1-9])\ufe0f\u20e3", source)
    links = re.findall(r'<a class="sd-lab-link" href="notebook-preview/lesson1\.html#sd-nb-cell-(\d+)" '
                       r'data-lab-cell="\1">實驗場 (?:<strong>)?([1-9])\ufe0f\u20e3', page)
    assert len(markers) == 9 and [n for _, n in links] == markers
    sections = section_cells(ROOT / "notebooks" / "lesson1.ipynb")
    assert all(int(cell) == sections[n] for cell, n in links)
    preview = (tmp_path / "site" / "notebook-preview" / "lesson1.html").read_text(encoding="utf-8")
    for cell, _ in links:
        assert f'id="sd-nb-cell-{cell}"' in preview


@pytest.mark.build
def test_a_marker_naming_a_missing_section_fails_the_build(tmp_path):
    from support.site import build_lessons
    (tmp_path / "mkdocs.yml").write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\nnav:\n  - index.md\n", encoding="utf-8")
    (tmp_path / "site").symlink_to(ROOT / "site")
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "index.md").write_text(textwrap.dedent("""\
        ---
        lab: lesson1.ipynb
        ---
        # 頁

        → 實驗場 **7️⃣** 看看。
        """), encoding="utf-8")
    result = build_lessons(tmp_path / "out", config_file=tmp_path / "mkdocs.yml", cwd=tmp_path)
    assert result.returncode != 0
    assert "lessons/index.md: 「實驗場 7️⃣」找不到：筆記本 lesson1.ipynb 的標題裡有 1️⃣、2️⃣、3️⃣、4️⃣" in result.output
