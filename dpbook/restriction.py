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
from ._privacy_interface import PrivacyDescription, corner_pairs, union_description
from .clamping import _bit_bias
from .laplace import laplace_scale
from .truncation import Truncated, _truncated_bias

__all__ = ["Restricted", "restriction_ramp_bias_ratio"]


class Restricted(Mechanism):
    """``q + Z`` conditioned on being ``>= 0``: McGlinchey–Mason equation (8) for any base law of ``Z``.

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
        with np.errstate(over="ignore"):  # a variance beyond the doubles is inf, not a warning
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

    def _closed_moments(self, q):
        """``(mean, bias, variance)`` of ``Ŷ_q`` in closed form for a Laplace or normal base, else None.

        Laplace: the law is :class:`dpbook.Truncated` on ``[0, inf)`` at ``q + loc``.  Normal, with the cut
        ``c = -(q + loc)/s`` in base units: ``E[N | N >= c] = λ(c) = sqrt(2/π)/erfcx(c/√2)`` and
        ``Var = 1 - λ(λ - c)`` for ``c <= 3``; beyond, where ``λ - c`` would cancel, the continued fraction
        ``g_n = n/(c + g_{n+1})`` of the Mills ratio gives ``E[N - c | N >= c] = g_1`` and
        ``Var = g_1 (g_2 - g_1)`` without cancellation, for every ``c`` up to the doubles' end.
        """
        name = self.base.dist.name
        if name not in ("laplace", "norm"):
            return None
        loc, scale = self._loc_scale()
        y = q + loc
        if name == "laplace":
            law = Truncated(scale, lower=0.0, upper=np.inf)
            mean = np.asarray(law.mean(y))
            bias = np.where(y >= 0, np.asarray(law.bias(y)) + loc, mean - q)
            return mean, bias, np.asarray(law.variance(y))
        with np.errstate(over="ignore"):
            c = -y / scale
        near = c <= 3.0
        cn = np.where(near, np.maximum(c, -40.0), 0.0)  # below -40, λ = e^{-800}: 0
        lam = np.sqrt(2 / np.pi) / special.erfcx(cn / np.sqrt(2))
        cf = np.where(near, 4.0, np.minimum(c, 1e300))
        g_next = np.zeros_like(cf)
        for n in range(400, 1, -1):
            g_next = n / (cf + g_next)
        g1 = 1.0 / (cf + g_next)
        with np.errstate(over="ignore"):
            mean = np.where(near, y + scale * lam, scale * g1)
            bias = np.where(near, loc + scale * lam, mean - q)
            var = np.where(near, scale * (scale * (1.0 - lam * (lam - cn))), (scale * g1) * (scale * (g_next - g1)))
        return mean, bias, var

    # --- Mechanism interface -----------------------------------------------------------------
    def bias(self, q):
        """``E[Ŷ_q] - q = E[Z | Z >= -q]``; positive for every ``q >= 0`` when ``E Z = 0`` (Prop. 6)."""
        closed = self._closed_moments(self._q(q))
        if closed is not None:
            return _float(closed[1])
        return _float(self._map(lambda c: self._moments(c, second=False)[0], q)[1])

    def mean(self, q):
        """``E[Ŷ_q]``; for a cut above the base mean it is the mean residual ``E[Z - c | Z >= c]`` itself,
        never ``q + bias`` (which cancels to 0 when ``q`` is far below 0)."""
        q = self._q(q)
        closed = self._closed_moments(q)
        if closed is not None:
            return _float(closed[0])

        def one(c):
            if c <= self._mu:
                return -c + self._moments(c, second=False)[0]
            return self._right_moments(c, False)[1]

        return _float(np.maximum(self._map(one, q)[1], 0.0))

    def variance(self, q):
        closed = self._closed_moments(self._q(q))
        if closed is not None:
            return _float(closed[2])
        return _float(self._map(lambda c: self._moments(c)[1], q)[1])

    def mse(self, q):
        q = self._q(q)
        with np.errstate(over="ignore"):
            return _float(np.asarray(self.variance(q)) + np.asarray(self.bias(q)) ** 2)

    def cdf(self, x, q):
        """``P(Ŷ_q <= x) = (F(x - q) - F(-q)) / S(-q)`` for ``x >= 0``.

        Computed from log-tails of the base law (``logcdf`` on the left of its median, ``logsf`` on the
        right); where the two tails differ by less than 0.1% in log, the mass between them is
        integrated directly instead, so small probabilities keep their relative accuracy.
        """
        x, q = check.real_array("x", x), self._q(q)
        if self.base.dist.name == "laplace":  # the law is Truncated's on [0, inf): exact far outside too
            loc, scale = self._loc_scale()
            return Truncated(scale, lower=0.0, upper=np.inf).cdf(x, q + loc)
        x, q = np.broadcast_arrays(x, q)
        with np.errstate(over="ignore"):
            z, c = x - q, -q
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
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
    def base_ppf(self, p, q):
        """Quantile function of the unrestricted ``Y_q = q + Z`` at ``p`` (McGlinchey–Mason Prop. 6, ``Y^1_q``)."""
        u = self._p(p)
        q = self._q(q)
        with np.errstate(invalid="ignore"):
            z = np.where(u <= 0.5, self.base.ppf(np.minimum(u, 0.5)), self.base.isf(np.maximum(1 - u, 0.0)))
        return _float(q + z)

    def ppf(self, p, q):
        """Quantile function of the restricted ``Ŷ_q`` at ``p`` (Prop. 6, ``Ŷ^1_q``); ``Ŷ_q = ppf(U, q)``.

        Solves ``F(z) = F(-q) + p S(-q)`` with ``ppf`` while the target is below 1/2 and
        ``S(z) = (1 - p) S(-q)`` with ``isf`` above, so both tails stay accurate.
        """
        p, q = self._p(p), self._q(q)
        return _float(np.where(p == 0, 0.0, self._ppf(p, q)))

    def sf(self, x, q):
        """``P(Ŷ_q > x) = S(x - q) / S(-q)`` for ``x >= 0``, from the base law's log survival function."""
        x, q = check.real_array("x", x), self._q(q)
        with np.errstate(invalid="ignore"):
            val = np.exp(np.minimum(self._logS(x - q) - self._logS(-q), 0.0))
        return _float(np.where(x >= 0, val, 1.0))

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
                return Truncated(scale, lower=0.0, upper=np.inf)._sample(q + loc, shape, rng)
            with np.errstate(over="ignore"):
                cut = np.clip(-(q + loc) / scale, -1e300, 1e300)
            keep = special.ndtr(-cut)  # P(N >= cut)
            if np.all(keep > 1e-300):
                u = np.asarray(rng.random(shape))  # a 0-d array, not a float, when shape is ()
                np.subtract(1.0, u, out=u)  # in (0, 1]: ndtri(0) would be -inf
                u *= keep
                z = np.asarray(special.ndtri(u))
                z *= -scale
                z += loc
                z += q
                return np.maximum(z, 0.0, out=z)
            return scale * _normal_excess(np.broadcast_to(cut, shape), rng.random(shape))
        u = (rng.integers(0, 2**53, size=shape) + 0.5) / 2.0**53
        return self._ppf(u, q)

    def _loc_scale(self):
        """``(loc, scale)`` of a Laplace or normal base: its mean, and its std over √2 or 1."""
        _, loc, scale = self.base.dist._parse_args(*self.base.args, **self.base.kwds)
        return float(loc), float(scale)  # not std()/√2: the variance underflows for scales below 1e-154

    # --- privacy description (dpbook.privacy) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: a Laplace or normal base centred at ``q + loc``, conditioned on ``[0, inf)``.

        A Laplace base is :class:`dpbook.Truncated` on ``[0, inf)`` at the true value ``q + loc``, whose
        law is frozen for ``q + loc <= 0``: its worst pair is a corner of the domain clipped to
        ``[-loc, inf)`` (see :meth:`dpbook.Truncated.privacy_description`).  A normal base has a log-ratio
        linear in the output; no worst pair is claimed (the auditor searches).  Other bases are not
        Laplace-shaped: ``NotImplementedError``.
        """
        name = self.base.dist.name
        if name not in ("laplace", "norm") or self.base.dist.numargs:
            raise NotImplementedError(f"Restricted is audited for Laplace and normal bases only, got {name!r}")
        params = dict(zip(("loc", "scale"), self.base.args))
        params.update(self.base.kwds)
        loc, s = float(params.get("loc", 0.0)), float(params.get("scale", 1.0))
        if name == "laplace":
            return union_description(s, [0.0], [np.inf], shift=loc, worst_pairs=corner_pairs((-loc, np.inf)))
        base = self.base
        return PrivacyDescription(center=lambda q: np.asarray(q) + loc, scale=lambda q: np.full(np.shape(q), s),
                                  shape="gauss", pieces=((0.0, np.inf),), log_norm=lambda q: base.logsf(-np.asarray(q)),
                                  landmarks=(-loc,), length=s, to_q=lambda t: t - loc, lipschitz=None)


def _normal_excess(cut, u):
    """``N - cut`` given ``N >= cut`` for a standard normal ``N``, by inverse cdf of the uniforms ``u`` in [0, 1).

    Up to ``cut = 8000``, ``N = -ndtri(e^{log(1-u) + log Φ(-cut)})`` in log space (no underflow, never inf);
    beyond, the excess solves ``cut y + y²/2 = -log(1 - u)`` (the tail ``Φ(-cut-y)/Φ(-cut)`` with the Mills
    ratio's relative change ``O(cut^-2)`` dropped), ``y = 2E/(cut + sqrt(cut² + 2E))``: both errors are
    below 2e-8 relative at the switch and vanish away from it.
    """
    e = -np.log1p(-u)
    near = cut <= 8000.0
    cn = np.where(near, cut, 0.0)
    z = -special.ndtri_exp(-e + special.log_ndtr(-cn))
    cf = np.where(near, 8001.0, cut)
    far = 2 * e / (cf + cf * np.sqrt(1.0 + 2 * e / cf / cf))
    return np.maximum(np.where(near, z - cn, far), 0.0)


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
    restricted = np.asarray(_truncated_bias(q, 2 * b, 0.0, np.inf))
    ramp = np.asarray(_bit_bias(q, b, 0.0, np.inf))
    return _float(np.divide(restricted, ramp, out=np.full(np.shape(ramp), np.inf), where=ramp > 0))
