"""The server log's "SpecDecoding metrics:" lines → ``SpecDecodeStats``.

vLLM's ``SpecDecodingLogging`` prints one line per logging interval (about 10 s). It prints the
accepted and drafted tokens exactly, but the mean acceptance length (2 decimals) and the
per-position rates (3 decimals) rounded, and not the number of rounds: that number is recovered
here as the integer that reproduces every printed figure. Several lines are added up.
"""
from __future__ import annotations

import math
import re

from .stats import SpecDecodeStats, check_consistent

LOG_MARKER = "SpecDecoding metrics:"

_FIELDS = {  # the printed name → its value
    "Mean acceptance length": re.compile(r"Mean acceptance length:\s*([0-9.]+|nan)"),
    "Accepted": re.compile(r"Accepted:\s*(\d+)\s*tokens"),
    "Drafted": re.compile(r"Drafted:\s*(\d+)\s*tokens"),
    "Per-position acceptance rate": re.compile(
        r"Per-position acceptance rate:\s*((?:[0-9.]+|nan)(?:,\s*(?:[0-9.]+|nan))*)"),
}


def from_log(text: str) -> SpecDecodeStats:
    """Every "SpecDecoding metrics:" line in ``text``, added up (all must have the same k)."""
    lines = [line for line in text.splitlines() if LOG_MARKER in line]
    parts = [_log_line(line[line.index(LOG_MARKER):], n) for n, line in enumerate(lines, 1)]
    ks = {len(p.accepted_per_position) for p in parts}
    if len(ks) != 1:
        raise ValueError(f"這幾行 log 的位置數（k）不一致：{sorted(ks)}。請只貼同一次啟動的 log")
    k = ks.pop()
    return SpecDecodeStats(
        num_drafts=sum(p.num_drafts for p in parts),
        num_draft_tokens=sum(p.num_draft_tokens for p in parts),
        num_accepted_tokens=sum(p.num_accepted_tokens for p in parts),
        accepted_per_position=tuple(sum(p.accepted_per_position[i] for p in parts) for i in range(k)),
        source="log",
        num_drafts_uncertainty=sum(p.num_drafts_uncertainty for p in parts),
    )


def _log_line(line: str, number: int) -> SpecDecodeStats:
    """One log line → counts. The line prints accepted and drafted tokens exactly, but the mean
    acceptance length (2 decimals) and per-position rates (3 decimals) rounded; the number of
    rounds D is the integer that reproduces all of them, with per-position counts summing to the
    accepted tokens."""
    found = {name: rx.search(line) for name, rx in _FIELDS.items()}
    missing = [name for name, m in found.items() if m is None]
    if missing:
        raise ValueError(
            f"第 {number} 行 SpecDecoding metrics log 缺少 " + "、".join(missing)
            + "（舊版 vLLM 的 log 只印比率）。請改貼 /metrics 的內容"
        )
    accepted = int(found["Accepted"][1])
    drafted = int(found["Drafted"][1])
    if drafted == 0:
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 的 Drafted 是 0：那段時間沒有投機解碼")
    rates = [float(r) for r in found["Per-position acceptance rate"][1].split(",")]
    length = float(found["Mean acceptance length"][1])
    if not all(math.isfinite(r) for r in rates + [length]):
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 含有 nan，無法推回計數")
    k = len(rates)
    low = max(1, math.ceil(drafted / k))
    high = drafted
    if length - 0.005 - 1 > 0:
        high = min(high, math.floor(accepted / (length - 0.005 - 1) + 1e-9))
    low = max(low, math.ceil(accepted / (length + 0.005 - 1) - 1e-9))
    fits = []
    for d in range(low, high + 1):
        counts = _counts_for(rates, d, accepted)
        if counts is not None and round(1 + accepted / d, 2) == round(length, 2):
            fits.append((d, counts))
    if not fits:
        raise ValueError(
            f"第 {number} 行 SpecDecoding metrics log 的數字彼此矛盾（找不到一個驗證輪數能同時符合 "
            f"Mean acceptance length {length}、Accepted {accepted}、各位置比率 {rates}）：是不是改過或截斷了？"
        )
    # Every round drafts at most k tokens, so D ≥ drafted ÷ k, with equality when every round
    # drafted all k (draft models, EAGLE, MTP). Prefer that D when the printed numbers allow it;
    # otherwise take the middle of the range that fits.
    full = [fit for fit in fits if fit[0] * k == drafted]
    d, counts = full[0] if full else fits[len(fits) // 2]
    uncertainty = max(d - fits[0][0], fits[-1][0] - d)
    stats = SpecDecodeStats(d, drafted, accepted, tuple(counts), "log", uncertainty)
    check_consistent(stats, "請確認貼上的是完整的一行 log")
    return stats


def _counts_for(rates: list[float], d: int, accepted: int) -> list[int] | None:
    """Per-position counts for d rounds that print as ``rates`` (3 decimals), sum to
    ``accepted`` and do not grow with position; None if there are none."""
    lo = [max(0, math.ceil((r - 0.0005) * d - 1e-9)) for r in rates]
    hi = [min(d, math.floor((r + 0.0005) * d + 1e-9)) for r in rates]
    if any(a > b for a, b in zip(lo, hi)) or not sum(lo) <= accepted <= sum(hi):
        return None
    counts = [min(max(round(r * d), a), b) for r, a, b in zip(rates, lo, hi)]
    gap = accepted - sum(counts)
    order = range(len(counts)) if gap > 0 else reversed(range(len(counts)))
    for i in order:
        room = (hi[i] - counts[i]) if gap > 0 else (counts[i] - lo[i])
        step = min(abs(gap), room)
        counts[i] += step if gap > 0 else -step
        gap += -step if gap > 0 else step
    if any(b > a for a, b in zip(counts, counts[1:])):
        return None
    return counts

