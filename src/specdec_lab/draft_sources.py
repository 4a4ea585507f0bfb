"""Where drafts come from, on the course's character n-gram models.

These are character n-gram STAND-INS for the papers' drafters, not their networks: each reads
the last ``context`` characters of the text (1 by default, as the course's draft model does)
and counts the course corpus. What they keep of each method is where a guess for position i
comes from:

* ``MedusaHeads`` (Medusa-style) — head i guesses position i straight from the prefix, on its
  own: the character most often found i places after the same ``context`` characters in the
  corpus (a "skip" n-gram). No head sees the guesses before its own.
* ``EagleChain`` (EAGLE-style) — the draft goes on from its own guesses: an n-gram model's
  argmax, one position after another, each guess appended before the next.
* ``BlockDraft`` (DFlash-like) — the whole block in one pass, from the prefix only, taken
  jointly: the K-character run that most often follows the same ``context`` characters in the
  corpus.
* ``ConfidenceScheduled`` (DSpark-like) — an ``EagleChain`` that stops where its confidence (the
  probability it gives its own guess) falls below ``threshold``: only the guesses up to there are
  verified (at least one).

``measure`` runs the target with one of them for many prompts and counts, per round, how many
guesses were verified and accepted. Verification is the lossless rule for a draft that is sure
of its guess (q one-hot): guess x is accepted with probability p(x) and, when rejected, the
target's token is drawn from p without x; with ``temperature=None`` it is greedy (accepted when x
is the target's argmax). Either way the text is the target's own.

Cost model (``DraftStats.speedup``), in units of one target forward pass: a round costs
1 + ``verify_cost`` × (guesses verified) + ``draft_cost`` × (draft steps). ``verify_cost`` is 0
by default — an idle GPU verifies a few guesses at the cost of one (decoding is memory-bound);
at high concurrency every verified guess costs compute, and that is when verifying fewer pays
(``confidence_sweep``). One draft step costs ``draft_cost`` (default 0.05): Medusa heads and the
block draft take ONE step per round whatever K is, the EAGLE chain K steps, the confidence
schedule as many steps as it ran (the guesses verified, plus the one whose low confidence stopped
it). Speedup = tokens per round ÷ round cost.

The default temperature is the lossless lab's 0.6: the papers' figures below are at T = 0, but
the n-gram target's greedy text soon repeats itself (「接受率。接受率。…」), so greedy numbers
measure a loop.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .corpus import CORPUS
from .lossless_experiments import TEMPERATURE
from .ngram_lm import CharNgramLM
from .progress import Progress
from .tables import Table

__all__ = ["MedusaHeads", "EagleChain", "BlockDraft", "ConfidenceScheduled", "DraftStats", "measure",
           "draft_sources_table", "confidence_sweep", "PAPER_FIGURES"]


def _check_k(k) -> int:
    return check.scalar_int("k", k, minimum=1, maximum=32)


def _check_context(context) -> int:
    return check.scalar_int("context", context, minimum=0, maximum=4)


class _Lookup:
    """Counts of what follows each run of up to ``context`` characters in the corpus, with the
    longest run seen first (a run the corpus never has falls back to a shorter one)."""

    def __init__(self, ids, context, what):
        self.context = context
        self.tables = []
        for n in range(context + 1):  # n characters of context
            table = defaultdict(Counter)
            for t in range(n, len(ids)):
                item = what(t)
                if item is not None:
                    table[tuple(ids[t - n:t])][item] += 1
            self.tables.append(table)

    def best(self, history):
        """(the most frequent follower, its share) after the longest run of ``history`` seen."""
        for n in range(min(self.context, len(history)), -1, -1):
            found = self.tables[n].get(tuple(history[len(history) - n:]) if n else ())
            if found:
                item, count = max(found.items(), key=lambda kv: (kv[1], _neg(kv[0])))
                return item, count / sum(found.values())
        return None, 0.0


def _neg(item):
    """Ties go to the smaller ids."""
    return tuple(-i for i in item) if isinstance(item, tuple) else -item


class MedusaHeads:
    """Medusa-style heads: head i (1 … k) guesses the character i places ahead from the prefix's
    last ``context`` characters alone (a skip n-gram counted on the corpus), independently of the
    other heads' guesses. One draft pass gives all k guesses.

    >>> from specdec_lab.ngram_lm import course_models
    >>> target, _ = course_models()
    >>> heads = MedusaHeads(target.vocab, 3)
    >>> guesses, confidence = heads.propose(target.vocab.encode("模型"), 3)
    >>> len(guesses), bool(0 < confidence[0] <= 1)
    (3, True)
    """

    steps_per_round = "one"

    def __init__(self, vocab, k: int, context: int = 1, text: str = CORPUS):
        self.k, self.context, self.vocab = _check_k(k), _check_context(context), vocab
        ids = vocab.encode(text)
        self.heads = [_Lookup(ids, self.context, lambda t, i=i: ids[t + i - 1] if t + i - 1 < len(ids) else None)
                      for i in range(1, self.k + 1)]
        self._cache = {}

    def propose(self, history, k):
        key = tuple(history[len(history) - self.context:]) if self.context else ()
        if key not in self._cache:
            found = [head.best(list(key)) for head in self.heads]
            self._cache[key] = ([f[0] for f in found], [f[1] for f in found])
        tokens, conf = self._cache[key]
        return tokens[:k], conf[:k]


class EagleChain:
    """EAGLE-style chain: an n-gram draft that reads ``context`` characters and goes on from its
    own guesses (its argmax, appended, then the next). k guesses take k draft steps. Confidence:
    the probability it gives each guess."""

    steps_per_round = "k"

    def __init__(self, vocab, context: int = 1, text: str = CORPUS):
        self.context, self.vocab = _check_context(context), vocab
        self.model = CharNgramLM(text, self.context + 1, vocab=vocab)
        self._cache = {}

    def propose(self, history, k):
        key = (tuple(history[len(history) - self.context:]) if self.context else (), k)
        if key not in self._cache:
            seq, tokens, conf = list(key[0]), [], []
            for _ in range(k):
                q = self.model.probs(seq)
                x = int(np.argmax(q))
                tokens.append(x)
                conf.append(float(q[x]))
                seq.append(x)
            self._cache[key] = (tokens, conf)
        return self._cache[key]


class BlockDraft:
    """DFlash-like block draft: all k positions in one pass, from the prefix only, taken jointly —
    the k-character run that most often follows the prefix's last ``context`` characters in the
    corpus. Confidence (the same for the whole block): that run's share of what followed.
    DFlash's own b16 block drafts 15 tokens (its first slot is the last verified token; the
    released vLLM config sets num_speculative_tokens to 15)."""

    steps_per_round = "one"

    def __init__(self, vocab, k: int, context: int = 1, text: str = CORPUS):
        self.k, self.context, self.vocab = _check_k(k), _check_context(context), vocab
        ids = vocab.encode(text)
        self.lookup = _Lookup(ids, self.context, lambda t: tuple(ids[t:t + self.k]) if t + self.k <= len(ids) else None)
        self._cache = {}

    def propose(self, history, k):
        key = tuple(history[len(history) - self.context:]) if self.context else ()
        if key not in self._cache:
            block, share = self.lookup.best(list(key))
            self._cache[key] = (list(block), [share] * self.k)
        tokens, conf = self._cache[key]
        return tokens[:k], conf[:k]


class ConfidenceScheduled:
    """DSpark-like confidence schedule over an ``EagleChain``: the chain drafts until its
    confidence in a guess falls below ``threshold`` (or k guesses), and only the guesses before
    that one are verified — at least the first.

    >>> from specdec_lab.ngram_lm import course_models
    >>> target, _ = course_models()
    >>> ConfidenceScheduled(EagleChain(target.vocab), threshold=1.5)
    Traceback (most recent call last):
    ...
    ValueError: threshold 必須是信心門檻（草稿給自己猜的字的機率），有效範圍 [0, 1]；收到 1.5
    """

    steps_per_round = "scheduled"

    def __init__(self, chain: EagleChain, threshold: float):
        if not isinstance(chain, EagleChain):
            raise ValueError(f"chain 必須是 EagleChain，收到 {type(chain).__name__}")
        check.scalar("threshold", threshold)
        self.threshold = float(check.between("threshold", threshold, 0.0, 1.0,
                                             what="信心門檻（草稿給自己猜的字的機率）"))
        self.chain, self.vocab = chain, chain.vocab

    def propose(self, history, k):
        tokens, conf = self.chain.propose(history, k)
        low = [i for i, c in enumerate(conf) if c < self.threshold]
        n = max(1, low[0]) if low else len(tokens)
        return tokens[:n], conf[:n]


@dataclass(frozen=True)
class DraftStats:
    """One drafter's measured rounds: per round the guesses verified, accepted, and draft steps."""

    name: str
    k: int
    verified: np.ndarray
    accepted: np.ndarray
    steps: np.ndarray
    tokens: tuple = ()  # the characters written after each prompt

    @property
    def rounds(self) -> int:
        return int(self.verified.size)

    @property
    def tokens_per_round(self) -> float:
        return float((self.accepted + 1).mean())

    @property
    def std_error(self) -> float:
        return float((self.accepted + 1).std() / np.sqrt(max(1, self.rounds - 1)))

    def position_acceptance(self) -> np.ndarray:
        """Per position i = 1 … k: accepted at i ÷ rounds that accepted every guess before i and
        verified a guess at i (NaN where no round did)."""
        i = np.arange(1, self.k + 1)[:, None]
        tried = ((self.accepted >= i - 1) & (self.verified >= i)).sum(axis=1)
        hit = (self.accepted >= i).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tried > 0, hit / np.maximum(tried, 1), np.nan)

    def position_reach(self) -> np.ndarray:
        """Per position i = 1 … k: the share of rounds that accepted a guess at i (the product of
        ``position_acceptance`` up to i, where every guess is verified). Its fall is the tail
        collapse; its sum + 1 is ``tokens_per_round``."""
        return (self.accepted >= np.arange(1, self.k + 1)[:, None]).mean(axis=1)

    def speedup(self, draft_cost: float = 0.05, verify_cost: float = 0.0) -> float:
        """Tokens per round ÷ (1 + ``verify_cost`` × guesses verified + ``draft_cost`` × draft
        steps), per round on average: see the module docstring."""
        check.scalar("draft_cost", draft_cost)
        check.scalar("verify_cost", verify_cost)
        c = float(check.nonnegative("draft_cost", draft_cost))
        v = float(check.nonnegative("verify_cost", verify_cost))
        return self.tokens_per_round / (1.0 + v * float(self.verified.mean()) + c * float(self.steps.mean()))


def measure(target, drafter, prompts, n_tokens, k, *, name="", temperature=None, seed=0,
            progress=None, done=0) -> DraftStats:
    """Write ``n_tokens`` characters after each prompt with ``drafter``'s guesses (k a round),
    verified by ``target`` (greedy when ``temperature`` is None, else the lossless rule for sure
    guesses at that temperature; see the module docstring). ``progress`` (optional) gets
    ``update(done + characters written so far)`` after each prompt."""
    k = _check_k(k)
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=100_000)
    seed = check.scalar_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    t = 1.0 if temperature is None else temperature
    verified, accepted, steps, texts = [], [], [], []
    mode = getattr(drafter, "steps_per_round", "one")
    for prompt in prompts:
        seq = target.vocab.encode(prompt) if isinstance(prompt, str) else list(prompt)
        start = len(seq)
        while len(seq) - start < n_tokens:
            guesses, _ = drafter.propose(seq, k)
            a = 0
            for x in guesses:
                p = target.probs(seq, t)
                ok = x == int(np.argmax(p)) if temperature is None else rng.random() < p[x]
                if not ok:
                    break
                seq.append(x)
                a += 1
            p = target.probs(seq, t)
            if temperature is None:
                seq.append(int(np.argmax(p)))
            else:
                rest = p.copy()
                if a < len(guesses):
                    rest[guesses[a]] = 0.0
                seq.append(int(min(np.searchsorted(np.cumsum(rest), rng.random() * rest.sum(), side="right"),
                                   len(rest) - 1)))
            verified.append(len(guesses))
            accepted.append(a)
            steps.append(1 if mode == "one" else len(guesses) if mode == "k" else min(len(guesses) + 1, k))
        texts.append(seq[start:start + n_tokens])
        if progress is not None:
            progress.update(done + len(texts) * n_tokens)
    return DraftStats(name, k, np.array(verified), np.array(accepted), np.array(steps), tuple(texts))


PAPER_FIGURES = {
    "Medusa": ("τ 2.40", "EAGLE-2（Li et al. 2024）表 1，Vicuna-7B、T = 0、MT-bench；未核對原文"),
    "EAGLE": ("τ 3.79（EAGLE-2：4.68）", "EAGLE-2（Li et al. 2024）表 1，Vicuna-7B、T = 0、MT-bench；未核對原文"),
    "DFlash": ("b16：一次草擬 15 個", "DFlash（arXiv 2602.06036）；z-lab/dflash README 的 vLLM 指令 num_speculative_tokens 15"),
    "DSpark": ("—", "（沒有核對過的數字）"),
}
"""What the papers report, beside our stand-ins' numbers: (figure, source). "未核對原文" marks a
figure quoted from issue 47 that we could not check against the paper itself."""


def draft_sources_table(target, prompts, *, n_tokens=200, k=5, block=15, threshold=0.3, context=1,
                        temperature=TEMPERATURE, draft_cost=0.05, seed=0) -> Table:
    """Each stand-in measured on ``prompts``: per-position acceptance (first 8 positions), tokens
    per round, speedup under the cost model (``draft_cost`` per draft step), and the papers'
    own figures beside them (``PAPER_FIGURES``). Per-position acceptance is conditional (accepted at
    i among rounds that got to i); the share of rounds that got to i is shown beside it."""
    vocab = target.vocab
    chain = EagleChain(vocab, context)
    drafters = [
        ("Medusa", f"Medusa 式（{k} 個頭）", MedusaHeads(vocab, k, context), k),
        ("EAGLE", f"EAGLE 式鏈（{k} 步）", chain, k),
        ("DFlash", f"DFlash 式區塊（{block} 格）", BlockDraft(vocab, block, context), block),
        ("DSpark", f"DSpark 式（信心 ≥ {threshold:g}，最多 {block} 步）", ConfidenceScheduled(chain, threshold), block),
    ]
    rows, prompts = [], list(prompts)
    progress = Progress("草稿來源", len(drafters) * len(prompts) * n_tokens)
    for i, (key, label, drafter, kk) in enumerate(drafters):
        stats = measure(target, drafter, prompts, n_tokens, kk, name=label, temperature=temperature, seed=seed,
                        progress=progress, done=i * len(prompts) * n_tokens)
        acc = " ".join("—" if np.isnan(a) else f"{a:.2f}" for a in stats.position_acceptance()[:8])
        reach = " ".join(f"{r:.2f}" for r in stats.position_reach()[:8])
        figure, source = PAPER_FIGURES[key]
        rows.append((label, acc, reach, f"{stats.tokens_per_round:.2f}", f"{stats.speedup(draft_cost):.2f}×",
                     figure, source))
    progress.close()
    return Table(("草稿來源（字元 n-gram 替身）", "各位置接受率（前 8 格）", "走到各位置的輪數比例", "每輪產出", "加速",
                  "論文的數字", "出處"), tuple(rows), align="<<<>><<",
                 caption=f"{'貪婪' if temperature is None else f'溫度 {temperature:g}'}，{len(prompts)} 段各寫 {n_tokens} 字；"
                         f"每步草稿成本 {draft_cost:g}（大模型一次前向 = 1）")


def confidence_sweep(target, prompts, thresholds=(0.0, 0.1, 0.2, 0.3, 0.5), *, k=8, n_tokens=200, context=1,
                     temperature=TEMPERATURE, draft_cost=0.05, verify_cost=0.1, seed=0) -> Table:
    """The DSpark-like schedule at several confidence thresholds (0: verify all ``k`` guesses):
    guesses verified per round, tokens per round, and speedup on an idle GPU (verifying is free)
    and on a busy one (each verified guess costs ``verify_cost``).

    >>> from specdec_lab.ngram_lm import course_models
    >>> target, _ = course_models()
    >>> print(confidence_sweep(target, ["草稿模型"], thresholds=[0.0], k=4, n_tokens=30))  # doctest: +ELLIPSIS
    EAGLE 式鏈最多 4 步，每步草稿成本 0.05
    信心門檻  每輪驗證幾個  每輪產出...
           0          4.00 ...
    """
    thresholds = np.atleast_1d(check.probability("thresholds", thresholds))
    chain = EagleChain(target.vocab, context)
    rows, prompts = [], list(prompts)
    progress = Progress("信心門檻", thresholds.size * len(prompts) * n_tokens)
    for i, threshold in enumerate(thresholds.tolist()):
        stats = measure(target, ConfidenceScheduled(chain, threshold), prompts, n_tokens, k, temperature=temperature,
                        seed=seed, progress=progress, done=i * len(prompts) * n_tokens)
        rows.append((f"{threshold:g}", f"{stats.verified.mean():.2f}", f"{stats.tokens_per_round:.2f}",
                     f"{stats.speedup(draft_cost):.2f}×", f"{stats.speedup(draft_cost, verify_cost):.2f}×"))
    progress.close()
    return Table(("信心門檻", "每輪驗證幾個", "每輪產出", "加速（GPU 閒）", f"加速（每驗一個 +{verify_cost:g}）"),
                 tuple(rows), align=">>>>>", caption=f"EAGLE 式鏈最多 {k} 步，每步草稿成本 {draft_cost:g}")
