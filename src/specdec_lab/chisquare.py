"""Pearson's chi-square test in plain numpy, so it runs in the browser without scipy.

Two uses in the course: the lossless lab compares the tokens a decoder emitted with the target's
exact next-token probabilities, and ``specdec_lab.vllm`` checks whether acceptance looks the same
at every draft position.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate as check

MIN_EXPECTED = 5.0
"""Cells expected to hold fewer counts than this are pooled, so the χ² approximation holds."""
MAX_DOF = 1_000_000
"""``chi2_sf`` sums about dof / 2 terms: a quarter of a second at this many degrees of freedom."""


def chi2_sf(x: float, dof: int) -> float:
    """P(χ²_dof ≥ x), the p-value of a chi-square statistic ``x`` with ``dof`` degrees of freedom.

    Exact for integer ``dof`` (the regularized upper incomplete gamma function Q(dof/2, x/2) as
    a finite sum; an erfc term for odd ``dof``), summed in log space so large statistics give
    tiny p-values instead of overflow.
    """
    return _chi2_sf(x, check.scalar_int("dof", dof, minimum=1, maximum=MAX_DOF))


def _chi2_sf(x: float, dof: int) -> float:
    """``chi2_sf`` for a ``dof`` known to be an integer in [1, MAX_DOF]."""
    x = float(x)
    if not (x >= 0.0) or math.isinf(x):
        if math.isinf(x) and x > 0:
            return 0.0
        raise ValueError(f"x 必須是非負的卡方統計量，有效範圍 [0, ∞)；收到 {x!r}")
    half = x / 2.0
    if x == 0.0:
        return 1.0
    log_half = math.log(half)
    if dof % 2 == 0:
        # Q(m, h) = e^{-h} Σ_{j<m} h^j / j!
        terms = [j * log_half - math.lgamma(j + 1) for j in range(dof // 2)]
        return float(min(1.0, math.exp(_logsumexp(terms) - half)))
    # Q(m + 1/2, h) = erfc(√h) + e^{-h} Σ_{j=1..m} h^{j-1/2} / Γ(j + 1/2)
    head = math.erfc(math.sqrt(half))
    if dof == 1:
        return head
    terms = [(j - 0.5) * log_half - math.lgamma(j + 0.5) for j in range(1, (dof - 1) // 2 + 1)]
    return float(min(1.0, head + math.exp(_logsumexp(terms) - half)))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def p_text(p: float, mathtext: bool = False) -> str:
    """A p-value as the course prints it: "p = 0.51", "p = 1.3×10⁻⁴⁸", or "p < 10⁻³⁰⁰" when the
    float underflowed (``chi2_sf`` works in log space, so 0.0 means below ~1e-323). Powers of ten
    as the lessons write them, with no space or hyphen, so a line never breaks inside the number
    (a line broke "1e-300" after its "-" in the notebook's narrow panel). ``mathtext=True`` writes
    the power for a matplotlib title ($1.3\\times10^{-48}$): the Chinese font has no superscript
    minus."""
    if p < 1e-300:
        mantissa, exponent, relation = "", -300, "<"
    else:
        text = f"{p:.2g}"
        if "e" not in text:
            return f"p = {text}"
        mantissa, power = text.split("e")
        exponent, relation = int(power), "="
    if mathtext:
        number = "$" + (rf"{mantissa}\times" if mantissa else "") + f"10^{{{exponent}}}$"
    else:
        number = f"{mantissa + '×' if mantissa else ''}10{str(exponent).translate(_SUPERSCRIPT)}"
    return f"p {relation} {number}"


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


@dataclass(frozen=True)
class ChiSquareResult:
    """A goodness-of-fit test after pooling the small cells."""

    statistic: float
    dof: int
    p_value: float
    observed: np.ndarray  # counts per cell after pooling
    expected: np.ndarray  # expected counts per cell after pooling
    labels: list  # what each cell holds; the pooled cell is labelled "其他"

    def __str__(self) -> str:
        return f"χ² = {self.statistic:.2f}，自由度 {self.dof}，{p_text(self.p_value)}"


def goodness_of_fit(observed, probabilities, labels=None, min_expected=MIN_EXPECTED) -> ChiSquareResult:
    """Pearson's test that ``observed`` counts were drawn from ``probabilities``.

    Cells whose expected count is below ``min_expected`` are pooled into one cell labelled
    "其他" (and if that pooled cell is itself too small, it is merged with the smallest other
    cell), so every cell in the test expects at least ``min_expected``.
    """
    obs = np.asarray(observed, dtype=float)
    prob = np.asarray(probabilities, dtype=float)
    if obs.ndim != 1 or prob.shape != obs.shape:
        raise ValueError(
            f"observed 與 probabilities 必須是一樣長的一維陣列，收到形狀 {obs.shape} 與 {prob.shape}"
        )
    bad = np.flatnonzero(~(np.isfinite(obs) & (obs >= 0) & (obs == np.round(obs))))
    if bad.size:
        raise ValueError(f"observed 必須是非負整數的計數，第 {bad[0]} 格是 {obs[bad[0]]:g}")
    bad = np.flatnonzero(~(np.isfinite(prob) & (prob >= 0)))
    if bad.size:
        raise ValueError(f"probabilities 必須是 [0, 1] 之間的機率，第 {bad[0]} 格是 {prob[bad[0]]:g}")
    if abs(prob.sum() - 1.0) > 1e-6:
        raise ValueError(f"probabilities 必須是非負且總和為 1 的機率，收到總和 {prob.sum():.6g}")
    if labels is not None and len(labels) != obs.size:
        raise ValueError(f"labels 必須每格一個名稱：observed 有 {obs.size} 格，labels 有 {len(labels)} 個")
    check.scalar("min_expected", min_expected)
    min_expected = float(check.positive("min_expected", min_expected))
    if obs.sum() < 1:
        raise ValueError("observed 的總數是 0：沒有任何樣本可以檢定")
    return _pearson(obs, prob, list(range(obs.size)) if labels is None else list(labels), min_expected)


def _pearson(obs: np.ndarray, prob: np.ndarray, labels, min_expected: float = MIN_EXPECTED) -> ChiSquareResult:
    """``goodness_of_fit`` once its input is known to be valid (float counts with a positive
    total, probabilities summing to 1, one label per cell): the pooling and the test."""
    n = obs.sum()
    expected = n * prob
    big = expected >= min_expected
    if np.any(obs[expected == 0] > 0):
        return ChiSquareResult(math.inf, max(1, int(big.sum())), 0.0, obs, expected, labels)
    cells_obs = list(obs[big])
    cells_exp = list(expected[big])
    cells_lab = [labels[i] for i in np.flatnonzero(big)]
    rest_exp = expected[~big].sum()
    if rest_exp > 0:
        cells_obs.append(obs[~big].sum())
        cells_exp.append(rest_exp)
        cells_lab.append("其他")
        if rest_exp < min_expected and len(cells_exp) > 2:
            j = int(np.argmin(cells_exp[:-1]))
            cells_obs[-1] += cells_obs.pop(j)
            cells_exp[-1] += cells_exp.pop(j)
            cells_lab.pop(j)
    if len(cells_exp) < 2:
        raise ValueError(
            f"樣本太少：合併期望次數 < {min_expected:g} 的格子後只剩 {len(cells_exp)} 格，無法做卡方檢定"
        )
    o = np.asarray(cells_obs)
    e = np.asarray(cells_exp)
    stat = float(((o - e) ** 2 / e).sum())
    dof = o.size - 1
    return ChiSquareResult(stat, dof, _chi2_sf(stat, dof) if dof <= MAX_DOF else chi2_sf(stat, dof), o, e, cells_lab)
