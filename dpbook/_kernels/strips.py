"""Private exact samplers by rejection from strips: the normal law on a range, Student's t(3) right of a cut, the
Laplace law on a union of ranges, and any law right of a cut given its log-density and the extrema between which it
is monotone (the other scipy bases of :class:`dpbook.Restricted`).

A density ``f`` on its support is covered by ``1,024`` *strips*, intervals each on one side of the density's mode
(or of the true value, for the Laplace law), where ``f`` decreases away from the strip's *near* end ``n``.  A
proposal picks a strip uniformly, then a point in it: uniformly for a *flat* strip (envelope ``f(n)``, mass
``B = |w| f(n)``), or from the exponential that bounds ``f`` there for a *curved* one (Marsaglia's
``e^{-n²/2 - |n|(|x| - |n|)}`` for the normal law, the density itself for the Laplace law, the Pareto asymptote
``9c w^{-4}`` for t(3)).  With ``c = max B`` the
point is kept with probability ``(B_k/c) f(x)/envelope_k(x) = e^{-(gamma_k + h)}``, ``gamma_k = log(c/B_k)``:
exactly rejection sampling from the mixture of the strips' envelopes, whatever the strips are, so the kept points
have the law ``f`` (up to the rounding of ``h``, as every rejection sampler of :mod:`dpbook._kernels.gaussian`).

The edges only decide the cost: they are put at (nearly) equal masses of ``f`` and then moved so that the envelopes'
masses are (nearly) equal, so that ``gamma`` is near 0 on every strip and 99.5% of the proposals are kept.  Per
strip ``sure = ⌊2^11 e^{-max(gamma + h)}⌋``: a proposal whose acceptance bits are below it is kept with no
arithmetic beyond its place, which is what makes the route fast: 14-18 ns a draw on this machine, where numpy's normal
generator takes 13-15 and its Laplace one 21-23 (``benchmarks/bench_samplers.py``).

**Any law monotone between known extrema** (:func:`_generic_strip_table`) is known by its log-density ``log f``, its
log-tail and an exact sampler of its tail beyond a point.  Its 4,096 strips are all flat, at ``f`` of their near ends,
which bounds ``f`` on them only where ``f`` decreases away from the modes: the caller vouches for the law's shape (a
list of scipy's families, unimodal or with two modes in closed form), a mode may be found numerically (the strips
from a mode are raised by ``_MODE_MARGIN``), and the table is refused where the density rises away from a mode on
its grids (8,193 + 2,048 points a side and their midpoints, and nine points a strip).  The edges come from the
density alone: Simpson's rule on the grid gives the mass to each distance, inverted by cubic Hermite interpolation
(its slope ``1/f`` is known), then each strip's share is scaled by the mean envelope mass over its own, up to five
times.  The bulk ends where one strip's share of a side is left; flat
*shells* of at most the bulk's envelope mass follow, each wider than the last, until an open side's tail holds
``2^-30`` of the mass; that tail is a strip of its own, kept with probability ``B/c`` and drawn by the law's own
inverse cdf (once in a billion draws).  A proposal not decided at once is decided against ``f`` at the ends of the
eighth of its strip holding it, and only then, for about one in eight, against ``f`` itself.  99.7-99.8% of the
proposals are kept, 99.6% at once; a table costs 20-170 ms (most of it the density's: the noncentral t's and the
generalized hyperbolic's are the dearest).
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple, Optional

import numpy as np
from scipy import interpolate, special

from .._kernels.arrays import _bound_in_place
from .._kernels.gaussian import (
    _CELLS,
    _PROPOSALS,
    _SPARE_BITS,
    _SURE_DROP,
    _SURE_KEEP,
)

#: the top 10 bits of a proposal's word pick one of 1,024 strips, the next 43 place it in its strip (a resolution
#: of ``2^-53`` of the law's mass, as numpy's ``random()``), the low 11 decide its acceptance (as in
#: :func:`dpbook._kernels.gaussian._uniform_frame_draws`)
_STRIP_BITS = 10
_STRIPS = 2**_STRIP_BITS
#: the normal strips take a range with an end within this many standard deviations of the mean (the other end
#: anywhere beyond it): their edges are quantiles computed by ``ndtri`` there
_STRIP_REACH = 8.0
#: a normal strip ``[n, n + w]`` away from the mean is flat while ``n w`` is at most this, a Laplace strip while
#: ``w/b`` is; beyond, its envelope is the exponential one (its points cost a logarithm each)
_FLAT = 0.25
#: the fewest draws made by strips: a table costs 1-4 ms here (the last 16 of each law are cached), 4-15 ns a draw
#: at this size, about what the strips save against the other routes; the route depends on the size only (never on
#: what is cached), so that a seed gives the same draws whatever ran before
_STRIP_MIN = 2**18


class _Strips(NamedTuple):
    """The envelope of :func:`_strip_draws` (arrays of ``_STRIPS``): each strip's near end ``near`` and its signed
    width ``width`` (pointing away from the mode; ``±inf`` for an open end), ``gamma = log(c/B_k) >= 0``, ``sure``
    (a proposal whose acceptance bits are below it is kept at once; 0: every proposal of the strip is decided by
    :func:`_strip_decisions`), ``curved`` (the exponential envelope, ``gain = 1 - e^{-rate |width|}`` its mass
    factor; for ``"t3"`` the Pareto tail), the share of proposals kept, and the law: ``"normal"`` (standard units,
    the mode at 0), ``"laplace"`` (the release's units, ``scale`` its ``b``) or ``"t3"`` (Student's t with 3
    degrees of freedom in standard units, the strips placed at ``near`` from ``-offset``: the mode at ``offset``
    from their origin, so that an excess over a cut is placed without cancelling).  ``far`` holds the strips'
    other ends exactly where they must not be crossed (a piece's end before a gap); else ``near + width``."""

    near: np.ndarray
    width: np.ndarray
    gamma: np.ndarray
    sure: np.ndarray
    curved: np.ndarray
    gain: np.ndarray
    rate: float
    law: str
    scale: float
    offset: float = 0.0
    far: Optional[np.ndarray] = None
    #: the strips are ``2^bits``; a ``"generic"`` law's own: each flat strip's envelope ``log_env`` (``+inf`` for a
    #: strip left empty), its ``logpdf`` (standard units), ``tail(rng, k)`` the exact excesses over the tail strip's
    #: near end, and ``sub`` the log-density at the ends of each flat strip's eighths
    bits: int = _STRIP_BITS
    log_env: Optional[np.ndarray] = None
    logpdf: Optional[Callable] = None
    tail: Optional[Callable] = None
    sub: Optional[np.ndarray] = None


def _equalize(place, log_envelope, log_mass, count):
    """Edges of ``count`` strips whose envelopes have (nearly) equal masses: ``place(f)`` maps the cumulative
    fractions ``f`` (``count - 1`` of them, increasing) to the inner edges; ``log_envelope(edges)`` and
    ``log_mass(edges)`` give each strip's envelope and true log-masses.  Starting at equal true masses, the masses
    are twice made inversely proportional to the envelopes' overshoot ``B/m``."""
    weights = np.ones(count)
    for _ in range(3):
        edges = place(np.cumsum(weights[:-1]) / weights.sum())
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            over = np.exp(log_envelope(edges) - log_mass(edges))
        if not np.all(np.isfinite(over) & (over > 0)):
            break
        weights = weights / over
    return edges


def _finish(
    near,
    width,
    curved,
    gain,
    log_b,
    log_total,
    h_far,
    law,
    scale,
    offset=0.0,
    bits=_STRIP_BITS,
):
    """The :class:`_Strips` from the strips' envelopes (``log_b``), the law's total log-mass (the same units) and
    each flat strip's largest ``h`` (``h_far``; ``inf`` where every proposal is to be decided in full), or ``None``
    where they would keep less than half the proposals."""
    if not np.all(np.isfinite(log_b) | (log_b == -np.inf)) or not np.isfinite(
        log_total
    ):
        return None
    top = float(np.max(log_b))
    gamma = top - log_b
    with np.errstate(over="ignore", invalid="ignore"):
        sure = np.where(
            curved, 0.0, np.floor(_CELLS * np.exp(-(gamma + h_far)) * (1.0 - 1e-14))
        )
    rate = math.exp(log_total - top) / 2**bits
    if not rate > 0.5:
        return None
    return _Strips(
        near,
        width,
        gamma,
        np.nan_to_num(sure).astype(np.int64),
        curved,
        gain,
        min(rate, 1.0),
        law,
        scale,
        offset,
        bits=bits,
    )


def _split(minus, plus, strips=_STRIPS):
    """How many of the ``strips`` go right of the mode, for masses ``minus`` left of it and ``plus`` right (at least
    one each side)."""
    return min(max(round(strips * plus / (minus + plus)), 1), strips - 1)


def _counts(share, strips=_STRIPS):
    """How many of the ``strips`` each part gets for its ``share`` (normalized): at least one each, rounded up, the
    largest taking what is left; ``None`` where that leaves it none."""
    counts = np.maximum(np.ceil(strips * share), 1).astype(int)
    big = int(np.argmax(share))
    counts[big] = strips - (counts.sum() - counts[big])
    return None if counts[big] < 1 else counts


def _joined(sides):
    """One set of strip arrays ``(near, width, curved, gain, log_b)`` from ``[(sign, side arrays)]``: a side left of
    the mode (``sign < 0``) mirrored and reversed, so that its strip nearest the mode comes last."""
    parts = []
    for sign, (n, w, c, g, lb) in sides:
        order = slice(None, None, -1) if sign < 0 else slice(None)
        parts.append((sign * n[order], sign * w[order], c[order], g[order], lb[order]))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(5))


def _by_strips(rng, size, table, origin, step, lower, upper, minimum=None):
    """The draws of :func:`_strip_draws` from the table ``table()`` (built only for ``minimum`` draws or more,
    ``_STRIP_MIN`` by default), or ``None`` where the route does not apply (fewer draws, or no table)."""
    if size < (_STRIP_MIN if minimum is None else minimum):
        return None
    t = table()
    if t is None:
        return None
    return _strip_draws(rng, size, t, origin, step, lower, upper)


# --- the normal law on a range ----------------------------------------------------------------------------------


def _normal_side(start, end, count):
    """``count`` normal strips of ``[start, end]`` (``0 <= start < end <= inf``): near ends, widths, whether curved,
    mass factors and the envelopes' log-masses (of ``e^{-x²/2}``).

    Where the range reaches past the point ``a`` at which Marsaglia's exponential envelope ``e^{-a²/2 - a(x - a)}``
    holds one strip's share (``e^{-a²/2}/a = c``, solved by Newton's method) the last strip is ``[a, end]``; the
    edges between are quantiles of the normal law on ``[start, a]`` (upper tails: nothing rounds to 1)."""
    s_start, s_end = float(special.ndtr(-start)), float(special.ndtr(-end))
    c = (
        math.sqrt(2 * math.pi) * (s_start - s_end) / count
    )  # one strip's share of ∫ e^{-x²/2}
    a = math.sqrt(max(-2.0 * math.log(c), 1.0))
    for _ in range(8):  # Newton on -a²/2 - log a = log c
        a -= (-0.5 * a * a - math.log(a) - math.log(c)) / (-a - 1.0 / a)
    tail = count > 1 and start < a < end
    stop = a if tail else end
    s_stop = float(special.ndtr(-stop))

    def place(f):
        inner = -special.ndtri(s_start - f * (s_start - s_stop))
        edges = np.concatenate([[start], inner, [stop]])
        edges = np.maximum.accumulate(np.clip(edges, start, stop))
        return np.append(edges, end) if tail else edges

    def parts(edges):
        near, width = edges[:-1], np.diff(edges)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            curved = (near * width > _FLAT) & (near > 0)
            if tail:
                curved[-1] = True
            gain = np.where(curved, -np.expm1(-near * width), 0.0)
            log_b = (
                np.where(curved, np.log(gain) - np.log(near), np.log(width))
                - 0.5 * near * near
            )
        return near, width, curved, gain, log_b

    def log_mass(edges):
        tails = special.ndtr(-edges)
        with np.errstate(divide="ignore"):
            return np.log(math.sqrt(2 * math.pi) * (tails[:-1] - tails[1:]))[
                : count - tail
            ]

    edges = _equalize(
        place,
        lambda e: parts(e)[4][: count - tail],
        log_mass,
        count - tail,
    )
    return parts(edges)


@functools.lru_cache(maxsize=16)
def _normal_strip_table(lo, hi):
    """The :class:`_Strips` of the standard normal on ``[lo, hi]`` (``lo < hi``, an end within ``_STRIP_REACH``),
    or ``None``: each side of the mean the range holds gets strips in proportion to its mass
    (:func:`_normal_side`), a flat strip's ``h = (x² - n²)/2``, a curved one's ``(x - n)²/2``."""
    if not (lo < hi and (abs(lo) <= _STRIP_REACH or abs(hi) <= _STRIP_REACH)):
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if lo >= 0:
            mass = float(special.ndtr(-lo) - special.ndtr(-hi))
            sides = [(1.0, _normal_side(lo, hi, _STRIPS))]
        elif hi <= 0:
            mass = float(special.ndtr(hi) - special.ndtr(lo))
            sides = [(-1.0, _normal_side(-hi, -lo, _STRIPS))]
        else:
            minus, plus = 0.5 - float(special.ndtr(lo)), 0.5 - float(special.ndtr(-hi))
            mass = minus + plus
            k_plus = _split(minus, plus)
            sides = [
                (-1.0, _normal_side(0.0, -lo, _STRIPS - k_plus)),
                (1.0, _normal_side(0.0, hi, k_plus)),
            ]
        if not mass > 0:
            return None
        near, width, curved, gain, log_b = _joined(sides)
        h_far = width * (0.5 * width + near)  # (both of the side's sign)
        log_total = math.log(math.sqrt(2 * math.pi) * mass)
    return _finish(near, width, curved, gain, log_b, log_total, h_far, "normal", 1.0)


def _normal_strip_draws(rng, size, lo, hi, origin, step, lower, upper):
    """``size`` draws of ``clip(origin + step Z, lower, upper)``, ``Z`` standard normal given ``lo <= Z <= hi``, by
    strips, or ``None`` where that route does not apply (fewer than ``_STRIP_MIN`` draws, or a range the strips
    do not take: :func:`_normal_strip_table`)."""
    table = lambda: _normal_strip_table(float(lo), float(hi))  # noqa: E731
    return _by_strips(rng, size, table, origin, step, lower, upper)


# --- the Laplace law on a union of ranges -----------------------------------------------------------------------


def _laplace_side(start, end, count, scale):
    """``count`` Laplace strips at distances ``[start, end]`` from the true value (``0 <= start < end <= inf``, in
    the release's units): the edges' distances, whether each strip is curved (the exponential density itself,
    drawn by inversion), mass factors and the envelopes' log-masses (of ``e^{-d/b}``)."""
    reach = (end - start) / scale
    g = -math.expm1(-reach)
    linear = not reach > 1e-300  # flat to the doubles: masses proportional to lengths

    def place(f):
        inner = (
            start + f * (end - start) if linear else start - scale * np.log1p(-f * g)
        )
        edges = np.concatenate([[start], inner, [end]])
        return np.maximum.accumulate(np.clip(edges, start, end))

    def parts(edges):
        near, width = edges[:-1], np.diff(edges)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = width / scale
            curved = z > _FLAT
            gain = np.where(curved, -np.expm1(-z), 0.0)
            log_b = np.where(curved, math.log(scale) + np.log(gain), np.log(width))
            log_b = log_b - near / scale
        return near, width, curved, gain, log_b

    def log_mass(edges):
        near, width = edges[:-1], np.diff(edges)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = width / scale
            return np.where(
                z > 1e-8,
                math.log(scale) + np.log(-np.expm1(-z)),
                np.log(width) + np.log1p(-0.5 * z),
            ) - (near / scale)

    edges = _equalize(place, lambda e: parts(e)[4], log_mass, count)
    return edges, *parts(edges)[2:]


def _laplace_sides(q, lo, hi):
    """The sides of the union of ``[lo_k, hi_k]`` seen from ``q``: ``(sign, start, end, near end, far end)`` with the
    distances ``start < end`` from ``q`` and the sides' ends in the release's units (the piece holding ``q`` is two
    sides, each from ``q``)."""
    sides = []
    for a, b in zip(lo, hi):
        if b <= q:  # left of q: from b down to a
            sides.append((-1.0, q - b, q - a, b, a))
        elif a >= q:
            sides.append((1.0, a - q, b - q, a, b))
        else:
            sides.append((-1.0, 0.0, q - a, q, a))
            sides.append((1.0, 0.0, b - q, q, b))
    return sides


@functools.lru_cache(maxsize=16)
def _laplace_strip_table(q, scale, lo, hi):
    """The :class:`_Strips` of the Laplace law ``e^{-|x - q|/b}`` on the union of ``[lo_k, hi_k]`` (tuples), in the
    release's units, or ``None`` (more than 256 sides, or too few strips kept).

    Each side gets strips in proportion to its mass (at least one; rounded up, the largest side taking the rest).
    A flat strip's ``h = |x - n|/b``; a curved one is the exponential law itself (``h = 0``).  The last strip of a
    side whose far end is finite is decided in full (``sure = 0``), so that its points, placed by
    :func:`_strip_decisions`, are kept within the piece (a rounding of the place may not cross into a gap)."""
    sides = [s for s in _laplace_sides(q, lo, hi) if s[2] > s[1]]
    if not sides or len(sides) > _STRIPS // 4:
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        start = np.array([s[1] for s in sides])
        end = np.array([s[2] for s in sides])
        z = (end - start) / scale
        log_side = np.where(
            z > 1e-300,
            math.log(scale) + np.log(-np.expm1(-z)),
            np.log(end - start),
        ) - (start / scale)
    if not np.all(np.isfinite(log_side)):
        return None
    share = np.exp(log_side - np.max(log_side))
    share /= share.sum()
    counts = _counts(share)
    if counts is None:
        return None
    parts = []
    for (sign, s, e, near_end, far_end), n in zip(sides, counts):
        d, curved, gain, log_b = _laplace_side(s, e, int(n), scale)
        x = q + sign * d  # the edges in the release's units, the side's ends exact
        x[0], x[-1] = near_end, far_end
        x = np.maximum.accumulate(x) if sign > 0 else np.minimum.accumulate(x)
        width = np.diff(x)
        last = np.zeros(int(n), dtype=bool)
        last[-1] = math.isfinite(far_end)
        parts.append((x[:-1], width, curved, gain, log_b, last, x[1:]))
    near, width, curved, gain, log_b, last, far = (
        np.concatenate([p[i] for p in parts]) for i in range(7)
    )
    log_total = float(special.logsumexp(log_side))
    with np.errstate(over="ignore"):
        h_far = np.where(last, np.inf, np.abs(width) / scale)
    table = _finish(
        near, width, curved, gain, log_b, log_total, h_far, "laplace", scale
    )
    return None if table is None else table._replace(far=far)


def _laplace_strip_draws(rng, size, q, scale, lo, hi):
    """``size`` draws of ``q + L_b`` conditioned on the union of ``[lo_k, hi_k]``, by strips, or ``None`` where the
    route does not apply (fewer than ``_STRIP_MIN`` draws; :func:`_laplace_strip_table`)."""
    table = lambda: _laplace_strip_table(  # noqa: E731
        float(q), float(scale), tuple(map(float, lo)), tuple(map(float, hi))
    )
    return _by_strips(rng, size, table, 0.0, 1.0, float(lo[0]), float(hi[-1]))


# --- Student's t with 3 degrees of freedom right of a cut ----------------------------------------------------------

#: the t(3) density's constant: ``f(w) = _T3_C (1 + w²/3)^{-2}``
_T3_C = 2.0 / (math.pi * math.sqrt(3.0))


def _t3_sf(t):
    """``P(W > t)`` for t(3) and ``t >= 0``: ``(atan(√3/t) - u/(1 + u²))/π``, ``u = t/√3`` (closed form; its
    cancellation far right, about ``u²`` ulps, is harmless here: the strips' edges and masses only set their
    cost), ``2/(3π u³)`` beyond ``u = 10^4``."""
    u = np.asarray(t, dtype=float) / math.sqrt(3.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        near = (np.arctan2(1.0, u) - u / (1.0 + u * u)) / math.pi
        far = 2.0 / (3.0 * math.pi * u**3)
    return np.where(u < 1e4, near, far)


def _t3_isf(s):
    """The ``t >= 0`` with ``P(W > t) = s`` for ``s`` in ``(0, 1/2]``: six steps of Newton's method on
    ``log P(W > t)`` (whose slope is ``-f/S``) from the tail's ``√3 (2/(3πs))^{1/3}`` (or, near the mode, the line
    through ``f(0)``), to a relative ``1e-9`` or so: enough for edges, which only set the strips' cost."""
    s = np.asarray(s, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        tail = math.sqrt(3.0) * (2.0 / (3.0 * math.pi * s)) ** (1.0 / 3.0)
        t = np.where(s > 0.15, (0.5 - s) / _T3_C, tail)
        log_s = np.log(s)
        for _ in range(6):
            f = _T3_C / (1.0 + t * t / 3.0) ** 2
            sf = _t3_sf(t)
            t = np.maximum(t + (np.log(sf) - log_s) * sf / f, 0.5 * t)
    return np.where(s >= 0.5, 0.0, t)


def _t3_side(start, end, count):
    """``count`` t(3) strips of ``[start, end]`` (``0 <= start < end <= inf``), as :func:`_normal_side`: flat strips,
    and for an open end a last strip ``[a, inf)`` under the Pareto envelope ``9 _T3_C w^{-4}`` (the density's
    asymptote, above it everywhere: ``f(w) w^4/(9 _T3_C) = (1 + 3/w²)^{-2}``), of mass ``3 _T3_C/a³``, at the ``a``
    where that is one strip's share."""
    s_start, s_end = float(_t3_sf(start)), float(_t3_sf(end))
    c = (s_start - s_end) / count  # one strip's share
    a = (3.0 * _T3_C / c) ** (1.0 / 3.0)
    tail = count > 1 and start < a < end and math.isinf(end)
    stop = a if tail else end
    s_stop = float(_t3_sf(stop))

    def place(f):
        inner = _t3_isf(s_start - f * (s_start - s_stop))
        edges = np.concatenate([[start], inner, [stop]])
        edges = np.maximum.accumulate(np.clip(edges, start, stop))
        return np.append(edges, end) if tail else edges

    def parts(edges):
        near, width = edges[:-1], np.diff(edges)
        curved = np.zeros(near.size, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_b = np.log(width) + math.log(_T3_C) - 2.0 * np.log1p(near * near / 3.0)
            if tail:
                curved[-1] = True
                log_b[-1] = math.log(3.0 * _T3_C) - 3.0 * math.log(near[-1])
        return near, width, curved, np.zeros(near.size), log_b

    def log_mass(edges):
        tails = _t3_sf(edges)
        with np.errstate(divide="ignore"):
            return np.log(tails[:-1] - tails[1:])[: count - tail]

    edges = _equalize(
        place, lambda e: parts(e)[4][: count - tail], log_mass, count - tail
    )
    return parts(edges)


def _t3_h(y, n):
    """``log f(n) - log f(n + y)`` for t(3): ``2 log1p(y (y + 2n)/(3 + n²))`` (no cancellation)."""
    return 2.0 * np.log1p(y * (y + 2.0 * n) / (3.0 + n * n))


@functools.lru_cache(maxsize=16)
def _t3_strip_table(cut):
    """The :class:`_Strips` of t(3) on ``[cut, inf)`` (``|cut| <= _STRIP_REACH``), placed as excesses over the cut
    (``offset = cut``), or ``None``."""
    if not abs(cut) <= _STRIP_REACH:
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if cut >= 0:
            mass = float(_t3_sf(cut))
            sides = [(1.0, _t3_side(cut, math.inf, _STRIPS))]
        else:
            minus, plus = 0.5 - float(_t3_sf(-cut)), 0.5
            mass = minus + plus
            k_plus = _split(minus, plus)
            sides = [
                (-1.0, _t3_side(0.0, -cut, _STRIPS - k_plus)),
                (1.0, _t3_side(0.0, math.inf, k_plus)),
            ]
        near, width, curved, gain, log_b = _joined(sides)
        h_far = _t3_h(width, near)
        if cut < 0:
            last = int(
                np.argmin(near)
            )  # the strip reaching down to the cut: decided in full, kept right of it
            h_far[last] = np.inf
    table = _finish(
        near, width, curved, gain, log_b, math.log(mass), h_far, "t3", 1.0, cut
    )
    if table is None:
        return None
    # placed as excesses over the cut: near - cut (exactly 0 for the strip at the cut)
    return table._replace(near=np.maximum(near - cut, 0.0))


def _t3_strip_draws(rng, size, cut, scale):
    """``size`` draws of ``scale (W - cut)`` given ``W >= cut``, ``W`` Student's t(3), by strips, or ``None`` where the
    route does not apply (fewer than ``_STRIP_MIN`` draws; :func:`_t3_strip_table`)."""
    table = lambda: _t3_strip_table(float(cut))  # noqa: E731
    return _by_strips(rng, size, table, 0.0, scale, 0.0, math.inf)


# --- any law monotone between known extrema, right of a cut (the other scipy bases of Restricted) -------------------

#: the log-margin over ``log f(m)`` of the envelope of a strip whose near end is a mode ``m`` found numerically: it
#: covers a mode missed by ``δ`` while ``δ |(log f)'|`` (a cusp) or ``δ² |(log f)''|/2`` stays below it
_MODE_MARGIN = 1e-6
#: the most strips a side gives to its *shells*, the flat strips beyond its bulk (each of the bulk's envelope mass
#: at most, each wider than the last as the density falls), before an open side ends in its exact tail
_SHELLS = 12
#: an open side ends in its exact tail (drawn by the law's own inverse) once the tail holds at most this share of
#: the law's mass: its draws cost a quantile each (scipy's root search for some bases), this rarely
_TAIL_SHARE = 2.0**-30
#: the generic strips are 4,096 (12 bits of a proposal's word; 41 place it): flat envelopes over the density's
#: own curvature keep 99.7% of the proposals at once with four times the strips, 98.8% with 1,024
_GENERIC_BITS = 12
#: the strips take a cut where ``|log f|`` is at most this: an acceptance ``e^{-h}``, ``h`` a difference of two
#: log-densities, is then exact to ``2^16 2^-53`` (beyond, the cut's own tail is below ``e^-65536``)
_LOG_DENSITY_REACH = 2.0**16
#: a flat generic strip's proposal not decided at once is first decided against the density at the ends of the
#: eighth of the strip it lies in (it decreases across it): the density itself is evaluated for one in eight or so
_SUB = 8


def _log_mass_grid(g, reach):
    """``(grid, mass, dens, g(0))``: a grid of distances ``d`` in ``[0, reach]`` (``reach`` may be ``inf``), the
    cumulative ``∫_0^d e^{g - g(0)}`` on it (Simpson's rule with the cells' midpoints, in units of ``e^{g(0)}``) and
    ``e^{g - g(0)}`` there, for a log-density ``g`` of the distance that does not increase, or ``None`` where ``g``
    is not finite at 0 or increases on the grid (beyond a rounding).  The grid is linear over 64 of the lengths
    ``a`` over which ``g`` falls by 1, then geometric out to ``reach`` or the doubles' end, and stops where ``g`` has
    fallen by 100; the masses are only for placing edges (they set the strips' cost, not their law)."""
    g0 = float(g(np.zeros(1))[0])
    if not math.isfinite(g0):
        return None
    probe = 2.0 ** np.arange(-60.0, 1023.0, 0.25)
    probe = probe[probe <= reach]
    if math.isfinite(reach):
        probe = np.append(probe, reach)
    fall = np.flatnonzero(~(g(probe) > g0 - 1.0))  # (-inf or NaN: fallen)
    if fall.size == 0:
        if not math.isfinite(reach):
            return None  # never falls by e: not a density the strips take
        a = reach / 64.0
    else:
        a = float(probe[fall[0]])
    top = min(64.0 * a, reach)
    grid = top * np.linspace(0.0, 1.0, 8193)
    end = min(reach, 1e300)
    if end > top:
        grid = np.concatenate([grid, np.geomspace(top, end, 2049)[1:]])
    mid = 0.5 * (grid[1:] + grid[:-1])
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        rel = np.nan_to_num(g(grid) - g0, nan=-np.inf)
        rel_mid = np.nan_to_num(g(mid) - g0, nan=-np.inf)
        # the grid ends where the density has fallen below e^-100 of its start: the shells end before it (an open
        # side's exact tail holds the rest), and scipy's formulas may be wrong that far out (Jones and Faddy's skew
        # t rises from e^-200 at 2.3e8 and is 0.29 at 1e300)
        gone = np.flatnonzero(~(rel >= -100.0))
        if gone.size:
            cut_at = int(gone[0]) + 1
            grid, rel, rel_mid = grid[:cut_at], rel[:cut_at], rel_mid[: cut_at - 1]
        both = np.empty(2 * grid.size - 1)
        both[0::2], both[1::2] = rel, rel_mid
        if np.any(np.diff(both) > 1e-9 * (1.0 + np.abs(both[1:]))):
            return (
                None  # rises away from the mode: the strips' envelopes would not hold
            )
        dens = np.exp(rel)
        cells = (
            (dens[1:] + 4.0 * np.exp(rel_mid) + dens[:-1]) * np.diff(grid) / 6.0
        )  # Simpson
        mass = np.concatenate([[0.0], np.cumsum(cells)])
    if not (np.all(np.isfinite(mass)) and mass[-1] > 0):
        return None
    return grid, mass, dens, g0


def _generic_side(g, reach, count, log_tail, laid):
    """The strips of one side: distances ``d >= 0`` along which the log-density ``g(d)`` does not increase, out to
    ``reach`` (``inf``: an open side, ending in its exact tail, ``log_tail(d)`` its log-mass beyond ``d``).

    ``count`` strips: the *bulk*, at (nearly) equal envelope masses up to where one strip's share is left; then
    *shells*, flat strips of the bulk's largest envelope mass at most, out to ``reach``; an open side's last strip is
    its tail beyond the shells (curved: drawn exactly).  A strip starting at ``d = 0`` (a mode, maybe found
    numerically) has its envelope raised by ``_MODE_MARGIN``.  Returns ``(near, width, far, curved, log_env,
    log_b)`` (distances; ``log_env`` each strip's envelope ``≥ g`` on it, ``log_b`` its log-mass) or ``None``.
    ``laid``: the side's :func:`_log_mass_grid`."""
    if laid is None or count < 1:
        return None
    grid, mass, dens, g0 = laid
    total = mass[-1]
    open_side = not math.isfinite(reach)
    # the bulk ends where one strip's share is left (the whole side for one strip or a side that short)
    share = total / count
    rest = total - mass
    stop_at = np.flatnonzero(rest <= share)
    stop = float(grid[stop_at[0]]) if stop_at.size else reach
    if count <= 2 or stop >= reach:
        stop, shells = reach, 0
    else:
        shells = min(_SHELLS, count // 4)
    if open_side and stop >= reach:
        return None  # (an open side needs its shells and tail)
    # the distance as a function of the mass up to it: cubic Hermite (its slope is 1/f), out to the bulk's end
    inside = np.flatnonzero((grid <= stop) & (dens > 1e-300))
    rising = np.zeros(inside.size, dtype=bool)
    j = np.flatnonzero(np.diff(mass[inside]) > 0)
    rising[j], rising[j + 1] = True, True
    keep = inside[rising]
    if keep.size < 2:
        return None
    inverse = interpolate.CubicHermiteSpline(mass[keep], grid[keep], 1.0 / dens[keep])
    bulk_end = (inverse, float(mass[keep[-1]]), float(grid[keep[-1]]))
    # the shells a side needs are known once its bulk is: each pass gives the bulk the strips the last one's
    # shells left
    for _ in range(_SHELLS + 1):  # (the shells used only decrease)
        built = _generic_bulk_and_shells(
            g,
            reach,
            count - shells - open_side,
            shells,
            bulk_end,
            (grid, mass),
            g0,
            log_tail,
        )
        if built is None:
            return None
        near, far, env, lb, curved, used = built
        if used == shells:
            break
        shells = used
    near, far = np.array(near), np.array(far)
    if near.size != count:
        return None
    return near, far - near, far, np.array(curved), np.array(env), np.array(lb)


def _generic_bulk_and_shells(g, reach, bulk, shells, bulk_end, tables, g0, log_tail):
    """``bulk`` strips of :func:`_generic_side` up to the bulk's end (``bulk_end``: the inverse of the mass up to a
    distance, the mass and the distance there), then its shells (at most ``shells``) and an open side's tail: lists
    ``(near, far, log_env, log_b, curved)`` and the number of shells used."""
    open_side = not math.isfinite(reach)
    if bulk < 1:
        return None
    grid, mass = tables
    inverse, m_stop, stop = bulk_end

    def envelope(edges):
        near, width = edges[:-1], np.diff(edges)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_env = g(near)
            log_env[near == 0.0] += _MODE_MARGIN  # (a mode found numerically)
            return log_env, log_env + np.log(width)

    def place(f):
        edges = np.concatenate([[0.0], inverse(f * m_stop), [stop]])
        return np.maximum.accumulate(np.clip(edges, 0.0, stop))

    # equal true masses first, then each strip's share of the mass scaled by the mean envelope mass over its own,
    # up to five times (the envelopes' masses move slower than the shares that set them), until they are within
    # 1e-3 of their mean
    weights = np.ones(bulk)
    for _ in range(6):
        edges = place(np.cumsum(weights[:-1]) / weights.sum())
        log_env, log_b = envelope(edges)
        if not np.all(np.isfinite(log_b)):
            return None
        spread = np.mean(log_b) - log_b
        if np.max(np.abs(spread)) < 1e-3:
            break
        weights = weights * np.exp(spread)
    if not np.all(np.isfinite(log_env)):
        return None
    near, far = list(edges[:-1]), list(edges[1:])
    env, lb = list(log_env), list(log_b)
    curved = [False] * bulk
    top = float(np.max(log_b))
    d = stop
    for k in range(shells):
        if (
            open_side
            and not mass[-1] - np.interp(d, grid, mass) > _TAIL_SHARE * mass[-1]
        ):
            break  # the exact tail from here (the grid's mass beyond: only the cost depends on it)
        ld = float(g(np.array([d]))[0])
        end = (
            d + math.exp(top - ld)
            if math.isfinite(ld) and top - ld < 700.0
            else math.inf
        )
        if open_side and not end < grid[-1]:
            end = float(
                grid[-1]
            )  # an open side's shells stay where the grid checked the density
            if not end > d:
                break
        if not end < reach or (k == shells - 1 and not open_side):
            end = reach  # (a closed side's last shell reaches its end)
        near.append(d)
        far.append(end)
        env.append(ld)
        curved.append(False)
        lb.append(ld + math.log(end - d) if math.isfinite(ld) else -math.inf)
        d = end
        if not d < reach:
            break
    if open_side:  # the exact tail beyond the shells
        near.append(d)
        far.append(math.inf)
        env.append(0.0)
        curved.append(True)
        lb.append(float(log_tail(d)))
    return near, far, env, lb, curved, len(curved) - bulk - open_side


def _generic_strip_table(logpdf, log_sf, tail, peaks, troughs, cut):
    """The :class:`_Strips` of a law ``W`` on ``[cut, inf)`` whose density is monotone between its extrema, placed as
    excesses over the cut (as t(3)'s), or ``None``: ``logpdf`` its log-density (vectorized, ``-inf`` where it
    vanishes), ``log_sf(w)`` its log-mass right of ``w``, ``tail(rng, k, e)`` ``k`` exact draws of ``W - e`` given
    ``W >= e``, ``peaks`` its modes in increasing order and ``troughs`` the minima between them (one fewer; a
    mode found numerically: the strips starting at a peak are raised by ``_MODE_MARGIN``).  From each peak the
    density must not increase towards the troughs on either side (checked on the grids of :func:`_log_mass_grid`
    and at nine points a strip; the caller knows the law's shape), and :func:`_strip_decisions` raises if a point
    it decides lies above its strip's envelope.  Each side of a peak is a :func:`_generic_side`; the sides share
    the ``4,096`` strips first by their masses, then by their envelopes' (so that their strips' envelopes are
    equal)."""
    peaks, troughs = [float(v) for v in peaks], [float(v) for v in troughs]
    if not (
        math.isfinite(cut)
        and peaks
        and len(troughs) == len(peaks) - 1
        and all(map(math.isfinite, peaks + troughs))
    ):
        return None
    strips = 2**_GENERIC_BITS
    with np.errstate(all="ignore"):
        if not abs(float(logpdf(np.array([cut]))[0])) <= _LOG_DENSITY_REACH:
            return None
        log_total = float(log_sf(cut))
        if not math.isfinite(log_total):
            return None
        # each side: (sign, its start in W, its length from there, its ends' masses right of them)
        ends = [-math.inf] + troughs + [math.inf]
        specs = []
        for p, lo, hi in zip(peaks, ends[:-1], ends[1:]):
            if hi <= cut:
                continue
            if cut < p:
                specs.append((-1.0, p, p - max(lo, cut), max(lo, cut), p))
            start = max(p, cut)
            specs.append((1.0, start, hi - start, start, hi))
        share = np.array(
            [
                math.exp(float(log_sf(a)) - log_total)
                - (math.exp(float(log_sf(b)) - log_total) if b < math.inf else 0.0)
                for *_, a, b in specs
            ]
        )
        share = np.maximum(share, 0.0)
        grids = []  # each side's log-density of the distance and its grid (once: the sides are built twice)
        for sign, start, reach, *_ in specs:
            g = lambda d, start=start, sign=sign: logpdf(start + sign * d)  # noqa: E731
            grids.append((g, _log_mass_grid(g, reach)))
        for _ in range(
            2
        ):  # the strips shared by the sides' masses, then by their envelopes'
            if not share.sum() > 0:
                return None
            counts = _counts(share / share.sum(), strips)
            if counts is None:
                return None
            sides = []
            for (sign, start, reach, *_), k, (g, got) in zip(specs, counts, grids):
                log_tail = (
                    (lambda d, start=start: log_sf(start + d))
                    if math.isinf(reach)
                    else None
                )
                side = _generic_side(g, reach, int(k), log_tail, got)
                if side is None:
                    return None
                sides.append((sign, start - cut, side))
            # each side's typical strip envelope, times its strips: its envelopes' share
            typical = np.array(
                [float(np.median(side[5][~side[3]])) for *_, side in sides]
            )
            share = counts * np.exp(typical - typical.max())
        parts = []
        for sign, origin, (n, w, f, c, env, lb) in sides:
            near, far = origin + sign * n, origin + sign * f
            far = np.maximum(far, 0.0)  # (a side down to the cut ends at it: exactly 0)
            parts.append((near, far - near, far, c, env, lb))
        near, width, far, curved, env, log_b = (
            np.concatenate([p[i] for p in parts]) for i in range(6)
        )
        h_far = env - logpdf(far + cut)
        h_far = np.where(curved | (far == 0.0) | ~np.isfinite(h_far), np.inf, h_far)
        h_far = np.maximum(h_far, 0.0)
    table = _finish(
        near,
        width,
        curved,
        np.zeros(near.size),
        log_b,
        log_total,
        h_far,
        "generic",
        1.0,
        cut,
        _GENERIC_BITS,
    )
    if table is None:
        return None
    e = float(cut + near[curved][0]) if curved.any() else math.inf
    # the log-density at the ends of _SUB equal parts of each flat strip: bounds of h on each part
    with np.errstate(all="ignore"):
        parts = np.linspace(0.0, 1.0, _SUB + 1)
        flat_width = np.where(curved | ~np.isfinite(width), 0.0, width)
        sub = logpdf((near + cut)[:, None] + flat_width[:, None] * parts).reshape(
            near.size, _SUB + 1
        )
        flat = ~curved & np.isfinite(env)
        slack = 1e-9 * (1.0 + np.abs(sub[flat]))
        if np.any(sub[flat] > env[flat, None] + slack) or np.any(
            np.diff(sub[flat], axis=1) > slack[:, 1:]
        ):
            return None  # the density rises within a strip: not unimodal about the mode found
    return table._replace(
        far=far,
        log_env=env,
        logpdf=logpdf,
        tail=lambda rng, k: tail(rng, k, e),
        sub=sub,
    )


def _generic_strip_draws(rng, size, table, scale, minimum):
    """``size`` draws of ``scale (W - cut)`` given ``W >= cut`` from the table ``table()`` of
    :func:`_generic_strip_table`, or ``None`` where the route does not apply (fewer than ``minimum`` draws, a
    number the caller fixes by the law alone, or no table)."""
    return _by_strips(rng, size, table, 0.0, scale, 0.0, math.inf, minimum)


# --- the sampler --------------------------------------------------------------------------------------------------


def _strip_draws(rng, size, table, origin, step, lower, upper):
    """``size`` draws ``clip(origin + step X, lower, upper)``, ``X`` of the law of the :class:`_Strips` ``table``, by
    rejection from its envelope (the module docstring).

    One 64-bit word a proposal: its top 10 bits pick the strip, the next 43 place the point, its low 11 bits ``k``
    are the first bits of the acceptance uniform ``V = (k + V')/2^11``.  A proposal with ``k`` below its strip's
    ``sure`` is kept at once; the others are decided all at once at the end (:func:`_strip_decisions`).  The
    proposals are placed in the output itself, ``_PROPOSALS`` at a time (while they are in the cache); the places
    of those dropped are then filled, in order, by draws of the same law made afresh (this function again, for
    their number).  Whether a proposal is kept depends on its own word and fresh draws only, so a kept one has the
    law whatever the others do, and the draws that fill the dropped places do not depend on which places they
    fill: every place holds an independent draw."""
    t = table
    place_bits = 64 - t.bits - _SPARE_BITS
    unit = 2.0**-place_bits
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        place = np.where(t.curved, 0.0, step * t.width * unit)
    # a place below the normal doubles would make every product subnormal (many times slower): the word's place
    # is then made a uniform of [0, 1) first, and multiplies the strip's width itself
    tiny = bool(np.any((np.abs(place) < np.finfo(float).tiny) & (place != 0)))
    if tiny:
        with np.errstate(invalid="ignore", over="ignore"):
            place = np.where(t.curved, 0.0, step * t.width)
    start = origin + step * t.near
    shift, low = np.uint64(64 - t.bits), np.uint64(_CELLS - 1)
    spare, mask = np.uint64(_SPARE_BITS), np.uint64(2**place_bits - 1)
    out = np.empty(size)
    maybe, words = [], []
    for i in range(0, size, _PROPOSALS):
        raw = rng.bit_generator.random_raw(min(_PROPOSALS, size - i))
        strip = np.right_shift(raw, shift).view(np.int64)
        idx = np.flatnonzero(
            np.bitwise_and(raw, low).view(np.int64) >= t.sure.take(strip, mode="clip")
        )
        maybe.append(idx + i)
        words.append(raw[idx])
        v = np.right_shift(raw, spare, out=raw)
        v &= mask
        x = place.take(strip, mode="clip", out=out[i : i + raw.size])
        v = v.view(np.int64).astype(float)
        if tiny:
            v *= unit
        x *= v
        x += start.take(strip, mode="clip")
        _bound_in_place(x, lower, upper)
    maybe = np.concatenate(maybe)
    if maybe.size:
        kept = _strip_decisions(
            rng, t, np.concatenate(words), out, maybe, origin, step, lower, upper
        )
        dropped = maybe[~kept]
        if dropped.size:
            out[dropped] = _strip_draws(
                rng, dropped.size, t, origin, step, lower, upper
            )
    return out


def _strip_decisions(rng, t, raw, x, maybe, origin, step, lower, upper):
    """Whether each proposal of :func:`_strip_draws` not kept at once (words ``raw``, places ``maybe`` in ``x``) is
    kept.  Its point is placed again in full, within its strip and ``[lower, upper]`` (a curved strip's by
    inverting its truncated exponential, an open one's from a fresh exponential), then ``V <= e^{-(gamma + h)}``
    is decided by the tables ``_SURE_KEEP``/``_SURE_DROP`` and, rarely, a fresh ``V'``."""
    place_bits = 64 - t.bits - _SPARE_BITS
    unit = 2.0**-place_bits
    ks = np.right_shift(raw, np.uint64(64 - t.bits)).view(np.int64)
    b = np.bitwise_and(raw, np.uint64(_CELLS - 1)).view(np.int64)
    u = (
        np.bitwise_and(
            np.right_shift(raw, np.uint64(_SPARE_BITS)), np.uint64(2**place_bits - 1)
        ).view(np.int64)
        * unit
    )  # a uniform in [0, 1)
    n, w, curved = t.near[ks], t.width[ks], t.curved[ks]
    mode = n + t.offset  # the near end from the mode (t3: placed from the cut)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        y = np.where(curved, 0.0, u * w)  # from the near end, away from the mode
        if curved.any():
            m = np.flatnonzero(curved)
            if t.law == "t3":  # the Pareto tail: n e^{E/3} - n (n > 0)
                y[m] = mode[m] * np.expm1(rng.standard_exponential(m.size) / 3.0)
            elif (
                t.law == "generic"
            ):  # the exact tail beyond the shells: drawn once kept (below)
                y[m] = 0.0
            else:
                e = -np.log1p(
                    -u[m] * t.gain[ks[m]]
                )  # the truncated exponential (rate 1)
                open_end = np.isinf(w[m])
                if open_end.any():
                    e[open_end] = rng.standard_exponential(int(open_end.sum()))
                y[m] = e / n[m] if t.law == "normal" else np.copysign(t.scale * e, w[m])
        far = n + w if t.far is None else t.far[ks]
        x[maybe] = _bound_in_place(
            origin + step * np.clip(n + y, np.minimum(n, far), np.maximum(n, far)),
            lower,
            upper,
        )
        if t.law == "normal":
            h = y * (0.5 * y + np.where(curved, 0.0, n))
        elif t.law == "laplace":
            h = np.where(curved, 0.0, np.abs(y) / t.scale)
        elif (
            t.law == "generic"
        ):  # flat strips against their envelopes; the exact tail kept
            # h lies between its values at the ends of the eighth of the strip holding the point: where those
            # decide alike (kept by the larger, dropped by the smaller) the density is not evaluated
            # (the bounds' verdicts are carried as h = -inf, kept, and +inf, dropped: only an exact h may reach the
            # fresh uniform below)
            env, gamma = t.log_env[ks], t.gamma[ks]
            part = np.minimum((u * _SUB).astype(np.int64), _SUB - 1)
            low = env - t.sub[ks, part]
            high = env - t.sub[ks, part + 1]
            kept = ~curved & (high + gamma <= np.take(_SURE_KEEP, b))
            dropped = ~curved & ~kept & (low + gamma >= np.take(_SURE_DROP, b))
            h = np.where(kept, -np.inf, np.where(dropped, np.inf, low))
            rest = np.flatnonzero(~(curved | kept | dropped))
            if rest.size:
                h[rest] = env[rest] - t.logpdf(mode[rest] + y[rest])
            h[curved] = 0.0
            if np.any(np.where(kept, high, np.where(dropped, low, h)) < -1e-9):
                raise ArithmeticError(
                    "a point lies above its strip's envelope: the base law is not unimodal about the mode found"
                )
        else:  # t3: flat strips from f at the near end; the Pareto tail against its envelope
            z = mode + y
            h = np.where(curved, 2.0 * np.log1p(3.0 / (z * z)), _t3_h(y, mode))
        h += t.gamma[ks]
    sure = h <= np.take(_SURE_KEEP, b)
    open_ = np.flatnonzero(~sure & (h < np.take(_SURE_DROP, b)))
    if open_.size:  # V = (k + V')/2^11 <= e^{-h}
        v = rng.random(open_.size)
        sure[open_] = v <= _CELLS * np.exp(-h[open_]) - b[open_]
    if (
        t.law == "generic" and curved.any()
    ):  # a tail's point is kept whatever it is: drawn for those kept
        m = np.flatnonzero(curved & sure)
        if m.size:
            y = t.tail(rng, m.size)
            x[maybe[m]] = _bound_in_place(origin + step * (n[m] + y), lower, upper)
    return sure
