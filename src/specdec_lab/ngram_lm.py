"""Tiny character n-gram language models: the target and the draft of the lossless lab.

``CharNgramLM(text, order)`` counts which character follows each run of ``order − 1``
characters and mixes the orders with Witten–Bell interpolation:

    p(w | h) = (c(h, w) + u(h) · p(w | h′)) / (c(h) + u(h))

where c(h, w) counts w after context h, c(h) all characters after h, u(h) how many different
characters followed h, and h′ is h without its first character; unseen contexts fall back to h′,
and the last fallback is the unigram frequency. A character the text never contains gets
probability 0, which the lab uses on purpose (``DilutedDraft``).

``probs(ids, temperature)`` gives the exact next-character distribution — the thing a real model
cannot give you cheaply, and what lets the lab check "lossless" against the truth. An order-n
model only looks at the last n − 1 characters, so its output is a Markov chain on those.
``probs_batch(windows, temperature)`` gives the same rows for many contexts at once (one row of
``windows`` per context, its last n − 1 ids), for the batched decoder ``specdec_lab.lossless_batch``.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from . import _validate as check
from .corpus import CORPUS

__all__ = ["Vocabulary", "CharNgramLM", "DilutedDraft", "CopyingLM", "course_models", "JUNK",
           "earlier_match_end", "earlier_match_ends"]

JUNK = "□"
"""A character the corpus never contains: every model gives it probability 0."""


class Vocabulary:
    """Characters ↔ integer ids."""

    def __init__(self, chars):
        self.chars = list(dict.fromkeys(chars))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise ValueError(f"text 必須是字串，收到 {type(text).__name__}")
        unknown = sorted({c for c in text if c not in self.index})
        if unknown:
            shown = "、".join(repr(c) for c in unknown[:8])
            raise ValueError(f"text 含有詞表外的字 {shown}：模型只認得語料裡出現過的 {len(self)} 個字")
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        chars, ids = self.chars, ids.tolist() if isinstance(ids, np.ndarray) else ids
        try:
            return "".join([chars[i] for i in ids])  # ints (the usual case): no int() call per id
        except TypeError:
            return "".join(chars[int(i)] for i in ids)


class CharNgramLM:
    """A character n-gram model with Witten–Bell interpolation (see the module docstring)."""

    def __init__(self, text: str, order: int, vocab: Vocabulary | None = None):
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 1 <= order <= 8:
            raise ValueError(f"order 必須是 1 到 8 的整數（看前面 order − 1 個字），收到 {order!r}")
        if not isinstance(text, str) or len(text) < order:
            raise ValueError(f"text 必須是至少 {order} 個字的字串")
        self.order = int(order)
        self.vocab = vocab if vocab is not None else Vocabulary(sorted(set(text)) + [JUNK])
        ids = self.vocab.encode(text)
        size = len(self.vocab)
        unigram = np.bincount(np.asarray(ids, dtype=np.intp), minlength=size).astype(float)  # intp: wasm32
        self._unigram = unigram / unigram.sum()
        self.never = np.flatnonzero(unigram == 0)  # tokens it gives probability 0 after any context
        tables: list[dict] = []
        for n in range(2, self.order + 1):
            counts: dict[tuple, Counter] = defaultdict(Counter)
            for i in range(n - 1, len(ids)):
                counts[tuple(ids[i - n + 1:i])][ids[i]] += 1
            table = {}
            for context, followers in counts.items():
                keys = np.fromiter(followers.keys(), dtype=np.intp)
                values = np.fromiter(followers.values(), dtype=float)
                total, types = values.sum(), float(len(values))
                table[context] = (keys, values / (total + types), types / (total + types))
            tables.append(table)
        self._tables = tables
        self._cache: dict[tuple, np.ndarray] = {}
        self._rows: dict[float, StateTable] = {}  # probs_batch's rows per temperature

    @property
    def context_length(self) -> int:
        """How many previous characters the model looks at (order − 1)."""
        return self.order - 1

    def state(self, ids) -> tuple:
        """The part of the history the next-character distribution depends on."""
        return tuple(ids[len(ids) - self.context_length:]) if self.context_length else ()

    def probs(self, ids, temperature: float = 1.0) -> np.ndarray:
        """The exact next-character distribution after ``ids`` (read-only array of length V).

        ``temperature`` T reshapes it as p^(1/T), renormalised; T → 0 is not allowed here
        (greedy decoding uses the argmax of T = 1 instead).
        """
        _check_temperature(temperature)
        key = (self.state(ids), float(temperature))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        p = self._unigram.copy()
        history = key[0]
        for n, table in enumerate(self._tables, start=2):
            if len(history) < n - 1:
                break
            entry = table.get(history[len(history) - (n - 1):])
            if entry is None:
                continue  # unseen context: keep the lower-order estimate
            keys, weights, backoff = entry
            p *= backoff
            p[keys] += weights
        if temperature != 1.0:
            with np.errstate(divide="ignore"):
                logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)) / temperature, -np.inf)
            p = np.exp(logp - logp.max())
        p /= p.sum()
        p.setflags(write=False)
        self._cache[key] = p
        return p

    def probs_batch(self, windows, temperature: float = 1.0) -> np.ndarray:
        """``probs`` for many contexts at once: row b is ``probs(windows[b], temperature)``, bit for
        bit (each distinct context is computed once, with the same operations as ``probs``, and
        kept). ``windows`` is an integer array (contexts × at least ``context_length``); only its
        last ``context_length`` columns are read."""
        index, table = self.row_index(windows, temperature)
        return table.rows[index]

    def row_index(self, windows, temperature: float = 1.0):
        """Where ``probs_batch``'s rows are kept: ``(index, table)``, with ``table.rows[index]``
        the rows, ``table.best[index]`` their argmax, ``table.cdf[index]`` their ``np.cumsum`` and
        ``table.next[index, token]`` the index after one more token (``automaton``)."""
        windows = np.asarray(windows)
        m = self.context_length
        if windows.ndim != 2 or windows.shape[1] < m:
            raise ValueError(f"windows 必須是二維的 token 編號陣列，每列至少 {m} 個，收到形狀 {windows.shape}")
        table = self._rows.get(float(temperature))
        if table is None:
            _check_temperature(temperature)
            histories, follow = self.automaton()
            rows = np.concatenate([self._many(h, temperature) for h in histories])
            table = self._rows[float(temperature)] = StateTable(rows, follow)
        index = np.zeros(windows.shape[0], dtype=np.intp)
        for column in windows[:, windows.shape[1] - m:].T:
            index = table.next[index, column]
        return index, table

    def automaton(self):
        """The model's states and how one token moves between them, built once.

        A state is a context the text contains (each order's contexts, and the empty one). The
        row after any history is the row of its longest suffix that is a state: a shorter suffix
        of a context the text contains is one too, so ``probs`` finds every order up to that
        suffix's and none after it, and computes the same numbers. The longest such suffix of
        ``history + [w]`` depends on the one of ``history`` and on w only (if ``h + w`` is in the
        text, so is h followed by w), so ``follow[s, w]`` is the state after state s and token w.
        Returns ``(histories, follow)``: the states' contexts, one array (states × length) per
        length 0 … context_length (their rows in this order), and ``follow`` (states × V).
        """
        if getattr(self, "_automaton", None) is None:
            size, m = len(self.vocab), self.context_length
            codes = [np.zeros(1, dtype=np.int64)] + [table[0] for table in self._flat_tables()]  # by length
            first = np.cumsum([0] + [c.size for c in codes])  # each length's first state
            # one token w: its own state (a context of length 1), or the empty one (0)
            single = np.zeros(size, dtype=np.intp)
            if m:
                single[codes[1]] = first[1] + np.arange(codes[1].size)
            follow = np.empty((int(first[-1]), size), dtype=np.intp)
            follow[:] = single
            # a longer suffix g (length n) of context + w wins where the text has it: for every
            # state whose context ends with g's first n − 1 tokens, and w = g's last (n growing,
            # so the longest one is left; each state and w has at most one g of each length)
            for n in range(2, m + 1):
                prefix, last = codes[n] // size, codes[n] % size
                for length in range(n - 1, m + 1):
                    suffix = codes[length] % size ** (n - 1)  # each state's last n − 1 tokens
                    order = np.argsort(suffix, kind="stable")
                    lo = np.searchsorted(suffix[order], prefix, side="left")
                    many = np.searchsorted(suffix[order], prefix, side="right") - lo
                    g = np.repeat(np.arange(prefix.size), many)
                    at = np.repeat(lo - np.cumsum(many) + many, many) + np.arange(many.sum())
                    follow[first[length] + order[at], last[g]] = first[n] + g
            histories = [(c[:, None] // size ** np.arange(n - 1, -1, -1, dtype=np.int64)) % size
                         for n, c in enumerate(codes)]
            histories[0] = np.zeros((1, 0), dtype=np.int64)
            self._automaton = (histories, follow)
        return self._automaton

    def _many(self, histories: np.ndarray, temperature: float) -> np.ndarray:
        """``probs`` of each row of ``histories`` (contexts × context_length), all at once: the same
        operations on each element as ``probs``, so the same numbers."""
        count, m = histories.shape
        size = len(self.vocab)
        p = np.tile(self._unigram, (count, 1))
        for n, (contexts, backoff, start, length, keys, weights) in enumerate(self._flat_tables(), start=2):
            if m < n - 1:
                break
            suffix = np.zeros(count, dtype=np.int64)
            for column in histories[:, m - (n - 1):].T:
                suffix = suffix * size + column
            at = np.minimum(np.searchsorted(contexts, suffix), contexts.size - 1)
            rows = np.flatnonzero(contexts[at] == suffix)  # the others are unseen: keep the lower order
            entry = at[rows]
            p[rows] *= backoff[entry][:, None]
            lengths = length[entry]
            first = np.repeat(start[entry] - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
            p[np.repeat(rows, lengths), keys[first]] += weights[first]
        if temperature != 1.0:
            with np.errstate(divide="ignore"):
                logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)) / temperature, -np.inf)
            p = np.exp(logp - logp.max(axis=1, keepdims=True))
        return p / np.array([row.sum() for row in p])[:, None]  # each row summed as probs sums it

    def _flat_tables(self) -> list:
        """Each order's table as arrays: context codes (sorted), backoff weights, and each
        context's followers (start and length in the flat keys and weights)."""
        if getattr(self, "_flat", None) is None:
            size, flat = len(self.vocab), []
            for table in self._tables:
                code = {context: _code(context, size) for context in table}
                items = sorted(table.items(), key=lambda item: code[item[0]])
                length = np.array([e[0].size for _, e in items], dtype=np.intp)
                flat.append((np.array([code[c] for c, _ in items], dtype=np.int64),
                             np.array([e[2] for _, e in items]),
                             np.cumsum(length) - length, length,
                             np.concatenate([e[0] for _, e in items]),
                             np.concatenate([e[1] for _, e in items])))
            self._flat = flat
        return self._flat


def _check_temperature(temperature) -> None:
    if not (isinstance(temperature, (int, float)) and 0.05 <= temperature <= 20):
        raise ValueError(f"temperature 必須介於 0.05 與 20 之間，收到 {temperature!r}")


def _code(ids, size: int) -> int:
    """A context as one integer: its ids as digits in base ``size``."""
    code = 0
    for i in ids:
        code = code * size + int(i)
    return code


class StateTable:
    """A model's rows for every state at one temperature (``CharNgramLM.row_index``): ``rows``
    (states × V), ``best`` (each row's argmax), ``cdf`` (each row's ``np.cumsum``, computed
    the first time it is read) and ``next`` (state × token → state)."""

    def __init__(self, rows: np.ndarray, follow: np.ndarray):
        self.rows, self.next = rows, follow
        self.best = rows.argmax(axis=1)
        self._cdf = None

    @property
    def cdf(self) -> np.ndarray:
        if self._cdf is None:
            self._cdf = np.cumsum(self.rows, axis=1)
        return self._cdf

    def with_cdf(self) -> "StateTable":
        """The table, its cumulative sums computed."""
        self.cdf
        return self


class DilutedDraft:
    """A draft that is the target itself, except that with probability 1 − ``alpha`` it
    proposes ``JUNK``, a character the target never writes.

    Its proposals are accepted with probability exactly ``alpha`` at every position, whatever
    the context (a real token is never over-proposed: q = α·p ≤ p; JUNK always is: p = 0), so
    Eq. 1's i.i.d. assumption holds by construction.
    """

    def __init__(self, target: CharNgramLM, alpha: float):
        check.scalar("alpha", alpha)
        self.target, self.alpha = target, float(check.probability("alpha", alpha))
        self.vocab = target.vocab
        self._junk = target.vocab.index[JUNK]
        self._rows: dict[int, StateTable] = {}  # row_index's rows, by the target's table

    @property
    def context_length(self) -> int:
        return self.target.context_length

    def probs(self, ids, temperature: float = 1.0) -> np.ndarray:
        q = self.alpha * self.target.probs(ids, temperature)
        q[self._junk] += 1.0 - self.alpha
        return q

    def probs_batch(self, windows, temperature: float = 1.0) -> np.ndarray:
        """``probs`` for many contexts at once (see ``CharNgramLM.probs_batch``)."""
        index, table = self.row_index(windows, temperature)
        return table.rows[index]

    def row_index(self, windows, temperature: float = 1.0):
        """Like ``CharNgramLM.row_index``: this draft's rows for each of the target's states, computed
        from the target's rows the first time."""
        index, kept = self.target.row_index(windows, temperature)
        table = self._rows.get(id(kept))
        if table is None:  # q = α·p, plus 1 − α on JUNK
            q = self.alpha * kept.rows
            q[:, self._junk] += 1.0 - self.alpha
            table = self._rows[id(kept)] = StateTable(q, kept.next)
            table.of = kept  # kept stays alive while its id is a key
        return index, table


def earlier_match_end(seq: list, n: int) -> int | None:
    """Where the most recent earlier occurrence of the last ``n`` items of ``seq`` ends — the index
    of the item that followed it — or None when they did not occur before."""
    tail = seq[-n:]
    for start in range(len(seq) - n - 1, -1, -1):
        if seq[start:start + n] == tail:
            return start + n
    return None


def earlier_match_ends(tokens, lengths, sizes, rows=None) -> dict[int, np.ndarray]:
    """``earlier_match_end(seq, n)`` for many sequences and each n of ``sizes`` at once, −1 for
    None: sequence i is the first ``lengths[i]`` tokens (at most the number of columns) of row
    ``rows[i]`` of ``tokens`` (non-negative ids; ``rows`` defaults to one sequence per row).
    Returns {n: one end per sequence}.

    The last n tokens of a sequence of length L occurred earlier, ending just before column e,
    when e < L and the n tokens before e are the last n: the columns where the last n − 1 matched,
    checked one token further back (−1 stands before the first token on both sides, so a sequence
    of n or fewer tokens has no earlier match: its first token is never matched)."""
    tokens, lengths = np.asarray(tokens), np.asarray(lengths, dtype=np.intp)
    rows = np.arange(tokens.shape[0]) if rows is None else np.asarray(rows, dtype=np.intp)
    width, longest, i = tokens.shape[1], max(sizes), np.arange(rows.size)
    small = tokens.size == 0 or int(tokens.max()) < 2 ** 15 - 1  # int16 compares are quicker
    padded = np.full((rows.size, longest + width), -1, dtype=np.int16 if small else np.int64)
    padded[:, longest:] = tokens[rows]  # column longest + c: token c; −1 before token 0
    same = np.arange(width + 1) < lengths[:, None]  # sequences × columns e = 0 … width
    out = {}
    equal = np.empty(same.shape, dtype=bool)
    for n in range(1, longest + 1):
        np.equal(padded[:, longest - n:longest - n + width + 1], padded[i, longest + lengths - n][:, None], out=equal)
        same &= equal
        if n in sizes:
            end = width - same[:, ::-1].argmax(axis=1)  # the last e where they match
            out[n] = np.where(same[i, end], end, -1)
    return out


class CopyingLM:
    """A model that, like a large model rewriting a text it was given, tends to copy.

    If the last ``match`` characters appeared earlier in the history (the prompt included), it
    puts weight ``copy_weight`` on the character that followed their most recent earlier
    appearance and the rest on ``base``; otherwise it is ``base``. An n-gram model cannot copy a
    sentence it was shown, so the lab adds this to make "rewrite this text" a task the target
    actually does. Its probabilities are still exact.
    """

    def __init__(self, base: CharNgramLM, copy_weight: float = 0.8, match: int = 3):
        check.scalar("copy_weight", copy_weight)
        self.copy_weight = float(check.probability("copy_weight", copy_weight, what="介於 0 與 1 之間的權重"))
        self.match = check.scalar_int("match", match, minimum=1)
        self.base = base
        self.vocab = base.vocab
        self.context_length = base.context_length

    def copied(self, ids) -> int | None:
        """The character the copy head points at, or None."""
        seq = list(ids)
        end = earlier_match_end(seq, self.match)
        return None if end is None else seq[end]

    def probs_after(self, tokens, lengths, temperature: float = 1.0) -> np.ndarray:
        """``probs`` after many histories at once: row b's first ``lengths[b, j]`` tokens, for every
        column j of ``lengths`` (rows × P, each at least ``context_length``). Returns rows × P × V,
        the same numbers as ``probs`` (the base's rows by ``row_index``, then the same mixing)."""
        index, rows = self.rows_after(tokens, lengths, temperature)
        return rows[index]

    def rows_after(self, tokens, lengths, temperature: float = 1.0, need=None, known=None):
        """``probs_after`` kept compact: ``(index, rows)`` with ``rows[index]`` its rows; where
        ``need`` (rows × P) is False no row is computed (index 0 stands in: a row nobody reads).
        ``known``: ``earlier_match_ends`` of each row at ``lengths[:, 0]``, by n, when a caller
        already has them (prompt lookup looks for the same runs): the copy head reuses them."""
        tokens, lengths = np.asarray(tokens), np.asarray(lengths)
        wanted = np.ones(lengths.shape, dtype=bool) if need is None else np.asarray(need, dtype=bool)
        b, j = np.nonzero(wanted)
        length, m = lengths[b, j], self.context_length
        index, table = self.base.row_index(tokens[b[:, None], length[:, None] - m + np.arange(m)], temperature)
        if known is not None and self.match in known:
            end = np.asarray(known[self.match])[b]  # right for j = 0
            later = np.flatnonzero(j > 0)
            end[later] = earlier_match_ends(tokens, length[later], [self.match], rows=b[later])[self.match]
        else:
            end = earlier_match_ends(tokens, length, [self.match], rows=b)[self.match]
        copies = np.flatnonzero(end >= 0)
        scale = np.where(end >= 0, 1.0 - self.copy_weight, 1.0)  # × 1.0 leaves a row as it is
        p = table.rows[index] * scale[:, None]
        p[copies, tokens[b[copies], end[copies]]] += self.copy_weight
        where = np.zeros(lengths.shape, dtype=np.intp)
        where[b, j] = np.arange(b.size)
        return where, p

    def probs(self, ids, temperature: float = 1.0) -> np.ndarray:
        p = self.base.probs(ids, temperature)
        x = self.copied(ids)
        if x is None:
            return p
        p = (1.0 - self.copy_weight) * p
        p[x] += self.copy_weight
        return p


def course_models(target_order: int = 4, draft_order: int = 2) -> tuple[CharNgramLM, CharNgramLM]:
    """The lab's pair, trained on the course corpus: a target that reads 3 characters back and a
    weaker draft that reads 1, over the same vocabulary."""
    target = CharNgramLM(CORPUS, target_order)
    draft = CharNgramLM(CORPUS, draft_order, vocab=target.vocab)
    return target, draft
