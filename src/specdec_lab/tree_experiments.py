"""Lesson 2's checks of tree rounds (``specdec_lab.tree_decoding``) on the course's n-gram models.

* ``tree_sampling_checks`` — the lossless lab's χ² method on tree rounds: is the text each rule
  writes distributed as the target's own sampling? Both correct rules (SpecInfer, Sequoia) should
  pass, both wrong ones fail.
* ``tree_vs_chain`` — tokens per round of a tree against a chain with as many candidates.

The χ² setting, and why. The wrong rules go astray only when a node's first candidates are
rejected; with the course's draft at the target's temperature that is rare enough that a few
hundred texts cannot tell them apart. So here the draft is over-confident (its temperature
``DRAFT_TEMPERATURE`` = 0.3 against the target's 1.0: sharp guesses, often wrong), each node gets
4 candidates (``full_tree(4, 2)``), and the prompts (``CHI2_PROMPTS``) are 8 of lesson 1's greedy
prompts where the draft is confidently wrong — picked once, with seed 100, as the prompts where
the first character written by ``"wrong_original_q"`` strayed most from the target; the checks use
other seeds. Each prompt is run ``repeats`` = 150 times, 3 characters each, and
``lossless.transition_test`` compares every character with the target's probabilities after the
same 3 characters. Only contexts whose every cell (pooled as the test pools them) expects at least
5 counts are added up (Cochran's rule): a cell expecting 0.2 that sees 3 adds 41 to χ² by chance
about once in a thousand, which made correct rules fail now and then.

What the tests require and why it is fair (tests/test_tree_decoding.py): correct rules p > 10⁻³
(a false alarm once in a thousand runs), wrong rules p < 10⁻⁶. Seeds 0–3 gave the correct rules
p between 0.24 and 0.89 and the wrong ones at most 3×10⁻²⁰: the test has power to spare.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _validate as check
from .chisquare import MIN_EXPECTED, chi2_sf, p_text
from .lossless import transition_test
from .progress import Progress
from .tables import Table
from .tree_decoding import RULES, TreeShape, chain_tree, full_tree, tree_decode

__all__ = ["CHI2_PROMPTS", "CHI2_TREE", "DRAFT_TEMPERATURE", "TreeCheck", "tree_sampling_check",
           "tree_sampling_checks", "tree_vs_chain"]

CHI2_PROMPTS = ("數從一個", "置給的字", "，後面的", "再加一。", "別人本來", "是可以一", "晚上回到", "所以每一")
"""Where the course's draft is confidently wrong (see the module docstring)."""
CHI2_TREE = full_tree(4, 2)
"""4 candidates per node, 2 positions deep (20 candidates)."""
DRAFT_TEMPERATURE = 0.3
"""The over-confident draft's temperature; the target's is 1.0."""
SAMPLING_RULES = ("with_replacement", "without_replacement", "wrong_keep_p", "wrong_original_q")


@dataclass(frozen=True)
class TreeCheck:
    """One rule's χ² check: the statistic summed over the contexts kept, its dof and p-value."""

    rule: str
    statistic: float
    dof: int
    p_value: float
    contexts: int
    tokens: int
    tokens_per_round: float

    def __str__(self) -> str:
        return (f"{RULES[self.rule]}：{self.contexts} 個上下文、{self.tokens} 個字，"
                f"χ² = {self.statistic:.1f}，自由度 {self.dof}，{p_text(self.p_value)}")


class _Share:
    """Hands one shared ``Progress`` the work of one of several runs (``done`` units before it)."""

    def __init__(self, progress, done):
        self.progress, self.done = progress, done

    def update(self, done, finished=None):
        self.progress.update(self.done + done)


def tree_sampling_check(target, draft, rule: str, *, repeats: int = 150, seed: int = 0, progress=None) -> TreeCheck:
    """The χ² check of one sampling rule (see the module docstring for the setting). ``repeats``
    is at least 30: ``transition_test`` reads a context once it has 20 visits. ``progress`` as
    for ``tree_decode``."""
    if rule not in SAMPLING_RULES:
        raise ValueError(f"rule 必須是 {'、'.join(SAMPLING_RULES)} 其中之一，收到 {rule!r}")
    repeats = check.scalar_int("repeats", repeats, minimum=30, maximum=10_000)
    seed = check.scalar_int("seed", seed, minimum=0)
    runs = tree_decode(target, draft, list(CHI2_PROMPTS) * repeats, 3, CHI2_TREE, rule=rule, temperature=1.0,
                       draft_temperature=DRAFT_TEMPERATURE, seed=seed, progress=progress)
    test = transition_test(target, runs.pairs(), temperature=1.0)
    kept = [(n, r) for _, n, r in test.per_context if r.expected.min() >= MIN_EXPECTED]
    stat = float(sum(r.statistic for _, r in kept))
    dof = int(sum(r.dof for _, r in kept))
    return TreeCheck(rule, stat, dof, chi2_sf(stat, dof), len(kept), int(sum(n for n, _ in kept)),
                     runs.tokens_per_round)


def tree_sampling_checks(target, draft, rules=SAMPLING_RULES, *, repeats: int = 150, seed: int = 0) -> Table:
    """``tree_sampling_check`` for each rule, as a table (one row per rule); in a notebook one
    line says how far it is once it takes over a second."""
    rules = list(rules)
    repeats = check.scalar_int("repeats", repeats, minimum=30, maximum=10_000)
    each = len(CHI2_PROMPTS) * repeats * 3
    progress = Progress("χ² 檢定", each * len(rules))
    rows = []
    for i, rule in enumerate(rules):
        c = tree_sampling_check(target, draft, rule, repeats=repeats, seed=seed, progress=_Share(progress, i * each))
        verdict = "通過" if c.p_value > 1e-3 else "不通過"
        rows.append((RULES[rule], f"{c.statistic:.1f}", str(c.dof), p_text(c.p_value), verdict))
    progress.close()
    return Table(("規則", "χ²", "自由度", "p 值", "判定（p > 0.001 算通過）"), tuple(rows), align="<>>><")


def tree_vs_chain(target, draft, prompts, tree, *, rule="greedy", n_tokens=200, temperature=0.6, seed=0) -> Table:
    """Tokens per round of ``tree`` against a chain with as many candidates, measured by
    ``tree_decode`` on ``prompts`` (± one standard error).

    >>> from specdec_lab.ngram_lm import course_models
    >>> target, draft = course_models()
    >>> print(tree_vs_chain(target, draft, ["草稿模型"], full_tree(2, 2), n_tokens=40))  # doctest: +ELLIPSIS
    形狀...
    """
    shape = TreeShape.of(tree)
    rows = []
    for name, t in (("鏈", chain_tree(shape.size)), ("樹", shape)):
        runs = tree_decode(target, draft, prompts, n_tokens, t, rule=rule, temperature=temperature, seed=seed)
        acc = " / ".join(f"{a:.2f}" for a in runs.depth_acceptance()[:6])
        rows.append((f"{name}，{shape.size} 個候選", f"{runs.tokens_per_round:.2f} ± {runs.std_error:.2f}",
                     str(runs.rounds), acc))
    return Table(("形狀", "每輪產出", "輪數", "各層接受率（前 6 層）"), tuple(rows), align="<>><")
