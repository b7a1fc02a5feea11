"""The speed work of ``dpbook/audit/_profile.py`` (issue 20, point 5) changes no value: many pairs evaluated in one
pass, each at its own ε, give what each pair gives alone; the translation and curvature bounds computed for many
cells at once are the ones of each cell; the search that shares its cells across ε keeps its slack.

(The timing itself is ``benchmarks/bench_profiles.py``'s: timed tests are flaky on a shared machine.)
"""

import math

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook.audit import _profile
from dpbook.audit._search import describe

FAMILIES = [
    dpbook.Laplace(1.3),
    dpbook.BIT(0.8, upper=2.0),
    dpbook.Truncated(0.7, lower=0.0),
    dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]),
    dpbook.GaussianBIT(0.7, upper=2.0),
    dpbook.GaussianTruncated(0.6, lower=0.0, upper=2.0),
    dpbook.CroftLaplace(1.0, 1.0),  # a scale that varies with q: σ1 != σ2
]


@pytest.mark.parametrize("mech", FAMILIES, ids=lambda m: type(m).__name__)
def test_pairs_together_as_alone(mech):
    """``_evaluate`` (all pairs in one pass, each at its own subset of ε) is ``_continuous_bounds`` of each pair
    alone (at all ε): bitwise where the description's numbers of a pair are the same called with arrays as with
    a float, and where they are not (a normalizer or a scale evaluated on an array may differ in its last bits)
    within ``1e-13`` relative or a quarter of the pair's own slack ``up - low``, whichever is larger.  (The slack
    is the rounding allowance: a δ near 1e-12, a difference of terms near 1, moves by 4e-13 relative with the last
    bits of those terms, on one of this workplace's machines and not on another; a fifth of its slack.)"""
    rng = np.random.default_rng(11)
    desc = describe(mech)
    lo, hi = mech.domain
    qs = rng.uniform(max(lo, -2.0), min(hi, 4.0), (12, 2))
    qs[3, 1] = qs[3, 0]  # a pair of equal true values: 0
    pairs = [(float(a), float(b)) for a, b in qs]
    eps = np.r_[0.0, np.sort(rng.uniform(0.0, 3.0, 40)), math.inf]
    sets = [np.flatnonzero(rng.random(eps.size) < 0.6) for _ in pairs]
    together = _profile._evaluate(desc, pairs, eps, sets)
    for (q1, q2), idx, (up, low) in zip(pairs, sets, together):
        alone_up, alone_low = _profile._continuous_bounds(desc, q1, q2, eps)
        slack = alone_up[idx] - alone_low[idx]
        for got, ref in ((up, alone_up[idx]), (low, alone_low[idx])):
            room = np.maximum(1e-13 * np.abs(ref), 0.25 * slack) + 1e-300
            assert np.all(np.abs(got - ref) <= room), float(
                np.max(np.abs(got - ref) / room)
            )
        assert (up >= 0).all() and (low <= up).all()


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.Truncated(0.7, lower=0.0),  # a piece with an infinite end
        dpbook.Truncated(1.0, lower=0.0, upper=2.0),
        dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)]),
        dpbook.GaussianTruncated(0.7, lower=0.0),
        dpbook.BIT(0.8, lower=0.0),
    ],
    ids=lambda m: f"{type(m).__name__}{m.domain}",
)
def test_cell_bounds_together_as_alone(mech):
    """``_drift`` and ``_curvature`` of many cells at once are those of each cell alone, finite where the cell is
    narrower than the pieces (no ``0 * inf`` at an infinite piece end), and the drift is what its docstring says
    (against scipy's cdf of the kernel; an upper bound, tight)."""
    rng = np.random.default_rng(5)
    desc = describe(mech)
    s = float(desc.scale(np.array(0.0)))
    c = rng.uniform(-3.0, 20.0, 40)
    h = 10 ** rng.uniform(-6.0, -2.0, 40)
    drift = _profile._drift(desc, s, c, h)
    curvature = _profile._curvature(desc, s, c, c + h)
    for k in range(c.size):
        assert drift[k] == _profile._drift(desc, s, c[k : k + 1], h[k : k + 1])[0]
        assert (
            curvature[k]
            == _profile._curvature(desc, s, c[k : k + 1], c[k : k + 1] + h[k : k + 1])[
                0
            ]
        )
    assert np.isfinite(curvature).all()
    # the drift against scipy's kernel masses: 1 - W(pieces cut short by h) / W(pieces reached h further down)
    kernel = stats.laplace if desc.shape == "laplace" else stats.norm

    def mass(
        centre, intervals
    ):  # sf differences above the centre, cdf differences below (no cancellation)
        total = 0.0
        for x, y in intervals:
            x, y = (x - centre) / s, (y - centre) / s
            if x < y:
                total += (
                    kernel.sf(x) - kernel.sf(y)
                    if x > 0
                    else kernel.cdf(y) - kernel.cdf(x)
                )
        return total

    for k in range(c.size):
        inner = mass(c[k], [(a, b - h[k]) for a, b in desc.pieces])
        reach = mass(c[k], [(a - h[k], b) for a, b in desc.pieces])
        want = 1 - inner / (reach if desc.log_norm is not None else 1.0)
        assert want - 1e-12 <= drift[k] <= want * (1 + 1e-6) + 1e-12, (c[k], h[k])


def test_shared_search_keeps_its_slack():
    """One search for 200 ε (cells shared across ε, each searched at the ε where it is open) ends as close to
    the best pair as measured before it was shared: a median slack of ``4.6e-3`` relative for this one-sided
    truncation (``2e-2`` allowed)."""
    mech, delta = dpbook.Truncated(0.7, lower=0.0), 1.0
    eps = np.linspace(0.0, dpbook.privacy_loss(mech, delta), 200, endpoint=False)
    upper, lower = _profile._privacy_profile_bounds(mech, delta, eps)
    assert (lower <= upper).all()
    assert np.median((upper - lower) / upper) <= 2e-2
