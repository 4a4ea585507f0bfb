"""Counts back from the rounded ratios vLLM prints (log lines: 3 decimals; the bench block: 2).

``counts_for`` finds per-position counts for a given number of rounds that print as the given
rates, sum to the accepted tokens and do not grow with position; ``slack`` says how far each
recovered count can be off.
"""
from __future__ import annotations

import math


def windows(rates: list[float], d: int, half: float) -> tuple[list[int], list[int]]:
    """Per position, the smallest and largest count out of ``d`` rounds that rounds to the rate."""
    lo = [max(0, math.ceil((r - half) * d - 1e-9)) for r in rates]
    hi = [min(d, math.floor((r + half) * d + 1e-9)) for r in rates]
    return lo, hi


def counts_for(rates: list[float], d: int, accepted: int, half: float) -> list[int] | None:
    """Per-position counts for ``d`` rounds that print as ``rates`` (± ``half``), sum to
    ``accepted`` and do not grow with position; None if there are none."""
    lo, hi = windows(rates, d, half)
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


def slack(rates: list[float], d: int, counts: list[int], half: float, accepted: int) -> list[int]:
    """How far each recovered count can be from the true one: its rounding window at ``d``,
    narrowed by the other positions' windows, since all counts sum to ``accepted``."""
    lo, hi = windows(rates, d, half)
    out = []
    for i, c in enumerate(counts):
        low = max(lo[i], accepted - (sum(hi) - hi[i]))
        high = min(hi[i], accepted - (sum(lo) - lo[i]))
        out.append(max(c - low, high - c, 0))
    return out
