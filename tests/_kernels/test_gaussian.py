"""The normal law's partial moments in log space (dpbook/_kernels/gaussian.py) against quadrature."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from dpbook._kernels import gaussian as g


def _quad_k(k, t):
    """``K_k(t) = ∫_0^∞ u^k e^{-tu - u²/2} du`` by quadrature, in the variable ``v = u max(t, 1)``."""
    s = max(t, 1.0)
    f = lambda v: (v / s) ** k * math.exp(-t * v / s - 0.5 * (v / s) ** 2) / s  # noqa: E731
    return integrate.quad(f, 0, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]


def _quad_i(k, d, w):
    """``I_k(d, w) = ∫_0^w s^k e^{-ds - s²/2} ds`` by quadrature."""
    s = max(d, 1.0)
    f = lambda v: (v / s) ** k * math.exp(-d * v / s - 0.5 * (v / s) ** 2) / s  # noqa: E731
    top = min(w * s, 700.0)  # beyond, e^{-700} of the total
    cuts = [0.0] + [c for c in (1.0, 5.0, 20.0, 60.0, 200.0) if c < top] + [top]
    return sum(
        integrate.quad(f, x, y, epsabs=0, epsrel=1e-13, limit=200)[0]
        for x, y in zip(cuts, cuts[1:])
    )


@pytest.mark.parametrize("t", [0.0, 1e-8, 0.3, 0.999, 1.0, 1.5, 3.0, 10.0, 30.0, 1e3])
def test_partial_moments_against_quadrature(t):
    logs = g._log_k012(np.array(t))
    for k in range(3):
        assert math.isclose(math.exp(float(logs[k])), _quad_k(k, t), rel_tol=5e-14), (
            k,
            t,
        )


@pytest.mark.parametrize("t", [1e6, 1e100, 1e300])
def test_partial_moments_far_out_are_their_asymptotics(t):
    """``K_k(t) = k!/t^{k+1} (1 + O(t^-2))``: the logarithms stay finite where the values underflow."""
    logs = g._log_k012(np.array(t))
    for k in range(3):
        ref = math.log(math.factorial(k)) - (k + 1) * math.log(t)
        assert math.isclose(float(logs[k]), ref, rel_tol=1e-14, abs_tol=1e-11)


def test_piece_moments_against_quadrature():
    """``I_k(d, w)`` over random ``d`` (0 or up to 1e3) and widths from 1e-4 (short pieces) to 100 and ∞."""
    rng = np.random.default_rng(20)
    d = np.where(rng.random(200) < 0.2, 0.0, 10 ** rng.uniform(-3, 3, 200))
    w = 10 ** rng.uniform(-4, 2, 200)
    w[::10] = np.inf
    logs = g._log_i012(d, w)
    assert np.allclose(g._log_i0(d, w), logs[0], rtol=0, atol=2e-15)
    for i in range(d.size):
        for k in range(3):
            top = w[i] if np.isfinite(w[i]) else 200.0 / max(d[i], 1.0)
            ref = _quad_i(k, d[i], top)
            got = math.exp(float(logs[k][i]))
            assert math.isclose(got, ref, rel_tol=5e-14), (k, d[i], w[i], got, ref)


def test_short_and_far_pieces_keep_their_digits():
    """Widths of 1e-300 (``I_k = w^{k+1}/(k+1)``) and ``d`` of 1e300 (``I_k = k!/d^{k+1}``), in log space."""
    logs = g._log_i012(np.array([5.0, 0.0]), np.array([1e-300, 1e-300]))
    for k in range(3):
        ref = (k + 1) * math.log(1e-300) - math.log(k + 1)
        assert np.allclose(logs[k], ref, rtol=1e-15)
    logs = g._log_i012(np.array(1e300), np.array(1.0))
    for k in range(3):
        ref = math.log(math.factorial(k)) - (k + 1) * math.log(1e300)
        assert math.isclose(float(logs[k]), ref, rel_tol=1e-15)


def test_normal_mass_against_log_ndtr_and_short_pieces():
    rng = np.random.default_rng(21)
    a = rng.normal(0, 5, 300)
    b = a + 10 ** rng.uniform(-3, 1.5, 300)
    got = g._log_normal_mass(a, b)[0]
    # where the difference of Φ keeps its digits (a piece not far in a tail)
    ok = (np.abs(a) < 3) & (b - a > 0.1)
    plain = np.log(special.ndtr(b[ok]) - special.ndtr(a[ok]))
    assert ok.sum() > 20 and np.allclose(got[ok], plain, rtol=0, atol=1e-13)
    # far tails: by quadrature of the density scaled at the near end
    for x, y in [(40.0, 40.5), (-60.0, -59.0), (1e3, np.inf), (-np.inf, -1e3)]:
        e = x if x >= 0 else -y
        f = lambda t: math.exp(-0.5 * (t * t - e * e))  # noqa: E731
        z = integrate.quad(f, x, y, epsabs=0, epsrel=1e-13)[0]
        ref = math.log(z) - 0.5 * e * e - 0.5 * math.log(2 * math.pi)
        assert math.isclose(float(g._log_normal_mass(x, y)[0]), ref, rel_tol=1e-13)
    # a piece of width 3e-300 next to 0: its mass is the width times the density φ(0)
    ref = math.log(3e-300) - 0.5 * math.log(2 * math.pi)
    assert math.isclose(
        float(g._log_normal_mass(1e-300, 4e-300)[0]), ref, rel_tol=1e-13
    )
    assert math.isclose(
        float(g._log_normal_mass(-4e-300, -1e-300)[0]), ref, rel_tol=1e-13
    )


# --- the exact samplers ----------------------------------------------------------------------------------


def _frame_cdf(d, a, b):
    """The cdf of ``T`` with density ``∝ e^{-dt - t²/2}`` on ``[-a, b]`` (``Z - d`` given ``d - a <= Z <= d + b``)."""
    lo, hi = (
        special.ndtr(a - d),
        special.ndtr(-d - b),
    )  # upper tails: no rounding to 1 far right
    return lambda t: (lo - special.ndtr(-d - np.clip(t, -a, b))) / (lo - hi)


def _ks(x, cdf):
    from scipy import stats

    return stats.kstest(x, cdf).pvalue


@pytest.mark.parametrize("d, a, b", [(0.0, 0.5, 1.5), (0.0, 2.0, 0.1), (0.8, 0.0, 1.0)])
def test_uniform_proposals_with_every_acceptance_decided_by_a_fresh_uniform(
    monkeypatch, d, a, b
):
    """The 11-bit look-up only decides early what ``V <= e^{-h}`` decides: with the tables made useless (no
    proposal sure), every proposal goes to the fresh uniform, and the law is the same; and as shipped."""
    rate = math.exp(float(g._log_mass(d, -a, b)[()])) / (a + b)
    cdf = _frame_cdf(d, a, b)
    shipped = g._uniform_frame_draws(
        np.random.default_rng(30), 50_000, d, a, b, rate, 0.0, 1.0, -a, b
    )
    assert _ks(shipped, cdf) > 1e-4
    monkeypatch.setattr(g, "_SURE_KEEP", np.full(g._CELLS, -1.0))
    monkeypatch.setattr(g, "_SURE_DROP", np.full(g._CELLS, np.inf))
    slow = g._uniform_frame_draws(
        np.random.default_rng(31), 50_000, d, a, b, rate, 0.0, 1.0, -a, b
    )
    assert _ks(slow, cdf) > 1e-4
    assert slow.min() >= -a and slow.max() <= b


@pytest.mark.parametrize("d, a, b", [(0.0, 0.5, 1.5), (0.8, 0.0, 1.0)])
def test_uniform_proposals_with_two_spare_bits(monkeypatch, d, a, b):
    """With 2 spare bits (4 cells) a quarter of the proposals is decided by the fresh uniform: the law is the
    same, so that path is checked at a scale where a wrong cell or offset shows."""
    cells = 4
    monkeypatch.setattr(g, "_SPARE_BITS", 2)
    monkeypatch.setattr(g, "_CELLS", cells)
    monkeypatch.setattr(
        g, "_SURE_KEEP", np.log(cells / np.arange(1.0, cells + 1.0)) * (1 - 1e-14)
    )
    with np.errstate(divide="ignore"):
        drop = np.log(cells / np.arange(0.0, cells)) * (1 + 1e-14)
    monkeypatch.setattr(g, "_SURE_DROP", drop)
    rate = math.exp(float(g._log_mass(d, -a, b)[()])) / (a + b)
    x = g._uniform_frame_draws(
        np.random.default_rng(38), 100_000, d, a, b, rate, 0.0, 1.0, -a, b
    )
    assert x.min() >= -a and x.max() <= b
    assert _ks(x, _frame_cdf(d, a, b)) > 1e-4


def test_acceptance_tables_bracket_the_uniform_cells():
    """``k`` kept surely iff ``(k + 1)/2^11 <= e^{-h}``, dropped surely iff ``k/2^11 >= e^{-h}``, with margin."""
    k = np.arange(g._CELLS)
    assert np.all(np.exp(-g._SURE_KEEP) >= (k + 1) / g._CELLS * (1 - 1e-13))
    assert np.all(np.exp(-g._SURE_KEEP) <= (k + 1) / g._CELLS * (1 + 1e-12))
    with np.errstate(divide="ignore"):
        assert np.all(np.exp(-g._SURE_DROP) <= k / g._CELLS * (1 + 1e-13))
    assert np.all(g._SURE_KEEP < g._SURE_DROP)


def test_flat_range_takes_the_proposals_and_the_next_does_not():
    """Where ``h <= 2^-54`` on the range, the uniform law itself (one uniform a draw, the test skipped); just
    above, the 11-bit test runs (other draws from the same seed)."""
    hi = 5.0 + 1e-9
    x = g._uniform_frame_draws(
        np.random.default_rng(32), 1000, 0.0, 0.0, hi - 5.0, 1.0, 5.0, 1.0, 5.0, hi
    )
    ref = 5.0 + np.random.default_rng(32).random(1000) * (hi - 5.0)
    assert np.array_equal(x, np.clip(ref, 5.0, hi))
    # h = w²/2 just above 2^-54: the words' top 53 bits are numpy's uniforms, but the cell k = 2^11 - 1 (not
    # surely kept when h > 0) draws a fresh uniform, which shifts the stream
    w = 2.0**-26.5
    y = g._uniform_frame_draws(
        np.random.default_rng(32), 20_000, 0.0, 0.0, w, 1.0, 0.0, 1.0, 0.0, w
    )
    assert not np.array_equal(y, np.random.default_rng(32).random(20_000) * w)
    # a range whose width in units of σ underflows: still uniform on it
    z = g._uniform_frame_draws(
        np.random.default_rng(33), 20_000, 0.0, 0.0, 0.0, 1.0, 0.0, 1e150, 0.0, 1e-300
    )
    assert _ks(z / 1e-300, "uniform") > 1e-4


@pytest.mark.parametrize("p", [1 / 512, 0.3, 0.5 + 1 / 512])
def test_coins_including_the_tie_byte(p):
    """Frequencies within 5 standard errors; at ``p = 1/512`` every true coin comes from the tie byte 0."""
    n = 10**6
    c = g._coins(np.random.default_rng(33), n, p)
    assert c.shape == (n,) and c.dtype == bool
    assert abs(c.mean() - p) <= 5 * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("a", [0.0, 0.3, 1.5])
def test_reflected_normals_in_small_blocks(monkeypatch, a):
    """``T >= -a`` from one normal a draw, reflected or redrawn below the cut; blocks of 14 normals (and
    rounds of 7 inner proposals)."""
    monkeypatch.setattr(g, "_REFLECT_BLOCK", 14)
    monkeypatch.setattr(g, "_PROPOSALS", 7)
    x = g._normal_reflected(np.random.default_rng(34), 30_000, a, 0.0, 1.0, -a, np.inf)
    assert x.min() >= -a and _ks(x, _frame_cdf(0.0, a, np.inf)) > 1e-4
    # mirrored and scaled: 2 - 3T <= 2 + 3a
    y = g._normal_reflected(
        np.random.default_rng(35), 30_000, a, 2.0, -3.0, -np.inf, 2.0 + 3 * a
    )
    assert y.max() <= 2.0 + 3 * a
    assert _ks((2.0 - y) / 3.0, _frame_cdf(0.0, a, np.inf)) > 1e-4


@pytest.mark.parametrize("a", [0.3, 1.5])
def test_reflected_normals_with_a_pool_topped_up(monkeypatch, a):
    """A pool of inner draws (``T`` given ``|T| <= a``) that runs short at every block is topped up in order: the
    law is the same."""
    inner = g._inner_normals
    sizes = []

    def few(rng, size, a):
        sizes.append(size)
        return inner(rng, 3, a)

    monkeypatch.setattr(g, "_REFLECT_BLOCK", 64)
    monkeypatch.setattr(g, "_REFLECT_POOL", 50)
    monkeypatch.setattr(g, "_inner_normals", few)
    x = g._normal_reflected(np.random.default_rng(38), 30_000, a, 0.0, 1.0, -a, np.inf)
    # topped up, again and again, 50 at most asked
    assert len(sizes) > 100 and max(sizes) == 50
    assert x.min() >= -a and _ks(x, _frame_cdf(0.0, a, np.inf)) > 1e-4
    inner_draws = inner(np.random.default_rng(39), 20_000, a)
    assert np.abs(inner_draws).max() <= a
    cdf = lambda t: (special.ndtr(t) - special.ndtr(-a)) / (1 - 2 * special.ndtr(-a))  # noqa: E731
    assert _ks(inner_draws, cdf) > 1e-4


@pytest.mark.parametrize("low, high", [(-0.5, 1.0), (-np.inf, 0.3), (-1.0, np.inf)])
def test_normals_kept_between_in_small_rounds(monkeypatch, low, high):
    monkeypatch.setattr(g, "_PROPOSALS", 7)
    keep = float(special.ndtr(high) - special.ndtr(low))
    x = g._normal_between(
        np.random.default_rng(36), 20_000, low, high, 1.0, 0.0, keep, low, high
    )
    assert x.min() >= low and x.max() <= high
    cdf = lambda t: (special.ndtr(np.clip(t, low, high)) - special.ndtr(low)) / keep  # noqa: E731
    assert _ks(x, cdf) > 1e-4


@pytest.mark.parametrize("cut, top", [(0.5, 0.7), (-0.4, 2.0), (30.0, 0.01)])
def test_robert_proposals_bounded_above(cut, top):
    """Robert's exponential proposals rejected beyond ``cut + top``: the excess of ``N`` in ``[cut, cut + top]``."""
    x = g._normal_tail_excess(np.random.default_rng(37), 20_000, cut, top, 0.5)
    assert x.min() >= 0.0 and x.max() <= top
    d, a = (cut, 0.0) if cut > 0 else (0.0, -cut)
    # the excess is T + a in the frame of the cut
    assert _ks(x - a, _frame_cdf(d, a, top - a)) > 1e-4
