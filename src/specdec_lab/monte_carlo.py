"""Monte Carlo of verification rounds, to check Eq. 1 by brute force.

Each round, every one of the ``k`` draft tokens is accepted independently with probability α.
The round keeps the draft tokens up to the first rejection and adds the one token the target
gives for free, so it yields ``1 + (hits before the first miss)`` tokens, an integer in 1..k+1.

Only the position of the first miss matters, so the simulation draws it directly instead of
flipping k coins: the run of hits is at least m with probability α^m, which is what
``floor(log U / log α)`` gives for a uniform U (inverse transform sampling). One uniform per
round, all rounds in one numpy call: no Python loop per round.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .closed_form import _expected_tokens

MAX_ROUNDS = 50_000_000
MAX_K = 1_000_000  # token_distribution holds k + 1 probabilities


def simulate_rounds(alpha, k, rounds=30_000, seed=None) -> np.ndarray:
    """Tokens produced in each of ``rounds`` simulated rounds (ints in 1..k+1).

    ``seed`` is an int or a ``numpy.random.Generator``; the same seed gives the same rounds.

    >>> simulate_rounds(0.8, 5, rounds=8, seed=1)
    array([4, 1, 6, 1, 6, 4, 1, 5])
    """
    check.scalar("alpha", alpha)
    a = float(check.probability("alpha", alpha))
    k = check.scalar_int("k", k, minimum=0, maximum=MAX_K)
    rounds = check.scalar_int("rounds", rounds, minimum=1, maximum=MAX_ROUNDS)
    rng = check.seed_or_generator(seed)
    u = rng.random(rounds)
    if a == 0.0 or a == 1.0 or k == 0:  # every round alike; log α is 0 or −∞
        return np.full(rounds, k + 1 if a == 1.0 else 1, dtype=np.int64)
    # hits before the first miss: P(run ≥ m) = P(U ≤ α^m) = α^m. In place: no temporaries;
    # run ≥ 0, so the integer cast (truncation) is the floor.
    run = np.log(u, out=u)
    run *= 1.0 / np.log(a)
    np.minimum(run, k, out=run)
    tokens = run.astype(np.int64)
    tokens += 1
    return tokens


@dataclass(frozen=True)
class MonteCarloCheck:
    """Simulated rounds against the closed form.

    ``counts[i]`` is the number of rounds that produced ``i + 1`` tokens; ``z`` is
    ``(mean − closed_form) / std_error``, so |z| ≤ 5 is the agreement a fixed seed should show.
    """

    alpha: float
    k: int
    rounds: int
    mean: float
    closed_form: float
    std_error: float
    z: float
    counts: np.ndarray

    @property
    def tokens(self) -> np.ndarray:
        """The histogram's x axis: 1..k+1 tokens per round."""
        return np.arange(1, self.k + 2)

    @property
    def frequencies(self) -> np.ndarray:
        return self.counts / self.rounds

    @property
    def probabilities(self) -> np.ndarray:
        """The exact distribution: P(j tokens) = α^(j−1)(1−α) for j ≤ k, P(k+1) = α^k."""
        return token_distribution(self.alpha, self.k)

    def __str__(self) -> str:
        return (
            f"α = {self.alpha:g}、K = {self.k}：模擬 {self.rounds:,} 輪平均 {self.mean:.4f}，\n"
            f"閉式解 {self.closed_form:.4f}，標準誤 {self.std_error:.4f}，z = {self.z:+.2f}"
        )


def token_distribution(alpha, k) -> np.ndarray:
    """P(a round yields j tokens) for j = 1..k+1 (a truncated geometric distribution)."""
    check.scalar("alpha", alpha)
    a = float(check.probability("alpha", alpha))
    k = check.scalar_int("k", k, minimum=0, maximum=MAX_K)
    j = np.arange(k + 1)
    p = a**j * (1.0 - a)
    p[k] = a**k
    return p


def monte_carlo_check(alpha, k, rounds=30_000, seed=None) -> MonteCarloCheck:
    """Simulate ``rounds`` rounds and compare their mean with Eq. 1."""
    sample = simulate_rounds(alpha, k, rounds=rounds, seed=seed)
    a, k = float(alpha), int(k)
    n = sample.size
    mean = float(sample.mean())
    closed = float(_expected_tokens(np.float64(a), np.int64(k)))
    se = float(sample.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    if se > 0:
        z = (mean - closed) / se
    else:  # every round identical (α = 0 or 1, k = 0): only an exact match agrees
        z = 0.0 if np.isclose(mean, closed, rtol=0, atol=1e-12) else float("inf")
    # bincount casts "safely" to intp, which is 32-bit in Pyodide (wasm32): hand it intp
    counts = np.bincount((sample - 1).astype(np.intp), minlength=k + 1)
    return MonteCarloCheck(a, k, n, mean, closed, se, float(z), counts)
