"""dpbook next to production libraries: adapters to IBM's diffprivlib, float forensics, budget splits.

Part IV of the book compares dpbook with diffprivlib (Holohan et al. 2019) and OpenDP.  This module
holds the few helpers that comparison needs and that are not formulas of the papers:

* :func:`peer_scale`, :func:`dpbook_counterpart`, :func:`peer_property`, :func:`peer_sample` read a
  diffprivlib mechanism (``LaplaceTruncated``, ``LaplaceBoundedDomain``, ``LaplaceFolded``,
  ``Laplace``) and give the dpbook mechanism with the same law, or its own answers over many true
  values.  diffprivlib's ``LaplaceTruncated`` *clamps* (it is :class:`~dpbook.BIT`, Liu
  Def. 2(b)); its ``LaplaceBoundedDomain`` *conditions* (it is :class:`~dpbook.Truncated`,
  Liu Def. 2(a)) with the scale of Holohan, Antonatos, Braghin & Mac Aonghusa (2020).
* :func:`lowest_bit` reads where the last set bit of a double sits, which is what leaks from a
  floating-point sampler (Mironov 2012).
* Part V's counts: :func:`geometric_scale`, :func:`geometric_counterpart`, :func:`geometric_answer`,
  :func:`geometric_sample` read diffprivlib's ``Geometric``, ``GeometricTruncated`` (clamping: it is
  :class:`~dpbook.DiscreteBIT`) and ``GeometricFolded`` (reflection into the bounds, which dpbook has
  no family for: :func:`folded_law` gives its law by brute force from dpbook's discrete Laplace pmf);
  :func:`opendp_count_release` releases a vector of counts with OpenDP's integer Laplace measurement,
  and :func:`two_sample_chi2` tests whether two samples of integers share one law.

diffprivlib is imported only when a function needs it; the core :mod:`dpbook` never imports this package.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpbook import BIT, Laplace, Truncated
from dpbook._kernels import validation as check
from dpbook._kernels.arrays import _float

__all__ = [
    "dpbook_counterpart",
    "folded_law",
    "geometric_answer",
    "geometric_counterpart",
    "geometric_sample",
    "geometric_scale",
    "lowest_bit",
    "opendp_count_release",
    "peer_property",
    "peer_sample",
    "peer_scale",
    "two_sample_chi2",
]


def _mechanisms():
    try:
        from diffprivlib import mechanisms
    except ImportError as err:  # pragma: no cover - the book's requirements install it
        raise ImportError(
            "dpbook.peers needs diffprivlib (pip install -r requirements.txt)"
        ) from err
    return mechanisms


def _peer(mech, family="Laplace"):
    m = _mechanisms()
    if not isinstance(mech, getattr(m, family)):
        raise ValueError(
            f"mech must be a diffprivlib {family}-family mechanism, got {mech!r}"
        )
    return m


def peer_scale(mech):
    """The Laplace scale a diffprivlib mechanism's sampler uses.

    ``LaplaceBoundedDomain``: the scale it calibrates (Holohan et al. 2020, the fixed point of
    ``b = Δ / (ε - log ΔC(b) - log(1 - δ))``), read from its own ``_find_scale``.  The others:
    ``Δ / (ε - log(1 - δ))``, what their ``randomise`` uses.  NaN when diffprivlib's calibration
    fails (an interval narrower than ``Δ``; its numpy warnings are silenced).

    Parameters
    ----------
    mech : diffprivlib.mechanisms.Laplace
        An instance of ``Laplace`` or of one of its subclasses.

    Returns
    -------
    float
    """
    m = _peer(mech)
    if isinstance(mech, m.LaplaceBoundedDomain):
        if mech._scale is None:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                mech._scale = mech._find_scale()
        return float(mech._scale)
    return float(mech.sensitivity / (mech.epsilon - np.log(1 - mech.delta)))


def dpbook_counterpart(mech):
    """The dpbook mechanism whose law is that of the diffprivlib mechanism ``mech``'s sampler.

    ``LaplaceBoundedDomain`` -> :class:`~dpbook.Truncated` (Liu Def. 2(a)),
    ``LaplaceTruncated`` -> :class:`~dpbook.BIT` (Liu Def. 2(b)), ``Laplace`` ->
    :class:`~dpbook.Laplace`, each at :func:`peer_scale`.  ``LaplaceFolded`` (reflection into
    the bounds) has no dpbook family: ``ValueError``.
    """
    m = _peer(mech)
    b = peer_scale(mech)
    if isinstance(mech, m.LaplaceBoundedDomain):
        return Truncated(b, lower=mech.lower, upper=mech.upper)
    if isinstance(mech, m.LaplaceTruncated):
        return BIT(b, lower=mech.lower, upper=mech.upper)
    if type(mech) is m.Laplace:
        return Laplace(b)
    raise ValueError(f"mech has no dpbook counterpart: {type(mech).__name__}")


def peer_property(mech, name, q):
    """diffprivlib's own answer ``mech.<name>(q)`` at every true value in ``q``, as an array.

    diffprivlib's ``bias`` and ``variance`` take one number at a time and may compute ``inf * 0``;
    this evaluates them one by one with numpy's warnings silenced, so that a NaN it returns is
    recorded as NaN instead of stopping the caller.

    Parameters
    ----------
    mech : diffprivlib.mechanisms.Laplace
    name : {'bias', 'variance', 'mse'}
    q : float or array_like
        True values.

    Returns
    -------
    float or ndarray
    """
    _peer(mech)
    if name not in ("bias", "variance", "mse"):
        raise ValueError(f"name must be 'bias', 'variance' or 'mse', got {name!r}")
    q = check.finite_array("q", q)
    method = getattr(mech, name)
    out = np.empty(q.shape)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, v in np.ndenumerate(q):
            out[i] = method(float(v))
    return _float(out)


def peer_sample(mech, q, size):
    """``size`` releases of the true value ``q`` by diffprivlib's own ``mech.randomise``.

    Seed the mechanism (``random_state=``) for reproducible draws.

    Returns
    -------
    ndarray of shape ``(size,)``
    """
    _peer(mech)
    q = check.finite("q", q)
    n = check.size(size)
    if not isinstance(n, int):
        raise ValueError(f"size must be an int >= 0, got {size!r}")
    return np.fromiter((mech.randomise(q) for _ in range(n)), dtype=float, count=n)


def lowest_bit(x, window=None):
    """The exponent ``k`` of the least significant set bit of each double: ``x = m 2^k`` with ``m`` odd.

    Zero has no set bit: ``-inf``.  The floating-point leak of Mironov (2012): an output whose
    lowest bit is finer than every output one true value can produce rules that value out.

    Parameters
    ----------
    x : float or array_like
        Finite doubles.
    window : (float, float), optional
        Keep only the entries of ``x`` in ``[lo, hi)`` (the result is then 1-d).

    Returns
    -------
    float or ndarray

    >>> lowest_bit([0.75, 3.0, 0.1])
    array([ -2.,   0., -55.])
    """
    x = check.finite_array("x", x)
    if window is not None:
        lo, hi = window
        x = x[(x >= lo) & (x < hi)]
    mant, exp = np.frexp(x)
    m = np.abs(mant * 2.0**53).astype(np.int64)
    low = m & -m
    with np.errstate(divide="ignore"):
        tz = np.where(m == 0, -np.inf, np.log2(np.maximum(low, 1)))
    return _float(exp - 53 + tz)


# --- Part V: counts ---------------------------------------------------------------------------------


def _geometric_peer(mech):
    return _peer(mech, "Geometric")


def geometric_scale(mech):
    """The discrete Laplace scale ``b`` of a diffprivlib geometric mechanism: ``Δ/ε``.

    diffprivlib's ``Geometric(epsilon=ε, sensitivity=Δ)`` uses the ratio ``α = exp(-ε/Δ)`` (its
    ``_scale`` attribute holds ``-ε/Δ``, the log of the ratio, not a scale), so in dpbook's terms
    ``b = Δ/ε`` and ``α = e^{-1/b}``.
    """
    _geometric_peer(mech)
    return float(mech.sensitivity / mech.epsilon)


def geometric_counterpart(mech):
    """The dpbook family with the law of diffprivlib's geometric mechanism ``mech``.

    ``Geometric`` -> :class:`~dpbook.DiscreteLaplace`, ``GeometricTruncated`` (values outside the
    bounds are mapped to the nearest bound) -> :class:`~dpbook.DiscreteBIT`, both at
    :func:`geometric_scale`.  ``GeometricFolded`` (reflection) has no dpbook family: ``ValueError``
    (its law: :func:`folded_law`).
    """
    from dpbook import DiscreteBIT, DiscreteLaplace

    m = _geometric_peer(mech)
    b = geometric_scale(mech)
    if isinstance(mech, m.GeometricTruncated):
        return DiscreteBIT(b, lower=mech.lower, upper=mech.upper)
    if type(mech) is m.Geometric:
        return DiscreteLaplace(b)
    raise ValueError(f"mech has no dpbook counterpart: {type(mech).__name__}")


def geometric_answer(mech, name, q):
    """diffprivlib's own ``mech.<name>(q)`` for one integer ``q``: a float, or the name of the
    exception it raises (``GeometricTruncated`` and ``GeometricFolded`` raise
    ``NotImplementedError`` for ``bias`` and ``variance``)."""
    _geometric_peer(mech)
    if name not in ("bias", "variance"):
        raise ValueError(f"name must be 'bias' or 'variance', got {name!r}")
    q = check.count("q", q, -(2**62))
    try:
        return float(getattr(mech, name)(q))
    except NotImplementedError as err:
        return type(err).__name__


def geometric_sample(mech, q, size):
    """``size`` releases of the integer ``q`` by diffprivlib's own ``mech.randomise``, as int64.

    diffprivlib draws the geometric noise from a float uniform through ``log`` (not exactly);
    seed the mechanism (``random_state=``) for reproducible draws.
    """
    _geometric_peer(mech)
    q = check.count("q", q, -(2**62))
    n = check.size(size)
    if not isinstance(n, int):
        raise ValueError(f"size must be an int >= 0, got {size!r}")
    return np.fromiter((mech.randomise(q) for _ in range(n)), dtype=np.int64, count=n)


def _fold(x2, lo2, hi2):
    """diffprivlib's ``_fold`` on doubled integer coordinates: reflect into ``[lo2, hi2]`` (exact)."""
    x2 = np.array(x2, dtype=np.int64)
    while True:
        below, above = x2 < lo2, x2 > hi2
        if not (below.any() or above.any()):
            return x2
        x2 = np.where(below, 2 * lo2 - x2, np.where(above, 2 * hi2 - x2, x2))


def folded_law(scale, q, lower, upper, *, tail=45.0):
    """The law of diffprivlib's ``GeometricFolded``: ``q + K`` reflected into ``[lower, upper]``.

    Brute force: the discrete Laplace masses of dpbook (:meth:`dpbook.DiscreteLaplace.pmf`) on
    ``q + k`` for ``|k| <= T``, ``T = ⌈tail · b⌉``, moved by diffprivlib's fold (``x < lower`` ->
    ``2 lower - x``, ``x > upper`` -> ``2 upper - x``, repeated; bounds integer or half-integer)
    and summed per output.  The mass left out, ``2 α^{T+1}/(1 + α) <= 2 e^{-tail}``, is returned.

    Returns
    -------
    support : ndarray of int64
    pmf : ndarray of float
    cut : float
        The probability of the noise values not summed (the error bound of every mass).
    """
    from dpbook import DiscreteLaplace

    b = check.positive("scale", scale)
    q = check.count("q", q, -(2**40))
    lo2, hi2 = 2 * float(lower), 2 * float(upper)
    if not (lo2 == round(lo2) and hi2 == round(hi2) and lo2 <= hi2):
        raise ValueError(
            f"lower and upper must be integers or half-integers with lower <= upper, "
            f"got lower={lower!r}, upper={upper!r}"
        )
    t = int(math.ceil(tail * b))
    if t > 10**7:
        raise ValueError(
            f"scale must be small enough for brute force (tail * scale <= 1e7), got {scale!r}"
        )
    k = np.arange(q - t, q + t + 1, dtype=np.int64)
    law = DiscreteLaplace(b)
    mass = np.asarray(law.pmf(k, q), dtype=float)
    out2 = _fold(2 * k, int(lo2), int(hi2))
    support2, inverse = np.unique(out2, return_inverse=True)
    pmf = np.bincount(inverse, weights=mass)
    alpha = math.exp(-1.0 / b)
    cut = 2 * alpha ** (t + 1) / (1 + alpha)
    return (support2 // 2).astype(np.int64), pmf, cut


def opendp_count_release(counts, scale):
    """Release a vector of integer counts with OpenDP's integer Laplace measurement at ``scale``.

    ``vector_domain(atom_domain(T=int)), l1_distance(T=int) >> then_laplace(scale)`` (OpenDP >=
    0.12, feature ``contrib``): exact discrete Laplace noise, ``P(K = k) ∝ exp(-|k|/scale)``, drawn
    from the operating system's cryptographically secure source (so it cannot be seeded).
    """
    import opendp.prelude as dp

    b = check.positive("scale", scale)
    counts = np.asarray(counts)
    if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError(f"counts must be a 1-d array of integers, got {counts!r}")
    dp.enable_features("contrib")
    meas = (
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.l1_distance(T=int),
    ) >> dp.m.then_laplace(scale=b)
    return np.asarray(meas(counts.tolist()), dtype=np.int64)


def two_sample_chi2(x, y, *, min_count=10):
    """χ² test that two samples of integers come from one law: ``(statistic, dof, p-value)``.

    The values seen fewer than ``min_count`` times in the pooled sample are pooled into one bin;
    the 2 × K table of counts is tested for homogeneity (:func:`scipy.stats.chi2_contingency`).
    """
    from scipy import stats

    x = np.asarray(x).ravel()
    y = np.asarray(y).ravel()
    if x.size == 0 or y.size == 0:
        raise ValueError(f"x and y must be non-empty, got sizes {x.size} and {y.size}")
    values, pooled = np.unique(np.concatenate([x, y]), return_counts=True)
    common = values[pooled >= min_count]
    table = []
    for s in (x, y):
        per = np.searchsorted(common, s)
        hit = (per < common.size) & (common[np.minimum(per, common.size - 1)] == s)
        row = np.bincount(per[hit], minlength=common.size).tolist() + [
            int(np.count_nonzero(~hit))
        ]
        table.append(row)
    table = np.array(table)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 0.0, 0, 1.0
    res = stats.chi2_contingency(table, correction=False)
    return float(res.statistic), int(res.dof), float(res.pvalue)
