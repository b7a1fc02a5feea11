"""Truncated (Liu Def. 2(a); McGlinchey–Mason (8)): every closed form against its defining integral."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from interval_cases import close, setups
from scipy import integrate, stats

import dpbook
from dpbook import Truncated


def pieces(f, lo, hi, q, b):
    """int_lo^hi f, split at the kink q and where the mass thins out, each piece by quad."""
    cuts = {q, q - 30 * b, q + 30 * b, q - 100 * b, q + 100 * b}
    cuts |= {lo + 30 * b, lo + 100 * b, hi - 30 * b, hi - 100 * b}
    pts = [lo] + sorted(c for c in cuts if lo < c < hi and math.isfinite(c)) + [hi]
    with (
        warnings.catch_warnings()
    ):  # a moment about the mean is ~0: quad then warns it cannot reach epsrel
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return sum(
            integrate.quad(f, x0, x1, epsabs=0, epsrel=1e-12, limit=200)[0]
            for x0, x1 in zip(pts, pts[1:])
        )


def reference(b, lo, hi, q, m0):
    """Moments of the law with density proportional to exp(-|x - q|/b) on [lo, hi], by quadrature.

    The density is scaled by exp(dist/b), dist = distance from q to the interval, so it never underflows.
    """
    dist = max(lo - q, q - hi, 0.0)
    g = lambda x: math.exp(-(abs(x - q) - dist) / b)  # noqa: E731
    z = pieces(g, lo, hi, q, b)
    mom = lambda h: pieces(lambda x: h(x) * g(x), lo, hi, q, b) / z  # noqa: E731
    return {
        "log_mass": math.log(z / (2 * b)) - dist / b,
        "bias": mom(lambda x: x - q),
        "abs": mom(lambda x: abs(x - q)),
        "mse": mom(lambda x: (x - q) ** 2),
        "var": mom(lambda x: (x - m0) ** 2) - mom(lambda x: x - m0) ** 2,
        "cdf": lambda x: pieces(g, lo, x, q, b) / z,
    }


@settings(max_examples=60, deadline=None)
@given(setups())
def test_closed_forms_against_quadrature(setup):
    b, lo, hi, q = setup
    mech = dpbook.Truncated(b, lower=lo, upper=hi)
    m0 = mech.mean(q)
    ref = reference(b, lo, hi, q, m0)
    close(mech.log_mass_kept(q), ref["log_mass"], atol=1e-12)
    close(mech.mass_kept(q), math.exp(ref["log_mass"]), atol=1e-300)
    close(mech.bias(q), ref["bias"], atol=1e-12 * ref["abs"])
    close(m0, q + ref["bias"], atol=1e-12 * (abs(q) + ref["abs"]))
    close(mech.mse(q), ref["mse"])
    close(mech.variance(q), ref["var"], atol=1e-12 * ref["mse"] * (lo <= q <= hi))
    for x in np.linspace(max(lo, m0 - 5 * b), min(hi, m0 + 5 * b), 4)[1:-1]:
        close(mech.cdf(x, q), ref["cdf"](x), atol=1e-13)


@pytest.mark.parametrize("q", [0.0, 0.3, 5.0, 100.0, 700.0])
def test_mcglinchey_mason_corollary_1(q):
    b = 1.7
    mech = dpbook.Truncated(b)
    expected = (q + b) / (2 * math.exp(q / b) - 1)
    assert math.isclose(mech.bias(q), expected, rel_tol=1e-13)
    eps, delta = 0.8, b * 0.8
    assert math.isclose(
        mech.bias(q),
        (q * eps + delta) / (2 * eps * math.exp(q * eps / delta) - eps),
        rel_tol=1e-13,
    )


def test_liu_closed_forms_inside():
    b, lo, hi = 0.7, -1.0, 2.5
    q = np.linspace(lo, hi, 9)
    ea, eb = np.exp(-(q - lo) / b), np.exp(-(hi - q) / b)
    a, c = q - lo, hi - q
    mech = dpbook.Truncated(b, lower=lo, upper=hi)
    n = 1 - ea / 2 - eb / 2
    assert np.allclose(mech.mass_kept(q), n, rtol=1e-13)
    assert np.allclose(
        mech.mean(q),
        q + ((a + b) * ea - (c + b) * eb) / (2 - ea - eb),
        rtol=1e-13,
        atol=1e-15,
    )
    mse = (
        2 * b**2
        - (a**2 + 2 * b * a + 2 * b**2) * ea / 2
        - (c**2 + 2 * b * c + 2 * b**2) * eb / 2
    ) / n
    assert np.allclose(mech.mse(q), mse, rtol=1e-12)


def test_outside_is_the_law_at_the_nearest_bound():
    mech = dpbook.Truncated(1.3, lower=-2.0, upper=4.0)
    x = np.linspace(-2, 4, 13)
    for q, c in [(-60.0, -2.0), (-6500.0, -2.0), (70.0, 4.0)]:
        assert np.array_equal(mech.cdf(x, q), mech.cdf(x, c))
        assert mech.variance(q) == mech.variance(c)
        assert mech.mean(q) == mech.mean(c)
        assert np.isclose(
            mech.log_mass_kept(q), mech.log_mass_kept(c) - abs(q - c) / 1.3, rtol=1e-14
        )
    assert mech.mass_kept(-6500.0) == 0.0 and np.isfinite(mech.log_mass_kept(-6500.0))


def test_logpdf_integrates_to_one_and_matches_cdf():
    for lo, hi, q in [
        (0.0, math.inf, -40.0),
        (-1.0, 3.0, 0.5),
        (-math.inf, 2.0, 9.0),
        (-1.0, 3.0, -5000.0),
    ]:
        mech = dpbook.Truncated(0.9, lower=lo, upper=hi)
        dens = lambda x: math.exp(mech.logpdf(x, q))  # noqa: E731
        total = pieces(dens, lo, hi, min(max(q, lo), hi), 0.9)
        assert math.isclose(total, 1.0, rel_tol=1e-11)
        x = min(max(q, lo), hi) + (0.4 if q <= hi else -0.4)
        part = (
            pieces(dens, lo, x, q, 0.9) if q <= hi else 1 - pieces(dens, x, hi, q, 0.9)
        )
        assert math.isclose(mech.cdf(x, q), part, rel_tol=1e-10)
    mech = dpbook.Truncated(1.0, lower=0.0, upper=1.0)
    assert mech.logpdf(-0.1, 0.5) == -np.inf and mech.logpdf(1.1, 0.5) == -np.inf


def test_ppf_inverts_cdf():
    p = np.linspace(0, 1, 41)
    for lo, hi, q in [
        (0.0, math.inf, 0.0),
        (-1.0, 3.0, 0.2),
        (-math.inf, 2.0, 9.0),
        (-1.0, 1e-3, -1.0),
        (-math.inf, math.inf, 1.0),
    ]:
        x = Truncated(0.8, lower=lo, upper=hi).ppf(p, q)
        assert np.isclose(x[0], lo, rtol=0, atol=1e-13) and np.isclose(
            x[-1], hi, rtol=0, atol=1e-13
        )
        assert np.all(np.diff(x) > 0) and np.all((x >= lo) & (x <= hi))
        assert np.allclose(
            dpbook.Truncated(0.8, lower=lo, upper=hi).cdf(x[1:-1], q),
            p[1:-1],
            rtol=1e-11,
            atol=1e-15,
        )


GRID = [
    (1.0, 0.0, math.inf, 0.0),
    (1.0, 0.0, math.inf, 3.0),
    (1.0, 0.0, math.inf, -50.0),
    (2.0, -1.0, 1.0, 0.3),
    (0.5, -1.0, 1.0, -50.5),
    (0.5, -1.0, 1.0, 2500.0),
    (1.0, 0.0, math.inf, -5000.0),
    (3.0, -math.inf, 0.0, 1.0),
    (1.0, 0.0, 1e-3, 0.5),
]


@pytest.mark.parametrize("b, lo, hi, q", GRID)
def test_sampler_ks_and_mean(b, lo, hi, q):
    mech = dpbook.Truncated(b, lower=lo, upper=hi)
    x = mech.sample(q, size=20000, rng=np.random.default_rng(7))
    assert np.all((x >= lo) & (x <= hi))
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-3
    se = math.sqrt(mech.variance(q) / x.size)
    assert abs(x.mean() - mech.mean(q)) < 5 * se


def test_sampler_shapes_and_vector_q():
    mech = dpbook.Truncated(1.0, lower=-1.0, upper=2.0)
    q = np.array([-100.0, 0.0, 50.0])
    x = mech.sample(q, size=(4000, 3), rng=np.random.default_rng(3))
    assert x.shape == (4000, 3)
    assert np.allclose(
        x.mean(axis=0), mech.mean(q), atol=5 * np.sqrt(mech.variance(q) / 4000)
    )
    assert isinstance(mech.sample(0.5, rng=np.random.default_rng(0)), float)
    assert dpbook.Truncated(1.0, lower=-math.inf, upper=math.inf).sample(
        0.0, size=10, rng=np.random.default_rng(0)
    ).shape == (10,)


def test_quantile_by_piece_matches_quantile_per_point():
    """The lookup mode of the in-place quantile (one window per interval, a mixture's pieces, as
    ``Normalized`` samples) against the per-point mode."""
    from dpbook._kernels.laplace import (
        _piece_quantile_in_place,
        _piece_table,
        _quantile_in_place,
    )

    lo, hi = np.array([-math.inf, 0.0, 2.0, 5.0]), np.array([-2.0, 1.0, 3.0, math.inf])
    start, mass = np.array([0.0, 0.1, 0.5, 0.7]), np.array([0.1, 0.4, 0.2, 0.3])
    rng = np.random.default_rng(8)
    k = np.r_[rng.integers(0, 4, size=4996), 0, 1, 2, 3]
    p = np.r_[start[k[:-4]] + rng.random(k.size - 4) * mass[k[:-4]], start]
    for q, b, floor in [
        (0.3, 1.0, 2.0**-53),
        (-40.0, 0.7, 2.0**-53),
        (2.5, 2.0, 0.0),
        (900.0, 1.0, 2.0**-53),
    ]:
        c = np.clip(q, lo, hi)
        with np.errstate(divide="ignore"):
            table = _piece_table(c, b, lo, hi, start, mass)
            by_piece = _piece_quantile_in_place(p.copy(), k, table, b, floor)
            per_point = _quantile_in_place(
                (p - start[k]) / mass[k], c[k], b, lo[k], hi[k], floor=floor
            )
        assert np.allclose(by_piece, per_point, rtol=1e-12, atol=1e-12)
        assert np.all((by_piece >= lo[k]) & (by_piece <= hi[k]))


def test_bad_inputs():
    mech = dpbook.Truncated(1.0, lower=0.0, upper=1.0)
    for method in (
        mech.bias,
        mech.mean,
        mech.variance,
        mech.mse,
        mech.mass_kept,
        mech.log_mass_kept,
    ):
        with pytest.raises(ValueError, match="q"):
            method(np.nan)
    with pytest.raises(ValueError, match="size"):
        mech.sample(0.5, size=-1)
    with pytest.raises(ValueError, match="x"):
        mech.cdf(np.nan, 0.5)
    with pytest.raises(ValueError, match="p"):
        mech.ppf(1.5, 0.5)
    with pytest.raises(ValueError, match="scale"):
        dpbook.Truncated(0.0).mean(0.0)
