"""An exact auditor of pure ε-differential privacy for dpbook's one-dimensional mechanisms.

A mechanism ``M`` is ε-DP for sensitivity ``Δ`` when ``P(M(q1) ∈ S) <= e^ε P(M(q2) ∈ S)`` for every
event ``S`` and every pair of true values with ``|q1 - q2| <= Δ``.  The smallest such ε, the
*privacy loss*, is the supremum over pairs of the essential supremum of the log-likelihood ratio
with respect to a common dominating measure (Lebesgue measure plus counting measure on the atoms):
density is compared with density, point mass with point mass, and a density or atom under ``q1``
where ``q2`` has none makes the loss infinite.

Every family in dpbook is *Laplace-shaped*: in an output coordinate ``t`` (``t = x``, or ``t = log x``
for :class:`~dpbook.multiplicative.LogLaplace`) its absolutely continuous part has log-density
``-|t - m(q)|/s(q) - log(2 s(q)) - log N(q)`` on a union of intervals that does not depend on ``q``,
plus point masses at fixed places (the bounds of BIT and of the translated ramp).  For one pair the
log-ratio is therefore piecewise linear in ``t`` with kinks only at ``m(q1)``, ``m(q2)`` and the ends of
the pieces: its supremum is at a kink or at an infinite end, where it is ``+inf`` exactly when the
outward slope ``1/s(q2) - 1/s(q1)`` is positive.  :func:`pair_loss` evaluates this in closed form;
no grid over outputs is involved.  (The Gaussian restriction is handled the same way: with equal
variances its log-ratio is linear in ``x``.)

For the supremum over pairs see :func:`privacy_report`.  The auditor settles a disagreement between
the papers: truncation at ``b = Δ/ε`` (Liu 2019, Def. 2(a)) is not ε-DP; its loss is
``ε + log(2 - e^{-ε})``, below McGlinchey–Mason's Prop. 2 bound ``2ε``; :func:`truncated_scale` gives
the smallest uniform scale that is ε-DP.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from scipy import optimize

from . import _validation as check
from . import clamping, multiplicative, normalization, optimal, postprocessing, restriction, truncation
from .laplace import Laplace, laplace_logcdf, laplace_logsf

__all__ = ["PrivacyReport", "pair_loss", "privacy_loss", "privacy_report", "truncated_scale"]

_KINDS = ("density", "atom", "support", "tail")
_DENSITY, _ATOM, _SUPPORT, _TAIL = range(4)
_POST = "upper bound (post-processing)"


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
        True when ``epsilon`` is the loss itself; False when it is an upper bound or the result of a
        numerical search over pairs (see :func:`privacy_report`).
    """

    epsilon: float
    q1: float
    q2: float
    output: float
    kind: str
    exact: bool = True

    @property
    def bounded(self):
        """Whether the loss is finite."""
        return math.isfinite(self.epsilon)


def _identity(q):
    return q


@dataclass(frozen=True)
class _Family:
    """A Laplace-shaped (or Gaussian) family of laws, described in the output coordinate ``t``."""

    center: Callable  # q -> m(q)
    scale: Callable  # q -> s(q)
    uniform: bool  # s does not depend on q
    pieces: tuple  # closed intervals (a, b) in t carrying the density, independent of q
    atoms: tuple = ()  # (t, q -> log mass)
    log_norm: Callable | None = None  # q -> log of the normalizing mass
    gauss: bool = False  # log-density -(t - m)^2 / (2 s^2) instead of -|t - m|/s
    log_output: bool = False  # outputs are x = e^t
    landmarks: tuple = ()  # true values where the loss may change regime
    length: float = 1.0  # a length scale of the true values, for the search grid
    to_q: Callable = _identity  # the true value whose centre is t (for window landmarks)
    lipschitz: float | None = None  # a Lipschitz constant of q -> loss(q, q ± Δ), if known
    positive: bool = False  # true values must be > 0


def pair_loss(mechanism, q1, q2, window=None):
    """The exact privacy loss between two true values: ``sup_S log P(M(q1) ∈ S)/P(M(q2) ∈ S)``.

    The supremum runs over every event ``S`` of outputs (inside ``window`` when given), so it is
    the largest log-ratio of densities, or of point masses, and ``inf`` when ``M(q1)`` can land where
    ``M(q2)`` cannot or when the log-ratio of densities grows without bound in a tail.  Computed
    in closed form from the family's parameters (see the module docstring).  Not symmetric: swap
    the arguments for the other direction.

    Parameters
    ----------
    mechanism : Mechanism
        A dpbook mechanism (``Laplace``, ``BIT``, ``Truncated``, ``TranslatedRamp``, ``Normalized``,
        ``CroftLaplace``, ``Restricted`` with a Laplace or normal base, ``LogLaplace``).
    q1, q2 : float or array_like
        True values (broadcast together).
    window : (float, float), optional
        Only outputs in this closed interval are considered.

    Returns
    -------
    float or ndarray

    >>> from dpbook import Truncated
    >>> round(pair_loss(Truncated(1.0, 0.0), 0.0, 1.0), 6)  # 1 + log(2 - 1/e)
    1.48988
    """
    fam = _family(mechanism)
    q1, q2 = check.finite_array("q1", q1), check.finite_array("q2", q2)
    for name, q in (("q1", q1), ("q2", q2)):
        if fam.positive and (q <= 0).any():
            raise ValueError(f"{name} must be > 0 for {type(mechanism).__name__}, got {q!r}")
    window = _window(window, fam)
    loss, _, _ = _pair(fam, q1, q2, window)
    return float(loss) if loss.ndim == 0 else loss


def privacy_loss(mechanism, sensitivity, domain=None, window=None, neighbours=None):
    """The pure-DP privacy loss of ``mechanism`` for ``sensitivity``: the smallest ε it satisfies.

    This is ``privacy_report(...).epsilon``; see :func:`privacy_report` for the parameters and the
    method.

    >>> from dpbook import Laplace
    >>> privacy_loss(Laplace(2.0), 1.0)
    0.5
    """
    return privacy_report(mechanism, sensitivity, domain=domain, window=window, neighbours=neighbours).epsilon


def privacy_report(mechanism, sensitivity, domain=None, window=None, neighbours=None):
    """Audit ``mechanism``: the worst log-likelihood ratio over neighbouring true values and outputs.

    ``epsilon = sup log P(M(q1) ∈ S)/P(M(q2) ∈ S)`` over ``q1, q2`` in ``domain`` that are
    neighbours and over every event ``S`` (densities and point masses, outputs arbitrarily far out),
    with the pair and the output where it is attained.

    Method.  For one pair the supremum over outputs is exact (:func:`pair_loss`).  Over pairs:

    * Families whose scale does not depend on ``q`` (Laplace, BIT, translated ramp, truncation,
      normalization with a uniform scale, restriction of a Laplace base, log-Laplace), with no
      window cutting their outputs: the loss never decreases as the two true values move apart.
      For ``q1 < q2`` the worst density ratio is at the lowest output ``t0``; its derivative in
      ``q2`` is ``1/s + N'(q2)/N(q2) >= 0`` (as ``|N'| <= N/s``), or ``0`` when ``q2 < t0``, and its
      derivative in ``q1`` is likewise ``<= 0``; the log mass of the lower atom decreases in ``q``
      and the upper atom's ratio is negative.  So the worst pair is ``(q, q + Δ)`` or ``(q + Δ, q)``
      with ``q`` in ``[lo, hi - Δ]`` (``(lo, hi)`` itself when the domain is shorter than ``Δ``).
      This one-dimensional supremum is taken on a grid holding the domain's ends, the family's
      landmarks (bounds, shift, piece ends) and their ``±Δ`` shifts, and geometric steps from
      ``1e-13`` to ``4096`` scales around each, then refined by bounded Brent iterations around the
      best local maxima (skipped where the Lipschitz bound ``4/s`` of the loss along the edge
      leaves no room above the best value).  Beyond ``4096`` scales from every landmark the
      normalizers equal their limits to within ``e^{-4096}``: the far grid points are the
      asymptotic regime of an infinite domain.  Corners, where the closed forms put the worst case
      of truncation, are grid points, so those values are exact to rounding.
    * Variable-scale families (Croft, Sack & Shi), the Gaussian restriction, and any family whose
      outputs are cut by ``window``: without a window, a pair whose scales differ (for the
      Gaussian, any two distinct true values) has infinite loss, which one pair witnesses.  With a
      window the search runs over the whole band ``|q1 - q2| <= Δ``: a grid over ``q1`` (as above)
      and ``(q2 - q1)/Δ`` (21 steps and ``±1e-3``, ``±1e-6``), then a pattern search (a 9 x 9 stencil,
      moved while it improves and shrunk by 4 otherwise, to ``1e-15``) from the four best cells.
      The result is marked ``exact=False``: a careful search, not a certificate.  (For the
      Gaussian with a window and ``hi = inf`` the loss grows without bound as both true values
      run off to infinity; the report then has ``q1 = q2 = inf``.)
    * ``PostProcessed(φ)`` for an arbitrary ``φ`` (and ``StepPostProcessed``): the loss of its Laplace base, an upper bound by
      the post-processing property (``kind='upper bound (post-processing)'``, ``exact=False``).
      The translated ramp, a post-processing with a known law, is audited exactly.

    Parameters
    ----------
    mechanism : Mechanism
        A dpbook mechanism (see :func:`pair_loss`).
    sensitivity : float
        ``Δ > 0``: true values at most ``Δ`` apart are neighbours (see ``neighbours``).
    domain : (float, float), optional
        The closed interval of true values (ends may be infinite); default ``mechanism.domain``.
    window : (float, float), optional
        Only outputs in this closed interval are considered.  Croft's guarantee holds near the
        data; the loss beyond it is infinite.
    neighbours : {'additive', 'log', 'relative'}, optional
        How ``sensitivity`` is read: ``|q1 - q2| <= Δ`` (``'additive'``, the default except for
        ``LogLaplace``); ``|log q1 - log q2| <= K`` (``'log'``, the default for ``LogLaplace``);
        or McGlinchey–Mason assumption (10), ``|q1 - q2| <= K min(q1, q2)`` (``'relative'``, which is
        ``'log'`` with ``log(1 + K)``).  The last two are offered for ``LogLaplace`` only.

    Returns
    -------
    PrivacyReport

    >>> from dpbook import Truncated
    >>> r = privacy_report(Truncated(1.0, 0.0), 1.0)
    >>> round(r.epsilon, 6), r.q1, r.q2, r.output, r.kind
    (1.48988, 0.0, 1.0, 0.0, 'density')
    """
    delta = check.positive("sensitivity", sensitivity)
    is_log = isinstance(mechanism, _class(multiplicative, "LogLaplace"))
    if neighbours is None:
        neighbours = "log" if is_log else "additive"
    if neighbours not in ("additive", "log", "relative"):
        raise ValueError(f"neighbours must be 'additive', 'log' or 'relative', got {neighbours!r}")
    if neighbours != "additive" and not is_log:
        raise NotImplementedError(f"neighbours={neighbours!r} is offered for LogLaplace only")
    post = _is_postprocessing(mechanism)
    fam = _laplace_family(mechanism.scale) if post else _family(mechanism)
    lo, hi = _interval("domain", mechanism.domain if domain is None else domain)
    window = _window(window, fam)

    if is_log:
        if hi <= 0:
            raise ValueError(f"domain must reach above 0 for LogLaplace, got {domain!r}")
        if neighbours == "additive":
            if lo <= 0:
                return PrivacyReport(math.inf, 0.0, min(delta, hi), 0.0, "support")
        else:
            if lo < 0:
                raise ValueError(f"domain must lie in [0, inf) for neighbours={neighbours!r}, got {domain!r}")
            if neighbours == "relative":
                delta = math.log1p(delta)
            fam = replace(fam, center=_identity, to_q=_identity, landmarks=(), lipschitz=4 / mechanism.scale)
            with np.errstate(divide="ignore"):
                lo, hi = math.log(lo) if lo > 0 else -math.inf, math.log(hi)
    if fam.uniform and not _cuts(fam, window):
        report = _edge_search(fam, delta, lo, hi, window)
    else:
        report = _band_search(fam, delta, lo, hi, window)
    if is_log and neighbours != "additive":
        report = replace(report, q1=_exp(report.q1), q2=_exp(report.q2))
    if post:
        report = replace(report, output=math.nan, kind=_POST, exact=False)
    return report


def truncated_scale(epsilon, sensitivity, lower=0.0, upper=np.inf):
    """The smallest uniform scale ``b`` for which ``Truncated(b, lower, upper)`` is ε-DP on ``[lower, upper]``.

    Solves ``privacy_loss(Truncated(b, lower, upper), Δ) = ε`` with Brent's bracketing method.
    One-sided (Liu Def. 2(a) with one infinite bound; McGlinchey–Mason eq. (8)) this is ``b = Δ/t``
    with ``t + log(2 - e^{-t}) = ε``: ``1.612605 Δ/ε`` at ``ε = 1``, between Liu's ``Δ/ε`` (not
    ε-DP) and McGlinchey–Mason's Cor. 1 ``2Δ/ε`` (ε-DP but loose).

    The loss decreases strictly in ``b``, so the root is unique.  For ``l <= q1 < q2 <= u`` the
    worst output is at ``l`` and the log-ratio is ``∫_{q1}^{q2} ψ'(q) dq`` with
    ``ψ'(q) = (2/b) / (1 + R)``, ``R = (1 - e^{-A/b}) / (1 - e^{-B/b})``, ``A = q - l``, ``B = u - q``
    (the other order is its mirror image).  With ``λ = 1/b``,
    ``d log ψ'/dλ = (1/λ) [1 - R/(1 + R) (k(λA) - k(λB))] > 0`` where ``k(y) = y/(e^y - 1)`` lies in
    ``(0, 1]``; so ``ψ'`` falls pointwise as ``b`` grows, hence every pair's loss and their supremum.
    The bracket is ``[Δ/ε, 2Δ/ε]`` (halving the lower end while its loss is below ε): at ``2Δ/ε`` the
    loss is at most ``ε`` by McGlinchey–Mason's Prop. 2 argument.

    Parameters
    ----------
    epsilon : float
        Target ``ε > 0``.
    sensitivity : float
        ``Δ > 0``.
    lower, upper : float
        The truncation interval (either end may be infinite).

    Returns
    -------
    float

    >>> round(truncated_scale(1.0, 1.0), 6)
    1.612605
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.positive("sensitivity", sensitivity)
    lower, upper = check.bounds(lower, upper)
    return _truncated_scale(epsilon, delta, lower, upper)


@functools.lru_cache(maxsize=1024)
def _truncated_scale(epsilon, delta, lower, upper):
    if np.isinf(lower) != np.isinf(upper):
        # one-sided: the audit's worst case is the corner pair, loss t + log(2 - e^{-t}) with t = Δ/b,
        # increasing in t from 0; solved directly (tests check it against the full audit)
        t = optimize.brentq(lambda t: t + math.log(2 - math.exp(-t)) - epsilon, 0.0, epsilon,
                            xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
        return delta / t
    Truncated = truncation.Truncated

    def excess(b):
        return privacy_loss(Truncated(b, lower, upper), delta) - epsilon

    hi = 2 * delta / epsilon
    lo = delta / epsilon
    while excess(lo) <= 0:
        lo, hi = lo / 2, lo
    return optimize.brentq(excess, lo, hi, xtol=1e-14 * hi, rtol=4 * np.finfo(float).eps, maxiter=200)


# --- the families ----------------------------------------------------------------------------------


def _class(module, name):
    return getattr(module, name, ())


def _is_postprocessing(mech):
    """A post-processing ``φ(q + L_b)`` whose law dpbook does not audit exactly (any ``φ``)."""
    return isinstance(mech, (_class(postprocessing, "PostProcessed"), _class(optimal, "StepPostProcessed")))


def _laplace_family(b, pieces=((-np.inf, np.inf),), **kw):
    return _Family(center=_identity, scale=lambda q: np.full(np.shape(q), b), uniform=True, pieces=pieces, length=b,
                   lipschitz=4 / b, **kw)


def _family(mech):
    """Describe ``mech`` as a :class:`_Family`, dispatching on its type."""
    if _is_postprocessing(mech):
        raise NotImplementedError("the law of a general post-processing is not Laplace-shaped; use privacy_report")
    if isinstance(mech, _class(postprocessing, "TranslatedRamp")):
        b, alpha = mech.scale, mech.shift
        return _Family(
            center=lambda q: q - alpha,
            scale=lambda q: np.full(np.shape(q), b),
            uniform=True,
            pieces=((0.0, np.inf),),
            atoms=((0.0, lambda q: laplace_logcdf(alpha, q, b)),),
            landmarks=(alpha,),
            length=b,
            to_q=lambda t: t + alpha,
            lipschitz=4 / b,
        )
    if isinstance(mech, _class(clamping, "BIT")):
        b, lo, hi = mech.scale, mech.lower, mech.upper
        atoms = []
        if math.isfinite(lo):
            atoms.append((lo, lambda q: laplace_logcdf(lo, q, b)))
        if math.isfinite(hi):
            atoms.append((hi, lambda q: laplace_logsf(hi, q, b)))
        return _laplace_family(b, ((lo, hi),), atoms=tuple(atoms), landmarks=(lo, hi))
    if isinstance(mech, _class(truncation, "Truncated")):
        return _laplace_family(mech.scale, ((mech.lower, mech.upper),), log_norm=mech.log_mass_kept,
                               landmarks=(mech.lower, mech.upper))
    if isinstance(mech, _class(normalization, "CroftLaplace")):
        lo = mech.lower
        return _Family(center=_identity, scale=mech.scale_at, uniform=False, pieces=((lo, np.inf),),
                       log_norm=mech.log_normalizer, landmarks=(lo, lo + mech.sensitivity / mech.epsilon),
                       length=float(mech.scale_at(lo)))
    if isinstance(mech, _class(normalization, "Normalized")):
        pieces = tuple((float(a), float(b)) for a, b in mech.allowed)
        ends = tuple(v for p in pieces for v in p)
        middles = tuple((b + a) / 2 for (_, b), (a, _) in zip(pieces[:-1], pieces[1:]))
        return _laplace_family(mech.scale, pieces, log_norm=mech.log_normalizer, landmarks=ends + middles)
    if isinstance(mech, _class(restriction, "Restricted")):
        return _restricted_family(mech)
    if isinstance(mech, _class(multiplicative, "LogLaplace")):
        return replace(_laplace_family(mech.scale, log_output=True), center=np.log, to_q=math.exp,
                       lipschitz=None, positive=True)
    if isinstance(mech, Laplace):
        return _laplace_family(mech.scale)
    raise NotImplementedError(f"no exact audit for {type(mech).__name__}")


def _restricted_family(mech):
    base = mech.base
    name = base.dist.name
    params = dict(zip(("loc", "scale"), base.args))
    params.update(base.kwds)
    loc, s = float(params.get("loc", 0.0)), float(params.get("scale", 1.0))
    if name not in ("laplace", "norm") or base.dist.numargs:
        raise NotImplementedError(f"Restricted is audited for Laplace and normal bases only, got {name!r}")

    def log_norm(q):
        return base.logsf(-np.asarray(q, dtype=float))

    return _Family(
        center=lambda q: q + loc,
        scale=lambda q: np.full(np.shape(q), s),
        uniform=name == "laplace",
        pieces=((0.0, np.inf),),
        log_norm=log_norm,
        gauss=name == "norm",
        landmarks=(-loc,),
        length=s,
        to_q=lambda t: t - loc,
        lipschitz=4 / s,
    )


# --- one pair --------------------------------------------------------------------------------------


def _window(window, fam):
    """The output window in the family's coordinate ``t``."""
    if window is None:
        return (-math.inf, math.inf)
    lo, hi = _interval("window", window)
    if fam.log_output:
        lo = math.log(lo) if lo > 0 else -math.inf
        hi = math.log(hi) if hi > 0 else -math.inf
        if hi == -math.inf:
            raise ValueError(f"window must reach above 0 for a positive mechanism, got {window!r}")
    return lo, hi


def _pair(fam, q1, q2, window):
    """``sup_S log P1(S)/P2(S)`` for arrays of pairs: (loss, kind code, output in t)."""
    q1, q2 = np.broadcast_arrays(np.asarray(q1, dtype=float), np.asarray(q2, dtype=float))
    shape = q1.shape
    m1, m2 = np.broadcast_to(fam.center(q1), shape), np.broadcast_to(fam.center(q2), shape)
    s1, s2 = np.broadcast_to(fam.scale(q1), shape), np.broadcast_to(fam.scale(q2), shape)
    const = np.log(s2) - np.log(s1)
    if fam.log_norm is not None:
        const = const + fam.log_norm(q2) - fam.log_norm(q1)
    best = np.full(shape, -np.inf)
    kind = np.zeros(shape, dtype=int)
    where = np.full(shape, np.nan)

    def offer(value, code, t):
        better = value > best
        best[better] = value[better]
        kind[better] = code
        where[better] = np.broadcast_to(t, shape)[better]

    wlo, whi = window
    for a, b in fam.pieces:
        a, b = max(a, wlo), min(b, whi)
        if not a < b:
            continue
        for t in [v for v in (a, b) if math.isfinite(v)] + [np.clip(m1, a, b), np.clip(m2, a, b)]:
            if fam.gauss:
                r = (m1 - m2) * (2 * t - m1 - m2) / (2 * s1 * s1) + const
            else:
                r = np.abs(t - m2) / s2 - np.abs(t - m1) / s1 + const
            offer(r, _DENSITY, t)
        for end, outward in ((b, 1.0), (a, -1.0)):
            if math.isinf(end):
                slope = outward * (m1 - m2) / (s1 * s1) if fam.gauss else 1 / s2 - 1 / s1
                offer(np.where(slope > 0, np.inf, -np.inf), _TAIL, end)
    for t, logmass in fam.atoms:
        if wlo <= t <= whi:
            l1, l2 = logmass(q1), logmass(q2)
            missing = (l2 == -np.inf) & (l1 > -np.inf)
            with np.errstate(invalid="ignore"):
                r = np.where(l1 == -np.inf, -np.inf, np.where(missing, np.inf, l1 - l2))
            offer(np.where(missing, -np.inf, r), _ATOM, t)
            offer(np.where(missing, np.inf, -np.inf), _SUPPORT, t)
    return best, kind, where


def _report(fam, q1, q2, window, exact=True):
    loss, kind, t = _pair(fam, q1, q2, window)
    t = float(t)
    if fam.log_output:
        t = _exp(t)
    return PrivacyReport(float(loss), float(q1), float(q2), t, _KINDS[int(kind)], exact)


# --- the search over pairs -------------------------------------------------------------------------


def _grid(fam, delta, lo, hi, extra=()):
    """Sorted true values in ``[lo, hi]`` resolving every regime of the loss, and their distance to the landmarks."""
    marks = [v for v in (lo, hi, *fam.landmarks, *extra) if math.isfinite(v)]
    base = sorted({m + k * delta for m in marks for k in (-1, 0, 1)} | ({0.0} if not marks else set()))
    length = max(fam.length, 1e-300)
    steps = np.concatenate([length * np.geomspace(1e-13, 4096, 64), delta * np.array([1 / 16, 1 / 8, 1 / 4, 1 / 2])])
    pts = [np.asarray(base)]
    for m in base:
        pts += [m - steps, m + steps]
    finite = np.array([v for v in base if lo <= v <= hi])
    for a, b in zip(finite[:-1], finite[1:]):
        pts.append(np.linspace(a, b, 65))
    g = np.concatenate(pts)
    g = g[(g >= lo) & (g <= hi)]
    g = np.unique(np.concatenate([g, [v for v in (lo, hi) if math.isfinite(v)]]))
    anchors = np.array([v for v in base if lo <= v <= hi] or [g[np.argmin(np.abs(g))]])
    return g, np.min(np.abs(g[:, None] - anchors[None, :]), axis=1)


def _tol(v):
    """Differences below this are rounding (pairs far out carry absolute errors of ~1e-12 |q|/s)."""
    return 1e-10 * (1.0 + abs(v))


def _first_max(values, remoteness):
    """Index of a maximum of ``values``, ties (to rounding) broken towards the landmarks."""
    top = values.max()
    near = np.flatnonzero(values >= top - _tol(top)) if math.isfinite(top) else np.flatnonzero(values == top)
    return int(near[np.argmin(remoteness[near])])


def _cuts(fam, window):
    """Whether the window removes outputs the family can produce."""
    return any(a < window[0] or b > window[1] for a, b in fam.pieces) or any(
        not window[0] <= t <= window[1] for t, _ in fam.atoms)


def _window_marks(fam, window):
    """True values whose centre sits at a finite end of the window."""
    return [float(fam.to_q(w)) for w in window if math.isfinite(w)]


def _edge_search(fam, delta, lo, hi, window):
    """The worst pair among ``(q, q ± Δ)``: valid when the loss grows as the pair moves apart."""
    if hi - lo <= delta:
        pairs = [(lo, hi), (hi, lo)]
        return max((_report(fam, a, b, window) for a, b in pairs), key=lambda r: r.epsilon)
    grid, remote = _grid(fam, delta, lo, hi - delta, _window_marks(fam, window))

    def g(u):
        u = np.atleast_1d(u)
        both, _, _ = _pair(fam, np.r_[u, u + delta], np.r_[u + delta, u], window)
        return np.maximum(both[: u.size], both[u.size:])

    values = g(grid)
    best = _first_max(values, remote)
    u_best, v_best = grid[best], values[best]
    if math.isfinite(v_best) and grid.size > 1:
        interior = np.r_[values[0] >= values[1], (values[1:-1] >= values[:-2]) & (values[1:-1] >= values[2:]),
                         values[-1] >= values[-2]]
        peaks = np.flatnonzero(interior)
        for i in peaks[np.argsort(values[peaks])[::-1][:4]]:
            a, b = max(i - 1, 0), min(i + 1, grid.size - 1)
            if fam.lipschitz is not None:
                room = max((values[j] + values[k]) / 2 + fam.lipschitz * (grid[k] - grid[j]) / 2
                           for j, k in ((a, i), (i, b)))
                if room <= v_best + _tol(v_best):
                    continue
            res = optimize.minimize_scalar(lambda u: -float(g(u)[0]), bounds=(grid[a], grid[b]), method="bounded",
                                           options={"xatol": 1e-13 * max(1.0, abs(grid[a]), abs(grid[b]))})
            if -res.fun > v_best + _tol(v_best):
                u_best, v_best = float(res.x), -float(res.fun)
    up = _report(fam, u_best, u_best + delta, window)
    down = _report(fam, u_best + delta, u_best, window)
    return up if up.epsilon >= down.epsilon else down


def _band_search(fam, delta, lo, hi, window):
    """The worst pair over the whole band ``|q1 - q2| <= Δ`` (variable scale or Gaussian base)."""
    if fam.gauss and hi == math.inf and window[1] < math.inf:
        return PrivacyReport(math.inf, math.inf, math.inf, max(window[0], fam.pieces[0][0]), _KINDS[_DENSITY])
    grid, remote = _grid(fam, delta, lo, hi, _window_marks(fam, window))
    frac = np.unique(np.r_[np.linspace(-1, 1, 21), [-1e-3, 1e-3, -1e-6, 1e-6]])
    q1 = np.repeat(grid, frac.size)
    q2 = np.clip(q1 + np.tile(frac, grid.size) * delta, lo, hi)
    loss, _, _ = _pair(fam, q1, q2, window)
    best = _first_max(loss, np.repeat(remote, frac.size) + delta - np.abs(q2 - q1))
    if not math.isfinite(loss[best]):
        return _report(fam, q1[best], q2[best], window)
    order = np.argsort(loss)[::-1]
    starts, seen = [], set()
    for k in order[:400]:
        i, j = divmod(int(k), frac.size)
        if (i // 4, j // 4) not in seen:
            seen.add((i // 4, j // 4))
            starts.append((i, j))
        if len(starts) == 4:
            break
    b1, b2, bv = q1[best], q2[best], loss[best]
    steps = np.linspace(-1.0, 1.0, 9)
    for i, j in starts:
        u, f = grid[i], frac[j]
        hu = max(grid[min(i + 1, grid.size - 1)] - u, u - grid[max(i - 1, 0)])
        hf = 0.1
        v = loss[i * frac.size + j]
        for _ in range(200):
            uu = np.clip(u + hu * steps, lo, hi)[:, None]
            ff = np.clip(f + hf * steps, -1.0, 1.0)[None, :]
            a, c = np.broadcast_arrays(uu, np.clip(uu + ff * delta, lo, hi))
            vals, _, _ = _pair(fam, a.ravel(), c.ravel(), window)
            k = int(np.argmax(vals))
            if vals[k] > v:
                v, u, f = vals[k], float(a.ravel()[k]), float(np.broadcast_to(ff, a.shape).ravel()[k])
            else:
                hu, hf = hu / 4, hf / 4
            if hu <= 1e-15 * max(1.0, abs(u)) and hf <= 1e-15:
                break
        if v > bv + _tol(bv):
            b1, b2, bv = u, float(np.clip(u + f * delta, lo, hi)), v
    return _report(fam, b1, b2, window, exact=False)


def _exp(t):
    return math.exp(t) if t < 709 else math.inf


def _interval(name, value):
    """Validate a closed interval ``(lo, hi)`` with ``lo < hi`` (ends may be infinite)."""
    try:
        lo, hi = value
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of numbers, got {value!r}") from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi or lo == math.inf or hi == -math.inf:
        raise ValueError(f"{name} must be a pair (lo, hi) with lo < hi and no NaN, got {value!r}")
    return lo, hi
