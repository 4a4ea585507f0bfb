"""30,000-round Monte Carlo against the closed form, with fixed seeds and 5σ tolerances."""
import numpy as np
import pytest

from specdec_lab import expected_tokens, monte_carlo_check, simulate_rounds, token_distribution

ALPHAS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
KS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
GRID = [(a, k) for a in ALPHAS for k in KS]


@pytest.mark.parametrize("index, alpha, k", [(i, a, k) for i, (a, k) in enumerate(GRID)])
def test_mean_agrees_with_eq1_within_5_sigma(index, alpha, k):
    check = monte_carlo_check(alpha, k, rounds=30_000, seed=20_261_130 + index)
    assert check.rounds == 30_000
    assert check.closed_form == pytest.approx(expected_tokens(alpha, k), rel=1e-15)
    assert abs(check.z) <= 5.0, str(check)


@pytest.mark.parametrize("alpha, k", [(0.3, 1), (0.6, 5), (0.8, 5), (0.95, 16)])
def test_histogram_is_the_truncated_geometric(alpha, k):
    check = monte_carlo_check(alpha, k, rounds=30_000, seed=7)
    p = token_distribution(alpha, k)
    assert p[0] == pytest.approx(1 - alpha) and p[-1] == pytest.approx(alpha**k)
    assert p.sum() == pytest.approx(1.0)
    assert check.counts.sum() == 30_000 and check.counts.shape == (k + 1,)
    # each bar within 5 binomial standard errors of its exact probability
    se = np.sqrt(p * (1 - p) / check.rounds)
    assert np.all(np.abs(check.frequencies - p) <= 5 * se + 1e-12), (check.frequencies, p)


def test_the_check_detects_a_wrong_alpha():
    """The 5σ test has power: rounds simulated at α = 0.78 do not pass for Eq. 1 at α = 0.8."""
    sample = simulate_rounds(0.78, 5, rounds=30_000, seed=1)
    se = sample.std(ddof=1) / np.sqrt(sample.size)
    assert abs(sample.mean() - expected_tokens(0.8, 5)) / se > 5


def test_rounds_are_integers_in_range_and_reproducible():
    a = simulate_rounds(0.7, 6, rounds=5_000, seed=3)
    assert a.dtype.kind == "i" and a.min() >= 1 and a.max() <= 7
    assert np.array_equal(a, simulate_rounds(0.7, 6, rounds=5_000, seed=3))
    assert not np.array_equal(a, simulate_rounds(0.7, 6, rounds=5_000, seed=4))
    gen = np.random.default_rng(3)
    assert np.array_equal(a, simulate_rounds(0.7, 6, rounds=5_000, seed=gen))


def test_deterministic_edges():
    assert set(simulate_rounds(1.0, 4, rounds=100, seed=0)) == {5}
    assert set(simulate_rounds(0.0, 4, rounds=100, seed=0)) == {1}
    assert set(simulate_rounds(0.5, 0, rounds=100, seed=0)) == {1}
    check = monte_carlo_check(1.0, 4, rounds=100, seed=0)
    assert check.std_error == 0 and check.z == 0 and check.counts.tolist() == [0, 0, 0, 0, 100]


def test_large_k_crosses_memory_chunks():
    # 10,000 rounds × 1,000 positions is more than one chunk of the hit matrix
    check = monte_carlo_check(0.99, 1_000, rounds=10_000, seed=11)
    assert abs(check.z) <= 5, str(check)
