"""Private kernels of the normal law on a bounded range: partial moments in log space, piece masses.

Everything is written in a *frame* around the point ``c = clip(q, lower, upper)`` of the range nearest
to the true value ``q``, in units of the noise's standard deviation ``σ``: the noise ``q + σZ - c`` is
``σ(Z - d)`` (mirrored when ``q > upper``) with ``d = |q - c|/σ >= 0``, and the range is ``[-A, B]``
(``A = 0`` when ``d > 0``).  Its density is ``φ(d) e^{-dt - t²/2}``, so every mass and moment is a
multiple of

* ``K_k(t) = ∫_0^∞ u^k e^{-tu - u²/2} du`` (``K_0`` is Mills' ratio ``Φ̄(t)/φ(t)``, ``K_1 = 1 - tK_0``,
  ``K_2 = K_0 - tK_1``: the partial moments ``E[(Z - t)_+^k] = φ(t) K_k(t)``), and
* ``I_k(d, w) = ∫_0^w s^k e^{-ds - s²/2} ds = K_k(d) - e^{-dw - w²/2} Σ_j C(k, j) w^{k-j} K_j(d + w)``,

computed as logarithms: nothing underflows because ``q`` is far outside the range or ``σ`` is ``1e-300``,
and nothing cancels.  ``K_1``, ``K_2`` come from the recurrence for ``t < 1`` and from the backward
recurrence (Miller's algorithm: the continued fraction ``K_k/K_{k-1} = k/(t + K_{k+1}/K_k)``) beyond, where
the forward one cancels; ``I_k`` from its difference where the piece holds a fixed part of ``K_k(d)``
(``w(d + w) > 1``), else by 24-point Gauss–Legendre quadrature of its positive integrand (a piece so
short that its integrand varies by less than ``e``).

The exact samplers of the normal law on a range (for :class:`dpbook.GaussianTruncated` and the normal base of
:class:`dpbook.Restricted`) are here too, all by rejection, in in-cache rounds of ``2^14`` proposals: numpy's
normals kept in the range; uniform proposals with an acceptance test read from the proposal's own spare bits;
Robert's (1995) exponential proposals for a cut right of the mean; one normal a draw, reflected or redrawn, for
a cut left of it; and the same routes with a law per element.  Many draws of one range take the strips of
:mod:`dpbook._kernels.strips`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels.arrays import _bound_in_place

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_LOG_SQRT_PI_2 = 0.5 * math.log(math.pi / 2)
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(24)
_NODES = 0.5 * (_NODES + 1.0)  # on [0, 1]
_WEIGHTS = 0.5 * _WEIGHTS

#: the rounding allowance of one operation on a term (a generous multiple of the unit roundoff)
_K = 16 * np.finfo(float).eps

#: 16-point Gauss–Legendre nodes for short normal masses
_GL16 = np.polynomial.legendre.leggauss(16)
_LOG_BINOM = (
    (0.0,),
    (0.0, 0.0),
    (0.0, math.log(2.0), 0.0),
)  # log C(k, j), j = 0..k


def _log_phi(t):
    """``log φ(t)`` (``-inf`` where ``t²`` overflows)."""
    with np.errstate(over="ignore"):
        return -0.5 * np.square(t) - _LOG_SQRT_2PI


def _log_k0(t):
    """``log K_0(t) = log(Φ̄(t)/φ(t))`` for every real ``t``: ``erfcx`` right of 0, ``log_ndtr`` left of it."""
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        right = _LOG_SQRT_PI_2 + np.log(
            special.erfcx(np.maximum(t, 0.0) / math.sqrt(2))
        )
        left = special.log_ndtr(-np.minimum(t, 0.0)) - _log_phi(np.minimum(t, 0.0))
    return np.where(t >= 0, right, left)


def _log_k012(t):
    """``(log K_0, log K_1, log K_2)`` at ``t >= 0`` (``+inf`` allowed)."""
    t = np.asarray(t, dtype=float)
    lk0 = _log_k0(t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = np.minimum(t, 1.0)
        k0 = np.exp(_log_k0(small))
        k1 = 1.0 - small * k0
        k2 = k0 - small * k1
        lk1_small, lk2_small = np.log(k1), np.log(k2)
        # Miller: r_k = K_k/K_{k-1} = k/(t + r_{k+1}), from r_N = sqrt(N) down: an error in r_{k+1} is
        # multiplied by r_k^2/k < 1 at each step (about exp(-2 t sqrt(N)) in all; N = 400 at t = 1)
        near = t < 1.0
        lk1, lk2 = lk1_small, lk2_small
        if not near.all():  # only where t >= 1
            big = t[~near]
            n = int(min(400, math.ceil((40.0 / float(np.min(big))) ** 2) + 40))
            r = np.full(big.shape, math.sqrt(n))
            r2 = r
            for k in range(n, 0, -1):
                r = k / (big + r)
                if k == 2:
                    r2 = r
            lk1, lk2 = np.array(lk1, dtype=float), np.array(lk2, dtype=float)
            lk1[~near] = lk0[~near] + np.log(r)
            lk2[~near] = lk1[~near] + np.log(r2)
    return lk0, lk1, lk2


def _log1mexp(x):
    """``log(1 - e^x)`` for ``x <= 0`` (``-inf`` at 0), accurate on both sides of ``-log 2``."""
    x = np.minimum(np.asarray(x, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_i012(d, w):
    """``(log I_0, log I_1, log I_2)`` of ``(d, w)``, ``d >= 0``, ``w >= 0`` (``w = inf``: ``log K_k(d)``)."""
    d, w = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(w, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reach = w * (d + w)
        short = (reach <= 1.0) & (w > 0)
        # a short piece: Gauss–Legendre on [0, w] of s^k e^{-ds - s²/2}, in units of w
        ws, ds = np.where(short, w, 0.0)[..., None], np.where(short, d, 0.0)[..., None]
        kernel = np.exp(-ws * _NODES * (ds + 0.5 * ws * _NODES)) * _WEIGHTS
        lw = np.log(np.where(short, w, 1.0))
        quad = [
            (k + 1) * lw + np.log(np.sum(kernel * _NODES**k, axis=-1)) for k in range(3)
        ]
        # a long piece: K_k(d) minus the part beyond w
        full = _log_k012(d)
        finite = np.isfinite(w)
        wf = np.where(finite, w, 0.0)
        far = _log_k012(np.where(finite, d + wf, 0.0))
        decay = np.where(finite, -wf * (d + 0.5 * wf), -np.inf)
        decay = np.where(np.isnan(decay), -np.inf, decay)  # 0 * inf: d infinite
        lwf = np.log(wf)
        out = []
        for k in range(3):
            terms = [far[k]] + [
                _LOG_BINOM[k][j] + (k - j) * lwf + far[j] for j in range(k)
            ]
            tail = decay + special.logsumexp(np.stack(terms), axis=0)
            tail = np.where(np.isnan(tail), -np.inf, tail)
            long_ = full[k] + _log1mexp(np.minimum(tail - full[k], 0.0))
            long_ = np.where(np.isneginf(full[k]), -np.inf, long_)
            value = np.where(short, quad[k], long_)
            out.append(np.where(w > 0, value, -np.inf))
    return tuple(out)


def _log_i0(d, w):
    """``log I_0(d, w)`` alone: as :func:`_log_i012`, with Mills' ratio only (no recurrence)."""
    d, w = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(w, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        short = (w * (d + w) <= 1.0) & (w > 0)
        out = np.where(w > 0, 0.0, -np.inf)
        if short.any():
            ws, ds = w[short][:, None], d[short][:, None]
            kernel = np.exp(-ws * _NODES * (ds + 0.5 * ws * _NODES)) @ _WEIGHTS
            out[short] = np.log(w[short]) + np.log(kernel)
        rest = ~short & (w > 0)
        if rest.any():
            dr, wr = d[rest], w[rest]
            finite = np.isfinite(wr)
            wf = np.where(finite, wr, 0.0)
            full = _log_k0(dr)
            decay = np.where(finite, -wf * (dr + 0.5 * wf), -np.inf)
            tail = np.where(np.isnan(decay), -np.inf, decay) + _log_k0(dr + wf)
            long_ = full + _log1mexp(np.minimum(tail - full, 0.0))
            out[rest] = np.where(np.isneginf(full), -np.inf, long_)
    return out


def _log_mass(d, s1, s2):
    """``log ∫_{s1}^{s2} e^{-ds - s²/2} ds`` for ``s1 <= s2``, ``d >= 0`` and ``s1 >= 0`` wherever ``d > 0``.

    The normal mass between ``d + s1`` and ``d + s2`` over ``φ(d)``: from the piece's end nearest the
    density's peak, ``e^{-d s1 - s1²/2} I_0(d + s1, s2 - s1)`` (``s1 >= 0``), its mirror image (``s2 <= 0``),
    or the two halves around 0.
    """
    d, s1, s2 = np.broadcast_arrays(
        np.asarray(d, dtype=float),
        np.asarray(s1, dtype=float),
        np.asarray(s2, dtype=float),
    )
    out = np.empty(d.shape)
    right = s1 >= 0
    left = ~right & (s2 <= 0)
    across = ~(right | left)
    with np.errstate(over="ignore", invalid="ignore"):
        if right.any():  # right of 0: from s1
            a, dr = s1[right], d[right]
            lead = np.where(a == 0, 0.0, -a * (dr + 0.5 * a))
            lead = np.where(np.isnan(lead), -np.inf, lead)
            out[right] = lead + _log_i0(dr + a, s2[right] - a)
        if left.any():  # left of 0 (d = 0 there): the mirror image, from -s2
            b = -s2[left]
            out[left] = -0.5 * b * b + _log_i0(b, s2[left] - s1[left])
        if across.any():  # across 0 (d = 0)
            zero = np.zeros(int(across.sum()))
            out[across] = np.logaddexp(
                _log_i0(zero, -s1[across]), _log_i0(zero, s2[across])
            )
    return out


def _frame(q, scale, lower, upper):
    """``(c, sign, d, A, B)``: the nearest point ``c`` of the range, the mirror ``sign`` (``-1`` when
    ``q > upper``), the distance ``d = |q - c|/σ`` and the range ``[-A, B]`` of ``sign (x - c)/σ``."""
    q = np.asarray(q, dtype=float)
    c = np.clip(q, lower, upper)
    sign = np.where(q > upper, -1.0, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        # beyond the doubles the law is a point mass at c to every digit: the largest double stands for d
        d = np.minimum(np.abs(q - c) / scale, np.finfo(float).max)
        below, above = (c - lower) / scale, (upper - c) / scale
    below = np.where(
        c == lower, 0.0, below
    )  # (inf - inf: an infinite bound is never c)
    above = np.where(c == upper, 0.0, above)
    a = np.where(sign > 0, below, above)
    b = np.where(sign > 0, above, below)
    return c, sign, d, a, b


def _log_clip_moments(d, w):
    """``(log E V, log E V²)`` for ``V = clip(Z - d, 0, w)``, ``d >= 0``, ``w >= 0``, as multiples of ``φ(d)``
    added back: ``E V = φ(d)[I_1(d, w) + w e^{-dw - w²/2} K_0(d + w)]`` and ``E V² = φ(d)[I_2(d, w) + w²
    e^{-dw - w²/2} K_0(d + w)]`` (the atom at ``w`` carries ``Φ̄(d + w)``)."""
    d, w = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(w, dtype=float))
    _, li1, li2 = _log_i012(d, w)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        finite = np.isfinite(w) & (w > 0)
        wf = np.where(finite, w, 1.0)
        atom = -wf * (d + 0.5 * wf) + _log_k0(d + wf)
        atom = np.where(finite & ~np.isnan(atom), atom, -np.inf)
        lw = np.log(wf)
        base = _log_phi(d)
        first = base + np.logaddexp(li1, atom + lw)
        second = base + np.logaddexp(li2, atom + 2 * lw)
    return first, second


def _signed_log_difference(la, lb):
    """``(sign, log|e^la - e^lb|)``."""
    hi, lo = np.maximum(la, lb), np.minimum(la, lb)
    with np.errstate(invalid="ignore"):
        mag = hi + _log1mexp(np.where(np.isneginf(hi), -np.inf, lo - hi))
    sign = np.where(la > lb, 1.0, np.where(la < lb, -1.0, 0.0))
    return sign, np.where(np.isneginf(hi), -np.inf, mag)


def _log_variance(second, sign, first):
    """``log(e^second - e^{2 first})`` given the ratio ``e^{2 first - second}`` is at most ``3/4``."""
    with np.errstate(invalid="ignore"):
        ratio = np.where(sign == 0, -np.inf, 2 * first - second)
        ratio = np.where(np.isneginf(second), -np.inf, ratio)
    return second + _log1mexp(np.minimum(ratio, 0.0))


def _scaled(log_value, scale, power=1):
    """``scale**power * e^log_value`` without forming either factor alone."""
    with np.errstate(over="ignore"):
        return np.exp(log_value + power * math.log(scale))


def _bit_moments(q, scale, lower, upper):
    """``(c, E[M] - c, Var M, E[(M - q)²])`` of ``M = clip(q + σZ, lower, upper)`` (frame of the module)."""
    c, sign, d, a, b = _frame(q, scale, lower, upper)
    l1p, l2p = _log_clip_moments(d, b)
    l1n, l2n = _log_clip_moments(d, a)  # (A = 0 whenever d > 0: -inf)
    s, l1 = _signed_log_difference(l1p, l1n)
    second = np.logaddexp(l2p, l2n)
    offset = sign * s * _scaled(l1, scale)
    variance = _scaled(_log_variance(second, s, l1), scale, 2)
    with np.errstate(over="ignore"):
        bias = (c - np.asarray(q, dtype=float)) + offset
        mse = np.where(d == 0, _scaled(second, scale, 2), variance + bias**2)
    return c, offset, variance, mse


def _truncated_moments(q, scale, lower, upper):
    """``(c, E[M] - c, Var M)`` of ``q + σZ`` conditioned on ``[lower, upper]`` (frame of the module):
    ``E T = (I_1(d, B) - I_1(d, A))/(I_0(d, A) + I_0(d, B))`` and ``E T² = (I_2(d, A) + I_2(d, B))/(…)``."""
    c, sign, d, a, b = _frame(q, scale, lower, upper)
    p0, p1, p2 = _log_i012(d, b)
    n0, n1, n2 = _log_i012(d, a)
    norm = np.logaddexp(p0, n0)
    s, l1 = _signed_log_difference(p1, n1)
    first = l1 - norm
    second = np.logaddexp(p2, n2) - norm
    offset = sign * s * _scaled(first, scale)
    variance = _scaled(_log_variance(second, s, first), scale, 2)
    return c, offset, variance


def _log_normal_mass(a, b):
    """``(log(Φ(b) - Φ(a)), a bound on its rounding error)`` for ``a < b`` (standard normal; ends may be
    infinite), never cancelling: a short interval (``|z0| w <= 1``, ``w <= 1``, ``z0`` its point nearest 0)
    by 16-point Gauss–Legendre of ``e^{-(z - z0)(z + z0)/2}`` (an integrand in ``[e^{-3/2}, 1]``, analytic);
    an interval on one side of 0 as ``log Φ(b) + log(1 - e^{log Φ(a) - log Φ(b)})`` (mirrored for ``a > 0``);
    one across 0 as ``(erf(-a/√2) + erf(b/√2))/2``."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        flip = a > 0
        lo, hi = np.where(flip, -b, a), np.where(flip, -a, b)  # now lo < hi, lo <= 0
        la, lb = special.log_ndtr(lo), special.log_ndtr(hi)
        gap = la - lb
        one_side = lb + np.log(-np.expm1(gap))
        side_err = _K * (1.0 + np.abs(lb)) + np.where(
            np.isfinite(la),
            _K * (1.0 + np.abs(la) + np.abs(lb)) * np.exp(gap) / -np.expm1(gap),
            0.0,
        )
        across = np.log(
            0.5 * (special.erf(-lo / math.sqrt(2)) + special.erf(hi / math.sqrt(2)))
        )
        across_err = _K * (1.0 + np.abs(across))
        w = hi - lo
        z0 = np.where(hi < 0, hi, 0.0)
        short = (w <= 1.0) & (np.abs(z0) * w <= 1.0)
        near = np.zeros(short.shape)
        if short.any():  # the 16 nodes on the short intervals only
            nodes, weights = _GL16
            ws, z0s = w[short], z0[short]
            zs = lo[short][..., None] + 0.5 * ws[..., None] * (1.0 + nodes)
            zz = z0s[..., None]
            total = np.sum(weights * np.exp(-0.5 * (zs - zz) * (zs + zz)), axis=-1)
            near[short] = -0.5 * z0s * z0s - _LOG_SQRT_2PI + np.log(0.5 * ws * total)
        near_err = _K * (2.0 + np.abs(near) + 0.5 * z0 * z0)
        value = np.where(short, near, np.where(hi <= 0, one_side, across))
        err = np.where(short, near_err, np.where(hi <= 0, side_err, across_err))
    return value, np.where(np.isnan(err), np.inf, err)


# --- exact samplers of the normal law on a range, by rejection ------------------------------------------------

#: proposals per round of the rejection samplers (temporaries of 128 kB)
_PROPOSALS = 2**14

#: the low bits of a proposal's 64-bit word that decide its acceptance (:func:`_uniform_frame_draws`); the
#: high 53 place it, as numpy's own ``random()`` does
_SPARE_BITS = 11
_CELLS = 2**_SPARE_BITS
#: ``log(2^11/(k + 1))`` and ``log(2^11/k)``, widened by a relative ``1e-14``: a proposal with spare bits ``k``
#: and ``h = -log(acceptance probability)`` is kept surely when ``h`` is at most the first (its uniform is below
#: ``(k + 1)/2^11 <= e^{-h}``), dropped surely when ``h`` is at least the second, else decided by ``e^{-h}`` and
#: a fresh uniform (about one proposal in ``2^11``)
_SURE_KEEP = np.log(_CELLS / np.arange(1.0, _CELLS + 1.0)) * (1.0 - 1e-14)
with np.errstate(divide="ignore"):
    _SURE_DROP = np.log(_CELLS / np.arange(0.0, _CELLS)) * (1.0 + 1e-14)


def _rejection_draws(size, rate, propose):
    """``size`` draws by rejection: each round asks ``propose(k)`` for the points it accepts out of ``k`` proposals,
    in the order proposed, ``k`` sized from the acceptance rate ``rate``; the first ``size`` points accepted are
    the draws.  Whether a proposal is kept never depends on the points after it, so the draws are independent
    and exactly of the accepted law (the last round's extra points are dropped)."""
    out = np.empty(size)
    filled = 0
    while filled < size:
        k = min(_PROPOSALS, int((size - filled) / rate * 1.02) + 16)
        got = propose(k)
        m = min(got.size, size - filled)
        out[filled : filled + m] = got[:m]
        filled += m
    return out


def _normal_between(rng, size, low, high, scale, lead, keep, lower=0.0, upper=math.inf):
    """``size`` draws ``clip(scale N + lead, lower, upper)`` with ``N`` standard normal conditioned on
    ``low <= N <= high`` (mass ``keep``, most of it): numpy's normals (a ziggurat), those outside rejected,
    ``1/keep`` normals a draw.  Each round's proposals are drawn into the output itself where they fit, and
    compressed only when one of them is rejected (as in :func:`_rejection_draws`, the first ``size`` kept are
    the draws); the clip only undoes the rounding of ``scale N + lead``."""
    out, buffer = np.empty(size), np.empty(_PROPOSALS)
    bounded = high < math.inf
    filled = 0
    while filled < size:
        k = min(_PROPOSALS, int((size - filled) / keep * 1.02) + 16)
        room = out[filled : filled + k]
        z = rng.standard_normal(out=room if room.size == k else buffer[:k])
        if z.min() < low or (bounded and z.max() > high):
            z = z[(z >= low) & (z <= high)]
        m = min(z.size, size - filled)
        x = out[filled : filled + m]
        if z is not room:
            x[...] = z[:m]
        x *= scale
        x += lead
        _bound_in_place(x, lower, upper)
        filled += m
    return out


def _robert_rate(cut):
    """The acceptance rate of Robert's (1995) exponential proposals for ``N >= cut``:
    ``sqrt(2π) λ Φ(-cut) e^{λ cut - λ²/2}``, ``λ = (cut + sqrt(cut² + 4))/2``, which tends to 1 far right."""
    if cut >= 30.0:
        return 1.0
    lam = (cut + math.hypot(cut, 2.0)) / 2
    rate = math.sqrt(2 * math.pi) * lam * special.ndtr(-cut)
    return rate * math.exp(lam * (cut - lam / 2))


def _normal_tail_excess(rng, size, cut, top=math.inf, kept=1.0):
    """``size`` draws of ``N - cut`` given ``cut <= N <= cut + top``, ``N`` standard normal: Robert's (1995) exact
    rejection from the exponential proposal ``cut + E/λ``, ``λ = (cut + sqrt(cut² + 4))/2`` (the best rate), kept
    when ``(E/λ - μ)² <= 2E'`` with ``μ = λ - cut`` and ``E'`` a second exponential (numpy's ziggurat
    exponentials: no logarithm, no ``ndtri``), and when ``E/λ <= top`` (``kept = P(N <= cut + top | N >= cut)``
    only sizes the rounds).  ``μ = 2/(sqrt(cut² + 4) + cut)`` does not
    cancel for a cut far right, where the excess is of the order ``1/cut`` (to ``cut = 1e300``) and nearly every
    proposal is kept (83% at ``cut = 0.5``, 76% at the mean, times ``P(N <= cut + top | N >= cut)``)."""
    root = math.hypot(cut, 2.0)
    lam = (cut + root) / 2
    mu = 2.0 / (root + cut) if cut >= 0 else (root - cut) / 2
    inverse = 1.0 / lam
    rate = _robert_rate(cut) * kept
    bounded = top < math.inf
    buffer, square = np.empty(2 * _PROPOSALS), np.empty(_PROPOSALS)
    kept = np.empty(_PROPOSALS, dtype=bool)

    def propose(k):
        e = rng.standard_exponential(out=buffer[: 2 * k])
        y, bound, d, w = e[:k], e[k:], square[:k], kept[:k]
        y *= inverse
        np.subtract(y, mu, out=d)
        d *= d
        bound *= 2.0
        np.less_equal(d, bound, out=w)
        if bounded:
            w &= y <= top
        return y[w]

    return _rejection_draws(size, rate, propose)


def _uniform_range(u, lower, upper):
    """``lower + u (upper - lower)`` for uniforms ``u`` (in place), without overflow where the width does not fit
    in a double, within ``[lower, upper]``."""
    with np.errstate(over="ignore"):
        width = upper - lower
    if math.isfinite(width):
        u *= width
        u += lower
    else:  # (two roundings more, at widths near 1e308)
        u = lower * (1.0 - u) + upper * u
    return _bound_in_place(u, lower, upper)


def _uniform_frame_draws(rng, size, d, a, b, rate, origin, step, lower, upper):
    """``size`` draws ``clip(origin + step T, lower, upper)`` with ``T`` of density proportional to ``e^{-dt - t²/2}``
    on ``[-a, b]`` (``d >= 0``, ``a = 0`` where ``d > 0``: the frame of this module, whose density peaks at
    ``t = 0``), by rejection from the uniform law on ``[-a, b]`` (acceptance ``rate``, the mass over ``a + b``);
    ``lower``, ``upper`` are the ends ``origin - step a`` and ``origin + step b`` (ordered).

    One 64-bit word a proposal: its high 53 bits place ``t`` (as numpy's ``random()``), its low 11 bits ``k`` are
    the first bits of the acceptance uniform ``V = (k + V')/2^11``, kept when ``V <= e^{-h}``, ``h = t(d + t/2)``:
    surely when ``h`` is at most ``log(2^11/(k + 1))``, surely not when at least ``log(2^11/k)`` (one table look-up
    and compare, no exponential), else (about one proposal in ``2^11``) by a fresh ``V'``.  Where ``h`` is below
    ``2^-54`` on the whole range, no uniform of the doubles is above ``e^{-h}`` as computed: the proposals are
    the draws, placed on ``[lower, upper]`` directly (where ``a + b`` may have underflowed)."""
    width = a + b
    if max(0.5 * a * a, b * (d + 0.5 * b)) <= 2.0**-54:  # flat to the doubles
        return _uniform_range(rng.random(size), lower, upper)
    unit = width * 2.0 ** (_SPARE_BITS - 64)

    def propose(k):
        raw = rng.bit_generator.random_raw(k)
        bits = np.bitwise_and(raw, np.uint64(_CELLS - 1)).view(np.int64)
        t = np.right_shift(raw, np.uint64(_SPARE_BITS)).view(np.int64).astype(float)
        t *= unit
        t -= a
        h = t * 0.5
        with np.errstate(over="ignore"):
            if d:
                h += d
            h *= t
        keep = h <= np.take(_SURE_KEEP, bits)
        maybe = np.flatnonzero(~keep)  # (the few not surely kept)
        open_ = maybe[h[maybe] < np.take(_SURE_DROP, bits[maybe])]
        if open_.size:  # V = (k + V')/2^11 <= e^{-h}
            v = rng.random(open_.size)
            keep[open_] = v <= _CELLS * np.exp(-h[open_]) - bits[open_]
        x = t[keep]
        if step != 1.0:
            x *= step
        if origin != 0.0:
            x += origin
        return _bound_in_place(x, lower, upper)

    return _rejection_draws(size, rate, propose)


def _normal_reflected(rng, size, a, origin, step, lower, upper):
    """``size`` draws ``clip(origin + step T, lower, upper)`` with ``T`` standard normal conditioned on ``T >= -a``,
    ``a >= 0`` (the frame of a one-sided range holding the true value): one of numpy's normals ``Z`` a draw, kept
    where ``Z >= -a``; a ``Z`` below is replaced, with probability ``r = Φ(-a)/Φ(a)``, by ``-Z`` (whose law is ``T``
    given ``T > a``, which has probability ``r``), else by a draw of ``T`` given ``|T| <= a``
    (:func:`_uniform_frame_draws`).  So every position holds a draw of ``T``, and ``a = 0`` is ``|Z|``.

    Block by block, while the block is in the cache: the normals are drawn into the output, those below ``-a``
    found and negated in place, the block's coins (:func:`_coins`) drawn for them only, and the places taken
    filled in order from a pool of draws of ``T`` given ``|T| <= a`` made ahead (its expected use, about one
    draw in six at most, at ``a`` near 0.6, plus six standard deviations, at most ``_REFLECT_POOL``; topped up
    when short), whose values do not depend on the places they fill; then the block is scaled and shifted
    once."""
    r = math.exp(float(special.log_ndtr(-a) - special.log_ndtr(a)))
    out, low = np.empty(size), np.empty(_REFLECT_BLOCK, dtype=bool)
    inner = float(special.ndtr(-a)) * (1.0 - r)  # P(a place is taken)
    pool, used = np.empty(0), 0
    for start in range(0, size, _REFLECT_BLOCK):
        z = rng.standard_normal(out=out[start : start + _REFLECT_BLOCK])
        if a == 0:  # (r = 1)
            np.abs(z, out=z)
        elif (
            z.min() < -a
        ):  # (one pass, not two, where no normal falls below: a far cut)
            idx = np.less(z, -a, out=low[: z.size]).nonzero()[0]
            z[idx] = -z[idx]  # -Z, kept with probability r
            idx = idx[_coins(rng, idx.size, 1.0 - r)]
            while used + idx.size > pool.size:  # T given |T| <= a, for the places left
                mean = (size - start) * inner
                more = int(mean + 6 * math.sqrt(mean)) + 16
                more = _inner_normals(rng, min(more, _REFLECT_POOL), a)
                pool, used = np.concatenate([pool[used:], more]), 0
            z[idx] = pool[used : used + idx.size]
            used += idx.size
        if step != 1.0:
            z *= step
        if origin != 0.0:
            z += origin
        _bound_in_place(z, lower, upper)
    return out


def _inner_normals(rng, size, a):
    """``size`` draws of ``T`` standard normal given ``|T| <= a`` (``a > 0``), by :func:`_uniform_frame_draws`: the
    acceptance rate is ``∫_{-a}^{a} e^{-t²/2} dt / (2a) = sqrt(π/2) erf(a/√2)/a``."""
    rate = math.sqrt(math.pi / 2) * math.erf(a / math.sqrt(2)) / a
    return _uniform_frame_draws(rng, size, 0.0, a, a, rate, 0.0, 1.0, -a, a)


#: normals per block of :func:`_normal_reflected` (the output's block, 256 kB, stays in the cache), and the most
#: inner draws it makes ahead at once (8 MB)
_REFLECT_BLOCK, _REFLECT_POOL = 2**15, 2**20


def _coins(rng, size, p):
    """``size`` independent coins, each true with probability ``p``: the bytes ``B`` of 64-bit words are the first
    8 bits of uniforms ``U = (B + U')/256``, true when ``U < p``: surely when ``B < ⌊256p⌋``, surely not when
    ``B > ⌊256p⌋``, else (one coin in 256) by a fresh ``U'`` (``U' < 256p - ⌊256p⌋``)."""
    scaled = 256.0 * p
    edge = math.floor(scaled)
    raw = rng.bit_generator.random_raw(-(-size // 8)).view(np.uint8)[:size]
    out = raw < edge
    tie = np.flatnonzero(raw == edge)
    if tie.size:
        out[tie] = rng.random(tie.size) < scaled - edge
    return out


# --- the same routes with a law per element (an array of true values) --------------------------------------


def _uniform_frame_each(rng, d, c, scale, lower, upper):
    """One draw per element of the arrays ``d >= 0`` (the distance of the true value to the range, in ``σ``) and
    ``c`` (the point of ``[lower, upper]`` nearest it): uniform proposals ``x`` on the range, kept when a second
    uniform is at most ``e^{-t(d + t/2)}``, ``t = |x - c|/σ`` (as :func:`_uniform_frame_draws`, placed on the
    range directly), the rejected drawn again."""
    out = np.empty(d.shape)
    todo = np.arange(d.size)
    while todo.size:
        x = _uniform_range(rng.random(todo.size), lower, upper)
        v = rng.random(todo.size)
        cc = c[todo]
        with np.errstate(over="ignore", invalid="ignore"):
            t = np.abs(x - cc) / scale
            t = np.where(np.isfinite(t), t, np.abs(x / scale - cc / scale))
            ok = v <= np.exp(-t * (d[todo] + 0.5 * t))
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return out


def _normal_tail_excess_each(rng, cut, top):
    """One draw of ``N - cut`` given ``cut <= N <= cut + top`` per element of the arrays ``cut >= 0`` and ``top``:
    Robert's exponential proposals of :func:`_normal_tail_excess`, each element with its own rate ``λ``."""
    out = np.empty(cut.shape)
    todo = np.arange(cut.size)
    with np.errstate(over="ignore"):
        mu = 2.0 / (np.hypot(cut, 2.0) + cut)  # λ - cut, without cancellation
        lam = cut + mu
    while todo.size:
        e = rng.standard_exponential(2 * todo.size)
        y = e[: todo.size] / lam[todo]
        ok = (np.square(y - mu[todo]) <= 2.0 * e[todo.size :]) & (y <= top[todo])
        out[todo[ok]] = y[ok]
        todo = todo[~ok]
    return out


def _normal_between_each(rng, lead, scale, lower, upper):
    """One draw of ``lead + scale N`` conditioned on ``[lower, upper]`` per element of ``lead``: numpy's standard
    normals against each element's cuts, those outside drawn again (for laws keeping at least about 40% of the
    mass)."""
    with np.errstate(over="ignore"):
        low, high = (lower - lead) / scale, (upper - lead) / scale
        z = rng.standard_normal(lead.size)
        bad = np.flatnonzero((z < low) | (z > high))
        while bad.size:
            again = rng.standard_normal(bad.size)
            z[bad] = again
            bad = bad[(again < low[bad]) | (again > high[bad])]
        out = z * scale
    out += lead
    return out


def _log_cdf_ratio(a1, a2):
    """``(log Φ(a1) - log Φ(a2), a bound on its rounding error)``, accurate for close ``a1``, ``a2`` (an atom of
    :class:`GaussianBIT` for two close true values): ``±log1p((Φ(hi) - Φ(lo))/Φ(lo))`` with the mass between
    them from :func:`_log_normal_mass`.  The bound allows ``1e-13`` of the value for the mass (tested to
    ``5e-14``, not proved: :func:`_log_normal_mass`'s own per-operation bound is 16 times looser) and the
    rounding of ``a = (bound - q)/σ`` (``eps |a|`` each, times the slope ``φ/Φ <= max(|a|, 1)``; a caller
    whose ``a`` cancels adds its own)."""
    a1, a2 = np.broadcast_arrays(
        np.asarray(a1, dtype=float), np.asarray(a2, dtype=float)
    )
    lo, hi = np.minimum(a1, a2), np.maximum(a1, a2)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.logaddexp(0.0, _log_normal_mass(lo, hi)[0] - special.log_ndtr(lo))
        value = np.where(a1 >= a2, gap, -gap)
        value = np.where(a1 == a2, 0.0, value)
        slope = np.maximum(np.maximum(np.abs(a1), np.abs(a2)), 1.0)
        err = (
            1e-13 * np.abs(value)
            + 4 * np.finfo(float).eps * (np.abs(a1) + np.abs(a2)) * slope
        )
    return value, np.where(np.isfinite(err), err, np.inf)
