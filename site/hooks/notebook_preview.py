"""The notebook beside a lesson as static HTML, shown while the live 實驗場 starts.

JupyterLite needs a few seconds (longer on a first visit) before it shows the notebook; the lesson's
panel (assets/course/lab-panel.js) shows this preview at once and swaps in the live notebook when
it is on screen. The preview is the notebook as stored in the repository: each cell's text, its
code highlighted the way the lessons' code is, and the outputs saved with it (printed text, tables,
figures), under the same "[n]:" prompts. Nothing in it runs.

    preview_html(notebook_path, to_html) -> str     # an HTML fragment

`to_html` renders Markdown the way the lesson pages are rendered (the site's extensions); formulas
are turned into MathML by the caller, as for a page. The notebooks are the course's own, so their
stored HTML outputs (specdec_lab's tables) are inserted as they are.
"""
from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Callable

DETAILS_RE = re.compile(r"<details>")    # Markdown inside <details> needs md_in_html's attribute
HEADING_RE = re.compile(r"<(/?)h([1-4])(?: id=\"[^\"]*\")?>")
PERMALINK_RE = re.compile(r'<a class="headerlink"[^>]*>.*?</a>')


def _in_the_page(fragment: str) -> str:
    """A notebook's headings inside the lesson page: two levels down (the notebook's # title sits
    under the lesson's own headings), without ids or permalinks (they would clash with the page's)."""
    fragment = PERMALINK_RE.sub("", fragment)
    return HEADING_RE.sub(lambda m: f"<{m[1]}h{int(m[2]) + 2}>", fragment)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _fence(code: str, language: str) -> str:
    """A fenced block that no backtick run inside the code can close."""
    ticks = "`" * max([3, *(len(m) + 1 for m in re.findall(r"`+", code))])
    return f"{ticks}{language}\n{code}\n{ticks}"


def _png_size(png_base64: str) -> tuple[int, int]:
    """Width and height from a PNG's header, so the preview keeps each figure's place before the
    image is decoded (otherwise the cells below move as the figures appear)."""
    header = base64.b64decode(png_base64[:44])       # the signature and the IHDR chunk's start
    if header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        raise ValueError("a stored image/png output is not a PNG")
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def _output_html(output: dict, to_html: Callable[[str], str]) -> str:
    kind = output["output_type"]
    if kind == "stream":
        cls = "sd-nb__stream sd-nb__stream--stderr" if output.get("name") == "stderr" else "sd-nb__stream"
        return f'<pre class="{cls}">{html.escape(_text(output["text"]))}</pre>'
    if kind == "error":
        return (f'<pre class="sd-nb__stream sd-nb__stream--stderr">'
                f'{html.escape(output.get("ename", ""))}: {html.escape(output.get("evalue", ""))}</pre>')
    data = output.get("data", {})
    if "image/png" in data:
        png = _text(data["image/png"]).strip()
        width, height = _png_size(png)
        return (f'<img class="sd-nb__figure" alt="圖（筆記本裡儲存的輸出）" width="{width}" '
                f'height="{height}" src="data:image/png;base64,{png}">')
    if "text/html" in data:
        return (f'<div class="sd-nb__html" tabindex="0" role="group" aria-label="輸出">'
                f'{_text(data["text/html"])}</div>')
    if "text/markdown" in data:
        return _in_the_page(to_html(_text(data["text/markdown"])))
    if "text/plain" in data:
        return f'<pre class="sd-nb__stream">{html.escape(_text(data["text/plain"]))}</pre>'
    return ""


def preview_name(notebook: str) -> str:
    """The preview's file name for a notebook's: lesson1.ipynb -> lesson1.html."""
    return Path(notebook).stem + ".html"


def preview_html(path: Path, to_html: Callable[[str], str]) -> str:
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    language = (notebook.get("metadata", {}).get("language_info", {}).get("name")
                or "python")
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            body = _in_the_page(to_html(DETAILS_RE.sub('<details markdown="1">', source)))
            # the id: where a lesson's 「實驗場 N️⃣」 link points (lab_links.py)
            cells.append(f'<div class="sd-nb__cell sd-nb__cell--markdown" id="sd-nb-cell-{index}" '
                         f'data-cell="{index}">{body}</div>')
        elif cell["cell_type"] == "code":
            count = cell.get("execution_count")
            prompt = f"[{count}]:" if count else "[ ]:"
            outputs = "".join(_output_html(o, to_html) for o in cell.get("outputs", []))
            code = to_html(_fence(source, language)) if source.strip() else ""
            cells.append(
                f'<div class="sd-nb__cell sd-nb__cell--code" data-cell="{index}">'
                f'<div class="sd-nb__prompt" aria-hidden="true">{prompt}</div>{code}'
                + (f'<div class="sd-nb__outputs">{outputs}</div>' if outputs else "")
                + "</div>")
    # (the charset: a lesson's link opens this file by itself when JavaScript is off)
    return ('<meta charset="utf-8">'
            f'<div class="sd-nb" data-notebook="{html.escape(Path(path).name)}">'
            '<p class="sd-nb__note">預覽：筆記本存下的內容與結果。Python 就緒後，這裡換成可以執行的筆記本。</p>'
            + "".join(cells) + "</div>")
