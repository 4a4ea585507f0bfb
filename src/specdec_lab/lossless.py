"""The lossless lab: speculative decoding end to end with models whose probabilities are known.

``speculative_decode`` runs whole sequences: the drafter proposes up to k tokens, the target
scores all k + 1 positions, and the core's ``verify_greedy`` / ``verify_sampling`` decide. Because
the target here is a tiny n-gram model (``specdec_lab.ngram_lm``), we can compare the result
with the truth:

* greedy — the text must equal, character for character, the target's own greedy decoding;
* sampling — the characters must follow the target's exact next-character probabilities.
  ``transition_test`` checks this with Pearson's χ²: an order-n model only looks at the last
  n − 1 characters, so every time the output reaches the same n − 1 characters, the next one is
  a fresh draw from the same known distribution;
* ``verify_accept_if_draft_confident`` and ``verify_resample_from_target`` are deliberately
  wrong verifiers, for contrast.

Drafters: an n-gram model (``ModelDrafter``) or prompt lookup (``PromptLookupDrafter``, vLLM's
"ngram" method: copy what followed the last few characters the previous time they appeared).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .chisquare import MIN_EXPECTED, ChiSquareResult, _pearson, chi2_sf, p_text
from .ngram_lm import earlier_match_end, earlier_match_ends
from .verification import RoundResult, VerifierRule, VerifyStep, draw_index, verify_greedy, verify_sampling

__all__ = [
    "ModelDrafter",
    "PromptLookupDrafter",
    "SpecRun",
    "speculative_decode",
    "target_decode",
    "verify_accept_if_draft_confident",
    "verify_resample_from_target",
    "TransitionTest",
    "transition_test",
]


# --- drafters -------------------------------------------------------------------------------


class ModelDrafter:
    """Drafts with a language model: k tokens one after another, sampled (or argmax when greedy)."""

    def __init__(self, model):
        self.model = model

    def propose(self, ids, k, greedy, temperature, rng):
        tokens, rows, context = [], [], list(ids)
        for _ in range(k):
            q = self.model.probs(context, temperature)
            x = int(np.argmax(q)) if greedy else draw_index(rng, q)
            tokens.append(x)
            rows.append(q)
            context.append(x)
        return tokens, rows


class PromptLookupDrafter:
    """vLLM's "ngram" drafter: find the most recent earlier place where the last n tokens
    (n from ``max_n`` down to ``min_n``) appeared in the prompt or the output so far, and propose
    the tokens that followed it. Proposes nothing when there is no match. Its proposals are
    certain, so its "distribution" is one-hot."""

    def __init__(self, vocab_size, min_n=2, max_n=4):
        if not (isinstance(min_n, int) and isinstance(max_n, int) and 1 <= min_n <= max_n):
            raise ValueError(f"min_n 與 max_n 必須是整數且 1 ≤ min_n ≤ max_n，收到 {min_n!r}、{max_n!r}")
        self.vocab_size = check.scalar_int("vocab_size", vocab_size, minimum=1)
        self.min_n, self.max_n = min_n, max_n

    def propose(self, ids, k, greedy, temperature, rng):
        seq = list(ids)
        for n in range(min(self.max_n, len(seq) - 1), self.min_n - 1, -1):
            end = earlier_match_end(seq, n)
            if end is not None:
                tokens = seq[end:end + k]
                return tokens, [np.eye(1, self.vocab_size, t).ravel() for t in tokens]
        return [], []

    def propose_batch(self, tokens, lengths, k, found=None):
        """``propose`` for many sequences at once (row b's first ``lengths[b]`` tokens):
        (rows × k proposed tokens, 0 after the last, and how many each row proposes). A dict
        ``found`` receives the ``earlier_match_ends`` it looked up (by n)."""
        tokens, lengths = np.asarray(tokens), np.asarray(lengths)
        found = {} if found is None else found
        found.update(earlier_match_ends(tokens, lengths, range(self.min_n, self.max_n + 1)))
        ends = np.full(lengths.shape, -1, dtype=np.intp)
        for n in range(self.max_n, self.min_n - 1, -1):  # the longest match first
            ends = np.where(ends < 0, found[n], ends)
        counts = np.where(ends >= 0, np.minimum(k, lengths - ends), 0)
        at = np.minimum(np.maximum(ends, 0)[:, None] + np.arange(k), tokens.shape[1] - 1)
        proposed = np.where(np.arange(k) < counts[:, None], tokens[np.arange(tokens.shape[0])[:, None], at], 0)
        return proposed, counts


# --- decoding ---------------------------------------------------------------------------------


@dataclass
class SpecRun:
    """One speculative decoding run: the text and what happened in every round."""

    prompt: list[int]
    tokens: list[int]  # the generated tokens (prompt excluded)
    drafted: np.ndarray  # per round: how many tokens the drafter proposed
    accepted: np.ndarray  # per round: how many of them the target accepted
    emitted: np.ndarray  # per round: tokens the round added (accepted + 1, before the final trim)
    expected: np.ndarray  # per round: E[emitted | the proposed tokens] (sampling; greedy: emitted)
    variance: np.ndarray  # per round: Var[emitted | the proposed tokens]
    k: int
    text: str = ""

    @property
    def rounds(self) -> int:
        """Verification rounds = target forward passes."""
        return int(self.drafted.size)

    @property
    def tokens_per_round(self) -> float:
        return float(self.emitted.mean())

    @property
    def acceptance_trials(self) -> int:
        """Draft tokens the target actually judged: every accepted one, plus the first rejected."""
        return int(self.accepted.sum() + (self.accepted < self.drafted).sum())

    @property
    def alpha(self) -> float:
        """Measured acceptance rate per judged draft token (the estimate of α under i.i.d.)."""
        return float(self.accepted.sum() / self.acceptance_trials)

    def accepted_per_position(self) -> np.ndarray:
        """Like vLLM's counter: rounds whose draft token at position i+1 was accepted."""
        return np.array([(self.accepted > i).sum() for i in range(self.k)])

    def position1_alpha(self) -> float:
        """Accepted at position 1 ÷ rounds that proposed anything: what vLLM calls α's estimate."""
        proposed = self.drafted > 0
        return float((self.accepted[proposed] > 0).mean())


def _run_rounds(target, drafter, prompt_ids, n_tokens, k, greedy, temperature, rng, verify):
    ids = list(prompt_ids)
    out: list[int] = []
    drafted, accepted, emitted, expected, variance = [], [], [], [], []
    while len(out) < n_tokens:
        tokens, rows = drafter.propose(ids, k, greedy, temperature, rng)
        context = list(ids)
        target_rows = []
        for i in range(len(tokens) + 1):
            target_rows.append(target.probs(context, temperature))
            if i < len(tokens):
                context.append(tokens[i])
        p = np.asarray(target_rows)
        if greedy:
            result = verify_greedy(tokens, p)
            mean, var = float(len(result.tokens)), 0.0
        else:
            q = np.asarray(rows) if tokens else np.zeros((0, p.shape[1]))
            result = verify(tokens, q, p, seed=rng)
            ratios = np.array([min(1.0, p[i, x] / q[i, x]) for i, x in enumerate(tokens)])
            mean, var = _round_moments(ratios)
        drafted.append(len(tokens))
        accepted.append(result.n_accepted)
        emitted.append(len(result.tokens))
        expected.append(mean)
        variance.append(var)
        ids.extend(result.tokens)
        out.extend(result.tokens)
    return out[:n_tokens], [np.asarray(a) for a in (drafted, accepted, emitted, expected, variance)]


def _round_moments(ratios: np.ndarray) -> tuple[float, float]:
    """Mean and variance of the tokens a round emits, given its proposals: position i is accepted
    with probability ``ratios[i]`` if all earlier ones were, so P(N ≥ i) = Π_{j≤i} ratios[j]."""
    survive = np.cumprod(ratios)  # P(N ≥ i) for i = 1..m
    i = np.arange(1, survive.size + 1)
    mean_n = survive.sum()
    second = ((2 * i - 1) * survive).sum()  # E[N²] = Σ (2i − 1) P(N ≥ i)
    return float(1.0 + mean_n), float(second - mean_n**2)


def speculative_decode(target, drafter, prompt, n_tokens, k, *, greedy=False, temperature=1.0,
                       seed=None, verify=verify_sampling) -> SpecRun:
    """Generate ``n_tokens`` characters after ``prompt`` with speculative decoding.

    ``target`` has ``probs(ids, temperature)`` and ``vocab``; ``drafter`` is a ``ModelDrafter``,
    a ``PromptLookupDrafter`` or a bare model (wrapped in ``ModelDrafter``). ``greedy=True``
    verifies with ``verify_greedy``; otherwise ``verify`` (the lossless ``verify_sampling`` by
    default, or one of this module's broken verifiers) with ``seed``.
    """
    prompt_ids = _prompt(target, prompt)
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=1_000_000)
    k = check.scalar_int("k", k, minimum=1, maximum=64)
    if not hasattr(drafter, "propose"):
        drafter = ModelDrafter(drafter)
    rng = check.seed_or_generator(seed)
    out, (drafted, accepted, emitted, expected, variance) = _run_rounds(
        target, drafter, prompt_ids, n_tokens, k, greedy, temperature, rng, verify)
    return SpecRun(prompt_ids, out, drafted, accepted, emitted, expected, variance, k,
                   text=target.vocab.decode(out))


def target_decode(target, prompt, n_tokens, *, greedy=True, temperature=1.0, seed=None) -> list[int]:
    """The target alone, one token per step: argmax (greedy) or a draw from its distribution."""
    ids = _prompt(target, prompt)
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=1_000_000)
    rng = check.seed_or_generator(seed)
    out = []
    for _ in range(n_tokens):
        p = target.probs(ids, temperature)
        x = int(np.argmax(p)) if greedy else draw_index(rng, p)
        ids.append(x)
        out.append(x)
    return out


def _prompt(target, prompt) -> list[int]:
    """The prompt as token ids: a string is encoded, ids must be in the target's vocabulary."""
    ids = target.vocab.encode(prompt) if isinstance(prompt, str) else list(prompt)
    if ids and not isinstance(prompt, str):
        ids = check.integer("prompt", ids, minimum=0, maximum=len(target.vocab) - 1).tolist()
    need = getattr(target, "context_length", 0)
    if len(ids) < max(1, need):
        raise ValueError(f"prompt 至少要有 {max(1, need)} 個字（目標模型看前面 {need} 個字），收到 {len(ids)} 個")
    return ids


# --- two deliberately wrong verifiers ------------------------------------------------------------


def verify_accept_if_draft_confident(draft_tokens, draft_probs, target_probs, seed=None) -> RoundResult:
    """WRONG on purpose: accept a draft token whenever the draft was at least as sure of it as
    the target (q ≥ p), reject otherwise and resample from the residual.

    It keeps exactly the tokens the draft over-proposes, so the draft's favourites come out more
    often than the target would write them.
    """
    return _wrong_verifier(draft_tokens, draft_probs, target_probs, seed, verify_accept_if_draft_confident.rule)


def verify_resample_from_target(draft_tokens, draft_probs, target_probs, seed=None) -> RoundResult:
    """WRONG on purpose: the right acceptance test min(1, p/q), but after a rejection a fresh
    draw from the target's p instead of from the residual max(0, p − q).

    Looks harmless ("the target decides anyway") yet the draft's favourites get a second chance:
    P(x) = min(p, q)(x) + (1 − Σ min(p, q)) · p(x) ≠ p(x).
    """
    return _wrong_verifier(draft_tokens, draft_probs, target_probs, seed, verify_resample_from_target.rule)


verify_accept_if_draft_confident.rule = VerifierRule(accept=lambda p, q, ratio, u: q >= p, redraw="residual")
verify_resample_from_target.rule = VerifierRule(accept=lambda p, q, ratio, u: u < ratio, redraw="target")


def _wrong_verifier(draft_tokens, draft_probs, target_probs, seed, rule: VerifierRule) -> RoundResult:
    """The two wrong verifiers' round, by their rule: ``rule.accept`` decides each draft token;
    after a rejection the token is redrawn from the residual max(0, p − q) (p if it is empty) or p."""
    rng = check.seed_or_generator(seed)
    target = np.asarray(target_probs, dtype=float)
    draft = np.asarray(draft_probs, dtype=float)
    emitted, steps = [], []
    for i, x in enumerate(int(t) for t in draft_tokens):
        p, q = float(target[i, x]), float(draft[i, x])
        ratio = min(1.0, p / q)
        u = float(rng.random())
        if rule.accept(p, q, ratio, u):
            steps.append(VerifyStep(i + 1, x, p, q, ratio, u, True, None))
            emitted.append(x)
            continue
        row = np.maximum(target[i] - draft[i], 0.0) if rule.redraw == "residual" else target[i]
        if row.sum() <= 0:
            row = target[i]
        fixed = draw_index(rng, row)
        steps.append(VerifyStep(i + 1, x, p, q, ratio, u, False, fixed))
        emitted.append(fixed)
        return RoundResult(emitted, i, False, steps)
    emitted.append(draw_index(rng, target[len(emitted)]))
    return RoundResult(emitted, len(emitted) - 1, True, steps)


# --- the χ² check of "lossless" ------------------------------------------------------------------


@dataclass(frozen=True)
class TransitionTest:
    """Pearson's χ² per context, and all contexts combined (statistics and dof add up)."""

    per_context: list[tuple[str, int, ChiSquareResult]]  # (context text, visits, test)
    statistic: float
    dof: int
    p_value: float
    tokens: int  # generated tokens whose context was among the tested ones

    def __str__(self) -> str:
        return (f"{len(self.per_context)} 個上下文、{self.tokens} 個字：χ² = {self.statistic:.1f}，"
                f"自由度 {self.dof}，{p_text(self.p_value)}")


def transition_test(target, runs, *, temperature=1.0, contexts=None, min_visits=20) -> TransitionTest:
    """Do the generated tokens follow the target's exact next-token probabilities?

    ``runs`` are ``(prompt_ids, generated_ids)`` pairs (``SpecRun`` objects work too). For every
    state (the last n − 1 tokens) visited at least ``min_visits`` times (only the ``contexts``
    most visited ones, when given), the tokens that followed are compared with ``target.probs`` by Pearson's χ²
    (cells expecting < 5 pooled). Each visit is a fresh draw from that state's distribution, so
    the per-state statistics are independent and are added up.
    """
    if contexts is not None:
        contexts = check.scalar_int("contexts", contexts, minimum=1)
    min_visits = check.scalar_int("min_visits", min_visits, minimum=1)
    ranked = _visits(target, runs)  # (state, the tokens that followed it), most visited first
    chosen = [(s, toks) for s, toks in ranked[:contexts] if len(toks) >= min_visits]
    if not chosen:
        raise ValueError(f"沒有任何上下文出現至少 {min_visits} 次：請產生更多字，或降低 min_visits")
    per_context, stat, dof, used = [], 0.0, 0, 0
    size, labels = len(target.vocab), list(target.vocab.chars)
    states = [state for state, _ in chosen]
    if hasattr(target, "probs_batch") and len({len(s) for s in states}) == 1 and len(states[0]) >= target.context_length:
        rows = target.probs_batch(np.array(states, dtype=np.int64).reshape(len(states), -1), temperature)  # = probs, bit for bit
    else:
        rows = [target.probs(list(state), temperature) for state in states]
    for (state, toks), p in zip(chosen, rows):
        if np.sum(len(toks) * p >= MIN_EXPECTED) < 1:
            continue  # no character expected MIN_EXPECTED times: too few visits to test
        counts = np.bincount(toks, minlength=size).astype(float)  # toks are intp: wasm32 in Pyodide
        result = _pearson(counts, p, labels)  # goodness_of_fit's test: the counts and the model's rows are valid
        per_context.append((target.vocab.decode(state), len(toks), result))
        stat += result.statistic
        dof += result.dof
        used += len(toks)
    if not per_context:
        raise ValueError(
            f"選到的 {len(chosen)} 個上下文都沒有一個字的期望次數達到 {MIN_EXPECTED:g}，無法檢定："
            "請產生更多字，或確認 temperature 和產生時相同"
        )
    return TransitionTest(per_context, stat, dof, chi2_sf(stat, dof) if np.isfinite(stat) else 0.0, used)


def _visits(target, runs) -> list[tuple[tuple, np.ndarray]]:
    """Every state the runs went through (``target.state`` of the history before each generated
    token) with the tokens that followed it, most visited first, ties in order of first visit."""
    pairs = [(run.prompt, run.tokens) if isinstance(run, SpecRun) else run for run in runs]
    back = getattr(target, "context_length", 0)
    if not back or any(len(prompt) < back for prompt, _ in pairs):  # any model: one token at a time
        visits: dict[tuple, list[int]] = {}
        for prompt, generated in pairs:
            seq = list(prompt) + list(generated)
            for i in range(len(prompt), len(seq)):
                visits.setdefault(target.state(seq[:i]), []).append(seq[i])
        return sorted(((s, np.asarray(t, dtype=np.intp)) for s, t in visits.items()), key=lambda item: -item[1].size)
    # an n-gram model's state is its last context_length tokens: all of them at once
    windows, followers = [], []
    for prompt, generated in pairs:
        seq = np.asarray(list(prompt) + list(generated), dtype=np.int64)
        windows.append(np.lib.stride_tricks.sliding_window_view(seq[:-1], back)[len(prompt) - back:])
        followers.append(seq[len(prompt):])
    windows, followers = np.concatenate(windows), np.concatenate(followers).astype(np.intp)
    codes = np.zeros(len(windows), dtype=np.int64)
    for column in windows.T:
        codes = codes * len(target.vocab) + column
    _, first, inverse, counts = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
    by_visit = np.argsort(inverse, kind="stable")  # each state's followers together, in visit order
    ends = np.cumsum(counts)
    return [(tuple(windows[first[j]].tolist()), followers[by_visit[ends[j] - counts[j]:ends[j]]])
            for j in np.lexsort((first, -counts)).tolist()]
