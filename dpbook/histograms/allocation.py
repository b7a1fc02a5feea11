"""Who pays for the bias: funds allocated in proportion to released counts, and the expected misallocation.

A fixed budget ``F`` is shared among the areas (cells) in proportion to their counts, among those
whose count reaches an eligibility threshold, as funds are allocated from census counts.  Allocating
from a private release instead of the true counts moves money between areas; Zhu, Van Hentenryck &
Fioretto (2021, reference ``zhu2021``) show that the post-processing decides who loses.
:func:`expected_misallocation` gives the expected amount each area gains or loses.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._kernels import validation as check
from ..families.laplace import Laplace
from ._engine import (
    EPS,
    LatticeSum,
    counts_array,
    n_sims_count,
    noise_family,
    per_histogram,
    post_function,
    total_array,
)
from .release import NEEDS_TOTAL, POSTPROCESSINGS

__all__ = ["Misallocation", "allocate", "expected_misallocation"]


class Misallocation(NamedTuple):
    """The expected misallocation per area, ``E[allocate(release)] - allocate(counts)``.

    Attributes
    ----------
    expected : numpy.ndarray
        The expected gain (``> 0``) or loss (``< 0``) of each area, shape ``(n,)``.
    se : numpy.ndarray or None
        Standard errors when simulated, else ``None``.
    exact : bool
        Exact (a lattice sum) or simulated.
    error : float or None
        For an exact value, a bound on its absolute numerical error (the neglected tail bounded
        rigorously, rounding by an allowance); ``None`` when simulated.
    method : str
        How the values were computed.
    """

    expected: np.ndarray
    se: object
    exact: bool
    error: object = None
    method: str = ""


def _allocate(x, funds, threshold):
    """``allocate`` on validated float arrays."""
    eligible = (x >= threshold) & (x > 0)
    weight = np.where(eligible, x, 0.0)
    den = weight.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(den > 0, weight / np.where(den > 0, den, 1.0), 0.0)
    return share * np.asarray(funds)[..., None]


def allocate(counts, funds, *, threshold=0):
    """Share ``funds`` in proportion to the counts among the cells whose count is ``>= threshold``.

    Cell ``i`` receives ``funds · x_i / Σ_{j eligible} x_j`` if it is eligible (``x_i >= threshold`` and
    ``x_i > 0``: a cell with nothing counted gets nothing), else 0.  When some cell is eligible the
    shares sum to ``funds``; when none is, every share is 0.  Released counts may be negative (raw
    noisy counts): such cells are never eligible.

    Parameters
    ----------
    counts : array_like, shape (..., n)
        Counts (true or released); leading axes are independent histograms.
    funds : float or array_like, shape (...,)
        The budget (``>= 0``) of each histogram.
    threshold : float, keyword-only
        The eligibility threshold (default 0: every positive count is eligible).

    Returns
    -------
    numpy.ndarray, shape (..., n)

    Examples
    --------
    >>> from dpbook import allocate
    >>> allocate([10, 30, 2], 100.0, threshold=5).tolist()
    [25.0, 75.0, 0.0]
    """
    x = check.finite_array("counts", counts)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(
            f"counts must have shape (..., n) with n >= 1 cells, got {counts!r}"
        )
    f = per_histogram("funds", funds, x.shape)
    thr = check.finite("threshold", threshold)
    return _allocate(x, f, thr)


def expected_misallocation(
    post,
    counts,
    mechanism,
    funds,
    *,
    threshold=0,
    total=None,
    n_sims=None,
    rng=None,
):
    """The expected misallocation per area when funds follow a post-processed noisy histogram.

    ``E[allocate(x)] - allocate(counts)`` for the release ``x = POSTPROCESSINGS[post](counts + K,
    total)`` (:func:`dpbook.release_histogram`).  **Exact** for discrete noise
    (:class:`dpbook.DiscreteLaplace`) on ``n <= 3`` areas: a lattice sum over the noises (over their
    differences for ``'simplex'`` and ``'integer_simplex'``), cut where the neglected mass is below
    ``1e-17``; the allocations lie in ``[0, funds]``, so ``error`` bounds the neglected part.  **Simulated**
    (``n_sims`` seeded releases, ``exact=False`` with standard errors) otherwise: for Laplace noise
    (the threshold makes the allocation jump, and no exact integration is offered) and beyond three
    areas.

    Parameters
    ----------
    post : {'raw', 'clamp', 'simplex', 'integer_simplex'}
        The post-processing.
    counts : array_like, shape (n,)
        The true counts of the areas (``>= 0``; integers for discrete noise).
    mechanism : dpbook.Laplace or dpbook.DiscreteLaplace
        The input mechanism.
    funds : float
        The budget (``>= 0``).
    threshold : float, keyword-only
        The eligibility threshold of :func:`allocate`.
    total : float or int, keyword-only
        The public total for the projections (default the true total).
    n_sims : int, keyword-only
        The number of simulated releases; required where the result is simulated.
    rng : int, numpy.random.Generator or None, keyword-only
        The random generator of the simulation (SPEC 7).

    Returns
    -------
    Misallocation

    Examples
    --------
    >>> from dpbook import DiscreteLaplace, expected_misallocation
    >>> m = expected_misallocation("simplex", [1, 4, 20], DiscreteLaplace(2.0), 100.0)
    >>> m.expected.round(3).tolist(), m.exact     # the smallest area gains, the largest pays
    ([1.738, -0.68, -1.059], True)
    """
    fn = post_function(post, POSTPROCESSINGS)
    mech = noise_family(mechanism)
    c = counts_array(counts, mech)
    if c.ndim != 1:
        raise ValueError(f"counts must be one histogram, shape (n,), got {counts!r}")
    f = check.nonnegative("funds", funds)
    thr = check.finite("threshold", threshold)
    t = (
        float(total_array(total, c, integer=post == "integer_simplex"))
        if post in NEEDS_TOTAL
        else None
    )
    truth = _allocate(c, f, thr)

    def g(y):
        return _allocate(np.asarray(fn(y, t), dtype=float), f, thr)

    if not isinstance(mech, Laplace) and c.size <= 3:
        lattice = LatticeSum(
            g, c, 1.0 / mech.scale, shift_invariant=post in NEEDS_TOTAL
        )
        error = f * lattice.tail + float(lattice.rounding().max()) + 64 * EPS * f
        return Misallocation(
            lattice.sums - truth,
            None,
            True,
            error,
            f"lattice sum ({lattice.points} points, neglected mass <= {lattice.tail:.1e})",
        )
    if n_sims is None:
        raise ValueError(
            "n_sims must be given: the misallocation is simulated for Laplace noise and beyond "
            f"three areas (got {type(mech).__name__} on {c.size} areas), got None"
        )
    n = n_sims_count(n_sims)
    gen = check.generator(rng)
    rows = max(1, 2**20 // c.size)
    s1 = s2 = 0.0
    done = 0
    while done < n:
        m = min(rows, n - done)
        noisy = np.asarray(mech.sample(np.broadcast_to(c, (m, c.size)), rng=gen))
        dev = g(noisy) - truth
        s1 = s1 + dev.sum(axis=0)
        s2 = s2 + (dev * dev).sum(axis=0)
        done += m
    mean = s1 / n
    var = np.maximum(s2 / n - mean * mean, 0.0) * n / (n - 1)
    return Misallocation(
        mean, np.sqrt(var / n), False, None, f"simulation ({n} seeded releases)"
    )
