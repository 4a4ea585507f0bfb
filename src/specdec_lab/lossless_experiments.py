"""The lossless lab's four experiments, with the settings the notebook runs and the lesson quotes.

A. ``greedy_check``        — greedy speculative output vs the target's own greedy output, many prompts;
B. ``sampling_checks``     — χ² of sampled text against the target's exact probabilities, for the
                             correct verifier and the two deliberately broken ones (``VERIFIERS``),
                             all runs advanced together (``sampling_check``: one verifier);
C. ``acceptance_summary``  — measured α and tokens per round against Eq. 1;
D. ``prompt_lookup_table`` — prompt lookup (vLLM's ``ngram``) on a rewriting task vs open generation;
                             its result shows as a table (``LookupTable``).

Randomness is fixed: run i of a batch uses seed ``seed + i``, so ``notebooks/lossless.ipynb``,
the numbers in ``lessons/lossless-lab.md`` and ``tests/test_beyond_numbers.py`` all see the same
runs. The models come from ``specdec_lab.ngram_lm.course_models()``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .closed_form import expected_tokens
from .corpus import CORPUS
from .lossless import (
    PromptLookupDrafter,
    SpecRun,
    TransitionTest,
    transition_test,
    verify_accept_if_draft_confident,
    verify_resample_from_target,
)
from .lossless_batch import speculative_decode_batch, target_decode_batch
from .ngram_lm import CopyingLM
from .progress import Progress
from .tables import Table
from .verification import verify_sampling

__all__ = [
    "TEMPERATURE", "K", "N_TOKENS", "VERIFIERS", "corpus_lines", "greedy_prompts",
    "GreedyCheck", "greedy_check", "sampled_runs", "SamplingCheck", "sampling_check", "sampling_checks",
    "AcceptanceSummary", "acceptance_summary", "LookupRow", "LookupTable", "prompt_lookup_table",
]

TEMPERATURE = 0.6
"""Sampling temperature of B–D: sharp enough to write sentences, loose enough to vary."""
K = 4
"""Draft tokens per round in B–D."""
N_TOKENS = 300
"""Characters written per run in B and C."""
MAX_REPEATS = 100
"""How many times a batch may go through the corpus's paragraphs (each pass is one run per paragraph)."""

VERIFIERS = {
    "正確（min(1, p/q)＋殘差）": (verify_sampling, 3),
    "錯誤：q ≥ p 就收": (verify_accept_if_draft_confident, 3),
    "錯誤：被拒後從 p 重抽": (verify_resample_from_target, 6),
}
"""B's verifiers by name → (verifier, how many times the corpus's paragraphs are used as prompts).
Forgetting the residual is the subtler mistake, so it gets twice the text."""


def corpus_lines() -> list[str]:
    """The corpus's paragraphs: their openings are the prompts of B–D."""
    return [line for line in CORPUS.splitlines() if line]


def greedy_prompts(width: int = 4, stride: int = 7) -> list[str]:
    """A's prompts: every ``width``-character window starting at a multiple of ``stride`` in each
    paragraph, without repeats, sorted (149 of them)."""
    width = check.scalar_int("width", width, minimum=1)
    stride = check.scalar_int("stride", stride, minimum=1)
    return sorted({line[s:s + width] for line in corpus_lines() for s in range(0, len(line) - width, stride)})


# --- A. greedy ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GreedyCheck:
    """How many prompts gave the target's own greedy text, character for character."""

    k: int
    identical: int
    prompts: int
    n_tokens: int

    def __str__(self) -> str:
        return f"K = {self.k}：{self.identical} / {self.prompts} 個 prompt 的輸出與大模型自己的貪婪解碼逐字相同"


def greedy_check(target, draft, k: int, prompts=None, n_tokens: int = 60) -> GreedyCheck:
    """Greedy speculative decoding with ``k`` draft tokens vs ``target_decode``, for every prompt
    (default ``greedy_prompts()``)."""
    prompts = greedy_prompts() if prompts is None else list(prompts)
    if not prompts:
        raise ValueError("prompts 不可以是空的：至少要有一個 prompt")
    spec = speculative_decode_batch(target, draft, prompts, n_tokens, k, greedy=True)
    alone = target_decode_batch(target, prompts, n_tokens)
    identical = sum(run.tokens == own for run, own in zip(spec, alone))
    return GreedyCheck(int(k), int(identical), len(prompts), int(n_tokens))


# --- B. sampling ----------------------------------------------------------------------------------


def sampled_runs(target, drafter, *, verify=verify_sampling, repeats: int = 3, seed: int = 0,
                 n_tokens: int = N_TOKENS, k: int = K, temperature: float = TEMPERATURE,
                 label: str = "取樣") -> list[SpecRun]:
    """One run per paragraph opening (its first 5 characters), the paragraphs taken ``repeats``
    times; run i uses seed ``seed + i``. All runs advance together (``speculative_decode_batch``);
    in a notebook a line headed ``label`` says how far they are once it takes over a second."""
    repeats = check.scalar_int("repeats", repeats, minimum=1, maximum=MAX_REPEATS)
    seed = check.scalar_int("seed", seed, minimum=0)
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=1_000_000)
    prompts = [line[:5] for line in corpus_lines() * repeats]
    with Progress(label, n_tokens * len(prompts), sequences=len(prompts)) as progress:
        return speculative_decode_batch(target, drafter, prompts, n_tokens, k, temperature=temperature,
                                        seeds=range(seed, seed + len(prompts)), verify=verify, progress=progress)


@dataclass(frozen=True)
class SamplingCheck:
    """B for one verifier: its runs and the χ² test of their characters."""

    name: str
    runs: list[SpecRun]
    test: TransitionTest

    def __str__(self) -> str:
        return f"{self.name}：{self.test}"


def sampling_check(target, draft, name: str, temperature: float = TEMPERATURE) -> SamplingCheck:
    """Run the verifier ``VERIFIERS[name]`` and test its text against the target's probabilities."""
    return sampling_checks(target, draft, [name], temperature)[name]


def sampling_checks(target, draft, names=None, temperature: float = TEMPERATURE) -> dict[str, SamplingCheck]:
    """``sampling_check`` for each of ``names`` (default: every verifier of ``VERIFIERS``), their
    runs all advanced together: {name: SamplingCheck}, the same as one ``sampling_check`` each."""
    names = list(VERIFIERS) if names is None else list(names)
    for name in names:
        if name not in VERIFIERS:
            raise ValueError(f"name 必須是 {list(VERIFIERS)} 其中之一，收到 {name!r}")
    prompts, verifiers, seeds, owner = [], [], [], []
    for name in names:
        verify, repeats = VERIFIERS[name]
        lines = [line[:5] for line in corpus_lines() * check.scalar_int("repeats", repeats, minimum=1, maximum=MAX_REPEATS)]
        prompts += lines
        verifiers += [verify] * len(lines)
        seeds += range(len(lines))  # run i of a verifier uses seed i, as sampled_runs(seed=0)
        owner += [name] * len(lines)
    label = names[0] if len(names) == 1 else f"{len(names)} 種驗證規則"
    with Progress(label, N_TOKENS * len(prompts), sequences=len(prompts)) as progress:
        runs = speculative_decode_batch(target, draft, prompts, N_TOKENS, K, temperature=temperature, seeds=seeds,
                                        verify=verifiers, progress=progress)
    out = {}
    for name in names:
        mine = [run for run, who in zip(runs, owner) if who == name]
        out[name] = SamplingCheck(name, mine, transition_test(target, mine, temperature=temperature))
    return out


# --- C. measured α vs Eq. 1 -------------------------------------------------------------------------


@dataclass(frozen=True)
class AcceptanceSummary:
    """Measured acceptance and tokens per round of a batch of runs, next to Eq. 1."""

    alpha: float  # accepted ÷ judged draft tokens
    tokens_per_round: float  # mean over rounds (each run's last round left out: it may be cut short)
    std_error: float  # of tokens_per_round
    rounds: int
    k: int
    formula_alpha: float  # the α put into Eq. 1: the measured one, or the one a diluted draft was built with

    @property
    def closed_form(self) -> float:
        """Eq. 1 at ``formula_alpha`` and ``k``."""
        return float(expected_tokens(self.formula_alpha, self.k))

    def __str__(self) -> str:
        return (f"α ≈ {self.alpha:.3f}，每輪實測 {self.tokens_per_round:.3f} ± {self.std_error:.3f} 字，"
                f"公式 1 在 α = {self.formula_alpha:.3g}、K = {self.k} 給 {self.closed_form:.3f}")


def acceptance_summary(runs: list[SpecRun], formula_alpha: float | None = None) -> AcceptanceSummary:
    """α ≈ accepted ÷ judged draft tokens (every accepted one plus the first rejected one per round),
    and the mean tokens per round with its standard error. Eq. 1 is evaluated at ``formula_alpha``
    (default: the measured α)."""
    if not runs:
        raise ValueError("runs 不可以是空的：至少要有一次 speculative_decode 的結果")
    if formula_alpha is not None:
        check.scalar("formula_alpha", formula_alpha)
        formula_alpha = float(check.probability("formula_alpha", formula_alpha))
    accepted = sum(int(r.accepted.sum()) for r in runs)
    trials = sum(r.acceptance_trials for r in runs)
    per_round = np.concatenate([r.emitted[:-1] for r in runs])
    alpha = accepted / trials
    return AcceptanceSummary(
        alpha=alpha,
        tokens_per_round=float(per_round.mean()),
        std_error=float(per_round.std() / np.sqrt(per_round.size)),
        rounds=int(per_round.size),
        k=runs[0].k,
        formula_alpha=alpha if formula_alpha is None else formula_alpha,
    )


# --- D. prompt lookup -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookupRow:
    """Prompt lookup on one task: how often it found something to propose, and what that bought."""

    task: str
    rounds: int
    proposed: float  # share of rounds with at least one proposed token
    first_accepted: float  # among those, share whose first proposal was accepted
    tokens_per_round: float
    std_error: float  # of tokens_per_round


class LookupTable(tuple):
    """D's result: one ``LookupRow`` per task, in the order of ``TASKS``. A tuple of rows that
    shows as a table: ``print`` gives text aligned by display width, a notebook an HTML table.

    >>> print(LookupTable([LookupRow("自由發揮", 2559, 0.063, 0.65, 1.16, 0.01)]))
    任務      輪數  有猜的輪  第 1 格接受率  每輪前進
    自由發揮  2559      6.3%           0.65      1.16
    """

    HEADERS = ("任務", "輪數", "有猜的輪", "第 1 格接受率", "每輪前進")

    @property
    def table(self) -> Table:
        rows = tuple((r.task, str(r.rounds), f"{r.proposed:.1%}", f"{r.first_accepted:.2f}",
                      f"{r.tokens_per_round:.2f}") for r in self)
        return Table(self.HEADERS, rows, align="<>>>>")

    def __str__(self) -> str:
        return str(self.table)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        return self.table._repr_html_()


TASKS = {
    "改寫": lambda line: line + "\n" + line[:4],  # the whole paragraph, then its opening again
    "自由發揮": lambda line: line[:4],  # the opening alone
}
"""D's tasks: how a paragraph becomes a prompt. Each run writes the rest of the paragraph's length."""


def prompt_lookup_table(target, copy_weight: float = 0.8, k: int = K, temperature: float = TEMPERATURE,
                        repeats: int = 3, seed: int = 0) -> LookupTable:
    """D: a target that copies (``CopyingLM``) drafted by prompt lookup, on each task of ``TASKS``
    (all runs advanced together): one ``LookupRow`` per task, shown as a table."""
    repeats = check.scalar_int("repeats", repeats, minimum=1, maximum=MAX_REPEATS)
    seed = check.scalar_int("seed", seed, minimum=0)
    copier = CopyingLM(target, copy_weight=copy_weight)
    lookup = PromptLookupDrafter(len(target.vocab), min_n=2, max_n=4)
    lines = corpus_lines() * repeats
    prompts, lengths, seeds = [], [], []
    for make in TASKS.values():  # every task's runs in one batch; run i of a task uses seed seed + i
        prompts += [make(line) for line in lines]
        lengths += [len(line) - 4 for line in lines]
        seeds += range(seed, seed + len(lines))
    runs = speculative_decode_batch(copier, lookup, prompts, lengths, k, temperature=temperature, seeds=seeds)
    rows = []
    for t, task in enumerate(TASKS):
        mine = runs[t * len(lines):(t + 1) * len(lines)]
        drafted = np.concatenate([r.drafted for r in mine])
        accepted = np.concatenate([r.accepted for r in mine])
        emitted = np.concatenate([r.emitted for r in mine])
        proposed = drafted > 0
        rows.append(LookupRow(task, int(drafted.size), float(proposed.mean()),
                              float((accepted[proposed] > 0).mean()), float(emitted.mean()),
                              float(emitted.std() / np.sqrt(emitted.size))))
    return LookupTable(rows)
