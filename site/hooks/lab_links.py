"""Lesson text's 「實驗場 1️⃣」 markers become links to that section of the page's notebook.

A lesson says 「→ 實驗場 **2️⃣**」 or 「實驗場 4️⃣」 where the learner should go to the lab; the
notebook's Markdown cells open with headings numbered the same way (`## 2️⃣ …`). On a page with a
`lab:` notebook each marker becomes

    <a class="sd-lab-link" href="../notebook-preview/lesson1.html#sd-nb-cell-6" data-lab-cell="6">實驗場 <strong>2️⃣</strong></a>

Without JavaScript the link opens the notebook's static preview at that section; with it,
assets/course/lab-panel.js opens the 實驗場 (a phone's too) and scrolls it there.

    section_cells(notebook_path) -> {"2": 6, …}          # keycap number -> cell index
    link_markers(html, sections, preview_href) -> html   # LabLinkError names a missing section
"""
from __future__ import annotations

import json
import re
from pathlib import Path

KEYCAP = "\ufe0f\u20e3"
# 實驗場, maybe 的, a space, then the keycap number, bold or not
MARKER_RE = re.compile(rf"實驗場(?:的)?\s*(?:<strong>([1-9]){KEYCAP}</strong>|([1-9]){KEYCAP})")
HEADING_RE = re.compile(rf"^#{{1,6}}\s*([1-9]){KEYCAP}", re.M)
# code and existing links are left as they are
SKIP_RE = re.compile(r"<(pre|code|a)\b.*?</\1>", re.S)


class LabLinkError(ValueError):
    """A marker naming a section its page's notebook does not have."""


def cell_id(index: int) -> str:
    """The id of a cell in the notebook's static preview (notebook_preview.py)."""
    return f"sd-nb-cell-{index}"


def section_cells(path) -> dict[str, int]:
    """Each numbered section of a notebook ("1" for `## 1️⃣ …`) -> the index of its Markdown cell."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    found: dict[str, int] = {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for number in HEADING_RE.findall(source):
                found.setdefault(number, index)
    return found


def link_markers(html: str, sections: dict[str, int], preview_href: str, notebook: str = "") -> str:
    """Every 「實驗場 N️⃣」 outside code and links made a link to section N (see the module's doc)."""
    def link(match: re.Match) -> str:
        number = match.group(1) or match.group(2)
        if number not in sections:
            have = "、".join(n + KEYCAP for n in sorted(sections)) or "沒有編號的標題"
            raise LabLinkError(f"「實驗場 {number}{KEYCAP}」找不到：筆記本 {notebook} 的標題裡有 {have}"
                               f"（筆記本的 Markdown 格要有一個以 {number}{KEYCAP} 開頭的標題，例如 `## {number}{KEYCAP} …`）")
        cell = sections[number]
        return (f'<a class="sd-lab-link" href="{preview_href}#{cell_id(cell)}" data-lab-cell="{cell}">'
                f"{match.group(0)}</a>")

    out, last = [], 0
    for skip in SKIP_RE.finditer(html):
        out.append(MARKER_RE.sub(link, html[last:skip.start()]))
        out.append(skip.group(0))
        last = skip.end()
    out.append(MARKER_RE.sub(link, html[last:]))
    return "".join(out)
