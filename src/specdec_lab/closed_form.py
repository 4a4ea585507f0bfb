"""Closed forms of speculative decoding (Leviathan et al. 2023, §3).

With acceptance rate ``alpha`` (α, the chance that the target accepts one draft token, assumed
i.i.d. across positions) and ``k`` draft tokens per round, the number of tokens one verification
round produces is the run of accepted tokens before the first rejection, plus one token the
target gives for free (the correction at the first rejection, or the bonus token when all ``k``
were accepted):

    E[tokens per round] = 1 + α + α² + … + α^k = (1 − α^(k+1)) / (1 − α)      (Eq. 1)

and with a draft step costing ``draft_cost`` (c) of a target step, the wall-time speedup is

    speedup = E[tokens per round] / (1 + k·c)                                  (Theorem 3.8)
"""
from __future__ import annotations

import numpy as np

from . import _validate as check


def expected_tokens(alpha, k):
    """Expected tokens per verification round, ``(1 − α^(k+1)) / (1 − α)``.

    Exactly ``k + 1`` at α = 1 and 1 at α = 0 or k = 0. Accurate as α → 1 (no cancellation at
    α = 1 − 1e−12). ``alpha`` and ``k`` broadcast like numpy ufuncs.

    >>> round(expected_tokens(0.8, 5), 2)
    3.69
    """
    a = check.probability("alpha", alpha)
    kk = check.integer("k", k)
    return check.unwrap(_expected_tokens(a, kk))


def _expected_tokens(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    # 1 − α^(k+1) = −expm1((k+1)·log α) and log α = log1p(α − 1), where α − 1 is exact in binary
    # floating point for α in [0.5, 1]: no cancellation as α → 1.
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a = np.log1p(a - 1.0)
        numerator = -np.expm1((k + 1) * log_a)
        ratio = numerator / (1.0 - a)
    out = np.where(a == 1.0, k + 1.0, ratio)
    return np.where(k == 0, 1.0, out)


def speedup(alpha, k, draft_cost):
    """Wall-time speedup of one round over plain decoding: ``expected_tokens / (1 + k·draft_cost)``.

    ``draft_cost`` is the cost of one draft step relative to one target step (0.05 = 5 %).
    Broadcasts over all three arguments.

    >>> round(speedup(0.6, 1, 0.3), 4)
    1.2308
    """
    a = check.probability("alpha", alpha)
    kk = check.integer("k", k)
    c = check.nonnegative("draft_cost", draft_cost)
    return check.unwrap(_expected_tokens(a, kk) / (1.0 + kk * c))


def _speedup_table(alpha, draft_cost, k_max) -> tuple[np.ndarray, np.ndarray]:
    """Speedups for k = 1..k_max along a new last axis."""
    a = check.probability("alpha", alpha)
    c = check.nonnegative("draft_cost", draft_cost)
    k_max = check.scalar_int("k_max", k_max, minimum=1, maximum=10_000)
    ks = np.arange(1, k_max + 1)
    a, c = np.broadcast_arrays(a, c)
    table = _expected_tokens(a[..., None], ks) / (1.0 + ks * c[..., None])
    return ks, table


def best_k(alpha, draft_cost, k_max=20):
    """The integer k in 1..k_max with the largest ``speedup`` (the smallest such k on ties).

    >>> best_k(0.6, 0.3)
    1
    """
    ks, table = _speedup_table(alpha, draft_cost, k_max)
    return check.unwrap(ks[np.argmax(table, axis=-1)], like_int=True)


def knee_k(alpha, draft_cost, fraction=0.95, k_max=20):
    """Where the speedup curve flattens: the smallest k whose speedup is at least
    ``fraction`` × the best speedup in 1..k_max.

    Past this k, each extra draft token buys less than ``1 − fraction`` of the best speedup
    while costing GPU work that other users could have had.
    """
    f = check.probability("fraction", fraction, what="0 與 1 之間的比例")
    if np.any(f == 0):
        raise ValueError("fraction 必須大於 0，有效範圍 (0, 1]；收到 0")
    ks, table = _speedup_table(alpha, draft_cost, k_max)
    good = table >= f[..., None] * table.max(axis=-1, keepdims=True)
    return check.unwrap(ks[np.argmax(good, axis=-1)], like_int=True)


def expected_tokens_positional(alphas):
    """Eq. 1 with a different acceptance at each draft position.

    ``alphas[i]`` is the chance that draft position i+1 is accepted given that every earlier one
    was. The round yields ``1 + Σᵢ Πⱼ≤ᵢ αⱼ`` tokens on average; equal αs give Eq. 1. Positions
    run along the last axis, so a batch of profiles is one call.

    >>> expected_tokens_positional([0.8, 0.8, 0.8]) == expected_tokens(0.8, 3)
    True
    """
    if np.ndim(alphas) == 0:
        raise ValueError(f"alphas 必須是一串各位置的接受率（一維陣列），收到單一數值 {alphas!r}")
    shape = np.shape(alphas)
    if shape[-1] == 0:  # no draft positions: the target's own token only
        return 1.0 if len(shape) == 1 else np.ones(shape[:-1])
    a = check.probability("alphas", alphas)
    return check.unwrap(1.0 + np.cumprod(a, axis=-1).sum(axis=-1))
