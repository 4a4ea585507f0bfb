"""The numpy-only chi-square test against scipy."""
import numpy as np
import pytest
from scipy import stats

from specdec_lab.chisquare import chi2_sf, goodness_of_fit, p_text


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 7, 10, 31, 100, 301])
@pytest.mark.parametrize("x", [0.0, 0.01, 0.7, 3.0, 12.0, 80.0, 400.0, 3000.0])
def test_chi2_sf_matches_scipy(x, dof):
    expected = stats.chi2.sf(x, dof)
    assert chi2_sf(x, dof) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_goodness_of_fit_matches_scipy_after_pooling():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(40, 0.3))
    obs = rng.multinomial(2000, p)
    result = goodness_of_fit(obs, p)
    assert np.all(result.expected >= 5)
    assert result.observed.sum() == 2000
    ref = stats.chisquare(result.observed, result.expected)
    assert result.statistic == pytest.approx(ref.statistic)
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-9)


def test_goodness_of_fit_is_calibrated():
    """Under H0 about 5 % of tests fall below p = 0.05 (5σ binomial tolerance)."""
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.full(12, 1.0))
    ps = np.array([goodness_of_fit(rng.multinomial(500, p), p).p_value for _ in range(1000)])
    rate = (ps < 0.05).mean()
    assert abs(rate - 0.05) < 5 * np.sqrt(0.05 * 0.95 / 1000)


def test_impossible_observation_gives_p_zero():
    assert goodness_of_fit([5, 5, 1], [0.5, 0.5, 0.0]).p_value == 0.0


@pytest.mark.parametrize(
    "args, message",
    [(([1, 2], [0.5, 0.25, 0.25]), "一樣長"), (([1, -2], [0.5, 0.5]), "非負整數"),
     (([1, 2], [0.7, 0.7]), "總和為 1"), (([0, 0], [0.5, 0.5]), "總數是 0"),
     (([3, 1], [0.5, 0.5]), "樣本太少")],
)
def test_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        goodness_of_fit(*args)


@pytest.mark.parametrize("x, dof", [(-1.0, 3), (float("nan"), 3), (1.0, 0), (1.0, 2.5)])
def test_chi2_sf_bad_input(x, dof):
    with pytest.raises(ValueError):
        chi2_sf(x, dof)


@pytest.mark.parametrize("p, text", [(0.5123, "p = 0.51"), (1.34e-48, "p = 1.3×10⁻⁴⁸"), (0.0, "p < 10⁻³⁰⁰"),
                                     (2e-301, "p < 10⁻³⁰⁰"), (1.0, "p = 1"), (1.7e-5, "p = 1.7×10⁻⁵"),
                                     (1e-5, "p = 1×10⁻⁵"), (0.0123, "p = 0.012")])
def test_p_values_print_without_claiming_zero(p, text):
    assert p_text(p) == text


def test_an_underflowing_p_value_is_below_the_printed_bound():
    """p_text says "< 10⁻³⁰⁰" for 0.0; scipy's log survival function confirms the bound."""
    x, dof = 21235.8, 121
    assert chi2_sf(x, dof) == 0.0 and stats.chi2.logsf(x, dof) < np.log(1e-300)
