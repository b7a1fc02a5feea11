"""The strips (``dpbook._kernels.strips``): many exact draws of the normal law on a range and of the Laplace law on
a union of ranges."""

import numpy as np
import pytest
from scipy import special, stats

import dpbook
from dpbook._kernels import strips as st


def _ks(x, cdf):
    return stats.kstest(x, cdf).pvalue


STRIP_RANGES = [
    (-0.5, 1.5),  # the mean inside, every strip flat
    (-0.5, np.inf),  # an open end: curved strips and Marsaglia's tail
    (0.0, np.inf),
    (-np.inf, 0.4),  # the open end on the left (mirrored strips)
    (-3.0, -1.0),  # all left of the mean
    (2.5, 3.0),
    (5.0, np.inf),  # right of the mean, far
    (-7.9, 8.0),  # curved strips on both sides
    (0.3, 0.3 + 1e-9),  # narrow: every strip flat and nearly every proposal sure
]


def _range_cdf(lo, hi):
    if lo >= 0:  # upper tails: no rounding to 1
        s_lo, s_hi = special.ndtr(-lo), special.ndtr(-hi)
        return lambda z: (s_lo - special.ndtr(-np.clip(z, lo, hi))) / (s_lo - s_hi)
    p_lo, p_hi = special.ndtr(lo), special.ndtr(hi)
    return lambda z: (special.ndtr(np.clip(z, lo, hi)) - p_lo) / (p_hi - p_lo)


@pytest.mark.parametrize("lo, hi", STRIP_RANGES)
def test_strips_draw_the_normal_law_on_the_range(lo, hi):
    """The kept proposals against the exact cdf (KS), within the range, and the envelope's rate as computed: the
    share of proposals kept, within 5 standard errors, counted by a spy on the decisions."""
    t = st._normal_strip_table(lo, hi)
    assert t is not None and 0.99 < t.rate <= 1.0
    assert np.all(t.gamma >= 0) and t.gamma.min() == 0.0
    x = st._strip_draws(np.random.default_rng(40), 200_000, t, 0.0, 1.0, lo, hi)
    assert x.shape == (200_000,) and x.min() >= lo and x.max() <= hi
    assert _ks(x, _range_cdf(lo, hi)) > 1e-4


@pytest.mark.parametrize("lo, hi", [(-0.5, 1.5), (-0.5, np.inf), (-7.9, 8.0)])
def test_strips_with_every_decision_by_a_fresh_uniform(monkeypatch, lo, hi):
    """``sure`` only decides early what ``V <= e^{-h}`` decides: with no proposal sure (and the 11-bit tables made
    useless) every proposal is decided by a fresh uniform, and the law is the same; scaled, shifted, mirrored and
    clipped to the range it maps to, in rounds of 7 proposals (so that the chunks and the refills of dropped
    places are many)."""
    t = st._normal_strip_table(lo, hi)
    slow = t._replace(sure=np.zeros_like(t.sure))
    monkeypatch.setattr(st, "_SURE_KEEP", np.full(st._CELLS, -1.0))
    monkeypatch.setattr(st, "_SURE_DROP", np.full(st._CELLS, np.inf))
    monkeypatch.setattr(st, "_PROPOSALS", 7)
    y = st._strip_draws(
        np.random.default_rng(41),
        30_000,
        slow,
        2.0,
        -3.0,
        2.0 - 3.0 * hi,
        2.0 - 3.0 * lo,
    )
    assert y.min() >= 2.0 - 3.0 * hi and y.max() <= 2.0 - 3.0 * lo
    assert _ks((2.0 - y) / 3.0, _range_cdf(lo, hi)) > 1e-4


def _strip_chi2(t, lo, hi, x):
    """χ² p-value of the draws ``x`` counted per strip of the table ``t`` against the strips' exact normal masses."""
    ends = np.sort(np.concatenate([t.near, t.near + t.width]))
    edges = np.unique(np.clip(ends, lo, hi))
    cdf = _range_cdf(lo, hi)
    expected = np.diff(cdf(edges)) * x.size
    counts = np.bincount(
        np.searchsorted(edges, x, side="right") - 1, minlength=edges.size
    )
    counts = counts[: edges.size - 1]
    keep = expected > 0
    stat = float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))
    return stats.chi2.sf(stat, int(keep.sum()) - 1)


@pytest.mark.parametrize("lo, hi", [(-0.5, np.inf), (-7.9, 8.0), (2.5, 3.0)])
def test_strips_hold_their_exact_masses(lo, hi):
    """Counted strip by strip (1,024 cells, curved and open ones included), a million draws match the strips'
    exact masses (χ²); a table whose curved strips are taken for flat ones (their envelopes' masses then wrong,
    the open one never kept) fails the same test."""
    t = st._normal_strip_table(lo, hi)
    x = st._strip_draws(np.random.default_rng(44), 10**6, t, 0.0, 1.0, lo, hi)
    assert _strip_chi2(t, lo, hi, x) > 1e-6
    if t.curved.any():
        wrong = t._replace(curved=np.zeros_like(t.curved))
        with np.errstate(invalid="ignore"):
            y = st._strip_draws(
                np.random.default_rng(44), 10**6, wrong, 0.0, 1.0, lo, hi
            )
        assert _strip_chi2(t, lo, hi, y) < 1e-6


def test_strip_tables_where_they_do_not_apply():
    """No table for a range with both ends beyond 8 standard deviations or an empty range; fewer than
    ``_STRIP_MIN`` draws do not take the route."""
    assert (
        st._normal_strip_table(9.0, 10.0) is None
        and st._normal_strip_table(-np.inf, -9.0) is None
    )
    assert st._normal_strip_table(1.0, 1.0) is None
    rng = np.random.default_rng(43)
    size = st._STRIP_MIN - 1
    assert st._normal_strip_draws(rng, size, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0) is None
    x = st._normal_strip_draws(rng, st._STRIP_MIN, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0)
    assert x.shape == (st._STRIP_MIN,)


# --- the Laplace law on a union of ranges ---------------------------------------------------------------------

LAPLACE_CASES = [
    (1.0, [(0.0, 1.0), (2.0, 4.0)], 1.5),  # q in the gap
    (1.0, [(0.0, 1.0), (2.0, 4.0)], 0.3),  # q inside a piece: two sides
    (
        0.7,
        [(0.0, np.inf)],
        0.2,
    ),  # an open end: the curved last strip from a fresh exponential
    (2.0, [(-np.inf, -1.0), (1.0, np.inf)], 0.0),  # two open ends
    (1.0, [(0.0, 1.0), (2.0, 4.0)], 9.0),  # q beyond the hull (the law at its end)
    (
        0.05,
        [(0.0, 1.0), (1.5, 1.5 + 1e-3), (3.0, 3.5)],
        1.4,
    ),  # a piece of tiny mass: one strip
    (
        1e300,
        [(0.0, 1.0), (2.0, 4.0)],
        0.5,
    ),  # flat to the doubles: masses proportional to lengths
    (1e-300, [(0.0, 1e-300), (3e-300, 5e-300)], 2e-300),
    (1.0, [(float(k), k + 0.5) for k in range(40)], 20.2),  # 40 pieces
]


@pytest.mark.parametrize("scale, allowed, q", LAPLACE_CASES)
def test_laplace_strips_draw_the_normalized_law(monkeypatch, scale, allowed, q):
    """Draws of ``Normalized`` by strips (2^17, with ``_STRIP_MIN`` lowered below) against its own exact cdf (KS)
    and within its pieces (no draw in a gap, not even by the rounding of a place)."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    m = dpbook.Normalized(scale, allowed)
    lo, hi = m._lo, m._hi
    at = float(np.clip(q, lo[0], hi[-1]))
    t = st._laplace_strip_table(at, float(scale), tuple(lo), tuple(hi))
    assert t is not None and t.law == "laplace" and 0.85 < t.rate <= 1.0
    x = m.sample(q, 2**17, rng=np.random.default_rng(45))
    piece = np.searchsorted(lo, x, side="right") - 1
    assert np.all(piece >= 0) and np.all(x <= hi[piece]) and np.all(x >= lo[piece])
    p = _ks(x, lambda v: m.cdf(v, q))
    assert p > 1e-4, p


def test_laplace_strips_detect_wrong_acceptances():
    """The same KS test rejects a table whose acceptances are wrong: ``gamma`` growing from 0 to 1 over the strips
    (the last ones kept ``e`` times less often than they should be; ``sure`` recomputed to match)."""
    m = dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 6.0)])
    t = st._laplace_strip_table(0.5, 1.0, tuple(m._lo), tuple(m._hi))
    ok = st._strip_draws(np.random.default_rng(46), 10**6, t, 0.0, 1.0, 0.0, 6.0)
    assert _ks(ok, lambda v: m.cdf(v, 0.5)) > 1e-4
    gamma = np.linspace(0.0, 1.0, t.gamma.size)
    sure = np.where(
        t.curved, 0, np.floor(st._CELLS * np.exp(-gamma - 1e-3) * (1 - 1e-14))
    )
    wrong = t._replace(gamma=gamma, sure=sure.astype(np.int64), rate=0.6)
    x = st._strip_draws(np.random.default_rng(46), 10**6, wrong, 0.0, 1.0, 0.0, 6.0)
    assert _ks(x, lambda v: m.cdf(v, 0.5)) < 1e-6


def test_laplace_strip_tables_where_they_do_not_apply():
    many = tuple(float(k) for k in range(300))
    assert st._laplace_strip_table(0.5, 1.0, many, tuple(v + 0.5 for v in many)) is None
    rng = np.random.default_rng(47)
    m = dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)])
    assert (
        st._laplace_strip_draws(rng, st._STRIP_MIN - 1, 1.5, 1.0, m._lo, m._hi) is None
    )


# --- Student's t(3) right of a cut (Restricted's t(3) base) ------------------------------------------------------


def test_t3_tail_and_its_inverse_against_scipy():
    """The closed-form ``P(W > t)`` and its Newton inverse, which place the edges, against scipy's t law."""
    t = np.array([0.0, 0.1, 1.0, 3.0, 10.0, 100.0, 1e3, 1e5, 1e8])
    assert np.allclose(st._t3_sf(t), stats.t.sf(t, 3), rtol=1e-9, atol=0)
    s = np.array([0.49, 0.3, 0.15, 0.1, 1e-3, 1e-6, 1e-12, 1e-20])
    assert np.allclose(st._t3_isf(s), stats.t.isf(s, 3), rtol=1e-8, atol=0)


@pytest.mark.parametrize("q", [0.5, 0.0, -0.5, -3.0, 7.5, -7.9])
def test_t3_strips_draw_the_restricted_law(monkeypatch, q):
    """``Restricted(t(3), scale 2)`` at ``q`` (the cut ``-q/2``) by strips (``_STRIP_MIN`` lowered): its exact cdf
    (KS) and no negative release (the strip reaching down to a cut left of the mode is decided in full, its
    points clipped to it)."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    m = dpbook.Restricted(stats.t(df=3, scale=2.0))
    calls = []
    draws = st._strip_draws

    def spy(*args, **kwargs):
        calls.append(args[2].law)
        return draws(*args, **kwargs)

    monkeypatch.setattr(st, "_strip_draws", spy)
    x = m.sample(q, 2**17, rng=np.random.default_rng(48))
    assert calls and calls[0] == "t3"
    assert x.min() >= 0.0
    cut = -q / 2.0
    tail = stats.t.sf(cut, 3)
    assert _ks(x, lambda v: 1.0 - stats.t.sf(cut + v / 2.0, 3) / tail) > 1e-4


def test_normal_strips_through_restricted(monkeypatch):
    """``Restricted(norm)`` at a cut left and right of the mean by strips (``_STRIP_MIN`` lowered), against its
    exact cdf."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    m = dpbook.Restricted(stats.norm(loc=1.0, scale=0.5))
    for q in (0.3, -1.5):
        x = m.sample(q, 2**17, rng=np.random.default_rng(49))
        assert x.min() >= 0.0
        assert _ks(x, lambda v: m.cdf(v, q)) > 1e-4
