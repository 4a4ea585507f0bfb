"""The lossless lab's experiments with the notebook's settings, computed once per test session.

tests/test_lossless.py checks what they show; tests/test_beyond_numbers.py checks that the lesson
quotes them correctly. Both ask for the same runs, so each is computed once (they are pure
functions of fixed seeds).
"""
from functools import cache

from specdec_lab import lossless_experiments as lx
from specdec_lab.ngram_lm import DilutedDraft, course_models


@cache
def models():
    """(target, draft): the course's 4-gram target and 2-gram draft."""
    return course_models()


@cache
def greedy(k: int) -> lx.GreedyCheck:
    target, draft = models()
    return lx.greedy_check(target, draft, k)


@cache
def sampling(name: str) -> lx.SamplingCheck:
    target, draft = models()
    return lx.sampling_check(target, draft, name)


def correct_sampling() -> lx.SamplingCheck:
    return sampling(next(iter(lx.VERIFIERS)))


@cache
def diluted_runs(alpha: float, k: int = lx.K):
    target, _ = models()
    return lx.sampled_runs(target, DilutedDraft(target, alpha), k=k, repeats=1)


@cache
def lookup_table(copy_weight: float = 0.8) -> lx.LookupTable:
    target, _ = models()
    return lx.prompt_lookup_table(target, copy_weight=copy_weight)
