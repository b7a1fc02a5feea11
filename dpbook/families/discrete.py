"""Integer-valued mechanisms for counts: the discrete Laplace law, clamped and conditioned.

The *discrete Laplace* (two-sided geometric) law of Ghosh, Roughgarden & Sundararajan (2012,
SIAM J. Comput. 41(6), §2: "the α-geometric mechanism") puts on each integer ``k`` the mass

    P(K = k) = (1 - α)/(1 + α) α^|k|,     α = e^{-1/b},  b = ``scale`` > 0,

and the release of a count ``q`` (an integer) is ``q + K``.  Its variance is ``2α/(1 - α)^2``.
Two families keep the release in an integer range ``[lower, upper]`` (either end may be infinite):

* :class:`DiscreteBIT` releases ``clip(q + K, lower, upper)``: GRS's *truncated* geometric mechanism
  (their Definition 2.2 for ``{0, ..., n}``), the discrete counterpart of :class:`dpbook.BIT`;
* :class:`DiscreteTruncated` releases ``q + K`` conditioned on ``lower <= q + K <= upper``, the
  counterpart of :class:`dpbook.Truncated`.

**Closed forms.**  Everything reduces to finite geometric sums in ``α``, written with ``λ = 1/b`` and
``expm1``/``log1p`` so that no quantity cancels or overflows for ``b`` from ``1e-300`` (``α`` underflows
to 0) to ``1e12`` and beyond (``1 - α = -expm1(-λ)``).  With ``m = n + 1`` and ``x = mλ``:

* ``G(n) = Σ_{y=0}^{n} α^y = (1 - e^{-x})/(1 - e^{-λ})`` (``G(-1) = 0``, ``G(∞) = 1/(1 - α)``);
* the truncated geometric law ``P(Y = y) ∝ α^y`` on ``{0, ..., n}`` has ``log G(n) = φ(x) - φ(λ)`` with
  ``φ(x) = log(1 - e^{-x})``; differentiating in ``λ`` (``-d/dλ`` and ``d²/dλ²`` of a log-partition
  function are the mean and variance) gives, with ``g(x) = 1/(e^x - 1)`` and ``v(x) = e^x/(e^x - 1)^2``,

      mean  μ(n) = g(λ) - m g(x),         variance  V(n) = v(λ) - m² v(x).

  For ``x < 2`` these differences cancel (both terms are near ``b``, resp. ``b²``), so there the
  Bernoulli-number series ``h(x) = g(x) - 1/x + 1/2 = Σ_k B_{2k} x^{2k-1}/(2k)!`` and
  ``w(x) = v(x) - 1/x² + 1/12`` (convergent for ``x < 2π``) give the exact rewrites

      μ(n) = n/2 + h(λ) - m h(x),         V(n) = n(n + 2)/12 + w(λ) - m² w(x),

  whose leading terms are the discrete uniform law's; for ``x >= 2`` the first forms lose at most a few
  bits.

Around ``c = clip(q, lower, upper)`` write ``A = c - lower``, ``B = upper - c`` (``>= 0``, maybe infinite)
and ``d = |q - c|`` (0 unless ``q`` lies outside the range).

* Conditioning: for ``q`` outside the range ``|k - q| = |k - c| + d`` for every allowed ``k``, so the
  law at ``q`` *is* the law at ``c``: ``P(c + y) = α^|y|/Z`` on ``-A <= y <= B`` with
  ``Z = G(B) + α G(A - 1)``.  It is the mixture of ``{0..B}`` (weight ``p = G(B)/Z``, mean ``μ(B)``,
  variance ``V(B)``) and ``-(1 + {0..A-1})`` (weight ``r = α G(A - 1)/Z``), so

      Var = p V(B) + r V(A - 1) + p r (μ(B) + 1 + μ(A - 1))²      (no cancellation),

  and ``E[y] = Σ y α^|y| / Z = ± α^{s+1} G(D - 1) (μ(D - 1) + s + 1)/Z`` with ``s = min(A, B)``,
  ``D = |B - A|`` and the sign of ``B - A`` (the terms ``±y`` with ``|y| <= s`` cancel in pairs, exactly).
* Clamping: ``clip(K, -A, B) = K - (K - B)^+ + (-A - K)^+`` and ``E[(K - t)^+] = α^{t+1}/(1 - α²)``
  (``t >= 0``), and outside the range the release is ``c ± min((K - d)^+, A + B)``.  In every case

      E[M] - c = α^d (α^{A+1} - α^{B+1})/(1 - α²),     E[(M - c)²] = α^d (F(A) + F(B)),

  with ``F(n) = Σ_{j=1}^{n} (2j - 1) P(K >= j) = α G(n - 1)(2μ(n - 1) + 1)/(1 + α)`` (``P(K >= j) =
  α^j/(1 + α)``, ``j >= 1``), the discrete counterparts of Liu (2019) eq. (7) and of the BIT MSE.
* The discrete Laplace law is either family with infinite bounds (``A = B = ∞``, ``d = 0``).

The law's ``cdf``/``sf`` are sums of the same kind (see each class); ``ppf``/``isf`` invert them
exactly by bisection over the doubles (``dpbook.law._invert_cdf``), which lands on integers.
Sampling draws the discrete Laplace noise exactly with integer arithmetic
(:func:`dpbook.discrete_laplace_noise`, Canonne, Kamath & Steinke 2020) and returns ``int64``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _invert_cdf
from .._kernels.exact_sampling import (
    _bernoulli_exp_fraction,
    _exact_ratio,
    discrete_laplace_noise,
)
from .._kernels.inversion import _both_ends, _count_root, _geometric_root
from ..audit.description import DiscreteDescription, corner_pairs
from ..mechanism import Mechanism

__all__ = [
    "DiscreteBIT",
    "DiscreteLaplace",
    "DiscreteTruncated",
    "discrete_truncated_epsilon",
    "discrete_truncated_scale",
]


#: B_{2k}/(2k)! for k = 1..25: the series of h(x) = 1/(e^x - 1) - 1/x + 1/2 (x < 2π)
_BERN = special.bernoulli(50)[2::2] / special.factorial(np.arange(2, 51, 2))


_K = np.arange(1, _BERN.size + 1)


#: below this x = (n + 1)λ the series forms of μ and V are used
_SERIES = 2.0


#: the largest |q| a sample can hold (int64)
_INT64_MAX = float(2**63 - 1024)


#: tail cut of Law.expect for an infinite support: the mass beyond 60 scales is below e^{-60}
_EXPECT_SCALES = 60.0


_EXPECT_POINTS = 20_000_000


# --- validation ---------------------------------------------------------------------------------


def _integer_bounds(lower, upper):
    lo = check.extended_real("lower", lower)
    hi = check.extended_real("upper", upper)
    if lo == math.inf or (math.isfinite(lo) and lo != math.floor(lo)):
        raise ValueError(f"lower must be an integer or -inf, got {lower!r}")
    if hi == -math.inf or (math.isfinite(hi) and hi != math.floor(hi)):
        raise ValueError(f"upper must be an integer or inf, got {upper!r}")
    if lo > hi:
        raise ValueError(
            f"lower must be <= upper, got lower={lower!r}, upper={upper!r}"
        )
    return lo, hi


def _lam(scale):
    """``λ = 1/b``, capped at 1e300 (beyond it ``α = 0`` already; the cap keeps ``0 * λ`` at 0)."""
    with np.errstate(over="ignore", divide="ignore"):
        return min(1.0 / scale, 1e300)


# --- geometric sums ---------------------------------------------------------------------------


def _g(x):
    """``1/(e^x - 1) = e^{-x}/(1 - e^{-x})`` for ``x > 0`` (0 at ``x = inf``)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.exp(-x) / -np.expm1(-x)


def _series(x):
    """``(h(x), w(x))`` by their Bernoulli series, for ``0 <= x <= 2`` (larger ``x`` is clamped)."""
    x = np.minimum(np.asarray(x, dtype=float), _SERIES)[..., None]
    h = np.sum(_BERN * x ** (2 * _K - 1), axis=-1)
    w = -np.sum((_BERN * (2 * _K - 1))[1:] * x ** (2 * _K[1:] - 2), axis=-1)
    return h, w


def _log_geo(n, lam):
    """``log G(n) = log Σ_{y=0}^{n} α^y`` (``-inf`` at ``n = -1``)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = (n + 1.0) * lam
        return np.log(-np.expm1(-x)) - np.log(-np.expm1(-lam))


def _geo(n, lam):
    """``G(n) = Σ_{y=0}^{n} α^y``."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = (n + 1.0) * lam
        return -np.expm1(-x) / -np.expm1(-lam)


def _mean_var(n, lam):
    """``(μ(n), V(n))``: mean and variance of the geometric law ``∝ α^y`` truncated to ``{0, ..., n}``
    (``n >= -1`` or ``inf``; finite placeholders at ``n = -1``)."""
    n = np.asarray(n, dtype=float)
    m = n + 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        x = m * lam
        far = (x >= _SERIES) | (lam >= _SERIES)
        gx = _g(x)
        vx = gx * (1.0 + gx)
        tail_m = np.where(np.isinf(m), 0.0, m * gx)
        tail_v = np.where(np.isinf(m), 0.0, m * (m * vx))
        g_lam = _g(lam)
        mean_far = g_lam - tail_m
        var_far = g_lam * (1.0 + g_lam) - tail_v
        h_lam, w_lam = _series(lam)
        h_x, w_x = _series(x)
        nn = np.where(far, 0.0, n)
        mean_near = nn / 2 + h_lam - (nn + 1.0) * h_x
        var_near = nn * (nn + 2.0) / 12 + w_lam - (nn + 1.0) * ((nn + 1.0) * w_x)
    mean = np.where(far, mean_far, mean_near)
    var = np.where(far, var_far, var_near)
    return mean, np.maximum(var, 0.0)


# --- the discrete Laplace noise K ----------------------------------------------------------------


def _log1p_alpha(lam):
    return math.log1p(math.exp(-lam))


def _noise_logcdf(m, lam):
    """``log P(K <= m)`` for integer ``m``: ``-|m|λ - log(1 + α)`` below 0, ``log(1 - α^{m+1}/(1 + α))`` from 0."""
    m = np.asarray(m, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        low = m * lam - _log1p_alpha(lam)
        high = np.log1p(-np.exp(-(np.maximum(m, 0.0) + 1.0) * lam - _log1p_alpha(lam)))
    return np.where(m < 0, low, high)


def _log_c0(lam):
    """``log((1 - α)/(1 + α)) = log tanh(λ/2)``."""
    if lam > 1.0:
        return math.log1p(-2.0 * math.exp(-lam) / (1.0 + math.exp(-lam)))
    return math.log(math.tanh(lam / 2))


def _noise_sample(scale, shape, rng):
    return np.asarray(
        discrete_laplace_noise(scale, shape, rng=rng), dtype=np.int64
    ).reshape(shape)


# --- the families --------------------------------------------------------------------------------


class _Discrete(Mechanism):
    """Shared machinery: integer true values and outputs, laws around ``c = clip(q)``."""

    bias_monotone = True
    stochastically_increasing = True
    #: true values and releases are integers: ``dpbook.inference.intervals`` inverts the law over integer ``q``
    integer_valued = True

    def __init__(self, scale, *, lower=0, upper=np.inf):
        self.scale = check.positive("scale", scale)
        self.lower, self.upper = _integer_bounds(lower, upper)
        self._lam = _lam(self.scale)

    #: the true values the mechanism is meant for, and the outputs: the integers of ``[lower, upper]``
    domain = support = property(lambda self: (self.lower, self.upper))

    @property
    def alpha(self):
        """``α = e^{-1/scale}``."""
        return math.exp(-self._lam)

    def _q(self, q):
        return check.integer_array("q", q)

    def _parts(self, q):
        """``(c, A, B, e)``: ``c = clip(q)``, ``A = c - lower``, ``B = upper - c``, ``e = q - c``."""
        c = np.clip(q, self.lower, self.upper)
        with np.errstate(invalid="ignore"):
            a = np.where(np.isinf(self.lower), np.inf, c - self.lower)
            b = np.where(np.isinf(self.upper), np.inf, self.upper - c)
        return c, a, b, q - c

    def stochastic_order(self):
        """The discrete Laplace location family has a monotone likelihood ratio (MLR): for integers ``q < q'``,
        ``P(q' + K = k)/P(q + K = k) = α^{|k - q'| - |k - q|}`` and ``|k - q| - |k - q'|`` is ``q - q'`` for
        ``k <= q``, ``2k - q - q'`` between and ``q' - q`` from ``q'`` on: nondecreasing in ``k``.  MLR implies
        ``P_q(q + K <= x)`` nonincreasing in ``q``.  Each family adds its map (see the subclasses)."""
        return (
            True,
            "the discrete Laplace location family has a monotone likelihood ratio in (k, q)",
        )

    def _mean(self, q):
        c, offset, _ = self._moments(q)
        return c + offset

    def _bias(self, q):
        c, offset, _ = self._moments(q)
        return (c - q) + offset

    def _variance(self, q):
        return self._moments(q)[2]

    def _mse(self, q):
        c, offset, var = self._moments(q)
        with np.errstate(over="ignore"):
            return var + ((c - q) + offset) ** 2

    def _logpdf(self, x, q):
        """The law has no continuous part: ``-inf`` everywhere."""
        return np.full(np.broadcast(x, q).shape, -np.inf)

    def _pmf(self, x, q):
        """``P(M(q) = x)``: 0 at non-integers and outside ``[lower, upper]``."""
        return np.exp(self._logpmf(x, q))

    def _logpmf(self, x, q):
        """``log P(M(q) = x)`` (``-inf`` at non-integers and outside ``[lower, upper]``)."""
        x, q = np.broadcast_arrays(x, q)
        ok = (x == np.floor(x)) & (x >= self.lower) & (x <= self.upper) & np.isfinite(x)
        with np.errstate(
            over="ignore"
        ):  # |k - q|/b beyond the doubles: -inf, the truth
            out = self._logpmf_integers(
                np.where(ok, x, np.clip(q, self.lower, self.upper)), q
            )
        return np.where(ok, out, -np.inf)

    def _tail(self, x, q, upper):
        """``log P(M(q) <= x)`` (or ``log P(M(q) > x)``) for real ``x``, including ``x = ±inf``."""
        k = np.floor(x)
        with np.errstate(over="ignore"):
            out = self._log_tail(k, q, upper=upper)
        low, high = (0.0, -np.inf) if upper else (-np.inf, 0.0)
        return np.where(k == -np.inf, low, np.where(k == np.inf, high, out))

    def _cdf(self, x, q):
        """``P(M(q) <= x)`` (``x`` real: the law's steps are at the integers)."""
        return np.exp(self._tail(x, q, upper=False))

    def _logcdf(self, x, q):
        return self._tail(x, q, upper=False)

    def _sf(self, x, q):
        """``P(M(q) > x)``, computed directly (tail accuracy)."""
        return np.exp(self._tail(x, q, upper=True))

    def _logsf(self, x, q):
        return self._tail(x, q, upper=True)

    def _atoms(self, q):
        """Every output with its mass, for a finite support of at most a million integers."""
        if q.ndim:
            raise ValueError(
                f"q must be a single true value for atoms, got shape {q.shape}"
            )
        lo, hi = self.support
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > 1e6:
            raise ValueError(
                f"the law of {type(self).__name__} has {'infinitely' if not math.isfinite(hi - lo) else 'too'} "
                "many atoms to list; use pmf(k, q)"
            )
        k = np.arange(lo, hi + 1)
        return list(zip(k.tolist(), np.asarray(self.pmf(k, q)).tolist()))

    def _law_expect(self, func, q, lo, hi):
        """``E[func(M(q)); lo <= M(q) <= hi]``: the sum over the integers, cut where the mass is below
        ``e^{-60}`` of the law's near end (``60 * scale`` beyond ``clip(q)``)."""
        c = float(np.clip(q, self.lower, self.upper))
        reach = math.ceil(_EXPECT_SCALES * self.scale) + 2
        a = max(math.ceil(lo) if math.isfinite(lo) else -math.inf, c - reach)
        b = min(math.floor(hi) if math.isfinite(hi) else math.inf, c + reach)
        if a > b:
            return 0.0
        if b - a > _EXPECT_POINTS:
            raise ValueError(
                f"expect would sum {b - a:.3g} integers (scale={self.scale!r}); the limit is "
                f"{_EXPECT_POINTS}"
            )
        k = np.arange(a, b + 1.0) if b - a < 2**52 else np.array([a, b])
        p = np.asarray(self.pmf(k, q), dtype=float)
        vals = np.asarray(func(k), dtype=float)
        keep = p > 0
        return math.fsum((vals[keep] * p[keep]).tolist())

    def _sample(self, q, shape, rng):
        """Draws as ``int64``: exact discrete Laplace noise (integer arithmetic,
        :func:`dpbook.discrete_laplace_noise`), then the family's map (``q`` must fit in int64)."""
        if (np.abs(q) > _INT64_MAX).any():
            raise ValueError(
                f"q must fit in int64 (|q| < 2**63) to be sampled, got {q!r}"
            )
        return self._sample_integers(q.astype(np.int64), shape, rng)


class DiscreteBIT(_Discrete):
    """Clamping a count: ``clip(q + K, lower, upper)`` with discrete Laplace noise ``K`` (GRS 2012's truncated
    geometric mechanism, Def. 2.2; the discrete counterpart of :class:`dpbook.BIT`).

    With ``c = clip(q)``, ``A = c - lower``, ``B = upper - c``, ``d = |q - c|``, ``α = e^{-1/scale}`` (module
    docstring): ``E[M] - c = α^d (α^{A+1} - α^{B+1})/(1 - α²)`` and ``E[(M - c)²] = α^d (F(A) + F(B))``.
    Inside the range the law is the discrete Laplace law with the tails beyond each bound moved onto it:
    ``P(M = lower) = P(K <= lower - q)``, ``P(M = upper) = P(K >= upper - q)``.

    Parameters
    ----------
    scale : float
        ``b > 0``; ``b = Δ/ε`` is ε-DP for counts with sensitivity ``Δ``.
    lower, upper : int, keyword-only
        Integer bounds (``-inf``/``inf`` allowed), ``lower <= upper``.

    Examples
    --------
    >>> from dpbook import DiscreteBIT
    >>> m = DiscreteBIT(1.0, lower=0, upper=5)
    >>> round(m.pmf(0, 0), 6), round(m.bias(0), 6)   # P(K <= 0) = 1/(1 + α); bias α(1 - α^5)/(1 - α²)
    (0.731059, 0.422592)
    >>> m.at(2).median()
    2.0
    """

    def stochastic_order(self):
        """``P(clip(q + K, lower, upper) <= x)`` is 0 below ``lower``, 1 from ``upper`` on and ``P(q + K <= x)``
        between, which does not rise with ``q`` (``_Discrete.stochastic_order``); for every integer ``q``,
        also outside the range."""
        return True, (
            "a nondecreasing map (clamping) of the discrete Laplace location family, which has a "
            "monotone likelihood ratio"
        )

    def _moments(self, q):
        lam = self._lam
        c, a, b, e = self._parts(q)
        d = np.abs(e)
        both = np.isinf(a) & np.isinf(b)
        with np.errstate(invalid="ignore", over="ignore"):
            s = np.minimum(a, b)
            gap = np.where(both, 0.0, np.abs(b - a))
            sign = np.where(both, 0.0, np.sign(b - a))
            offset = (
                sign
                * np.exp(-(d + s + 1.0) * lam)
                * (-np.expm1(-gap * lam))
                / -math.expm1(-2 * lam)
            )
        offset = np.where(both, 0.0, offset)
        with np.errstate(over="ignore"):
            second = np.exp(-d * lam) * (self._f(a) + self._f(b))
        var = np.maximum(second - offset**2, 0.0)
        return c, offset, var

    def _f(self, n):
        """``F(n) = α G(n - 1)(2μ(n - 1) + 1)/(1 + α)``, ``F(0) = 0``."""
        lam = self._lam
        mu, _ = _mean_var(n - 1.0, lam)
        with np.errstate(invalid="ignore", over="ignore"):
            out = (
                np.exp(-lam)
                * _geo(n - 1.0, lam)
                * (2 * mu + 1.0)
                / (1.0 + math.exp(-lam))
            )
        return np.where(n == 0, 0.0, out)

    def _logpmf_integers(self, x, q):
        lam = self._lam
        with np.errstate(invalid="ignore"):
            inner = _log_c0(lam) - np.abs(x - q) * lam
            at_lo = _noise_logcdf(self.lower - q, lam)
            at_hi = _noise_logcdf(q - self.upper, lam)
        out = np.where(x == self.lower, at_lo, np.where(x == self.upper, at_hi, inner))
        return np.where(self.lower == self.upper, 0.0, out)

    def _log_tail(self, k, q, upper):
        """``log P(M <= k)``, or ``log P(M > k)`` with ``upper``, for integer ``k``."""
        lam = self._lam
        k, q = np.broadcast_arrays(k, q)
        with np.errstate(invalid="ignore", divide="ignore"):
            if upper:  # P(q + K > k) = P(K <= q - k - 1)
                core = _noise_logcdf(np.where(np.isfinite(k), q - k - 1.0, 0.0), lam)
                return np.where(
                    k < self.lower, 0.0, np.where(k >= self.upper, -np.inf, core)
                )
            core = _noise_logcdf(np.where(np.isfinite(k), k - q, 0.0), lam)
            return np.where(
                k < self.lower, -np.inf, np.where(k >= self.upper, 0.0, core)
            )

    def _quantile_in_q(self, x, p, v, upper):
        """The roots in ``q`` of the transform, as for :class:`dpbook.BIT`, with the discrete Laplace
        tail ``P(K <= m) = α^{-m}/(1 + α)`` (``m <= -1``) solved for ``m``, with the proved width of the zone
        where the computed transform may cross ``p`` (:func:`dpbook._kernels.inversion._geometric_root`):
        the integer ends wherever that zone holds no integer, starting points of the searches elsewhere."""
        return _geometric_root(
            x,
            p,
            v,
            upper,
            self._lam,
            _log1p_alpha(self._lam),
            self.lower,
            self.upper,
        )

    def _quantiles_in_q(self, x, p, v_top, v_bottom):
        """Both ends' roots, the positions of the releases on the bounds found once
        (:func:`dpbook._kernels.inversion._both_ends`)."""
        return _both_ends(
            _geometric_root,
            x,
            p,
            v_top,
            v_bottom,
            (self._lam, _log1p_alpha(self._lam)),
            self.lower,
            self.upper,
        )

    def _sample_integers(self, q, shape, rng):
        x = q + _noise_sample(self.scale, shape, rng)
        lo = np.iinfo(np.int64).min if np.isinf(self.lower) else int(self.lower)
        hi = np.iinfo(np.int64).max if np.isinf(self.upper) else int(self.upper)
        return np.clip(x, lo, hi)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def _log_ratio(self, k, q1, q2):
        """``log P(M(q1) = k) - log P(M(q2) = k)``: ``(|k - q2| - |k - q1|)/b`` between the bounds (the integer
        difference is exact), a ratio of noise cdfs on the bounds (``(q2 - q1)/b`` exactly where both
        arguments are ``<= 0``: ``P(K <= m) = α^{-m}/(1 + α)`` for ``m <= 0``)."""
        lam = self._lam
        k, q1, q2 = np.broadcast_arrays(
            *(np.asarray(v, dtype=float) for v in (k, q1, q2))
        )
        inner = (np.abs(k - q2) - np.abs(k - q1)) * lam
        out = inner
        for bound, m1, m2 in (
            (self.lower, self.lower - q1, self.lower - q2),
            (self.upper, q1 - self.upper, q2 - self.upper),
        ):
            if math.isfinite(bound):
                with np.errstate(invalid="ignore"):
                    both = (m1 <= 0) & (m2 <= 0)
                    edge = np.where(
                        both,
                        (m1 - m2) * lam,
                        _noise_logcdf(m1, lam) - _noise_logcdf(m2, lam),
                    )
                out = np.where(k == bound, edge, out)
        return np.where(self.lower == self.upper, 0.0, out)

    def privacy_description(self):
        """For the auditor (:class:`dpbook.DiscreteDescription`).

        Outputs: between the bounds the log-ratio ``(|k - q2| - |k - q1|)/b`` is piecewise linear in ``k`` with
        kinks at ``q1``, ``q2`` only, so on an integer interval it is largest at an end, at ``q1`` or ``q2``, or
        on a bound.  Pairs (theorem): for ``q1 < q2`` with ``q1 >= lower`` the bound ``lower`` (or, with
        ``lower = -inf``, any output ``k <= q1``) has log-ratio exactly ``(q2 - q1)/b``, because
        ``P(K <= m) = α^{-m}/(1 + α)`` for every ``m <= 0``; symmetrically at ``upper`` for the reverse order when
        ``q2 <= upper``; and no pair exceeds ``|q1 - q2|/b`` (clamping post-processes the discrete Laplace
        mechanism, whose log-ratio ``(|k - q2| - |k - q1|)/b`` is at most that).  So the loss of a pair is
        ``|q1 - q2|/b`` unless it straddles the range (``q1 < lower``, ``q2 > upper``), and a corner pair of the
        domain is a worst pair unless every pair of the largest gap straddles, which the auditor then
        settles by enumeration (or refuses).
        """
        lo, hi = self.lower, self.upper

        def outputs(q1, q2):
            q1, q2 = np.broadcast_arrays(
                np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
            )
            fixed = [lo, lo + 1, hi - 1, hi]
            return np.stack([q1, q2] + [np.full(q1.shape, v) for v in fixed], axis=-1)

        def worst_pairs(d_lo, d_hi, delta):
            pairs = corner_pairs()(d_lo, d_hi, delta)
            ok = [p for p in pairs if not (min(p) < lo and max(p) > hi)]
            if ok or len(pairs) == 1:
                return pairs
            raise ValueError(
                f"every pair of the largest gap in domain=({d_lo!r}, {d_hi!r}) straddles [{lo!r}, {hi!r}]; "
                "audit a smaller domain"
            )

        return DiscreteDescription(
            log_ratio=self._log_ratio,
            logpmf=self.logpmf,
            support=self.support,
            outputs=outputs,
            worst_pairs=worst_pairs,
            kernel_rate=self._lam,  # clamping q + K to [lower, upper]
        )


class DiscreteLaplace(DiscreteBIT):
    """The discrete Laplace (two-sided geometric) mechanism ``q + K``, ``P(K = k) ∝ α^|k|``, ``α = e^{-1/scale}``.

    GRS (2012)'s α-geometric mechanism and OpenDP's integer Laplace; ε-DP for counts of sensitivity ``Δ``
    at ``scale = Δ/ε`` (the log-ratio ``(|k - q2| - |k - q1|)/scale`` is at most ``|q1 - q2|/scale``).
    Unbiased, ``Var = 2α/(1 - α)² = 1/(2 sinh²(1/(2 scale)))``.  It is :class:`DiscreteBIT` with infinite
    bounds.

    Parameters
    ----------
    scale : float
        ``b > 0``.

    Examples
    --------
    >>> from dpbook import DiscreteLaplace
    >>> m = DiscreteLaplace(2.0)
    >>> round(m.variance(7), 9), round(2 * m.alpha / (1 - m.alpha) ** 2, 9)
    (7.835396178, 7.835396178)
    >>> round(m.pmf(7, 7), 6), m.bias(7)
    (0.244919, 0.0)
    """

    def __init__(self, scale):
        super().__init__(scale, lower=-np.inf, upper=np.inf)

    def stochastic_order(self):
        """The location family ``q + K``: monotone likelihood ratio (``_Discrete.stochastic_order``)."""
        return (
            True,
            "the discrete Laplace location family has a monotone likelihood ratio in (k, q)",
        )

    def __repr__(self):
        return f"DiscreteLaplace(scale={self.scale!r})"


class DiscreteTruncated(_Discrete):
    """Conditioning a count: ``q + K`` given ``lower <= q + K <= upper`` (the discrete counterpart of
    :class:`dpbook.Truncated`; what rejection sampling of the discrete Laplace mechanism releases).

    The law at ``q`` is the law at ``c = clip(q)``: ``P(M = c + y) = α^|y|/Z`` for ``-A <= y <= B`` with
    ``Z = G(B) + α G(A - 1)`` (module docstring, with the exact mean and variance).  Its cdf at
    ``c + y`` is ``α^|y| G(A - |y|)/Z`` below ``c`` and ``(α G(A - 1) + G(y))/Z`` from ``c`` on; its
    survival function ``(G(B) + α G(|y| - 2))/Z`` and ``α^{y+1} G(B - y - 1)/Z``.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    lower, upper : int, keyword-only
        Integer bounds (``-inf``/``inf`` allowed), ``lower <= upper``.

    Examples
    --------
    >>> from dpbook import DiscreteTruncated
    >>> m = DiscreteTruncated(1.0, lower=0)
    >>> round(m.pmf(0, 0), 6), round(m.mean(0), 6)  # (1 - α), α/(1 - α) at q = 0
    (0.632121, 0.581977)
    >>> m.mean(-10**6) == m.mean(0)  # the law at q < lower is the law at lower
    True
    """

    def stochastic_order(self):
        """Conditioning on the fixed set ``[lower, upper]`` multiplies the likelihood ratio of two true values by
        a constant, so the monotone likelihood ratio of ``q + K`` (``_Discrete.stochastic_order``) survives
        inside the range; a ``q`` outside it has the law of ``clip(q)``, a nondecreasing map of ``q``."""
        return True, (
            "the discrete Laplace location family conditioned on a fixed set keeps its monotone "
            "likelihood ratio (and q outside the range acts as clip(q))"
        )

    def _log_norm(self, a, b):
        """``log Z = log(G(B) + α G(A - 1))``."""
        lam = self._lam
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.logaddexp(_log_geo(b, lam), -lam + _log_geo(a - 1.0, lam))

    def _moments(self, q):
        lam = self._lam
        c, a, b, _ = self._parts(q)
        both = np.isinf(a) & np.isinf(b)
        log_z = self._log_norm(a, b)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            s = np.minimum(a, b)
            gap = np.where(both, 0.0, np.abs(b - a))
            sign = np.where(both, 0.0, np.sign(b - a))
            mu_gap, _ = _mean_var(gap - 1.0, lam)
            scale_part = np.exp(-(s + 1.0) * lam + _log_geo(gap - 1.0, lam) - log_z)
            offset = sign * scale_part * (mu_gap + s + 1.0)
            offset = np.where(both | (gap == 0), 0.0, offset)
            p = np.exp(_log_geo(b, lam) - log_z)
            r = np.exp(-lam + _log_geo(a - 1.0, lam) - log_z)
            mu_b, v_b = _mean_var(b, lam)
            mu_a, v_a = _mean_var(a - 1.0, lam)
            var = p * v_b + np.where(
                r > 0, r * v_a + p * r * (mu_b + 1.0 + mu_a) ** 2, 0.0
            )
        return c, offset, var

    def _logpmf_integers(self, x, q):
        c, a, b, _ = self._parts(q)
        with np.errstate(invalid="ignore"):
            return -np.abs(x - c) * self._lam - self._log_norm(a, b)

    def _log_tail(self, k, q, upper):
        lam = self._lam
        k, q = np.broadcast_arrays(k, q)
        c, a, b, _ = self._parts(q)
        log_z = self._log_norm(a, b)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            y = np.where(np.isfinite(k), k - c, 0.0)
            ay = np.abs(y)
            if upper:
                below = np.logaddexp(_log_geo(b, lam), -lam + _log_geo(ay - 2.0, lam))
                above = -(y + 1.0) * lam + _log_geo(b - y - 1.0, lam)
                core = np.where(y < 0, below, above) - log_z
                return np.where(
                    (k < self.lower) | (y < -a),
                    0.0,
                    np.where(
                        (k >= self.upper) | (y >= b), -np.inf, np.minimum(core, 0.0)
                    ),
                )
            below = -ay * lam + _log_geo(a - ay, lam)
            above = np.logaddexp(-lam + _log_geo(a - 1.0, lam), _log_geo(y, lam))
            core = np.where(y < 0, below, above) - log_z
            return np.where(
                (k < self.lower) | (y < -a),
                -np.inf,
                np.where((k >= self.upper) | (y >= b), 0.0, np.minimum(core, 0.0)),
            )

    def _quantile_in_q(self, x, p, v, upper):
        """The roots in ``q`` of the transform: a quadratic in ``α^{c - x}`` on each side of the release
        (the upper tail by reflection), with the width of the zone where the computed transform may cross
        ``p`` certified at run time (:func:`dpbook._kernels.inversion._count_root`): the integer ends
        wherever that zone holds no integer, starting points of the searches elsewhere."""
        return _count_root(x, p, v, upper, self._lam, self.lower, self.upper)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def _log_norm_ratio(self, c1, c2):
        """``log Z(c2) - log Z(c1)`` for ``c1, c2`` in the range, without cancellation: for ``c2 = c1 + δ``
        (``δ >= 0``), ``Z(c2) - Z(c1) = G(δ - 1)(α^{A1 + 1} - α^{B2 + 1})`` with ``A1 = c1 - lower``,
        ``B2 = upper - c2`` (the terms that enter and leave the sum), passed to ``log1p``."""
        lam = self._lam
        lo_c, hi_c = np.minimum(c1, c2), np.maximum(c1, c2)
        _, a1, b1, _ = self._parts(lo_c)
        _, _, b2, _ = self._parts(hi_c)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            both = np.isinf(a1) & np.isinf(b2)
            s = np.minimum(a1, b2)
            gap = np.where(both, 0.0, np.abs(b2 - a1))
            sign = np.where(both, 0.0, np.sign(b2 - a1))
            log_rel = (
                _log_geo(hi_c - lo_c - 1.0, lam)
                - (s + 1.0) * lam
                + np.log(-np.expm1(-gap * lam))
                - self._log_norm(a1, b1)
            )
            rel = np.where(
                both | (hi_c == lo_c) | (gap == 0), 0.0, sign * np.exp(log_rel)
            )
            out = np.log1p(rel)
        return np.where(c2 >= c1, out, -out)

    def _log_ratio(self, k, q1, q2):
        """``log P(M(q1) = k) - log P(M(q2) = k) = (|k - c2| - |k - c1|)/b + log Z(c2) - log Z(c1)``."""
        k, q1, q2 = np.broadcast_arrays(
            *(np.asarray(v, dtype=float) for v in (k, q1, q2))
        )
        c1, c2 = (
            np.clip(q1, self.lower, self.upper),
            np.clip(q2, self.lower, self.upper),
        )
        return (np.abs(k - c2) - np.abs(k - c1)) * self._lam + self._log_norm_ratio(
            c1, c2
        )

    def privacy_description(self):
        """For the auditor (:class:`dpbook.DiscreteDescription`).

        Outputs: the log-ratio ``(|k - c2| - |k - c1|)/b + const`` is piecewise linear in ``k`` with kinks at
        ``c_i = clip(q_i)`` only.  Pairs (theorem): the law at ``q`` is the law at ``clip(q)``, and on the range
        the loss of ``(q, q + δ)`` is ``δ/b + ψ(q + δ) - ψ(q)`` with ``ψ = log Z`` (the worst output is
        ``lower``, or any ``k <= q``).  Up to a constant factor ``Z(q) = 1 + α - α^{A+1} - α^{B+1}``, a positive
        constant minus a convex function of ``q``, so ``ψ`` is concave: ``ψ(q + δ) - ψ(q)`` decreases in ``q``;
        and ``1/b + ψ'(q) = (1 + α - 2α^{B+1})/(b (1 + α - α^{A+1} - α^{B+1})) >= (1 - α)/(b (1 + α)) > 0`` (as
        ``α^{B+1} <= α``), so the loss increases with ``δ``.  The pair ``(q + δ, q)`` is the mirror image
        (``k -> lower + upper - k``).  Hence a corner pair of the domain clipped to the range is a worst
        pair (``dpbook.audit.description.corner_pairs``), where :func:`discrete_truncated_epsilon`
        evaluates it in closed form.
        """
        lo, hi = self.lower, self.upper

        def outputs(q1, q2):
            q1, q2 = np.broadcast_arrays(
                np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
            )
            c1, c2 = np.clip(q1, lo, hi), np.clip(q2, lo, hi)
            return np.stack(
                [c1, c2, np.full(c1.shape, lo), np.full(c1.shape, hi)], axis=-1
            )

        return DiscreteDescription(
            log_ratio=self._log_ratio,
            logpmf=self.logpmf,
            support=self.support,
            outputs=outputs,
            worst_pairs=corner_pairs((lo, hi)),
            # q + K conditioned on [lower, upper] (the law at q outside is the law at clip(q): the same
            # kernel conditioned, whose masses e^{-λ|k - q|} are then proportional to e^{-λ|k - clip(q)|})
            kernel_rate=self._lam,
        )

    def _sample_integers(self, q, shape, rng):
        """Exact, from the generator's random integers only (the law at ``q`` is the law at ``c = clip(q)``).

        Where ``max(A, B) > b`` (a side of the range longer than the scale): exact discrete Laplace draws
        ``c + K`` (:func:`dpbook.discrete_laplace_noise`) rejected until they land in the range; each accepted
        draw has exactly the conditioned law, and ``P(-A <= K <= B) >= P(0 <= K <= b) > 0.3``.  Otherwise
        (a range short against the noise, where that rejection could take thousands of rounds): ``y``
        uniform on ``{-A, ..., B}`` (``rng.integers``) kept with probability ``e^{-|y|/b}``, an exact
        Bernoulli of Canonne, Kamath & Steinke (2020, Algorithm 1; ``dpbook._kernels.exact_sampling``) since
        ``|y| <= b``; it accepts with probability at least ``e^{-1}``.
        """

        num, den = _exact_ratio(self.scale)
        qf = q.astype(float)
        c, a, b, _ = self._parts(qf)
        ci = np.broadcast_to(c, shape).astype(np.int64).ravel()
        a = np.broadcast_to(a, shape).ravel()
        b = np.broadcast_to(b, shape).ravel()
        out = np.empty(ci.size, dtype=np.int64)
        short = np.maximum(a, b) <= self.scale  # (finite then)
        lo = -np.inf if np.isinf(self.lower) else self.lower
        hi = np.inf if np.isinf(self.upper) else self.upper
        idx = np.flatnonzero(~short)
        while idx.size:
            x = ci[idx] + _noise_sample(self.scale, (idx.size,), rng)
            ok = (x >= lo) & (x <= hi)
            out[idx[ok]] = x[ok]
            idx = idx[~ok]
        idx = np.flatnonzero(short)
        if idx.size:
            a_i, b_i = a.astype(np.int64), b.astype(np.int64)
        while idx.size:
            y = rng.integers(-a_i[idx], b_i[idx] + 1)
            ok = _bernoulli_exp_fraction(rng, idx.size, np.abs(y) * den, num)
            out[idx[ok]] = ci[idx[ok]] + y[ok]
            idx = idx[~ok]
        return out.reshape(shape)


# --- the exact ε of conditioning, and the scale that makes it ε-DP -------------------------------


def discrete_truncated_epsilon(scale, *, lower=0, upper=np.inf, sensitivity=1):
    """The exact pure-DP loss of :class:`DiscreteTruncated` on the domain ``[lower, upper]`` (or any larger one).

    **Theorem.**  With ``α = e^{-1/b}``, ``W = upper - lower`` and ``δ = min(Δ, W)``,

        ε = δ/b + log(1 + α (1 - α^δ)(1 - α^{W-δ}) / (1 - α^{W+1})),

    attained at the pair ``(lower, lower + δ)`` and the output ``lower`` (and at the mirror pair at
    ``upper``); ``(1 - α^{W-δ})/(1 - α^{W+1}) = 1`` for a one-sided range.  Two-sided infinite: ``Δ/b``.

    *Proof.*  The law at ``q`` is the law at ``c = clip(q)``, ``P(k) = α^|k - c|/Z(c)``, so the loss of a
    pair is ``max_k (|k - c2| - |k - c1|)/b + log Z(c2)/Z(c1) = |c2 - c1|/b + log Z(c2)/Z(c1)`` for
    ``c1 < c2`` (output ``k = lower <= c1``).  By the concavity of ``log Z`` and the monotonicity in ``δ``
    (:meth:`DiscreteTruncated.privacy_description`) the worst pair is ``(lower, lower + δ)``, where
    ``Z(lower + δ)/Z(lower) = (1 + α - α^{δ+1} - α^{W+1-δ})/(1 - α^{W+1})
    = 1 + α(1 - α^δ)(1 - α^{W-δ})/(1 - α^{W+1})``.  ∎

    At ``b = Δ/ε`` on ``{0, 1, ...}`` this is ``ε + log(1 + e^{-ε/Δ}(1 - e^{-ε}))``: below the continuous
    :class:`dpbook.Truncated`'s ``ε + log(2 - e^{-ε})`` and increasing to it as ``Δ → ∞`` (the integers
    get finer relative to the noise); its supremum over ranges ``{0..n}`` is the one-sided value, and
    for ``n <= Δ`` the loss is exactly ``n/b``.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    lower, upper : int, keyword-only
        The range (integers or infinite), ``lower <= upper``.
    sensitivity : int, keyword-only
        ``Δ >= 1``.

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> from dpbook import discrete_truncated_epsilon
    >>> eps = 1.0
    >>> closed_form = eps + math.log1p(math.exp(-eps) * -math.expm1(-eps))
    >>> round(discrete_truncated_epsilon(1 / eps), 12) == round(closed_form, 12)
    True
    >>> discrete_truncated_epsilon(2.0, lower=0, upper=1, sensitivity=3)  # n <= Δ: exactly n/b
    0.5
    """
    b = check.positive("scale", scale)
    lo, hi = _integer_bounds(lower, upper)
    delta = check.positive("sensitivity", sensitivity)
    if delta != math.floor(delta):
        raise ValueError(f"sensitivity must be an integer, got {sensitivity!r}")
    return _truncated_epsilon(_lam(b), lo, hi, delta)


def _truncated_epsilon(lam, lo, hi, delta):
    w = hi - lo
    if math.isinf(lo) and math.isinf(hi):
        return delta * lam
    d = min(delta, w)
    if d == 0:
        return 0.0
    with np.errstate(divide="ignore", over="ignore"):
        log_term = -lam + math.log(-math.expm1(-d * lam))
        if math.isfinite(w):
            if w - d == 0:
                return d * lam
            log_term += math.log(-math.expm1(-(w - d) * lam)) - math.log(
                -math.expm1(-(w + 1) * lam)
            )
    return d * lam + math.log1p(math.exp(log_term))


def discrete_truncated_scale(epsilon, *, lower=0, upper=np.inf, sensitivity=1):
    """The smallest scale ``b`` at which :class:`DiscreteTruncated` is ε-DP: ``discrete_truncated_epsilon(b) <= ε``.

    The exact loss decreases in ``b`` (for a one-sided range ``d ε/dλ = (δ + (δ - 1)α + α^{δ+1})/(1 + α -
    α^{δ+1}) > 0`` with ``λ = 1/b``; checked numerically on two-sided ranges in the tests), lies above
    ``δ/b`` and below ``2δ/b``, so the answer is in ``[δ/ε, 2δ/ε]``; it is found by bisection over the
    doubles (``dpbook.law._invert_cdf``), the smallest double that qualifies.  For ``Δ = 1`` on a
    one-sided range the equation ``e^λ + 1 - e^{-λ} = e^ε`` gives the closed form
    ``b = 1/asinh((e^ε - 1)/2)``.

    Parameters
    ----------
    epsilon : float
        The target ``ε > 0``.
    lower, upper, sensitivity : keyword-only
        As :func:`discrete_truncated_epsilon`.

    Examples
    --------
    >>> import math
    >>> from dpbook import discrete_truncated_scale, discrete_truncated_epsilon
    >>> b = discrete_truncated_scale(1.0)
    >>> abs(b - 1 / math.asinh(math.expm1(1.0) / 2)) < 1e-15, discrete_truncated_epsilon(b) <= 1.0
    (True, True)
    """
    eps = check.positive("epsilon", epsilon)
    lo, hi = _integer_bounds(lower, upper)
    delta = check.positive("sensitivity", sensitivity)
    if delta != math.floor(delta):
        raise ValueError(f"sensitivity must be an integer, got {sensitivity!r}")
    d = min(delta, hi - lo)
    if d == 0:
        raise ValueError(
            f"the mechanism is constant on lower={lower!r}, upper={upper!r}: every scale is 0-DP"
        )
    if math.isinf(lo) and math.isinf(hi) or hi - lo <= delta:
        return d / eps

    def ok(b, _):
        return np.array(
            [
                _truncated_epsilon(_lam(float(v)), lo, hi, delta) <= eps
                for v in np.ravel(b)
            ]
        )

    lo_b, hi_b = d / eps, 2 * d / eps
    return float(_invert_cdf(ok, np.zeros(1), float(np.nextafter(lo_b, 0)), hi_b)[0])
