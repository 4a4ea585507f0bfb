"""Eq. 1 and Theorem 3.8 of Leviathan et al. 2023, checked against independent computations."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lab import best_k, expected_tokens, expected_tokens_positional, knee_k, speedup

alphas = st.floats(0.0, 1.0)
ks = st.integers(0, 64)
costs = st.floats(0.0, 2.0)


def direct_sum(alpha, k):
    """1 + α + … + α^k, term by term (an independent route to Eq. 1)."""
    return sum(alpha**i for i in range(k + 1))


@pytest.mark.parametrize(
    "alpha, k, tokens",
    [(0.8, 5, 3.69), (0.6, 5, 2.38), (0.9, 7, 5.70), (0.7, 3, 2.53), (0.5, 1, 1.50)],
)
def test_published_values_of_eq1(alpha, k, tokens):
    # Leviathan et al. 2023 Eq. 1 (the example: α = 0.8, γ = 5 → 3.69 tokens per round)
    assert round(expected_tokens(alpha, k), 2) == tokens


@given(alphas, ks)
def test_matches_the_term_by_term_sum(alpha, k):
    assert expected_tokens(alpha, k) == pytest.approx(direct_sum(alpha, k), rel=1e-12, abs=1e-12)


def test_edges_are_exact():
    assert expected_tokens(1.0, 5) == 6.0
    assert expected_tokens(0.0, 5) == 1.0
    assert expected_tokens(0.37, 0) == 1.0
    assert expected_tokens(0.0, 0) == 1.0
    assert expected_tokens(1.0, 0) == 1.0


@pytest.mark.parametrize("k", [1, 5, 16, 100])
@pytest.mark.parametrize("gap", [1e-12, 1e-9, 1e-6])
def test_no_cancellation_near_one(k, gap):
    alpha = 1.0 - gap
    exact = sum(Fraction(alpha) ** i for i in range(k + 1))  # exact rational arithmetic
    assert expected_tokens(alpha, k) == pytest.approx(float(exact), rel=1e-13)


def test_broadcasts_like_a_ufunc():
    a = np.array([0.5, 0.8, 0.95])
    k = np.arange(1, 6)[:, None]
    got = expected_tokens(a, k)
    assert got.shape == (5, 3)
    assert got[4, 1] == pytest.approx(direct_sum(0.8, 5))
    assert isinstance(expected_tokens(0.5, 2), float)


@given(alphas, ks)
def test_bounded_by_one_and_k_plus_one(alpha, k):
    e = expected_tokens(alpha, k)
    assert 1.0 <= e <= k + 1 + 1e-12


@given(st.floats(0.0, 0.999), st.floats(0.0, 0.999), ks)
def test_monotone_in_alpha(a1, a2, k):
    lo, hi = sorted((a1, a2))
    assert expected_tokens(lo, k) <= expected_tokens(hi, k) * (1 + 1e-12)


@given(alphas, st.integers(0, 63))
def test_monotone_in_k(alpha, k):
    assert expected_tokens(alpha, k) <= expected_tokens(alpha, k + 1) * (1 + 1e-12)


@given(alphas, ks, costs)
def test_theorem_3_8_walltime_factor(alpha, k, c):
    # improvement factor (1 − α^(γ+1)) / ((1 − α)(γc + 1)), with the sum for α = 1
    assert speedup(alpha, k, c) == pytest.approx(direct_sum(alpha, k) / (k * c + 1), rel=1e-12)


@given(alphas, costs)
def test_one_draft_token(alpha, c):
    assert speedup(alpha, 1, c) == pytest.approx((1 + alpha) / (1 + c), rel=1e-12)


@given(st.floats(0.01, 0.99), st.floats(0.0, 0.99))
def test_corollary_3_9_some_k_helps_when_alpha_exceeds_cost(alpha, c):
    best = speedup(alpha, best_k(alpha, c), c)
    if alpha > c:
        assert best >= (1 + alpha) / (1 + c) - 1e-12
        assert best > 1.0
    else:
        assert best <= 1.0 + 1e-12


def test_seed_worked_example_more_guesses_are_slower():
    # α = 0.6, draft cost 0.3: K = 5 and K = 12 lose to K = 1 (seed 000, Q4)
    s1, s5, s12 = (speedup(0.6, k, 0.3) for k in (1, 5, 12))
    assert s5 < s1 and s12 < s1
    assert best_k(0.6, 0.3) == 1
    assert round(0.6**5, 3) == 0.078 and round(0.6**12, 3) == 0.002
    assert 1 + 5 * 0.3 == pytest.approx(2.5) and 1 + 12 * 0.3 == pytest.approx(4.6)
    assert expected_tokens(0.6, 12) == pytest.approx(2.5, abs=0.01)  # the numerator's ceiling 1/(1−α)


@given(st.floats(0.0, 1.0), costs, st.integers(1, 40))
def test_best_k_is_the_brute_force_argmax(alpha, c, k_max):
    values = [speedup(alpha, k, c) for k in range(1, k_max + 1)]
    assert best_k(alpha, c, k_max) == 1 + values.index(max(values))


def test_best_k_prefers_the_smallest_on_ties():
    assert best_k(0.0, 0.0) == 1  # every k gives speedup 1
    assert best_k(1.0, 0.0, k_max=7) == 7


def test_best_k_broadcasts():
    got = best_k(np.array([0.6, 0.85, 0.95]), 0.06)
    assert got.tolist() == [best_k(a, 0.06) for a in (0.6, 0.85, 0.95)]


@given(st.floats(0.0, 1.0), costs, st.floats(0.5, 1.0))
def test_knee_is_the_first_k_within_the_fraction(alpha, c, fraction):
    knee, best = knee_k(alpha, c, fraction), best_k(alpha, c)
    assert knee <= best
    peak = speedup(alpha, best, c)
    assert speedup(alpha, knee, c) >= fraction * peak
    assert all(speedup(alpha, k, c) < fraction * peak for k in range(1, knee))


def test_knee_at_fraction_one_is_the_peak():
    assert knee_k(0.85, 0.06, fraction=1.0) == best_k(0.85, 0.06)


@given(alphas, st.integers(0, 30))
def test_positional_with_equal_rates_is_eq1(alpha, k):
    assert expected_tokens_positional([alpha] * k) == pytest.approx(expected_tokens(alpha, k), rel=1e-12)


def test_positional_tail_collapse_caps_the_gain():
    flat = expected_tokens_positional([0.8] * 16)
    collapsing = expected_tokens_positional([0.8] * 4 + [0.1] * 12)
    assert collapsing < flat
    # beyond the collapse, 12 more positions add less than 0.8^4 · 0.1/(1 − 0.1)
    assert collapsing - expected_tokens_positional([0.8] * 4) < 0.8**4 * 0.1 / 0.9 + 1e-12
    assert expected_tokens_positional([]) == 1.0
    assert expected_tokens_positional([0.0, 1.0, 1.0]) == 1.0
    assert expected_tokens_positional([[0.5, 0.5], [1.0, 1.0]]).tolist() == [1.75, 3.0]


def test_positional_batch_without_draft_positions_gives_one_token_each():
    """A batch of empty profiles is a batch of 1s (it was a single 1.0)."""
    assert expected_tokens_positional(np.zeros((2, 0))).tolist() == [1.0, 1.0]
    assert expected_tokens_positional(np.zeros((2, 3, 0))).shape == (2, 3)
