"""Many independent speculative decoding runs at once: every sequence advances together, one round
at a time, with numpy over the batch (draft proposals, acceptance tests, residual or bonus draws).

``specdec_lab.lossless.speculative_decode`` is the readable one-sequence decoder that follows the
papers; ``speculative_decode_batch`` gives the very same runs, token for token. Sequence b draws
its uniforms from its own ``numpy.random.Generator`` (seed ``seeds[b]``) in the order the
one-sequence decoder does — k for the draft's proposals, one per judged draft token, one for the
residual or bonus draw — so only the arithmetic is shared by the batch. ``target_decode_batch``
does the same for ``target_decode``. tests/test_lossless_batch.py pins both to the one-sequence
versions. How a round gets its rows, quickest first:

* an n-gram target and draft (``CharNgramLM``, ``DilutedDraft``): every row is kept, by state of
  the model's automaton (``CharNgramLM.row_index``), and each sequence's state follows its tokens;
* prompt lookup on a copying target (``PromptLookupDrafter.propose_batch``,
  ``CopyingLM.rows_after``): both read every sequence's whole history at once;
* otherwise models with a ``probs_batch`` are asked for all sequences' rows at once, any other
  model row by row with ``probs``.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _validate as check
from .lossless import (
    ModelDrafter,
    PromptLookupDrafter,
    SpecRun,
    _prompt,
    verify_accept_if_draft_confident,
    verify_resample_from_target,
)
from .verification import impossible_draft, verify_sampling

__all__ = ["speculative_decode_batch", "target_decode_batch"]

_BLOCK = 1024
"""Uniforms drawn ahead per sequence at a time."""

_KNOWN = (verify_sampling, verify_accept_if_draft_confident, verify_resample_from_target)
"""Named in the error for a ``verify`` without a rule (each verifier carries its ``.rule``)."""


class _Uniforms:
    """Each sequence's stream of uniforms, drawn ahead in blocks from its own Generator
    (``Generator.random(n)`` gives the same numbers as n calls of ``Generator.random()``)."""

    def __init__(self, seeds):
        self.generators = [np.random.default_rng(s) for s in seeds]
        self.values = np.zeros((len(seeds), 0))
        self.used = np.zeros(len(seeds), dtype=np.intp)

    def peek(self, rows: np.ndarray, width: int) -> np.ndarray:
        """rows × width: the next ``width`` uniforms of each sequence in ``rows``."""
        while int(self.used[rows].max()) + width > self.values.shape[1]:
            block = np.stack([g.random(_BLOCK) for g in self.generators])
            self.values = np.concatenate([self.values, block], axis=1)
        return self.values[rows[:, None], self.used[rows][:, None] + np.arange(width)]

    def use(self, rows: np.ndarray, counts) -> None:
        self.used[rows] += counts


def _draw(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``verification.draw_index`` for every row, given the rows' ``np.cumsum``: the inverse CDF
    at u · total."""
    picked = (cdf <= (u * cdf[:, -1])[:, None]).sum(axis=1)  # searchsorted(side="right") on each row
    return np.minimum(picked, cdf.shape[1] - 1)


def _seeds(seeds, count: int) -> list:
    if seeds is None:
        return [None] * count
    seeds = list(seeds)
    if len(seeds) != count:
        raise ValueError(f"seeds 必須每個 prompt 一個：prompts 有 {count} 個，seeds 有 {len(seeds)} 個")
    for s in seeds:
        if not (s is None or isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0):
            raise ValueError(f"seeds 的每一個都必須是 None 或非負整數（每個序列用自己的亂數），收到 {s!r}")
    return [None if s is None else int(s) for s in seeds]


class _Batch:
    """The sequences' tokens so far (prompt included), as a numpy buffer and, for models without
    ``probs_batch``, as Python lists."""

    def __init__(self, prompts, width, extra, lists=True):
        self.start = np.array([len(p) for p in prompts], dtype=np.intp)
        self.length = self.start.copy()
        self.tokens = np.zeros((len(prompts), int(self.start.max()) + extra), dtype=np.int64)
        for b, p in enumerate(prompts):
            self.tokens[b, :len(p)] = p
        self.lists = [list(p) for p in prompts] if lists else None
        self.width = width  # columns of context a batched model reads

    def tails(self, rows: np.ndarray) -> np.ndarray:
        """rows × width: the last ``width`` tokens of each sequence."""
        return self.tokens[rows[:, None], self.length[rows][:, None] - self.width + np.arange(self.width)]

    def append(self, rows: np.ndarray, new: np.ndarray, counts: np.ndarray) -> None:
        """Sequence rows[i] gets new[i, :counts[i]]."""
        keep = np.arange(new.shape[1]) < counts[:, None]
        where = self.length[rows][:, None] + np.arange(new.shape[1])
        self.tokens[np.broadcast_to(rows[:, None], new.shape)[keep], where[keep]] = new[keep]
        self.length[rows] += counts
        if self.lists is not None:
            for r, row, c in zip(rows.tolist(), new.tolist(), counts.tolist()):
                self.lists[r].extend(row[:c])


class _States:
    """Where every sequence is in a model's automaton (``CharNgramLM.row_index``: each state's row,
    its cumsum and argmax, and the state after one more token), for a model whose rows are all
    kept: a round reads rows by state, with no windows of tokens to build."""

    def __init__(self, model, batch: _Batch, temperature):
        self.at, self.table = model.row_index(batch.tails(np.arange(batch.start.size)), temperature)

    @staticmethod
    def usable(model, width: int) -> bool:
        return _batched(model, width) and hasattr(model, "row_index")

    def walk(self, rows: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """sequences × (columns + 1): each sequence's state before each of its ``tokens``, and after the last."""
        out = np.empty((rows.size, tokens.shape[1] + 1), dtype=np.intp)
        out[:, 0] = state = self.at[rows]
        for j in range(tokens.shape[1]):
            out[:, j + 1] = state = self.table.next[state, tokens[:, j]]
        return out


def _batched(model, width: int) -> bool:
    return hasattr(model, "probs_batch") and getattr(model, "context_length", width + 1) <= width


class _Computed:
    """Rows computed for one round (``CopyingLM.rows_after``), read like a model's kept table."""

    cdf = None  # computed for the rows read, when read

    def __init__(self, rows: np.ndarray):
        self.rows = rows

    @property
    def best(self) -> np.ndarray:
        return self.rows.argmax(axis=1)


class _Rows:
    """One model's next-token rows at some positions of every sequence in a round: kept rows
    (an index into the model's table, ``CharNgramLM.row_index``) or computed ones (dense,
    sequences × positions × V)."""

    def __init__(self, index=None, table=None, dense=None):
        self.index, self.table, self.dense = index, table, dense

    @classmethod
    def at(cls, model, batch: _Batch, rows, ext, positions, temperature, need=None) -> "_Rows":
        """``model.probs`` after each sequence rows[i] and its first p draft tokens, for p in
        ``positions`` (``ext``: the last ``batch.width`` tokens, then the draft tokens). ``need``
        (sequences × positions): what will be read (another row stands in for the others)."""
        width = batch.width
        if _batched(model, width):
            windows = np.stack([ext[:, p:p + width] for p in positions], axis=1)
            if need is not None:  # a row nobody reads: the first position's (already asked for)
                windows = np.where(need[:, :, None], windows, windows[:, :1])
            windows = windows.reshape(-1, width)
            if hasattr(model, "row_index"):
                index, table = model.row_index(windows, temperature)
                return cls(index=index.reshape(len(rows), len(positions)), table=table)
            return cls(dense=model.probs_batch(windows, temperature).reshape(len(rows), len(positions), -1))
        dense = np.zeros((len(rows), len(positions), len(model.vocab)))
        for i, r in enumerate(rows.tolist()):
            for j, p in enumerate(positions):
                if need is None or need[i, j]:
                    dense[i, j] = model.probs(batch.lists[r] + ext[i, width:width + p].tolist(), temperature)
        return cls(dense=dense)

    @classmethod
    def join(cls, parts: list) -> "_Rows":
        """Positions side by side (all kept in the same table, or all dense)."""
        if all(part.table is not None and part.table is parts[0].table for part in parts):
            return cls(index=np.concatenate([part.index for part in parts], axis=1), table=parts[0].table)
        return cls(dense=np.concatenate([part.full() for part in parts], axis=1))

    def subset(self, sequences: np.ndarray) -> "_Rows":
        if self.table is not None:
            return _Rows(index=self.index[sequences], table=self.table)
        return _Rows(dense=self.dense[sequences])

    def full(self) -> np.ndarray:
        return self.table.rows[self.index] if self.table is not None else self.dense

    def row(self, position: np.ndarray, which=None) -> np.ndarray:
        """Sequence which[i]'s row at position[i] (which: every sequence, by default)."""
        which = np.arange(position.size) if which is None else which
        return self.table.rows[self.index[which, position]] if self.table is not None else self.dense[which, position]

    def cdf(self, position: np.ndarray, which=None) -> np.ndarray:
        """Their cumulative sums (kept ones, or computed)."""
        which = np.arange(position.size) if which is None else which
        if self.table is not None and self.table.cdf is not None:
            return self.table.cdf[self.index[which, position]]
        return np.cumsum(self.row(position, which), axis=1)

    def of(self, tokens: np.ndarray) -> np.ndarray:
        """Sequence i's probability of tokens[i, j] at position j."""
        j = np.arange(tokens.shape[1])
        if self.table is not None:
            return self.table.rows[self.index[:, j], tokens]
        return self.dense[np.arange(tokens.shape[0])[:, None], j, tokens]

    def best(self) -> np.ndarray:
        return self.table.best[self.index] if self.table is not None else self.dense.argmax(axis=2)


def speculative_decode_batch(target, drafter, prompts, n_tokens, k, *, greedy=False, temperature=1.0,
                             seeds=None, verify=verify_sampling, progress=None) -> list[SpecRun]:
    """``speculative_decode(target, drafter, prompts[b], n_tokens, k, seed=seeds[b], ...)`` for
    every b, all advanced together: the same ``SpecRun`` objects, token for token.

    ``n_tokens`` is one number or one per prompt; ``seeds`` one None or non-negative int per
    prompt. ``drafter`` is a ``ModelDrafter``, a ``PromptLookupDrafter`` or a bare model;
    ``verify`` is ``verify_sampling`` or one of ``specdec_lab.lossless``'s two wrong verifiers,
    or one of those per prompt.
    ``progress`` (optional) has ``update(tokens_done, sequences_done)``, called after each round.
    """
    prompts = [_prompt(target, p) for p in prompts]
    if not prompts:
        raise ValueError("prompts 不可以是空的：至少要有一個 prompt")
    count = len(prompts)
    wanted = [n_tokens] * count if np.ndim(n_tokens) == 0 else list(n_tokens)
    if len(wanted) != count:
        raise ValueError(f"n_tokens 必須是一個數，或每個 prompt 一個：prompts 有 {count} 個，n_tokens 有 {len(wanted)} 個")
    wanted = np.array([check.scalar_int("n_tokens", n, minimum=1, maximum=1_000_000) for n in wanted], dtype=np.intp)
    k = check.scalar_int("k", k, minimum=1, maximum=64)
    if not hasattr(drafter, "propose") and hasattr(drafter, "probs"):
        drafter = ModelDrafter(drafter)
    if not isinstance(drafter, (ModelDrafter, PromptLookupDrafter)):
        raise ValueError(f"drafter 必須是 ModelDrafter、PromptLookupDrafter 或一個語言模型，收到 {type(drafter).__name__}")
    verifiers = [verify] * count if callable(verify) else list(verify)
    if len(verifiers) != count:
        raise ValueError(f"verify 必須是一個驗證函式，或每個 prompt 一個：prompts 有 {count} 個，verify 有 {len(verifiers)} 個")
    for v in verifiers if not greedy else []:
        if not hasattr(v, "rule"):
            names = "、".join(f.__name__ for f in _KNOWN)
            raise ValueError(f"verify 必須是 {names} 其中之一（批次版只認得這幾種），收到 {v!r}")
    rules = [getattr(v, "rule", None) for v in verifiers]
    rule_of = np.array([rules.index(r) for r in rules])    # the first sequence with the same rule
    one_rule = len(set(rule_of.tolist())) == 1
    uniforms = _Uniforms(_seeds(seeds, count))
    models = [target] + ([drafter.model] if isinstance(drafter, ModelDrafter) else [])
    width = max([m.context_length for m in models if hasattr(m, "probs_batch")] + [0])
    if width > min(len(p) for p in prompts):
        width = 0  # a prompt shorter than a model's context: every model row by row, as the one-sequence decoder does
    fast = width > 0 and isinstance(drafter, ModelDrafter) and all(_States.usable(m, width) for m in models)
    batch = _Batch(prompts, width, int(wanted.max()) + k + 1, lists=not (fast or _whole_histories(target, drafter)))
    if fast:  # every row kept: a round follows each sequence's state in both models' automata
        on_target, on_draft = _States(target, batch, temperature), _States(drafter.model, batch, temperature)
        if not greedy:
            on_draft.table.with_cdf()  # k draws a round from the draft's rows
    rounds = np.zeros(count, dtype=np.intp)
    names = ("drafted", "accepted", "emitted", "expected", "variance")
    record = {name: np.zeros((count, int(wanted.max())), dtype=float if name in names[3:] else np.intp)
              for name in names}
    written = np.zeros(count, dtype=np.intp)
    active = np.arange(count)
    while active.size:
        a = np.arange(active.size)
        if fast:
            drafted = np.full(active.size, k, dtype=np.intp)
            u = None if greedy else uniforms.peek(active, k)
            x, where = np.zeros((active.size, k), dtype=np.int64), np.zeros((active.size, k + 1), dtype=np.intp)
            where[:, 0] = state = on_draft.at[active]
            table = on_draft.table
            for j in range(k):
                x[:, j] = table.best[state] if greedy else _draw(table.cdf[state], u[:, j])
                where[:, j + 1] = state = table.next[state, x[:, j]]
            if not greedy:
                uniforms.use(active, k)
            draft = _Rows(index=where[:, :k], table=table)
            path = on_target.walk(active, x)
            scored = _Rows(index=path, table=on_target.table)
        else:
            draft, scored, x, drafted = _round_rows(target, drafter, batch, active, k, width, greedy, temperature,
                                                    uniforms)
        if greedy:
            best = scored.best()
            ok = (x == best[:, :k]) & (np.arange(k) < drafted[:, None])
            accepted = np.cumprod(ok, axis=1).sum(axis=1)
            new = best
            expected, variance = (accepted + 1).astype(float), np.zeros(active.size)
        else:
            u = uniforms.peek(active, k + 1)
            if one_rule:
                accepted, final, used, ratio = _judge(x, draft, scored, drafted, u, rules[0])
            else:
                accepted, final, used = (np.zeros(active.size, dtype=np.intp) for _ in range(3))
                ratio = np.zeros((active.size, k))
                by_rule = rule_of[active]
                for first in np.unique(by_rule).tolist():  # each verifier judges its own sequences
                    mine = np.flatnonzero(by_rule == first)
                    accepted[mine], final[mine], used[mine], ratio[mine] = _judge(
                        x[mine], draft.subset(mine), scored.subset(mine), drafted[mine], u[mine], rules[first])
            uniforms.use(active, used)
            new = np.concatenate([x, np.zeros((active.size, 1), dtype=np.int64)], axis=1)
            new[a, accepted] = final
            expected, variance = _moments(ratio, drafted)
        emitted = accepted + 1
        at = rounds[active]
        for name, values in zip(names, (drafted, accepted, emitted, expected, variance)):
            record[name][active, at] = values
        rounds[active] += 1
        batch.append(active, new, emitted)
        if fast:  # the state after the accepted tokens, then after the correction or bonus token
            last = new[a, accepted]
            on_target.at[active] = on_target.table.next[path[a, accepted], last]
            on_draft.at[active] = on_draft.table.next[where[a, accepted], last]
        written[active] += emitted
        active = active[written[active] < wanted[active]]
        if progress is not None:
            progress.update(int(np.minimum(written, wanted).sum()), count - active.size)
    runs = []
    for b, prompt in enumerate(prompts):
        out = batch.tokens[b, batch.start[b]:batch.start[b] + wanted[b]].tolist()
        arrays = [np.asarray(record[name][b, :rounds[b]].tolist()) for name in names]
        runs.append(SpecRun(prompt, out, *arrays, k, text=target.vocab.decode(out)))
    return runs


def _round_rows(target, drafter, batch: _Batch, active, k, width, greedy, temperature, uniforms):
    """One round's draft tokens and both models' rows, read through windows of each sequence's last
    tokens (prompt lookup, models without kept rows): (draft rows, target rows, draft tokens, how many)."""
    a = np.arange(active.size)
    if _whole_histories(target, drafter):  # prompt lookup on a copying target: both read whole histories
        length = batch.length[active]
        tokens = batch.tokens[active, :int(length.max()) + k + 1]  # a copy: the draft tokens go in
        found = {}  # the runs prompt lookup matched: the copy head looks for the same ones at j = 0
        x, drafted = drafter.propose_batch(tokens, length, k, found=found)
        tokens[a[:, None], length[:, None] + np.arange(k)] = x
        one_hot = np.zeros((active.size, k, len(target.vocab)))
        one_hot[a[:, None], np.arange(k), x] = 1.0  # padding too: never read
        index, rows = target.rows_after(tokens, length[:, None] + np.arange(k + 1), temperature,
                                        need=np.arange(k + 1) <= drafted[:, None], known=found)  # none past the last draft token
        return _Rows(dense=one_hot), _Rows(index=index, table=_Computed(rows)), x, drafted
    ext = np.concatenate([batch.tails(active), np.zeros((active.size, k), dtype=np.int64)], axis=1)
    if isinstance(drafter, ModelDrafter):
        drafted = np.full(active.size, k, dtype=np.intp)
        u = None if greedy else uniforms.peek(active, k)
        parts = []
        for j in range(k):
            part = _Rows.at(drafter.model, batch, active, ext, [j], temperature)
            if part.table is not None and not greedy:
                part.table.with_cdf()  # k draws a round from the draft's rows: keep their cumsums
            first = np.zeros(active.size, dtype=np.intp)
            ext[:, width + j] = part.best()[:, 0] if greedy else _draw(part.cdf(first), u[:, j])
            parts.append(part)
        draft = _Rows.join(parts)
        if not greedy:
            uniforms.use(active, k)
    else:
        drafted = np.zeros(active.size, dtype=np.intp)
        for i, r in enumerate(active.tolist()):
            tokens, _ = drafter.propose(batch.lists[r], k, greedy, temperature, None)
            ext[i, width:width + len(tokens)] = tokens
            drafted[i] = len(tokens)
        one_hot = np.zeros((active.size, k, len(target.vocab)))
        one_hot[a[:, None], np.arange(k), ext[:, width:]] = 1.0  # padding too: never read
        draft = _Rows(dense=one_hot)
    x = ext[:, width:]
    scored = _Rows.at(target, batch, active, ext, range(k + 1), temperature,
                      need=_read(x, drafted, getattr(target, "never", None)))
    return draft, scored, x, drafted

def _whole_histories(target, drafter) -> bool:
    """Whether a round can ask both for all sequences at once with their whole histories
    (``propose_batch``, ``rows_after``: prompt lookup and ``CopyingLM``)."""
    return hasattr(drafter, "propose_batch") and hasattr(target, "rows_after")


def _read(x: np.ndarray, drafted: np.ndarray, never) -> np.ndarray:
    """sequences × (k + 1): which target rows a round can read. Not those past the last draft
    token, nor those past a draft token the target never writes (``target.never``): it is
    rejected for sure (p = 0), so nothing after it is judged, and its min(1, p/q) = 0 zeroes
    every later term of the round's moments, whatever those rows hold."""
    count, k = x.shape
    read = np.arange(k + 1) <= drafted[:, None]
    if never is not None and len(never):
        hopeless = np.isin(x, never) & (np.arange(k) < drafted[:, None])
        read[:, 1:] &= np.cumsum(hopeless, axis=1) == 0
    return read


def _judge(x, draft: _Rows, scored: _Rows, drafted, u, rule):
    """One round's verification for every sequence by one verifier's ``rule``
    (``verification.VerifierRule``): (accepted, the correction or bonus token, uniforms used,
    min(1, p/q) of each draft token)."""
    count, k = x.shape
    a = np.arange(count)
    judged = np.arange(k) < drafted[:, None]
    p, q = scored.of(x), draft.of(x)
    if rule.q_positive and (judged & (q <= 0.0)).any():
        i, j = (int(v) for v in np.argwhere(judged & (q <= 0.0))[0])
        raise impossible_draft(j, x[i, j])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(judged, np.minimum(1.0, p / np.where(judged, q, 1.0)), 0.0)
    ok = rule.accept(p, q, ratio, u[:, :k]) & judged
    accepted = np.cumprod(ok, axis=1).sum(axis=1)
    rejected = accepted < drafted
    final_u = u[a, accepted + rejected]
    final = np.zeros(count, dtype=np.intp)
    bonus, fixed = np.flatnonzero(~rejected), np.flatnonzero(rejected)
    final[bonus] = _draw(scored.cdf(accepted[bonus], bonus), final_u[bonus])   # the bonus, from p
    row = scored.row(accepted[fixed], fixed)
    if rule.redraw == "residual":
        residual = np.maximum(row - draft.row(accepted[fixed], fixed), 0.0)
        row = np.where((residual.sum(axis=1) <= 0)[:, None], row, residual)
    final[fixed] = _draw(np.cumsum(row, axis=1), final_u[fixed])
    return accepted, final, accepted + rejected + 1, ratio


def _moments(ratio: np.ndarray, drafted: np.ndarray):
    """``lossless._round_moments`` for every sequence (grouped by how many tokens were drafted, so
    that each sum adds the same numbers in the same order)."""
    mean, var = np.ones(drafted.size), np.zeros(drafted.size)
    for m in np.unique(drafted).tolist():
        if m == 0:
            continue
        rows = drafted == m
        survive = np.cumprod(ratio[rows, :m], axis=1)
        i = np.arange(1, m + 1)
        mean_n = survive.sum(axis=1)
        second = ((2 * i - 1) * survive).sum(axis=1)
        square = np.array([v**2 for v in mean_n.tolist()])  # pow(), as for the one-sequence scalar (x * x may differ by 1 ulp)
        mean[rows], var[rows] = 1.0 + mean_n, second - square
    return mean, var


def target_decode_batch(target, prompts, n_tokens, *, greedy=True, temperature=1.0, seeds=None) -> list[list[int]]:
    """``target_decode(target, prompts[b], n_tokens, seed=seeds[b], ...)`` for every b, one token
    per step for all prompts together: the same tokens."""
    prompts = [_prompt(target, p) for p in prompts]
    if not prompts:
        raise ValueError("prompts 不可以是空的：至少要有一個 prompt")
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=1_000_000)
    uniforms = None if greedy else _Uniforms(_seeds(seeds, len(prompts)))
    width = target.context_length if _batched(target, min(len(p) for p in prompts)) else 0
    batch = _Batch(prompts, width, n_tokens)
    rows = np.arange(len(prompts))
    one = np.ones(len(prompts), dtype=np.intp)
    first = np.zeros(len(prompts), dtype=np.intp)
    for _ in range(n_tokens):
        p = _Rows.at(target, batch, rows, batch.tails(rows), [0], temperature)
        if greedy:
            x = p.best()[:, 0]
        else:
            x = _draw(p.cdf(first), uniforms.peek(rows, 1)[:, 0])
            uniforms.use(rows, 1)
        batch.append(rows, x[:, None], one)
    return [batch.tokens[b, batch.start[b]:].tolist()[:n_tokens] for b in range(len(prompts))]
