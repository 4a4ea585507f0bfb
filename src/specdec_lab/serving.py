"""A teaching model of one GPU serving N concurrent users, with and without speculation.

Time is measured in t0, the time to read the target model's weights once (lesson 1's t₀; T is
the temperature there). A forward pass of the target over n tokens (all users' positions
together) follows a roofline:

    step(n) = max(1, t_flop · n)

— reading the weights costs 1 whatever n is, and the arithmetic, ``t_flop`` per token, hides
under that read until it exceeds it. A draft step is the same shape scaled by its relative cost:
``draft_cost · step(N)``.

* Off: one target step over N tokens gives every user 1 token.
      per-user speed = 1 / step(N),   total throughput = N / step(N)
* On:  a round is k draft steps plus one verification of k+1 positions per user, and gives
       every user E = expected_tokens(α, k) tokens on average.
      T_round = k · draft_cost · step(N) + step(N · (k+1))
      per-user speed = E / T_round,   total throughput = N · E / T_round

Speculation pays while the verification's extra arithmetic still hides under the weight read.
Dividing, on/off = E / (k·draft_cost + step(N(k+1)) / step(N)); the last ratio climbs from 1
(memory-bound) to k+1 (compute-bound), so speculation loses once it passes E − k·draft_cost:

    N* = (E − k·draft_cost) / (t_flop · (k+1))     when 1 < E − k·draft_cost < k+1

with N* = 0 when speculation never helps (E ≤ 1 + k·draft_cost) and N* = ∞ when it never hurts
(t_flop = 0, or every draft token free and accepted). A stronger GPU (smaller t_flop) pushes N*
to the right. The numbers are a model for seeing the trend, not a prediction for your card.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .closed_form import _expected_tokens

DEFAULT_T_FLOP = 0.02
"""Arithmetic time per token, in units of one weight read (the course's default GPU)."""


@dataclass(frozen=True)
class ServingCurves:
    """Per-user speed and total throughput (tokens per t0) at each concurrency, off and on."""

    concurrency: np.ndarray
    per_user_off: np.ndarray
    per_user_on: np.ndarray
    throughput_off: np.ndarray
    throughput_on: np.ndarray

    @property
    def gain(self) -> np.ndarray:
        """on ÷ off; the same ratio for per-user speed and for total throughput."""
        return self.throughput_on / self.throughput_off


def _step(t_flop, n):
    return np.maximum(1.0, t_flop * n)


def serving_curves(concurrency, alpha, k, draft_cost, t_flop=DEFAULT_T_FLOP) -> ServingCurves:
    """Evaluate the model at each concurrency (an array of user counts > 0).

    ``alpha``, ``k`` and ``draft_cost`` are single numbers here (one configuration per call).
    """
    n = check.positive("concurrency", concurrency, what="正的使用者人數")
    for name, value in (("alpha", alpha), ("k", k), ("draft_cost", draft_cost), ("t_flop", t_flop)):
        check.scalar(name, value)
    a = check.probability("alpha", alpha)
    kk = check.integer("k", k)
    c = check.nonnegative("draft_cost", draft_cost)
    t = check.nonnegative("t_flop", t_flop)
    e = _expected_tokens(a, kk)
    t_off = _step(t, n)
    t_on = kk * c * _step(t, n) + _step(t, n * (kk + 1))
    return ServingCurves(
        concurrency=n,
        per_user_off=1.0 / t_off,
        per_user_on=e / t_on,
        throughput_off=n / t_off,
        throughput_on=n * e / t_on,
    )


def crossover_concurrency(alpha, k, draft_cost, t_flop=DEFAULT_T_FLOP):
    """The concurrency above which speculation lowers total throughput (see the module text).

    0.0 when speculation never helps, ``inf`` when it never hurts. Broadcasts.

    >>> round(crossover_concurrency(0.8, 5, 0.05), 1)
    28.7
    """
    a = check.probability("alpha", alpha)
    kk = check.integer("k", k)
    c = check.nonnegative("draft_cost", draft_cost)
    t = check.nonnegative("t_flop", t_flop)
    margin = _expected_tokens(a, kk) - kk * c  # the step(N(k+1))/step(N) ratio at break-even
    with np.errstate(divide="ignore", invalid="ignore"):
        n_star = margin / (t * (kk + 1))
    never_helps = margin <= 1.0
    never_hurts = ~never_helps & ((t == 0) | (margin >= kk + 1))
    out = np.where(never_helps, 0.0, np.where(never_hurts, np.inf, n_star))
    return check.unwrap(out)
