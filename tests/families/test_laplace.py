import numpy as np
import pytest
from scipy import integrate, stats

import dpbook
from dpbook import Laplace


def test_laplace_scale():
    assert dpbook.laplace_scale(0.5, 2.0) == 4.0
    for eps, sens in [(0, 1), (-1, 1), (1, 0), (float("nan"), 1), (1, float("inf"))]:
        with pytest.raises(ValueError, match="epsilon|sensitivity"):
            dpbook.laplace_scale(eps, sens)


@pytest.mark.parametrize("x", [-800.0, -3.0, -1e-3, 0.0, 2.5, 700.0])
def test_law_against_scipy(x):
    law = stats.laplace(loc=0.3, scale=1.7)
    assert np.isclose(Laplace(1.7).cdf(x, 0.3), law.cdf(x), rtol=1e-12, atol=0)
    assert np.isclose(Laplace(1.7).sf(x, 0.3), law.sf(x), rtol=1e-12, atol=0)
    assert np.isclose(Laplace(1.7).logcdf(x, 0.3), law.logcdf(x), rtol=1e-12)
    assert np.isclose(Laplace(1.7).logsf(x, 0.3), law.logsf(x), rtol=1e-12)


def test_ppf_inverts_cdf():
    u = np.linspace(0, 1, 101)
    x = Laplace(0.5).ppf(u, -1.0)
    assert x[0] == -np.inf and x[-1] == np.inf
    assert np.allclose(Laplace(0.5).cdf(x[1:-1], -1.0), u[1:-1], rtol=1e-12)


def test_mechanism_moments_by_quadrature():
    mech = dpbook.Laplace(scale=1.3)
    q = 0.7
    m, _ = integrate.quad(lambda x: x * np.exp(mech.logpdf(x, q)), -np.inf, np.inf)
    v, _ = integrate.quad(
        lambda x: (x - q) ** 2 * np.exp(mech.logpdf(x, q)), -np.inf, np.inf
    )
    assert np.isclose(m, mech.mean(q), rtol=1e-10)
    assert np.isclose(v, mech.variance(q), rtol=1e-10)
    assert np.isclose(mech.mse(q), 2 * 1.3**2)


def test_sampler():
    mech = dpbook.Laplace(scale=2.0)
    x = mech.sample(1.0, size=20000, rng=np.random.default_rng(1))
    assert stats.kstest(x, lambda t: mech.cdf(t, 1.0)).pvalue > 1e-3
    assert x.shape == (20000,)
    assert mech.sample(np.zeros((2, 3)), rng=np.random.default_rng(0)).shape == (2, 3)


@pytest.mark.parametrize(
    "bad", [{"scale": 0}, {"scale": -1}, {"scale": np.nan}, {"scale": np.inf}]
)
def test_bad_scale(bad):
    with pytest.raises(ValueError, match="scale"):
        dpbook.Laplace(**bad)


def test_bad_size_and_q():
    mech = dpbook.Laplace(scale=1.0)
    with pytest.raises(ValueError, match="size"):
        mech.sample(0.0, size=-1)
    with pytest.raises(ValueError, match="q"):
        mech.mean(np.nan)
    for bad in (-1, 1.5, True, "42", np.random.RandomState(0)):
        with pytest.raises(ValueError, match="rng"):
            mech.sample(0.0, rng=bad)
    with pytest.raises(ValueError, match="random_state"):
        mech.at(0.0).rvs(random_state=-1)
