"""Small tables that print as aligned text and render as HTML in a notebook (no matplotlib).

``round_table`` shows one verification round position by position (lesson 1, section 2️⃣).
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


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


@dataclass(frozen=True)
class Table:
    """A small table that prints as aligned text and renders as HTML in a notebook."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def __str__(self) -> str:
        widths = [max(display_width(c) for c in col) for col in zip(self.headers, *self.rows)]
        lines = [self.caption] if self.caption else []
        for row in (self.headers, *self.rows):
            lines.append("  ".join(_pad(c, w) for c, w in zip(row, widths)).rstrip())
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def round_table(result: RoundResult, draft_tokens, vocab=None) -> Table:
    """One verification round, one row per draft position.

    Sampling rounds show p (the target's probability of the draft token), q (the draft's),
    min(1, p/q), the uniform draw u and the verdict; greedy rounds show the target's argmax.
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
            numbers = (f"{step.p:.2f}", f"{step.q:.2f}", f"{step.accept_prob:.2f}", f"{step.u:.2f}")
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
