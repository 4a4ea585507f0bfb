"""Small tables that print as aligned text and render as HTML in a notebook (no matplotlib).

``round_table`` shows one verification round position by position (lesson 1, section 2️⃣).
A notebook shows a table with ``Table`` rather than with padded ``print`` calls: f-string padding
counts characters, and a Chinese character takes two columns in a monospace font, so columns
padded that way drift apart; ``Table`` pads by ``display_width``.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from html import escape

import numpy as np

from .verification import RoundResult


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: wide (Chinese) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int, align: str = "<") -> str:
    room = " " * (width - display_width(text))
    return room + text if align == ">" else text + room


@dataclass(frozen=True)
class Table:
    """A small table that prints as aligned text and renders as HTML in a notebook.

    ``align`` has one character per column, ``"<"`` (left) or ``">"`` (right, for numbers);
    empty means every column is left-aligned.

    >>> print(Table(("任務", "輪數"), (("改寫", "1193"), ("自由發揮", "25")), align="<>"))
    任務      輪數
    改寫      1193
    自由發揮    25
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    align: str = ""

    def __post_init__(self) -> None:
        n = len(self.headers)
        for i, row in enumerate(self.rows):
            if len(row) != n:
                raise ValueError(f"rows[{i}] 必須有 {n} 格（和 headers 一樣多），收到 {len(row)} 格")
        if self.align and (len(self.align) != n or set(self.align) - {"<", ">"}):
            raise ValueError(f"align 必須是 {n} 個「<」或「>」（每欄一個，或留空表示都靠左），收到 {self.align!r}")

    def _aligns(self) -> str:
        return self.align or "<" * len(self.headers)

    def __str__(self) -> str:
        widths = [max(display_width(c) for c in col) for col in zip(self.headers, *self.rows)]
        lines = [self.caption] if self.caption else []
        for row in (self.headers, *self.rows):
            lines.append("  ".join(_pad(c, w, a) for c, w, a in zip(row, widths, self._aligns())).rstrip())
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        # explicit alignment only when asked for, so a table without ``align`` keeps the notebook's own style
        align = [f"text-align: {'right' if a == '>' else 'left'}; " if self.align else ""
                 for a in self._aligns()]
        style = [f' style="{a.rstrip("; ")}"' if a else "" for a in align]
        # a header breaks between words only: on a phone a squeezed column broke 位置 into 位／置
        head = "".join(f'<th style="{a}word-break: keep-all">{escape(h)}</th>' for h, a in zip(self.headers, align))
        body = "".join(
            "<tr>" + "".join(f"<td{s}>{escape(c)}</td>" for c, s in zip(row, style)) + "</tr>"
            for row in self.rows
        )
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def round_table(result: RoundResult, draft_tokens, vocab=None) -> Table:
    """One verification round, one row per draft position.

    Sampling rounds show p (the target's probability of the draft token) and q (the draft's) to
    3 significant digits, min(1, p/q), the uniform draw u and the verdict; greedy rounds show the target's argmax.
    Positions after the first rejection are listed as discarded. ``vocab`` maps token ids to text.
    """
    draft_tokens = [int(t) for t in np.asarray(draft_tokens).ravel()]
    if len(draft_tokens) < len(result.steps):
        raise ValueError(f"draft_tokens 必須是這一輪的草稿：result 判了 {len(result.steps)} 個位置，"
                         f"draft_tokens 只有 {len(draft_tokens)} 個")
    if vocab is not None:
        outside = [t for t in [*draft_tokens, *result.tokens] if not 0 <= t < len(vocab)]
        if outside:
            raise ValueError(f"vocab 必須涵蓋這一輪的每個 token 編號，有效範圍 [0, {len(vocab) - 1}]；"
                             f"收到編號 {outside[0]}")
    name = (lambda t: str(vocab[t])) if vocab is not None else str
    greedy = bool(result.steps) and result.steps[0].u is None
    if greedy:
        headers = ("位置", "草稿猜", "大模型的首選", "p(草稿字)", "判定")
    else:
        headers = ("位置", "草稿猜", "p", "q", "min(1, p/q)", "u", "判定")
    fix = "改用" if greedy else "重抽得"
    rows = []
    for step in result.steps:
        verdict = "✓ 接受" if step.accepted else f"✗ 拒絕 → {fix}「{name(step.target_token)}」"
        if greedy:
            numbers = (name(step.target_token), f"{step.p:.2f}")
        else:
            # p and q to 3 significant digits: min(1, p/q) worked out by hand from the shown
            # ones comes out as shown (at 2 decimals, p 0.0133 and q 0.2453 read "0.01 / 0.25 =
            # 0.04" beside the row's 0.05)
            numbers = (f"{step.p:#.3g}", f"{step.q:#.3g}", f"{step.accept_prob:.2f}", f"{step.u:.2f}")
        rows.append((str(step.position), name(step.draft_token), *numbers, verdict))
    for position in range(len(result.steps) + 1, len(draft_tokens) + 1):
        blank = ("—",) * (len(headers) - 3)
        rows.append((str(position), name(draft_tokens[position - 1]), *blank, "丟掉（前提已錯）"))
    extra = " bonus" if result.bonus else "修正"
    text = "".join(name(t) for t in result.tokens)
    caption = (
        f"這一輪產出 {len(result.tokens)} 個 token：「{text}」"
        f"（接受 {result.n_accepted} 個 ＋ 大模型給的{extra} 1 個）"
    )
    return Table(headers, tuple(rows), caption)
