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
    (lambda: tree_sampling_check(TARGET, DRAFT, "wrong_keep_p", repeats=10), "repeats"),
    (lambda: tree_decode(TARGET, DRAFT, PROMPTS[:1], 5, [(0,)], rule="with_replacement", draft_temperature=0.0),
     "draft_temperature"),
    (lambda: tree_decode(TARGET, DRAFT, ["模"], 5, [(0,)]), "prompt"),
    (lambda: tree_decode(TARGET, object(), PROMPTS[:1], 5, [(0,)]), "draft"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("rule, exact", [("with_replacement", 0.75), ("without_replacement", 1.0)])
def test_sequoia_appendix_f3_measured(rule, exact):
    # Sequoia App. F.3: q = (0.5, 0.5), p = (1, 0), two candidates → accepted 0.75 with replacement, 1 without
    n = 20_000
    runs = tree_decode(_OneState([1.0, 0.0]), _OneState([0.5, 0.5]), ["A"] * n, 1, full_tree(2, 1), rule=rule, seed=4)
    measured = runs.node_hits.sum() / runs.rounds
    assert abs(measured - exact) <= 5 * np.sqrt(exact * (1 - exact) / n) + 1e-12
    assert all(t == [0] for t in runs.tokens)  # the written token always follows p


def test_the_checks_table_reports_one_shared_progress_line():
    from specdec_lab import tree_experiments as tx
    shown = []

    class Recorder(tx.Progress):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, delay=0.0, every=0.0, show=shown.append, **kwargs)

    original, tx.Progress = tx.Progress, Recorder
    try:
        table = tx.tree_sampling_checks(TARGET, DRAFT, rules=["with_replacement", "wrong_keep_p"], repeats=30)
    finally:
        tx.Progress = original
    assert [row[4] for row in table.rows][1] == "不通過"
    lines = [line for line in shown if line]
    assert lines and "χ² 檢定" in lines[-1] and shown[-1] is None
    assert any("/ 1,440 字" in line for line in lines)  # 2 rules × 8 prompts × 30 runs × 3 characters


RULE_AS_EXACT = {  # tree_decode's rule → multi_draft's (replacement, mistake)
    "with_replacement": (True, None), "without_replacement": (False, None),
    "wrong_keep_p": (True, "keep_target"), "wrong_original_q": (False, "original_draft"),
}


@pytest.mark.parametrize("rule", list(RULE_AS_EXACT))
def test_one_node_matches_the_exact_multi_draft_numbers(rule):
    # the exact maths lives in specdec_lab.multi_draft (branch l2-trees): runs once both are merged
    exact = pytest.importorskip("specdec_lab.multi_draft")
    replacement, mistake = RULE_AS_EXACT[rule]
    p = np.array([0.5, 0.05, 0.3, 0.1, 0.05])
    q = np.array([0.1, 0.6, 0.05, 0.05, 0.2])
    n = 20_000
    runs = tree_decode(_OneState(p), _OneState(q), ["A"] * n, 1, full_tree(3, 1), rule=rule, seed=6)
    accepted = exact.multi_draft_acceptance(p, q, 3, replacement=replacement, mistake=mistake)
    assert abs(runs.node_hits.sum() / n - accepted) <= 5 * np.sqrt(accepted * (1 - accepted) / n)
    out = np.asarray(exact.multi_draft_output(p, q, 3, replacement=replacement, mistake=mistake))
    counts = np.bincount([t[0] for t in runs.tokens], minlength=p.size)
    assert np.all(np.abs(counts - n * out) <= 5 * np.sqrt(n * out * (1 - out)) + 1e-9)
