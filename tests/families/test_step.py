"""The step post-processing's sampler and its map ``φ`` (``dpbook/families/step.py``).

Its law, moments, audit and extremes are checked by the generic suites from its registry row; here: the
sampler's two routes (the cell read off the uniform, for a true value at or below the last edge, and ``φ``
of a Laplace draw otherwise) against each other and against the law, and ``φ`` by comparisons against ``φ``
by bisection.
"""

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook._kernels.laplace import RESOLUTION, _offsets_in_place
from dpbook.families import step

EDGES, VALUES, SHIFT = [0.0, 1.0, 2.5], [0.2, 0.0, 1.5], 0.5


def mechanism(scale=1.0):
    return dpbook.StepPostProcessed(scale, edges=EDGES, values=VALUES, shift=SHIFT)


def check_against_the_law(mech, q, x):
    """Each atom's frequency within 5 standard errors of its mass, and the draws beyond the atoms against the
    law's continuous part (one-sample KS on the conditional cdf)."""
    n = x.size
    atoms = mech.atoms(q)
    on_atoms = np.zeros(n, dtype=bool)
    for value, mass in atoms:
        hit = x == value
        on_atoms |= hit
        se = np.sqrt(max(mass * (1 - mass), 1e-12) / n)
        assert abs(hit.mean() - mass) <= 5 * se, (value, hit.mean(), mass)
    tail = x[~on_atoms]
    start = mech.edges[-1] - mech.shift
    assert np.all(tail > start)
    base = mech.cdf(start, q)
    rest = 1.0 - base
    assert abs(tail.size / n - rest) <= 5 * np.sqrt(rest * (1 - rest) / n) + 1 / n
    if rest * n >= 50:  # (a tail of mass below 50/n is checked by its count alone)
        p = stats.kstest(tail, lambda t: (mech.cdf(t, q) - base) / rest).pvalue
        assert p > 1e-4, p


@pytest.mark.parametrize("scale", [1.0, 0.3])
@pytest.mark.parametrize("q", [-4.0, 0.4, 2.5, 2.6, 7.0])
def test_sampler_against_the_law(scale, q):
    """Both routes (q <= last edge: the cell from the uniform; beyond it: φ(q + L_b)) draw the law."""
    mech = mechanism(scale)
    x = mech.sample(q, size=100_000, rng=np.random.default_rng(17))
    check_against_the_law(mech, q, x)


@pytest.mark.parametrize("q", [-3.0, 0.0, 0.7, 2.5])
def test_cell_route_is_phi_of_the_same_laplace_draw(q):
    """For q at or below the last edge, each draw is φ of the Laplace draw of its own uniform: the same atom
    (but where the Laplace draw rounds onto an edge) and, beyond the atoms, the same value to 1e-12."""
    mech = mechanism()
    n = 200_000
    x = mech.sample(q, size=n, rng=np.random.default_rng(3))
    t = np.random.default_rng(3).random(n) * 2.0 - 1.0
    y = q + _offsets_in_place(t, 1.0, RESOLUTION)
    reference = mech.phi(y)
    tail = y > EDGES[-1]
    assert np.count_nonzero(x[~tail] != reference[~tail]) <= 2
    assert np.allclose(x[tail], reference[tail], rtol=1e-12, atol=1e-12)


def test_phi_by_comparisons_and_by_bisection_agree(monkeypatch):
    """``φ`` counts the edges below a point with few edges and bisects with many: the same values, on the edges too."""
    mech = mechanism()
    x = np.concatenate(
        [np.random.default_rng(1).normal(1.0, 2.0, 5000), EDGES, np.nextafter(EDGES, 9)]
    )
    few = mech.phi(x)
    monkeypatch.setattr(step, "_FEW_EDGES", 0)
    assert np.array_equal(mech.phi(x), few)
    assert np.array_equal(few[-6:-3], VALUES)  # an edge belongs to the cell it closes
    assert few[-1] == np.nextafter(EDGES[-1], 9) - SHIFT


def test_sampler_shapes_and_seeds():
    mech = mechanism()
    assert mech.sample(0.5, rng=1) == mech.sample(0.5, rng=1)
    a = mech.sample([0.1, 3.0], size=(4, 2), rng=9)
    assert a.shape == (4, 2)
    assert np.array_equal(a, mech.sample([0.1, 3.0], size=(4, 2), rng=9))
