"""An exact auditor of pure ε-differential privacy for one-dimensional mechanisms.

A mechanism ``M`` is ε-DP for sensitivity ``Δ`` when ``P(M(q1) ∈ S) <= e^ε P(M(q2) ∈ S)`` for every
event ``S`` and every pair of true values with ``|q1 - q2| <= Δ``.  The smallest such ε, the
*privacy loss*, is the supremum over pairs of the essential supremum of the log-likelihood ratio
with respect to a common dominating measure (Lebesgue measure plus counting measure on the atoms):
density is compared with density, point mass with point mass, and a density or atom under ``q1``
where ``q2`` has none makes the loss infinite.

The auditor knows nothing about any family.  It asks the mechanism for a
:class:`~dpbook.PrivacyDescription` (its method ``privacy_description()``): in an output coordinate
``t`` a Laplace-shaped (or Gaussian) density on fixed pieces, point masses at fixed places, and where
the worst case can sit.  For one pair the log-ratio is then piecewise linear in ``t`` with kinks only at
the two centres and the ends of the pieces: its supremum is at a kink or at an infinite end, where it is
``+inf`` exactly when the outward slope ``1/s(q2) - 1/s(q1)`` is positive.  :func:`pair_loss` evaluates
this in closed form; no grid over outputs is involved.  For the supremum over pairs see
:func:`privacy_report`.

The auditor settles a disagreement between the papers: truncation at ``b = Δ/ε`` (Liu 2019, Def. 2(a))
is not ε-DP; its loss is ``ε + log(2 - e^{-ε})``, below McGlinchey–Mason's Prop. 2 bound ``2ε``;
:func:`dpbook.truncated_scale` gives the smallest uniform scale that is ε-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _identity
from ..audit.description import PrivacyDescription
from ..mechanism import Mechanism
from ..neighbours import TRUE_VALUES, Neighbours
from ._discrete import discrete_pair_loss, discrete_report
from .description import DiscreteDescription

__all__ = ["PrivacyReport", "describe", "pair_loss", "privacy_loss", "privacy_report"]


_KINDS = ("density", "atom", "support", "tail")


_DENSITY, _ATOM, _SUPPORT, _TAIL = range(4)


_POST = "upper bound (post-processing)"


#: pair evaluations (times pieces) a request may need before it is refused (about a minute on a slow core)
_MAX_PAIRS = 2**24


#: ``exact=True`` only when ``slack <= _EXACT * epsilon``: the loss is known to 12 digits
_EXACT = 1e-12


#: pairs evaluated at once (bounded memory)
_CHUNK = 2**16


#: evaluations the certified edge search may spend before it reports its upper bound instead
_BUDGET = 2**17


#: pair evaluations the certified search over the band may spend before it reports the bound it reached
_BOX_BUDGET = 2**17


#: the time and memory a request may take before it is refused
_MAX_SECONDS = 60.0


#: measured cost of one starting point of the edge search (a slow core; benchmarks/bench_audit.py)
_EDGE_SECONDS = 4e-5


_EDGE_BYTES = 400


@dataclass(frozen=True)
class PrivacyReport:
    """Where the worst case of a privacy audit is attained.

    Attributes
    ----------
    epsilon : float
        The privacy loss (``math.inf`` when unbounded).
    q1, q2 : float
        A worst pair of true values: ``epsilon = sup_S log P(M(q1) ∈ S)/P(M(q2) ∈ S)`` (both ``inf``
        when the loss grows without bound only as the pair runs off to infinity).
    output : float
        Where the worst log-likelihood ratio is attained: an output ``x``, the location of a point
        mass, or ``±inf`` when the ratio grows without bound in a tail (``nan`` if not applicable).
    kind : str
        ``'density'`` (ratio of densities at ``output``), ``'atom'`` (ratio of point masses),
        ``'support'`` (``output`` is possible under ``q1`` but not under ``q2``), ``'tail'``
        (the log-ratio of densities grows without bound towards ``output = ±inf``), or
        ``'upper bound (post-processing)'``.
    exact : bool
        True when ``epsilon`` is the loss itself to 12 digits (``slack <= 1e-12 epsilon``); False when it is
        an upper bound only (a post-processing, a rounding allowance wider than that, a certified search
        that ran out of budget, or a search over pairs that certifies an upper bound only: see
        :func:`privacy_report`).  ``epsilon`` is never below the loss.
    slack : float
        How far ``epsilon`` may lie above the loss: the loss is in ``[epsilon - slack, epsilon]`` (``slack``
        is ``epsilon`` minus a lower bound of the loss of the reported pair: the rounding allowance its
        log-ratio carries, plus the gap of a search over pairs; ``epsilon`` for a post-processing, whose
        loss the base's only bounds).
    """

    epsilon: float
    q1: float
    q2: float
    output: float
    kind: str
    exact: bool = True
    slack: float = 0.0

    @property
    def bounded(self):
        """Whether the loss is finite."""
        return math.isfinite(self.epsilon)


def describe(mechanism):
    """The :class:`PrivacyDescription` of ``mechanism``: what it says about its own law (an integer-valued
    family returns a :class:`~dpbook.DiscreteDescription`).

    Raises ``ValueError`` naming ``mechanism`` when it is not a :class:`dpbook.Mechanism` (the auditor knows
    a family only through the description every mechanism gives).
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(
            f"mechanism must be a dpbook.Mechanism, e.g. dpbook.Laplace(1.0), got {mechanism!r}"
        )
    desc = mechanism.privacy_description()

    if not isinstance(desc, (PrivacyDescription, DiscreteDescription)):
        raise TypeError(
            f"{type(mechanism).__name__}.privacy_description() must return a PrivacyDescription "
            f"or a DiscreteDescription, got {type(desc).__name__}"
        )
    return desc


def pair_loss(mechanism, q1, q2, *, window=None):
    """The exact privacy loss between two true values: ``sup_S log P(M(q1) ∈ S)/P(M(q2) ∈ S)``.

    The supremum runs over every event ``S`` of outputs (inside ``window`` when given), so it is
    the largest log-ratio of densities, or of point masses, and ``inf`` when ``M(q1)`` can land where
    ``M(q2)`` cannot or when the log-ratio of densities grows without bound in a tail.  Computed
    in closed form from the mechanism's :class:`PrivacyDescription` (see the module docstring).
    Not symmetric: swap the arguments for the other direction.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism with a ``privacy_description()`` whose law it describes exactly (not a general
        post-processing, for which only :func:`privacy_report`'s upper bound is available).
    q1, q2 : float or array_like
        True values (broadcast together).
    window : (float, float), optional
        Only outputs in this closed interval are considered.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from dpbook import Truncated
    >>> round(pair_loss(Truncated(1.0), 0.0, 1.0), 6)  # 1 + log(2 - 1/e)
    1.48988
    """
    desc = describe(mechanism)
    if not isinstance(
        desc, PrivacyDescription
    ):  # integer outputs: the exact maximum over them
        loss = discrete_pair_loss(desc, q1, q2, window, type(mechanism).__name__)
        return float(loss) if loss.ndim == 0 else loss
    if not desc.exact:
        raise NotImplementedError(
            f"the law of {type(mechanism).__name__} is not described exactly; "
            "use privacy_report for an upper bound"
        )
    q1, q2 = check.finite_array("q1", q1), check.finite_array("q2", q2)
    for name, q in (("q1", q1), ("q2", q2)):
        if desc.positive and (q <= 0).any():
            raise ValueError(
                f"{name} must be > 0 for {type(mechanism).__name__}, got {q!r}"
            )
    size = np.broadcast(q1, q2).size
    if size * (1 if desc.uniform else len(desc.pieces)) > _MAX_PAIRS:
        raise ValueError(
            f"q1, q2: {size} pairs on {len(desc.pieces)} pieces would take more than a minute; "
            "pass fewer pairs"
        )
    if _moving_support(desc):
        loss = _moving_support_pair_loss(desc, q1, q2, window, type(mechanism).__name__)
        return float(loss) if loss.ndim == 0 else loss
    window = _window(window, desc)
    loss = _pair(desc, q1, q2, window)[0]
    return float(loss) if loss.ndim == 0 else loss


def privacy_loss(mechanism, sensitivity, *, domain=None, window=None, neighbours=None):
    """The pure-DP privacy loss of ``mechanism`` for ``sensitivity``: the smallest ε it satisfies.

    This is ``privacy_report(...).epsilon``; see :func:`privacy_report` for the parameters and the
    method.

    >>> from dpbook import Laplace
    >>> privacy_loss(Laplace(2.0), 1.0)
    0.5
    """
    return privacy_report(
        mechanism, sensitivity, domain=domain, window=window, neighbours=neighbours
    ).epsilon


def privacy_report(
    mechanism, sensitivity, *, domain=None, window=None, neighbours=None
):
    """Audit ``mechanism``: the worst log-likelihood ratio over neighbouring true values and outputs.

    ``epsilon = sup log P(M(q1) ∈ S)/P(M(q2) ∈ S)`` over ``q1, q2`` in ``domain`` that are
    neighbours and over every event ``S`` (densities and point masses, outputs arbitrarily far out),
    with the pair and the output where it is attained.

    Method.  For one pair the supremum over outputs is exact (:func:`pair_loss`).  Over pairs, in
    this order:

    * The family says where the worst pair sits (``worst_pairs`` of its description: Laplace, BIT,
      the translated ramp, truncation, normalization to one interval, restriction of a Laplace base,
      log-Laplace; each proves it where it defines it): those pairs are evaluated exactly.
    * Families of one scale with a Laplace kernel (a normalization to a union of intervals; any of the
      above when ``window`` cuts their outputs).  For a fixed output ``t`` the loss of a pair is
      ``h(q2) - h(q1)`` with ``h(q) = |t - m(q)|/s + log N(q)``, which falls and then rises (``|N'| <= N/s``),
      its bottom where the centre is ``t``; an atom's ``-log mass`` is monotone.  For one pair the worst
      output is the lowest or the highest one (or an atom), so for fixed ``q1`` the best ``q2`` is an end of
      its range: the worst pair is on the edge ``(u, u ± Δ)``, or pairs a bottom with an end of the domain
      (finitely many pairs, evaluated exactly).  The supremum over ``u`` is a certified branch and bound: on
      each cell of ``u`` the loss is at most the larger of its end values plus ``K h^2/8``, with ``K`` the
      family's curvature bound (``curvature``; else a Lipschitz bound ``L h/2``; with neither the auditor
      refuses), the kinks being cell ends; cells are halved until none can hold more than the best value
      found plus ``1e-10 (1 + |ε|)``.  The report gives the largest bound of any discarded cell (never below
      the truth) with ``slack`` its distance to the best pair, ``exact=True``.  Beyond ``4096`` length scales
      from every landmark the law only translates (its normalizer is at its limit to ``e^{-4096}``).  If the
      budget of ``2^17`` evaluations runs out first, the bound reached is reported with ``exact=False``.
    * A Gaussian kernel on one interval (the restriction of a normal base): for fixed ``t``, ``h`` is convex
      (``h'' = Var/s^4``), so the worst pair is ``(argmin h, e)`` within ``Δ`` of a domain end ``e``, found by
      golden section with its error bound added: exact.  Unbounded outputs above: any pair ``q1 > q2`` has an
      infinite loss (the tail).  With a window and ``hi = inf`` the loss grows without bound as both true
      values run off (``q1 = q2 = inf``); with ``lo = -inf`` it increases to the limit ``(t - c) Δ/s^2``
      (``q1 = q2 = -inf``).
    * A scale that varies with ``q`` (Croft, Sack & Shi): without a window a pair whose scales differ has an
      infinite loss, which one pair of a starting grid witnesses.  With a window, a certified branch and
      bound over cells of ``(q1, q2 - q1)`` on a finite domain: the family's ``enclosure`` bounds centre, scale
      and log-normalizer on a cell, which bounds the log-ratio at each kind of worst output (an end of a
      piece, either centre; a ``linear_outputs`` theorem exactly); cells are split until none can exceed the
      best pair by ``2e-13 (1 + |ε|)`` or ``2^17`` evaluations are spent.  ``epsilon`` is the largest bound of
      any discarded cell: never below the truth; ``exact=False`` and ``slack`` says by how much it may be
      above (``4e-13`` for Croft near the data, in about a second).
    * A post-processing whose law is not described (``PostProcessed(φ)``, ``StepPostProcessed``)
      describes its Laplace base with ``exact=False``: the base's loss is an upper bound by the
      post-processing property (``kind='upper bound (post-processing)'``, ``exact=False``).

    Rounding.  Every log-ratio carries an allowance for its rounding (a few ulps of its terms; the
    family's normalizer ratio says how accurate it is), so reports err on the high side; close pairs
    use ratios written without cancellation (``log1p``/``expm1``), so ``ε = 1e-16`` keeps all its digits.
    A domain so far out that true values ``Δ`` apart are not ``Δ`` apart in floats (to 10 digits) is
    refused with a ``ValueError`` naming ``sensitivity``.

    Resources.  A request that would need more than about 1 GiB of memory or a minute is refused, before
    anything is allocated, with a ``ValueError`` that says what was asked, its estimated cost and the limit
    (an edge search from more than about 1.4 million starting points, e.g. a normalization to 57,000
    pieces; a search over the band whose starting grid exceeds ``2^24`` evaluations; :func:`pair_loss` on
    more than ``2^24`` pairs); a finite loss too large for a float (``Δ/b > 1.8e308``) raises one too.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism with a ``privacy_description()`` (see :func:`describe`).
    sensitivity : float
        ``Δ > 0``: true values at most ``Δ`` apart are neighbours (see ``neighbours``).
    domain : (float, float), optional
        The closed interval of true values (ends may be infinite); default ``mechanism.domain``.
    window : (float, float), optional
        Only outputs in this closed interval are considered.  Croft's guarantee holds near the
        data; the loss beyond it is infinite.
    neighbours : {'additive', 'log', 'relative'}, optional
        How ``sensitivity`` is read: ``|q1 - q2| <= Δ`` (``'additive'``); ``|log q1 - log q2| <= K``
        (``'log'``); or McGlinchey–Mason assumption (10), ``|q1 - q2| <= K min(q1, q2)``
        (``'relative'``, which is ``'log'`` with ``log(1 + K)``).  The last two are offered by families
        that describe themselves in ``log q`` (``LogLaplace``, whose default is ``'log'``).

    Returns
    -------
    PrivacyReport

    Examples
    --------
    >>> from dpbook import Truncated
    >>> r = privacy_report(Truncated(1.0), 1.0)
    >>> round(r.epsilon, 6), r.q1, r.q2, r.output, r.kind
    (1.48988, 0.0, 1.0, 0.0, 'density')
    """
    # at the ends of the doubles, terms overflow to inf or divide by a scale whose square underflowed: those
    # are the limits the search handles (an infinite loss, or the ValueError for a finite loss beyond floats)
    with np.errstate(over="ignore", divide="ignore"):
        return _privacy_report(mechanism, sensitivity, domain, window, neighbours)


def _privacy_report(mechanism, sensitivity, domain, window, neighbours):
    if isinstance(found := describe(mechanism), DiscreteDescription):
        report = PrivacyReport(
            **discrete_report(
                found,
                sensitivity,
                mechanism.domain if domain is None else domain,
                window,
                neighbours,
                type(mechanism).__name__,
            )
        )
        if (
            not found.exact
        ):  # the base of a post-processing: its loss bounds the release's
            report = replace(
                report, output=math.nan, kind=_POST, exact=False, slack=report.epsilon
            )
        return report
    delta = check.positive("sensitivity", sensitivity)
    desc = describe(mechanism)
    name = type(mechanism).__name__
    if neighbours is None:
        neighbours = desc.neighbours
    neighbours = Neighbours.parse("neighbours", neighbours, TRUE_VALUES)
    if neighbours != "additive" and desc.log_q is None:
        raise NotImplementedError(
            f"neighbours={neighbours!r} needs a family described in log q; {name} is not"
        )
    lo, hi = _interval("domain", mechanism.domain if domain is None else domain)
    exact = desc.exact
    # bounded noise: an infinite loss for distinct true values
    if _moving_support(desc):
        report = _moving_support_report(desc, delta, lo, hi, window, name)
        if not exact:
            report = replace(
                report, output=math.nan, kind=_POST, exact=False, slack=math.inf
            )
        return report

    if desc.positive:
        if hi <= 0:
            raise ValueError(f"domain must reach above 0 for {name}, got {domain!r}")
        if neighbours == "additive" and lo <= 0:
            return PrivacyReport(math.inf, 0.0, min(delta, hi), 0.0, "support")
    if neighbours != "additive":
        if lo < 0:
            raise ValueError(
                f"domain must lie in [0, inf) for neighbours={neighbours!r}, got {domain!r}"
            )
        if neighbours == "relative":
            delta = math.log1p(delta)
        desc = desc.log_q
        with np.errstate(divide="ignore"):
            lo, hi = math.log(lo) if lo > 0 else -math.inf, math.log(hi)
    window = _window(window, desc)
    cut = _cuts(desc, window)
    if desc.worst_pairs is not None and not cut:
        pairs = desc.worst_pairs(lo, hi, delta)
        _separations(pairs, delta, sensitivity)
        report = _best_of(desc, pairs, window, delta)
    elif desc.uniform and desc.shape == "laplace":
        _resolution(delta, lo, hi, desc, sensitivity)
        report = _edge_search(desc, delta, lo, hi, window, name)
    elif desc.shape == "gauss" and len(desc.pieces) == 1 and not desc.atoms:
        _resolution(delta, lo, hi, desc, sensitivity)
        report = _gauss_search(desc, delta, lo, hi, window)
    else:
        _resolution(delta, lo, hi, desc, sensitivity)
        report = _box_search(desc, delta, lo, hi, window, name)
    if (
        report.epsilon < 0
    ):  # a window holding no output of either law: a pair of equal true values has loss 0
        report = PrivacyReport(0.0, report.q1, report.q1, math.nan, _KINDS[_DENSITY])
    if neighbours != "additive":
        report = replace(report, q1=_exp(report.q1), q2=_exp(report.q2))
    if (
        report.epsilon == math.inf
        and report.kind in ("density", "atom")
        and math.isfinite(report.q1)
    ):
        raise ValueError(
            f"the privacy loss of {name} for sensitivity={sensitivity!r} is finite but exceeds the "
            "float range (about sensitivity/scale > 1.8e308)"
        )
    if report.exact and not report.slack <= _EXACT * abs(report.epsilon):
        report = replace(
            report, exact=False
        )  # the rounding allowance or the search's gap is too wide to call exact
    if not exact:
        report = replace(
            report, output=math.nan, kind=_POST, exact=False, slack=report.epsilon
        )
    return report


# --- one pair --------------------------------------------------------------------------------------


def _window(window, desc):
    """The output window in the family's coordinate ``t``."""
    if window is None:
        return (-math.inf, math.inf)
    lo, hi = _interval("window", window)
    if desc.log_output:
        lo = math.log(lo) if lo > 0 else -math.inf
        hi = math.log(hi) if hi > 0 else -math.inf
        if hi == -math.inf:
            raise ValueError(
                f"window must reach above 0 for a positive mechanism, got {window!r}"
            )
    return lo, hi


def _log_norm_ratio(desc, q1, q2):
    """``(log N(q2) - log N(q1), a bound on its rounding error)``."""
    if desc.log_norm_ratio is not None:
        out = desc.log_norm_ratio(q1, q2)
        if isinstance(out, tuple):
            return np.asarray(out[0], dtype=float), np.asarray(out[1], dtype=float)
        out = np.asarray(out, dtype=float)
        return out, 16 * np.spacing(np.abs(np.nan_to_num(out, posinf=0.0, neginf=0.0)))
    if desc.log_norm is not None:
        l1, l2 = (
            np.asarray(desc.log_norm(q1), dtype=float),
            np.asarray(desc.log_norm(q2), dtype=float),
        )
        with np.errstate(invalid="ignore"):
            err = 4 * (
                np.spacing(np.abs(np.nan_to_num(l1, neginf=0.0)))
                + np.spacing(np.abs(np.nan_to_num(l2, neginf=0.0)))
            )
        return l2 - l1, err
    return np.zeros(np.shape(q1)), np.zeros(np.shape(q1))


def _pair(desc, q1, q2, window):
    """``sup_S log P1(S)/P2(S)`` for arrays of pairs: (loss, kind code, output in t, lower bound); chunked.

    ``loss`` carries every rounding allowance, so it is never below the truth; ``lower bound`` is the same
    computation with the allowances subtracted, never above it: the truth lies between the two.
    """
    q1, q2 = np.broadcast_arrays(
        np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    )
    wlo, whi = window
    pieces = sorted((max(a, wlo), min(b, whi)) for a, b in desc.pieces)
    window = (window, [(a, b) for a, b in pieces if a < b])
    if q1.size <= _CHUNK:
        return _pair_block(desc, q1, q2, window)
    shape = q1.shape
    parts = [
        _pair_block(desc, a, b, window)
        for a, b in zip(
            np.array_split(q1.ravel(), -(-q1.size // _CHUNK)),
            np.array_split(q2.ravel(), -(-q1.size // _CHUNK)),
        )
    ]
    return tuple(np.concatenate([p[i] for p in parts]).reshape(shape) for i in range(4))


def _pair_block(desc, q1, q2, window):
    shape = q1.shape
    m1, m2 = (
        np.broadcast_to(desc.center(q1), shape),
        np.broadcast_to(desc.center(q2), shape),
    )
    s1, s2 = (
        np.broadcast_to(desc.scale(q1), shape),
        np.broadcast_to(desc.scale(q2), shape),
    )
    const, const_err = (
        np.broadcast_to(v, shape) for v in _log_norm_ratio(desc, q1, q2)
    )
    if not desc.uniform:
        const = const + (np.log(s2) - np.log(s1))
    best = np.full(shape, -np.inf)
    floor = np.full(shape, -np.inf)  # the largest lower bound of any candidate
    kind = np.zeros(shape, dtype=int)
    where = np.full(shape, np.nan)

    def offer(value, code, t, nominal=None):
        """A candidate: ``value`` is its log-ratio rounded upwards, ``nominal`` the plain float computation
        (the allowance ``value - nominal`` bounds the rounding error, so ``nominal - allowance`` is below the
        truth)."""
        better = value > best
        best[better] = value[better]
        kind[better] = code
        where[better] = np.broadcast_to(t, shape)[better]
        if nominal is None:
            below = value
        else:
            nominal = np.broadcast_to(nominal, shape)
            with np.errstate(
                invalid="ignore", over="ignore"
            ):  # infinite candidates keep their value
                below = np.where(
                    np.isfinite(value) & np.isfinite(nominal),
                    nominal - (value - nominal),
                    value,
                )
                below = np.nextafter(
                    below - 2 * np.spacing(np.abs(np.nan_to_num(below))), -np.inf
                )
        floor[...] = np.maximum(floor, np.where(np.isnan(below), -np.inf, below))

    (wlo, whi), pieces = window
    with np.errstate(over="ignore", invalid="ignore"):
        if pieces and desc.shape == "gauss":
            # equal variances: the log-ratio is linear in t, largest at an end of the support
            low, high = pieces[0][0], pieces[-1][1]
            for t, outward in ((low, -1.0), (high, 1.0)):
                if math.isfinite(t):
                    # (m1 - m2)((t - m1) + (t - m2))/(2 s^2), s^2 not formed (it underflows); seven
                    # roundings of the product, an ulp of each centre carried through both factors
                    a = (m1 - m2) / s1
                    b = ((t - m1) + (t - m2)) / (2 * s1)
                    r = a * b + const
                    centre_err = (np.spacing(np.abs(m1)) + np.spacing(np.abs(m2))) / s1
                    err = (
                        8
                        * np.spacing(
                            np.abs(np.nan_to_num(a * b, posinf=0.0, neginf=0.0))
                        )
                        + np.nan_to_num(
                            centre_err * (np.abs(a) + np.abs(b)), posinf=0.0, nan=0.0
                        )
                        + np.nan_to_num(const_err, posinf=0.0)
                        + 2
                        * np.spacing(np.abs(np.nan_to_num(r, posinf=0.0, neginf=0.0)))
                    )
                    offer(r + err, _DENSITY, t, r)
                else:
                    offer(np.where(outward * (m1 - m2) > 0, np.inf, -np.inf), _TAIL, t)
        elif pieces and desc.uniform:
            # one scale: |t - m2| - |t - m1| is monotone in t, so the supremum over the support is at
            # its lowest or highest point (where t runs off to infinity the ratio is constant beyond
            # the centres: evaluate it there)
            low, high = pieces[0][0], pieces[-1][1]
            t_lo = (
                low
                if math.isfinite(low)
                else np.minimum(np.minimum(m1, m2), pieces[0][1])
            )
            t_hi = (
                high
                if math.isfinite(high)
                else np.maximum(np.maximum(m1, m2), pieces[-1][0])
            )
            centre_err = (
                0.0
                if desc.center is _identity
                else np.spacing(np.abs(m1)) + np.spacing(np.abs(m2))
            )
            for t in (t_lo, t_hi):
                if (
                    desc.center_shift is not None
                ):  # centre q + c exactly: distances (t - c) - q, nothing rounded away
                    t_c, t_err = _two_diff(
                        np.asarray(t, dtype=float), float(desc.center_shift)
                    )
                    upper, nominal = _upper_log_ratio(
                        t_c, q1, q2, s1, const, const_err, 0.0, t_err
                    )
                else:
                    upper, nominal = _upper_log_ratio(
                        t, m1, m2, s1, const, const_err, centre_err
                    )
                offer(upper, _DENSITY, t, nominal)
        else:
            for a, b in pieces:
                for t in [v for v in (a, b) if math.isfinite(v)] + [
                    np.clip(m1, a, b),
                    np.clip(m2, a, b),
                ]:
                    d1, d2 = np.abs(t - m1) / s1, np.abs(t - m2) / s2
                    r = d2 - d1 + const
                    offer(r + _rounding(r, const_err, (d1, d2), 1.0), _DENSITY, t, r)
                for end, outward in ((b, 1.0), (a, -1.0)):
                    if math.isinf(end):
                        offer(
                            np.where(1 / s2 - 1 / s1 > 0, np.inf, -np.inf), _TAIL, end
                        )
    for atom in desc.atoms:
        t, logmass = atom[:2]
        if wlo <= t <= whi:
            l1, l2 = (
                np.broadcast_to(logmass(q1), shape),
                np.broadcast_to(logmass(q2), shape),
            )
            missing = (l2 == -np.inf) & (l1 > -np.inf)
            with np.errstate(invalid="ignore"):
                if (
                    len(atom) > 2
                ):  # an accurate ratio, with its own error bound (or a few ulps of itself)
                    out = atom[2](q1, q2)
                    diff, err = (
                        out
                        if isinstance(out, tuple)
                        else (
                            out,
                            4
                            * np.spacing(
                                np.abs(
                                    np.nan_to_num(
                                        np.asarray(out, dtype=float),
                                        posinf=0.0,
                                        neginf=0.0,
                                    )
                                )
                            ),
                        )
                    )
                    diff, err = (
                        np.broadcast_to(diff, shape),
                        np.broadcast_to(err, shape),
                    )
                    plain = diff
                    diff = np.where(err > 0, np.nextafter(diff + err, np.inf), diff)
                else:
                    plain = l1 - l2
                    diff = (
                        l1 - l2 + 4 * (np.spacing(np.abs(l1)) + np.spacing(np.abs(l2)))
                    )
                r = np.where(l1 == -np.inf, -np.inf, np.where(missing, np.inf, diff))
            offer(
                np.where(missing, -np.inf, r),
                _ATOM,
                t,
                np.where(np.isfinite(r), plain, r),
            )
            offer(np.where(missing, np.inf, -np.inf), _SUPPORT, t)
    best[q1 == q2] = 0.0  # the same law: no rounding allowance needed
    floor[q1 == q2] = 0.0
    return best, kind, where, np.minimum(floor, best)


def _two_diff(a, b):
    """``(a - b, e)`` with ``a - b = (a - b)_float + e`` exactly (Knuth)."""
    d = a - b
    bb = d - a
    return d, (a - (d - bb)) - (b + bb)


def _two_prod_error(a, b):
    """The exact rounding error ``a*b - fl(a*b)`` (Dekker, with Veltkamp's split)."""

    def split(x):
        c = 134217729.0 * x
        hi = c - (c - x)
        return hi, x - hi

    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _upper_log_ratio(t, m1, m2, s, const, const_err, centre_err, t_err=0.0):
    """``(|t - m2| - |t - m1|)/s + const``, rounded upwards (exact results stay exact, others move up), and the
    same without the rounding allowance: ``(upper, nominal)``.

    Every subtraction's rounding error is recovered exactly (``_two_diff``) and added back: ``|t - m| = |d| +
    sign(d) e`` exactly for ``t - m = d + e``, so the difference of distances is ``num + corr`` up to the
    rounding of that sum (a centre far out, ``t - m`` rounding to ``t``, keeps the ``Δ`` between the two
    centres); the division is rounded up by checking the residual ``r s - num`` exactly
    (``_two_prod_error``); ``const`` comes with its own bound.  ``t`` may carry an exact error ``t_err``
    (the output is ``t + t_err``), recovered the same way.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        d1, e1 = _two_diff(t, m1)
        d2, e2 = _two_diff(t, m2)
        num, e3 = _two_diff(np.abs(d2), np.abs(d1))
        e1, e2 = (
            e1 + t_err,
            e2 + t_err,
        )  # t - m = d + e exactly (to the rounding of these sums, bounded below)
        sign1 = np.where(d1 != 0, np.sign(d1), np.sign(e1))
        sign2 = np.where(d2 != 0, np.sign(d2), np.sign(e2))
        corr = (e3 + sign2 * e2) - sign1 * e1
        summed, e5 = _two_diff(num, -corr)  # num + corr = summed + e5 exactly
        # |d + e| = |d| + sign(d) e needs |e| <= |d| (or d = 0)
        fine = (
            np.isfinite(summed)
            & np.isfinite(e5)
            & ((np.abs(e1) <= np.abs(d1)) | (d1 == 0))
            & ((np.abs(e2) <= np.abs(d2)) | (d2 == 0))
        )
        big = np.abs(e1) + np.abs(e2) + np.abs(e3) + 2 * np.abs(t_err)
        corr_err = np.where(corr != 0, 4 * np.spacing(big), 0.0)
        err = (
            np.where(fine, np.abs(e5) + corr_err, big + 2 * np.spacing(np.abs(num)))
            + centre_err
        )
        num = np.where(fine, summed, num)
        nominal = num / s + const
        num = np.where(err > 0, np.nextafter(num + err, np.inf), num)
        r = num / s
        residual = (r * s - num) + _two_prod_error(r, s)
        r = np.where(
            (residual < 0) | ~np.isfinite(residual), np.nextafter(r, np.inf), r
        )
        total = r + const
        _, e4 = _two_diff(
            total, const
        )  # total - const = r_float + e4: e4 > 0 means total fell short
        short = (r - (total - const)) + 0.0
        inexact = (const_err > 0) | (short != 0) | (e4 != 0)
        total = np.where(inexact, np.nextafter(total + const_err, np.inf), total)
    return np.where(np.isnan(total), r + const, total), nominal


def _rounding(r, const_err, terms, scale):
    """A bound on the rounding error of a log-ratio ``r``: added, so the auditor errs on the high side.

    Each of ``terms`` (centres and distances, before division by ``scale``) carries half an ulp, the
    log-normalizer ratio its own bound ``const_err``, and the sums their own; ``np.nan_to_num`` keeps
    infinite terms out.
    """
    total = (
        sum(np.spacing(np.abs(np.nan_to_num(v, posinf=0.0, neginf=0.0))) for v in terms)
        / scale
    )
    return (
        total
        + np.nan_to_num(const_err, posinf=0.0)
        + 2 * np.spacing(np.abs(np.nan_to_num(r, posinf=0.0, neginf=0.0)))
    )


def _report(desc, q1, q2, window, exact=True):
    """The loss of one pair, its ``slack`` the rounding allowance it carries (the truth is within it)."""
    loss, kind, t, low = (float(v) for v in _pair(desc, q1, q2, window))
    if desc.log_output:
        t = _exp(t)
    slack = loss - low if math.isfinite(loss) else 0.0
    return PrivacyReport(
        loss, float(q1), float(q2), t, _KINDS[int(kind)], exact, max(slack, 0.0)
    )


def _best_of(desc, pairs, window, delta=None):
    """The worst of the pairs the family names: exact.

    A pair meant to be ``delta`` apart that rounding drew closer (true values far out) gets the loss it
    may have lost added back (``lipschitz`` times the shortfall), so the report errs on the high side; one that
    rounding drew further apart may have a loss above the truth by as much, which its ``slack`` says (with no
    ``lipschitz`` bound, the whole loss).
    """
    reports = []
    for a, b in pairs:
        r = _report(desc, a, b, window)
        gap = (delta - abs(b - a)) if delta is not None else 0.0
        if (
            0 < gap <= 2 * np.spacing(max(abs(a), abs(b)))
            and desc.lipschitz is not None
            and r.bounded
        ):
            r = replace(
                r,
                epsilon=r.epsilon + desc.lipschitz * gap,
                slack=r.slack + desc.lipschitz * gap,
            )
        elif gap < 0 and r.bounded:
            r = replace(
                r,
                slack=r.slack
                + (desc.lipschitz * -gap if desc.lipschitz is not None else r.epsilon),
            )
        reports.append(r)
    return max(reports, key=lambda r: r.epsilon)


# --- the search over pairs -------------------------------------------------------------------------


def _grid(desc, delta, lo, hi, extra=(), steps_per_mark=64, between=65):
    """Sorted true values in ``[lo, hi]`` resolving every regime of the loss, and their distance to the landmarks."""
    marks = [v for v in (lo, hi, *desc.landmarks, *extra) if math.isfinite(v)]
    base = sorted(
        {m + k * delta for m in marks for k in (-1, 0, 1)}
        | ({0.0} if not marks else set())
    )
    length = max(desc.length, 1e-300)
    geo = length * np.geomspace(1e-13, 4096, steps_per_mark)
    steps = np.concatenate([geo, delta * np.array([1 / 16, 1 / 8, 1 / 4, 1 / 2])])
    pts = [np.asarray(base)]
    for m in base:
        pts += [m - steps, m + steps]
    finite = np.array([v for v in base if lo <= v <= hi])
    for a, b in zip(finite[:-1], finite[1:]):
        pts.append(np.linspace(a, b, between))
    g = np.concatenate(pts)
    g = g[(g >= lo) & (g <= hi)]
    g = np.unique(np.concatenate([g, [v for v in (lo, hi) if math.isfinite(v)]]))
    anchors = np.array([v for v in base if lo <= v <= hi] or [g[np.argmin(np.abs(g))]])
    return g, _remoteness(g, anchors)


def _remoteness(g, anchors):
    anchors = np.sort(anchors)
    k = np.clip(np.searchsorted(anchors, g), 1, max(anchors.size - 1, 1))
    left = anchors[np.maximum(k - 1, 0)]
    right = anchors[np.minimum(k, anchors.size - 1)]
    return np.minimum(np.abs(g - left), np.abs(g - right))


def _bb_tol(v):
    """The branch and bound along the edge stops when no cell can exceed the best pair by this: a quarter of
    what a report may be off and still be called exact."""
    return 0.25 * _EXACT * abs(v) + 1e-300


def _tol(v):
    """Differences below this are rounding (pairs far out carry absolute errors of ~1e-12 |q|/s)."""
    return 1e-10 * (1.0 + abs(v))


def _first_max(values, remoteness):
    """Index of a maximum of ``values``, ties (to rounding) broken towards the landmarks."""
    top = values.max()
    near = (
        np.flatnonzero(values >= top - _tol(top))
        if math.isfinite(top)
        else np.flatnonzero(values == top)
    )
    return int(near[np.argmin(remoteness[near])])


def _cuts(desc, window):
    """Whether the window removes outputs the family can produce."""
    return any(a < window[0] or b > window[1] for a, b in desc.pieces) or any(
        not window[0] <= atom[0] <= window[1] for atom in desc.atoms
    )


def _window_marks(desc, window):
    """True values whose centre sits at a finite end of the window."""
    return [float(desc.to_q(w)) for w in window if math.isfinite(w)]


def _support_marks(desc, window):
    """True values whose centre sits at the lowest or highest output (kinks of the edge loss)."""
    pieces = [(max(a, window[0]), min(b, window[1])) for a, b in desc.pieces]
    pieces = [p for p in pieces if p[0] < p[1]]
    if not pieces:
        return []
    ends = (min(p[0] for p in pieces), max(p[1] for p in pieces))
    return [float(desc.to_q(t)) for t in ends if math.isfinite(t)]


def _edge_search(desc, delta, lo, hi, window, name):
    """The worst pair of a one-scale Laplace-shaped family: the edge ``(u, u ± Δ)`` by a certified branch and
    bound over ``u``, and the pairs ``(v, e)`` of a kink ``v`` and a domain end ``e`` (see :func:`privacy_report`)."""
    kinks = _support_marks(desc, window)
    extra = [
        (v, e)
        for v in kinks
        for e in (lo, hi)
        if math.isfinite(e) and lo <= v <= hi and 0 < abs(v - e) <= delta
    ]
    if hi - lo <= delta:
        return _best_of(desc, [(lo, hi), (hi, lo)] + extra, window)
    ulo, uhi = lo, hi - delta
    # estimated before anything is allocated: the starting cells are ~8 per landmark (each and its -Δ shift,
    # three points between neighbours); each costs ~_EDGE_SECONDS and ~_EDGE_BYTES while it is searched
    cells = 8 * (len(desc.landmarks) + len(kinks) + 2) + 48
    seconds, gib = (cells + _BUDGET) * _EDGE_SECONDS, cells * _EDGE_BYTES / 2**30
    if seconds > _MAX_SECONDS or gib > 1:
        raise ValueError(
            f"domain: the search along the edge over about {cells} starting true values "
            f"({len(desc.landmarks)} landmarks of {name}) would take about {seconds:.3g} s and "
            f"{gib:.3g} GiB, over the limit of {_MAX_SECONDS:g} s and 1 GiB; pass fewer pieces or a "
            "shorter domain"
        )
    grid, remote = _edge_grid(desc, delta, ulo, uhi, kinks)

    def g(u):
        u = np.atleast_1d(np.asarray(u, dtype=float))
        both = _pair(desc, np.r_[u, u + delta], np.r_[u + delta, u], window)[0]
        return np.maximum(both[: u.size], both[u.size :])

    values = g(grid)
    best = _first_max(values, remote)
    u_best, v_best = float(grid[best]), float(values[best])
    if not math.isfinite(v_best) or grid.size == 1:
        report = _edge_report(desc, u_best, delta, window, exact=True)
    else:
        bound, u_best, v_best = _branch_and_bound(
            desc, g, grid, values, delta, u_best, v_best, name
        )
        report = _edge_report(desc, u_best, delta, window, exact=True)
        if bound > report.epsilon:
            report = replace(
                report, epsilon=bound, slack=bound - report.epsilon + report.slack
            )
    if extra:
        other = _best_of(desc, extra, window)
        if other.epsilon > report.epsilon:  # the loss is this pair's, exactly
            report = other
    return report


def _edge_grid(desc, delta, lo, hi, kinks):
    """Starting cells for the branch and bound along the edge: the landmarks, their ``-Δ`` shifts and the
    kinks of the loss, three points between neighbours, and geometric steps out to ``4096`` length scales
    beyond the outermost (where the law only translates)."""
    marks = [v for v in (lo, hi) if math.isfinite(v)]
    marks += [
        m + k * delta
        for m in [*desc.landmarks, *kinks]
        if math.isfinite(m)
        for k in (-1, 0)
    ]
    base = np.unique(
        [v for v in marks if lo <= v <= hi]
        or [0.0 if lo <= 0.0 <= hi else (lo if math.isfinite(lo) else hi)]
    )
    length = max(desc.length, 1e-300)
    far = length * np.geomspace(1e-3, 4096, 24)
    pts = [base, base[0] - far, base[-1] + far]
    if base.size > 1:
        h = np.diff(base)
        pts += [base[:-1] + h * f for f in (0.25, 0.5, 0.75)]
    g = np.concatenate(pts)
    g = np.unique(g[(g >= lo) & (g <= hi)])
    return g, _remoteness(g, base)


def _edge_report(desc, u, delta, window, exact):
    up = _report(desc, u, u + delta, window, exact)
    down = _report(desc, u + delta, u, window, exact)
    return up if up.epsilon >= down.epsilon else down


def _branch_and_bound(desc, g, grid, values, delta, u_best, v_best, name):
    """Halve the cells of ``grid`` that may hold more than the best value; returns ``(bound, u, v)``.

    ``bound`` is the largest upper bound of any cell discarded on the way (or left open when the budget ran
    out), so the supremum of ``g`` lies in ``[v, max(v, bound)]``.
    """
    if desc.curvature is None and desc.lipschitz is None:
        raise NotImplementedError(
            f"{name}: the search along the edge needs the description's curvature or "
            "lipschitz bound to certify its answer"
        )
    left, right = grid[:-1], grid[1:]
    vl, vr = values[:-1], values[1:]
    spent = grid.size
    discarded = -math.inf
    while True:
        h = right - left
        if desc.curvature is not None:
            k = np.asarray(desc.curvature(left, right)) + np.asarray(
                desc.curvature(left + delta, right + delta)
            )
            hu = (
                h / desc.curvature_unit
            )  # the curvature is in units of curvature_unit**-2
            ub = np.maximum(vl, vr) + k * hu * hu / 8
        else:
            ub = (vl + vr) / 2 + desc.lipschitz * h / 2
        ub = np.where(np.isnan(ub), np.inf, ub)
        ub = ub + 4 * np.spacing(np.abs(np.nan_to_num(ub, posinf=0.0)))
        open_ = ub > v_best + _bb_tol(v_best)
        if (~open_).any():
            discarded = max(discarded, float(ub[~open_].max()))
        if not open_.any():
            return max(v_best, discarded), u_best, v_best
        tiny = h <= 4 * np.spacing(np.maximum(np.abs(left), np.abs(right)))
        if spent + open_.sum() > _BUDGET or (open_ & tiny).any():
            return max(v_best, discarded, float(ub.max())), u_best, v_best
        left, right, vl, vr = left[open_], right[open_], vl[open_], vr[open_]
        mid = 0.5 * (left + right)
        vm = g(mid)
        spent += mid.size
        k = int(np.argmax(vm))
        if vm[k] > v_best:
            u_best, v_best = float(mid[k]), float(vm[k])
        left, right = np.r_[left, mid], np.r_[mid, right]
        vl, vr = np.r_[vl, vm], np.r_[vm, vr]


def _gauss_search(desc, delta, lo, hi, window):
    """The worst pair of a Gaussian kernel of one scale ``s`` on one interval, with centre ``q + c``: exact.

    For a fixed output ``t`` the loss of a pair is ``h(q2) - h(q1)`` with ``h(q) = (t - m(q))^2/(2 s^2) + log N(q)``,
    and ``h'' = Var/s^4`` in ``(0, 1/s^2]`` (``Var`` the variance of the normal law conditioned on the
    interval, at most ``s^2``): ``h`` is convex.  So for fixed ``q1`` the best ``q2`` is an end of its range,
    ``h(q1 + Δ) - h(q1)`` increases with ``q1``, and the supremum over the band is ``h(e) - min h`` over the
    true values within ``Δ`` of a domain end ``e`` (the minimum by golden section of the concave pair loss;
    its error is at most ``w^2/(2 s^2)`` for a final bracket ``w``, added), for ``t`` the lowest or the highest
    output.  Unbounded cases: outputs unbounded above, any pair ``q1 > q2`` has an infinite loss (the tail);
    ``lo = -inf``, ``h(u) - h(u + Δ)`` increases to ``(t - c0) Δ/s^2`` as ``u -> -inf`` (``c0`` the interval's
    lower end: the law gathers there, ``log N(u) = -(c0 - u)^2/(2 s^2) + O(log |u|)``), reported with
    ``q1 = q2 = -inf``; ``hi = inf`` is its mirror image, ``(c1 - t) Δ/s^2`` with ``c1`` the upper end, reported
    with ``q1 = q2 = inf``.
    """
    ((a, b),) = [(max(p, window[0]), min(r, window[1])) for p, r in desc.pieces]
    s = float(np.asarray(desc.scale(np.array(0.0))))
    if b == math.inf or a == -math.inf:
        q2 = lo if math.isfinite(lo) else (hi - delta if math.isfinite(hi) else 0.0)
        q1 = min(q2 + delta, hi) if b == math.inf else q2
        if a == -math.inf and b != math.inf:
            q1, q2 = q2, min(q2 + delta, hi)
        return _report(desc, q1, q2, window)
    reports = []
    for t in (a, b):
        for end, (x, y) in (
            (hi, (max(lo, hi - delta), hi)),
            (lo, (lo, min(hi, lo + delta))),
        ):
            if not math.isfinite(end):
                continue
            q1, width = _golden_max(
                lambda q: _gauss_log_ratio(desc, q, end, t, s), x, y
            )
            r = _report(desc, q1, end, window)
            allowance = (width / s) ** 2 / 2
            if allowance > 0:
                r = replace(r, epsilon=r.epsilon + allowance, slack=r.slack + allowance)
            reports.append(r)
    with np.errstate(over="ignore"):
        if lo == -math.inf:
            limit = (b - desc.pieces[0][0]) * delta / s / s
            reports.append(
                PrivacyReport(limit, -math.inf, -math.inf, b, _KINDS[_DENSITY])
            )
        if (
            hi == math.inf
        ):  # the mirror image: the law gathers at the interval's upper end
            limit = (desc.pieces[0][1] - a) * delta / s / s
            reports.append(
                PrivacyReport(limit, math.inf, math.inf, a, _KINDS[_DENSITY])
            )
    return max(reports, key=lambda r: r.epsilon)


def _gauss_log_ratio(desc, q1, q2, t, s):
    """``log p(t; q1) - log p(t; q2)`` for a Gaussian kernel, written so that close centres do not cancel."""
    q1 = np.asarray(q1, dtype=float)
    m1, m2 = desc.center(q1), desc.center(np.full(q1.shape, q2))
    const, _ = _log_norm_ratio(desc, q1, np.full(q1.shape, q2))
    with np.errstate(over="ignore", invalid="ignore"):
        return ((m1 - m2) / s) * (((t - m1) + (t - m2)) / (2 * s)) + const


def _golden_max(f, x, y, steps=200):
    """``(argmax, final bracket width)`` of a concave ``f`` on ``[x, y]`` by golden section (ends included)."""
    ends = np.array([x, y])
    fe = f(ends)
    r = (math.sqrt(5) - 1) / 2
    a, b = x, y
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(np.array([c, d]))
    for _ in range(steps):
        if b - a <= 4 * np.spacing(max(abs(a), abs(b), 1e-300)):
            break
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = f(np.array([c]))[0]
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = f(np.array([d]))[0]
    best = c if fc >= fd else d
    fbest = max(fc, fd)
    if fe.max() >= fbest:
        return float(ends[int(np.argmax(fe))]), (b - a if x < a or b < y else 0.0)
    return float(best), b - a


def _box_search(desc, delta, lo, hi, window, name):
    """The worst pair over the whole band ``|q1 - q2| <= Δ`` for a law the edge argument does not cover (a
    scale that varies with ``q``, a Gaussian kernel): a certified two-dimensional branch and bound.

    Coordinates ``u = q1`` and ``d = q2 - q1`` in ``[-Δ, Δ]``.  On a cell the family's ``enclosure`` bounds
    the centre, scale and log-normalizer over each side's true values; the log-ratio of the two densities
    is then at most a piecewise-linear (Laplace) or piecewise-quadratic-with-linear-differences (Gaussian)
    function of the output, maximised exactly at its breakpoints on each piece (:func:`_box_bound`).  The
    exact loss at each cell's middle pair is a lower bound.  Cells whose bound exceeds the best pair by more
    than ``_box_tol`` are split in four; the report's ``epsilon`` is the largest bound of any cell ever
    discarded or left open (never below the truth) and ``slack`` its distance to the loss at the reported
    pair.  Budget: ``_BOX_BUDGET`` evaluations, then the bound reached is reported.
    """
    if desc.shape == "gauss" and hi == math.inf and window[1] < math.inf:
        return PrivacyReport(
            math.inf,
            math.inf,
            math.inf,
            max(window[0], desc.pieces[0][0]),
            _KINDS[_DENSITY],
        )
    few = len(desc.landmarks) <= 64
    per_mark = 64 if few else int(np.clip(2**13 // (3 * len(desc.landmarks)), 4, 64))
    grid, remote = _grid(
        desc,
        delta,
        lo,
        hi,
        _window_marks(desc, window),
        steps_per_mark=per_mark,
        between=65 if few else 9,
    )
    frac = np.linspace(-1.0, 1.0, 17)
    pairs = grid.size * frac.size
    cost = pairs * max(len(desc.pieces), 1) + _BOX_BUDGET
    if cost > _MAX_PAIRS:
        raise ValueError(
            f"window: a search over {pairs} starting pairs of true values on {len(desc.pieces)} pieces "
            f"(about {cost:.3g} evaluations) exceeds the limit of {_MAX_PAIRS:.3g} (about a minute); "
            "pass a shorter domain or fewer pieces"
        )
    q1 = np.repeat(grid, frac.size)
    q2 = np.clip(q1 + np.tile(frac, grid.size) * delta, lo, hi)
    loss = _pair(desc, q1, q2, window)[0]
    best = _first_max(loss, np.repeat(remote, frac.size) + delta - np.abs(q2 - q1))
    b1, b2, bv = float(q1[best]), float(q2[best]), float(loss[best])
    if bv == math.inf:  # one pair witnesses an infinite loss: exact
        return _report(desc, b1, b2, window)
    if desc.shape != "laplace":
        raise NotImplementedError(
            f"{name}: the certified search over pairs handles a Gaussian kernel on one "
            "interval only"
        )
    if desc.enclosure is None:
        raise NotImplementedError(
            f"{name}: a certified search over pairs needs the description's enclosure "
            "(bounds of the centre, scale and log-normalizer over an interval of true values)"
        )
    if desc.atoms:
        raise NotImplementedError(
            f"{name}: the certified search over pairs does not handle point masses with a "
            "scale that varies with q"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(
            f"domain: a certified search over pairs for {name} needs a finite domain "
            f"(got ({lo!r}, {hi!r})); pass finite bounds"
        )
    pieces = sorted((max(a, window[0]), min(b, window[1])) for a, b in desc.pieces)
    pieces = [(a, b) for a, b in pieces if a < b]
    u_edges = (
        grid if grid[0] == lo and grid[-1] == hi else np.unique(np.r_[lo, grid, hi])
    )
    d_edges = frac * delta
    u0, d0 = np.meshgrid(u_edges[:-1], d_edges[:-1], indexing="ij")
    u1, d1 = np.meshgrid(u_edges[1:], d_edges[1:], indexing="ij")
    u0, u1, d0, d1 = u0.ravel(), u1.ravel(), d0.ravel(), d1.ravel()
    keep = (u0 + d0 <= hi) & (u1 + d1 >= lo)
    u0, u1, d0, d1 = u0[keep], u1[keep], d0[keep], d1[keep]
    discarded = -math.inf
    spent = 0
    while u0.size:
        ub = _box_bound(
            desc,
            u0,
            u1,
            np.maximum(lo, u0 + d0),
            np.minimum(hi, u1 + d1),
            d0,
            d1,
            pieces,
            lo,
            hi,
        )
        ub = np.where(np.isnan(ub), np.inf, ub)
        open_ = ub > bv + _box_tol(bv)
        if (~open_).any():
            discarded = max(discarded, float(ub[~open_].max()))
        if not open_.any():
            break
        wu, wd = u1 - u0, d1 - d0
        can_u = wu > 4 * np.spacing(np.maximum(np.abs(u0), np.abs(u1)))
        can_d = wd > 4 * np.spacing(delta)
        stuck = open_ & ~can_u & ~can_d  # cannot be refined: their bound stays
        if stuck.any():
            discarded = max(discarded, float(ub[stuck].max()))
            open_ &= ~stuck
        if spent + 2 * int(open_.sum()) > _BOX_BUDGET:
            if open_.any():
                discarded = max(discarded, float(ub[open_].max()))
            break
        u0, u1, d0, d1 = u0[open_], u1[open_], d0[open_], d1[open_]
        cut_u = (can_u & ((wu >= wd) | ~can_d))[open_]
        um, dm = 0.5 * (u0 + u1), 0.5 * (d0 + d1)
        # halve each cell across its longer side (one it can still halve)
        u0, u1 = np.r_[u0, np.where(cut_u, um, u0)], np.r_[np.where(cut_u, um, u1), u1]
        d0, d1 = np.r_[d0, np.where(cut_u, d0, dm)], np.r_[np.where(cut_u, d1, dm), d1]
        keep = (u0 + d0 <= hi) & (u1 + d1 >= lo)
        u0, u1, d0, d1 = u0[keep], u1[keep], d0[keep], d1[keep]
        c1 = 0.5 * (u0 + u1)
        c2 = np.clip(c1 + 0.5 * (d0 + d1), lo, hi)
        vals = _pair(desc, c1, c2, window)[0]
        spent += c1.size
        k = int(np.argmax(vals)) if vals.size else 0
        if vals.size and vals[k] > bv:
            b1, b2, bv = float(c1[k]), float(c2[k]), float(vals[k])
    report = _report(desc, b1, b2, window, exact=False)
    bound = max(report.epsilon, discarded)
    return replace(report, epsilon=bound, slack=bound - report.epsilon + report.slack)


def _box_tol(v):
    """The branch and bound of :func:`_box_search` stops when no cell can exceed the best pair by this."""
    return 2e-13 * (1.0 + abs(v))


def _box_bound(desc, u0, u1, x2, y2, d0, d1, pieces, lo, hi):
    """An upper bound of the loss ``sup_t log p(t; q1)/p(t; q2)`` over the pairs of a cell: ``q1`` in ``[u0, u1]``,
    ``q2`` in ``[x2, y2]`` and ``q2 - q1`` in ``[d0, d1]`` (Laplace kernel, one or several pieces).

    For one pair the supremum over outputs is at an end of a piece or at a centre clipped to it, so the
    bound is the largest over these classes, each bounded from the family's ``enclosure`` (centre in
    ``M``, scale in ``S``, log-normalizer in ``[n_lo, n_hi]``) with ``c = log(s2_max/s1_min) + n2_max - n1_min``:

    * a fixed end ``t``: ``-dist(t, M1)/s1_max + maxdist(t, M2)/s2_min + c`` (exact in closed form when the
      family names ``t`` among its ``linear_outputs``);
    * the output at ``q1``'s centre: ``maxsep(M1, M2)/s2_min + c``; at ``q2``'s: ``-minsep(M1, M2)/s1_max + c``;
    * an infinite end: ``inf`` when the log-ratio may grow outwards (``1/s2_min > 1/s1_max``).

    A rounding allowance of a few ulps of every term is added.
    """
    m1lo, m1hi, s1lo, s1hi, n1lo, _n1hi = (
        np.asarray(v, dtype=float) for v in desc.enclosure(u0, u1)
    )
    m2lo, m2hi, s2lo, s2hi, _n2lo, n2hi = (
        np.asarray(v, dtype=float) for v in desc.enclosure(x2, y2)
    )
    eps = np.finfo(float).eps
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_s = np.log(
            s2hi / s1lo
        )  # the ratio first: scales of 1e300 keep their digits
        const = log_s + (n2hi - n1lo)
        size = np.abs(log_s) + np.abs(n2hi) + np.abs(n1lo)
        maxsep = np.maximum(np.abs(m1hi - m2lo), np.abs(m2hi - m1lo))
        minsep = np.maximum(np.maximum(m1lo - m2hi, m2lo - m1hi), 0.0)
        if (
            desc.center is _identity
        ):  # |m1 - m2| = |q1 - q2|: at most max(|d0|, |d1|); clipping only shortens it
            maxsep = np.minimum(maxsep, np.maximum(np.abs(d0), np.abs(d1)))
        best = np.full(np.shape(const), -np.inf)

        def offer(value, terms):
            nonlocal best
            value = np.asarray(value, dtype=float)
            finite = np.isfinite(value)
            allowance = 16 * eps * (terms + size) + 4 * np.spacing(
                np.abs(np.where(finite, value, 0.0))
            )
            best = np.maximum(best, np.where(finite, value + allowance, value))

        linear = {float(t): (c, k) for t, c, k in desc.linear_outputs}
        for a, b in pieces:
            for t in (a, b):
                if not math.isfinite(t):
                    continue
                if t in linear:
                    offer(_linear_output_max(*linear[t], u0, u1, y2, d1), 0.0)
                    continue
                near = np.maximum(np.maximum(m1lo - t, t - m1hi), 0.0) / s1hi
                far = np.maximum(np.abs(t - m2lo), np.abs(t - m2hi)) / s2lo
                offer(far - near + const, near + far)
            # an output at a centre inside the piece
            hit1 = (m1hi >= a) & (m1lo <= b)
            offer(np.where(hit1, maxsep / s2lo + const, -np.inf), maxsep / s2lo)
            hit2 = (m2hi >= a) & (m2lo <= b)
            offer(np.where(hit2, -minsep / s1hi + const, -np.inf), minsep / s1hi)
            if math.isinf(a) or math.isinf(b):
                best = np.where(1 / s2lo - 1 / s1hi > 0, np.inf, best)
    return best


def _linear_output_max(slope, knee, u0, u1, y2, d1):
    """The largest ``g(q2) - g(q1)`` over a cell for ``g(q) = slope * max(q - knee, 0)`` (``slope >= 0``): for each
    ``q1 = u`` in ``[u0, u1]`` the best ``q2`` is the largest, ``min(u + d1, y2)``; the result is piecewise
    linear in ``u``, so its maximum is at ``u0``, ``u1`` or a breakpoint."""
    g = lambda q: slope * np.maximum(q - knee, 0.0)  # noqa: E731
    best = np.full(np.shape(u0), -np.inf)
    for u in (
        u0,
        u1,
        np.clip(knee, u0, u1),
        np.clip(knee - d1, u0, u1),
        np.clip(y2 - d1, u0, u1),
    ):
        best = np.maximum(best, g(np.minimum(u + d1, y2)) - g(u))
    return best


def _resolution(delta, lo, hi, desc, sensitivity):
    """Refuse a search so far out that true values ``Δ`` apart are not ``Δ`` apart to 10 digits in floats."""
    marks = np.array([lo, hi, *desc.landmarks], dtype=float)
    marks = marks[np.isfinite(marks) & (marks >= lo) & (marks <= hi)]
    far = float(np.abs(marks).max(initial=0.0)) + (
        4096 * desc.length if math.isinf(lo) or math.isinf(hi) else 0.0
    )
    if np.spacing(far) > 1e-10 * delta:
        raise ValueError(
            f"sensitivity={sensitivity!r} is below the float resolution where the search runs "
            f"(|q| up to {far:.3g}, spacing {np.spacing(far):.3g}): pairs that far apart are not "
            "represented accurately"
        )


def _separations(pairs, delta, sensitivity):
    """Refuse pairs meant to be ``Δ`` apart that rounding put elsewhere (true values far out, ``Δ`` tiny)."""
    for a, b in pairs:
        sep = abs(b - a)
        slack = 2 * np.spacing(max(abs(a), abs(b)))
        if 0 < abs(sep - delta) <= slack and abs(sep - delta) > 1e-10 * delta:
            raise ValueError(
                f"sensitivity={sensitivity!r} is below the float resolution of the worst pair "
                f"({a!r}, {b!r}): true values that far out are not {sensitivity!r} apart in floats"
            )


def _exp(t):
    return math.exp(t) if t < 709 else math.inf


def _interval(name, value):
    """Validate a closed interval ``(lo, hi)`` with ``lo < hi`` (ends may be infinite)."""
    try:
        lo, hi = value
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (lo, hi) of numbers, got {value!r}"
        ) from None
    if (
        math.isnan(lo)
        or math.isnan(hi)
        or not lo < hi
        or lo == math.inf
        or hi == -math.inf
    ):
        raise ValueError(
            f"{name} must be a pair (lo, hi) with lo < hi and no NaN, got {value!r}"
        )
    return lo, hi


# --- a support that moves with the centre (bounded noise) -------------------------------------------


def _moving_support(desc):
    """Whether the density of ``desc`` lives on ``[center(q) + a, center(q) + b]`` with a finite ``a`` or ``b``
    (``noise_support``): a support that moves with the true value."""
    return isinstance(desc, PrivacyDescription) and tuple(desc.noise_support) != (
        -math.inf,
        math.inf,
    )


def _moving_support_check(desc, name, window=None):
    """Refuse a moving support outside what is proved: a translation family (centre ``q`` plus a constant, one
    scale, a Laplace kernel on the whole line, no atoms) whose noise support has two finite ends, without an
    output window."""
    a, b = desc.noise_support
    if window is not None:
        raise NotImplementedError(
            f"{name}: a support that moves with the true value and an output window; the auditor "
            "covers a moving support without a window"
        )
    translation = (
        desc.shape == "laplace"
        and desc.uniform
        and tuple(desc.pieces) == ((-math.inf, math.inf),)
        and not desc.atoms
        and not desc.log_output
        and not desc.positive
        and (desc.center is _identity or desc.center_shift is not None)
    )
    if not (translation and math.isfinite(a) and math.isfinite(b)):
        raise NotImplementedError(
            f"{name}: a moving support {desc.noise_support!r} is covered for a Laplace kernel of one "
            "scale translated with the true value, on the whole line, without atoms, with two finite ends"
        )


def _moving_support_pair_loss(desc, q1, q2, window, name):
    """The loss of each pair: ``inf`` where ``q1 != q2`` (``M(q1)`` lands below ``q2 + a``, where ``M(q2)`` never
    does, or above ``q2 + b``), ``0`` where they are equal."""
    _moving_support_check(desc, name, window)
    q1, q2 = np.broadcast_arrays(q1, q2)
    return np.where(q1 == q2, 0.0, math.inf)


def _moving_support_report(desc, delta, lo, hi, window, name):
    """The audit of a moving support: every pair of distinct true values has an infinite loss; the report names
    the pair ``(q1, q1 + min(Δ, hi - lo))`` at the lowest true value and the output ``center(q1) + a``, which
    ``M(q1)`` may take and ``M(q2)`` may not."""
    _moving_support_check(desc, name, window)
    w = min(delta, hi - lo)
    q1 = lo if math.isfinite(lo) else (hi - w if math.isfinite(hi) else 0.0)
    output = float(np.asarray(desc.center(np.array(q1)))) + desc.noise_support[0]
    return PrivacyReport(math.inf, q1, q1 + w, output, _KINDS[_SUPPORT])
