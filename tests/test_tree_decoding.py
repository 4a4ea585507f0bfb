"""Tree rounds on the n-gram models (specdec_lab.tree_decoding, tree_experiments).

Greedy tree rounds must write the target's own greedy text. Sampling: the lossless lab's χ²
method (tree_experiments' setting, explained in its docstring): correct rules must give
p > 10⁻³ (a false alarm once in a thousand), wrong rules p < 10⁻⁶. At the chosen size (8 prompts
× 150 runs × 3 characters) seeds 0–3 gave the correct rules p in [0.24, 0.89] and the wrong ones
at most 3×10⁻²⁰, so the thresholds are not tuned to pass. A one-node tree on a one-state model
checks the first character's frequencies against p at 5σ too."""
import numpy as np
import pytest

from specdec_lab.lossless_batch import target_decode_batch
from specdec_lab.lossless_experiments import corpus_lines
from specdec_lab.ngram_lm import StateTable, Vocabulary, course_models
from specdec_lab.positional import best_tree, expected_tokens_tree, tree_from_choices
from specdec_lab.tree_decoding import TreeShape, chain_tree, full_tree, tree_decode
from specdec_lab.tree_experiments import tree_sampling_check

TARGET, DRAFT = course_models()
PROMPTS = [line[:5] for line in corpus_lines()]


@pytest.mark.parametrize("tree", [chain_tree(4), full_tree(2, 3), full_tree(3, 2),
                                  [(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]])
def test_greedy_tree_rounds_write_the_targets_greedy_text(tree):
    runs = tree_decode(TARGET, DRAFT, PROMPTS, 120, tree)
    assert runs.tokens == target_decode_batch(TARGET, PROMPTS, 120)
    assert runs.tokens_per_round > 1.0


def test_a_wider_tree_accepts_more_per_round_than_its_chain_prefix():
    chain = tree_decode(TARGET, DRAFT, PROMPTS, 120, chain_tree(3))
    tree = tree_decode(TARGET, DRAFT, PROMPTS, 120, full_tree(3, 3))  # contains that chain
    assert tree.tokens_per_round > chain.tokens_per_round


@pytest.mark.parametrize("rule", ["greedy", "with_replacement", "without_replacement"])
def test_node_reach_adds_up_to_tokens_per_round(rule):
    runs = tree_decode(TARGET, DRAFT, PROMPTS, 60, full_tree(2, 3), rule=rule, temperature=0.6, seed=3)
    assert runs.emitted.sum() == runs.rounds + runs.node_hits.sum()
    assert runs.tokens_per_round == pytest.approx(1.0 + runs.node_reach.sum())
    parents = [-1 if p == 0 else p - 1 for p in runs.shape.parents]
    acc = runs.node_hits / np.maximum([runs.rounds if p < 0 else runs.node_hits[p] for p in parents], 1)
    assert expected_tokens_tree(parents, acc) == pytest.approx(runs.tokens_per_round)


def test_same_seed_same_text_and_lengths_exact():
    a = tree_decode(TARGET, DRAFT, PROMPTS[:5], 37, full_tree(2, 2), rule="without_replacement", temperature=0.6, seed=9)
    b = tree_decode(TARGET, DRAFT, PROMPTS[:5], 37, full_tree(2, 2), rule="without_replacement", temperature=0.6, seed=9)
    assert a.tokens == b.tokens and all(len(t) == 37 for t in a.tokens)


def test_best_tree_format_is_read():
    tree = best_tree([[0.6, 0.3], [0.4, 0.2]], 3)
    assert TreeShape.of(tree).parents.tolist() == [0, 0, 1]
    assert tree_from_choices(tree, [[0.6, 0.3], [0.4, 0.2]])[0] == [-1, -1, 0]


class _OneState:
    """A model with one state: its next-token row is always ``row``."""
    context_length = 0

    def __init__(self, row):
        self.vocab = Vocabulary([chr(65 + i) for i in range(len(row))])
        self.table = StateTable(np.array([row], float), np.zeros((1, len(row)), dtype=np.intp))

    def row_index(self, windows, temperature=1.0):
        return np.zeros(len(windows), dtype=np.intp), self.table


@pytest.mark.parametrize("rule", ["with_replacement", "without_replacement"])
def test_one_node_emits_p_within_5_sigma(rule):
    p = np.array([0.5, 0.05, 0.3, 0.1, 0.05])
    q = np.array([0.1, 0.6, 0.05, 0.05, 0.2])  # often wrong: several candidates rejected
    n = 20_000
    runs = tree_decode(_OneState(p), _OneState(q), ["A"] * n, 1, full_tree(3, 1), rule=rule, seed=1)
    counts = np.bincount([t[0] for t in runs.tokens], minlength=p.size)
    assert np.all(np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p)))


@pytest.mark.parametrize("rule", ["wrong_keep_p", "wrong_original_q"])
def test_one_node_wrong_rules_miss_p_by_more_than_5_sigma(rule):
    p = np.array([0.5, 0.05, 0.3, 0.1, 0.05])
    q = np.array([0.1, 0.6, 0.05, 0.05, 0.2])
    n = 20_000
    runs = tree_decode(_OneState(p), _OneState(q), ["A"] * n, 1, full_tree(3, 1), rule=rule, seed=1)
    counts = np.bincount([t[0] for t in runs.tokens], minlength=p.size)
    assert np.any(np.abs(counts - n * p) > 5 * np.sqrt(n * p * (1 - p)))


@pytest.mark.parametrize("rule", ["with_replacement", "without_replacement"])
def test_correct_rules_pass_the_chi_square(rule):
    check = tree_sampling_check(TARGET, DRAFT, rule, seed=0)
    assert check.dof >= 30 and check.p_value > 1e-3, str(check)


@pytest.mark.parametrize("rule", ["wrong_keep_p", "wrong_original_q"])
def test_wrong_rules_fail_the_chi_square(rule):
    check = tree_sampling_check(TARGET, DRAFT, rule, seed=0)
    assert check.p_value < 1e-6, str(check)


@pytest.mark.parametrize("call, name", [
    (lambda: full_tree(0, 2), "k"),
    (lambda: full_tree(2, 0), "depth"),
    (lambda: full_tree(4, 9), "k"),
    (lambda: chain_tree(0), "n"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 5, [(0, 0)]), "tree"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 5, [(0,), (0,)]), "tree"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 5, [(0,)], rule="magic"), "rule"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 0, [(0,)]), "n_tokens"),
    (lambda: tree_decode(TARGET, DRAFT, [], 5, [(0,)]), "prompts"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 5, [(0,)], rule="with_replacement", temperature=0), "temperature"),
    (lambda: tree_sampling_check(TARGET, DRAFT, "greedy"), "rule"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
