"""The Gaussian mechanism on the line and on a bounded range: plain, clamped (BIT) and truncated.

The Gaussian mechanism releases ``q + σZ`` with ``Z`` standard normal; ``scale`` is ``σ``, the noise's
standard deviation (not a Laplace ``b``).  Liu (2019) leaves boundary inflated truncation and truncation
for the Gaussian "to be examined case by case" (Def. 2 is written for Laplace noise); here they are, with
the same definitions:

* :class:`GaussianBIT`: ``clip(q + σZ, lower, upper)`` (Liu Def. 2(b)), atoms at the finite bounds;
* :class:`GaussianTruncated`: the law of ``q + σZ`` conditioned on ``[lower, upper]`` (Liu Def. 2(a)),
  which is also the "bounded Gaussian" law of Chen & Hale (truncated and normalized); its own (ε, δ)
  calibration is not here.

Their moments are the truncated normal's partial moments (``φ`` and ``Φ`` terms), computed about the
point ``c = clip(q, lower, upper)`` and in log space (:mod:`dpbook._kernels.gaussian`), so they hold for
every real ``q`` and every ``σ`` from ``1e-300`` to ``1e300``.  With ``α = (lower - q)/σ``,
``β = (upper - q)/σ`` and ``R(t) = φ(t) - tΦ̄(t) = E[(Z - t)_+]``:

* BIT: ``E[M] - q = σ(R(-α) - R(β))`` and ``P(M = lower) = Φ(α)``, ``P(M = upper) = Φ̄(β)``;
* truncation: ``E[M] - q = σ(φ(α) - φ(β))/(Φ(β) - Φ(α))`` and ``Var M = σ²(1 + (αφ(α) - βφ(β))/N
  - ((φ(α) - φ(β))/N)²)``, ``N = Φ(β) - Φ(α)``,

the textbook forms, which the kernels evaluate without their cancellations.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _bound_in_place, _compact, _float, _FromLogTails
from .._kernels.gaussian import (
    _LOG_SQRT_2PI,
    _bit_moments,
    _frame,
    _log_cdf_ratio,
    _log_mass,
    _log_phi,
    _normal_between,
    _normal_between_each,
    _normal_reflected,
    _normal_tail_excess,
    _normal_tail_excess_each,
    _robert_rate,
    _truncated_moments,
    _uniform_frame_draws,
    _uniform_frame_each,
)
from .._kernels.inversion import _both_ends, _gaussian_root
from .._kernels.strips import _normal_strip_draws
from ..audit.description import PrivacyDescription, corner_pairs
from ..mechanism import IntervalMechanism, Mechanism

__all__ = ["Gaussian", "GaussianBIT", "GaussianTruncated"]


def _z(x, q, scale):
    with np.errstate(over="ignore", invalid="ignore"):
        return (x - q) / scale


def _normal_logpdf(x, q, scale):
    """``log φ((x - q)/σ) - log σ``."""
    with np.errstate(over="ignore"):
        return -0.5 * np.square(_z(x, q, scale)) - _LOG_SQRT_2PI - math.log(scale)


def _normal_ppf(p, q, scale):
    """``q + σ Φ^{-1}(p)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return q + scale * special.ndtri(p)


def _normal_isf(p, q, scale):
    """``q - σ Φ^{-1}(p)``: the upper quantile, accurate for small ``p``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return q - scale * special.ndtri(p)


def _normals(rng, q, scale, shape):
    """``q + σZ`` of shape ``shape`` (``q`` broadcast to it): numpy's normal with a scalar location where ``q`` holds
    one value (its fast path)."""
    small = _compact(q)
    loc = float(small.reshape(-1)[0]) if small.size == 1 else small
    with np.errstate(over="ignore"):
        out = rng.normal(loc, scale, size=shape)
    return np.asarray(out, dtype=float)


def _gauss_description(scale, pieces=((-math.inf, math.inf),), **kw):
    s = float(scale)
    return PrivacyDescription(
        scale=lambda q: np.full(np.shape(q), s),
        shape="gauss",
        pieces=tuple(pieces),
        length=s,
        center_shift=0.0,
        **kw,
    )


class Gaussian(Mechanism):
    """The Gaussian mechanism ``q + σZ``, ``Z`` standard normal: ``scipy.stats.norm(loc=q, scale=σ)``.

    Parameters
    ----------
    scale : float
        ``σ > 0``, the standard deviation of the noise (see :func:`analytic_gaussian_scale` for the
        smallest ``σ`` giving (ε, δ)-DP).

    Notes
    -----
    Its pure privacy loss is infinite for every sensitivity (the log-ratio of two normal densities is
    linear in the output), which :func:`dpbook.privacy_loss` reports; its (ε, δ) guarantee is
    :func:`gaussian_delta`.

    Examples
    --------
    >>> m = Gaussian(scale=2.0)
    >>> m.variance(0.0), round(m.cdf(1.0, 0.0), 6)
    (4.0, 0.691462)
    >>> from dpbook import privacy_loss
    >>> privacy_loss(m, 1.0)
    inf
    """

    bias_monotone = True

    def __init__(self, scale):
        self.scale = check.positive("scale", scale)

    def stochastic_order(self):
        return True, "a log-concave location family has a monotone likelihood ratio"

    def max_abs_bias(self):
        return 0.0

    def _bias(self, q):
        return np.zeros_like(q)

    def _variance(self, q):
        with np.errstate(over="ignore"):
            return np.full_like(q, np.float64(self.scale) ** 2)

    def _cdf(self, x, q):
        return special.ndtr(_z(x, q, self.scale))

    def _sf(self, x, q):
        return special.ndtr(-_z(x, q, self.scale))

    def _logcdf(self, x, q):
        return special.log_ndtr(_z(x, q, self.scale))

    def _logsf(self, x, q):
        return special.log_ndtr(-_z(x, q, self.scale))

    def _logpdf(self, x, q):
        return _normal_logpdf(x, q, self.scale)

    def _ppf(self, p, q):
        """``q + σ Φ^{-1}(p)``."""
        return _normal_ppf(p, q, self.scale)

    def _isf(self, p, q):
        """``q - σ Φ^{-1}(p)``, accurate for small ``p``."""
        return _normal_isf(p, q, self.scale)

    def _quantile_in_q(self, x, p, v, upper):
        """``q = x ∓ σ Φ^{-1}(p)``: ``Φ((x - q)/σ) = p`` solved in ``q``, with the proved width of the zone
        where the computed transform may cross ``p`` (:func:`dpbook._kernels.inversion._gaussian_root`)."""
        return _gaussian_root(x, p, v, upper, self.scale)

    def _sample(self, q, shape, rng):
        return _normals(rng, q, self.scale, shape)

    def privacy_description(self):
        """For the auditor: a normal kernel of scale ``σ`` centred at ``q`` on the whole line (an infinite loss:
        the log-ratio of two centres is linear in the output)."""
        return _gauss_description(self.scale, worst_pairs=corner_pairs())


class GaussianBIT(IntervalMechanism):
    """Boundary inflated truncation of the Gaussian mechanism, ``clip(q + σZ, lower, upper)`` (Liu Def. 2(b)).

    Parameters
    ----------
    scale : float
        ``σ > 0``, the standard deviation of the noise.
    lower, upper : float, keyword-only
        The bounds, ``lower < upper``; either may be infinite.

    Notes
    -----
    The law has the normal density on ``[lower, upper]`` and point masses ``Φ((lower - q)/σ)`` and
    ``Φ̄((upper - q)/σ)`` at the finite bounds.  Its pure privacy loss is finite on a finite range with a
    bounded domain and infinite otherwise (the atom at ``lower`` has log-ratio ``≈ Δ(q - lower)/σ²`` far
    above it); see :meth:`privacy_description`.

    Examples
    --------
    >>> m = GaussianBIT(1.0, lower=0.0, upper=np.inf)
    >>> round(m.bias(0.0), 6)  # E[max(Z, 0)] = φ(0) = 1/√(2π)
    0.398942
    >>> round(m.pmf(0.0, 0.0), 6)
    0.5
    """

    bias_monotone = True

    def stochastic_order(self):
        return True, "a nondecreasing map of the normal location family"

    def _mean(self, q):
        c, offset, _, _ = _bit_moments(q, *self._params())
        return c + offset

    def _bias(self, q):
        """``σ(R(-α) - R(β))`` with ``R(t) = E[(Z - t)_+]`` (module docstring), about ``clip(q)``."""
        c, offset, _, _ = _bit_moments(q, *self._params())
        return (c - q) + offset

    def _variance(self, q):
        return _bit_moments(q, *self._params())[2]

    def _mse(self, q):
        return _bit_moments(q, *self._params())[3]

    def _atoms(self, q):
        """``(lower, Φ((lower - q)/σ))`` and ``(upper, Φ̄((upper - q)/σ))`` at the finite bounds."""
        s = self.scale
        lo = special.ndtr(_z(self.lower, q, s))
        hi = special.ndtr(-_z(self.upper, q, s))
        return [
            (x, p) for x, p in ((self.lower, lo), (self.upper, hi)) if np.isfinite(x)
        ]

    def _cdf(self, x, q):
        inside = special.ndtr(_z(np.clip(x, self.lower, self.upper), q, self.scale))
        return np.where(x < self.lower, 0.0, np.where(x >= self.upper, 1.0, inside))

    def _sf(self, x, q):
        inside = special.ndtr(-_z(np.clip(x, self.lower, self.upper), q, self.scale))
        return np.where(x < self.lower, 1.0, np.where(x >= self.upper, 0.0, inside))

    def _logcdf(self, x, q):
        z = _z(np.clip(x, self.lower, self.upper), q, self.scale)
        inside = special.log_ndtr(z)
        return np.where(x < self.lower, -np.inf, np.where(x >= self.upper, 0.0, inside))

    def _logsf(self, x, q):
        z = _z(np.clip(x, self.lower, self.upper), q, self.scale)
        inside = special.log_ndtr(-z)
        return np.where(x < self.lower, 0.0, np.where(x >= self.upper, -np.inf, inside))

    def _logpdf(self, x, q):
        inside = (x >= self.lower) & (x <= self.upper)
        xc = np.clip(x, self.lower, self.upper)
        return np.where(inside, _normal_logpdf(xc, q, self.scale), -np.inf)

    def _ppf(self, p, q):
        """The normal quantile clipped to ``[lower, upper]``: a bound on the whole jump of its atom."""
        x = np.clip(_normal_ppf(p, q, self.scale), self.lower, self.upper)
        return np.where(p == 0, self.lower, x)

    def _isf(self, p, q):
        x = np.clip(_normal_isf(p, q, self.scale), self.lower, self.upper)
        return np.where(p == 1, self.lower, x)

    def _quantile_in_q(self, x, p, v, upper):
        """The normal quantile's roots ``x ∓ σ Φ^{-1}(p)`` between the bounds; at a bound the atom's tail
        ``v Φ((lower - q)/σ)`` (resp. ``(1 - v) Φ((q - upper)/σ)``) solved the same way, with the proved width
        of the zone where the computed transform may cross ``p``
        (:func:`dpbook._kernels.inversion._gaussian_root`)."""
        return _gaussian_root(x, p, v, upper, self.scale, self.lower, self.upper)

    def _quantiles_in_q(self, x, p, v_top, v_bottom):
        """Both ends' roots, the positions of the releases on the bounds found once
        (:func:`dpbook._kernels.inversion._both_ends`)."""
        return _both_ends(
            _gaussian_root, x, p, v_top, v_bottom, (self.scale,), self.lower, self.upper
        )

    def max_abs_bias(self):
        """``sup |bias(q)|`` over ``q`` in ``[lower, upper]``: ``σ E[clip(Z, 0, (upper - lower)/σ)]``.

        ``d bias/dq = -(P(M = lower) + P(M = upper)) < 0`` inside the bounds, so the sup is at an end, and
        the reflection ``x -> lower + upper - x`` makes both ends equal; ``σ/√(2π)`` for a one-sided
        range, ``0`` for the whole line.
        """
        if np.isinf(self.lower) and np.isinf(self.upper):
            return 0.0
        end = self.lower if np.isfinite(self.lower) else self.upper
        return abs(float(self.bias(end)))

    def _sample(self, q, shape, rng):
        x = _normals(rng, q, self.scale, shape)
        return _bound_in_place(x, self.lower, self.upper)

    def privacy_description(self):
        """For the auditor: the normal density on ``[lower, upper]`` plus atoms at the finite bounds.

        Worst pairs: for ``q1 < q2`` the log-ratio of the densities is largest at ``lower``, where it is
        ``∫_{q1}^{q2} (q - lower)/σ² dq``, below that of the atom there, ``g(q2) - g(q1)`` with
        ``g(q) = -log Φ((lower - q)/σ)``, whose slope ``φ/Φ`` exceeds ``(q - lower)/σ``; the upper atom
        only favours ``q2``.  ``g`` is convex (``Φ`` is log-concave), so ``g(q + Δ) - g(q)`` grows with
        ``q``: the worst such pair is ``(hi - Δ, hi)``, and by reflection ``(lo + Δ, lo)`` for ``q1 > q2``.
        With a domain unbounded on a side the loss grows without bound (the pair ``(-inf, inf)`` stands
        for that limit); with an infinite bound, a pair on the open side has an infinite loss in the tail.
        """
        s, lo_b, hi_b = self.scale, self.lower, self.upper
        atoms = []
        if np.isfinite(lo_b):
            atoms.append(
                (
                    lo_b,
                    lambda q: special.log_ndtr(_z(lo_b, q, s)),
                    lambda q1, q2: _log_cdf_ratio(_z(lo_b, q1, s), _z(lo_b, q2, s)),
                )
            )
        if np.isfinite(hi_b):
            atoms.append(
                (
                    hi_b,
                    lambda q: special.log_ndtr(-_z(hi_b, q, s)),
                    lambda q1, q2: _log_cdf_ratio(-_z(hi_b, q1, s), -_z(hi_b, q2, s)),
                )
            )

        def worst_pairs(lo, hi, delta):
            if not (math.isfinite(lo) and math.isfinite(hi)):
                return [(-math.inf, math.inf), (math.inf, -math.inf)]
            if hi - lo <= delta:
                return [(lo, hi), (hi, lo)]
            return [
                (hi - delta, hi),
                (lo + delta, lo),
                (lo, lo + delta),
                (hi, hi - delta),
            ]

        return _gauss_description(
            s,
            ((lo_b, hi_b),),
            atoms=tuple(atoms),
            landmarks=tuple(v for v in (lo_b, hi_b) if math.isfinite(v)),
            worst_pairs=worst_pairs,
        )


class GaussianTruncated(_FromLogTails, IntervalMechanism):
    """Truncation of the Gaussian mechanism: ``q + σZ`` conditioned on ``[lower, upper]`` (Liu Def. 2(a)).

    Every real ``q`` is allowed; far outside the range the mass kept underflows, but the law (a normal
    density conditioned on the range) is computed from ``log``-masses about ``clip(q)`` and stays exact.
    This is also the "bounded Gaussian" law of Chen & Hale (truncated and normalized); its (ε, δ)
    calibration is not part of this family.

    Parameters
    ----------
    scale : float
        ``σ > 0``, the standard deviation of the noise before truncation.
    lower, upper : float, keyword-only
        The bounds, ``lower < upper``; either may be infinite.

    Examples
    --------
    >>> m = GaussianTruncated(1.0, lower=0.0, upper=np.inf)
    >>> round(m.mean(0.0) ** 2 * np.pi / 2, 12)  # the half-normal mean is √(2/π)
    1.0
    >>> round(m.cdf(1.0, 0.0), 6)  # 2Φ(1) - 1
    0.682689
    """

    bias_monotone = True

    def stochastic_order(self):
        return (
            True,
            "the normal location family conditioned on a fixed set keeps its monotone likelihood ratio",
        )

    def _mean(self, q):
        c, offset, _ = _truncated_moments(q, *self._params())
        return c + offset

    def _bias(self, q):
        """``σ(φ(α) - φ(β))/N - (q - clip(q))`` (module docstring), about ``clip(q)``."""
        c, offset, _ = _truncated_moments(q, *self._params())
        return (c - q) + offset

    def _variance(self, q):
        return _truncated_moments(q, *self._params())[2]

    def mass_kept(self, q):
        """``N(q) = Φ((upper - q)/σ) - Φ((lower - q)/σ)``, the probability that ``q + σZ`` lands in the range.

        Parameters
        ----------
        q : float or array_like
            True values.

        Returns
        -------
        float or numpy.ndarray

        Examples
        --------
        >>> round(GaussianTruncated(1.0, lower=0.0, upper=np.inf).mass_kept(0.0), 12)
        0.5
        """
        return _float(np.exp(self.log_mass_kept(q)))

    def log_mass_kept(self, q):
        """``log N(q)``, finite where ``N(q)`` underflows (a difference of normal masses in log space).

        Parameters
        ----------
        q : float or array_like
            True values.

        Returns
        -------
        float or numpy.ndarray

        Examples
        --------
        >>> m = GaussianTruncated(1.0, lower=0.0, upper=1.0)
        >>> round(m.log_mass_kept(-50.0), 6)  # N(q) underflows; near log(φ(50)/50)
        -1254.831361
        """
        q = self._q(q)
        out = self._log_norm(q)
        return float(out) if np.ndim(out) == 0 else out

    def _log_norm(self, q):
        """``log N(q) = log φ(d) + log ∫_{-A}^{B} e^{-dt - t²/2} dt`` in the frame about ``clip(q)`` (the width
        of the range is kept exactly, however far ``q`` is)."""
        _, _, d, a, b = _frame(q, *self._params())
        return _log_phi(d) + _log_mass(d, -a, b)

    def _log_tails(self, x, q):
        """``(log P(M <= x), log P(M > x))`` in the frame of :mod:`dpbook._kernels.gaussian`."""
        s, lo, hi = self._params()
        c, sign, d, a, b = _frame(q, s, lo, hi)
        x, c, sign, d, a, b = np.broadcast_arrays(x, c, sign, d, a, b)
        with np.errstate(over="ignore", invalid="ignore"):
            t = np.clip(sign * (np.clip(x, lo, hi) - c) / s, -a, b)
        t = np.where(np.isnan(t), 0.0, t)
        norm = _log_mass(d, -a, b)
        below = np.where(t <= -a, -np.inf, _log_mass(d, -a, np.maximum(t, -a)))
        above = np.where(t >= b, -np.inf, _log_mass(d, np.minimum(t, b), b))
        with np.errstate(invalid="ignore"):
            low = np.minimum(np.where(sign > 0, below, above) - norm, 0.0)
            high = np.minimum(np.where(sign > 0, above, below) - norm, 0.0)
        low = np.where(x < lo, -np.inf, np.where(x >= hi, 0.0, low))
        high = np.where(x < lo, 0.0, np.where(x >= hi, -np.inf, high))
        return low, high

    def _logpdf(self, x, q):
        """``log(φ((x - q)/σ)/(σ N(q)))`` on ``[lower, upper]``, written about ``clip(q)`` so that neither
        factor underflows: ``-d t - t²/2 - log(∫ e^{-ds - s²/2} ds) - log σ`` in the frame."""
        s, lo, hi = self._params()
        c, sign, d, a, b = _frame(q, s, lo, hi)
        inside = (x >= lo) & (x <= hi)
        with np.errstate(over="ignore", invalid="ignore"):
            t = sign * (np.clip(x, lo, hi) - c) / s
            dt = np.where(t == 0, 0.0, d * t)
            out = -dt - 0.5 * t * t - _log_mass(d, -a, b) - math.log(s)
        return np.where(inside, out, -np.inf)

    def max_abs_bias(self):
        """``sup |bias(q)|`` over ``q`` in ``[lower, upper]``: the bias at an end.

        ``d E[M]/dq = Var M/σ² <= 1`` (an exponential family in ``q``, and truncation of a normal law does
        not increase its variance), so the bias decreases and the sup is at an end; the reflection makes
        both ends equal: ``σ E[Z | 0 <= Z <= (upper - lower)/σ]``, ``σ√(2/π)`` for a one-sided range.
        """
        if np.isinf(self.lower) and np.isinf(self.upper):
            return 0.0
        end = self.lower if np.isfinite(self.lower) else self.upper
        return abs(float(self.bias(end)))

    def _sample(self, q, shape, rng):
        """Exact draws by rejection, in the frame around ``clip(q)`` (numpy's normals kept in the range; uniform
        proposals on a narrow range; Robert's (1995) exponential proposals for ``q`` outside; for ``q`` inside a
        one-sided range, one normal a draw, reflected or redrawn below the cut).  One true value takes the route
        of least expected cost (:func:`_one_value_draws`), an array of them a route per element read off its
        frame (:func:`_each_value_draws`)."""
        s, lo, hi = self._params()
        small = _compact(q)
        if small.size == 1:
            q0 = float(small.reshape(-1)[0])
            return _one_value_draws(rng, q0, s, lo, hi, math.prod(shape)).reshape(shape)
        flat_q = np.broadcast_to(q, shape).reshape(-1)
        return _each_value_draws(rng, flat_q, s, lo, hi).reshape(shape)

    def privacy_description(self):
        """For the auditor: the normal kernel of scale ``σ`` on ``[lower, upper]``, normalized by ``N(q)``.

        The auditor's search for a Gaussian kernel on one interval is exact (``dpbook.audit``): for a fixed
        output ``t`` the loss of a pair is ``h(q2) - h(q1)`` with ``h(q) = (t - q)²/(2σ²) + log N(q)`` convex,
        ``h'' = Var M(q)/σ⁴``.  On a finite range the loss is finite; on a one-sided range it is infinite
        (a pair with ``q1 > q2`` has an unbounded log-ratio in the open tail).
        """
        return _gauss_description(
            self.scale,
            ((self.lower, self.upper),),
            log_norm=self._log_norm,
            landmarks=tuple(v for v in (self.lower, self.upper) if math.isfinite(v)),
        )


#: the measured cost of a proposal, in nanoseconds (numpy 2.4, x86-64; numpy's Laplace draw takes 20): a normal
#: kept when in the range (:func:`dpbook._kernels.gaussian._normal_between`), a uniform with its 11-bit
#: acceptance test (:func:`dpbook._kernels.gaussian._uniform_frame_draws`; 6 where the range is flat to the
#: doubles and nothing is rejected), Robert's two exponentials
#: (:func:`dpbook._kernels.gaussian._normal_tail_excess`)
_COST_NORMAL, _COST_UNIFORM, _COST_FLAT, _COST_ROBERT = 14.0, 11.0, 6.0, 18.0


def _one_value_draws(rng, q, scale, lower, upper, size):
    """``size`` exact draws of ``q + σZ`` conditioned on ``[lower, upper]`` for one true value, by the route of least
    expected cost (proposal cost over acceptance rate, ``_COST_*``), in the frame around ``c = clip(q)`` of
    :mod:`dpbook._kernels.gaussian` (``T`` of density ``∝ e^{-dt - t²/2}`` on ``[-A, B]``, mirrored so that an
    infinite side is ``B``).  Many draws (``_STRIP_MIN``) on a range not flat to the doubles, with an end within 8
    standard deviations of ``q``, take the strips (:mod:`dpbook._kernels.strips`: about numpy's
    normal pace, 0.995 of the proposals kept).  Fewer: a true value inside a one-sided range takes one normal a draw
    (:func:`dpbook._kernels.gaussian._normal_reflected`: cheaper than each of the others); else the cheapest of

    * numpy's normals, rejected outside the range: rate ``N(q)``, the mass kept;
    * uniform proposals on ``[-A, B]``, accepted with ``e^{-dt - t²/2}`` (its maximum is 1, at ``t = 0``): rate
      ``∫ e^{-dt - t²/2} dt/(A + B)``, the route for a range narrow against ``σ``;
    * Robert's exponential proposals for ``Z >= cut`` (``cut = d`` outside, ``-A`` inside), rejected beyond
      ``B``: rate his times ``P(T <= B | T >= -A)``, the route for ``q`` outside."""
    c, sign, d, a, b = (float(v) for v in _frame(q, scale, lower, upper))
    if d == 0 and math.isinf(a):  # the open side as B
        a, b, sign = b, a, -sign
    flat = max(0.5 * a * a, b * (d + 0.5 * b)) <= 2.0**-54
    if not flat:  # many draws: the strips, where they apply (Z = T + d)
        x = _normal_strip_draws(
            rng, size, d - a, d + b, c - sign * scale * d, sign * scale, lower, upper
        )
        if x is not None:
            return x
    if d == 0 and math.isinf(b) and math.isfinite(a):
        # one-sided, the true value inside: one normal a draw, those below reflected or redrawn
        return _normal_reflected(rng, size, a, c, sign * scale, lower, upper)
    log_frame = float(_log_mass(d, -a, b)[()])  # log ∫_{-A}^{B} e^{-dt - t²/2} dt
    costs = {}
    mass = math.exp(float(_log_phi(d)) + log_frame)
    if mass > 0:
        costs["normal"] = _COST_NORMAL / mass
    width = a + b
    if width < math.inf:
        rate_u = min(math.exp(log_frame) / width, 1.0) if width > 0 else 1.0
        if rate_u > 0:
            costs["uniform"] = _COST_FLAT if flat else _COST_UNIFORM / rate_u
    cut = d if d > 0 else -a
    kept = (
        -math.expm1(
            min(
                float(_log_mass(d, b, math.inf)[()])
                - float(_log_mass(d, -a, math.inf)[()]),
                0.0,
            )
        )
        if width < math.inf
        else 1.0
    )
    rate_r = _robert_rate(cut) * kept
    if rate_r > 0:
        costs["robert"] = _COST_ROBERT / rate_r
    route = min(costs, key=costs.get)
    if route == "normal":
        with np.errstate(over="ignore", invalid="ignore"):
            low, high = (lower - q) / scale, (upper - q) / scale
        return _normal_between(rng, size, low, high, scale, q, mass, lower, upper)
    if route == "uniform":
        return _uniform_frame_draws(
            rng, size, d, a, b, rate_u, c, sign * scale, lower, upper
        )
    x = _normal_tail_excess(rng, size, cut, width, kept)
    x *= sign * scale
    x += lower if sign > 0 else upper  # the end -A of the frame
    return np.clip(x, lower, upper, out=x)


def _each_value_draws(rng, q, scale, lower, upper):
    """One exact draw per element of the array ``q``, in the frame of :mod:`dpbook._kernels.gaussian` (``T`` of
    density ``∝ e^{-dt - t²/2}`` on ``[-A, B]``), by a route read off the frame with no special function: inside
    the range, uniform proposals where it is at most ``1.5σ`` wide (at least 72% kept), else numpy's normals
    (at least 43% kept); outside, uniform proposals where ``B(d + B/2) <= 1`` (at least 63% kept), else Robert's
    exponential proposals rejected beyond ``B`` (at least 48% kept)."""
    out = np.empty(q.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.finfo(float).max
        inside = (q >= lower) & (q <= upper)
        a = np.where(inside, (q - lower) / scale, 0.0)
        b = np.where(inside, (upper - q) / scale, (upper - lower) / scale)
        d = np.minimum(np.where(q < lower, lower - q, q - upper) / scale, big)
        d = np.where(inside, 0.0, d)
        short = np.where(inside, a + b <= 1.5, b * (d + 0.5 * b) <= 1.0)
    idx = np.flatnonzero(short)
    if idx.size:
        c = np.clip(q[idx], lower, upper)
        out[idx] = _uniform_frame_each(rng, d[idx], c, scale, lower, upper)
    idx = np.flatnonzero(~short & inside)
    if idx.size:
        out[idx] = _normal_between_each(rng, q[idx], scale, lower, upper)
    idx = np.flatnonzero(~short & ~inside)
    if idx.size:
        t = _normal_tail_excess_each(rng, d[idx], b[idx])
        mirror = q[idx] > upper
        with np.errstate(over="ignore"):
            out[idx] = np.where(mirror, upper - scale * t, lower + scale * t)
    return np.clip(out, lower, upper, out=out)
