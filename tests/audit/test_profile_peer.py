"""Google's ``dp_accounting`` as an independent peer of the exact privacy profiles (``dpbook/audit/_profile.py``).

``dp_accounting`` (PyPI, the privacy loss distributions of Google's differential-privacy library) computes
``δ(ε) = inf_mass + Σ_L P1(L) (1 - e^{ε - L})_+`` from a discrete privacy loss distribution (PLD).  We feed
it dpbook's *exact laws* (``cdf``/``sf``/``logpdf``/``atoms``/``logpmf`` of the family; never its own
Laplace or Gaussian classes) in two ways that provably bracket the true hockey-stick divergence of a pair:

* **optimistic** (a lower bound): cut the outputs into bins (each piece of the density's range split
  evenly, two tail bins beyond a window, the atoms on their own).  Binning is a post-processing, so the
  binned pair's divergence ``Σ (P1(B) - e^ε P2(B))_+`` is at most the true one; it is the PLD with mass
  ``P1(B)`` at loss ``log P1(B)/P2(B)``, each loss rounded *down* to ``dp_accounting``'s grid (which only
  lowers ``1 - e^{ε - L}``).
* **pessimistic** (an upper bound): on a bin inside one piece the log-ratio ``L(t) = log p1(t) - log p2(t)``
  is monotone in the output (a location kernel of one scale, conditioned on the pieces or clamped), so
  it is at most ``Lmax``, the larger of its values at the bin's ends, and the bin adds at most
  ``P1(B) (1 - e^{ε - Lmax})_+`` to ``∫ (p1 - e^ε p2)_+``: the PLD with mass ``P1(B)`` at ``Lmax``, rounded
  *up*; the two tail bins go to the infinite loss (their mass, below ``1e-17``, is added to δ at every ε).

Each atom is a bin of its own with its exact loss in both.  An integer-valued law with a finite
support is fed output by output (``dp_accounting``'s ``from_two_probability_mass_functions``).  Then
``optimistic <= pair_profile <= pessimistic`` at every ε of a grid, and the bracket is narrow (so the test
could fail); :func:`dpbook.privacy_profile` is at least the optimistic δ of every edge pair checked, and
the k-fold composition of the bracketing PLDs is set against the pure-DP bound ``δ = 0`` at ``k ε``.

The checks allow ``dp_accounting``'s own rounding: it evaluates ``Σ P1 - e^ε Σ P1 e^{-L}``, which
cancels to about ``1e-16`` of the mass summed (``_ATOL``), and the bin masses are cdf differences.
"""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_module

import dpbook
from dpbook import pair_loss, pair_profile, privacy_profile
from dpbook.design.gaussian import gaussian_delta
from dpbook_book.peers import pld_bracket

#: dp_accounting's loss grid
_H = 1e-4
#: bins of the outputs (split over the pieces in proportion to their length)
_BINS = 4000
#: the quantile beyond which the outputs go to the tail bins
_TAIL = 1e-18
#: the rounding of the bin masses and of dp_accounting's sum (it cancels ``Σ P1 - e^ε Σ P1 e^{-L}``)
_ATOL, _RTOL = 1e-13, 1e-9


def bracket(mech, q1, q2, *, bins=_BINS, h=_H):
    """``(optimistic, pessimistic)`` PLDs of the pair ``(M(q1), M(q2))`` built from dpbook's exact law."""
    if isinstance(dpbook.describe(mech), dpbook.DiscreteDescription):
        lo, hi = mech.support
        outputs = np.arange(lo, hi + 1)
        log1 = dict(zip(outputs.tolist(), mech.logpmf(outputs, q1).tolist()))
        log2 = dict(zip(outputs.tolist(), mech.logpmf(outputs, q2).tolist()))
        return tuple(
            pld_module.from_two_probability_mass_functions(
                log2, log1, pessimistic_estimate=p, value_discretization_interval=h
            )
            for p in (False, True)
        )
    return pld_bracket(mech, q1, q2, bins=bins, h=h, tail=_TAIL)


def _delta(pld, eps):
    return np.asarray(pld.get_delta_for_epsilon(np.asarray(eps, dtype=float)))


CASES = [
    pytest.param(dpbook.Laplace(1.3), 0.2, 1.4, id="Laplace"),
    pytest.param(dpbook.BIT(0.8, upper=2.0), 0.3, 1.3, id="BIT"),
    pytest.param(dpbook.BIT(0.5, lower=-1.0, upper=1.0), 1.0, 0.0, id="BIT-edge"),
    pytest.param(dpbook.Truncated(0.7, upper=2.0), 0.0, 1.0, id="Truncated"),
    pytest.param(
        dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]),
        2.5,
        1.5,
        id="Normalized-2-pieces",
    ),
    pytest.param(dpbook.GaussianBIT(0.7, upper=2.0), 0.5, 1.5, id="GaussianBIT"),
    pytest.param(
        dpbook.GaussianTruncated(0.6, upper=2.0), 2.0, 1.0, id="GaussianTruncated"
    ),
    pytest.param(dpbook.Gaussian(0.9), 0.0, 1.0, id="Gaussian"),
    pytest.param(
        dpbook.DiscreteTruncated(1.2, lower=0, upper=8), 3, 4, id="DiscreteTruncated"
    ),
]


def _grid(mech, q1, q2):
    loss = pair_loss(mech, q1, q2)
    top = 1.2 * loss if math.isfinite(loss) else 6.0  # a Gaussian: δ(6) ~ 1e-9 here
    return np.r_[np.linspace(0.0, top, 61), math.inf], loss


@pytest.mark.parametrize("mech, q1, q2", CASES)
@pytest.mark.parametrize("swap", [False, True], ids=["up", "down"])
def test_dp_accounting_brackets_pair_profile(mech, q1, q2, swap):
    if swap:
        q1, q2 = q2, q1
    eps, loss = _grid(mech, q1, q2)
    optimistic, pessimistic = bracket(mech, q1, q2)
    low, high = _delta(optimistic, eps), _delta(pessimistic, eps)
    ours = np.asarray(pair_profile(mech, q1, q2, eps))
    assert (low <= ours * (1 + _RTOL) + _ATOL).all(), np.max(low - ours)
    assert (ours <= high * (1 + _RTOL) + _ATOL).all(), np.max(ours - high)
    # the bracket is narrow (the test could fail): fine bins and a fine loss grid pin δ to ~1e-3 of its
    # top (measured at most 1.5e-3), and to 8e-2 relative wherever δ > 1e-6 (its largest near the loss)
    top = float(ours[0])
    assert np.max(high - low) <= 2.5e-3 * top
    alive = ours > 1e-6
    assert ((high - low)[alive] <= 0.12 * ours[alive]).all()
    # from the pair's loss on δ is 0 in all three (the pessimistic PLD up to its loss grid and tails)
    beyond = eps >= loss + 2 * _H
    assert (ours[beyond] == 0).all()
    assert (high[beyond] <= 1e-15).all()


def test_the_bracket_catches_a_wrong_profile():
    """The check above fails on a profile 1% too low, and on the pair's other direction."""
    mech, q1, q2 = dpbook.Truncated(0.7, upper=2.0), 0.0, 1.0
    eps, _ = _grid(mech, q1, q2)
    optimistic, pessimistic = bracket(mech, q1, q2)
    low, high = _delta(optimistic, eps), _delta(pessimistic, eps)
    ours = np.asarray(pair_profile(mech, q1, q2, eps))
    assert not (0.99 * ours >= low * (1 - _RTOL) - _ATOL).all()
    assert not (1.01 * ours <= high * (1 + _RTOL) + _ATOL).all()
    other = np.asarray(pair_profile(mech, 0.5, 1.6, eps))  # another pair's profile
    assert not (
        (low <= other * (1 + _RTOL) + _ATOL) & (other <= high * (1 + _RTOL) + _ATOL)
    ).all()


FAMILIES = [
    pytest.param(dpbook.Laplace(1.3), 1.0, id="Laplace"),
    pytest.param(dpbook.BIT(0.8, upper=2.0), 1.0, id="BIT"),
    pytest.param(dpbook.Truncated(0.7, upper=2.0), 0.8, id="Truncated"),
    pytest.param(
        dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]), 1.0, id="Normalized"
    ),
    pytest.param(dpbook.GaussianBIT(0.7, upper=2.0), 1.0, id="GaussianBIT"),
    pytest.param(
        dpbook.GaussianTruncated(0.6, upper=2.0),
        1.0,
        id="GaussianTruncated",
        marks=pytest.mark.slow,  # 4-6 s
    ),
    pytest.param(dpbook.DiscreteTruncated(1.2, lower=0, upper=8), 1, id="Discrete"),
]


@pytest.mark.parametrize("mech, delta", FAMILIES)
def test_privacy_profile_above_every_edge_pair(mech, delta):
    """``privacy_profile`` (a supremum over pairs) is at least the optimistic δ of each edge pair."""
    lo, hi = mech.domain
    lo, hi = (-3.0, 3.0) if math.isinf(lo) else (lo, hi)
    loss = dpbook.privacy_loss(mech, delta)
    eps = np.r_[np.linspace(0.0, 1.1 * loss, 23), math.inf]
    profile = np.asarray(privacy_profile(mech, delta, eps))
    starts = np.linspace(lo, hi - delta, 5)
    if isinstance(dpbook.describe(mech), dpbook.DiscreteDescription):
        starts = np.unique(np.round(starts)).astype(int)
    for u in starts:
        for q1, q2 in ((u, u + delta), (u + delta, u)):
            optimistic, _ = bracket(mech, q1, q2, bins=1000, h=1e-3)
            low = _delta(optimistic, eps)
            assert (low <= profile * (1 + _RTOL) + _ATOL).all(), (q1, q2)


@pytest.mark.parametrize(
    "mech, q1, q2",
    [
        pytest.param(dpbook.Laplace(1.0), 0.0, 1.0, id="Laplace"),
        pytest.param(dpbook.BIT(0.8, upper=2.0), 0.3, 1.3, id="BIT"),
        pytest.param(dpbook.GaussianBIT(0.7, upper=2.0), 0.5, 1.5, id="GaussianBIT"),
    ],
)
def test_composition_against_pure_dp(mech, q1, q2):
    """k releases: the pure-DP bound says δ = 0 at ``k ε`` for ``ε`` the pair's loss.  The composed
    pessimistic PLD gives (nearly) that, and the optimistic one shows it is tight: δ > 0 just below."""
    k, h = 10, 1e-3
    loss = pair_loss(mech, q1, q2)
    optimistic, pessimistic = bracket(mech, q1, q2, bins=2000, h=h)
    # dp_accounting adds its tail truncation (1e-15) to the infinite loss in either estimate: for the
    # optimistic one that is not a lower bound (δ = 1e-15 where the truth is 0), so it truncates nothing
    opt_k = optimistic.self_compose(k, tail_mass_truncation=0.0)
    pess_k = pessimistic.self_compose(k)
    top = (
        k * math.ceil(loss / h + 1e-9) * h
    )  # the pessimistic PLD's largest finite loss, composed
    eps = np.array([0.5 * k * loss, k * loss - k * h - 1e-3, k * loss, top])
    low, high = _delta(opt_k, eps), _delta(pess_k, eps)
    assert (low <= high + _ATOL).all()
    assert low[1] > 0  # the composed loss reaches k ε: pure DP's bound is attained
    assert (low[2:] == 0).all()
    # pessimistic: the tails' mass (k of them) and the composition's truncation (1e-15) above 0
    assert high[3] <= k * 1e-17 + 1e-14
    # at k ε itself only the rounding of the loss up to the grid is left: δ <= 1 - e^{k ε - top}
    assert high[2] <= -math.expm1(k * loss - top) + 1e-14
    # at half of k ε pure DP certifies nothing (δ = 1); the exact composition gives a δ below 1/2
    assert high[0] < 0.5


def test_composition_of_gaussians_matches_balle_wang():
    """k Gaussian releases of scale σ are one of scale σ/√k: the composed bracket holds the analytic δ."""
    sigma, k = 2.0, 9
    # a coarser loss grid (dp_accounting's δ is a Python loop over the composed grid) and more bins
    optimistic, pessimistic = bracket(
        dpbook.Gaussian(sigma), 0.0, 1.0, bins=8000, h=1e-3
    )
    eps = np.linspace(0.0, 3.0, 31)
    low = _delta(optimistic.self_compose(k, tail_mass_truncation=0.0), eps)
    high = _delta(pessimistic.self_compose(k), eps)
    want = gaussian_delta(sigma / math.sqrt(k), eps, 1.0)
    assert (low <= want * (1 + _RTOL) + _ATOL).all()
    assert (want <= high * (1 + _RTOL) + _ATOL).all()
    assert np.max(high - low) <= 7e-3 * want[0]  # measured 5.4e-3
