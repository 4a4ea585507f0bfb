"""specdec_lab.trees: the tree attention mask, simulated tree rounds, the optimal tree for a node
budget (against brute force and against best_tree's best-first), the limits of chains and trees,
and trees under concurrency. Statistical checks use fixed seeds and 5σ."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_lab import crossover_concurrency, serving_curves, tree_attention_mask
from specdec_lab.positional import best_tree, expected_tokens_tree, tree_from_choices
from specdec_lab.trees import (
    chain_choices,
    chain_limit,
    full_tree_choices,
    full_tree_limit,
    k_chains_choices,
    k_chains_limit,
    optimal_tree,
    optimal_tree_tokens,
    rank_tree,
    simulate_tree_rounds,
    tree_monte_carlo_check,
    tree_scaling,
    tree_serving,
)

pytestmark = pytest.mark.fast


@st.composite
def parent_lists(draw, max_nodes=15):
    n = draw(st.integers(0, max_nodes))
    return [draw(st.integers(-1, i - 1)) for i in range(n)]


# --- a. the mask ----------------------------------------------------------------------------------


def test_mask_of_a_small_tree_by_hand():
    #   root ─ 0 ─ 2 ─ 4
    #        │   └ 3
    #        └ 1
    mask = tree_attention_mask([-1, -1, 0, 0, 2])
    assert mask.dtype == bool and mask.shape == (5, 5)
    sees = {i: set(np.flatnonzero(row)) for i, row in enumerate(mask)}
    assert sees == {0: {0}, 1: {1}, 2: {0, 2}, 3: {0, 3}, 4: {0, 2, 4}}


@settings(max_examples=40, deadline=None)
@given(parent_lists())
def test_row_i_is_node_i_and_its_ancestors(parents):
    mask = tree_attention_mask(parents)
    for i in range(len(parents)):
        ancestors, j = {i}, parents[i]
        while j >= 0:
            ancestors.add(j)
            j = parents[j]
        assert set(np.flatnonzero(mask[i])) == ancestors
    assert not np.triu(mask, 1).any()          # nobody sees a node listed after it


def test_a_chain_is_the_causal_mask():
    assert np.array_equal(tree_attention_mask([-1, 0, 1, 2]), np.tril(np.ones((4, 4), dtype=bool)))


@pytest.mark.parametrize("parents, words", [
    ([-1, 2, 0], ["parents[1]", "2", "-1 到 0"]),            # listed after its child
    ([-1, 1], ["parents[1]", "1", "環"]),                    # its own parent: a cycle
    ([-1, -2], ["parents", "-2", "[-1, 1]"]),
    ([-1, 5], ["parents", "5", "[-1, 1]"]),
    ([-1, 0.5], ["parents", "0.5", "整數"]),
    ("abc", ["parents", "一維"]),
])
def test_mask_bad_input(parents, words):
    with pytest.raises(ValueError) as info:
        tree_attention_mask(parents)
    assert all(w in str(info.value) for w in words), str(info.value)


# --- b. simulated rounds against the closed form -------------------------------------------------

ACC = np.array([0.6, 0.2, 0.1])            # rank 0, 1, 2 acceptances, the same at every depth
MEDUSA_LIKE = [(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 0, 0, 0)]


@pytest.mark.parametrize("name, tree", [
    ("chain", ([-1, 0, 1, 2, 3], [0.8, 0.7, 0.6, 0.5, 0.4])),
    ("star", ([-1, -1, -1, -1], [0.4, 0.3, 0.2, 0.1])),
    ("medusa", rank_tree(MEDUSA_LIKE, ACC)),
    ("medusa-2d", tree_from_choices(MEDUSA_LIKE, [[0.7, 0.15, 0.1], [0.6, 0.2, 0.1], [0.5, 0.2, 0.1],
                                                 [0.4, 0.2, 0.1]])),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_simulated_rounds_agree_with_expected_tokens_tree_within_5_sigma(name, tree, seed):
    c = tree_monte_carlo_check(*tree, rounds=40_000, seed=seed)
    assert c.closed_form == expected_tokens_tree(*tree)
    assert abs(c.z) <= 5, f"{name}: {c}"
    assert c.counts.sum() == 40_000


def test_the_token_counts_follow_the_path_probabilities():
    # star: 2 tokens with probability Σ acceptance, else 1
    tokens = simulate_tree_rounds([-1, -1, -1], [0.5, 0.2, 0.1], rounds=50_000, seed=4)
    assert set(np.unique(tokens)) == {1, 2}
    share, exact = np.mean(tokens == 2), 0.8
    assert abs(share - exact) <= 5 * np.sqrt(exact * (1 - exact) / tokens.size)


def test_simulated_rounds_are_seeded():
    tree = rank_tree(MEDUSA_LIKE, ACC)
    a = simulate_tree_rounds(*tree, rounds=1000, seed=3)
    assert np.array_equal(a, simulate_tree_rounds(*tree, rounds=1000, seed=np.random.default_rng(3)))
    assert a.min() >= 1 and a.max() <= 5


# --- d. the optimal tree ------------------------------------------------------------------------------


def value(choices, table):
    """Σ over nodes of the path probability, for rank tuples and accuracy[d][r]."""
    return sum(np.prod([table[d][r] for d, r in enumerate(node)]) for node in choices)


def contiguous_trees(n, width, depth):
    """Every tree of n nodes whose children are ranks 0..m−1, at most ``depth`` deep (as rank tuples)."""
    if n == 0:
        yield []
        return
    if depth == 0:
        return
    # split n into m ≥ 1 subtrees (rank 0, 1, …), each of size ≥ 1
    for m in range(1, min(width, n) + 1):
        for sizes in compositions(n, m):
            for subs in itertools.product(*[list(contiguous_trees(s - 1, width, depth - 1)) for s in sizes]):
                yield [node for r, sub in enumerate(subs) for node in [(r,)] + [(r,) + t for t in sub]]


def compositions(n, m):
    if m == 1:
        yield (n,)
        return
    for first in range(1, n - m + 2):
        for rest in compositions(n - first, m - 1):
            yield (first,) + rest


def prefix_closed_trees(n, width, depth):
    """Every n-node tree with any ranks (each node's parent in the tree): best-first's space."""
    full = [node for d in range(1, depth + 1) for node in itertools.product(range(width), repeat=d)]
    for subset in itertools.combinations(full, n):
        s = set(subset)
        if all(len(node) == 1 or node[:-1] in s for node in subset):
            yield list(subset)


def random_table(rng, width, depth, falling):
    rows = []
    for _ in range(depth):
        row = rng.dirichlet(np.ones(width + 1))[:width]
        rows.append(np.sort(row)[::-1] if falling else row)
    return np.array(rows)


@pytest.mark.parametrize("seed", range(6))
def test_the_programme_equals_brute_force_over_all_contiguous_trees(seed):
    rng = np.random.default_rng(seed)
    width, depth = 3, 4
    table = random_table(rng, width, depth, falling=seed % 2 == 0)
    for n in range(8):
        for limit in (None, 2):
            d = depth if limit is None else limit
            brute = max(value(t, table) for t in contiguous_trees(n, width, d))
            got = optimal_tree(table, n, max_depth=limit)
            assert len(got) == n and len(set(got)) == n
            assert value(got, table) == pytest.approx(brute, abs=1e-12)
            assert optimal_tree_tokens(table, n, max_depth=limit)[n] == pytest.approx(1 + brute, abs=1e-12)
            # its own format is valid for tree_from_choices and agrees with expected_tokens_tree
            assert expected_tokens_tree(*tree_from_choices(got, table)) == pytest.approx(1 + brute, abs=1e-12)


def test_a_1d_accuracy_is_the_same_table_at_every_depth():
    for n in range(1, 9):
        brute = max(value(t, [ACC] * n) for t in contiguous_trees(n, 3, n))
        assert value(optimal_tree(ACC, n), [ACC] * n) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_best_first_equals_the_programme_when_acceptance_falls_with_rank(seed):
    rng = np.random.default_rng(100 + seed)
    width, depth = 3, 4
    table = random_table(rng, width, depth, falling=True)
    for n in range(1, 16):
        dp = optimal_tree(table, n)
        assert dp == best_tree(table, n)                     # same tree, same order
        for limit in (1, 2, 3):
            if n <= sum(width**d for d in range(1, limit + 1)):
                assert optimal_tree(table, n, max_depth=limit) == best_tree(table[:limit], n)


def test_brute_force_over_any_ranks_is_best_first():
    rng = np.random.default_rng(7)
    for falling in (True, False):
        table = random_table(rng, 2, 3, falling)
        for n in range(1, 6):
            brute = max(value(t, table) for t in prefix_closed_trees(n, 2, 3))
            assert value(best_tree(table, n), table) == pytest.approx(brute, abs=1e-12)


def test_when_acceptance_rises_with_rank_best_first_skips_rank_0():
    table = np.array([[0.3, 0.5], [0.3, 0.5]])
    bf, dp = best_tree(table, 3), optimal_tree(table, 3)
    assert bf == [(1,), (0,), (1, 1)]              # (1, 1) without (1, 0): a second draw without a first
    assert dp == [(1,), (0,), (1, 0)]
    assert value(bf, table) == pytest.approx(1.05) and value(dp, table) == pytest.approx(0.95)
    assert best_tree(table, 1) == [(1,)] and optimal_tree(table, 1) == [(0,)]


# --- the limits ---------------------------------------------------------------------------------------


def exact(choices, acc):
    return expected_tokens_tree(*rank_tree(choices, acc))


@pytest.mark.parametrize("acc", [[0.6, 0.2, 0.1], [0.8, 0.1, 0.05], [0.4, 0.4, 0.2], [0.9, 0.02]])
def test_deep_shapes_approach_their_limits_from_below(acc):
    # the gap to each limit is the geometric tail the finite shape leaves out: positive, → 0
    acc = np.array(acc)
    p1 = acc[0]
    for depth in (1, 5, 20, 40):
        gap = chain_limit(acc) - exact(chain_choices(depth), acc)
        if p1 ** (depth + 1) > 1e-9:
            assert gap > 0 and gap == pytest.approx(p1 ** (depth + 1) / (1 - p1), rel=1e-6)
        assert gap >= 0
        for k in range(1, acc.size + 1):
            top = acc[:k].sum()
            tail = top * p1 ** depth / (1 - p1)
            gap = k_chains_limit(acc, k) - exact(k_chains_choices(k, k * depth), acc)
            if tail > 1e-9:                      # smaller tails are lost to rounding near the limit
                assert gap > 0 and gap == pytest.approx(tail, rel=1e-6)
            assert gap >= 0
            assert k_chains_limit(acc, k) <= chain_limit(acc) + 1 + 1e-12      # k chains add at most 1
    two = acc[0] + acc[1]
    for depth in (1, 4, 8, 11):
        gap = full_tree_limit(acc, 2) - exact(full_tree_choices(2, depth), acc)
        assert gap > 0 and gap == pytest.approx(two ** (depth + 1) / (1 - two), rel=1e-6)


def test_k_chains_add_exactly_1_only_when_the_top_k_ranks_are_always_right():
    assert k_chains_limit([0.6, 0.4], 2) == pytest.approx(chain_limit([0.6, 0.4]) + 1)
    assert k_chains_limit([0.6, 0.3], 2) < chain_limit([0.6, 0.3]) + 1


@pytest.mark.parametrize("acc", [[0.6, 0.2, 0.1], [0.8, 0.1, 0.05]])
def test_simulated_deep_trees_stay_under_the_limits(acc):
    acc = np.array(acc)
    for choices, limit in ((chain_choices(60), chain_limit(acc)),
                           (k_chains_choices(3, 180), k_chains_limit(acc, 3)),
                           (full_tree_choices(2, 10), full_tree_limit(acc, 2))):
        c = tree_monte_carlo_check(*rank_tree(choices, acc), rounds=30_000, seed=5)
        assert abs(c.z) <= 5, str(c)
        assert c.closed_form < limit and c.mean < limit + 5 * c.std_error


@pytest.mark.parametrize("width", [1, 2, 3])
def test_no_tree_with_ranks_below_width_passes_the_full_tree_limit(width):
    acc = ACC[:width]
    tokens = optimal_tree_tokens(acc, 120)
    assert np.all(np.diff(tokens) >= -1e-15) and tokens[-1] < full_tree_limit(acc, width)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_scaling_sums_are_the_trees_they_name(k):
    s = tree_scaling(ACC, max_nodes=20, k=k)
    for n in s.nodes:
        assert s.chain[n - 1] == pytest.approx(exact(chain_choices(n), ACC), abs=1e-12)
        assert s.k_chains[n - 1] == pytest.approx(exact(k_chains_choices(k, n), ACC), abs=1e-12)
        assert s.optimal[n - 1] == pytest.approx(exact(optimal_tree(ACC, n), ACC), abs=1e-12)


def test_scaling_puts_the_optimal_tree_on_top():
    s = tree_scaling(ACC, max_nodes=40, k=3)
    assert np.all(s.optimal >= s.chain - 1e-12) and np.all(s.optimal >= s.k_chains - 1e-12)
    assert np.all(s.chain < s.chain_limit) and np.all(s.k_chains < s.k_chains_limit)
    assert s.optimal[-1] > s.chain_limit            # past what any chain can reach
    assert s.chain[0] == s.k_chains[0] == s.optimal[0] == pytest.approx(1 + ACC[0])


# --- f. trees and concurrency ---------------------------------------------------------------------


def test_a_chain_model_is_lesson_ones_serving_gain():
    users = np.array([1, 4, 16, 64, 256])
    s = tree_serving([0.8], users, max_nodes=8, draft_cost=0.05)   # width 1: every tree is a chain
    for n in range(1, 9):
        gain = serving_curves(users, 0.8, n, 0.05).gain
        assert s.speedup[:, n] == pytest.approx(gain, rel=1e-12)
        assert np.all(s.depth[:, n] == n)


def test_the_best_tree_shrinks_as_concurrency_grows():
    users = np.arange(1, 200)
    s = tree_serving(ACC, users, max_nodes=64, draft_cost=0.03)
    best = s.best_nodes
    assert np.all(np.diff(best) <= 0), best
    assert best[0] >= 30 and best[-1] == 0          # a big tree on an idle GPU; none past the crossover
    assert np.all(s.best_speedup >= 1.0)


@pytest.mark.parametrize("alpha, cost", [(0.8, 0.05), (0.6, 0.1), (0.9, 0.02)])
def test_speculation_goes_off_past_lesson_ones_best_crossover(alpha, cost):
    # width 1: the trees are chains, and a chain of k pays while N < crossover_concurrency(α, k)
    k_max = 24
    last = max(crossover_concurrency(alpha, k, cost) for k in range(1, k_max + 1))
    users = np.array([0.5 * last, 0.99 * last, 1.01 * last, 2 * last])
    best = tree_serving([alpha], users, max_nodes=k_max, draft_cost=cost).best_nodes
    assert best[0] > 0 and best[1] > 0 and best[2] == 0 and best[3] == 0


def test_best_depth_and_tokens_are_a_real_tree():
    s = tree_serving(ACC, [1, 32], max_nodes=20, draft_cost=0.1)
    for i in range(2):
        for n in range(1, 21):
            d = int(s.depth[i, n])
            assert s.tokens[i, n] == pytest.approx(optimal_tree_tokens(ACC, n, max_depth=d)[n])


@pytest.mark.parametrize("call, words", [
    (lambda: optimal_tree([0.6, 0.5], 3), ["accuracy", "1.1", "[0, 1]"]),
    (lambda: optimal_tree([[0.6, 0.2]], 3), ["nodes", "3", "0 到 2"]),
    (lambda: optimal_tree([0.6, 0.2], 3, max_depth=0), ["max_depth", "0", "[1, 4096]"]),
    (lambda: optimal_tree([0.6, 0.2], 1000), ["nodes", "1000", "[0, 256]"]),
    (lambda: optimal_tree([0.6, 0.2], 2.5), ["nodes", "2.5", "整數"]),
    (lambda: simulate_tree_rounds([-1, 0], [0.5, 0.5], rounds=0), ["rounds", "0", "[1, 10000000]"]),
    (lambda: simulate_tree_rounds([-1, -1], [0.7, 0.5]), ["acceptance", "1.2", "[0, 1]"]),
    (lambda: k_chains_limit([0.6, 0.2], 3), ["k", "3", "[1, 2]"]),
    (lambda: full_tree_choices(4, 8), ["width", "depth", "4096"]),
    (lambda: tree_serving(ACC, [0, 4]), ["concurrency", "0", "(0, ∞)"]),
    (lambda: tree_serving(ACC, [4], draft_cost=-1), ["draft_cost", "-1", "[0, ∞)"]),
])
def test_bad_input_names_parameter_value_and_range(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3), st.integers(0, 12))
def test_optimal_tree_is_valid_and_never_below_best_first_or_the_chain(raw, n):
    acc = np.array(raw) / max(1.0, sum(raw))
    tree = optimal_tree(acc, n)
    assert len(tree) == n and all(node[:-1] in set(tree) or len(node) == 1 for node in tree)
    assert all(node[-1] == 0 or node[:-1] + (node[-1] - 1,) in set(tree) for node in tree)   # contiguous
    table = np.tile(acc, (max(n, 1), 1))
    mine = value(tree, table)
    assert mine <= value(best_tree(table, n), table) + 1e-12
    assert mine >= value(chain_choices(n), table) - 1e-12
