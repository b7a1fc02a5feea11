"""Gaussian, GaussianBIT, GaussianTruncated (dpbook/families/gaussian.py): every closed form against quadrature,
the samplers by χ², the privacy descriptions against brute force."""

import math
import warnings

import numpy as np
import pytest
from goodness import chi2_pvalue as chi2_test
from scipy import integrate, special, stats

import dpbook
from dpbook import Gaussian, GaussianBIT, GaussianTruncated

SQRT2PI = math.sqrt(2 * math.pi)


def silent(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def _integral(f, lo, hi, marks):
    """``∫_lo^hi f`` by quad, split at the marks inside."""
    cuts = [lo] + sorted(m for m in set(marks) if lo < m < hi) + [hi]
    return sum(
        integrate.quad(f, x, y, epsabs=0, epsrel=1e-13, limit=400)[0]
        for x, y in zip(cuts, cuts[1:])
    )


def reference(s, lo, hi, q):
    """Moments of clamping and of truncation by quadrature of the normal density over ``[lo, hi]``, scaled by
    ``e^{d²/2}`` (``d`` the distance from ``q`` to the range in units of ``σ``) so that nothing underflows;
    offsets are taken about ``c = clip(q)``."""
    c = min(max(q, lo), hi)
    d2 = ((q - c) / s) ** 2
    g = lambda x: math.exp(-0.5 * (((x - q) / s) ** 2 - d2))  # noqa: E731  (<= 1 on the range)
    marks = [c + k * s for k in (-60, -8, -2, 0, 2, 8, 60)] + [q]
    mom = lambda h: _integral(lambda x: h(x) * g(x), lo, hi, marks)  # noqa: E731
    z = mom(lambda x: 1.0)
    # the atoms of clamping, scaled alike: Φ(α) e^{d²/2}, Φ̄(β) e^{d²/2}
    atom_lo = math.exp(special.log_ndtr((lo - q) / s) + 0.5 * d2) if lo > -np.inf else 0
    atom_hi = math.exp(special.log_ndtr((q - hi) / s) + 0.5 * d2) if hi < np.inf else 0
    dens = s * SQRT2PI
    scale = math.exp(-0.5 * d2)

    def bit(h):
        inner = mom(h) / dens
        ends = (h(lo) * atom_lo if atom_lo else 0.0) + (
            h(hi) * atom_hi if atom_hi else 0.0
        )
        return (inner + ends) * scale

    bit_offset = bit(lambda x: x - c)
    bit_second = bit(lambda x: (x - c) ** 2)
    t_offset = mom(lambda x: x - c) / z
    t_second = mom(lambda x: (x - c) ** 2) / z
    return {
        "c": c,
        "bit_offset": bit_offset,
        "bit_var": bit_second - bit_offset**2,
        "bit_mse": bit((lambda x: (x - q) ** 2)) if c == q else None,
        "t_offset": t_offset,
        "t_var": t_second - t_offset**2,
        "log_mass": math.log(z / dens) - 0.5 * d2,
        "cdf": lambda x: _integral(g, lo, x, marks) / z,
        "sf": lambda x: _integral(g, x, hi, marks) / z,
        "log_g": lambda x: math.log(g(x)) - math.log(z),
    }


def _random_setups(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        s = 10 ** rng.uniform(-1.3, 1.3)
        kind = rng.integers(3)
        lo = 0.0 if kind != 2 else -np.inf
        hi = lo + 10 ** rng.uniform(-2, 1.3) * s if kind == 0 else np.inf
        if kind == 2:
            hi = 1.0
        c = rng.choice([lo, hi]) if rng.random() < 0.5 else None
        if c is None or not np.isfinite(c):
            c = (lo if np.isfinite(lo) else hi) + (
                0.3 * s if np.isfinite(lo) else -0.3 * s
            )
            q = float(np.clip(c + rng.normal() * s, lo, hi))
        else:
            side = -1.0 if c == lo else 1.0
            q = float(c + side * rng.uniform(0.01, 35) * s)
        yield s, lo, hi, q


SETUPS = list(_random_setups(40, 7))


@pytest.mark.parametrize("setup", SETUPS, ids=[f"{i}" for i in range(len(SETUPS))])
def test_closed_forms_against_quadrature(setup):
    s, lo, hi, q = setup
    ref = reference(s, lo, hi, q)
    c = ref["c"]
    bit, tr = (
        GaussianBIT(s, lower=lo, upper=hi),
        GaussianTruncated(s, lower=lo, upper=hi),
    )
    tol = 1e-11 * s
    # clamping: the mean about c (the offset), the variance and, inside, the MSE
    assert math.isclose(
        silent(bit.mean, q) - c, ref["bit_offset"], rel_tol=1e-11, abs_tol=1e-300
    ) or (
        abs(silent(bit.mean, q) - c - ref["bit_offset"]) <= tol * 1e-3 + 4 * math.ulp(c)
    )
    assert math.isclose(
        silent(bit.variance, q), ref["bit_var"], rel_tol=1e-10, abs_tol=1e-300
    )
    assert math.isclose(
        bit.bias(q), (c - q) + ref["bit_offset"], rel_tol=1e-12, abs_tol=tol
    )
    if ref["bit_mse"] is not None:
        assert math.isclose(bit.mse(q), ref["bit_mse"], rel_tol=1e-11)
    # truncation
    assert abs(silent(tr.mean, q) - c - ref["t_offset"]) <= 1e-11 * abs(
        ref["t_offset"]
    ) + 4 * math.ulp(c)
    assert math.isclose(silent(tr.variance, q), ref["t_var"], rel_tol=1e-10)
    assert math.isclose(
        silent(tr.log_mass_kept, q), ref["log_mass"], rel_tol=1e-12, abs_tol=1e-12
    )
    width = (hi - lo) if np.isfinite(hi - lo) else 6 * s
    start = lo if np.isfinite(lo) else hi - width
    for frac in (0.1, 0.5, 0.9):
        x = start + frac * width
        F = ref["cdf"](x)
        assert math.isclose(silent(tr.cdf, x, q), F, rel_tol=1e-11, abs_tol=1e-15)
        assert math.isclose(
            silent(tr.sf, x, q), ref["sf"](x), rel_tol=1e-11, abs_tol=1e-300
        )
        assert math.isclose(
            silent(tr.logpdf, x, q), ref["log_g"](x), rel_tol=1e-12, abs_tol=1e-12
        )
        if F > 1e-300:
            assert math.isclose(
                silent(tr.logcdf, x, q), math.log(F), rel_tol=1e-11, abs_tol=1e-12
            )
        # clamping's law is the normal's on the range
        assert math.isclose(
            bit.cdf(x, q), stats.norm.cdf(x, q, s), rel_tol=1e-14, abs_tol=1e-300
        )
    if np.isfinite(lo):
        assert math.isclose(bit.pmf(lo, q), stats.norm.cdf(lo, q, s), rel_tol=1e-14)


def test_gaussian_is_scipys_normal():
    m = Gaussian(1.7)
    x, q = np.linspace(-5, 5, 11), 0.4
    law = stats.norm(q, 1.7)
    assert np.allclose(m.cdf(x, q), law.cdf(x), rtol=1e-14)
    assert np.allclose(m.logsf(x, q), law.logsf(x), rtol=1e-14)
    assert np.allclose(m.logpdf(x, q), law.logpdf(x), rtol=1e-14)
    p = np.array([1e-300, 1e-10, 0.3, 0.5])
    assert np.allclose(m.ppf(p, q), law.ppf(p), rtol=1e-14)
    assert np.allclose(m.isf(p, q), law.isf(p), rtol=1e-14)
    assert m.bias(q) == 0.0 and m.variance(q) == 1.7**2 and m.max_abs_bias() == 0.0


def test_truncated_half_line_is_restricted_normal():
    """The one-sided truncation is :class:`dpbook.Restricted` with a normal base (another family's code)."""
    s = 1.3
    mine, other = (
        GaussianTruncated(s, lower=0.0),
        dpbook.Restricted(stats.norm(scale=s)),
    )
    for q in (-2.0, 0.0, 0.7, 4.0):
        assert math.isclose(mine.mean(q), other.mean(q), rel_tol=1e-11)
        assert math.isclose(mine.variance(q), other.variance(q), rel_tol=1e-10)
        x = np.array([0.1, 1.0, 3.0])
        assert np.allclose(mine.cdf(x, q), other.cdf(x, q), rtol=1e-11)


def test_extremes_reach_their_limits_without_warnings():
    # σ = 1e-300: clamping releases clip(q); far outside, truncation is an exponential of mean σ²/|q - c|
    for q in (0.25, -1e300, 1e300, -1e-299):
        m = GaussianBIT(1e-300, lower=0.0, upper=1.0)
        assert silent(m.mean, q) == min(max(q, 0.0), 1.0)
        assert silent(m.variance, q) <= 1e-600 + 1e-300  # (a value below the doubles)
    t = GaussianTruncated(1.0, lower=0.0, upper=1.0)
    assert math.isclose(silent(t.mean, -1e300), 1e-300, rel_tol=1e-12)
    assert math.isclose(silent(t.mean, 1e300), 1.0 - 1e-300, rel_tol=1e-15)
    assert math.isclose(silent(t.log_mass_kept, -1e150), -5e299, rel_tol=1e-12)
    # σ = 1e300 on [0, 1]: clamping is a fair coin on the bounds, truncation the uniform law
    b, t = (
        GaussianBIT(1e300, lower=0.0, upper=1.0),
        GaussianTruncated(1e300, lower=0.0, upper=1.0),
    )
    for q in (0.0, 0.5, 1e300):
        assert math.isclose(silent(t.mean, q), 0.5, rel_tol=1e-12)
        assert math.isclose(silent(t.variance, q), 1 / 12, rel_tol=1e-10)
    assert math.isclose(silent(b.mean, 0.5), 0.5) and math.isclose(
        silent(b.variance, 0.5), 0.25
    )
    # a width of 1e-300 at σ = 1: uniform
    t = GaussianTruncated(1.0, lower=0.0, upper=1e-300)
    assert math.isclose(silent(t.mean, 7.0), 5e-301, rel_tol=1e-9)
    assert math.isclose(silent(t.cdf, 2.5e-301, 7.0), 0.25, rel_tol=1e-9)
    # log tails stay finite where the probabilities underflow
    t = GaussianTruncated(1.0, lower=0.0, upper=np.inf)
    assert math.isclose(
        silent(t.logsf, 50.0, 0.0),
        special.log_ndtr(-50.0) - math.log(0.5),
        rel_tol=1e-13,
    )
    assert math.isclose(
        silent(t.logcdf, 1e-300, 0.0),
        math.log(2e-300) - 0.5 * math.log(2 * math.pi),
        rel_tol=1e-12,
    )
    b = GaussianBIT(1.0, lower=0.0, upper=100.0)
    assert math.isclose(
        silent(b.logsf, 60.0, 0.0), special.log_ndtr(-60.0), rel_tol=1e-14
    )
    assert silent(Gaussian(1e300).variance, 0.0) == math.inf  # σ² beyond the doubles


def test_bit_and_truncated_ppf_invert_their_cdfs():
    p = np.array([1e-300, 1e-12, 0.2, 0.5, 0.97, 1 - 1e-12])
    for m, q in (
        (GaussianBIT(1.0, lower=0.0, upper=2.0), 0.4),
        (GaussianTruncated(1.0, lower=0.0, upper=2.0), 0.4),
        (GaussianTruncated(0.5, lower=0.0, upper=np.inf), -3.0),
    ):
        x = np.asarray(m.ppf(p, q))
        assert np.all(np.asarray(m.cdf(x, q)) >= p * (1 - 1e-12))
        assert np.all(
            np.asarray(m.cdf(np.nextafter(x, -np.inf), q)) <= p * (1 + 1e-12) + 1e-300
        )
        y = np.asarray(m.isf(p, q))
        assert np.all(np.asarray(m.sf(y, q)) <= p * (1 + 1e-12) + 1e-300)


def test_stochastic_order_and_max_abs_bias():
    grid = np.linspace(0.0, 2.0, 201)
    for m in (
        GaussianBIT(0.7, lower=0.0, upper=2.0),
        GaussianTruncated(0.7, lower=0.0, upper=2.0),
    ):
        assert m.stochastic_order()[0]
        for x in (0.3, 1.0, 1.9):
            assert np.all(np.diff(m.cdf(x, grid)) <= 1e-15)
        assert math.isclose(
            m.max_abs_bias(), np.max(np.abs(m.bias(grid))), rel_tol=1e-12
        )
    assert math.isclose(
        GaussianBIT(2.0, lower=0.0).max_abs_bias(), 2.0 / SQRT2PI, rel_tol=1e-14
    )
    assert math.isclose(
        GaussianTruncated(2.0, lower=0.0).max_abs_bias(),
        2.0 * math.sqrt(2 / math.pi),
        rel_tol=1e-13,
    )


# --- the samplers --------------------------------------------------------------------------------------


def chi2_pvalue(m, q, draws):
    """The χ² p-value of the draws on 40 cells between the law's quantiles (tests/goodness.py)."""
    return chi2_test(m, q, draws, bins=40)[0]


SAMPLER_CASES = [
    (Gaussian(1.3), 0.2),
    (GaussianBIT(1.0, lower=0.0, upper=2.0), 0.5),
    (GaussianBIT(1.0, lower=0.0), -0.5),
    (
        GaussianTruncated(1.0, lower=0.0, upper=2.0),
        0.5,
    ),  # mass 0.53: the normal, kept in the range
    (
        GaussianTruncated(1.0, lower=0.0, upper=0.4),
        0.2,
    ),  # mass 0.16, inside: the uniform proposal
    (
        GaussianTruncated(1.0, lower=0.0, upper=3.0),
        -2.5,
    ),  # outside: Robert's exponential
    (
        GaussianTruncated(0.3, lower=0.0),
        -30.0,
    ),  # far outside: an exponential of mean σ²/30
    (GaussianTruncated(1.0, lower=-np.inf, upper=0.0), 4.0),  # outside above, mirrored
]


@pytest.mark.parametrize(
    "m, q",
    SAMPLER_CASES,
    ids=[f"{type(m).__name__}-{i}" for i, (m, _) in enumerate(SAMPLER_CASES)],
)
def test_sampler_goodness_of_fit(m, q):
    draws = silent(m.sample, q, 100_000, rng=np.random.default_rng([20, 9]))
    assert chi2_pvalue(m, q, draws) > 1e-6
    se = math.sqrt(m.variance(q) / draws.size)
    assert abs(draws.mean() - m.mean(q)) <= 5 * se, (draws.mean(), m.mean(q), se)


# one true value: the route of least expected cost (gaussian._one_value_draws), each by χ² against the law
ROUTE_CASES = [
    (GaussianTruncated(1.0, lower=0.0, upper=2.0), 0.5, "_uniform_frame_draws"),
    (GaussianTruncated(1.0, lower=0.0, upper=0.4), 0.2, "_uniform_frame_draws"),
    (GaussianTruncated(2.0, lower=0.0, upper=1.0), 3.0, "_uniform_frame_draws"),
    (GaussianTruncated(1.0, lower=-0.3, upper=3.0), 0.0, "_normal_between"),
    (GaussianTruncated(0.7, lower=0.0), 0.2, "_normal_reflected"),
    (GaussianTruncated(1.0, lower=0.0), 0.0, "_normal_reflected"),  # |Z|
    (GaussianTruncated(1.0, lower=-np.inf, upper=0.0), -0.3, "_normal_reflected"),
    (GaussianTruncated(1.0, lower=0.0, upper=3.0), -0.3, "_normal_tail_excess"),
    (GaussianTruncated(1.0, lower=0.0, upper=1.0), 40.0, "_normal_tail_excess"),
    (GaussianTruncated(0.7, lower=0.0), -2.0, "_normal_tail_excess"),
    # the strips where they apply (for 200,000 draws with _STRIP_MIN lowered; the cases above: switched off)
    (GaussianTruncated(1.0, lower=0.0, upper=2.0), 0.5, "_strip_draws"),
    (GaussianTruncated(0.7, lower=0.0), 0.2, "_strip_draws"),
    (GaussianTruncated(1.0, lower=-np.inf, upper=0.0), -0.3, "_strip_draws"),
    (GaussianTruncated(1.0, lower=0.0, upper=3.0), -0.3, "_strip_draws"),
    (GaussianTruncated(1.0, lower=0.0, upper=1.0), 7.5, "_strip_draws"),
    (GaussianTruncated(1e-3, lower=0.0, upper=1e-3), 0.0, "_strip_draws"),
]


@pytest.mark.parametrize(
    "m, q, route",
    ROUTE_CASES,
    ids=[f"{r}-{i}" for i, (_, _, r) in enumerate(ROUTE_CASES)],
)
def test_truncated_sampler_routes_for_one_true_value(monkeypatch, m, q, route):
    # the namespace the sampler reads (not an import of the module, which the doctest run may load twice)
    namespace = GaussianTruncated._sample.__globals__
    taken = []
    strips = namespace["_normal_strip_draws"].__globals__
    if route == "_strip_draws":
        namespace = strips
        monkeypatch.setitem(strips, "_STRIP_MIN", 2**10)
    else:  # the routes for fewer draws
        monkeypatch.setitem(strips, "_STRIP_MIN", 2**62)
    kernel = namespace[route]

    def spy(*args, **kwargs):
        taken.append(route)
        return kernel(*args, **kwargs)

    monkeypatch.setitem(namespace, route, spy)
    draws = silent(m.sample, q, 200_000, rng=np.random.default_rng([20, 10]))
    assert taken, f"not sampled by {route}"
    assert draws.min() >= m.lower and draws.max() <= m.upper
    assert chi2_pvalue(m, q, draws) > 1e-6
    se = math.sqrt(m.variance(q) / draws.size)
    assert abs(draws.mean() - m.mean(q)) <= 5 * se, (draws.mean(), m.mean(q), se)


def test_chi2_detects_a_wrong_truncated_sampler():
    m = GaussianTruncated(1.0, lower=0.0, upper=3.0)
    wrong = GaussianTruncated(1.03, lower=0.0, upper=3.0).sample(-2.5, 100_000, rng=1)
    assert chi2_pvalue(m, -2.5, wrong) < 1e-6


@pytest.mark.parametrize(
    "m, values",
    [
        # outside far (Robert), inside narrow (uniform), above far (Robert, mirrored), just outside (uniform),
        # outside with a fifth of Robert's proposals beyond the range (B(d + B/2) = 1.1)
        (
            GaussianTruncated(1.0, lower=0.0, upper=1.0),
            (-6.0, 0.5, 40.0, -0.2, 1.3, -0.6),
        ),
        # inside a wide range (numpy's normals), one-sided outside (Robert), flat (uniform)
        (GaussianTruncated(1.0, lower=0.0, upper=3.0), (1.5, 0.1, -2.0)),
        (GaussianTruncated(0.7, lower=0.0), (0.2, 3.0, -2.0)),
        (GaussianTruncated(1e20, lower=0.0, upper=1.0), (0.3, -1e21)),
    ],
)
def test_truncated_sampler_over_an_array_of_true_values(m, values):
    """A true value per draw: each value's draws by χ² against its own law, and the mean within 5 SE."""
    q = np.tile(values, 40_000)
    draws = silent(m.sample, q, rng=np.random.default_rng(3))
    assert draws.shape == q.shape and draws.min() >= m.lower and draws.max() <= m.upper
    for v in values:
        x = draws[q == v]
        assert chi2_pvalue(m, v, x) > 1e-6, v
        se = math.sqrt(m.variance(v) / x.size)
        assert abs(x.mean() - m.mean(v)) <= 5 * se + 1e-15, v


# --- privacy -------------------------------------------------------------------------------------------


def brute_force(m, delta, lo, hi, n=201, outputs=401):
    """``max over pairs |q1 - q2| <= Δ of a grid and outputs (a grid of the range, the atoms) of the log-ratio``:
    a lower bound of the loss."""
    qs = np.linspace(lo, hi, n)
    q1, q2 = np.meshgrid(qs, qs, indexing="ij")
    keep = (np.abs(q1 - q2) <= delta * (1 + 1e-12)) & (q1 != q2)
    q1, q2 = q1[keep], q2[keep]
    t = np.linspace(m.lower, m.upper, outputs)[:, None]
    dens = np.max(np.asarray(m.logpdf(t, q1)) - np.asarray(m.logpdf(t, q2)), axis=0)
    best = float(dens.max())
    for x in (m.lower, m.upper):
        if m.atoms(0.0):
            best = max(best, float(np.max(np.log(m.pmf(x, q1)) - np.log(m.pmf(x, q2)))))
    return best


def test_truncated_finite_loss_against_brute_force():
    m = GaussianTruncated(0.8, lower=0.0, upper=2.0)
    report = dpbook.privacy_report(m, 0.5)
    brute = brute_force(
        m, 0.5, 0.0, 2.0, n=121
    )  # the grid holds the worst pair, (1.5, 2)
    assert report.exact and math.isfinite(report.epsilon)
    assert brute <= report.epsilon <= brute + 1e-12, (report, brute)


def test_bit_finite_loss_is_the_atom_of_the_corner_pair():
    m = GaussianBIT(0.8, lower=0.0, upper=2.0)
    report = dpbook.privacy_report(m, 0.5)
    truth = special.log_ndtr(-1.5 / 0.8) - special.log_ndtr(-2.0 / 0.8)
    assert report.exact and math.isclose(report.epsilon, truth, rel_tol=1e-12), report
    assert brute_force(m, 0.5, 0.0, 2.0) <= report.epsilon * (1 + 1e-12)
    # a domain off the range's centre: the two corner pairs differ, and the larger one is the loss
    report = dpbook.privacy_report(m, 0.5, domain=(0.0, 1.2))
    lower = special.log_ndtr(-0.7 / 0.8) - special.log_ndtr(-1.2 / 0.8)  # (0.7, 1.2)
    upper = special.log_ndtr(-1.5 / 0.8) - special.log_ndtr(-2.0 / 0.8)  # (0.5, 0)
    assert upper > lower and math.isclose(report.epsilon, upper, rel_tol=1e-12), report


def test_infinite_losses():
    assert dpbook.privacy_loss(Gaussian(1.0), 1.0) == math.inf
    assert dpbook.privacy_loss(GaussianBIT(1.0, lower=0.0), 1.0) == math.inf
    assert dpbook.privacy_loss(GaussianTruncated(1.0, lower=0.0), 1.0) == math.inf
    # a finite range, but true values without bound: the atom's log-ratio grows like Δ(q - lower)/σ²
    m = GaussianBIT(1.0, lower=0.0, upper=2.0)
    assert dpbook.privacy_loss(m, 1.0, domain=(0.0, np.inf)) == math.inf
    assert math.isfinite(dpbook.privacy_loss(m, 1.0, domain=(0.0, 50.0)))


def test_truncation_with_true_values_without_bound_has_the_limit_loss():
    # q -> ±inf gathers the truncated law at an end of the range; the loss of (u, u ± Δ) increases to
    # (upper - lower) Δ/σ², the supremum over an unbounded domain, on either side
    m = GaussianTruncated(0.8, lower=0.0, upper=2.0)
    limit = 2.0 * 0.5 / 0.8**2
    # (pair losses are upper bounds: log N(u) ~ -u²/2σ² carries an absolute rounding of ~1e-16 u²/σ²)
    far = [dpbook.pair_loss(m, u, u + 0.5) for u in (1.0, 10.0, 100.0, 1e3)]
    near = [dpbook.pair_loss(m, -u, -u - 0.5) for u in (1.0, 10.0, 100.0, 1e3)]
    for losses in (far, near):
        assert all(a < b for a, b in zip(losses, losses[1:])) and losses[-1] < limit
        assert limit - losses[-1] < 1e-2
    for domain in ((0.0, np.inf), (-np.inf, 2.0), (-np.inf, np.inf)):
        assert math.isclose(
            dpbook.privacy_loss(m, 0.5, domain=domain), limit, rel_tol=1e-12
        ), domain
