"""Several draft candidates for one position, verified without changing what the target writes.

One candidate x ~ q is accepted with probability min(1, p(x)/q(x)); on a rejection the target
samples from the residual norm(max(0, p − q)). The candidate is accepted with probability

    α = Σₓ min(p(x), q(x)) = 1 − TV(p, q)        (TV: total variation distance, ½ Σ |p − q|)

and the token written is distributed exactly as p. With k candidates the same step is repeated,
each time against what is left (multi-step speculative sampling):

* ``replacement=True`` (SpecInfer, Miao et al. 2024): the candidates are drawn independently
  from q; after a rejection the target's distribution becomes r ← norm(max(0, r − q)).
* ``replacement=False`` (Sequoia, Chen et al. 2024, Alg. 2): the rejected token also leaves the
  draft: r ← norm(max(0, r − q)) against the *current* q, then q ← q with that token set to 0,
  renormalised. A token that was rejected is never drawn again, so k candidates find the target's
  token more often (Sequoia App. F.3: q = (½, ½), p = (1, 0), k = 2 gives ¾ with replacement and 1
  without).

When all k are rejected the target draws from the last residual. Either way the token written is
distributed as p, whatever q and k are: each step hands on exactly the probability it did not
use. ``multi_draft_acceptance`` and ``multi_draft_output`` compute the acceptance and the
distribution of the written token exactly, by following every sequence of rejected tokens (the
course's vocabularies are small); ``multi_draft_sample`` runs the procedure itself, and
``multi_draft_check`` compares the two at 5σ.

Two plausible mistakes can be switched on with ``mistake`` to see that they are *not* lossless:

* ``"keep_target"``: p is left as it is after a rejection (each candidate is tested with
  min(1, p/q), and after k rejections the target draws from norm(max(0, p − q)) as for one
  candidate);
* ``"original_draft"`` (only with ``replacement=False``): the residual is taken against the
  original q instead of the current one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .progress import Progress

__all__ = [
    "MISTAKES",
    "MultiDraftCheck",
    "multi_draft_acceptance",
    "multi_draft_check",
    "multi_draft_output",
    "multi_draft_sample",
]

MISTAKES = (None, "keep_target", "original_draft")
MAX_K = 64
MAX_STATES = 2_000_000   # (sequences of rejected tokens) × vocabulary, for the exact enumeration
MAX_SAMPLES = 10_000_000
_CHUNK_CELLS = 1_000_000   # a simulation holds at most this many (run, token) cells at a time
_SUM_SLACK = 1e-9


def multi_draft_acceptance(p, q, k, replacement=True, mistake=None):
    """Exact P(one of ``k`` candidates drawn from ``q`` is accepted) for a target ``p``.

    ``p`` and ``q`` are distributions over the same vocabulary (last axis; leading axes
    broadcast, one answer per row); ``k`` is an integer ≥ 1 or an array of them (broadcast
    against the rows). ``replacement``: SpecInfer (True) or Sequoia (False), see the module text.

    >>> multi_draft_acceptance([1, 0], [0.5, 0.5], 2)                      # Sequoia App. F.3
    0.75
    >>> multi_draft_acceptance([1, 0], [0.5, 0.5], 2, replacement=False)
    1.0
    >>> multi_draft_acceptance([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [1, 2, 3]).round(4)
    array([0.6  , 0.68 , 0.744])
    """
    p, q, batch = _checked_pair(p, q)
    ks = check.integer("k", k, minimum=1, maximum=MAX_K)
    _checked_mistake(mistake, replacement)
    kmax = int(ks.max())
    accepted, _ = _enumerate(p.reshape(-1, p.shape[-1]), q.reshape(-1, q.shape[-1]), kmax,
                             bool(replacement), mistake)
    per_k = accepted.cumsum(axis=1).reshape(*batch, kmax)     # P(accepted by candidate j), j = 1..kmax
    shape = np.broadcast_shapes(ks.shape, batch)
    table = np.broadcast_to(per_k, (*shape, kmax))
    out = np.take_along_axis(table, (np.broadcast_to(ks, shape) - 1)[..., None], axis=-1)[..., 0]
    return check.unwrap(np.minimum(out, 1.0))


def multi_draft_output(p, q, k, replacement=True, mistake=None) -> np.ndarray:
    """Exact distribution of the token written after verifying ``k`` candidates from ``q``.

    The accepted candidate, or a draw from the last residual when all ``k`` are rejected. With
    ``mistake=None`` this is ``p`` (to rounding) for every q and k — the tests check it over many
    random cases; a ``mistake`` shows what breaks. ``p``, ``q`` broadcast over leading axes;
    ``k`` is one integer here.

    >>> multi_draft_output([0.6, 0.4], [0.3, 0.7], 2).round(12)
    array([0.6, 0.4])
    >>> multi_draft_output([0.6, 0.4], [0.3, 0.7], 2, mistake="keep_target").round(4)
    array([0.48, 0.52])
    """
    p, q, batch = _checked_pair(p, q)
    check.scalar("k", k)
    k = check.scalar_int("k", k, minimum=1, maximum=MAX_K)
    _checked_mistake(mistake, replacement)
    _, out = _enumerate(p.reshape(-1, p.shape[-1]), q.reshape(-1, q.shape[-1]), k, bool(replacement), mistake)
    return out.reshape(*batch, p.shape[-1])


def multi_draft_sample(p, q, k, replacement=True, mistake=None, size=10_000, seed=None):
    """Run the verification ``size`` times: ``(tokens, accepted)``, two arrays of length ``size``.

    ``tokens[i]`` is the token written in run i; ``accepted[i]`` is which candidate (1..k) was
    accepted, 0 when all were rejected and the target drew from the residual. One distribution
    pair ``p``, ``q`` (1-D); all runs advance together with numpy, one candidate at a time.

    >>> tokens, accepted = multi_draft_sample([1, 0], [0.5, 0.5], 2, size=6, seed=3)
    >>> tokens.tolist(), accepted.tolist()
    ([0, 0, 0, 0, 0, 0], [1, 1, 2, 0, 1, 1])
    """
    p, q, batch = _checked_pair(p, q)
    if batch:
        raise ValueError(f"p、q 在這裡必須是一維的單一分布，收到形狀 {p.shape}")
    k = check.scalar_int("k", k, minimum=1, maximum=MAX_K)
    size = check.scalar_int("size", size, minimum=1, maximum=MAX_SAMPLES)
    _checked_mistake(mistake, replacement)
    rng = check.seed_or_generator(seed)
    tokens = np.empty(size, dtype=np.int64)
    accepted = np.empty(size, dtype=np.int64)
    chunk = max(1, _CHUNK_CELLS // p.size)        # rows × vocabulary held at once
    with Progress("多候選驗證的模擬", size, unit="次") as progress:
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            tokens[start:stop], accepted[start:stop] = _sample_chunk(p, q, k, replacement, mistake,
                                                                     stop - start, rng)
            progress.update(stop)
    return tokens, accepted


def _sample_chunk(p, q, k, replacement, mistake, size, rng):
    """``multi_draft_sample`` for ``size`` runs, all advancing together."""
    target = np.tile(p, (size, 1))
    draft = np.tile(q, (size, 1))
    tokens = np.full(size, -1)
    accepted = np.zeros(size, dtype=np.int64)
    live = np.ones(size, dtype=bool)                 # still looking for an accepted candidate
    for j in range(1, k + 1):
        if not replacement:
            live &= draft.sum(axis=1) > 0            # the draft can run out of tokens
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        x = _draw(draft[idx], rng.random(idx.size))
        qx, rx = draft[idx, x], target[idx, x]
        ok = rng.random(idx.size) * qx < rx          # u < r(x)/q(x), without dividing
        tokens[idx[ok]] = x[ok]
        accepted[idx[ok]] = j
        live[idx[ok]] = False
        bad, x_bad = idx[~ok], x[~ok]
        if mistake != "keep_target":
            target[bad] = _residual_rows(target[bad], draft[bad], p, q, mistake)
        if not replacement:
            d = draft[bad]
            d[np.arange(bad.size), x_bad] = 0.0
            draft[bad] = _normalised(d)
    rest = np.flatnonzero(tokens < 0)
    if mistake == "keep_target":
        final = np.broadcast_to(_normalised(np.maximum(p - q, 0.0)), (rest.size, p.size))
    else:
        final = target[rest]
    tokens[rest] = _draw(final, rng.random(rest.size))
    return tokens, accepted


@dataclass(frozen=True)
class MultiDraftCheck:
    """Simulated verifications against the exact numbers.

    ``z`` is (simulated acceptance − exact) ÷ its standard error; ``token_z`` the same for each
    token's share of the written tokens against ``multi_draft_output`` (|z| ≤ 5 is agreement).
    """

    samples: int
    acceptance: float
    exact_acceptance: float
    std_error: float
    z: float
    frequencies: np.ndarray
    exact_output: np.ndarray
    token_z: np.ndarray

    def __str__(self) -> str:
        return (f"模擬 {self.samples:,} 次：接受率 {self.acceptance:.4f}，精確值 {self.exact_acceptance:.4f}，"
                f"標準誤 {self.std_error:.4f}，z = {self.z:+.2f}；各字比例最大 |z| = {np.abs(self.token_z).max():.2f}")


def multi_draft_check(p, q, k, replacement=True, mistake=None, size=100_000, seed=None) -> MultiDraftCheck:
    """``multi_draft_sample`` against ``multi_draft_acceptance`` and ``multi_draft_output``.

    >>> c = multi_draft_check([1, 0], [0.5, 0.5], 2, size=20_000, seed=1)
    >>> c.exact_acceptance, abs(c.z) < 5
    (0.75, True)
    """
    tokens, accepted = multi_draft_sample(p, q, k, replacement, mistake, size=size, seed=seed)
    exact = float(multi_draft_acceptance(p, q, k, replacement, mistake))
    out = multi_draft_output(p, q, k, replacement, mistake)
    n = tokens.size
    rate = float(np.mean(accepted > 0))
    se = float(np.sqrt(exact * (1 - exact) / n))
    freq = np.bincount(tokens.astype(np.intp), minlength=out.size) / n
    token_se = np.sqrt(out * (1 - out) / n)
    return MultiDraftCheck(n, rate, exact, se, _z(rate, exact, se), freq, out,
                           np.array([_z(f, e, s) for f, e, s in zip(freq, out, token_se)]))


# --- the exact enumeration ----------------------------------------------------------------------


def _enumerate(p: np.ndarray, q: np.ndarray, k: int, replacement: bool, mistake):
    """For rows of (p, q): P(candidate j is the accepted one), j = 1..k, and the written token's
    distribution. States are (row, weight, current target r, current draft q); with replacement
    the next state does not depend on which token was rejected (one state per row), without it
    every rejected token opens its own state."""
    rows, vocab = p.shape
    row = np.arange(rows)
    weight = np.ones(rows)
    r, d = p.copy(), q.copy()
    accepted = np.zeros((rows, k))
    out = np.zeros((rows, vocab))
    for j in range(k):
        took = np.minimum(r, d)                      # P(draw x and accept it), per token
        np.add.at(accepted[:, j], row, weight * took.sum(axis=1))
        np.add.at(out, row, weight[:, None] * took)
        reject = np.maximum(d - r, 0.0)               # P(draw x and reject it), per token
        r_next = _residual_rows(r, d, p[row], q[row], mistake)
        if replacement:
            weight = weight * reject.sum(axis=1)
            r = r_next
        else:
            s, x = np.nonzero(reject > 0)
            if s.size * vocab > MAX_STATES:
                raise ValueError(
                    f"k = {k} 在這個詞表（{vocab} 個字）下要列舉的拒絕順序太多（超過 {MAX_STATES:,} 格）；"
                    f"k 的有效範圍要再小一點，或縮小詞表")
            row, weight = row[s], weight[s] * reject[s, x]
            r = r_next[s]
            d = d[s].copy()
            d[np.arange(s.size), x] = 0.0
            total = d.sum(axis=1, keepdims=True)
            d = np.divide(d, total, out=np.zeros_like(d), where=total > 0)
        keep = weight > 0
        row, weight, r, d = row[keep], weight[keep], r[keep], d[keep]
        if not replacement:                           # every token of the draft rejected: stop here
            done = d.sum(axis=1) == 0
            _finish(out, row[done], weight[done], r[done], p, q, mistake)
            row, weight, r, d = row[~done], weight[~done], r[~done], d[~done]
    # all k rejected: the target draws from what is left
    _finish(out, row, weight, r, p, q, mistake)
    return accepted, out


def _finish(out, row, weight, r, p, q, mistake) -> None:
    """Add the target's own draw after the last rejection to the written token's distribution."""
    final = r if mistake != "keep_target" else _normalised(np.maximum(p - q, 0.0))[row]
    np.add.at(out, row, weight[:, None] * final)


def _residual_rows(r, d, p, q, mistake):
    """The target's distribution after a rejection, row by row."""
    if mistake == "keep_target":
        return r
    against = q if mistake == "original_draft" else d
    return _normalised(np.maximum(r - against, 0.0))


def _normalised(x: np.ndarray) -> np.ndarray:
    total = x.sum(axis=-1, keepdims=True)
    return np.divide(x, total, out=np.zeros_like(x), where=total > 0)


def _draw(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One token per row of ``probs`` by inverse transform sampling with the uniforms ``u``."""
    cdf = probs.cumsum(axis=1)
    x = (cdf < (u * cdf[:, -1])[:, None]).sum(axis=1)
    return np.minimum(x, probs.shape[1] - 1)


def _z(observed: float, exact: float, se: float) -> float:
    if se > 0:
        return (observed - exact) / se
    return 0.0 if abs(observed - exact) <= 1e-12 else float("inf")


# --- checks -------------------------------------------------------------------------------------


def _checked_distribution(name: str, value) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} 必須是一個機率分布（一串加起來是 1 的非負數），收到 {value!r}")
    arr = check.probability(name, value, what="機率分布的一格（介於 0 與 1 之間）")
    if arr.ndim == 0:
        raise ValueError(f"{name} 必須是一個機率分布（一串加起來是 1 的非負數），收到 {value!r}")
    sums = arr.sum(axis=-1)
    bad = np.abs(sums - 1.0) > _SUM_SLACK
    if bad.any():
        at = np.argwhere(np.atleast_1d(bad))[0]
        total = np.atleast_1d(sums)[tuple(at)]
        where = "" if arr.ndim == 1 else f"（第 {tuple(int(i) for i in at)} 列）"
        raise ValueError(f"{name}{where} 的總和是 {total:.12g}：機率分布的總和必須是 1（容許誤差 {_SUM_SLACK:g}）")
    return arr


def _checked_pair(p, q):
    p = _checked_distribution("p", p)
    q = _checked_distribution("q", q)
    if p.shape[-1] != q.shape[-1]:
        raise ValueError(f"p 與 q 必須是同一個詞表上的分布：p 有 {p.shape[-1]} 個字，q 有 {q.shape[-1]} 個字")
    try:
        batch = np.broadcast_shapes(p.shape[:-1], q.shape[:-1])
    except ValueError:
        raise ValueError(f"p 的形狀 {p.shape} 與 q 的形狀 {q.shape} 前面的維度對不起來（無法廣播）") from None
    vocab = p.shape[-1]
    return (np.broadcast_to(p, (*batch, vocab)).astype(float), np.broadcast_to(q, (*batch, vocab)).astype(float),
            batch)


def _checked_mistake(mistake, replacement) -> None:
    if not isinstance(replacement, (bool, np.bool_)):
        raise ValueError(f"replacement 必須是 True（SpecInfer，取後放回）或 False（Sequoia，取後不放回），收到 {replacement!r}")
    if mistake not in MISTAKES:
        raise ValueError(f"mistake 必須是 {', '.join(map(repr, MISTAKES))} 之一，收到 {mistake!r}")
    if mistake == "original_draft" and replacement:
        raise ValueError("mistake='original_draft' 只在 replacement=False 時有意義（取後放回時 q 從不改變）；"
                         "收到 replacement=True")
