"""specdec_lab.positional: acceptance that depends on the position, in a chain and in a tree.

The tree expectation (Medusa §2.3.3) is checked against a hand computation, against the chain
formula, against properties any such sum must have, and against a Monte Carlo walk down the tree
(fixed seeds, 5σ).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_lab import expected_tokens, expected_tokens_positional, speedup
from specdec_lab.positional import (best_tree, expected_tokens_tree, positional_speedups, tree_from_choices,
                                   tree_table)

probability = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def trees(draw, max_nodes=12):
    """(parents, acceptance) with parents listed first and sibling acceptances adding up to ≤ 1."""
    n = draw(st.integers(0, max_nodes))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n)]
    raw = np.array([draw(probability) for _ in range(n)])
    acc = raw.copy()
    for p in set(parents):
        kids = [i for i, q in enumerate(parents) if q == p]
        acc[kids] = raw[kids] / max(1.0, raw[kids].sum())
    return parents, acc


def reach(parents, acc):
    """P(path to node i accepted), computed the slow way: walk up to the root from every node."""
    out = []
    for i in range(len(parents)):
        product, j = 1.0, i
        while j >= 0:
            product *= acc[j]
            j = parents[j]
        out.append(product)
    return np.array(out)


def depth(parents):
    d = []
    for p in parents:
        d.append(1 if p < 0 else d[p] + 1)
    return max(d, default=0)


# --- the tree expectation ------------------------------------------------------------------------


def test_a_small_tree_by_hand():
    #        root
    #       /    \
    #    0 (.5)  1 (.3)        two candidates for position 1
    #    /    \
    # 2 (.4)  3 (.2)           two for position 2 after node 0
    #   |
    # 4 (.5)                   one for position 3
    parents, acc = [-1, -1, 0, 0, 2], [0.5, 0.3, 0.4, 0.2, 0.5]
    by_hand = 1 + 0.5 + 0.3 + 0.5 * 0.4 + 0.5 * 0.2 + 0.5 * 0.4 * 0.5  # = 2.2
    assert expected_tokens_tree(parents, acc) == pytest.approx(by_hand, rel=1e-15)
    assert by_hand == pytest.approx(2.2)


@given(st.lists(probability, max_size=15))
def test_a_chain_is_the_positional_formula(alphas):
    parents = list(range(-1, len(alphas) - 1))
    assert expected_tokens_tree(parents, alphas) == pytest.approx(expected_tokens_positional(alphas), rel=1e-12)


@given(probability, st.integers(0, 15))
def test_a_chain_of_equal_rates_is_eq1(alpha, k):
    assert expected_tokens_tree(list(range(-1, k - 1)), [alpha] * k) == pytest.approx(
        expected_tokens(alpha, k), rel=1e-12)


@given(trees())
def test_sum_of_path_products_and_bounds(tree):
    parents, acc = tree
    e = expected_tokens_tree(parents, acc)
    assert e == pytest.approx(1 + reach(parents, acc).sum(), rel=1e-12)
    # one accepted path at most, so at most `depth` draft tokens accepted per round
    assert 1.0 <= e <= 1 + depth(parents) + 1e-12


@given(trees(), st.data())
def test_a_new_leaf_adds_its_path_probability(tree, data):
    parents, acc = tree
    p = data.draw(st.integers(-1, len(parents) - 1))
    room = 1.0 - sum(a for q, a in zip(parents, acc) if q == p)
    a = data.draw(st.floats(0.0, max(0.0, room)))
    before = expected_tokens_tree(parents, acc)
    after = expected_tokens_tree(parents + [p], np.append(acc, a))
    via = 1.0 if p < 0 else reach(parents, acc)[p]
    assert after - before == pytest.approx(via * a, abs=1e-12)


@given(trees(), st.randoms(use_true_random=False))
def test_the_order_nodes_are_listed_in_does_not_matter(tree, rnd):
    parents, acc = tree
    # a random topological order: repeatedly take any node whose parent is already placed
    placed, order, left = {-1}, [], list(range(len(parents)))
    while left:
        ready = [i for i in left if parents[i] in placed]
        i = rnd.choice(ready)
        order.append(i)
        placed.add(i)
        left.remove(i)
    new_index = {old: new for new, old in enumerate(order)}
    new_parents = [-1 if parents[i] < 0 else new_index[parents[i]] for i in order]
    assert expected_tokens_tree(new_parents, acc[order]) == pytest.approx(expected_tokens_tree(parents, acc), rel=1e-12)


def walk(parents, acc, rounds, rng):
    """Monte Carlo: at each accepted node (the root first), at most one child is the target's
    token — child j with probability acc[j], none with the rest. Tokens per round = 1 + depth reached.

    All rounds step together, one level of the tree at a time: a round at node p draws a uniform u
    and moves to the first child j of p with u < acc[kids[0]] + … + acc[j], or stops if there is none."""
    acc = np.asarray(acc, dtype=float)
    children = {p: [i for i, q in enumerate(parents) if q == p] for p in [-1, *range(len(parents))]}
    node = np.full(rounds, -1)
    out = np.ones(rounds)
    walking = np.ones(rounds, dtype=bool)
    while walking.any():
        u = rng.random(rounds)
        step = np.full(rounds, -1)  # the child each walking round moves to, -1: it stops
        for p, kids in children.items():
            here = walking & (node == p)
            if kids and here.any():
                j = np.searchsorted(np.cumsum(acc[kids]), u[here], side="right")
                step[here] = np.append(kids, -1)[j]
        walking &= step >= 0
        node = np.where(walking, step, node)
        out += walking
    return out


@pytest.mark.parametrize("seed, tree", [
    (1, ([-1, -1, 0, 0, 2], [0.5, 0.3, 0.4, 0.2, 0.5])),
    (2, ([-1, -1, -1, 0, 0, 1, 3, 3, 6], [0.6, 0.25, 0.1, 0.7, 0.2, 0.9, 0.5, 0.45, 0.8])),
    (3, tree_from_choices(best_tree([[0.55, 0.2, 0.1], [0.5, 0.2, 0.1], [0.4, 0.2, 0.1]], 10),
                          [[0.55, 0.2, 0.1], [0.5, 0.2, 0.1], [0.4, 0.2, 0.1]])),
])
def test_monte_carlo_walk_agrees_within_5_sigma(seed, tree):
    parents, acc = tree
    tokens = walk(parents, acc, 20_000, np.random.default_rng(seed))
    e = expected_tokens_tree(parents, acc)
    assert abs(tokens.mean() - e) < 5 * tokens.std() / math.sqrt(tokens.size)


# --- Medusa's format and the greedy tree -----------------------------------------------------------

ACCURACY = [[0.6, 0.15, 0.08], [0.5, 0.15, 0.07], [0.4, 0.12, 0.06]]


def test_choices_become_parents_and_acceptance_in_any_order():
    choices = [(0,), (0, 0), (1,), (0, 1), (0, 0, 0), (2,)]
    parents, acc = tree_from_choices(choices, ACCURACY)
    # listed by depth, then rank: (0,) (1,) (2,) (0,0) (0,1) (0,0,0)
    assert parents == [-1, -1, -1, 0, 0, 3]
    np.testing.assert_array_equal(acc, [0.6, 0.15, 0.08, 0.5, 0.15, 0.4])
    shuffled = tree_from_choices(choices[::-1], ACCURACY)
    assert expected_tokens_tree(*shuffled) == expected_tokens_tree(parents, acc)
    assert expected_tokens_tree(parents, acc) == pytest.approx(
        1 + 0.6 + 0.15 + 0.08 + 0.6 * 0.5 + 0.6 * 0.15 + 0.6 * 0.5 * 0.4)


def test_best_tree_starts_as_the_top1_chain_and_grows_in_order_of_path_probability():
    tree = best_tree(ACCURACY, 8)
    assert tree[:2] == [(0,), (0, 0)]
    paths = [math.prod(ACCURACY[d][r] for d, r in enumerate(node)) for node in tree]
    assert paths == sorted(paths, reverse=True)
    tree_from_choices(tree, ACCURACY)  # prefix-closed: every node's parent is in the tree
    assert best_tree(ACCURACY, 0) == []
    assert len(best_tree(ACCURACY, 3 + 9 + 27)) == 39


@settings(max_examples=60)
@given(st.data())
def test_no_tree_of_the_same_size_beats_the_greedy_tree(data):
    acc = np.array(ACCURACY)
    n = data.draw(st.integers(1, 12))
    # a random prefix-closed tree with n nodes: grow it one random child at a time
    nodes = []
    while len(nodes) < n:
        candidates = [(r,) for r in range(3)] + [node + (r,) for node in nodes if len(node) < 3 for r in range(3)]
        candidates = [c for c in candidates if c not in nodes]
        nodes.append(data.draw(st.sampled_from(candidates)))
    best = expected_tokens_tree(*tree_from_choices(best_tree(acc, n), acc))
    assert expected_tokens_tree(*tree_from_choices(nodes, acc)) <= best + 1e-12


def test_more_nodes_never_hurt_but_each_buys_less():
    gains = [expected_tokens_tree(*tree_from_choices(best_tree(ACCURACY, n), ACCURACY)) for n in range(0, 40)]
    steps = np.diff(gains)
    assert np.all(steps >= 0) and np.all(np.diff(steps) <= 1e-15)



def test_tree_table_puts_the_chain_first_then_the_best_trees():
    table = tree_table(ACCURACY, sizes=[2, 5])
    chain = expected_tokens_tree(list(range(-1, len(ACCURACY) - 1)), [row[0] for row in ACCURACY])
    trees = [expected_tokens_tree(*tree_from_choices(best_tree(ACCURACY, n), ACCURACY)) for n in (2, 5)]
    depth = len(ACCURACY)
    expected = [(f"鏈，{depth} 個候選", depth, chain), ("樹，2 個候選", 2, trees[0]), ("樹，5 個候選", 5, trees[1])]
    assert table.rows == tuple((label, f"{e:.2f}", f"{(e - 1) / n:.3f}") for label, n, e in expected)
    assert tree_table(ACCURACY, sizes=3).rows[1][0] == "樹，3 個候選"

# --- the chain's speedups --------------------------------------------------------------------------


@given(st.lists(probability, min_size=1, max_size=12), st.floats(0.0, 1.0))
def test_positional_speedups_verify_only_the_first_k(alphas, cost):
    ks, s = positional_speedups(alphas, cost)
    assert ks.tolist() == list(range(1, len(alphas) + 1))
    brute = [expected_tokens_positional(alphas[:k]) / (1 + k * cost) for k in ks]
    np.testing.assert_allclose(s, brute, rtol=1e-12)


def test_positional_speedups_with_equal_rates_is_theorem_38():
    ks, s = positional_speedups([0.8] * 10, 0.05)
    np.testing.assert_allclose(s, speedup(0.8, ks, 0.05), rtol=1e-12)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, words", [
    (lambda: expected_tokens_tree([-1, 1], [0.5, 0.5]), ["parents[1]", "-1 到 0", "收到 1"]),
    (lambda: expected_tokens_tree([-1, -2], [0.5, 0.5]), ["parents", "≥ -1", "-2"]),
    (lambda: expected_tokens_tree([-1, 0.5], [0.5, 0.5]), ["parents", "整數", "0.5"]),
    (lambda: expected_tokens_tree([-1, 0], [0.5]), ["acceptance", "2 個節點", "(1,)"]),
    (lambda: expected_tokens_tree([-1, 0], [0.5, 1.5]), ["acceptance", "[0, 1]", "1.5"]),
    (lambda: expected_tokens_tree([-1, 0], [0.5, float("nan")]), ["acceptance", "[0, 1]", "nan"]),
    (lambda: expected_tokens_tree([-1, -1, 0], [0.7, 0.4, 0.5]), ["acceptance", "根", "[0, 1]", "1.1"]),
    (lambda: expected_tokens_tree([-1, 0, 0], [0.9, 0.6, 0.5]), ["acceptance", "節點 0", "[1, 2]", "1.1"]),
    (lambda: expected_tokens_tree("abc", [0.5]), ["parents", "一維"]),
    (lambda: expected_tokens_tree([], [0.5]), ["acceptance", "空"]),
    (lambda: tree_from_choices([(0,), (0, 0, 0)], ACCURACY), ["choices", "(0, 0)", "前綴"]),
    (lambda: tree_from_choices([(0,), (0,)], ACCURACY), ["choices", "兩次"]),
    (lambda: tree_from_choices([(3,)], ACCURACY), ["choices", "[0, 2]", "3"]),
    (lambda: tree_from_choices([(0, 0, 0, 0)], ACCURACY), ["choices", "1 到 3", "4"]),
    (lambda: tree_from_choices(7, ACCURACY), ["choices", "7"]),
    (lambda: tree_from_choices([(0,)], [[0.7, 0.4]]), ["accuracy[0]", "[0, 1]", "1.1"]),
    (lambda: tree_from_choices([(0,)], [0.7, 0.2]), ["accuracy", "二維"]),
    (lambda: best_tree(ACCURACY, 40), ["nodes", "[0, 39]", "40"]),
    (lambda: best_tree(ACCURACY, -1), ["nodes", "-1"]),
    (lambda: tree_table(ACCURACY, sizes=[4, 40]), ["sizes", "[1, 39]", "40"]),
    (lambda: tree_table(ACCURACY, sizes=[0]), ["sizes", "0"]),
    (lambda: tree_table(ACCURACY, sizes=[[4]]), ["sizes", "一維", "(1, 1)"]),
    (lambda: positional_speedups([0.5, 2.0], 0.1), ["alphas", "[0, 1]", "2.0"]),
    (lambda: positional_speedups([0.5], -0.1), ["draft_cost", "[0, ∞)", "-0.1"]),
])
def test_bad_input_names_parameter_value_and_range(call, words):
    with pytest.raises(ValueError) as err:
        call()
    for word in words:
        assert word in str(err.value), f"{word!r} missing from: {err.value}"


def test_an_empty_tree_is_no_draft():
    assert expected_tokens_tree([], []) == 1.0
