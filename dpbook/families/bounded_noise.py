"""Bounded noise: the truncated Laplacian mechanism of Geng, Ding, Guo & Kumar (AISTATS 2020).

The release is ``q + Z`` with ``Z`` of density ``e^{-|z|/λ}/(2λc)`` on ``[-A, A]`` (0 outside), ``λ`` the
``scale``, ``A`` the ``bound`` and ``c = 1 - e^{-A/λ}`` the Laplace mass of ``[-A, A]`` (Geng et al., Definition
3, with their ``B = 1/(2λc)``).  Unlike truncation of the release (:class:`dpbook.Truncated`), the support
``[q - A, q + A]`` moves with the true value: no output range is fixed, and the mechanism is (ε, δ)-DP with
``δ > 0`` only.  Geng et al.'s calibration (their Theorem 3) is ``λ = Δ/ε`` and
``A = (Δ/ε) log(1 + (e^ε - 1)/(2δ))``: :func:`dpbook.geng_truncated_laplace`.

**The law.**  With ``r = A/λ`` and ``u = (x - q)/λ``:

* ``P(Z <= d) = e^{u}(1 - e^{-(u + r)})/(2c)`` for ``-A <= d <= 0``, and ``1 - P(Z <= -d)`` for ``d >= 0``;
* the quantile: ``d = λ log(e^{-r} + 2cp)`` for ``p <= 1/2`` (symmetric above);
* ``E Z = 0`` (the mechanism is unbiased), ``E|Z| = λ P(2, r)/P(1, r)`` and
  ``Var Z = E Z² = 2λ² P(3, r)/P(1, r)``, ``P(k, r) = γ(k, r)/Γ(k)`` the regularized lower incomplete gamma
  function (``∫_0^A z^{k-1} e^{-z/λ} dz = λ^k Γ(k) P(k, r)``).  diffprivlib's ``LaplaceBoundedNoise.variance``
  raises ``NotImplementedError``; this is its closed form.

Every formula is evaluated in one of two regimes of the instance: ``r >= 1`` in units of ``λ`` (log space,
``log(1 - e^{-y})`` written with ``log1p``/``expm1``), ``r < 1`` in units of ``A`` (``P(k, r)/r^k`` by
:func:`dpbook._kernels.laplace._g`, ``(1 - e^{-y})/y`` by scipy's ``exprel``), so that ``A/λ`` may be
anywhere from ``1e-600`` to ``1e600`` (under- or overflowing) without a NaN or a lost digit: a bound far
below the scale gives the uniform law on ``[q - A, q + A]``, one far above it the Laplace law.

**Privacy.**  For ``q1 != q2`` the law ``M(q1)`` puts mass where ``M(q2)`` has none, so the pure privacy
loss is infinite for every ``Δ > 0``; the family says so to the auditor through the description's
``noise_support = (-A, A)`` (a support that moves with the centre), from which :func:`dpbook.pair_profile`
and :func:`dpbook.privacy_profile` compute δ(ε) in closed form.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _bound_in_place, _FromLogTails
from .._kernels.gaussian import _log1mexp
from .._kernels.laplace import _g
from .._kernels.sampling import _BLOCK, _uniform_blocks
from ..audit.description import laplace_description
from ..mechanism import Mechanism

__all__ = ["TruncatedLaplaceNoise"]

_LOG2 = math.log(2.0)


#: the sampler draws ``-λ log(1 - c|t|)`` from ``r = A/λ`` this large on, in units of ``A`` below
_LOG_PATH = 1.0 / 16.0


def _log1p_rel(t):
    """``log(1 + t)/t`` for ``t > -1`` (1 at 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t == 0, 1.0, np.log1p(t) / np.where(t == 0, 1.0, t))


class TruncatedLaplaceNoise(_FromLogTails, Mechanism):
    """Geng et al.'s truncated Laplacian mechanism: ``q + Z``, ``Z`` of density ``∝ e^{-|z|/λ}`` on ``[-A, A]``.

    Parameters
    ----------
    scale : float
        ``λ > 0``, the Laplace scale of the noise before truncation.
    bound : float
        ``A > 0``: the noise never exceeds ``A`` in size (see :func:`geng_truncated_laplace` for Geng et
        al.'s ``λ`` and ``A`` at a given (ε, δ)).

    Notes
    -----
    The release's support ``[q - A, q + A]`` moves with ``q``, so its pure privacy loss is infinite for every
    sensitivity (:func:`dpbook.privacy_loss`); its (ε, δ) guarantee is :func:`dpbook.privacy_profile`, in
    closed form.  The mean is ``q``, the variance ``2λ² P(3, A/λ)/P(1, A/λ)`` (module docstring).

    Examples
    --------
    >>> m = TruncatedLaplaceNoise(1.0, bound=2.0)
    >>> m.bias(0.0), round(m.variance(0.0), 12)  # 2 (1 - 5 e^{-2})/(1 - e^{-2})
    (0.0, 0.747858858003)
    >>> m.cdf(2.5, 0.0), m.cdf(-2.5, 0.0)  # the noise never exceeds the bound
    (1.0, 0.0)
    >>> from dpbook import privacy_loss
    >>> privacy_loss(m, 1.0)
    inf
    """

    bias_monotone = True

    def __init__(self, scale, bound):
        self.scale = check.positive("scale", scale)
        self.bound = check.positive("bound", bound)
        with np.errstate(over="ignore", under="ignore"):
            self._r = r = self.bound / self.scale
        self._large = r >= 1.0
        if self._large:
            self._log_c = float(_log1mexp(-r))  # log c, c = 1 - e^{-r}
            # log(2λc)
            self._log_two_lc = _LOG2 + math.log(self.scale) + self._log_c
        else:
            # c = r exprel(-r): 2λc = 2A exprel(-r)
            self._log_c = (
                math.log(r) + math.log(special.exprel(-r)) if r > 0 else -math.inf
            )
            self._log_two_lc = (
                _LOG2 + math.log(self.bound) + math.log(special.exprel(-r))
            )

    def __repr__(self):
        return f"TruncatedLaplaceNoise(scale={self.scale!r}, bound={self.bound!r})"

    def stochastic_order(self):
        return (
            True,
            "a location family with a log-concave density has a monotone likelihood ratio",
        )

    def max_abs_bias(self):
        return 0.0

    # --- moments ------------------------------------------------------------------------------
    def _moment_ratio(self, k):
        """``E|Z|^{k-1} = λ^{k-1} (k-1)! P(k, r)/P(1, r)`` (``r >= 1``), or ``A^{k-1} (k-1)! g_k(r)/g_1(r)``
        with ``g_k(r) = P(k, r)/r^k`` (``r < 1``, in units of ``A``)."""
        r, fact = self._r, math.factorial(k - 1)
        with np.errstate(over="ignore"):
            if self._large:
                return (
                    np.float64(self.scale) ** (k - 1)
                    * fact
                    * special.gammainc(k, r)
                    / -math.expm1(-r)
                )
            return (
                np.float64(self.bound) ** (k - 1)
                * fact
                * float(_g(k, np.float64(r)))
                / float(_g(1, np.float64(r)))
            )

    def mean_absolute_noise(self):
        """``E|Z| = λ P(2, A/λ)/P(1, A/λ)``: Geng et al.'s noise amplitude.

        Returns
        -------
        float

        Examples
        --------
        >>> round(TruncatedLaplaceNoise(1.0, bound=1e300).mean_absolute_noise(), 12)  # the Laplace law's λ
        1.0
        """
        return float(self._moment_ratio(2))

    def _bias(self, q):
        return np.zeros_like(q)

    def _variance(self, q):
        """``E Z² = 2λ² P(3, r)/P(1, r)`` (module docstring)."""
        return np.full_like(q, float(self._moment_ratio(3)))

    # --- the law ------------------------------------------------------------------------------
    def _log_left(self, d):
        """``log P(Z <= d)`` for ``d`` in ``[-A, 0]`` (other ``d`` are placeholders)."""
        lam, a = self.scale, self.bound
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d = np.clip(d, -a, 0.0)
            u = d / lam
            if self._large:
                y = (d + a) / lam
                return u + _log1mexp(-y) - _LOG2 - self._log_c
            # r < 1: (1 - e^{-y})/c = ((d + A)/A) exprel(-y)/exprel(-r), y = (d + A)/λ
            frac = (d + a) / a
            y = frac * self._r
            return (
                u
                + np.log(frac)
                + np.log(special.exprel(-y))
                - _LOG2
                - math.log(special.exprel(-self._r))
            )

    def _log_tails(self, x, q):
        """``(log P(M <= x), log P(M > x))``."""
        with np.errstate(over="ignore", invalid="ignore"):
            d = x - q
        d = np.where(np.isnan(d), 0.0, d)  # (x = q = ±inf cannot occur: q is finite)
        below = self._log_left(-np.abs(d))  # log P(Z <= -|d|) = log P(Z > |d|)
        with np.errstate(divide="ignore"):
            other = np.log1p(-np.exp(below))  # log of the larger tail
        low = np.where(d <= 0, below, other)
        high = np.where(d <= 0, other, below)
        a = self.bound
        low = np.where(d < -a, -np.inf, np.where(d >= a, 0.0, low))
        high = np.where(d < -a, 0.0, np.where(d >= a, -np.inf, high))
        return low, high

    def _logpdf(self, x, q):
        """``-|x - q|/λ - log(2λc)`` on ``[q - A, q + A]``."""
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.abs(x - q)
            out = -d / self.scale - self._log_two_lc
        return np.where(d <= self.bound, out, -np.inf)

    def _kinks(self, q):
        return [q - self.bound, q, q + self.bound]

    def _lower_offset(self, p):
        """The quantile of ``Z`` at ``p`` in ``[0, 1/2]``: ``λ log(e^{-r} + 2cp)``, in ``[-A, 0]``."""
        lam, a = self.scale, self.bound
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if self._large:
                d = lam * np.logaddexp(-self._r, np.log(2 * p) + self._log_c)
            else:
                # -A + λ log1p(2p expm1(r)) = A (2p exprel(r) log1p(t)/t - 1), t = 2p expm1(r)
                t = 2 * p * math.expm1(self._r)
                d = a * (2 * p * special.exprel(self._r) * _log1p_rel(t) - 1.0)
        return np.clip(np.where(p == 0, -a, d), -a, 0.0)

    def _offset(self, p):
        """The quantile of ``Z`` at ``p`` (``1 - p`` is exact for ``p >= 1/2``)."""
        low = p <= 0.5
        return np.where(
            low,
            self._lower_offset(np.where(low, p, 0.5)),
            -self._lower_offset(np.where(low, 0.5, 1.0 - p)),
        )

    def _ppf(self, p, q):
        return q + self._offset(p)

    def _isf(self, p, q):
        return q - self._offset(p)

    def _sample(self, q, shape, rng):
        """Inverse cdf: ``|Z| = -λ log(1 - c|t|)`` with ``t = 2u - 1`` uniform on ``(-1, 1)``, signed as ``t`` (one
        logarithm a draw, as numpy's Laplace sampler and :func:`dpbook._kernels.laplace._offsets_in_place`);
        in units of ``A`` for ``r < 1/16``.

        Accuracy: ``1 - c|t|`` is exact where ``c|t| >= 1/2`` (Sterbenz), and the rounding of ``c|t|`` moves a
        draw by less than moving ``u`` by ``2^-52`` would (the uniforms' own grid is ``2^-53``); near 0 the
        logarithm's rounding adds ``λ 2^-52``.  (``log1p(-c|t|)``, which this replaced, rounds the same product
        and costs twice numpy's SIMD ``log``.)  Below ``r = 1/16`` the draws are computed in units of ``A``
        (``A |t| exprel(-r) log1p(-c|t|)/(-c|t|)``), whose digits ``1 - c|t|`` would lose as ``c`` shrinks; below
        ``r = 2^-26`` the ratio is its series ``1 + c|t|/2`` (the next term is below ``2^-54``).
        ``tests/families/test_bounded_noise.py`` holds each draw between the quantiles of ``u ± 2^-52``."""
        lam, a, r = self.scale, self.bound, self._r
        c = -math.expm1(-r)
        logs = r >= _LOG_PATH
        factor = a * float(special.exprel(-r)) if not logs else 0.0
        tiny = r < 2.0**-26  # (c|t| <= c < r: its square over 3 is below 2^-54)
        scratch = np.empty(min(_BLOCK, max(int(np.prod(shape)), 1)))
        extra = np.empty(scratch.size if tiny else 0)

        def draw(u, qb):
            t = u
            t *= 2.0
            t -= 1.0
            w = np.abs(t, out=scratch[: t.size])
            if logs:
                w *= -c
                w += 1.0
                np.log(w, out=w)
                w *= -lam
            elif (
                tiny
            ):  # log1p(z)/z = 1 - z/2 + z²/3 - ...: past z/2 below 2^-53 relative
                half = np.multiply(w, 0.5 * c, out=extra[: w.size])
                half += 1.0
                w *= half
                w *= factor
            else:
                w *= factor * _log1p_rel(-c * w)
            _bound_in_place(w, upper=a)
            np.copysign(w, t, out=t)
            t += qb
            return t

        # (u = 0 draws |t| = 1: log(1 - c) is -inf where c rounds to 1, and the draw is clipped to A)
        with np.errstate(over="ignore", divide="ignore"):
            return _uniform_blocks(rng, shape, q, draw)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel of scale ``λ`` centred at ``q``, on the moving support
        ``[q - A, q + A]`` (``noise_support``) and normalized by its mass there, ``c = 1 - e^{-A/λ}``.

        Pure privacy: for ``q1 < q2`` the outputs in ``[q1 - A, q2 - A)`` are possible under ``q1`` only, so the
        loss is infinite.  (ε, δ): a translation family (centre ``q``, one scale, a support and a normalizer
        that move with the centre) whose density is log-concave, hence the closed forms of
        :func:`dpbook.pair_profile` and :func:`dpbook.privacy_profile`.
        """
        log_c = self._log_c
        return laplace_description(
            self.scale,
            log_norm=lambda q: np.full(np.shape(q), log_c),
            noise_support=(-self.bound, self.bound),
            center_shift=0.0,
        )
