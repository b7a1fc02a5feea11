"""The folded Laplace mechanism: ``q + L_b`` reflected at the bounds until it lies in ``[lower, upper]``.

diffprivlib's ``LaplaceFolded`` (Holohan et al. 2019, diffprivlib, ``mechanisms/laplace.py``): a draw
below ``lower`` is mirrored at ``lower``, one above ``upper`` at ``upper``, again and again.  With both
bounds finite the fold ``F`` is periodic with period ``2w`` (``w = upper - lower``), so the release has
the density of ``q + L_b`` summed over the images ``±x + 2kw``; a single reflection for a one-sided
bound; the plain Laplace mechanism when both are infinite.

**The law.**  In the coordinate ``y = x - lower`` (``y = upper - x`` for an upper bound alone) and at
``p = F(q) - lower`` (the fold of the true value: the law at ``q`` is the law at ``F(q)``, because ``F``
is even about each bound and ``L_b`` is symmetric), with ``' = /b`` and ``W = w/b``, the image sums are
geometric series that close to

* density ``f(y) = cosh(min(y, p)') cosh((w - max(y, p))') / (b sinh W)`` on ``[0, w]``;
* ``P(Y <= y) = sinh(y') cosh(W - p') / sinh W`` for ``y <= p``, ``P(Y > y) = cosh(p') sinh((w - y)') / sinh W``
  for ``y >= p``;
* ``E[Y] - p = b sinh((w - 2p)/(2b)) / cosh(w/(2b))`` (diffprivlib's ``LaplaceFolded.bias``, for ``q`` in
  the bounds);
* ``E[(Y - p)^2] = 2 b^2 [cosh(W - p') (sinh p' - p') + cosh p' (sinh(W - p') - (W - p'))] / sinh W``, from
  ``E[g(Y)] = h(p)`` with ``h - b^2 h'' = g``, ``h'(0) = h'(w) = 0`` (``f`` is the Green's function of that
  reflecting problem).

With ``W = inf`` these are the one-sided law ``|p + L_b|``: ``E[Y] - p = b e^{-p/b}``.  Every formula is
evaluated as a Laplace term ``e^{-|y - p|/b}/2`` times ``log1p``/``expm1`` corrections, so nothing
overflows at ``W`` up to ``1e308`` or cancels when ``w`` is far below ``b`` (then in units of ``w``).  All
closed forms; none is a truncated series except the Taylor series of ``(sinh x - x)/x^3`` on
``x < 1``, summed to below ``1e-17``.

**Privacy.**  ``F`` does not depend on ``q``, so the release is a post-processing of the Laplace
mechanism for every true value, inside the bounds or not: ``ε <= Δ/b``, which the auditor reports as an
upper bound (``exact=False``).  With one finite bound it is the loss (the log-ratio of densities is
``(q2 - q1)/b`` at outputs below both true values); with two it is loose: the loss is
``log cosh(w/b) - log cosh((w - min(Δ, w))/b) < Δ/b`` (the log-density is ``log cosh(min(y, p)') + log
cosh((w - max(y, p))')`` plus a constant, whose slope in ``p`` is below ``1/b``).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _compact
from .._kernels.inversion import _folded_root
from .._kernels.laplace import (
    _laplace_cdf,
    _laplace_isf,
    _laplace_logcdf,
    _laplace_logpdf,
    _laplace_logsf,
    _laplace_ppf,
    _laplace_sf,
    _offsets_in_place,
)
from .._kernels.sampling import _uniform_blocks
from ..audit.description import corner_pairs, laplace_cdf_curvature, laplace_description
from ..mechanism import Mechanism

__all__ = ["FoldedLaplace"]

_LOG2 = math.log(2.0)

#: Taylor coefficients of ``(sinh x - x)/x^3 = sum x^{2k}/(2k + 3)!``; on ``x < 1`` the first 9 reach 1e-18
_S3 = np.array([1.0 / math.factorial(2 * k + 3) for k in range(9)])


def _quiet(kernel):
    """Run a kernel with numpy's floating-point warnings off: its infinities and zeros are the intended limits."""

    @functools.wraps(kernel)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return kernel(*args, **kwargs)

    return run


class FoldedLaplace(Mechanism):
    """The folded Laplace mechanism: ``q + L_b`` reflected at ``lower`` and ``upper`` until it lies between.

    diffprivlib's ``LaplaceFolded`` (Holohan, Braghin, Mac Aonghusa & Levacher, *Diffprivlib: the IBM
    differential privacy library*, 2019): an output below ``lower`` is mirrored to ``2 lower - x``, one
    above ``upper`` to ``2 upper - x``, repeatedly.  The law, its cdf, bias and variance are exact closed
    forms (see the module docstring); the sampler draws the noise modulo the period ``2(upper - lower)``
    exactly (an exponential's remainder is a truncated exponential), so a width far below ``b`` keeps
    its law instead of the rounding of ``q + L_b``.

    The law at any true value ``q`` equals the law at its fold ``F(q)`` in ``[lower, upper]``; ``bias``
    and ``mse`` are about ``q`` itself.  The domain (for the auditor, intervals, calibration) is
    ``[lower, upper]``.  Privacy: a post-processing of the Laplace mechanism for every ``q``; the
    auditor reports ``Δ/b`` as an upper bound, the loss itself with one finite bound and above it
    with two.

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0`` (``Δ/ε``, :func:`laplace_scale`).
    lower, upper : float, keyword-only
        The bounds, ``lower < upper``; either may be infinite (both: the Laplace mechanism).

    Examples
    --------
    >>> mech = FoldedLaplace(1.0, lower=0.0, upper=1.0)
    >>> round(mech.bias(0.25), 6), round(mech.variance(0.25), 6)  # b sinh((w - 2q)/2b)/cosh(w/2b)
    (0.224021, 0.082508)
    >>> round(FoldedLaplace(2.0, lower=0.0, upper=np.inf).bias(0.0), 6)  # E|L_b| = b
    2.0
    >>> mech.sample(0.25, size=3, rng=0).round(4)
    array([0.5203, 0.2577, 0.6711])

    The auditor's answer is the Laplace mechanism's ``Δ/b``, as an upper bound; with two finite bounds
    the loss itself is ``log cosh(w/b) - log cosh((w - Δ)/b)``, here ``log cosh 1``:

    >>> from dpbook import privacy_report
    >>> report = privacy_report(mech, 1.0)
    >>> report.epsilon, report.exact, round(float(np.log(np.cosh(1.0))), 6)
    (1.0, False, 0.433781)
    """

    bias_monotone = True

    def __init__(self, scale, *, lower, upper):
        self.scale = check.positive("scale", scale)
        self.lower, self.upper = check.bounds(lower, upper)
        lo, hi = math.isfinite(self.lower), math.isfinite(self.upper)
        self._side = (
            "both" if lo and hi else "lower" if lo else "upper" if hi else "none"
        )
        self._width = self.upper - self.lower if self._side == "both" else math.inf

    @property
    def domain(self):
        return (self.lower, self.upper)

    @property
    def support(self):
        return (self.lower, self.upper)

    # --- the fold and the inner coordinate ------------------------------------------------------------
    def _fold(self, q):
        """``p``: the distance of the folded true value ``F(q)`` from the finite bound (``[0, w]``)."""
        side, w = self._side, self._width
        p = np.abs(q - self.lower) if side != "upper" else np.abs(self.upper - q)
        if side == "both":
            period = 2 * w
            if np.isfinite(period):
                p = np.mod(p, period)
            p = np.clip(np.where(p > w, (w - p) + w, p), 0.0, w)
        return p

    def _folded(self, q, p=None):
        """``F(q)`` in the outputs' coordinate (``q`` itself inside the bounds, with all its digits)."""
        p = self._fold(q) if p is None else p
        image = self.lower + p if self._side != "upper" else self.upper - p
        return np.where((q >= self.lower) & (q <= self.upper), q, image)

    def _fold_top(self, q, p=None):
        """``w - p``, with its own digits (from the upper bound) for ``q`` inside the bounds."""
        w = self._width
        if np.isinf(w):
            return np.full(np.shape(q), np.inf)
        inside = (q >= self.lower) & (q <= self.upper)
        return np.where(inside, self.upper - q, w - (self._fold(q) if p is None else p))

    def _outward(self, x):
        """``w - y``: the distance of the output from the far bound (``inf`` without one)."""
        if self._side != "both":
            return np.full(np.shape(x), np.inf)
        return self.upper - x

    def _inward(self, x):
        """The output in the inner coordinate: its distance from the finite bound, inwards."""
        return x - self.lower if self._side != "upper" else self.upper - x

    # --- kernels --------------------------------------------------------------------------------------
    def _lm(self, t, k=1.0):
        """``log(1 - e^{-k t/b})`` for ``t >= 0`` (``-inf`` at 0, ``0`` at ``inf``);
        in units of ``t`` for small ``k t/b``.
        """
        b = self.scale
        shape = np.shape(t)
        t = np.atleast_1d(np.asarray(t, dtype=float))
        z = k * (t / b)
        out = np.log(-np.expm1(-z))
        small = z <= 0.5
        if small.any():
            zs, ts = z[small], t[small]
            head = np.where(
                zs > 1e-300, np.log(zs), math.log(k) + np.log(ts) - math.log(b)
            )
            out[small] = head + np.log(special.exprel(-zs))
        return out.reshape(shape)

    def _lm_ratio(self, t):
        """``log((1 - e^{-2t/b}) / (1 - e^{-2w/b}))`` for ``0 <= t <= w``: the two logarithms of :meth:`_lm` would
        cancel to ``log(t/w)`` with the error of ``log(b)`` when ``w`` is far below ``b``."""
        b, w = self.scale, self._width
        if 2 * (w / b) > 0.5:
            return self._lm(t, 2.0) - float(self._lm(w, 2.0))
        t = np.asarray(t, dtype=float)
        ratio = t / w
        head = np.where(ratio > 1e-300, np.log(ratio), np.log(t) - math.log(w))
        return (
            head
            + np.log(special.exprel(-2 * (t / b)))
            - math.log(special.exprel(-2 * (w / b)))
        )

    def _l2(self, t):
        """``log(1 + e^{-2t/b})`` for ``t >= 0``."""
        return np.log1p(np.exp(-2 * (np.asarray(t, dtype=float) / self.scale)))

    def _inner_logs(self, y, wy, p, wp, dist, below):
        """``(log P(Y <= y), log P(Y > y))`` for ``y`` in ``[0, w]``, ``dist = |y - p|`` (see the module docstring).

        Each side is computed from the closed form that is a product (no ``1 - P``), the smaller of the two
        is kept and the other is its complement, so that ``cdf + sf = 1`` to rounding.  ``wy = w - y`` and
        ``wp = w - p`` are passed with their own digits (measured from the upper bound), and ``below`` (``y <= p``)
        decided on the outputs themselves: far from the bound ``y`` and ``p`` may round to one value on either
        side of the truth.
        """
        b = self.scale
        shape = np.shape(y)
        y, wy, p, wp, dist, below = (
            np.atleast_1d(v) for v in (y, wy, p, wp, dist, below)
        )
        inner = np.where(
            below, y, wy
        )  # the output's distance from the bound on its side of p
        ratio_inner = self._lm_ratio(inner)
        # below p: P(Y <= y) = sinh(y') cosh(W - p')/sinh W; above p: P(Y > y) = cosh(p') sinh(W - y')/sinh W
        near = -dist / b - _LOG2 + ratio_inner + self._l2(np.where(below, wp, p))
        far = np.log1p(-np.exp(near))  # accurate where near <= log(1/2)
        need = near > -_LOG2
        if need.any():
            # there the other side is the small one: two positive terms,
            # sinh(y')(cosh(W - y') - cosh(W - p')) + cosh(y') sinh(W - y') (over sinh W)
            k, yk, wyk, pk, wpk = need, y[need], wy[need], p[need], wp[need]
            half = np.where(below[k], wyk / 2 + wpk / 2, yk / 2 + pk / 2)
            t1 = ratio_inner[k] - _LOG2 + self._lm(dist[k]) + self._lm(half, 2.0)
            t2 = (
                -_LOG2
                + self._l2(inner[k])
                + self._lm_ratio(np.where(below[k], wyk, yk))
            )
            other = np.minimum(np.logaddexp(t1, t2), -_LOG2)
            far[k] = other
            near[k] = np.log1p(-np.exp(other))
        lower_tail = np.where(below, near, far).reshape(shape)
        upper_tail = np.where(below, far, near).reshape(shape)
        return lower_tail, upper_tail

    @_quiet
    def _logs(self, x, q):
        """``(log P(M(q) <= x), log P(M(q) > x))``."""
        w = self._width
        p = self._fold(q)
        y, wy, p, wp, fq = np.broadcast_arrays(
            self._inward(x),
            self._outward(x),
            p,
            self._fold_top(q, p),
            self._folded(q, p),
        )
        dist = np.abs(x - fq)
        # the output at or below F(q) in the coordinate measured from the bound (exactly: not on y and p, which
        # round to one value when the bound is far from both)
        below = (x >= fq) if self._side == "upper" else (x <= fq)
        lo_, hi_ = self._inner_logs(
            np.clip(y, 0.0, w), np.clip(wy, 0.0, w), p, wp, dist, below
        )
        lo_ = np.where(y < 0, -np.inf, np.where(wy <= 0, 0.0, lo_))
        hi_ = np.where(y < 0, 0.0, np.where(wy <= 0, -np.inf, hi_))
        return (hi_, lo_) if self._side == "upper" else (lo_, hi_)

    def _logcdf(self, x, q):
        if self._side == "none":
            return _laplace_logcdf(x, q, self.scale)
        return self._logs(x, q)[0]

    def _logsf(self, x, q):
        if self._side == "none":
            return _laplace_logsf(x, q, self.scale)
        return self._logs(x, q)[1]

    def _cdf(self, x, q):
        if self._side == "none":
            return _laplace_cdf(x, q, self.scale)
        return np.exp(self._logcdf(x, q))

    def _sf(self, x, q):
        if self._side == "none":
            return _laplace_sf(x, q, self.scale)
        return np.exp(self._logsf(x, q))

    @_quiet
    def _logpdf(self, x, q):
        """``log f = -|x - F(q)|/b - log(2b (1 - e^{-2W})) + log(1 + e^{-2 min(y,
        p)/b}) + log(1 + e^{-2(w - max(y, p))/b})``.
        """
        b = self.scale
        if self._side == "none":
            return _laplace_logpdf(x, q, b)
        w = self._width
        p = self._fold(q)
        y, wy, p, wp, fq = np.broadcast_arrays(
            self._inward(x),
            self._outward(x),
            p,
            self._fold_top(q, p),
            self._folded(q, p),
        )
        inside = (y >= 0) & (wy >= 0)
        y, wy = np.clip(y, 0.0, w), np.clip(wy, 0.0, w)
        # log(2b (1 - e^{-2W})), in units of w when W is small (= log(4w) in the limit)
        if 2 * (w / b) > 0.5:
            log_norm = (
                _LOG2 + math.log(b) + math.log(-math.expm1(-2 * (w / b)))
            )  # w = inf: log 2b
        else:
            log_norm = 2 * _LOG2 + math.log(w) + math.log(special.exprel(-2 * (w / b)))
        out = (
            -np.abs(x - fq) / b
            - log_norm
            + self._l2(np.minimum(y, p))
            + self._l2(np.minimum(wy, wp))
        )
        return np.where(inside, out, -np.inf)

    def _inner_bias(self, p):
        """``E[Y] - p = sign(w - 2p) b e^{-min(p, w - p)/b} (1 - e^{-|w - 2p|/b}) / (1 + e^{-w/b})``."""
        b, w = self.scale, self._width
        gap = np.abs((w - p) - p)
        z = gap / b
        # b (1 - e^{-z}), in units of the gap when z is small (no underflow of z)
        spread = np.where(z > 0.5, b * -np.expm1(-z), gap * special.exprel(-z))
        near = np.minimum(p, w - p) / b
        out = np.sign((w - p) - p) * spread * np.exp(-near) / (1 + np.exp(-w / b))
        return -out if self._side == "upper" else out

    @_quiet
    def _mean(self, q):
        if self._side == "none":
            return np.array(q, dtype=float)
        return self._folded(q) + self._inner_bias(self._fold(q))

    @_quiet
    def _bias(self, q):
        if self._side == "none":
            return np.zeros_like(q)
        return (self._folded(q) - q) + self._inner_bias(self._fold(q))

    @_quiet
    def _variance(self, q):
        b = self.scale
        if self._side == "none":
            return np.full(np.shape(q), 2 * np.float64(b) ** 2)
        w = self._width
        p = self._fold(q)
        big = w / b
        a, c = p / b, (w - p) / b
        # W >= 1, in units of b: 2 - 2 [c e^{-c} (1 + e^{-2a}) + a e^{-a} (1 + e^{-2c})] / (1 - e^{-2W}) - (m/b)^2
        ce = np.where(np.isinf(c), 0.0, c * np.exp(-c))
        ae = np.where(np.isinf(a), 0.0, a * np.exp(-a))
        second = 2 - 2 * (
            ce * (1 + np.exp(-2 * a)) + ae * (1 + np.exp(-2 * c))
        ) / -np.expm1(-2 * big)
        m = self._inner_bias(p) / b
        long_ = b * (b * np.maximum(second - m**2, 0.0))
        # W < 1, in units of w: 2 [u^3 s3(a) cosh c + (1 - u)^3 s3(c) cosh a] / sinhc(W) - (m/w)^2
        u = np.clip(p / w, 0.0, 1.0) if np.isfinite(w) else np.zeros_like(p)
        sw = min(big, 1.0)
        a_s, c_s = u * sw, (1 - u) * sw
        inner = (
            2
            * (u**3 * _s3(a_s) * np.cosh(c_s) + (1 - u) ** 3 * _s3(c_s) * np.cosh(a_s))
            / _sinhc(sw)
        )
        half = (1 - 2 * u) * sw / 2
        mw = (1 - 2 * u) / 2 * _sinhc(half) / np.cosh(sw / 2)
        short = w * (w * np.maximum(inner - mw**2, 0.0)) if np.isfinite(w) else np.inf
        return np.where(big >= 1.0, long_, short)

    @_quiet
    def _sample(self, q, shape, rng):
        """Inverse cdf from one uniform per draw, block by block (``dpbook._kernels.sampling``)."""
        b, side = self.scale, self._side
        q = _compact(q)
        if side == "none":

            def draw(t, q):
                t *= 2.0
                t -= 1.0
                x = _offsets_in_place(t, b, out=t)
                x += q
                return x

            return _uniform_blocks(rng, shape, q, draw)
        if side != "both":
            # one reflection: |(q - lower) + L_b| from the lower bound (mirrored for an upper bound)
            lower, upper = self.lower, self.upper

            def draw(t, p):
                t *= 2.0
                t -= 1.0
                x = _offsets_in_place(t, b, out=t)
                x += p
                np.abs(x, out=x)
                if side == "lower":
                    x += lower
                    return x
                return np.subtract(upper, x, out=x)

            return _uniform_blocks(rng, shape, self._inward(q), draw)
        # both bounds: only L_b modulo the period 2w matters, and |L_b| mod 2w is an exponential truncated to
        # [0, 2w) (memorylessness), drawn by inverting its cdf: R = -b log(1 - V g), g = 1 - e^{-2w/b}, V uniform
        w, lower, upper = self._width, self.lower, self.upper
        big = 2 * (w / b)
        g, floor = -np.expm1(-big), max(math.exp(-min(big, 800.0)), 5e-324)
        tiny, two_w = np.expm1(-big), 2 * w

        def draw(t, p):
            t *= 2.0
            t -= 1.0  # sign and V = |t|
            r = np.abs(t)
            if big >= 1.0:
                # 1 - V g = (1 - V) g + e^{-2W}: two positive terms, one log (numpy's own resolution)
                np.subtract(1.0, r, out=r)
                r *= g
                r += floor
                np.log(r, out=r)
                r *= -b
            elif big > 2.0**-52:  # log1p keeps R's relative accuracy when g is small
                r *= tiny
                np.log1p(r, out=r)
                r *= -b
            else:  # 2W below 2^-52: the truncated exponential is uniform on [0, 2w) to half an ulp
                r *= 2 * w
            np.copysign(r, t, out=r)
            r += p  # z = p + s R in (-2w, 3w)
            np.abs(r, out=r)
            # its fold into [0, w]: |z| itself where |z| <= w (w - (w - |z|) would round a draw far below w
            # to 0), else |2w - |z||, exact for |z| in [w, 4w] (Sterbenz); the smaller of the two, as
            # |2w - |z|| >= w >= |z| in the first case (also rounded) and < |z| in the second
            np.subtract(two_w, r, out=t)
            np.abs(t, out=t)
            np.minimum(r, t, out=r)
            if lower:
                r += lower
            return np.minimum(r, upper, out=r)

        return _uniform_blocks(rng, shape, self._fold(q), draw)

    def _inner_quantile(self, level, p, upper_side):
        """The ``y`` in ``[0, w]`` with ``P(Y <= y) = level`` (``upper_side=False``) or ``P(Y > y) = level``.

        Inverting the closed forms: ``y = b asinh(α sinh W / cosh(W - p'))`` below ``p``, and
        ``w - y = b asinh(s sinh W / cosh p')`` above it (``α``, ``s`` the lower and upper tail).  The
        logarithms are formed as in :meth:`_inner_logs`, in units of ``w`` when ``W`` is small; above ``p``
        with ``s sinh W / cosh p'`` beyond ``e^{20}`` it is ``y = b (log cosh p' - log s - log(1 - e^{-2W}))``,
        which holds for a one-sided bound too; where ``y`` is below ``min(b, w/2)`` Newton's method refines it.
        """
        b, w = self.scale, self._width
        # the lower tail at y = p decides the branch (log P(Y <= p), its complement)
        at_p = -_LOG2 + self._lm_ratio(p) + self._l2(w - p)
        log_level = np.log(level)
        if upper_side:
            below = log_level >= np.log1p(-np.exp(at_p))
            alpha = np.where(below, 1 - level, 0.5)
            s = np.where(below, 0.5, level)
            log_s = np.log(s)
        else:
            below = log_level <= at_p
            alpha = np.where(below, level, 0.5)
            s = np.where(below, 0.5, 1 - level)
            log_s = np.log1p(
                -np.where(below, 0.5, level)
            )  # log(1 - level) keeps a level far below 1e-16
        if 2 * (w / b) < 0.5:  # short: in units of w, no logarithm of b
            scaled = alpha * w * _sinhc(w / b) / np.cosh((w - p) / b)  # b v
            low = scaled * _asinhc(scaled / b)
            scaled = s * w * _sinhc(w / b) / np.cosh(p / b)
            top = scaled * _asinhc(scaled / b)
            high = w - top
            near_top = ~below
        else:
            norm = self._lm(w, 2.0)
            low = _b_asinh_exp(alpha, p / b + norm - self._l2(w - p), b)
            # y = b (log cosh p' - log s - log(1 - e^{-2W})): three terms >= 0, nothing cancels
            far = b * (_log_cosh(p / b) - log_s - norm)
            if np.isinf(w):
                high = far
            else:
                rest = (w - p) / b + norm - self._l2(p)
                top = _b_asinh_exp(
                    s, np.minimum(rest, 20 - log_s), b
                )  # w - y, with its own digits
                near_top = ~below & (log_s + rest <= 20)
                high = np.where(near_top, w - top, far)
                # w - b asinh(...) keeps only the digits of w: where y' < 1 refine by Newton on
                # sinh y' - tanh W (cosh y' - 1) = tanh W (2 sinh^2(p'/2) + α)/cosh p' (the same equation)
                small = (high < min(b, w / 2)) & near_top
                if small.any():
                    big = w / b
                    tw = math.tanh(big)
                    a = np.where(upper_side, 1 - level, level)
                    target = (
                        tw
                        * (2 * np.sinh(p / (2 * b)) ** 2 + a)
                        / np.cosh(np.minimum(p / b, 1.0))
                    )
                    y = np.clip(high / b, 0.0, 1.0)
                    for _ in range(4):
                        f = np.sinh(y) - tw * 2 * np.sinh(y / 2) ** 2 - target
                        y = np.clip(y - f / (np.cosh(y) - tw * np.sinh(y)), 0.0, 1.0)
                    high = np.where(small, b * y, high)
                    near_top &= ~small
        y = np.clip(np.where(below, low, high), 0.0, w)
        if np.isinf(w):
            return y, None
        return y, np.where(near_top, np.clip(top, 0.0, w), np.nan)

    @_quiet
    def _quantile(self, level, q, upper_side):
        p = self._fold(q)
        if (
            self._side == "upper"
        ):  # M = upper - Y: the lower tail of M is the upper tail of Y
            return self.upper - self._inner_quantile(level, p, not upper_side)[0]
        y, top = self._inner_quantile(level, p, upper_side)
        if top is None:
            return self.lower + y
        # near the upper bound from its own distance w - y (lower + y keeps only the digits of the bound)
        x = np.where(np.isnan(top), self.lower + y, self.upper - top)
        # a true value in the upper half: the mirror image (Y -> w - Y, p -> w - p, the tails swapped), so that
        # the outputs near the upper bound are the ones computed from their own small distance
        mirrored = p > self._width / 2
        if mirrored.any():
            y_m, top_m = self._inner_quantile(
                level, self._fold_top(q, p), not upper_side
            )
            x_m = np.where(np.isnan(top_m), self.upper - y_m, self.lower + top_m)
            x = np.where(mirrored, x_m, x)
        return x

    def _ppf(self, p, q):
        if self._side == "none":
            return _laplace_ppf(p, q, self.scale)
        x = np.clip(self._quantile(p, q, False), self.lower, self.upper)
        return np.where(p == 0, self.lower, np.where(p == 1, self.upper, x))

    def _isf(self, p, q):
        if self._side == "none":
            return _laplace_isf(p, q, self.scale)
        x = np.clip(self._quantile(p, q, True), self.lower, self.upper)
        return np.where(p == 1, self.lower, np.where(p == 0, self.upper, x))

    def _quantile_in_q(self, x, p, v, upper):
        """The roots in ``q`` of the transform (:func:`dpbook._kernels.inversion._folded_root`): on each side of
        the release the closed forms of the law are a quadratic in ``e^{-|q - x|/b}``.  With one finite bound,
        or two a quarter scale to ``2^16`` scales apart, the width of the zone where the computed transform
        may cross ``p`` is proved (from a bound on the rounding of :meth:`_logs`) where the root is off the
        flat part of the tail; elsewhere the root is a starting point that the intervals polish on the law;
        with no finite bound, the Laplace root and its width."""
        return _folded_root(x, p, v, upper, self.scale, self.lower, self.upper)

    def _kinks(self, q):
        """The density's kink is at the fold of ``q`` (and at the bounds)."""
        return [float(self._folded(np.float64(q)))]

    # --- hooks ------------------------------------------------------------------------------------
    def stochastic_order(self):
        """On ``[lower, upper]``: ``P(Y <= y)`` above is decreasing in ``p`` on both branches (``sinh``/``cosh``)."""
        return True, (
            "on [lower, upper] the closed-form cdf sinh(y/b) cosh((w - p)/b)/sinh(w/b) (y <= p), "
            "1 - cosh(p/b) sinh((w - y)/b)/sinh(w/b) (y >= p) decreases in p"
        )

    def score_bound(self):
        """``|d/dq log f| <= 1/b``: the slope of ``log cosh(p/b)`` or ``log cosh((w - p)/b)`` in ``p``;
        ``F`` is 1-Lipschitz.
        """
        return 1.0, self.scale

    def max_abs_bias(self):
        """``sup |bias|`` over ``[lower, upper]``: ``b tanh(w/(2b))``, at either bound (``b`` for one, 0 for none).

        The bias ``b sinh((w - 2p)/(2b))/cosh(w/(2b))`` decreases in ``p`` and is odd about the middle.
        """
        b, side = self.scale, self._side
        if side == "none":
            return 0.0
        if side != "both":
            return float(b)
        half = self._width / 2
        return float(half if half / b < 1e-8 else b * math.tanh(half / b))

    def privacy_description(self):
        """For the auditor: the Laplace base ``q + L_b`` (exact with no finite bound, else an upper bound).

        The fold does not depend on ``q``, so the release is a post-processing of ``q + L_b`` for every
        true value: ``ε <= Δ/b`` (``exact=False``; the loss itself with one finite bound, below it with two,
        see the module docstring).  The auditor's descriptions hold one Laplace kernel; the folded density
        is a sum of four exponentials.
        """
        b = self.scale
        if self._side == "none":
            return laplace_description(
                b, worst_pairs=corner_pairs(), curvature=laplace_cdf_curvature(b)
            )
        return laplace_description(b, worst_pairs=corner_pairs(), exact=False)


def _s3(x):
    """``(sinh x - x)/x^3`` for ``0 <= x <= 1`` (Taylor series, 9 terms)."""
    x2 = np.asarray(x, dtype=float) ** 2
    out = np.zeros_like(x2)
    for coef in _S3[::-1]:
        out = out * x2 + coef
    return out


def _sinhc(x):
    """``sinh(x)/x`` (1 at 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", under="ignore"):
        return np.where(np.abs(x) < 1e-8, 1.0, np.sinh(x) / np.where(x == 0, 1.0, x))


def _asinhc(v):
    """``asinh(v)/v`` for ``v >= 0`` (1 at 0)."""
    v = np.asarray(v, dtype=float)
    with np.errstate(invalid="ignore", under="ignore"):
        return np.where(v < 1e-8, 1.0, np.arcsinh(v) / np.where(v == 0, 1.0, v))


def _b_asinh_exp(level, rest, b):
    """``b asinh(level e^{rest})`` without overflow or underflow (``level`` in ``[0, 1]``)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        lv = np.log(level) + rest
        mid = b * np.arcsinh(np.exp(np.clip(lv, -20.0, 20.0)))
        shift = rest + math.log(b)
        # asinh(v) = v to 1e-18 below e^{-20}: the level stays out of the logarithm (no error of log(level))
        tiny = np.where(
            shift < 700,
            level * np.exp(np.minimum(shift, 700)),
            np.exp(lv + math.log(b)),
        )
        big = b * (lv + _LOG2)  # asinh(v) = log 2v to 1e-18 above e^{20}
    return np.where(lv < -20, tiny, np.where(lv > 20, big, mid))


def _log_cosh(x):
    """``log cosh x`` for ``x >= 0``: ``log1p(2 sinh^2(x/2))`` below 1 (accurate near 0),
    else ``x + log1p(e^{-2x}) - log 2``.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        near = np.log1p(2 * np.sinh(np.minimum(x, 1.0) / 2) ** 2)
        return np.where(x < 1.0, near, x + np.log1p(np.exp(-2 * x)) - _LOG2)
