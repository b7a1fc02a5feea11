"""BIT (Liu Def. 2(b); McGlinchey–Mason (4), (5)): every closed form against its defining integral."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from interval_cases import close, setups
from scipy import integrate, stats

import dpbook


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


def laplace_mass(q, b, lo, hi):
    """P(lo <= q + L_b <= hi) by quadrature, without underflow where it is representable."""
    dist = max(lo - q, q - hi, 0.0)
    g = lambda x: math.exp(-(abs(x - q) - dist) / b) / (2 * b)  # noqa: E731
    return pieces(g, lo, hi, q, b) * math.exp(-dist / b)


def reference(b, lo, hi, q, m0):
    """Moments of clip(q + L_b, lo, hi) by quadrature: two atoms plus the Laplace density in between."""
    p_lo = laplace_mass(q, b, -math.inf, lo) if math.isfinite(lo) else 0.0
    p_hi = laplace_mass(q, b, hi, math.inf) if math.isfinite(hi) else 0.0
    dist = max(lo - q, q - hi, 0.0)
    g = lambda x: math.exp(-(abs(x - q) - dist) / b) / (2 * b)  # noqa: E731
    scale = math.exp(-dist / b)

    def mom(h):
        atoms = (h(lo) * p_lo if p_lo else 0.0) + (h(hi) * p_hi if p_hi else 0.0)
        return atoms + scale * pieces(lambda x: h(x) * g(x), lo, hi, q, b)

    return {
        "p_lo": p_lo,
        "p_hi": p_hi,
        "bias": mom(lambda x: x - q),
        "abs": mom(lambda x: abs(x - q)),
        "mse": mom(lambda x: (x - q) ** 2),
        "var": mom(lambda x: (x - m0) ** 2) - mom(lambda x: x - m0) ** 2,
        "cdf": lambda x: p_lo + laplace_mass(q, b, lo, x),
    }


@settings(max_examples=60, deadline=None)
@given(setups())
def test_closed_forms_against_quadrature(setup):
    b, lo, hi, q = setup
    mech = dpbook.BIT(b, lower=lo, upper=hi)
    m0 = mech.mean(q)
    ref = reference(b, lo, hi, q, m0)
    p_lo, p_hi = (mech.pmf(mech.lower, q), mech.pmf(mech.upper, q))
    close(p_lo, ref["p_lo"], atol=1e-300)
    close(p_hi, ref["p_hi"], atol=1e-300)
    close(mech.bias(q), ref["bias"], atol=1e-12 * ref["abs"])
    close(m0, q + ref["bias"], atol=1e-12 * (abs(q) + ref["abs"]))
    close(mech.mse(q), ref["mse"])
    close(
        mech.variance(q), ref["var"], atol=1e-12 * ref["mse"] * (lo <= q <= hi) + 1e-300
    )
    for x in np.linspace(max(lo, m0 - 5 * b), min(hi, m0 + 5 * b), 4)[1:-1]:
        close(mech.cdf(x, q), ref["cdf"](x), atol=1e-13)


@pytest.mark.parametrize("q", [0.0, 0.3, 5.0, 100.0, 700.0])
def test_mcglinchey_mason_eq_5(q):
    b = 1.7
    mech = dpbook.BIT(b)
    assert math.isclose(mech.mean(q), q + b / 2 * math.exp(-q / b), rel_tol=1e-14)
    assert math.isclose(mech.bias(q), b / 2 * math.exp(-q / b), rel_tol=1e-13)


def test_liu_closed_forms_inside():
    b, lo, hi = 0.7, -1.0, 2.5
    q = np.linspace(lo, hi, 9)
    a, c = q - lo, hi - q
    ea, eb = np.exp(-a / b), np.exp(-c / b)
    mech = dpbook.BIT(b, lower=lo, upper=hi)
    assert np.allclose(mech.bias(q), b / 2 * (ea - eb), rtol=1e-13, atol=1e-16)
    assert np.allclose(
        mech.mse(q), 2 * b**2 - b * (a + b) * ea - b * (c + b) * eb, rtol=1e-12
    )
    p_lo, p_hi = (mech.pmf(mech.lower, q), mech.pmf(mech.upper, q))
    assert np.allclose(p_lo, ea / 2, rtol=1e-14) and np.allclose(
        p_hi, eb / 2, rtol=1e-14
    )


def test_outside_one_mass_exceeds_half():
    mech = dpbook.BIT(1.0, lower=-1.0, upper=2.0)
    p_lo, p_hi = (
        mech.pmf(mech.lower, np.array([-1.5, -800.0, 2.5, 900.0])),
        mech.pmf(mech.upper, np.array([-1.5, -800.0, 2.5, 900.0])),
    )
    assert np.all(p_lo[:2] > 0.5) and np.all(p_hi[2:] > 0.5)
    assert p_lo[1] == 1.0 and p_hi[1] == 0.0
    assert mech.bias(-800.0) >= 799 and mech.variance(-800.0) >= 0


def test_atoms_cdf_and_logpdf_make_one_law():
    for lo, hi, q in [
        (0.0, math.inf, -2.0),
        (-1.0, 3.0, 0.5),
        (-math.inf, 2.0, 9.0),
        (-1.0, 3.0, 40.0),
    ]:
        mech = dpbook.BIT(0.9, lower=lo, upper=hi)
        dens = lambda x: math.exp(mech.logpdf(x, q))  # noqa: E731
        atoms = mech.atoms(q)
        assert [x for x, _ in atoms] == [x for x in (lo, hi) if math.isfinite(x)]
        total = sum(p for _, p in atoms) + pieces(dens, lo, hi, q, 0.9)
        assert math.isclose(total, 1.0, rel_tol=1e-11)
        assert mech.cdf(lo - 1, q) == 0.0 and mech.cdf(hi, q) == 1.0
        if math.isfinite(lo):
            assert math.isclose(mech.cdf(lo, q), atoms[0][1], rel_tol=1e-14)
    mech = dpbook.BIT(1.0, lower=0.0, upper=1.0)
    assert mech.logpdf(-0.1, 0.5) == -np.inf and mech.logpdf(1.1, 0.5) == -np.inf


GRID = [
    (1.0, 0.0, math.inf, 0.0),
    (1.0, 0.0, math.inf, 2.0),
    (1.0, 0.0, math.inf, -1.0),
    (2.0, -1.0, 1.0, 0.3),
    (0.5, -1.0, 1.0, -1.5),
    (3.0, -math.inf, 0.0, 1.0),
    (1.0, -math.inf, 0.0, -0.5),
    (1.0, -0.2, 0.3, 0.0),
]


@pytest.mark.parametrize("b, lo, hi, q", GRID)
def test_sampler_atoms_continuous_part_and_mean(b, lo, hi, q):
    mech = dpbook.BIT(b, lower=lo, upper=hi)
    n = 20000
    x = mech.sample(q, size=n, rng=np.random.default_rng(11))
    assert np.all((x >= lo) & (x <= hi))
    p_lo, p_hi = (mech.pmf(mech.lower, q), mech.pmf(mech.upper, q))
    at_lo, at_hi = np.sum(x == lo), np.sum(x == hi)
    inner = x[(x > lo) & (x < hi)]
    # exact chi-square on (atom at lo, atom at hi, continuous part)
    probs = np.array([p_lo, p_hi, 1 - p_lo - p_hi])
    counts = np.array([at_lo, at_hi, inner.size])
    keep = probs > 0
    assert counts[~keep].sum() == 0
    if keep.sum() > 1:
        assert stats.chisquare(counts[keep], n * probs[keep]).pvalue > 1e-3
    # KS on the continuous part against the conditional law it must follow
    f_lo = mech.cdf(lo, q) if math.isfinite(lo) else 0.0
    cond = lambda t: (np.asarray(mech.cdf(t, q)) - f_lo) / (1 - p_lo - p_hi)  # noqa: E731
    assert (
        stats.kstest(
            inner,
            lambda t: np.clip(np.where(t >= hi, 1.0, cond(np.minimum(t, hi))), 0, 1),
        ).pvalue
        > 1e-3
    )
    se = math.sqrt(mech.variance(q) / n)
    assert abs(x.mean() - mech.mean(q)) < 5 * se


def test_sampler_far_outside_and_shapes():
    mech = dpbook.BIT(1.0, lower=-1.0, upper=2.0)
    assert np.all(mech.sample(-700.0, size=1000, rng=np.random.default_rng(0)) == -1.0)
    q = np.array([-3.0, 0.0, 4.0])
    x = mech.sample(q, size=(4000, 3), rng=np.random.default_rng(3))
    assert x.shape == (4000, 3)
    assert np.all(
        np.abs(x.mean(axis=0) - mech.mean(q)) < 5 * np.sqrt(mech.variance(q) / 4000)
    )
    assert isinstance(mech.sample(0.5, rng=np.random.default_rng(0)), float)


def test_bad_inputs():
    mech = dpbook.BIT(1.0, lower=0.0, upper=1.0)
    for method in (
        mech.bias,
        mech.mean,
        mech.variance,
        mech.mse,
        lambda q: mech.pmf(0.0, q),
        mech.at,
    ):
        with pytest.raises(ValueError, match="q"):
            method(np.nan)
    with pytest.raises(ValueError, match="size"):
        mech.sample(0.5, size=-1)
    with pytest.raises(ValueError, match="x"):
        mech.cdf(np.nan, 0.5)
    with pytest.raises(ValueError, match="scale"):
        dpbook.BIT(-1.0).bias(0.0)


def test_bit_log_tails_exact_and_atoms():
    """``logcdf``/``logsf`` in log space: the Laplace log-tail ``-d/b + log(1/2)`` 1e5 scales out (``log(cdf)``
    is ``-inf`` there), the atoms at the bounds counted right, and equal to ``log(cdf)``/``log(sf)`` where those
    do not underflow."""
    half = math.log(0.5)
    mech = dpbook.BIT(1e-5, lower=0.0)
    assert math.isclose(mech.logcdf(2.0, 3.0), half - 1e5, rel_tol=1e-12)
    assert math.isclose(mech.logsf(4.0, 3.0), half - 1e5, rel_tol=1e-12)
    box = dpbook.BIT(1e-5, lower=0.0, upper=1.0)
    assert math.isclose(
        box.logcdf(0.0, 3.0), half - 3e5, rel_tol=1e-12
    )  # the atom at lower
    assert math.isclose(
        box.logsf(0.0, -3.0), half - 3e5, rel_tol=1e-12
    )  # log P(M > lower): atom excluded
    assert math.isclose(box.logsf(0.5, -3.0), half - 3.5e5, rel_tol=1e-12)
    assert (
        box.logcdf(1.0, -3.0) == 0.0 and box.logsf(1.0, 5.0) == -math.inf
    )  # the atom at upper
    assert box.logcdf(-1e-300, 0.5) == -math.inf and box.logsf(-1e-300, 3.0) == 0.0
    unit = dpbook.BIT(1.0, lower=0.0, upper=2.0)
    xs = np.linspace(-1.0, 3.0, 41)
    for q in (-2.0, 0.0, 0.7, 2.0, 4.0):
        with np.errstate(divide="ignore"):
            for log_fn, fn in ((unit.logcdf, unit.cdf), (unit.logsf, unit.sf)):
                want = np.log(fn(xs, q))
                got = log_fn(xs, q)
                assert np.array_equal(np.isinf(got), np.isinf(want)), (q, got, want)
                ok = np.isfinite(want)
                assert np.allclose(got[ok], want[ok], rtol=1e-12, atol=1e-15), (
                    q,
                    got,
                    want,
                )
    assert unit.logcdf(0.0, 1.0) == pytest.approx(-1.0 + half, rel=1e-14)
    assert unit.logsf(0.0, 1.0) == pytest.approx(
        math.log1p(-0.5 * math.exp(-1.0)), rel=1e-14
    )
