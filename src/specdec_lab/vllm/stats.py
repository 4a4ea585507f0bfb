"""``SpecDecodeStats``: the one record every reader returns, and what follows from it.

Every format vLLM prints is reduced to the same counts — verification rounds, draft tokens,
accepted-prefix tokens, per-position counts — with how well the text pinned them down
(``num_drafts_range``, ``per_position_slack``) and what the reader had to decide
(``notes``). Everything else (E, vLLM's rate, α) is computed from these counts, never copied
from the text. ``check_consistent`` checks the invariants before a reader hands a record out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SOURCES = {
    "metrics": "/metrics（Prometheus 文字）",
    "prometheus-ui": "Prometheus 網頁的查詢結果表格",
    "log": "V1 伺服器 log 的 SpecDecoding metrics 行",
    "log-v0": "V0 伺服器 log 的 Speculative metrics 行",
    "bench": "vllm bench serve 的 Speculative Decoding 結果",
    "request": "每個請求回應裡的 metrics.speculative_decoding",
    "offline": "vLLM 離線範例 spec_decode_offline.py（舊版 spec_decode.py）印出的總計",
}
"""``source`` → what the record was read from (shown by ``str``)."""


@dataclass(frozen=True)
class SpecDecodeStats:
    """vLLM's speculative decoding counts, summed over engines (or requests).

    ``num_accepted_tokens`` counts accepted-prefix tokens: draft tokens accepted with every
    earlier one in the same round (what V1 counts; for V0 it is emitted − rounds).
    ``accepted_per_position[i]`` counts the rounds whose draft token at position i+1 was
    accepted; its length is k. ``k`` is set instead when the input names k but carries no
    per-position counts (V0 log lines, a per-request object without its histogram).

    ``num_drafts_range`` is ``None`` when the rounds were counted exactly (/metrics, bench JSON,
    per-request JSON, V0). A log line or a printed bench block gives rounded figures; the rounds
    are then the integers that reproduce all of them, from ``low`` to ``high`` — never below
    draft tokens ÷ k, so the range is not symmetric — and ``num_drafts`` is the likeliest one.
    ``per_position_slack[i]`` bounds how far the recovered count at position i can be off
    (empty when exact). ``notes`` say what the reader decided (duplicates counted once, the
    last cumulative V0 line taken, …).
    """

    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    accepted_per_position: tuple[int, ...]
    source: str = "metrics"
    num_drafts_range: tuple[int, int] | None = None
    per_position_slack: tuple[int, ...] = ()
    k: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def num_speculative_tokens(self) -> int:
        """k: the number of draft positions (``num_speculative_tokens``); 0 when unknown."""
        return len(self.accepted_per_position) or (self.k or 0)

    @property
    def num_drafts_uncertainty(self) -> int:
        """The largest distance from ``num_drafts`` to either end of ``num_drafts_range``."""
        if self.num_drafts_range is None:
            return 0
        low, high = self.num_drafts_range
        return max(self.num_drafts - low, high - self.num_drafts)

    @property
    def mean_acceptance_length(self) -> float:
        """Tokens per verification round, the bonus/correction token included: 1 + accepted ÷ drafts."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts

    @property
    def draft_acceptance_rate(self) -> float:
        """vLLM's "draft acceptance rate" as a fraction (not a percent): accepted ÷ drafted tokens. Not α."""
        return self.num_accepted_tokens / self.num_draft_tokens

    @property
    def per_position_acceptance(self) -> np.ndarray:
        """Share of rounds whose draft token at position i+1 was accepted (count ÷ drafts)."""
        return np.asarray(self.accepted_per_position, dtype=float) / self.num_drafts

    @property
    def full_length_drafts(self) -> bool:
        """True when every round drafted all k tokens (ngram may propose fewer)."""
        return self.num_draft_tokens == self.num_speculative_tokens * self.num_drafts

    def __str__(self) -> str:
        k = self.num_speculative_tokens
        drafts = f"{self.num_drafts:,}"
        if self.num_drafts_range is not None:
            low, high = self.num_drafts_range
            if low != high:
                drafts += f"（由四捨五入的數字推回，可能範圍 {low:,} 到 {high:,}）"
        lines = [
            f"來源：{SOURCES.get(self.source, self.source)}",
            f"驗證輪數 num_drafts = {drafts}",
            f"草稿 token 數 num_draft_tokens = {self.num_draft_tokens:,}",
            f"被接受的草稿 token 數 num_accepted_tokens = {self.num_accepted_tokens:,}",
            f"平均每輪產出 mean_acceptance_length = {self.mean_acceptance_length:.3f}",
            f"vLLM 的 draft acceptance rate = {self.draft_acceptance_rate:.3f}"
            "（接受 ÷ 草稿 token，分數不是百分比，也不是 α）",
        ]
        if self.accepted_per_position:
            rates = "、".join(f"{r:.3f}" for r in self.per_position_acceptance)
            lines.append(f"各位置接受比例（K = {k}）：{rates}")
            if any(self.per_position_slack):
                lines.append(f"（各位置的計數由四捨五入的比率推回，每格最多差 {max(self.per_position_slack)}）")
            lines.append(f"α（第 1 個位置的接受率）≈ {self.per_position_acceptance[0]:.3f}")
        elif k:
            lines.append(f"K = {k}，但沒有各位置的計數：量不到第 1 個位置的接受率 α")
        lines.extend(f"注意：{note}" for note in self.notes)
        return "\n".join(lines)


def check_consistent(s: SpecDecodeStats, hint: str) -> None:
    """The invariants vLLM's counting guarantees; a violation means a torn or edited input.

    ``hint`` tells the reader how to get a good copy (re-scrape, paste the whole log line).
    """
    if s.num_drafts == 0:
        raise ValueError(
            "num_drafts = 0：伺服器還沒做過任何一輪投機解碼。先送幾個請求（例如跑一次 vllm bench serve）再抓"
        )
    problems = []
    if s.num_draft_tokens < s.num_drafts:
        problems.append(f"num_draft_tokens（{s.num_draft_tokens}）小於 num_drafts（{s.num_drafts}），每輪至少有 1 個草稿 token")
    if s.num_accepted_tokens > s.num_draft_tokens:
        problems.append(f"num_accepted_tokens（{s.num_accepted_tokens}）大於 num_draft_tokens（{s.num_draft_tokens}）")
    k = s.num_speculative_tokens
    counts = s.accepted_per_position
    if counts:
        if sum(counts) != s.num_accepted_tokens:
            problems.append(
                f"各位置接受數的總和（{sum(counts)}）不等於 num_accepted_tokens（{s.num_accepted_tokens}）"
            )
        if counts[0] > s.num_drafts:
            problems.append(f"位置 0 的接受數（{counts[0]}）大於 num_drafts（{s.num_drafts}）")
        if any(b > a for a, b in zip(counts, counts[1:])):
            problems.append(f"各位置接受數必須隨位置遞減（後面的位置要前面全中才算），收到 {list(counts)}")
    if k and s.num_draft_tokens > k * s.num_drafts:
        problems.append(f"num_draft_tokens（{s.num_draft_tokens}）大於 k × num_drafts（{k} × {s.num_drafts}）")
    if problems:
        raise ValueError("計數器彼此矛盾，算出來的數字不可信：" + "；".join(problems) + "。" + hint)
