"""The strips (``dpbook._kernels.strips``): many exact draws of the normal law on a range and of the Laplace law on
a union of ranges."""

import numpy as np
import pytest
from registry import STRIP_BASES
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


def _restricted_cdf(m, q):
    """The exact cdf of ``Restricted`` at ``q`` from the standardized base's own tail (scipy's ``sf``)."""
    cut = -(q + m._loc) / m._scale
    tail = m._std.sf(cut)
    return lambda v: 1.0 - m._std.sf(cut + v / m._scale) / tail


def _spy_laws(monkeypatch):
    """The laws of the tables :func:`_strip_draws` is called with, in order (a spy replacing it)."""
    calls = []
    draws = st._strip_draws

    def spy(*args, **kwargs):
        calls.append(args[2].law)
        return draws(*args, **kwargs)

    monkeypatch.setattr(st, "_strip_draws", spy)
    return calls


@pytest.mark.parametrize("q", [0.5, 0.0, -0.5, -3.0, 7.5, -7.9])
def test_t3_strips_draw_the_restricted_law(monkeypatch, q):
    """``Restricted(t(3), scale 2)`` at ``q`` (the cut ``-q/2``) by strips (``_STRIP_MIN`` lowered): its exact cdf
    (KS) and no negative release (the strip reaching down to a cut left of the mode is decided in full, its
    points clipped to it)."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    m = dpbook.Restricted(stats.t(df=3, scale=2.0))
    calls = _spy_laws(monkeypatch)
    x = m.sample(q, 2**17, rng=np.random.default_rng(48))
    assert calls and calls[0] == "t3"
    assert x.min() >= 0.0
    assert _ks(x, _restricted_cdf(m, q)) > 1e-4


def test_normal_strips_through_restricted(monkeypatch):
    """``Restricted(norm)`` at a cut left and right of the mean by strips (``_STRIP_MIN`` lowered), against its
    exact cdf."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    m = dpbook.Restricted(stats.norm(loc=1.0, scale=0.5))
    for q in (0.3, -1.5):
        x = m.sample(q, 2**17, rng=np.random.default_rng(49))
        assert x.min() >= 0.0
        assert _ks(x, lambda v: m.cdf(v, q)) > 1e-4


# --- any unimodal base right of a cut (Restricted's other scipy bases) -----------------------------------------------


def test_every_unimodal_base_has_strips():
    """Every base the generic strips take has an instance here, and its strips at a cut left and right of its modes
    keep more than 99% of the proposals; its ``_logpdf`` (what the strips evaluate) is scipy's ``logpdf``."""
    assert set(STRIP_BASES) == set(dpbook.Restricted._UNIMODAL_BASES) | set(
        dpbook.Restricted._BIMODAL_BASES
    )
    w = np.random.default_rng(50).standard_normal(200) * 3.0
    for name, base in STRIP_BASES.items():
        m = dpbook.Restricted(base())
        assert np.allclose(m._std_logpdf(w), m._std.logpdf(w), rtol=1e-13, atol=0), name
        peaks, _ = m._std_extrema()
        for c in (peaks[0] - 1.0, peaks[-1] + 2.0):
            t = m._strip_table(c)
            assert t is not None and t.rate > 0.99, (name, c)


GENERIC_CASES = [
    (stats.t(5, scale=1.5), 0.5),  # the cut left of the mode: two sides
    (stats.gumbel_r(loc=-np.euler_gamma), 3.0),
    (stats.gumbel_l, -2.0),  # right of the mode: one open side from the cut
    (stats.skewnorm(3), 0.5),
    (stats.genlogistic(0.2), 3.0),
    (stats.gennorm(0.5), 0.0),  # a cusp at the mode
    (stats.laplace_asymmetric(2), 0.5),
    (stats.johnsonsu(1, 2, scale=1e-300), 2e-300),  # tiny scales (the "tiny" places)
    (stats.t(5, scale=1e300), -5e300),
    (stats.dgamma(3), 5.0),  # bimodal: four sides, the cut left of both modes
    (stats.dgamma(2), 0.5),  # the cut between a mode and the trough
    (stats.dweibull(2), -0.3),  # the cut between the trough and the right mode
    (
        stats.nct(3, -4),
        -2.0,
    ),  # scipy's density raises at 1e154 (boost's overflow): taken as 0 there
]


@pytest.mark.parametrize(
    "base, q",
    GENERIC_CASES,
    ids=lambda v: getattr(getattr(v, "dist", v), "name", str(v)),
)
def test_generic_strips_draw_the_restricted_law(monkeypatch, base, q):
    """``Restricted`` with a unimodal scipy base by the generic strips (``_STRIP_MIN`` lowered; a spy sees them run):
    its exact cdf (KS), no negative release."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    calls = _spy_laws(monkeypatch)
    m = dpbook.Restricted(base)
    x = m.sample(q, 2**17, rng=np.random.default_rng(51))
    assert calls and calls[0] == "generic"
    assert x.min() >= 0.0 and np.all(np.isfinite(x))
    assert _ks(x, _restricted_cdf(m, q)) > 1e-4


def _generic_table(m, q):
    return m._strip_table(-(q + m._loc) / m._scale)


def _generic_chi2(m, t, x):
    """χ² p-value of standardized excesses ``x`` counted per strip of ``t`` against the strips' exact masses."""
    cut = t.offset
    ends = np.concatenate([t.near, np.where(np.isfinite(t.far), t.far, t.near)])
    edges = np.unique(np.append(np.maximum(ends, 0.0), np.inf))
    tail = m._std.sf(cut)
    expected = np.diff(1.0 - m._std.sf(cut + edges) / tail) * x.size
    counts = np.bincount(
        np.searchsorted(edges, x, side="right") - 1, minlength=edges.size
    )[: edges.size - 1]
    keep = expected > 5
    stat = float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))
    return stats.chi2.sf(stat, int(keep.sum()) - 1)


@pytest.mark.parametrize(
    "base, q", [(stats.t(5), 0.5), (stats.skewnorm(3), -1.0)], ids=["t5", "skewnorm"]
)
def test_generic_strips_hold_their_exact_masses(base, q):
    """Counted strip by strip (4,096 cells, shells included), a million draws match the strips' exact masses from
    scipy's ``sf`` (χ²); acceptances made wrong by ``gamma`` growing from 0 to 0.2 over the strips (``sure``
    recomputed to match) fail the same test."""
    m = dpbook.Restricted(base)
    t = _generic_table(m, q)
    x = st._strip_draws(np.random.default_rng(52), 10**6, t, 0.0, 1.0, 0.0, np.inf)
    assert _generic_chi2(m, t, x) > 1e-6
    gamma = np.where(
        np.isfinite(t.gamma), np.linspace(0.0, 0.2, t.gamma.size) + t.gamma, t.gamma
    )
    h_far = -np.log(np.maximum(t.sure, 1) / st._CELLS) - t.gamma
    sure = np.where(
        t.sure > 0, np.floor(st._CELLS * np.exp(-(gamma + h_far)) * (1 - 1e-14)), 0
    )
    wrong = t._replace(gamma=gamma, sure=sure.astype(np.int64))
    y = st._strip_draws(np.random.default_rng(52), 10**6, wrong, 0.0, 1.0, 0.0, np.inf)
    assert _generic_chi2(m, t, y) < 1e-6


@pytest.mark.parametrize("q", [0.5, -2.0])
def test_generic_strips_with_every_decision_by_a_fresh_uniform(monkeypatch, q):
    """No proposal sure and the 11-bit tables useless: every proposal decided by a fresh uniform against the base's
    own density, in rounds of 7 proposals; the same law."""
    m = dpbook.Restricted(stats.skewnorm(3, scale=2.0))
    t = _generic_table(m, q)
    slow = t._replace(sure=np.zeros_like(t.sure))
    monkeypatch.setattr(st, "_SURE_KEEP", np.full(st._CELLS, -1.0))
    monkeypatch.setattr(st, "_SURE_DROP", np.full(st._CELLS, np.inf))
    monkeypatch.setattr(st, "_PROPOSALS", 7)
    y = st._strip_draws(np.random.default_rng(53), 20_000, slow, 0.0, 2.0, 0.0, np.inf)
    assert y.min() >= 0.0
    assert _ks(y, _restricted_cdf(m, q)) > 1e-4


def test_generic_strips_exact_tail(monkeypatch):
    """With one shell and the exact tail holding ``2^-6`` of the mass (not ``2^-30``), the tail is drawn often (a
    spy counts it) and the law is the same (KS)."""
    monkeypatch.setattr(st, "_SHELLS", 1)
    monkeypatch.setattr(st, "_TAIL_SHARE", 2.0**-6)
    m = dpbook.Restricted(stats.t(5))
    t = _generic_table(m, 0.5)
    assert t.curved.sum() == 1
    drawn = []
    tail = t.tail

    def spy(rng, k):
        drawn.append(k)
        return tail(rng, k)

    x = st._strip_draws(
        np.random.default_rng(54), 200_000, t._replace(tail=spy), 0.0, 1.0, 0.0, np.inf
    )
    assert sum(drawn) > 20
    assert _ks(x, _restricted_cdf(m, 0.5)) > 1e-4


def test_generic_strips_refuse_what_they_cannot_do():
    """No table for a density that rises away from its modes (two normal bumps told of one), for a cut where
    ``|log f|`` passes ``2^16`` or the base's mass is lost; a point found above its strip's envelope (envelopes
    lowered) raises rather than be kept."""

    def bumps(w):
        return np.logaddexp(stats.norm.logpdf(w, -6.0), stats.norm.logpdf(w, 6.0))

    def bumps_sf(w):
        return np.logaddexp(stats.norm.logsf(w, -6.0), stats.norm.logsf(w, 6.0))

    # told of one mode, at 6, the strips see the density rise again towards -6; told of both (each where the
    # other's slope is e^-70 of its own), they hold
    assert st._generic_strip_table(bumps, bumps_sf, None, [6.0], [], -9.0) is None
    both = st._generic_strip_table(bumps, bumps_sf, None, [-6.0, 6.0], [0.0], -9.0)
    assert both is not None and both.rate > 0.99
    m = dpbook.Restricted(stats.gumbel_l)
    assert m._strip_table(40.0) is None  # log f(40) = 40 - e^40
    t = _generic_table(dpbook.Restricted(stats.t(5)), 0.5)
    low = t._replace(log_env=t.log_env - 0.5, sure=np.zeros_like(t.sure))
    with pytest.raises(ArithmeticError, match="above its strip's envelope"):
        st._strip_draws(np.random.default_rng(55), 10_000, low, 0.0, 1.0, 0.0, np.inf)


def test_generic_strips_not_for_other_bases(monkeypatch):
    """Neither a base the strips do not know (Tukey's lambda) nor a double gamma with a pole at 0 takes them."""
    monkeypatch.setattr(st, "_STRIP_MIN", 2**10)
    calls = _spy_laws(monkeypatch)
    for base in (stats.dgamma(0.8), stats.tukeylambda(-0.2)):
        m = dpbook.Restricted(base)
        x = m.sample(0.5, 2**10, rng=np.random.default_rng(56))
        assert not calls and x.min() >= 0.0


def test_generic_strips_survive_pickling():
    """A ``Restricted`` that has drawn by strips pickles (its tables, which hold closures, are left behind) and,
    unpickled, rebuilds the same table: the same draws from the same seed."""
    import pickle

    m = dpbook.Restricted(stats.t(5))
    x = m.sample(0.5, st._STRIP_MIN, rng=np.random.default_rng(57))
    again = pickle.loads(pickle.dumps(m))
    assert np.array_equal(
        again.sample(0.5, st._STRIP_MIN, rng=np.random.default_rng(57)), x
    )


@pytest.mark.parametrize(
    "base, first",
    [(stats.gumbel_r, 2**16), (stats.t(5), 2**13), (stats.exponnorm(2), 16)],
    ids=["quick quantile", "slow quantile", "root search"],
)
def test_generic_strips_from_a_size_set_by_the_base(monkeypatch, base, first):
    """A closed-form quantile keeps the inverse cdf below ``2^16`` draws; a slow one (Student's t) below
    ``2^13``; scipy's generic root search (the exponentially modified normal) below 16: one draw fewer than that
    does not take the strips, that many does (a spy on the sampler)."""
    m = dpbook.Restricted(base)
    calls = _spy_laws(monkeypatch)
    m.sample(0.5, first - 1, rng=np.random.default_rng(58))
    assert not calls
    x = m.sample(0.5, first, rng=np.random.default_rng(58))
    assert (
        calls and set(calls) == {"generic"} and x.shape == (first,) and x.min() >= 0.0
    )
