"""specdec_lab.multi_draft: several candidates for one position, verified losslessly.

The exact numbers are checked against the paper (Sequoia App. F.3), against an independent
recursive enumeration written the slow way, against the single-candidate identity
α = Σ min(p, q) = 1 − TV(p, q), and against a Monte Carlo of the procedure (fixed seeds, 5σ).
The two plausible wrong rules are shown to change the output distribution.
"""
import numpy as np
import pytest

from specdec_lab import multi_draft_acceptance
from specdec_lab.multi_draft import multi_draft_check, multi_draft_output, multi_draft_sample

pytestmark = pytest.mark.fast


def random_pair(rng, vocab, zeros=True):
    p = rng.dirichlet(np.full(vocab, 0.6))
    q = rng.dirichlet(np.full(vocab, 0.6))
    if zeros and vocab > 2 and rng.random() < 0.4:      # supports that differ
        p[rng.integers(vocab)] = 0.0
        p /= p.sum()
    return p, q


def slow(p, q, k, replacement, mistake=None):
    """(acceptance, output) by plain recursion over the candidate drawn at each step."""
    p0, q0 = np.asarray(p, float), np.asarray(q, float)

    def norm(x):
        return x / x.sum() if x.sum() > 0 else np.zeros_like(x)

    def go(r, d, left):
        out = np.zeros_like(p0)
        if left == 0 or d.sum() == 0:
            final = norm(np.maximum(p0 - q0, 0)) if mistake == "keep_target" else r
            return 0.0, final
        acc = 0.0
        for x in range(p0.size):
            if d[x] == 0:
                continue
            a = min(1.0, r[x] / d[x])
            acc += d[x] * a
            out[x] += d[x] * a
            if a < 1:
                if mistake == "keep_target":
                    r2 = r
                else:
                    r2 = norm(np.maximum(r - (q0 if mistake == "original_draft" else d), 0))
                d2 = d if replacement else norm(np.where(np.arange(d.size) == x, 0.0, d))
                sub_acc, sub_out = go(r2, d2, left - 1)
                acc += d[x] * (1 - a) * sub_acc
                out += d[x] * (1 - a) * sub_out
        return acc, out

    return go(p0, q0, k)


# --- the paper's numbers and the one-candidate identity -------------------------------------


def test_sequoia_appendix_f3():
    assert multi_draft_acceptance([1, 0], [0.5, 0.5], 2) == pytest.approx(0.75, abs=1e-15)
    assert multi_draft_acceptance([1, 0], [0.5, 0.5], 2, replacement=False) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_one_candidate_is_sum_of_min_and_one_minus_total_variation(seed):
    rng = np.random.default_rng(seed)
    for vocab in (2, 3, 7, 30):
        p, q = random_pair(rng, vocab)
        alpha = np.minimum(p, q).sum()
        assert alpha == pytest.approx(1 - 0.5 * np.abs(p - q).sum(), abs=1e-14)
        for replacement in (True, False):
            assert multi_draft_acceptance(p, q, 1, replacement=replacement) == pytest.approx(alpha, abs=1e-14)


def test_with_replacement_matches_one_minus_product_of_step_acceptances():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.1, 0.3, 0.6])
    r, miss, expected = p, 1.0, []
    for _ in range(5):
        beta = np.minimum(r, q).sum()
        miss *= 1 - beta
        expected.append(1 - miss)
        res = np.maximum(r - q, 0)
        r = res / res.sum()
    assert multi_draft_acceptance(p, q, [1, 2, 3, 4, 5]) == pytest.approx(expected, abs=1e-14)


# --- exact: the output is p, and the slow enumeration agrees ----------------------------------


@pytest.mark.parametrize("replacement", [True, False])
def test_the_written_token_is_distributed_as_p(replacement):
    rng = np.random.default_rng(47)
    worst = 0.0
    for _ in range(200):
        vocab, k = int(rng.integers(2, 8)), int(rng.integers(1, 6))
        p, q = random_pair(rng, vocab)
        out = multi_draft_output(p, q, k, replacement=replacement)
        worst = max(worst, float(np.abs(out - p).max()))
    assert worst < 1e-12


@pytest.mark.parametrize("replacement, mistake", [(True, None), (False, None), (True, "keep_target"),
                                                  (False, "keep_target"), (False, "original_draft")])
def test_agrees_with_a_slow_recursive_enumeration(replacement, mistake):
    rng = np.random.default_rng(3)
    for _ in range(40):
        vocab, k = int(rng.integers(2, 6)), int(rng.integers(1, 5))
        p, q = random_pair(rng, vocab)
        acc, out = slow(p, q, k, replacement, mistake)
        assert multi_draft_acceptance(p, q, k, replacement, mistake) == pytest.approx(acc, abs=1e-12)
        assert multi_draft_output(p, q, k, replacement, mistake) == pytest.approx(out, abs=1e-12)


def test_more_candidates_never_accept_less():
    rng = np.random.default_rng(5)
    for _ in range(50):
        p, q = random_pair(rng, 6)
        for replacement in (True, False):
            a = multi_draft_acceptance(p, q, np.arange(1, 7), replacement=replacement)
            assert np.all(np.diff(a) >= -1e-15) and np.all((a >= 0) & (a <= 1))


def test_rows_broadcast_and_k_broadcasts_against_them():
    rng = np.random.default_rng(9)
    p = rng.dirichlet(np.ones(4), size=(2, 3))
    q = rng.dirichlet(np.ones(4), size=3)
    ks = np.array([[1], [3]])
    got = multi_draft_acceptance(p, q, ks, replacement=False)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == pytest.approx(multi_draft_acceptance(p[i, j], q[j], int(ks[i, 0]), replacement=False))
    out = multi_draft_output(p, q, 2, replacement=False)
    assert out.shape == (2, 3, 4) and np.abs(out - p).max() < 1e-12


# --- the wrong rules ------------------------------------------------------------------------------


def test_the_wrong_rules_do_not_write_p():
    p, q = np.array([0.45, 0.45, 0.1]), np.array([0.1, 0.2, 0.7])
    keep = multi_draft_output(p, q, 2, mistake="keep_target")
    original = multi_draft_output(p, q, 2, replacement=False, mistake="original_draft")
    assert np.abs(keep - p).max() > 0.05          # (0.37, 0.47, 0.16)
    assert np.abs(original - p).max() > 0.04      # (0.404, 0.496, 0.1)
    assert keep.sum() == pytest.approx(1) and original.sum() == pytest.approx(1)
    # and the right rules, same p, q, k, do
    assert multi_draft_output(p, q, 2) == pytest.approx(p, abs=1e-12)
    assert multi_draft_output(p, q, 2, replacement=False) == pytest.approx(p, abs=1e-12)


def test_a_mistake_shows_only_after_a_second_candidate():
    p, q = [0.45, 0.45, 0.1], [0.1, 0.2, 0.7]
    for replacement, mistake in ((True, "keep_target"), (False, "original_draft")):
        assert multi_draft_output(p, q, 1, replacement, mistake) == pytest.approx(p, abs=1e-12)


# --- the procedure itself, simulated ---------------------------------------------------------------


CASES = [
    ([1, 0], [0.5, 0.5], 2, True, None),
    ([1, 0], [0.5, 0.5], 2, False, None),
    ([0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4], 3, True, None),
    ([0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4], 3, False, None),
    ([0.45, 0.45, 0.1], [0.1, 0.2, 0.7], 2, True, "keep_target"),
    ([0.45, 0.45, 0.1], [0.1, 0.2, 0.7], 2, False, "original_draft"),
]


@pytest.mark.parametrize("p, q, k, replacement, mistake", CASES)
def test_simulation_agrees_with_the_exact_numbers_within_5_sigma(p, q, k, replacement, mistake):
    c = multi_draft_check(p, q, k, replacement, mistake, size=60_000, seed=2024)
    assert abs(c.z) <= 5, str(c)
    assert np.all(np.abs(c.token_z) <= 5), str(c)


def test_simulation_sees_a_wrong_rule_miss_p():
    p, q = np.array([0.45, 0.45, 0.1]), np.array([0.1, 0.2, 0.7])
    tokens, _ = multi_draft_sample(p, q, 2, mistake="keep_target", size=60_000, seed=11)
    freq = np.bincount(tokens, minlength=3) / tokens.size
    se = np.sqrt(p * (1 - p) / tokens.size)
    assert np.abs((freq - p) / se).max() > 5


def test_sampling_is_reproducible_and_seeded():
    a = multi_draft_sample([0.6, 0.4], [0.3, 0.7], 3, size=500, seed=8)
    b = multi_draft_sample([0.6, 0.4], [0.3, 0.7], 3, size=500, seed=np.random.default_rng(8))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    tokens, accepted = a
    assert set(np.unique(accepted)) <= {0, 1, 2, 3} and set(np.unique(tokens)) <= {0, 1}


@pytest.mark.parametrize("call, words", [
    (lambda: multi_draft_acceptance([0.5, 0.6], [0.5, 0.5], 2), ["p", "1.1", "總和必須是 1"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [1.5, -0.5], 2), ["q", "1.5", "[0, 1]"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [0.2, 0.3, 0.5], 2), ["p", "q", "2", "3"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 0), ["k", "0", "[1, 64]"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 1.5), ["k", "1.5", "整數"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 2, mistake="oops"), ["mistake", "oops"]),
    (lambda: multi_draft_acceptance([0.5, 0.5], [0.5, 0.5], 2, mistake="original_draft"),
     ["original_draft", "replacement=False"]),
    (lambda: multi_draft_acceptance(0.5, 0.5, 2), ["p", "0.5", "機率分布"]),
    (lambda: multi_draft_output([0.5, 0.5], [0.5, 0.5], [1, 2]), ["k", "單一數值"]),
    (lambda: multi_draft_sample([0.5, 0.5], [0.5, 0.5], 2, size=0), ["size", "0", "[1, 10000000]"]),
    (lambda: multi_draft_acceptance(np.full(40, 1 / 40), np.full(40, 1 / 40) * 0 + np.r_[np.full(20, 0.05), np.zeros(20)],
                                    20, replacement=False), ["k", "20", "有效範圍"]),
])
def test_bad_input_names_parameter_value_and_range(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)
