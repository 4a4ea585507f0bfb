"""Verifying one round of draft tokens: greedy and rejection sampling.

Inputs describe one round. ``draft_tokens`` are the k tokens the draft proposed. Row i of
``target_probs`` (shape k+1 × V) is the target's next-token distribution after the verified
prefix plus the first i draft tokens — all k+1 rows come from the same forward pass. Row i of
``draft_probs`` (k × V) is the distribution the draft sampled draft token i from.

Sampling follows Leviathan et al. 2023 §2.3 (Algorithm 1) and Chen et al. 2023 (Algorithm 2):
for i = 1..k, with x the draft token, accept it with probability min(1, p(x)/q(x)); at the first
rejection, emit a token from the residual norm(max(0, p − q)) and stop; if all k are accepted,
emit a bonus token from the last row. The emitted tokens then follow the target's distribution
exactly: P(emit x) = min(p(x), q(x)) + (1 − Σ min(p, q)) · norm(max(0, p − q))(x) = p(x).
Greedy (temperature 0) is the special case where p puts all its mass on the argmax.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import _validate as check

_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class VerifyStep:
    """What happened at one draft position (1-based)."""

    position: int
    draft_token: int
    p: float  # the target's probability of the draft token
    q: float | None  # the draft's probability of it (None for greedy)
    accept_prob: float  # greedy: 1 or 0; sampling: min(1, p/q)
    u: float | None  # the uniform draw compared with accept_prob (None for greedy)
    accepted: bool
    target_token: int | None  # greedy: the target's argmax; sampling: the resampled token if rejected


@dataclass(frozen=True)
class RoundResult:
    """The tokens one round emits: the accepted draft prefix plus one correction or bonus token."""

    tokens: list[int]
    n_accepted: int
    bonus: bool  # True when every draft token was accepted and the last token is the bonus
    steps: list[VerifyStep] = field(default_factory=list)

    @property
    def correction(self) -> int | None:
        """The target's free token at the first rejection (None when all were accepted)."""
        return None if self.bonus else self.tokens[-1]


@dataclass(frozen=True)
class VerifierRule:
    """A sampling verifier as data, for ``specdec_lab.lossless_batch``: ``accept(p, q, ratio, u)``
    judges each draft token (floats or numpy arrays; ratio = min(1, p/q), u its uniform); after a
    rejection the token is redrawn from ``redraw``: "residual" max(0, p − q) (p if that is empty)
    or "target" p; the bonus token comes from p. ``q_positive``: a draft token the draft gave
    probability 0 is an input error (``impossible_draft``)."""

    accept: Callable
    redraw: str
    q_positive: bool = False


def impossible_draft(position: int, token: int) -> ValueError:
    """The error for a draft token the draft could not have drawn (its q is 0)."""
    return ValueError(f"draft_tokens[{position}] = {token} 在 draft_probs 第 {position} 列的機率是 0："
                      "草稿不可能抽出它，輸入不一致")


def _distributions(name: str, probs, rows: int | None = None) -> np.ndarray:
    """``probs`` as a 2-D array of probability vectors (``rows`` of them, when given)."""
    arr = np.asarray(probs, dtype=float) if not isinstance(probs, (bool, str)) else None
    if arr is None or arr.ndim != 2 or arr.shape[1] == 0:
        shape = None if arr is None else arr.shape
        raise ValueError(f"{name} 必須是二維陣列（每列一個機率分布，形狀 (位置數, 詞表大小)），收到形狀 {shape}")
    if rows is not None and arr.shape[0] != rows:
        raise ValueError(
            f"{name} 必須有 {rows} 列（每個位置一列），收到 {arr.shape[0]} 列（形狀 {arr.shape}）"
        )
    bad_entry = ~(np.isfinite(arr) & (arr >= 0))
    if bad_entry.any():
        i, j = (int(x) for x in np.argwhere(bad_entry)[0])
        raise ValueError(f"{name} 的機率必須是 [0, 1] 之間的有限數，第 {i} 列第 {j} 個是 {arr[i, j]!r}")
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > _SUM_TOLERANCE
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"{name} 每一列的總和必須是 1（誤差 ≤ {_SUM_TOLERANCE:g}），第 {i} 列的總和是 {sums[i]:.6g}")
    return arr


def draw_index(rng: np.random.Generator, weights: np.ndarray) -> int:
    """One index drawn with probability proportional to the non-negative ``weights`` (inverse
    CDF: one uniform per draw, faster than ``Generator.choice``)."""
    cdf = np.cumsum(weights)
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), cdf.size - 1))


def _draft_length(toks: np.ndarray) -> int:
    if toks.ndim != 1:
        raise ValueError(f"draft_tokens 必須是一維的 token 編號序列，收到形狀 {toks.shape}")
    return toks.size


def _checked_tokens(toks: np.ndarray, vocab: int) -> np.ndarray:
    if toks.size == 0:
        return toks.astype(np.int64)
    return check.integer("draft_tokens", toks, minimum=0, maximum=vocab - 1)


def verify_greedy(draft_tokens, target_probs) -> RoundResult:
    """Greedy verification (T = 0): accept while the draft token equals the target's argmax.

    At the first mismatch the target's argmax is emitted as the correction; if all match, the
    argmax of the last row is the bonus token. Same output as the target decoding greedily alone.
    """
    toks = np.asarray(draft_tokens)
    probs = _distributions("target_probs", target_probs, rows=_draft_length(toks) + 1)
    toks = _checked_tokens(toks, probs.shape[1])
    k = toks.size
    best = probs.argmax(axis=1)
    emitted, steps = [], []
    for i, x in enumerate(toks.tolist()):
        target = int(best[i])
        ok = x == target
        steps.append(VerifyStep(i + 1, x, float(probs[i, x]), None, float(ok), None, ok, target))
        emitted.append(target)  # equal to x when accepted
        if not ok:
            return RoundResult(emitted, i, False, steps)
    emitted.append(int(best[k]))
    return RoundResult(emitted, k, True, steps)


def verify_sampling(draft_tokens, draft_probs, target_probs, seed=None) -> RoundResult:
    """Rejection-sampling verification (T > 0), lossless: emitted tokens follow ``target_probs``.

    ``seed`` is an int or a ``numpy.random.Generator`` (pass one Generator to many calls).
    """
    toks = np.asarray(draft_tokens)
    target = _distributions("target_probs", target_probs, rows=_draft_length(toks) + 1)
    toks = _checked_tokens(toks, target.shape[1])
    k = toks.size
    if k:
        draft = _distributions("draft_probs", draft_probs, rows=k)
        if draft.shape[1] != target.shape[1]:
            raise ValueError(
                f"draft_probs 與 target_probs 的詞表大小必須相同，收到 {draft.shape[1]} 與 {target.shape[1]}"
            )
    rng = check.seed_or_generator(seed)
    emitted, steps = [], []
    for i, x in enumerate(toks.tolist()):
        p, q = float(target[i, x]), float(draft[i, x])
        if q <= 0.0:
            raise impossible_draft(i, x)
        accept_prob = min(1.0, p / q)
        u = float(rng.random())
        if u < accept_prob:
            steps.append(VerifyStep(i + 1, x, p, q, accept_prob, u, True, None))
            emitted.append(x)
            continue
        residual = np.maximum(target[i] - draft[i], 0.0)
        fixed = draw_index(rng, residual)  # norm(max(0, p − q))
        steps.append(VerifyStep(i + 1, x, p, q, accept_prob, u, False, fixed))
        emitted.append(fixed)
        return RoundResult(emitted, i, False, steps)
    emitted.append(draw_index(rng, target[k]))
    return RoundResult(emitted, k, True, steps)


verify_sampling.rule = VerifierRule(accept=lambda p, q, ratio, u: u < ratio, redraw="residual", q_positive=True)
