"""The one interface between a mechanism and the privacy auditor: :class:`PrivacyDescription`.

A mechanism family describes its own law through a method ``privacy_description()`` that returns a
:class:`PrivacyDescription`; ``dpbook.audit`` holds only the search over pairs and outputs and
never looks at the mechanism's type.  A new family is audited as soon as it has that method (the
tests define one and audit it exactly).  This module imports numpy and scipy only, so every
mechanism module may import it without a cycle.

The laws the auditor handles are *Laplace-shaped*: in an output coordinate ``t`` (``t = x``, or
``t = log x`` with ``log_output``) the law of ``M(q)`` is

* a density ``exp(kernel(t, q) - log_norm(q))`` on the union of the closed intervals ``pieces``
  (which do not depend on ``q``), with ``kernel = -|t - center(q)|/scale(q) - log(2 scale(q))``
  (``shape='laplace'``) or ``-(t - center(q))^2/(2 scale^2) - log(sqrt(2 pi) scale)``
  (``shape='gauss'``, a scale that does not depend on ``q``); and
* point masses at fixed places: ``atoms = ((t, q -> log mass), ...)``.

For one pair of true values the log-ratio of two such densities is piecewise linear in ``t`` with kinks
only at the two centres and the ends of the pieces (linear for the Gaussian shape), so its supremum
over outputs is a closed form; that is what makes the audit exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import special

from .._kernels.arrays import _identity
from .._kernels.laplace import _log1p_ratio, _piece_log_mass, _piece_mass_diffs
from ..neighbours import Neighbours

__all__ = [
    "PrivacyDescription",
    "corner_pairs",
    "laplace_cdf_curvature",
    "laplace_description",
    "laplace_log_mass_ratio",
    "laplace_mass_curvature",
    "union_description",
    "DiscreteDescription",
]


@dataclass(frozen=True)
class PrivacyDescription:
    """How the law of a mechanism depends on its true value, in the terms the auditor needs.

    Attributes
    ----------
    center, scale : callable
        ``q -> m(q)`` and ``q -> s(q) > 0`` (vectorized) of the kernel, in the output coordinate ``t``.
    pieces : tuple of (float, float)
        Closed intervals in ``t`` carrying the density (ends may be infinite); independent of ``q``.
    atoms : tuple of (float, callable) or (float, callable, callable)
        Point masses: ``(t, q -> log mass)``, optionally with ``(q1, q2) -> log mass(q1) - log mass(q2)``
        computed accurately for close pairs.
    log_norm : callable or None
        ``q -> log N(q)``, the log of the density's normalizing mass (``None``: ``N = 1``).
    log_norm_ratio : callable or None
        ``(q1, q2) -> log N(q2) - log N(q1)``, accurate also when the two are close (where the plain
        difference of two logarithms near ``log(1/2)`` keeps no digit of a change of ``1e-16``); it may
        return ``(value, bound on its rounding error)``.  ``None``: the plain difference.
    shape : {'laplace', 'gauss'}
        The kernel.
    uniform : bool
        ``scale`` does not depend on ``q``.  For the Laplace kernel this also promises that ``center`` is
        monotone, ``N(q)`` is the Laplace(center(q), s) mass of a set (so ``|dlog N/dm| <= 1/s``) and every
        atom's log mass is monotone in ``q`` (the mass of a set below, or above, all the density's outputs).
        Then, for every fixed output ``t``, ``q -> -log p(t; q)`` falls and then rises (its bottom at
        ``to_q(t)``) and an atom's ``-log mass`` is monotone, so the worst pair over the band
        ``|q1 - q2| <= Δ`` (outputs cut by a window or not) is on its edge ``(u, u ± Δ)`` or pairs a bottom
        ``to_q(t)`` (``t`` the lowest or highest output) with an end of the domain: the auditor searches
        only those.
    worst_pairs : callable or None
        ``(lo, hi, delta) -> [(q1, q2), ...]``: pairs of true values in ``[lo, hi]`` at most ``delta``
        apart among which the worst case provably sits (a theorem of the family, proved where the
        family defines it).  The auditor then evaluates these pairs exactly instead of searching.
    curvature : callable or None
        ``(x, y) -> K``: a bound on ``|d^2/dq^2|`` of ``log_norm``, of ``center/scale`` (0 for a centre linear
        in ``q``) and of every atom's log mass for ``q`` in ``[x, y]`` (arrays of cells, vectorized), in units
        of ``curvature_unit**-2`` (so that scales of ``1e±300`` neither overflow nor underflow it).  With it
        the auditor's search over pairs is a certified branch and bound; without it the search falls back
        on ``lipschitz``.
    curvature_unit : float
        The unit of ``curvature`` (a length of the true values; ``laplace_description`` sets its scale).
    lipschitz : float or None
        A Lipschitz constant of ``q -> loss(q, q +- delta)`` where it is finite.
    enclosure : callable or None
        ``(x, y) -> (m_lo, m_hi, s_lo, s_hi, n_lo, n_hi)``: bounds of ``center``, ``scale`` and ``log_norm``
        over the true values in ``[x, y]`` (arrays of cells, vectorized).  The auditor's certified search
        over the whole band of pairs (a scale that varies with ``q``) needs it.
    linear_outputs : tuple of (float, float, float)
        ``(t, c, k)``: a theorem of the family that ``log p(t; q) = const - c * max(q - k, 0)`` for every ``q``
        (``c >= 0``); the certified search then bounds that output's log-ratio exactly.
    landmarks : tuple of float
        True values where the loss may change regime (bounds, piece ends, a shift).
    length : float
        A length scale of the true values: beyond ``4096 * length`` from every landmark the law's
        dependence on ``q`` is a translation up to ``e^{-4096}`` (normalizers at their limits).
    to_q : callable
        The true value whose centre is ``t`` (inverse of ``center``; for window landmarks).
    log_output : bool
        Outputs are ``x = e^t``.
    positive : bool
        True values must be ``> 0``; as ``q -> 0`` the law tends to a point mass at the output 0,
        so a domain reaching 0 has an infinite loss.
    log_q : PrivacyDescription or None
        The same family described as a function of ``log q`` (offers the neighbour relations
        ``'log'`` and ``'relative'``).
    neighbours : str
        The default neighbour relation (``'additive'`` or ``'log'``).
    exact : bool
        False when this describes the *base* of a post-processing whose own law is not described:
        the audit of the base is then an upper bound (the post-processing property).
    center_shift : float or None
        When the centre is ``q + center_shift`` exactly (a translated family), the auditor measures distances
        to it as ``(t - center_shift) - q`` with every rounding error recovered, so the rounding of the centre
        costs nothing (``None``: the centre is only known as ``center(q)``, rounded, and the auditor allows an
        ulp of it).
    noise_support : (float, float)
        ``(a, b)`` with ``a < b``: the density lives on ``[center(q) + a, center(q) + b]`` only (intersected with
        ``pieces``), a support that moves with the centre, as for bounded noise ``q + Z`` with ``|Z| <= A``
        (:class:`dpbook.TruncatedLaplaceNoise`: ``(-A, A)``; ``log_norm`` is then the kernel's log mass of
        ``[a, b]``).  Default ``(-inf, inf)``: no such limit.  A finite end makes the pure loss of every pair
        of distinct true values infinite; the auditor and the profiles read it (and refuse what they do not
        cover: a ``NotImplementedError``).
    """

    center: Callable = _identity
    scale: Callable = None
    pieces: tuple = ((-math.inf, math.inf),)
    atoms: tuple = ()
    log_norm: Callable | None = None
    log_norm_ratio: Callable | None = None
    shape: str = "laplace"
    uniform: bool = True
    worst_pairs: Callable | None = None
    curvature: Callable | None = None
    lipschitz: float | None = None
    curvature_unit: float = 1.0
    enclosure: Callable | None = None
    linear_outputs: tuple = ()
    landmarks: tuple = ()
    length: float = 1.0
    to_q: Callable = _identity
    log_output: bool = False
    positive: bool = False
    log_q: "PrivacyDescription | None" = None
    neighbours: str = "additive"
    exact: bool = True
    extra: dict = field(default_factory=dict, compare=False)
    center_shift: float | None = None
    noise_support: tuple = (-math.inf, math.inf)

    def __post_init__(self):
        a, b = (float(v) for v in self.noise_support)
        if not a < b:
            raise ValueError(
                f"noise_support must be (a, b) with a < b, got {self.noise_support!r}"
            )
        if self.shape not in ("laplace", "gauss"):
            raise ValueError(f"shape must be 'laplace' or 'gauss', got {self.shape!r}")
        if self.scale is None or not callable(self.scale):
            raise ValueError(f"scale must be a callable q -> s(q), got {self.scale!r}")
        if self.shape == "gauss" and not self.uniform:
            raise ValueError(
                "a Gaussian kernel needs a scale that does not depend on q (uniform=True)"
            )
        object.__setattr__(
            self,
            "neighbours",
            Neighbours.parse(
                "neighbours", self.neighbours, (Neighbours.ADDITIVE, Neighbours.LOG)
            ),
        )


def laplace_log_cdf_ratio(x, q1, q2, scale, upper=False):
    """``(log F(x; q1) - log F(x; q2), a bound on its rounding error)`` for the Laplace(q, scale) cdf ``F`` (its
    survival function with ``upper``), accurate also when ``q1`` and ``q2`` are close (a clamp's atom at ``x``).

    With ``z = (x - q)/s``: ``log F = log(1/2) + z`` for ``z <= 0``, so the difference is ``(q2 - q1)/s``;
    for ``z > 0``, ``log F = log(1 - e^{-z}/2)`` and the difference is a ``log1p`` of a difference of
    exponentials written with ``expm1``.
    """
    x = float(x)
    q1, q2 = np.broadcast_arrays(
        np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    )
    if upper:  # S(x; q) = F(-x; -q)
        x, q1, q2 = -x, -q1, -q2
    s = float(scale)
    z1, z2 = (x - q1) / s, (x - q2) / s
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        gap = q2 - q1
        low = gap / s
        # exact when the difference and the quotient are (checked by undoing them)
        exact = (
            (gap + q1 == q2) & (q2 - gap == q1) & (low * s == gap) & (gap / low == s)
        )
        # both z > 0: log((1 - e^{-z1}/2)/(1 - e^{-z2}/2)) = log1p((e^{-z2} - e^{-z1})/2 / (1 - e^{-z2}/2))
        num = (
            0.5
            * np.exp(-np.minimum(z1, z2))
            * -np.expm1(-np.abs(z1 - z2))
            * np.sign(z1 - z2)
        )
        high = np.log1p(num / (1 - 0.5 * np.exp(-z2)))
        # one z on each side of 0: log(1 - e^{-z}/2) - log(1/2) = log1p(-expm1(-z)) >= 0, so the two terms
        # have opposite signs and nothing cancels (the difference of two logs near log(1/2) would)
        mixed = np.where(
            z1 > 0, np.log1p(-np.expm1(-z1)) - z2, z1 - np.log1p(-np.expm1(-z2))
        )
    both_low = (z1 <= 0) & (z2 <= 0)
    value = np.where(both_low, low, np.where((z1 > 0) & (z2 > 0), high, mixed))
    with np.errstate(invalid="ignore"):
        err = np.where(
            both_low & exact,
            0.0,
            8 * np.spacing(np.abs(np.nan_to_num(value, posinf=0.0, neginf=0.0)))
            + np.where(
                both_low | ((z1 > 0) & (z2 > 0)),
                0.0,
                4 * np.spacing(np.abs(np.nan_to_num(z1)) + np.abs(np.nan_to_num(z2))),
            ),
        )
    return value, err


def laplace_description(scale, pieces=((-math.inf, math.inf),), **kw):
    """A :class:`PrivacyDescription` with a Laplace kernel of the fixed ``scale`` centred at ``q``."""
    b = float(scale)
    kw.setdefault("length", b)
    kw.setdefault("lipschitz", 4 / b)
    kw.setdefault("curvature_unit", b)
    return PrivacyDescription(
        scale=lambda q: np.full(np.shape(q), b),
        uniform=True,
        pieces=tuple(pieces),
        **kw,
    )


def laplace_cdf_curvature(scale, below=(), above=()):
    """A ``curvature`` for atoms whose log masses are Laplace(q, scale) log-cdfs at the points ``below``
    (``log P(L <= x)``) and log-survival functions at ``above`` (``log P(L >= x)``), and nothing else.

    With ``z = (x - q)/b``, ``log F = log(1/2) + z`` for ``z <= 0`` (no curvature) and ``log(1 - e^{-z}/2)`` beyond,
    whose second derivative is at most ``2 e^{-z}`` in size: on a cell of ``q`` the bound is 0 where every
    ``z <= 0`` and ``(2/b^2) e^{-max(z_min, 0)}`` otherwise, largest over the points (returned in units of
    ``b^-2``: ``laplace_description`` sets ``curvature_unit=b``).
    """
    b = float(scale)

    def curvature(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        out = np.zeros(np.broadcast(x, y).shape)
        with np.errstate(over="ignore"):
            for p in below:  # z = (p - q)/b runs over [(p - y)/b, (p - x)/b]
                out = np.maximum(
                    out,
                    np.where(
                        p - x <= 0, 0.0, 2 * np.exp(-np.maximum((p - y) / b, 0.0))
                    ),
                )
            for p in above:  # z = (q - p)/b runs over [(x - p)/b, (y - p)/b]
                out = np.maximum(
                    out,
                    np.where(
                        y - p <= 0, 0.0, 2 * np.exp(-np.maximum((x - p) / b, 0.0))
                    ),
                )
        return out

    return curvature


def corner_pairs(frozen=(-math.inf, math.inf)):
    """``worst_pairs`` for a family whose loss grows as the pair moves apart and is largest at the ends.

    The theorem the family must prove: the law is the same for every ``q`` outside ``frozen = (a, b)``
    as at the nearest of ``a``, ``b``; and for true values in ``[a, b]`` the loss over pairs at most
    ``delta`` apart is largest at a corner of the domain clipped to ``[a, b]``: ``(D1, D1 + delta)``,
    ``(D2 - delta, D2)`` or their reverses (or the two ends, if closer than ``delta``; or ``(0, delta)``
    when the clipped domain is the whole line and the loss is translation invariant).
    """
    a, b = frozen

    def pairs(lo, hi, delta):
        d1, d2 = min(max(lo, a), b), max(min(hi, b), a)
        if d2 - d1 <= delta:
            if d1 == d2:  # the law never changes on the domain
                return [(d1, d1)] if math.isfinite(d1) else [(0.0, 0.0)]
            return [(d1, d2), (d2, d1)]
        out = []
        if math.isfinite(d1):
            out += [(d1, d1 + delta), (d1 + delta, d1)]
        if math.isfinite(d2):
            out += [(d2 - delta, d2), (d2, d2 - delta)]
        return out or [(0.0, delta), (delta, 0.0)]

    return pairs


def laplace_log_mass_ratio(q1, q2, scale, lower, upper, log_mass):
    """``log N(q2) - log N(q1)`` for ``N(q)``, the Laplace(q, scale) mass of the union of ``[lower_k, upper_k]``.

    ``N(q2) - N(q1)`` is summed piece by piece as ``P(a - q2 <= L <= a - q1) - P(b - q2 <= L <= b - q1)``
    (no cancellation), divided by ``N(q1)`` and passed to ``log1p``: accurate for pairs that differ by
    ``1e-16`` scales, where ``log N(q2) - log N(q1)`` keeps no digit.  ``log_mass(q)`` gives ``log N``;
    the plain difference is used where ``N(q1)`` underflows or the ratio is far from 1.
    """
    q1, q2 = np.broadcast_arrays(
        np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    )
    lower = np.asarray(lower, dtype=float).reshape((-1,) + (1,) * q1.ndim)
    upper = np.asarray(upper, dtype=float).reshape((-1,) + (1,) * q1.ndim)
    l1, l2 = (
        np.asarray(log_mass(q1), dtype=float),
        np.asarray(log_mass(q2), dtype=float),
    )
    diff = np.sum(_piece_mass_diffs(q1, q2, lower, upper, float(scale)), axis=0)
    return _log1p_ratio(diff, l1, l2)


def laplace_mass_curvature(x, y, scale, lower, upper, log_mass):
    """A bound on ``|(log N)''|`` over ``q`` in ``[x, y]`` for the Laplace mass ``N`` of a union of intervals.

    ``N' = sum_k f_q(a_k) - f_q(b_k)`` and ``|N''| <= sum_k (f_q(a_k) + f_q(b_k))/s`` with ``f_q`` the
    Laplace(q, s) density; on the cell ``f_q(e) <= e^{-dist(e, [x, y])/s}/(2s) =: E_e`` and, as
    ``|N'/N| <= 1/s``, ``N >= sqrt(N(x) N(y)) e^{-(y - x)/(2s)}``.  So
    ``|(log N)''| <= |N''|/N + (N'/N)^2 <= E/(s N_min) + min(E/N_min, 1/s)^2`` with ``E = sum_e E_e``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ends = np.concatenate(
        [np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)]
    )
    ends = ends[np.isfinite(ends)]
    s = float(scale)
    if ends.size == 0:
        return np.zeros(np.broadcast(x, y).shape)
    e = ends.reshape((-1,) + (1,) * x.ndim)
    dist = np.maximum(np.maximum(x - e, e - y), 0.0) / s
    log_e = special.logsumexp(-dist, axis=0) - math.log(2 * s)
    log_nmin = 0.5 * (np.asarray(log_mass(x)) + np.asarray(log_mass(y))) - (y - x) / (
        2 * s
    )
    ratio = np.exp(np.minimum(log_e - log_nmin, 700.0))
    return ratio / s + np.minimum(ratio, 1 / s) ** 2


class _UnionMass:
    """``N(q)``, the Laplace(q, s) mass of a union of disjoint sorted intervals, in ``O(log n)`` per ``q``.

    The pieces wholly left of ``q`` contribute ``e^{-(q - b_j)/s} A_j`` with ``A_j`` a running log-sum over
    ``k <= j`` of ``e^{-(b_j - b_k)/s} (1 - e^{-w_k/s})/2`` (every exponent ``<= 0``), those wholly right of
    it the mirror image, and the piece holding ``q`` its own mass.  The curvature bound sums
    ``e^{-dist(e, cell)/s}`` over the finite ends the same way.
    """

    def __init__(self, scale, lower, upper):
        self.s = s = float(scale)
        self.lo, self.hi = lower, upper
        # each piece's mass seen from one of its ends, (1 - e^{-width/s})/2 (by the one home of a piece's mass)
        end = np.where(
            np.isfinite(upper), upper, np.where(np.isfinite(lower), lower, 0.0)
        )
        self.log_w = log_w = _piece_log_mass(end, s, lower, upper)
        n = lower.size
        left = np.empty(n)
        right = np.empty(n)
        for j in range(n):  # O(n) once
            left[j] = (
                log_w[j]
                if j == 0
                else np.logaddexp(left[j - 1] - (upper[j] - upper[j - 1]) / s, log_w[j])
            )
        for j in range(n - 1, -1, -1):
            right[j] = (
                log_w[j]
                if j == n - 1
                else np.logaddexp(
                    right[j + 1] - (lower[j + 1] - lower[j]) / s, log_w[j]
                )
            )
        self.left, self.right = left, right
        ends = np.sort(np.concatenate([lower, upper]))
        self.ends = ends = ends[np.isfinite(ends)]
        m = ends.size
        self.e_left, self.e_right = np.empty(m), np.empty(m)
        for j in range(m):
            self.e_left[j] = (
                0.0
                if j == 0
                else np.logaddexp(self.e_left[j - 1] - (ends[j] - ends[j - 1]) / s, 0.0)
            )
        for j in range(m - 1, -1, -1):
            self.e_right[j] = (
                0.0
                if j == m - 1
                else np.logaddexp(
                    self.e_right[j + 1] - (ends[j + 1] - ends[j]) / s, 0.0
                )
            )

    def log_mass(self, q):
        q = np.asarray(q, dtype=float)
        s, lo, hi = self.s, self.lo, self.hi
        n = lo.size
        # j: pieces with upper <= q are wholly left; k: pieces with lower >= q are wholly right
        j = np.searchsorted(hi, q, side="right") - 1
        k = np.searchsorted(lo, q, side="left")
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(
                j >= 0,
                self.left[np.maximum(j, 0)] - (q - hi[np.maximum(j, 0)]) / s,
                -np.inf,
            )
            right = np.where(
                k < n,
                self.right[np.minimum(k, n - 1)] - (lo[np.minimum(k, n - 1)] - q) / s,
                -np.inf,
            )
            inside = j + 1  # the piece holding q, if j + 1 < k
            holds = inside < k
            i = np.minimum(inside, n - 1)
            own = np.where(holds, _piece_log_mass(q, s, lo[i], hi[i]), -np.inf)
        return np.logaddexp(np.logaddexp(left, right), own)

    def ratio(self, q1, q2):
        q1, q2 = np.broadcast_arrays(
            np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
        )
        l1, l2 = self.log_mass(q1), self.log_mass(q2)
        plain = np.asarray(l2 - l1, dtype=float)
        with np.errstate(invalid="ignore"):
            err = 4 * (
                np.spacing(np.abs(np.nan_to_num(l1, neginf=0.0)))
                + np.spacing(np.abs(np.nan_to_num(l2, neginf=0.0)))
            )
        close = np.abs(q2 - q1) < 1e-3 * self.s
        if not close.any():
            return plain, err
        fine, fine_err = self._close_ratio(q1[close], q2[close])
        out = np.array(plain, dtype=float)
        out[close] = fine
        err = np.array(err, dtype=float)
        err[close] = fine_err
        return out, err

    def _close_ratio(self, q1, q2, middle=4):
        """``log N(q2) - log N(q1)`` for close pairs in ``O(log n)`` each: the pieces wholly left (right) of both
        true values scale together by ``e^{-+(q2 - q1)/s}`` (their summed mass is the running sum of
        :meth:`log_mass`); only the few pieces between are summed one by one (all of them, for the rare pair
        with more than ``middle`` pieces between)."""
        s, lo, hi = self.s, self.lo, self.hi
        n = lo.size
        lo_q, hi_q = np.minimum(q1, q2), np.maximum(q1, q2)
        j = (
            np.searchsorted(hi, lo_q, side="right") - 1
        )  # pieces 0..j wholly left of both
        k = np.searchsorted(lo, hi_q, side="left")  # pieces k.. wholly right of both
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(
                j >= 0,
                self.left[np.maximum(j, 0)] - (q1 - hi[np.maximum(j, 0)]) / s,
                -np.inf,
            )
            right = np.where(
                k < n,
                self.right[np.minimum(k, n - 1)] - (lo[np.minimum(k, n - 1)] - q1) / s,
                -np.inf,
            )
            diff = np.exp(left) * np.expm1(-(q2 - q1) / s) + np.exp(right) * np.expm1(
                (q2 - q1) / s
            )
            size = np.abs(np.exp(left) * np.expm1(-(q2 - q1) / s)) + np.abs(
                np.exp(right) * np.expm1((q2 - q1) / s)
            )
        idx = j[None, :] + 1 + np.arange(middle)[:, None]
        inside = idx < k[None, :]
        safe = np.minimum(idx, n - 1)
        parts = _piece_mass_diffs(q1[None, :], q2[None, :], lo[safe], hi[safe], s)
        diff = diff + np.sum(np.where(inside, parts, 0.0), axis=0)
        size = size + np.sum(np.where(inside, np.abs(parts), 0.0), axis=0)
        many = (k - j - 1) > middle
        l1 = self.log_mass(q1)
        out = _log1p_ratio(diff, l1, self.log_mass(q2))
        if many.any():
            out[many] = laplace_log_mass_ratio(
                q1[many], q2[many], s, lo, hi, self.log_mass
            )
            size[many] = (
                np.inf
            )  # summed piece by piece: bounded below by the generic allowance only
        # the terms' rounding (a few ulps each, and of the running sums), relative to N(q1)
        with np.errstate(over="ignore", invalid="ignore"):
            err = 64 * np.finfo(float).eps * size * np.exp(-l1)
        err = np.where(np.isfinite(err), err, 64 * np.spacing(np.abs(out)))
        return out, err + 16 * np.spacing(np.abs(out))

    def curvature(self, x, y):
        x, y = np.broadcast_arrays(
            np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        )
        s, e = self.s, self.ends
        if e.size == 0:
            return np.zeros(x.shape)
        m = e.size
        j = np.searchsorted(e, x, side="left") - 1  # ends < x
        k = np.searchsorted(e, y, side="right")  # ends > y
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(
                j >= 0,
                self.e_left[np.maximum(j, 0)] - (x - e[np.maximum(j, 0)]) / s,
                -np.inf,
            )
            right = np.where(
                k < m,
                self.e_right[np.minimum(k, m - 1)] - (e[np.minimum(k, m - 1)] - y) / s,
                -np.inf,
            )
        count = np.maximum(k - j - 1, 0)
        with np.errstate(divide="ignore"):
            log_e = np.logaddexp(np.logaddexp(left, right), np.log(count)) - math.log(
                2 * s
            )
        log_nmin = 0.5 * (self.log_mass(x) + self.log_mass(y)) - (y - x) / (2 * s)
        ratio = np.exp(
            np.minimum(log_e + math.log(s) - log_nmin, 700.0)
        )  # E s/N_min: scale-free
        return ratio + np.minimum(ratio, 1.0) ** 2  # in units of s^-2


def union_description(scale, lower, upper, shift=0.0, **kw):
    """The description of ``q + shift + L_b`` conditioned on the union of ``[lower_k, upper_k]`` (and normalized).

    Truncation, normalization and restriction of a Laplace base are all this law.  Its log-normalizer
    is :func:`laplace_log_mass` (with an accurate ratio, :func:`laplace_log_mass_ratio`) and the curvature
    bound of :func:`laplace_mass_curvature`; the landmarks are the ends and the gaps' middles (in ``q``).
    """
    b = float(scale)
    lower = np.array(lower, dtype=float).ravel()
    upper = np.array(upper, dtype=float).ravel()
    order = np.argsort(lower)
    lower, upper = lower[order], upper[order]

    built = []

    def mass():  # built on first use (O(n)), so the auditor can refuse a request before paying for it
        if not built:
            built.append(_UnionMass(b, lower, upper))
        return built[0]

    def log_norm(q):
        return mass().log_mass(np.asarray(q, dtype=float) + shift)

    def ratio(q1, q2):
        return mass().ratio(
            np.asarray(q1, dtype=float) + shift, np.asarray(q2, dtype=float) + shift
        )

    def curvature(x, y):
        return mass().curvature(
            np.asarray(x, dtype=float) + shift, np.asarray(y, dtype=float) + shift
        )

    ends = np.r_[lower, upper]
    ends = tuple((ends[np.isfinite(ends)] - shift).tolist())
    middles = tuple((0.5 * (upper[:-1] + lower[1:]) - shift).tolist())
    kw.setdefault("landmarks", ends + middles)
    if shift:
        kw.setdefault("center", lambda q: np.asarray(q, dtype=float) + shift)
        kw.setdefault("to_q", lambda t: t - shift)
    return laplace_description(
        b,
        tuple(zip(lower.tolist(), upper.tolist())),
        log_norm=log_norm,
        log_norm_ratio=ratio,
        curvature=curvature,
        **kw,
    )


@dataclass(frozen=True)
class DiscreteDescription:
    """How the law of an integer-valued mechanism depends on its (integer) true value.

    Attributes
    ----------
    log_ratio : callable
        ``(k, q1, q2) -> log P(M(q1) = k) - log P(M(q2) = k)`` for integer outputs ``k`` in the support
        (vectorized, broadcast), accurate also when the two laws are close (``+inf``/``-inf`` where one
        mass is 0).
    logpmf : callable
        ``(k, q) -> log P(M(q) = k)`` (for checks; the auditor uses ``log_ratio``).
    support : (float, float)
        The smallest integer interval holding every output (ends may be infinite).
    outputs : callable
        ``(q1, q2) -> array of integers`` (one row per pair, broadcast): a theorem of the family that on
        every integer interval of outputs the log-ratio is largest at the interval's ends or at one of
        these.
    worst_pairs : callable or None
        ``(lo, hi, delta) -> [(q1, q2), ...]``: integer pairs in ``[lo, hi]`` at most ``delta`` apart
        among which the worst pair provably sits.
    exact : bool
        ``False`` when this describes the *base* of a post-processing whose own law is not described
        (:class:`dpbook.CountPostProcessed`): the base's loss is then an upper bound only.
    kernel_rate : float or None
        ``λ > 0``: a theorem of the family that the law of ``M(q)`` is the discrete Laplace kernel
        ``∝ e^{-λ |k - q|}`` on the integers, conditioned on the support or with the kernel's mass beyond a
        finite end of the support held at that end (a clamp).  Between a support end and the nearer true
        value, and beyond both, the masses of two laws are then geometric of ratio ``e^{∓λ}`` with a constant
        log-ratio, which :func:`dpbook.privacy_profile` sums in closed form over an infinite support
        (``None``: only a finite support is summed).
    """

    log_ratio: Callable
    logpmf: Callable
    support: tuple
    outputs: Callable
    worst_pairs: Callable | None = None
    exact: bool = True
    kernel_rate: float | None = None
