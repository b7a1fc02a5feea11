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
* Part VI's privacy profiles: :func:`pld_bracket` builds Google's ``dp_accounting`` privacy loss
  distributions of one pair of true values from dpbook's exact laws, one below and one above the pair's
  hockey-stick divergence, to compose them with ``dp_accounting``'s own composition.
* Part VI's bounded noise: :func:`peer_gaussian_scale` reads the σ of diffprivlib's ``Gaussian`` and
  ``GaussianAnalytic``, to audit with the exact Gaussian profile.

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
    "peer_gaussian_scale",
    "peer_scale",
    "pld_bracket",
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


def peer_gaussian_scale(mech):
    """The standard deviation σ a diffprivlib Gaussian mechanism's sampler uses (read from the mechanism).

    ``Gaussian``: the classical ``Δ √(2 log(1.25/δ))/ε`` (Dwork & Roth, Theorem A.1; diffprivlib refuses
    ``ε > 1``); ``GaussianAnalytic``: its own search for Balle & Wang's analytic σ.  Compare with
    :func:`dpbook.analytic_gaussian_scale` and audit with :func:`dpbook.gaussian_delta`.

    Parameters
    ----------
    mech : diffprivlib.mechanisms.Gaussian
        An instance of ``Gaussian`` or ``GaussianAnalytic``.

    Returns
    -------
    float
    """
    _peer(mech, "Gaussian")
    return float(mech._scale)


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


def _pld_masses(mech, q, edges, atoms):
    """``P_q`` of the continuous part on each ``(edges[i], edges[i + 1]]`` (cdf differences on the left of
    the median, sf differences on the right: no cancellation in either tail), the atoms inside taken out."""
    cdf, sf = mech.cdf(edges, q), mech.sf(edges, q)
    mass = np.where(cdf[1:] <= 0.5, cdf[1:] - cdf[:-1], sf[:-1] - sf[1:])
    for t, m in atoms.items():
        mass = np.where((edges[:-1] < t) & (t <= edges[1:]), mass - m, mass)
    return np.maximum(mass, 0.0)


def _pld_bins(mech, desc, q1, q2, bins, tail):
    """``[(edges, is_tail)]``: each piece of the density's range, cut to the outputs where either law has
    more than ``tail`` in a tail, split evenly, with half the bins again within 4 scales of the centres."""
    lo = float(min(mech.ppf(tail, q1), mech.ppf(tail, q2)))
    hi = float(max(mech.isf(tail, q1), mech.isf(tail, q2)))
    cut = [(max(a, lo), min(b, hi)) for a, b in desc.pieces]
    cut = [(a, b) for a, b in cut if a < b]
    total = sum(b - a for a, b in cut)
    centres = [float(desc.center(np.array(q, dtype=float))) for q in (q1, q2)]
    s = float(desc.scale(np.array(q1, dtype=float)))
    near = (min(centres) - 4 * s, max(centres) + 4 * s)
    out = []
    for a, b in cut:
        edges = np.linspace(a, b, max(8, round(bins / 2 * (b - a) / total)) + 1)
        x, y = max(a, near[0]), min(b, near[1])
        if x < y:
            edges = np.union1d(edges, np.linspace(x, y, bins // (2 * len(cut)) + 1))
        out.append((edges, False))
    if desc.pieces[0][0] < lo:
        out.append((np.array([-math.inf, lo]), True))
    if desc.pieces[-1][1] > hi:
        out.append((np.array([hi, math.inf]), True))
    return out


def pld_bracket(mech, q1, q2, *, bins=2000, h=1e-3, tail=1e-18):
    """``dp_accounting``'s privacy loss distributions of the pair ``(M(q1), M(q2))``, built from dpbook's laws.

    Returns ``(optimistic, pessimistic)``, two ``PrivacyLossDistribution`` objects of Google's
    ``dp_accounting`` whose δ(ε) (``get_delta_for_epsilon``) bracket the pair's hockey-stick divergence
    :func:`dpbook.pair_profile`, and which compose with ``self_compose(k)``: the composition of the pair
    with itself ``k`` times, bracketed the same way (pass ``tail_mass_truncation=0.0`` to the optimistic
    one, which must not add mass).  The law is read from dpbook (``cdf``, ``sf``, ``logpdf``, ``atoms``),
    never from ``dp_accounting``'s own mechanisms:

    * *optimistic*: the outputs cut into bins (each piece of the density's range split evenly, two tail
      bins beyond the outputs of probability ``tail``, each atom alone), each bin a loss
      ``log P1(B)/P2(B)`` rounded down to the grid ``h``: binning is a post-processing, so its δ is at
      most the pair's;
    * *pessimistic*: each bin's loss is the larger of the log-ratio's values at its ends, rounded up (the
      log-ratio is monotone in the output for a kernel of one scale, conditioned or clamped), and the
      tail bins get an infinite loss: its δ is at least the pair's.

    ``tests/audit/test_profile_peer.py`` checks the same construction against :func:`dpbook.pair_profile`.

    Parameters
    ----------
    mech : Mechanism
        A continuous or mixed family whose :func:`dpbook.describe` gives its pieces (a kernel of one scale).
    q1, q2 : float
        The two true values.
    bins : int, keyword-only
        Bins of the outputs (about; half again near the two centres).
    h : float, keyword-only
        ``dp_accounting``'s loss grid.
    tail : float, keyword-only
        The probability beyond which outputs go to the two tail bins.

    Returns
    -------
    tuple of dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    from dpbook import describe

    pld = pld_module.PrivacyLossDistribution
    q1, q2 = check.finite("q1", q1), check.finite("q2", q2)
    h = check.positive("h", h)
    desc = describe(mech)
    a1 = {float(t): float(m) for t, m in mech.atoms(q1)}
    a2 = {float(t): float(m) for t, m in mech.atoms(q2)}
    opt, pess = {}, {}
    inf_opt = inf_pess = 0.0

    def add(pmf, key, mass):
        pmf[key] = pmf.get(key, 0.0) + mass

    for t, m1 in a1.items():  # each atom with its exact loss, in both
        m2 = a2.get(t, 0.0)
        if m1 == 0:
            continue
        if m2 == 0:
            inf_opt += m1
            inf_pess += m1
            continue
        loss = math.log(m1) - math.log(m2)
        add(opt, math.floor(loss / h), m1)
        add(pess, math.ceil(loss / h), m1)
    for edges, is_tail in _pld_bins(mech, desc, q1, q2, int(bins), tail):
        p1, p2 = _pld_masses(mech, q1, edges, a1), _pld_masses(mech, q2, edges, a2)
        if is_tail:
            inf_pess += float(p1.sum())
        else:
            ends = mech.logpdf(edges, q1) - mech.logpdf(edges, q2)
            for m, top in zip(p1, np.maximum(ends[:-1], ends[1:])):
                if m > 0:
                    add(pess, math.ceil(top / h), float(m))
        for m, m2 in zip(p1.tolist(), p2.tolist()):
            if m == 0:
                continue
            if m2 == 0:
                inf_opt += m
            else:
                add(opt, math.floor((math.log(m) - math.log(m2)) / h), m)
    return (
        pld.create_from_rounded_probability(
            opt, inf_opt, h, pessimistic_estimate=False
        ),
        pld.create_from_rounded_probability(
            pess, inf_pess, h, pessimistic_estimate=True
        ),
    )
