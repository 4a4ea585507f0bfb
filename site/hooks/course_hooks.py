"""MkDocs hooks of the course site (configured under `hooks:` in mkdocs.yml).

- on_config: resolve the jieba user dictionary (site/search/userdict.txt) against mkdocs.yml.
- on_files: serve site/assets/* (widget JS/CSS) at assets/course/* without copying them into lessons/.
- on_nav: a lesson page missing from mkdocs.yml's `nav` stops the build, saying which line to add
  (the nav is explicit so that the course order is the instructor's, not the file names').
- on_page_markdown: find and validate the `/// quiz` blocks (quiz_format.py); a broken quiz stops
  the build with `lessons/xyz.md:LINE: 訊息`.
- on_page_content: put the rendered quizzes in place, make each 「實驗場 2️⃣」 a link to that
  section of the page's notebook (lab_links.py), give the toy its no-JS example round
  (toy_fallback.py) and the tree toy its tree and example round (tree_toy.py), turn arithmatex's TeX into MathML (tex_mathml.py), keep each inline formula
  or code on one line with the Chinese punctuation beside it, and a command-line option on one
  line in the table of contents too (punctuation.py), mark × ÷ ± · − ≈ ≤ ≥
  to be drawn narrow (signs.py, the notebook previews too); end every page with
  its marker for progress.js (which page this is, where the site's root is) and note its quizzes;
  last, mark the plain blocks the browser may lay out only near the screen (render_later.py).
- on_post_page: fill the course-wide progress view (`<div class="sd-progress"></div>` in a lesson)
  with every lesson of the nav: its title, link, quiz keys and lab notebook.
- on_post_build: write the search index as UTF-8 instead of \\uXXXX escapes (half the bytes for
  Chinese; every page load fetches it); write the static preview of each notebook named by a
  page's `lab:` front matter (notebook_preview.py) to notebook-preview/NAME.html (NAME without
  .ipynb); drop the theme's palette rule that restyled every element as its bundle started
  (theme_palette.py) and the theme's selectors that name a class no page or script has
  (unused_css.py).
"""
from __future__ import annotations

import html as html_module
import json
import os
import re

import markdown as python_markdown
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from lab_links import LabLinkError, link_markers, section_cells
from notebook_preview import preview_html, preview_name
from punctuation import keep_options_in_title, keep_with_punctuation
from quiz_format import QuizError, find_quizzes, render_quiz
from render_later import mark_render_later
from signs import narrow_signs
from theme_palette import drop_switching_rule
from unused_css import drop_unused_selectors
from tex_mathml import MathError, stray_dollar_lines, stray_dollars, tex_to_mathml_html
from toy_fallback import fill_toys
from tree_toy import TreeToyError, fill_tree_toys

ASSETS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets")
ASSETS_URI = "assets/course"
SLOT = '<div class="sd-quiz-slot" data-slot="{}"></div>'
NOTEBOOKS = "notebooks"                 # beside mkdocs.yml: the notebooks a page's `lab:` names
PREVIEW_DIR = "notebook-preview"        # in the built site: NAME.html for NAME.ipynb

PROGRESS_SLOT = '<div class="sd-progress"></div>'
PAGE_MARK = '<div class="sd-page" data-page="{page}" data-root="{root}" aria-hidden="true"></div>'

_rendered_quizzes: dict[str, list[str]] = {}
_page_quizzes: dict[str, list[str]] = {}   # src_uri -> the keys of its quizzes, in page order
_nav_pages: list = []
_lab_notebooks: dict[str, str] = {}     # notebook file -> the page that names it (for messages)


@event_priority(100)   # before the search plugin reads its options
def on_config(config):
    """Resolve the search plugin's jieba user dictionary against mkdocs.yml's folder, so the build
    works from any working directory (the plugin itself resolves it against the current one)."""
    search = config.plugins.get("material/search") or config.plugins.get("search")
    user_dict = search and search.config.get("jieba_dict_user")
    if user_dict and not os.path.isabs(user_dict):
        root = os.path.dirname(os.path.abspath(config.config_file_path))
        search.config.jieba_dict_user = os.path.join(root, user_dict)
    return config


def on_files(files, config):
    for name in sorted(os.listdir(ASSETS_DIR)):
        path = os.path.join(ASSETS_DIR, name)
        if os.path.isfile(path) and not name.startswith("."):
            files.append(File.generated(config, f"{ASSETS_URI}/{name}", abs_src_path=path))
    return files


def on_nav(nav, config, files):
    """Every lesson page must be in the nav: a page left out builds, but no menu leads to it."""
    listed = {page.file.src_uri for page in nav.pages}
    for file in files.documentation_pages():
        if file.src_uri not in listed:
            raise PluginError(
                f"{os.path.relpath(file.abs_src_path, _root(config))}: 這一課不在 mkdocs.yml 的 nav 裡，"
                "選單裡不會出現它。在 mkdocs.yml 的 `nav:` 下、你要它出現的位置加一行："
                f"`  - {file.src_uri}`")
    _nav_pages[:] = nav.pages
    return nav


def on_page_markdown(markdown, page, config, files):
    path = _display_path(page, config)
    notebook = page.meta.get("lab")
    if notebook:
        if not os.path.isfile(_notebook_path(config, notebook)):
            raise PluginError(f"{path}:{_front_matter_line(page, 'lab')}: 前言的 lab: {notebook} "
                              f"不在 {NOTEBOOKS}/ 裡；{_notebooks_there(config)}")
        _lab_notebooks[notebook] = path
    try:
        found = find_quizzes(markdown, path=path, first_line=_first_line(page, markdown))
    except QuizError as error:
        raise PluginError(str(error)) from None
    _page_quizzes[page.file.src_uri] = [quiz.key for quiz, _start, _end in found]
    if not found:
        _rendered_quizzes.pop(page.file.src_uri, None)
        return markdown
    to_html = _markdown_renderer(config)
    lines = markdown.split("\n")
    rendered = []
    counts: dict[str, int] = {}
    numbered = []                       # choice questions Q1, Q2, …, numeric ones 算算看 1, 2, …
    for quiz, start, end in found:
        counts[quiz.kind] = counts.get(quiz.kind, 0) + 1
        numbered.append((counts[quiz.kind], quiz, start, end))
    for index, (number, quiz, start, end) in reversed(list(enumerate(numbered))):
        lines[start:end + 1] = ["", SLOT.format(index), ""]
        rendered.append(render_quiz(quiz, number, to_html))
    _rendered_quizzes[page.file.src_uri] = rendered[::-1]
    return "\n".join(lines)


def on_page_content(html, page, config, files):
    for index, quiz_html in enumerate(_rendered_quizzes.pop(page.file.src_uri, [])):
        slot = SLOT.format(index)
        if slot not in html:
            raise PluginError(f"{_display_path(page, config)}: 第 {index + 1} 個 quiz 的位置在轉換後不見了"
                              "（quiz 區塊不能放在清單、表格或其他區塊裡面）")
        html = html.replace(slot, quiz_html)
    html = fill_toys(html)
    html = _link_lab_markers(html, page, config)
    try:
        html = fill_tree_toys(html)
    except TreeToyError as error:
        raise PluginError(f"{_display_path(page, config)}:{_tree_toy_line(page, str(error))}: {error}") from None
    try:
        html = tex_to_mathml_html(html, for_search=True)
    except MathError as error:
        raise PluginError(f"{_display_path(page, config)}:{_math_line(page, str(error))}: {error}") \
            from None
    _check_dollars(html, page, config)
    html += PAGE_MARK.format(page=page.url, root=get_relative_url("", page.url) or ".")
    _keep_options_in_toc(page.toc)
    return mark_render_later(_typeset(html))


def _link_lab_markers(html: str, page, config) -> str:
    """「實驗場 2️⃣」 in a page with a lab: a link to that section of its notebook (lab_links.py)."""
    notebook = page.meta.get("lab")
    if not notebook:
        return html
    preview = get_relative_url(f"{PREVIEW_DIR}/{preview_name(notebook)}", page.url)
    try:
        return link_markers(html, section_cells(_notebook_path(config, notebook)), preview, notebook)
    except LabLinkError as error:
        raise PluginError(f"{_display_path(page, config)}: {error}") from None


def _tree_toy_line(page, message: str) -> int:
    """File line number of the tree toy the message is about: the one with the attribute it
    quotes, else the page's first (1 if none is found)."""
    quoted = re.search(r'data-[\w-]+(?:="[^"]*")?', message)
    lines = [(number, line) for number, line in enumerate(page.file.content_string.split("\n"), start=1)
             if 'class="sd-tree-toy"' in line]
    for number, line in lines:
        if quoted and quoted.group(0) in line:
            return number
    return lines[0][0] if lines else 1


def _keep_options_in_toc(items) -> None:
    """The table of contents shows each heading's text with no <code>: a command-line option in
    it is kept on one line there too (punctuation.keep_options_in_title)."""
    for item in items:
        item.title = keep_options_in_title(item.title)
        _keep_options_in_toc(item.children)


def _check_dollars(html: str, page, config) -> None:
    """A formula with one `$` stops the build at its line (tex_mathml.stray_dollars)."""
    source = page.file.content_string if page.file.abs_src_path else page.markdown
    for snippet in stray_dollars(html):
        lines = stray_dollar_lines(source.replace("\r\n", "\n"), snippet)
        if lines is not None:
            where = _display_path(page, config) + (f":{lines[0]}" if lines else "")
            raise PluginError(f"{where}: {_stray_dollar_message(snippet)}")


def _check_notebook_dollars(path: str, name: str, page_path: str, to_html) -> None:
    """The same for the Markdown cells of a lab's notebook (its preview and the live lab, whose
    MathJax leaves such a `$` as text too), naming the cell."""
    with open(path, encoding="utf-8") as f:
        cells = json.load(f).get("cells", [])
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for snippet in stray_dollars(tex_to_mathml_html(to_html(source))):
            if stray_dollar_lines(source, snippet) is not None:
                raise PluginError(f"{NOTEBOOKS}/{name} 第 {index} 格（Markdown；{page_path} 的實驗場）: "
                                  + _stray_dollar_message(snippet))


def _stray_dollar_message(snippet: str) -> str:
    return (f"公式少了一個 $（會照字印出「{snippet}」）：行內公式寫成 $...$、獨立公式寫成 $$...$$，"
            "頭尾都在同一段裡；要印出錢號本身請寫 \\$")


def _typeset(html: str) -> str:
    """Line breaks beside inline formulas and code (punctuation.py), signs drawn narrow (signs.py):
    for the pages and the notebook previews alike."""
    return narrow_signs(keep_with_punctuation(html))


def on_post_page(output, page, config):
    """The progress view gets the course: lessons in nav order, links relative to this page."""
    if PROGRESS_SLOT not in output:
        return output
    lessons = [{"page": p.url, "href": get_relative_url(p.url, page.url) or ".",
                "title": p.title, "quizzes": _page_quizzes.get(p.file.src_uri, []),
                "lab": p.meta.get("lab")} for p in _nav_pages]
    data = html_module.escape(json.dumps(lessons, ensure_ascii=False), quote=True)
    return output.replace(PROGRESS_SLOT, f'<div class="sd-progress" data-course="{data}"></div>', 1)


def _root(config) -> str:
    return os.path.dirname(os.path.abspath(config.config_file_path))


def _display_path(page, config) -> str:
    """lessons/xyz.md relative to the folder of mkdocs.yml (the repository root)."""
    root = os.path.dirname(os.path.abspath(config.config_file_path))
    abs_src = page.file.abs_src_path
    return os.path.relpath(abs_src, root) if abs_src else page.file.src_uri


def _first_line(page, markdown: str) -> int:
    """File line number of the Markdown's first line (MkDocs has stripped the front matter)."""
    source = page.file.content_string if page.file.abs_src_path else markdown
    source = source.replace("\r\n", "\n")
    if markdown and source.endswith(markdown):
        return source[: len(source) - len(markdown)].count("\n") + 1
    return 1


def _math_line(page, message: str) -> int:
    """Best guess of the line holding the formula quoted in a MathError (1 if not found)."""
    try:
        tex = message.split("`")[1]
        source = page.file.content_string
    except (IndexError, OSError):
        return 1
    for number, line in enumerate(source.split("\n"), start=1):
        if tex[:40] in line:
            return number
    return 1


def _front_matter_line(page, key: str) -> int:
    """File line number of the front matter's `key:` line (1 if not found)."""
    for number, line in enumerate(page.file.content_string.split("\n"), start=1):
        if line.startswith(f"{key}:"):
            return number
    return 1


def _notebooks_there(config) -> str:
    """What the notebooks folder holds, in words, for a message about a notebook not in it."""
    folder = os.path.dirname(_notebook_path(config, "x"))
    names = sorted(n for n in os.listdir(folder) if n.endswith(".ipynb")) if os.path.isdir(folder) else []
    return f"那裡有：{'、'.join(names)}" if names else f"{NOTEBOOKS}/ 裡還沒有筆記本"


def _notebook_path(config, name: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(config.config_file_path)), NOTEBOOKS, name)


def _markdown_renderer(config):
    """Markdown -> HTML the way the pages are rendered (the site's extensions and their settings)."""
    md = python_markdown.Markdown(extensions=config.markdown_extensions,
                                  extension_configs=config.mdx_configs)

    def to_html(text: str) -> str:
        md.reset()
        return md.convert(text)
    return to_html


def _write_previews(config) -> None:
    to_html = _markdown_renderer(config)
    os.makedirs(os.path.join(config.site_dir, PREVIEW_DIR), exist_ok=True)
    for name, page_path in sorted(_lab_notebooks.items()):
        try:
            fragment = tex_to_mathml_html(preview_html(_notebook_path(config, name), to_html))
            _check_notebook_dollars(_notebook_path(config, name), name, page_path, to_html)
        except MathError as error:
            raise PluginError(f"{NOTEBOOKS}/{name}（{page_path} 的實驗場）: {error}") from None
        fragment = _typeset(fragment)
        with open(os.path.join(config.site_dir, PREVIEW_DIR, preview_name(name)), "w", encoding="utf-8") as f:
            f.write(fragment)


@event_priority(-100)   # after the search plugin has written its index
def on_post_build(config):
    _write_previews(config)
    drop_switching_rule(config.site_dir)
    drop_unused_selectors(config.site_dir)
    index = os.path.join(config.site_dir, "search", "search_index.json")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as f:
            data = json.load(f)
        with open(index, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
