"""Restriction of a continuous location family to ``[0, ∞)`` (McGlinchey–Mason §5.2, eq. (8), Prop. 6).

The restricted release ``Ŷ_q`` has the law of ``Y_q = q + Z`` conditioned on ``Y_q >= 0``; it is
what rejection sampling produces.  Proposition 6 shows it is biased upwards for every base law
with full support, through the quantile coupling exposed here as :meth:`Restricted.coupling`.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, special, stats

from . import _validation as check
from .mechanism import Mechanism, _compact, _float
from .clamping import bit_bias
from .laplace import laplace_scale
from .truncation import Truncated, truncated_bias

__all__ = ["Restricted", "restriction_ramp_bias_ratio"]


class Restricted(Mechanism):
    """``q + Z`` conditioned on being ``>= 0``: McGlinchey–Mason eq. (8) for any base law of ``Z``.

    Moments are one-dimensional integrals of tail ratios of the base law (computed with
    ``scipy.integrate.quad``), arranged so that nothing cancels: for a cut ``c = -q`` below the
    base mean ``μ`` they use the mass *removed*,

    ``E[Z | Z >= c] = (μ - c F(c) + F(c) E[c - Z | Z <= c]) / S(c)``,

    and above it the mean residual life ``E[Z | Z >= c] = c + E[Z - c | Z >= c]``.

    Parameters
    ----------
    base : scipy.stats continuous distribution
        The law of ``Z`` (McGlinchey–Mason's ``Y_0``): an ``rv_continuous`` without shape
        parameters (``scipy.stats.norm``) or a frozen one (``scipy.stats.laplace(scale=2)``).  Its
        support must be the whole line (assumption (15)) and its mean finite; Prop. 6 also assumes
        it is 0 (assumption (14)), otherwise the bias below includes it.

    >>> from scipy import stats
    >>> round(Restricted(stats.laplace(scale=1.0)).bias(0.0), 12)  # (q + b) / (2 e^{q/b} - 1)
    1.0
    """

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, base):
        if isinstance(base, stats.rv_continuous):
            if base.numargs:
                raise ValueError(f"base needs shape parameters; pass a frozen distribution, got {base.name!r}")
            base = base()
        if not (isinstance(base, stats.distributions.rv_frozen) and isinstance(base.dist, stats.rv_continuous)):
            raise ValueError(f"base must be a scipy.stats continuous distribution, got {base!r}")
        lo, hi = base.support()
        if not (lo == -np.inf and hi == np.inf):
            raise ValueError(f"base must have support the whole real line, got support ({lo}, {hi})")
        mu, var = (float(v) for v in base.stats("mv"))
        if not np.isfinite(mu):
            raise ValueError(f"base must have a finite mean, got {mu!r}")
        self.base = base
        self._mu = mu
        self._var = var if np.isfinite(var) else np.inf
        self._median = float(base.median())
        self._fast = self._standardized_tails()

    # --- the base law, tail-accurately -------------------------------------------------------
    def _logF(self, z):
        return self.base.logcdf(z)

    def _logS(self, z):
        return self.base.logsf(z)

    def _standardized_tails(self):
        """Scalar ``(logF, logS)`` for the integrands, bypassing scipy's per-call argument checks.

        Uses the distribution's standardized ``_logcdf``/``_logsf``; kept only if it reproduces the
        public ``logcdf``/``logsf`` on test points, else the public methods are used.
        """
        try:
            dist = self.base.dist
            shapes, loc, scale = dist._parse_args(*self.base.args, **self.base.kwds)

            def logF(z):
                with np.errstate(divide="ignore"):
                    return dist._logcdf((z - loc) / scale, *shapes)

            def logS(z):
                with np.errstate(divide="ignore"):
                    return dist._logsf((z - loc) / scale, *shapes)

            z = loc + scale * np.array([-30.0, -2.0, 0.0, 0.5, 7.0])
            same = np.allclose(logF(z), self._logF(z), rtol=1e-14, atol=0) and np.allclose(
                logS(z), self._logS(z), rtol=1e-14, atol=0
            )
        except Exception:
            same = False
        return (logF, logS) if same else (self._logF, self._logS)

    def _tail_width(self, logtail, logdens):
        """A length scale of the conditional tail: F(c)/f(c) (the Mills ratio), kept finite and > 0."""
        w = np.exp(np.clip(logtail - logdens, -700, 700)) if np.isfinite(logdens) else np.nan
        if not (np.isfinite(w) and w > 0):
            w = float(self.base.ppf(0.75) - self.base.ppf(0.25))
        return w

    def _tail_integral(self, ratio, width, power):
        """``∫_0^∞ s^power ratio(s) ds`` for a decreasing tail ratio starting at 1, split on a geometric grid."""
        edges = [0.0] + [width * 4.0**k for k in range(-1, 5)] + [np.inf]
        tol = 1e-15 * width ** (power + 1)
        total = 0.0
        for a, c in zip(edges[:-1], edges[1:]):
            val, _ = integrate.quad(lambda s: s**power * ratio(s), a, c, epsabs=tol, epsrel=1e-12, limit=200)
            total += val
        return total

    def _left_moments(self, c, second):
        """``(F(c), E[c - Z | Z <= c], E[(c - Z)^2 | Z <= c])`` (the last only if ``second``)."""
        logFc = float(self._logF(c))
        if not np.isfinite(logFc):
            return 0.0, 0.0, 0.0
        width = self._tail_width(logFc, float(self.base.logpdf(c)))

        def ratio(s):
            with np.errstate(invalid="ignore"):
                v = np.exp(self._fast[0](c - s) - logFc)
            return np.nan_to_num(v, nan=0.0)

        m1 = self._tail_integral(ratio, width, 0)
        m2 = 2.0 * self._tail_integral(ratio, width, 1) if second else np.nan
        return float(np.exp(logFc)), m1, m2

    def _right_moments(self, c, second):
        """``(S(c), E[Z - c | Z >= c], E[(Z - c)^2 | Z >= c])`` (the last only if ``second``)."""
        logSc = float(self._logS(c))
        width = self._tail_width(logSc, float(self.base.logpdf(c)))

        def ratio(s):
            with np.errstate(invalid="ignore"):
                v = np.exp(self._fast[1](c + s) - logSc)
            return np.nan_to_num(v, nan=0.0)

        m1 = self._tail_integral(ratio, width, 0)
        if not second:
            m2 = np.nan
        elif np.isfinite(self._var):
            m2 = 2.0 * self._tail_integral(ratio, width, 1)
        else:
            m2 = np.inf
        return float(np.exp(logSc)), m1, m2

    def _moments(self, c, second=True):
        """``(E[Z | Z >= c], Var[Z | Z >= c])`` for one cut ``c`` (the variance only if ``second``)."""
        if c <= self._mu:
            Fc, l1, l2 = self._left_moments(c, second)
            Sc = float(np.exp(self._logS(c)))
            d = self._mu - c
            mean_dev = Fc * (d + l1) / Sc
            second = (self._var - Fc * (d * d + 2 * d * l1 + l2)) / Sc
            return self._mu + mean_dev, second - mean_dev**2
        _, r1, r2 = self._right_moments(c, second)
        return c + r1, r2 - r1 * r1

    def _map(self, fn, q):
        q = self._q(q)
        out = np.array([fn(-float(v)) for v in q.ravel()]).reshape(q.shape)
        return q, out

    # --- Mechanism interface -----------------------------------------------------------------
    def bias(self, q):
        """``E[Ŷ_q] - q = E[Z | Z >= -q]``; positive for every ``q >= 0`` when ``E Z = 0`` (Prop. 6)."""
        return _float(self._map(lambda c: self._moments(c, second=False)[0], q)[1])

    def variance(self, q):
        return _float(self._map(lambda c: self._moments(c)[1], q)[1])

    def cdf(self, x, q):
        """``P(Ŷ_q <= x) = (F(x - q) - F(-q)) / S(-q)`` for ``x >= 0``.

        Computed from log-tails of the base law (``logcdf`` on the left of its median, ``logsf`` on the
        right); where the two tails differ by less than 0.1% in log, the mass between them is
        integrated directly instead, so small probabilities keep their relative accuracy.
        """
        x, q = check.real_array("x", x), self._q(q)
        x, q = np.broadcast_arrays(x, q)
        z, c = x - q, -q
        with np.errstate(invalid="ignore", divide="ignore"):
            logFz, logFc, logSz, logSc = self._logF(z), self._logF(c), self._logS(z), self._logS(c)
            dleft = np.minimum(logFc - logFz, 0.0)
            dright = np.minimum(logSz - logSc, 0.0)
            left = np.exp(logFz - logSc) * -np.expm1(dleft)
            right = -np.expm1(dright)
        on_left = z <= self._median
        out = np.where(on_left, np.nan_to_num(left, nan=0.0), right)
        close = (x > 0) & (np.where(on_left, dleft, dright) > -1e-3)
        for i in np.ndindex(close.shape):
            if close[i]:
                out[i] = self._mass_between(float(x[i]), float(q[i]), float(logSc[i]))
        return _float(np.where(x >= 0, out, 0.0) + 0.0)

    def _mass_between(self, x, q, logSc):
        """``(F(x - q) - F(-q)) / S(-q)`` by quadrature of the density over ``[0, x]`` (no ``x - q`` gap to round)."""
        logfz = float(self.base.logpdf(x - q))
        val, _ = integrate.quad(lambda t: np.exp(self.base.logpdf(t - q) - logfz), 0.0, x, epsabs=0.0, epsrel=1e-13)
        return val * float(np.exp(logfz - logSc))

    def logpdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        with np.errstate(invalid="ignore"):
            val = self.base.logpdf(x - q) - self._logS(-q)
        return _float(np.where(x >= 0, val, -np.inf))

    def max_abs_bias(self):
        """``sup_{q >= 0} |bias(q)| = max(|bias(0)|, |μ|)``, exactly.

        The bias ``E[Z | Z >= -q]`` is nonincreasing in ``q`` (conditioning on a lower cut mixes in
        values below the old cut) and tends to ``μ = E Z`` as ``q → ∞``, so the supremum of its
        absolute value sits at one of the two ends.  For an unbiased base (Prop. 6) it is ``bias(0)``.
        """
        return max(abs(self.bias(0.0)), abs(self._mu))

    # --- the quantile coupling of Prop. 6 ----------------------------------------------------
    def base_ppf(self, u, q):
        """Quantile function of the unrestricted ``Y_q = q + Z`` at ``u`` (McGlinchey–Mason Prop. 6, ``Y^1_q``)."""
        u = check.real_array("u", u)
        q = self._q(q)
        with np.errstate(invalid="ignore"):
            z = np.where(u <= 0.5, self.base.ppf(np.minimum(u, 0.5)), self.base.isf(np.maximum(1 - u, 0.0)))
        return _float(q + z)

    def ppf(self, u, q):
        """Quantile function of the restricted ``Ŷ_q`` at ``u`` (Prop. 6, ``Ŷ^1_q``); ``Ŷ_q = ppf(U, q)``.

        Solves ``F(z) = F(-q) + u S(-q)`` with ``ppf`` while the target is below 1/2 and
        ``S(z) = (1 - u) S(-q)`` with ``isf`` above, so both tails stay accurate.
        """
        u = check.real_array("u", u)
        if ((u < 0) | (u > 1)).any():
            raise ValueError(f"u must lie in [0, 1], got {u!r}")
        q = self._q(q)
        return _float(self._ppf(u, q))

    def _ppf(self, u, q):
        u, q = np.broadcast_arrays(u, q)
        c = -q
        Fc = np.exp(self._logF(c))
        Sc = np.exp(self._logS(c))
        target = Fc + u * Sc
        with np.errstate(invalid="ignore"):
            lower = self.base.ppf(np.minimum(target, 0.5))
            upper = self.base.isf(np.maximum((1 - u) * Sc, 0.0))
        z = np.where(target <= 0.5, lower, upper)
        return q + np.maximum(z, c)

    def coupling(self, q, u):
        """The coupled pair ``(Y_q, Ŷ_q)`` built from the same uniform ``u`` in the proof of Prop. 6.

        Both are quantile transforms of ``u``; because ``F^R_q <= F_q`` pointwise the restricted draw
        is never smaller: ``Ŷ_q(u) >= Y_q(u)`` for every ``u``, strictly for ``u < F_q(0)``.

        Returns
        -------
        (ndarray or float, ndarray or float)
            ``(base_ppf(u, q), ppf(u, q))``.
        """
        return self.base_ppf(u, q), self.ppf(u, q)

    def _sample(self, q, shape, rng):
        """Inverse CDF.  Laplace and normal bases take a direct route (the laws are the same):
        Laplace is :class:`dpbook.Truncated` on ``[0, inf)``; for the normal, ``Z >= c`` is sampled as
        ``-ndtri(u Φ(-c))``, one ``ndtri`` per draw.  Other bases go through scipy's ``ppf``/``isf``."""
        name = self.base.dist.name
        if name in ("laplace", "norm"):
            loc, scale = self._loc_scale()
            q = _compact(q)
            if name == "laplace":
                return Truncated(scale, 0.0, np.inf)._sample(q + loc, shape, rng)
            cut = -(q + loc) / scale
            keep = special.ndtr(-cut)  # P(N >= cut)
            if np.all(keep > 1e-300):
                u = rng.random(shape)
                np.subtract(1.0, u, out=u)  # in (0, 1]: ndtri(0) would be -inf
                u *= keep
                z = special.ndtri(u)
                z *= -scale
                z += loc
                z += q
                return np.maximum(z, 0.0, out=z)
        u = (rng.integers(0, 2**53, size=shape) + 0.5) / 2.0**53
        return self._ppf(u, q)

    def _loc_scale(self):
        """``(loc, scale)`` of a Laplace or normal base: its mean, and its std over √2 or 1."""
        root2 = np.sqrt(2.0) if self.base.dist.name == "laplace" else 1.0
        return float(self.base.mean()), float(self.base.std()) / root2


def restriction_ramp_bias_ratio(q, epsilon, sensitivity):
    """McGlinchey–Mason ratio (9): restriction's bias at ``b = 2Δ/ε`` over the ramp's at ``b = Δ/ε``.

    Both are ε-DP for a nonnegative query (McGlinchey–Mason Prop. 2 doubles ε for restriction).
    The ratio is ``2e^{t}(t + 2)/(2e^{t/2} - 1)`` with ``t = εq/Δ``, increasing from 4 at ``q = 0``;
    it is ``inf`` where the ramp's bias underflows (``t`` beyond about 745).

    >>> restriction_ramp_bias_ratio(0.0, 1.0, 1.0)
    4.0
    """
    b = laplace_scale(epsilon, sensitivity)
    q = check.finite_array("q", q)
    if (q < 0).any():
        raise ValueError(f"q must be >= 0 for a nonnegative query, got {q!r}")
    restricted = np.asarray(truncated_bias(q, 2 * b, 0.0, np.inf))
    ramp = np.asarray(bit_bias(q, b, 0.0, np.inf))
    return _float(np.divide(restricted, ramp, out=np.full(np.shape(ramp), np.inf), where=ramp > 0))
