"""Bad input raises ValueError naming the parameter, the value and the valid range — never a
wrong number, a NaN or a hang."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import specdec_lab as sd
from specdec_lab.chisquare import chi2_sf, goodness_of_fit

P = np.array([[0.2, 0.8], [0.5, 0.5]])
Q = np.array([[0.4, 0.6]])

CASES = [
    # (call, parameter, shown value, range text)
    (lambda: sd.expected_tokens(1.2, 5), "alpha", "1.2", "[0, 1]"),
    (lambda: sd.expected_tokens(-0.1, 5), "alpha", "-0.1", "[0, 1]"),
    (lambda: sd.expected_tokens(math.nan, 5), "alpha", "nan", "[0, 1]"),
    (lambda: sd.expected_tokens([0.5, 1.5], 5), "alpha", "1.5", "[0, 1]"),
    (lambda: sd.expected_tokens("0.5", 5), "alpha", "0.5", "[0, 1]"),
    (lambda: sd.expected_tokens(True, 5), "alpha", "True", "[0, 1]"),
    (lambda: sd.expected_tokens(0.8, -3), "k", "-3", "≥ 0"),
    (lambda: sd.expected_tokens(0.8, 2.5), "k", "2.5", "整數"),
    (lambda: sd.expected_tokens(0.8, math.inf), "k", "inf", "整數"),
    (lambda: sd.speedup(0.8, 5, -0.1), "draft_cost", "-0.1", "[0, ∞)"),
    (lambda: sd.speedup(0.8, 5, math.nan), "draft_cost", "nan", "[0, ∞)"),
    (lambda: sd.best_k(0.8, 0.05, k_max=0), "k_max", "0", "[1, 10000]"),
    (lambda: sd.best_k(0.8, -1), "draft_cost", "-1", "[0, ∞)"),
    (lambda: sd.knee_k(0.8, 0.05, fraction=1.5), "fraction", "1.5", "[0, 1]"),
    (lambda: sd.knee_k(0.8, 0.05, fraction=0), "fraction", "0", "(0, 1]"),
    (lambda: sd.expected_tokens_positional([0.9, 1.1]), "alphas", "1.1", "[0, 1]"),
    (lambda: sd.expected_tokens_positional(0.9), "alphas", "0.9", "一維"),
    (lambda: sd.expected_tokens_positional("abc"), "alphas", "'abc'", "一維"),  # was numpy's English error
    (lambda: sd.simulate_rounds(0.8, 5, rounds=0), "rounds", "0", "[1, 50000000]"),
    (lambda: sd.simulate_rounds(0.8, 5, rounds=2.5), "rounds", "2.5", "整數"),
    (lambda: sd.simulate_rounds(0.8, 5, rounds=10**12), "rounds", "1000000000000", "[1, 50000000]"),
    (lambda: sd.simulate_rounds(0.8, -3), "k", "-3", "[0, 1000000]"),
    (lambda: sd.simulate_rounds(1.2, 5), "alpha", "1.2", "[0, 1]"),
    (lambda: sd.simulate_rounds([0.5, 0.6], 5), "alpha", "陣列", "單一數值"),
    (lambda: sd.simulate_rounds(0.8, 5, seed="abc"), "seed", "'abc'", "Generator"),
    (lambda: sd.simulate_rounds(0.8, 5, seed=-1), "seed", "-1", "非負整數"),
    (lambda: sd.monte_carlo_check(0.8, 5, rounds=-5), "rounds", "-5", "[1, 50000000]"),
    (lambda: sd.serving_curves([0, 4], 0.8, 5, 0.05), "concurrency", "0", "(0, ∞)"),
    (lambda: sd.serving_curves([4], 0.8, 5, 0.05, t_flop=-0.01), "t_flop", "-0.01", "[0, ∞)"),
    (lambda: sd.serving_curves([4], 0.8, -1, 0.05), "k", "-1", "≥ 0"),
    (lambda: sd.crossover_concurrency(1.2, 5, 0.05), "alpha", "1.2", "[0, 1]"),
    (lambda: sd.crossover_concurrency(0.8, 5, 0.05, t_flop=math.nan), "t_flop", "nan", "[0, ∞)"),
    (lambda: sd.verify_greedy([0], [[0.5, 0.6], [0.5, 0.5]]), "target_probs", "1.1", "總和必須是 1"),
    (lambda: sd.verify_greedy([0], [[-0.5, 1.5], [0.5, 0.5]]), "target_probs", "-0.5", "[0, 1]"),
    (lambda: sd.verify_greedy([0, 1], P), "target_probs", "2 列", "3 列"),
    (lambda: sd.verify_greedy([5], P), "draft_tokens", "5", "[0, 1]"),
    (lambda: sd.verify_greedy([0], [0.5, 0.5]), "target_probs", "(2,)", "二維"),
    (lambda: sd.verify_sampling([0], [[0.3, 0.3, 0.4]], P), "draft_probs", "3", "詞表大小"),
    (lambda: sd.verify_sampling([0], [[0.4, 0.6], [0.5, 0.5]], P), "draft_probs", "2 列", "1 列"),
    (lambda: sd.verify_sampling([0], [[0.0, 1.0]], P), "draft_probs", "0", "機率是 0"),
    (lambda: sd.verify_sampling([0], [[math.nan, 1.0]], P), "draft_probs", "nan", "[0, 1]"),
    (lambda: sd.verify_sampling([0], Q, P, seed=1.5), "seed", "1.5", "Generator"),
    (lambda: sd.token_distribution(0.5, 10**9), "k", "1000000000", "[0, 1000000]"),  # was a hang
    (lambda: chi2_sf(5.0, 10**9), "dof", "1000000000", "[1, 1000000]"),  # was a hang
    (lambda: chi2_sf(5.0, math.nan), "dof", "nan", "整數"),
    (lambda: goodness_of_fit([5, -2], [0.5, 0.5]), "observed", "-2", "非負整數"),
    (lambda: goodness_of_fit([5, 5], [1.5, -0.5]), "probabilities", "-0.5", "[0, 1]"),
    (lambda: goodness_of_fit([50, 50], [0.5, 0.5], labels=["a"]), "labels", "1 個", "2 格"),
    # min_expected = 0 kept cells expecting 0 counts: χ² = nan
    (lambda: goodness_of_fit([5, 5, 0], [0.5, 0.5, 0.0], min_expected=0), "min_expected", "0", "(0, ∞)"),
    # lesson 2: trees and several candidates
    (lambda: sd.tree_attention_mask([-1, 2, 0]), "parents[1]", "2", "-1 到 0"),      # parent after child
    (lambda: sd.tree_attention_mask([-1, 1]), "parents[1]", "1", "-1 到 0"),         # a cycle
    (lambda: sd.tree_attention_mask([-1, 7]), "parents", "7", "[-1, 1]"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.6], [0.5, 0.5], 2), "p", "1.1", "總和必須是 1"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.5], [-0.5, 1.5], 2), "q", "-0.5", "[0, 1]"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 0), "k", "0", "[1, 64]"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 2.5), "k", "2.5", "整數"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], math.nan), "k", "nan", "整數"),
    (lambda: sd.multi_draft_acceptance([0.5, 0.5], [1 / 3] * 3, 2), "q", "3", "2 個字"),
    (lambda: sd.multi_draft_acceptance([math.nan, 1.0], [0.5, 0.5], 2), "p", "nan", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, value, valid", CASES)
def test_message_names_parameter_value_and_range(call, name, value, valid):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert name in message and value in message and valid in message, message


@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40))
def test_expected_tokens_either_answers_finitely_or_refuses(alpha, k):
    try:
        value = sd.expected_tokens(alpha, k)
    except ValueError:
        assert not (0 <= alpha <= 1) or k < 0
    else:
        assert 0 <= alpha <= 1 and k >= 0 and math.isfinite(value) and 1 <= value <= k + 1


@given(st.floats(0, 1), st.integers(0, 40), st.floats(0, 1e6))
def test_speedup_and_crossover_are_never_nan(alpha, k, c):
    assert math.isfinite(sd.speedup(alpha, k, c))
    assert not math.isnan(sd.crossover_concurrency(alpha, k, c))


def test_integral_floats_are_accepted_as_integers():
    assert sd.expected_tokens(0.5, 3.0) == sd.expected_tokens(0.5, 3)
    assert sd.simulate_rounds(0.5, np.int64(3), rounds=np.int32(10), seed=0).size == 10
