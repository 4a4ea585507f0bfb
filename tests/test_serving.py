"""The concurrency model reproduces the seed's table and agrees with its own crossover."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lab import DEFAULT_T_FLOP, crossover_concurrency, serving_curves, speedup

COURSE = dict(alpha=0.8, k=5, draft_cost=0.05)  # the notebook's 4️⃣ defaults


def test_few_users_get_the_single_user_speedup():
    curves = serving_curves([1, 2, 3, 4], **COURSE)
    assert curves.gain == pytest.approx(speedup(0.8, 5, 0.05), rel=1e-12)
    assert np.all(curves.throughput_on > curves.throughput_off)


def test_medium_concurrency_still_gains_but_less():
    gains = serving_curves([4, 12, 16, 24], **COURSE).gain
    assert np.all(gains > 1) and np.all(np.diff(gains) <= 0) and gains[-1] < gains[0]


@pytest.mark.parametrize("users", [32, 48, 64, 128, 256])
def test_32_plus_users_lose_total_throughput(users):
    curves = serving_curves([users], **COURSE)
    assert curves.throughput_on[0] < curves.throughput_off[0]


def test_stronger_gpu_moves_the_crossover_right():
    default = crossover_concurrency(**COURSE)
    stronger = crossover_concurrency(**COURSE, t_flop=0.01)
    assert DEFAULT_T_FLOP > 0.01
    assert 4 < default < 32 < stronger


@given(
    st.floats(0.05, 0.99), st.integers(1, 16), st.floats(0.0, 0.5), st.floats(0.001, 0.2)
)
def test_crossover_is_where_the_curves_cross(alpha, k, c, t):
    n_star = crossover_concurrency(alpha, k, c, t)
    if n_star == 0:  # speculation never helps: not even one user gains
        assert serving_curves([1e-9, 1, 10, 1e4], alpha, k, c, t).gain.max() <= 1 + 1e-12
        return
    assert np.isfinite(n_star)
    before, at, after = serving_curves([n_star * 0.99, n_star, n_star * 1.01], alpha, k, c, t).gain
    assert before > 1 > after
    assert at == pytest.approx(1.0, rel=1e-9)


def test_never_hurts_on_a_gpu_with_free_arithmetic():
    assert crossover_concurrency(0.8, 5, 0.05, t_flop=0) == np.inf
    assert np.all(serving_curves([1, 100, 10_000], 0.8, 5, 0.05, t_flop=0).gain > 1)


def test_never_helps_when_drafting_costs_more_than_it_saves():
    assert crossover_concurrency(0.6, 12, 0.3) == 0.0
    assert speedup(0.6, 12, 0.3) < 1


def test_off_curves_and_units():
    curves = serving_curves(np.array([1.0, 50.0, 100.0]), **COURSE)
    # memory-bound until t_flop·N = 1 (N = 50), compute-bound after
    assert curves.per_user_off.tolist() == pytest.approx([1.0, 1.0, 0.5])
    assert curves.throughput_off.tolist() == pytest.approx([1.0, 50.0, 50.0])
    assert curves.per_user_on == pytest.approx(curves.throughput_on / curves.concurrency)


def test_no_speculation_is_identical_to_off():
    curves = serving_curves(np.arange(1, 200), 0.8, 0, 0.05)
    assert np.array_equal(curves.throughput_on, curves.throughput_off)


@given(st.floats(0.0, 1.0), st.integers(0, 12), st.floats(0.0, 0.5))
def test_per_user_speed_never_rises_with_more_users(alpha, k, c):
    curves = serving_curves(np.arange(1, 300), alpha, k, c)
    assert np.all(np.diff(curves.per_user_on) <= 1e-12)
    assert np.all(np.diff(curves.throughput_off) >= -1e-12)


def test_crossover_broadcasts():
    got = crossover_concurrency(np.array([0.6, 0.8, 0.9]), 5, 0.05)
    assert got.shape == (3,) and np.all(np.diff(got) > 0)
