"""``SpecDecodeStats``: vLLM's four speculative decoding counters, and what follows from them.

Both readers (``metrics`` for a ``/metrics`` scrape, ``log_line`` for the server log) return
this object and check it with ``check_consistent`` before handing it out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SpecDecodeStats:
    """vLLM's speculative decoding counters, summed over engines.

    ``accepted_per_position[i]`` counts the rounds whose draft token at position i+1 was
    accepted (so every earlier one was too); its length is k, the number of speculative tokens.
    ``num_drafts_uncertainty`` is 0 for a /metrics scrape. A log line prints rounded ratios, not
    the number of rounds; that number is then recovered from the ratios and is exact only when
    one integer fits them all — otherwise it is the middle of the fitting range and this field
    says how far off it can be.
    """

    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    accepted_per_position: tuple[int, ...]
    source: str = "metrics"  # "metrics" or "log"
    num_drafts_uncertainty: int = 0

    @property
    def num_speculative_tokens(self) -> int:
        """k: the number of draft positions vLLM counts (``num_speculative_tokens``)."""
        return len(self.accepted_per_position)

    @property
    def mean_acceptance_length(self) -> float:
        """Tokens per verification round, the bonus/correction token included: 1 + accepted ÷ drafts."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts

    @property
    def draft_acceptance_rate(self) -> float:
        """vLLM's "draft acceptance rate" as a fraction: accepted ÷ drafted tokens. Not α."""
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
        if self.num_drafts_uncertainty:
            drafts += f"（± {self.num_drafts_uncertainty}，由 log 的四捨五入數字推回）"
        lines = [
            f"來源：{'/metrics' if self.source == 'metrics' else 'SpecDecoding metrics log'}",
            f"驗證輪數 num_drafts = {drafts}",
            f"草稿 token 數 num_draft_tokens = {self.num_draft_tokens:,}",
            f"被接受的草稿 token 數 num_accepted_tokens = {self.num_accepted_tokens:,}",
            f"平均每輪產出 mean_acceptance_length = {self.mean_acceptance_length:.3f}",
            f"vLLM 的 draft acceptance rate = {self.draft_acceptance_rate:.3f}（接受 ÷ 草稿 token，不是 α）",
        ]
        if k:
            rates = "、".join(f"{r:.3f}" for r in self.per_position_acceptance)
            lines.append(f"各位置接受比例（k = {k}）：{rates}")
            lines.append(f"α（第 1 個位置的接受率）≈ {self.per_position_acceptance[0]:.3f}")
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
    if k:
        counts = s.accepted_per_position
        if sum(counts) != s.num_accepted_tokens:
            problems.append(
                f"各位置接受數的總和（{sum(counts)}）不等於 num_accepted_tokens（{s.num_accepted_tokens}）"
            )
        if counts[0] > s.num_drafts:
            problems.append(f"位置 0 的接受數（{counts[0]}）大於 num_drafts（{s.num_drafts}）")
        if any(b > a for a, b in zip(counts, counts[1:])):
            problems.append(f"各位置接受數必須隨位置遞減（後面的位置要前面全中才算），收到 {list(counts)}")
        if s.num_draft_tokens > k * s.num_drafts:
            problems.append(
                f"num_draft_tokens（{s.num_draft_tokens}）大於 k × num_drafts（{k} × {s.num_drafts}）"
            )
    if problems:
        raise ValueError("計數器彼此矛盾，算出來的數字不可信：" + "；".join(problems) + "。" + hint)
