"""``estimate_alpha``: α, the conditional acceptance at each position, an i.i.d. check, a recommended k.

α is the acceptance rate at position 1 (``per_position_acceptance[0]``), not vLLM's "draft
acceptance rate": that one is accepted ÷ drafted tokens, (E − 1)/k under i.i.d. acceptance.
Position i+1 is only judged when every earlier one was accepted, so its conditional rate is
count[i] ÷ count[i−1]. If those rates agree (Pearson's χ²), Eq. 1 with α recommends k; if they
do not, the measured rates do (``expected_tokens_positional``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _validate as check
from ..chisquare import chi2_sf, p_text
from ..closed_form import expected_tokens, speedup
from ..positional import positional_speedups
from .stats import SpecDecodeStats

KNEE_FRACTION = 0.95
"""``knee_k``: the smallest k whose speedup reaches this fraction of the best."""


@dataclass(frozen=True)
class AlphaEstimate:
    """What the counters say about acceptance, and the k they recommend.

    ``conditional_rates[i]`` is P(position i+1 accepted | positions 1..i accepted) = count[i] ÷
    count[i−1] (count[−1] = drafts); ``trials[i]`` is that denominator. Acceptance "looks i.i.d."
    when the rates agree within their binomial standard errors: Pearson's χ² of the counts
    against one pooled rate, K−1 degrees of freedom, p ≥ ``significance``.
    """

    alpha: float  # the position-1 acceptance rate
    alpha_se: float  # its binomial standard error
    conditional_rates: np.ndarray
    conditional_se: np.ndarray
    trials: np.ndarray
    pooled_alpha: float  # all accepted ÷ all trials: α's best estimate if acceptance is i.i.d.
    chi2: float
    dof: int
    p_value: float
    looks_iid: bool
    full_length_drafts: bool
    mean_acceptance_length: float  # measured E
    iid_expected_tokens: float  # Eq. 1 at α and the measured k
    draft_acceptance_rate: float  # vLLM's number, (E−1)/k
    k_measured: int
    draft_cost: float | None
    method: str | None  # "iid" (Eq. 1, k up to k_max) or "positional" (measured rates, k ≤ k_measured)
    recommended_k: int | None
    knee_k: int | None
    expected_speedup: float | None  # at recommended_k
    k_max: int = 20  # the largest k the i.i.d. recommendation considers

    def speedups(self) -> tuple[np.ndarray, np.ndarray]:
        """(ks, speedup at each k) with the method used for the recommendation."""
        if self.draft_cost is None:
            raise ValueError("draft_cost 沒有給：estimate_alpha(stats, draft_cost=…) 才能算加速比")
        return _speedup_curve(self.method, self.alpha, self.conditional_rates, self.draft_cost, self.k_max)

    def __str__(self) -> str:
        k = self.k_measured
        rates = "、".join(f"{r:.3f}" for r in self.conditional_rates)
        lines = [
            f"α（第 1 個位置的接受率）= {self.alpha:.3f} ± {self.alpha_se:.3f}",
            f"各位置的條件接受率（前面都中的前提下）：{rates}",
            f"i.i.d. 檢定：χ² = {self.chi2:.2f}，自由度 {self.dof}，{p_text(self.p_value)} → "
            + ("看起來每個位置一樣（可用公式 1）" if self.looks_iid else "各位置明顯不同（改用位置相依公式）"),
            f"實測平均每輪產出 E = {self.mean_acceptance_length:.3f}；公式 1 在 α、K = {k} 下給 {self.iid_expected_tokens:.3f}",
            # no-break spaces: a phone's narrow output area wrapped "(E −" / "1)/K"
            f"vLLM 印的 draft acceptance rate = {self.draft_acceptance_rate:.3f} = (E\u00a0−\u00a01)/K，不是 α",
        ]
        if not self.full_length_drafts:
            lines.append("注意：有些輪的草稿不滿 K 個（ngram 常見），後面位置的條件接受率因此偏低，是下限")
        if self.recommended_k is not None:
            advice = (f"草稿成本 {self.draft_cost:.2g} 下建議 K = {self.recommended_k}（加速 {self.expected_speedup:.2f}×，"
                      f"{'公式 1' if self.method == 'iid' else '實測各位置接受率'}）")
            if self.knee_k < self.recommended_k:     # (when they are equal, it says nothing more)
                advice += (f"；K = {self.knee_k} 就已有最高加速的 {KNEE_FRACTION:.0%}，"
                           "再往上每多猜一個只多一點")
            lines.append(advice)
        return "\n".join(lines)


def estimate_alpha(stats: SpecDecodeStats, draft_cost=None, k_max=20, significance=0.01) -> AlphaEstimate:
    """α from the position-1 rate, conditional rates, an i.i.d. check, and a recommended k.

    ``draft_cost`` is one draft step's cost relative to one target step (measured with
    ``estimate_draft_cost`` or given; ngram is ≈ 0). When acceptance looks i.i.d., k is chosen
    with Eq. 1 over 1..``k_max``; otherwise with the measured conditional rates, which only
    reach k_measured — to try larger k, run vLLM with a larger ``num_speculative_tokens``.
    """
    if not isinstance(stats, SpecDecodeStats):
        raise ValueError(f"stats 必須是 parse_metrics() 的結果（SpecDecodeStats），收到 {type(stats).__name__}")
    if not stats.accepted_per_position:
        raise ValueError(_no_positions_message(stats))
    k = stats.num_speculative_tokens
    k_max = check.scalar_int("k_max", k_max, minimum=1, maximum=10_000)
    if not (0 < significance < 1):
        raise ValueError(f"significance 必須介於 0 與 1 之間，有效範圍 (0, 1)；收到 {significance!r}")
    counts = np.asarray(stats.accepted_per_position, dtype=float)
    trials = np.concatenate([[stats.num_drafts], counts[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(trials > 0, counts / trials, np.nan)
        se = np.sqrt(rates * (1 - rates) / trials)
    alpha = float(rates[0])
    pooled, chi2, dof, p = _iid_check(counts, trials)
    looks_iid = p >= significance
    estimate = dict(
        alpha=alpha, alpha_se=float(se[0]), conditional_rates=rates, conditional_se=se, trials=trials,
        pooled_alpha=pooled, chi2=chi2, dof=dof, p_value=p, looks_iid=looks_iid,
        full_length_drafts=stats.full_length_drafts,
        mean_acceptance_length=stats.mean_acceptance_length,
        iid_expected_tokens=float(expected_tokens(alpha, k)),
        draft_acceptance_rate=stats.draft_acceptance_rate, k_measured=k,
        draft_cost=None, method=None, recommended_k=None, knee_k=None, expected_speedup=None,
        k_max=k_max,
    )
    if draft_cost is None:
        return AlphaEstimate(**estimate)
    check.scalar("draft_cost", draft_cost)
    cost = float(check.nonnegative("draft_cost", draft_cost))
    method = "iid" if looks_iid else "positional"
    ks, s = _speedup_curve(method, alpha, rates, cost, k_max)
    best = int(np.argmax(s))
    knee = int(np.argmax(s >= KNEE_FRACTION * s[best]))
    estimate.update(draft_cost=cost, method=method, recommended_k=int(ks[best]), knee_k=int(ks[knee]),
                    expected_speedup=float(s[best]))
    return AlphaEstimate(**estimate)


def _iid_check(counts: np.ndarray, trials: np.ndarray) -> tuple[float, float, int, float]:
    """(pooled rate, χ², dof, p): do the positions that were judged at all share one rate?"""
    used = trials > 0
    pooled = float(counts[used].sum() / trials[used].sum())
    dof = int(used.sum()) - 1
    if dof < 1 or not 0 < pooled < 1:
        return pooled, 0.0, max(dof, 0), 1.0
    t = trials[used]
    chi2 = float(((counts[used] - t * pooled) ** 2 / (t * pooled * (1 - pooled))).sum())
    return pooled, chi2, dof, chi2_sf(chi2, dof)


def _speedup_curve(method, alpha, rates, cost, k_max) -> tuple[np.ndarray, np.ndarray]:
    """(ks, speedups): Eq. 1 at α for k = 1..k_max, or the measured rates for k = 1..k_measured
    (a position never reached counts as never accepted)."""
    if method == "positional":
        return positional_speedups(np.nan_to_num(rates, nan=0.0), cost)
    ks = np.arange(1, k_max + 1)
    return ks, np.asarray(speedup(alpha, ks, cost))


def alpha_from_length(e: float, k: int) -> float:
    """The α at which Eq. 1 gives ``e`` tokens per round with ``k`` draft tokens (bisection):
    what α would be if every position were accepted alike. Not a measurement of α.

    >>> round(alpha_from_length(float(expected_tokens(0.7, 4)), 4), 6)
    0.7
    """
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens(mid, k) < e else (lo, mid)
    return (lo + hi) / 2


def _no_positions_message(stats: SpecDecodeStats) -> str:
    """Why α cannot be measured from these counts, what they do say, and what to paste instead."""
    what = {"log-v0": "V0 的 log 行", "request": "這些請求回應（沒有 acceptance_histogram）",
            "bench": "這份 bench 結果（沒有各位置接受率）"}.get(stats.source, "這份輸入（沒有 vllm:spec_decode_num_accepted_tokens_per_pos）")
    k, e = stats.num_speculative_tokens, stats.mean_acceptance_length
    guess = ""
    if k and stats.full_length_drafts:
        guess = (f"若假設每個位置的接受率都一樣，由 E = {e:.3f}、K = {k} 反推 α ≈ {alpha_from_length(e, k):.3f}；"
                 "但這個假設在這裡檢查不了（各位置不同時它會低估第 1 個位置）。")
    return (
        f"{what}沒有各位置的計數：量不到第 1 個位置的接受率 α，也檢查不了各位置是否一樣。"
        f"它量得到的是平均每輪產出 E = {e:.3f}。{guess}"
        "要量 α，請貼 V1 的 /metrics（含 vllm:spec_decode_num_accepted_tokens_per_pos）或 SpecDecoding metrics log 行"
    )
