"""Private engine of the histogram releases: input checks, exact lattice sums, 2-D quadrature.

Shared by :mod:`.release`, :mod:`.exact` and :mod:`.allocation` (one home).  Two exact ways of taking
an expectation over the noise of ``n <= 3`` cells:

* **Lattice sums** (discrete Laplace noise ``K``, ``P(K = k) = c0 α^|k|``, ``c0 = (1 - α)/(1 + α)``).
  A function of the noisy vector that depends on it only through the differences ``y_i - y_n``
  (the simplex projections: adding a constant to ``y`` does not move them) is summed over the
  ``n - 1`` differences ``D_j = K_j - K_n`` with their joint law in closed form; any other over the
  ``n`` noises.  The sums stop at ``|d| <= M`` with ``M`` the least integer whose neglected mass is
  below ``1e-17`` (computed in closed form, so the cut is certified).
* **Gauss–Legendre quadrature** (Laplace noise, 3 cells) over the two differences scaled by ``b``,
  split at every line where the integrand is not smooth, so that each piece is analytic.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from ..families.discrete import DiscreteLaplace
from ..families.laplace import Laplace

#: The input mechanisms whose release is the true count plus independent noise (a location family).
#: The contract (:class:`dpbook.Mechanism`) has no trait saying so, so this documented set says it.
#: Exact types: a subclass may change the law.
NOISE_FAMILIES = (Laplace, DiscreteLaplace)

#: the neglected mass of a lattice sum (and of the quadrature's domain)
TAIL = 1e-17

#: the largest number of points a lattice sum or quadrature evaluates (refused beyond)
MAX_POINTS = 2 * 10**7

_CHUNK = 2**18
EPS = float(np.finfo(float).eps)


# --- input checks ---------------------------------------------------------------------------------


def noise_family(mechanism):
    """Return ``mechanism`` if it adds independent noise to the count (:data:`NOISE_FAMILIES`), else raise."""
    if type(mechanism) not in NOISE_FAMILIES:
        raise ValueError(
            "mechanism must be dpbook.Laplace(scale) or dpbook.DiscreteLaplace(scale) (a release "
            f"that is the true count plus independent noise), got {mechanism!r}"
        )
    return mechanism


def tie_generator(ties, rng):
    """The generator of the random order for ``ties="random"``, ``None`` for ``ties="first"``
    (which reads no ``rng``); any other rule, or an ``rng`` given with ``"first"``, is a ``ValueError``."""
    if ties not in ("first", "random"):
        raise ValueError(f"ties must be 'first' or 'random', got {ties!r}")
    if ties == "first":
        if rng is not None:
            raise ValueError(f"rng is read with ties='random' only, got rng={rng!r}")
        return None
    return check.generator(rng)


def post_function(post, table):
    """``table[post]`` for a known name, else a ``ValueError`` naming ``post``."""
    if not isinstance(post, str) or post not in table:
        raise ValueError(f"post must be one of {sorted(table)}, got {post!r}")
    return table[post]


def counts_array(counts, mechanism):
    """True counts, shape ``(..., n)``, ``n >= 1``: nonnegative, integers for an integer-valued family."""
    if mechanism.integer_valued:
        arr = check.integer_array("counts", counts)
    else:
        arr = check.finite_array("counts", counts)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(
            f"counts must have shape (..., n) with n >= 1 cells, got {counts!r}"
        )
    if (arr < 0).any():
        raise ValueError(f"counts must be >= 0, got {counts!r}")
    return arr


def total_array(total, counts, *, integer):
    """The public total: ``counts.sum(-1)`` when ``None``; finite, ``>= 0``, an integer if ``integer``."""
    if total is None:
        return counts.sum(axis=-1)
    return per_histogram("total", total, counts.shape, integer=integer)


def per_histogram(name, value, shape, *, integer=False):
    """One nonnegative number per histogram of ``shape`` ``(..., n)``: finite (an integer if
    ``integer``), ``>= 0``, broadcasting with ``shape[:-1]``; else a ``ValueError`` naming ``name``."""
    if integer:
        t = check.integer_array(name, value)
    else:
        t = check.finite_array(name, value)
    if (t < 0).any():
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    try:
        np.broadcast_shapes(t.shape, shape[:-1])
    except ValueError:
        raise ValueError(
            f"{name} must broadcast with the histograms' shape {shape[:-1]}, got {value!r}"
        ) from None
    return t


def n_sims_count(n_sims):
    return check.count("n_sims", n_sims, 2)


# --- the discrete Laplace noise and its differences -----------------------------------------------


def _alpha(lam):
    return math.exp(-lam)


def noise_tail(m, lam):
    """``P(|K| > m)`` for one discrete Laplace noise: ``2 α^{m+1}/(1 + α)``."""
    return 2.0 * math.exp(-(m + 1.0) * lam) / (1.0 + _alpha(lam))


def difference_tail(m, lam):
    """``P(|K_1 - K_2| > m)`` in closed form: ``2 α^{m+1} ((1 + m(1 - α))/(1 + α)² + (1 + α²)/(1 + α)³)``."""
    a = _alpha(lam)
    om = -math.expm1(-lam)
    return (
        2.0
        * math.exp(-(m + 1.0) * lam)
        * ((1.0 + m * om) / (1.0 + a) ** 2 + (1.0 + a * a) / (1.0 + a) ** 3)
    )


def _cut(tail):
    """The least integer ``M >= 0`` with ``tail(M) <= TAIL`` (``tail`` decreasing)."""
    if tail(0) <= TAIL:
        return 0
    hi = 1
    while tail(hi) > TAIL:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tail(mid) > TAIL:
            lo = mid
        else:
            hi = mid
    return hi


def _noise_pmf(k, lam):
    """``P(K = k) = (1 - α)/(1 + α) α^|k|``."""
    with np.errstate(over="ignore"):
        return math.tanh(lam / 2) * np.exp(-np.abs(k) * lam)


def difference_pmf(d, lam):
    """``P(K_1 - K_2 = d) = c0² α^|d| (|d| + 1 + 2α²/(1 - α²))``."""
    a, om = _alpha(lam), -math.expm1(-lam)
    ad = np.abs(d)
    with np.errstate(over="ignore"):
        return np.exp(-ad * lam) * (
            om * om * (ad + 1.0) / (1.0 + a) ** 2 + 2.0 * a * a * om / (1.0 + a) ** 3
        )


def difference_pmf2(d1, d2, lam):
    """``P(K_1 - K_3 = d1, K_2 - K_3 = d2) = c0³ Σ_k α^{|k| + |k + d1| + |k + d2|}`` in closed form.

    With the breakpoints ``b1 <= b2 <= b3`` of ``{0, -d1, -d2}`` the exponent ``E(k)`` is linear with
    slope ``-3, -1, 1, 3`` on ``(-∞, b1], (b1, b2], (b2, b3], (b3, ∞)``: four geometric sums,
    ``α^{E(b1)}/(1 - α³) + α^{E(b2)}(1 - α^{b2-b1})/(1 - α) + α^{E(b2)+1}(1 - α^{b3-b2})/(1 - α)
    + α^{E(b3)+3}/(1 - α³)``.
    """
    a, om = _alpha(lam), -math.expm1(-lam)
    b = np.sort(np.stack(np.broadcast_arrays(np.zeros_like(d1), -d1, -d2)), axis=0)
    e1 = (b[1] - b[0]) + (b[2] - b[0])
    e2 = b[2] - b[0]
    e3 = (b[2] - b[0]) + (b[2] - b[1])
    outer = om * om / ((1.0 + a) ** 3 * (1.0 + a + a * a))
    inner = om * om / (1.0 + a) ** 3
    with np.errstate(over="ignore"):
        return outer * (np.exp(-e1 * lam) + np.exp(-(e3 + 3.0) * lam)) + inner * (
            np.exp(-e2 * lam) * -np.expm1(-(b[1] - b[0]) * lam)
            + np.exp(-(e2 + 1.0) * lam) * -np.expm1(-(b[2] - b[1]) * lam)
        )


class LatticeSum:
    """``E[g(c + K)]`` by exact lattice sums, for ``n <= 3`` cells of discrete Laplace noise.

    ``shift_invariant``: ``g`` depends on ``y`` only through ``y - y_n`` (summed over the differences).
    After the call: ``sums`` (the truncated expectation), ``abs_sums`` (of ``|g|``), ``tail`` (a certified
    bound on the neglected mass), ``points``.
    """

    def __init__(self, g, c, lam, *, shift_invariant):
        n = c.size
        if shift_invariant and n > 1:
            dim = n - 1
            m = _cut(lambda k: dim * difference_tail(k, lam))
            self.tail = dim * difference_tail(m, lam)
        else:
            dim = n
            m = _cut(lambda k: dim * noise_tail(k, lam))
            self.tail = dim * noise_tail(m, lam)
        self.points = (2 * m + 1) ** dim
        if self.points > MAX_POINTS:
            raise ValueError(
                f"mechanism: scale={1 / lam!r} needs {self.points:.3g} lattice points for an exact sum on "
                f"{n} cells (at most {MAX_POINTS:.0e}); use the simulated functions (n_sims=...)"
            )
        shape = (2 * m + 1,) * dim
        sums = abs_sums = 0.0
        for start in range(0, self.points, _CHUNK):
            idx = np.arange(start, min(start + _CHUNK, self.points))
            d = np.stack(np.unravel_index(idx, shape), axis=-1).astype(float) - m
            if dim == n:
                w = np.prod(_noise_pmf(d, lam), axis=-1)
                y = c + d
            else:
                if dim == 1:
                    w = difference_pmf(d[:, 0], lam)
                else:
                    w = difference_pmf2(d[:, 0], d[:, 1], lam)
                y = np.concatenate([c[:-1] - c[-1] + d, np.zeros((len(d), 1))], axis=1)
            vals = g(y)
            sums = sums + w @ vals
            abs_sums = abs_sums + w @ np.abs(vals)
        self.sums, self.abs_sums = sums, abs_sums

    def rounding(self):
        """A bound on the rounding error of the sums: pmf values to ``16 eps``, pairwise summation."""
        return (16.0 + math.log2(self.points + 1)) * EPS * self.abs_sums


# --- Laplace noise: the differences of two Laplace laws -------------------------------------------


def _w(u, beta):
    with np.errstate(over="ignore", divide="ignore"):
        return np.minimum(np.asarray(u, dtype=float) / beta, 800.0)


def difference_sf(u, beta):
    """``P(D > u)`` for ``u >= 0``, ``D`` the difference of two Laplace laws of scale ``beta``:
    its density is ``(1 + |d|/β) e^{-|d|/β}/(4β)``, so ``P(D > u) = e^{-u/β}(2 + u/β)/4``."""
    w = _w(u, beta)
    return 0.25 * np.exp(-w) * (2.0 + w)


def _e1m1(d):
    """``(1 - e^{-d})/d - 1 = Σ_{k>=1} (-d)^k/(k + 1)!`` for ``0 <= d <= 0.5``."""
    out, term = 0.0, 1.0
    for k in range(1, 24):
        term *= -d / (k + 1)
        out += term
    return out


def sf_integral(u1, u2, beta):
    """``(∫_{u1}^{u2} P(D > u) du, ∫_{u1}^{u2} u P(D > u) du)`` for ``0 <= u1 <= u2 <= ∞`` (scalars).

    With ``w = u/β`` and ``δ = (u2 - u1)/β``: ``(β/4) e^{-w1} ((3 + w1)(1 - e^{-δ}) - δ e^{-δ})`` and
    ``(β²/4) e^{-w1} (p²(1 - e^{-δ}) - e^{-δ}(2pδ + δ²))``, ``p = w1 + 2`` (antiderivatives
    ``-e^{-w}(3 + w)`` and ``-e^{-w}(w + 2)²``), the second by the series of ``(1 - e^{-δ})/δ`` for
    ``δ <= 1/2``, where the difference of the two terms would cancel.
    """
    w1 = float(_w(u1, beta))
    if math.isinf(u2):
        d = math.inf
    else:
        d = float(_w(u2 - u1, beta))
    scale = 0.25 * math.exp(-w1)
    p = w1 + 2.0
    if math.isinf(d):
        q0, q1 = 3.0 + w1, p * p
    else:
        ed = math.exp(-d)
        q0 = (3.0 + w1) * -math.expm1(-d) - d * ed
        if d > 0.5:
            q1 = p * p * -math.expm1(-d) - ed * (2 * p * d + d * d)
        else:
            e1m1 = _e1m1(d)
            e1 = 1.0 + e1m1
            q1 = d * (p * (w1 * e1 + 2.0 * e1m1) - d + d * e1 * (2 * p + d))
    return beta * scale * q0, beta * beta * scale * q1


def tail_integral(k, t1, t2, e0, beta):
    """``(∫_{t1}^{t2} t^k P(e0 + D > t) dt, magnitude)`` for ``k`` in ``{0, 1}``, ``t1 <= t2`` finite.

    Split at ``e0``: right of it ``P = P(D > t - e0)`` (:func:`sf_integral`), left of it ``1 - P(D > e0 - t)``.
    ``magnitude`` is the sum of the absolute values of the terms (for the rounding bound).
    """
    value = mag = 0.0
    lo = max(t1, e0)
    if t2 > lo:
        a0, a1 = sf_integral(lo - e0, t2 - e0, beta)
        terms = (a0,) if k == 0 else (a1, e0 * a0)
        value += sum(terms)
        mag += sum(abs(t) for t in terms)
    hi = min(t2, e0)
    if hi > t1:
        a0, a1 = sf_integral(e0 - hi, e0 - t1, beta)
        terms = (hi - t1, -a0) if k == 0 else ((hi * hi - t1 * t1) / 2, -e0 * a0, a1)
        value += sum(terms)
        mag += sum(abs(t) for t in terms)
    return value, mag


def difference_interval_prob(lo, hi, beta):
    """``P(lo < D < hi)`` (arrays, ``lo <= hi``, ±inf allowed) from the tail on the far side of 0."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    s_lo = difference_sf(np.abs(lo), beta)
    s_hi = difference_sf(np.abs(hi), beta)
    return np.where(
        lo >= 0, s_lo - s_hi, np.where(hi <= 0, s_hi - s_lo, 1.0 - s_lo - s_hi)
    )


# --- Laplace noise on 3 cells: Gauss–Legendre split at the kinks ----------------------------------

#: the quadrature domain in units of b: |K_j - K_3| <= 48 b for both differences
_R = 48.0
#: extra breakpoints (units of b) where the exponential density needs shorter pieces
_SPLITS = np.array([1.0, 2.5, 5.0, 9.0, 15.0, 23.0, 34.0])


def _density2(s, r):
    """Density of ``(K_1 - K_3, K_2 - K_3)/b`` for Laplace ``K_j`` of scale ``b`` (the lattice formula's
    continuous twin): ``(e^{-E(b1)}/3 + e^{-E(b3)}/3 + e^{-E(b2)}(2 - e^{-(b2-b1)} - e^{-(b3-b2)}))/8``."""
    b = np.sort(np.stack(np.broadcast_arrays(np.zeros_like(s), -s, -r)), axis=0)
    e1 = (b[1] - b[0]) + (b[2] - b[0])
    e2 = b[2] - b[0]
    e3 = (b[2] - b[0]) + (b[2] - b[1])
    return (
        (np.exp(-e1) + np.exp(-e3)) / 3
        + np.exp(-e2) * (-np.expm1(-(b[1] - b[0])) - np.expm1(-(b[2] - b[1])))
    ) / 8


def _quad2(g, c, beta, lines, nodes):
    """``E[g(y)]`` with ``y = (c1 - c3 + b s, c2 - c3 + b r, 0)``, nested Gauss–Legendre of ``nodes`` points
    per piece; ``lines`` are the kinks ``α s + β r + γ = 0`` (rows ``(α, β, γ)``) in the scaled coordinates."""
    x, wts = np.polynomial.legendre.leggauss(nodes)
    kink = np.asarray(lines, dtype=float)
    # outer breakpoints: vertical kinks, pairwise crossings, the splits
    al, be, ga = kink[:, 0], kink[:, 1], kink[:, 2]
    vert = -ga[be == 0] / al[be == 0]
    det = al[:, None] * be[None, :] - al[None, :] * be[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (be[:, None] * ga[None, :] - be[None, :] * ga[:, None]) / det
    cross = cross[np.isfinite(cross)]
    outer = np.concatenate([vert, cross, _SPLITS, -_SPLITS, [0.0, -_R, _R]])
    outer = np.unique(outer[(outer >= -_R) & (outer <= _R)])
    s0, s1 = outer[:-1], outer[1:]
    keep = s1 - s0 > 1e-13 * _R
    s0, s1 = s0[keep], s1[keep]
    half = (s1 - s0) / 2
    s = ((s0 + s1) / 2)[:, None] + half[:, None] * x
    ws = (half[:, None] * wts).ravel()
    s = s.ravel()
    slant = be != 0
    extra = np.concatenate([_SPLITS, -_SPLITS, [-_R, _R]])
    points = s.size * (slant.sum() + 2 * extra.size) * nodes
    if points > MAX_POINTS:
        raise ValueError(
            f"counts/total: the exact quadrature needs {points:.3g} points (at most {MAX_POINTS:.0e}); "
            "use simulate_histogram_moments"
        )
    a1, a2 = c[0] - c[2], c[1] - c[2]
    total = 0.0
    step = max(1, _CHUNK // max(1, points // s.size))
    for i in range(0, s.size, step):
        si, wi = s[i : i + step], ws[i : i + step]
        cuts = -(al[slant] * si[:, None] + ga[slant]) / be[slant]
        cuts = np.concatenate(
            [cuts, np.broadcast_to(extra, (si.size, extra.size)), si[:, None] + extra],
            axis=1,
        )
        cuts = np.sort(np.clip(cuts, -_R, _R), axis=1)
        r0, r1 = cuts[:, :-1], cuts[:, 1:]
        h = (r1 - r0) / 2
        r = ((r0 + r1) / 2)[..., None] + h[..., None] * x
        w = (h[..., None] * wts) * wi[:, None, None]
        ss = np.broadcast_to(si[:, None, None], r.shape)
        dens = _density2(ss, r)
        y = np.stack(
            [a1 + beta * ss.ravel(), a2 + beta * r.ravel(), np.zeros(r.size)], axis=-1
        )
        total = total + (w * dens).ravel() @ g(y)
    return total


def quadrature3(g, c, beta, func_lines):
    """``(E[g(c + K)], error estimate)`` for Laplace noise of scale ``beta`` on 3 cells, ``g`` shift-invariant.

    ``func_lines`` are ``g``'s kinks as rows ``(g1, g2, g3, g0)``: ``g·y + g0 = 0`` with ``Σ g = 0``.  The
    density's kinks (``s = 0``, ``r = 0``, ``r = s``) are added.  The estimate is the difference between
    10- and 16-point rules plus the mass beyond the domain, ``e^{-R}(2 + R)`` (two differences).
    """
    a1, a2 = c[0] - c[2], c[1] - c[2]
    fl = np.asarray(func_lines, dtype=float).reshape(-1, 4)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        gam = (fl[:, 0] * a1 + fl[:, 1] * a2 + fl[:, 3]) / beta
    reach = np.abs(fl[:, :2]).sum(axis=1)
    ok = np.isfinite(gam) & (reach > 0) & (np.abs(gam) <= 2 * _R * reach)
    lines = np.concatenate(
        [
            np.stack([fl[ok, 0], fl[ok, 1], gam[ok]], axis=1),
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 1.0, 0.0]],
        ]
    )
    lines = np.unique(lines, axis=0)
    coarse = _quad2(g, c, beta, lines, 10)
    fine = _quad2(g, c, beta, lines, 16)
    tail = math.exp(-_R) * (2 + _R)
    return fine, np.abs(fine - coarse), tail
