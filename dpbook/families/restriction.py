"""Restriction of a continuous location family to ``[0, ∞)`` (McGlinchey–Mason §5.2, eq. (8), Prop. 6).

The restricted release ``Ŷ_q`` has the law of ``Y_q = q + Z`` conditioned on ``Y_q >= 0``; it is
what rejection sampling produces.  Proposition 6 shows it is biased upwards for every base law
with full support, through the quantile coupling exposed here as :meth:`Restricted.coupling`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize, special, stats

from .._kernels import validation as check
from .._kernels.arrays import _below, _bound_in_place, _compact, _float, _invert_cdf
from .._kernels.gaussian import (
    _log_cdf_ratio,
    _normal_reflected,
    _normal_tail_excess,
)
from .._kernels.sampling import _uniform_blocks
from .._kernels.strips import (
    _generic_strip_draws,
    _generic_strip_table,
    _normal_strip_draws,
    _t3_strip_draws,
)
from ..audit.description import PrivacyDescription, corner_pairs, union_description
from ..families.truncation import Truncated
from ..mechanism import Mechanism

__all__ = ["Restricted"]


class Restricted(Mechanism):
    """``q + Z`` conditioned on being ``>= 0``: McGlinchey–Mason equation (8) for any base law of ``Z``.

    Moments are closed forms for Laplace and normal bases.  For any other base they are computed in the
    base's standard units ``Z = loc + s W`` around the cut ``cw = (-q - loc)/s``, arranged so that nothing
    cancels: below the base mean ``μ`` they use the mass *removed*,
    ``E[W | W >= cw] = μ + F(cw)(μ - cw + E[cw - W | W <= cw]) / S(cw)``, and above it the mean excess
    ``E[W - cw | W >= cw]`` itself, which is the mean of the release in units of ``s``.  The excess
    moments are integrals of density ratios ``f(cw ± u)/f(cw)`` in log space (scipy's ``logsf`` loses
    far tails); beyond where scipy can evaluate the density they are extrapolated from the largest
    cut where it can (see ``_right_excess``).

    Parameters
    ----------
    base : scipy.stats continuous distribution
        The law of ``Z`` (McGlinchey–Mason's ``Y_0``): an ``rv_continuous`` without shape
        parameters (``scipy.stats.norm``) or a frozen one (``scipy.stats.laplace(scale=2)``).  Its
        support must be the whole line (assumption (15)) and its mean finite; Prop. 6 also assumes
        it is 0 (assumption (14)), otherwise the bias below includes it.

    Examples
    --------
    >>> from scipy import stats
    >>> round(Restricted(stats.laplace(scale=1.0)).bias(0.0), 12)  # (q + b) / (2 e^{q/b} - 1)
    1.0
    """

    #: the base laws known to be log-concave (their restriction keeps a monotone likelihood ratio)
    _LOG_CONCAVE_BASES = ("laplace", "norm", "logistic")

    #: the scipy base laws on the whole line known to be unimodal at every value of their shape parameters,
    #: which many draws at one cut take by exact rejection from strips (:func:`_generic_strip_table`): the
    #: log-concave Gumbel, hyperbolic secant, generalized logistic (type I), skew normal, exponentially modified
    #: normal, generalized normal, log-gamma, Moyal, power normal, asymmetric Laplace and Pearson III laws;
    #: Student's t, its noncentral form and Jones and Faddy's skew t; Johnson's SU, the normal-inverse Gaussian,
    #: the generalized hyperbolic and the Crystal Ball laws.  With ``_BIMODAL_BASES`` they are every scipy law
    #: on the whole line with a finite mean but three: the stable laws (``levy_stable``, whose density is a
    #: numerical integral, 10^4 times the cost of a draw), ``kappa4`` (whole-line only at some shapes) and the
    #: periodic ``vonmises``.  Any other base keeps the inverse cdf of :meth:`_inverse_draws`.
    _UNIMODAL_BASES = frozenset(
        (
            "gumbel_r",
            "gumbel_l",
            "hypsecant",
            "genlogistic",
            "skewnorm",
            "exponnorm",
            "gennorm",
            "loggamma",
            "moyal",
            "powernorm",
            "laplace_asymmetric",
            "t",
            "nct",
            "jf_skew_t",
            "johnsonsu",
            "norminvgauss",
            "crystalball",
            "genhyperbolic",
            "pearson3",
        )
    )

    #: the bases of the strips whose scipy quantile costs under 2 µs a draw (closed forms): they take the strips
    #: from ``_QUICK_QUANTILE_STRIPS`` draws, where a table (20-45 ms for them) costs what the inverse cdf does; the
    #: others, whose quantile is a root search or a series (3.5 µs a draw for Student's t, 45 µs for the skew
    #: normal, 9 ms for the exponentially modified normal, 93 ms for the normal-inverse Gaussian, measured at 4,000
    #: draws), from fewer (:meth:`_strips_from`)
    _QUICK_QUANTILE_BASES = frozenset(
        (
            "gumbel_r",
            "gumbel_l",
            "hypsecant",
            "genlogistic",
            "powernorm",
            "dweibull",
            "laplace_asymmetric",
            "johnsonsu",
        )
    )

    #: the scipy laws symmetric about 0 with modes at ``±m`` and a trough at 0 (``m`` in closed form from the
    #: shape): the double gamma ``|x|^{a-1} e^{-|x|}`` (``m = a - 1``) and double Weibull ``|x|^{c-1} e^{-|x|^c}``
    #: (``m = (1 - 1/c)^{1/c}``), for shapes above 1 (at 1 and below the density has a cusp or a pole at 0, which
    #: the strips cannot cover: left to the inverse cdf)
    _BIMODAL_BASES = {
        "dgamma": lambda a: a - 1.0,
        "dweibull": lambda c: (1.0 - 1.0 / c) ** (1.0 / c),
    }

    @property
    def bias_monotone(self):
        return self.base.dist.name in self._LOG_CONCAVE_BASES

    def stochastic_order(self):
        name = self.base.dist.name
        if name in self._LOG_CONCAVE_BASES:
            return True, (
                f"a log-concave ({name}) location family conditioned on [0, inf) keeps its "
                "monotone likelihood ratio"
            )
        return (
            False,
            f"the base law {name!r} is not known to be log-concave, so restriction may break monotonicity",
        )

    def score_bound(self):
        if self.base.dist.name == "laplace":
            return 2.0, self._loc_scale()[1]
        return None

    def law_is_numerical(self):
        return self.base.dist.name != "laplace"

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, base):
        if isinstance(base, stats.rv_continuous):
            if base.numargs:
                raise ValueError(
                    f"base needs shape parameters; pass a frozen distribution, got {base.name!r}"
                )
            base = base()
        if not (
            isinstance(base, stats.distributions.rv_frozen)
            and isinstance(base.dist, stats.rv_continuous)
        ):
            raise ValueError(
                f"base must be a scipy.stats continuous distribution, got {base!r}"
            )
        lo, hi = base.support()
        if not (lo == -np.inf and hi == np.inf):
            raise ValueError(
                f"base must have support the whole real line, got support ({lo}, {hi})"
            )
        with np.errstate(
            over="ignore"
        ):  # a variance beyond the doubles is inf, not a warning
            mu, var = (float(v) for v in base.stats("mv"))
        if not np.isfinite(mu):
            raise ValueError(f"base must have a finite mean, got {mu!r}")
        self.base = base
        self._mu = mu
        dist = base.dist
        shapes, loc, scale = dist._parse_args(*base.args, **base.kwds)
        self._std, self._loc, self._scale = dist(*shapes), float(loc), float(scale)
        with np.errstate(over="ignore"):
            mw, vw = (float(v) for v in self._std.stats("mv"))
        self._mw, self._vw = mw, vw if np.isfinite(vw) else np.inf
        kits = {"norm": _NormalTail, "logistic": _LogisticTail}
        if dist.name in kits:
            self._kit = kits[dist.name]()
        elif dist.name == "t":
            self._kit = _StudentTail(shapes[0])
        else:
            self._kit = _GenericTail(self._std)

    # --- the base law, tail-accurately -------------------------------------------------------
    def _logF(self, z):
        return self.base.logcdf(z)

    def _logS(self, z):
        return self.base.logsf(z)

    # --- moments of a general base, in the base's standard units, around the cut ----------------
    def _std_log(self, name, w):
        """``logpdf``/``logcdf``/``logsf`` of the standardized base law at ``w``, silently (``-inf`` or NaN where
        scipy's formula fails: callers treat a non-finite value as unknown)."""
        with np.errstate(all="ignore"):
            return float(
                {
                    "logpdf": self._std.logpdf,
                    "logcdf": self._std.logcdf,
                    "logsf": self._std.logsf,
                }[name](w)
            )

    def _local_width(self, w, right):
        """``1/|d log f/dw|`` of the standardized base density at ``w`` (the length over which the tail
        falls by ``e``) by a central difference resolvable in doubles, or None where ``log f`` is not
        finite around ``w`` or out to ``4^10`` widths beyond it (where :meth:`_excess` integrates)."""
        lf0 = self._std_log("logpdf", w)
        if not np.isfinite(lf0):
            return None
        ulp = float(np.spacing(abs(w))) if w != 0 else 0.0
        width = 1.0
        for _ in range(3):  # refine the step to a small fraction of the width found
            d = max(1e-4 * width, 1e3 * ulp, 1e-300)
            a, b = w - d, w + d  # (their exact difference, not 2d: w ± d rounds)
            up, down = self._std_log("logpdf", b), self._std_log("logpdf", a)
            if not (np.isfinite(up) and np.isfinite(down)) or b == a:
                return None
            slope = (up - down) / (b - a)
            if not np.isfinite(slope):
                return None
            # at a mode the slope vanishes: the bulk of a standardized law has width of order 1
            width = (
                min(1.0 / abs(slope), max(1.0, abs(w)))
                if slope != 0
                else max(1.0, abs(w))
            )
        sgn = 1.0 if right else -1.0
        # scipy's formula may fail far out; harmless where the density has already fallen below e^-745
        if not (
            np.isfinite(self._std_log("logpdf", w + sgn * width * 4.0**10))
            or self._std_log("logpdf", w + sgn * width * 4.0**5) - lf0 < -745.0
        ):
            return None
        return width

    def _excess(self, w, right):
        """``(E X, Var X)`` of the excess ``X = ±(W - w) >= 0`` of the standardized base ``W`` beyond ``w``.

        Only the density enters, through ratios ``f(w ± u)/f(w)`` evaluated in log space, so nothing
        underflows however far out ``w`` is and however small the tail's mass (which scipy's ``logsf``
        often loses); the integrals are split on a geometric grid from the local width ``1/|d log f|``.
        Where the doubles resolve ``w ± u`` too coarsely for that (``ulp(w)/width`` larger than the width's
        relative change over one width), the excess is the exponential law of that width, whose error is
        that change.  None where the density is not finite around ``w``.
        """
        width = self._local_width(w, right)
        if width is None:
            return None
        # the integrals see f(w ± u)/f(w) to about ulp(w)/width; the exponential law errs by the width's
        # relative change over one width: take whichever is more accurate here
        sgn = 1.0 if right else -1.0
        beyond = self._local_width(w + sgn * width, right)
        change = abs(beyond - width) / width if beyond is not None else np.inf
        coarse = float(np.spacing(abs(w))) / width
        if coarse > 1e-13 and change < coarse:
            return width, width * width
        sgn = 1.0 if right else -1.0
        lf0 = self._std_log("logpdf", w)
        # ∫ v^k f(w ± width v)/f(w) dv for k = 0, 1, 2 (v in units of the width) by composite Gauss-Legendre
        # on geometric pieces up to 4^10 widths, and beyond by v = 4^10 / t (one vectorized density call)
        t, wt = _GL
        edges = np.concatenate([[0.0], 4.0 ** np.arange(-6, 11)])
        a, c = edges[:-1, None], edges[1:, None]
        v = (0.5 * (a + c) + 0.5 * (c - a) * t).ravel()
        dv = (0.5 * (c - a) * wt).ravel()
        top = edges[-1]
        u = 0.5 * (t + 1.0)  # the tail: v = top/u, dv = top/u² du on u in (0, 1]
        v = np.concatenate([v, top / u])
        dv = np.concatenate([dv, 0.5 * wt * top / (u * u)])
        with np.errstate(all="ignore"):
            ratio = np.exp(
                np.asarray(self._std.logpdf(w + sgn * (width * v)), dtype=float) - lf0
            )
        ratio = np.where(np.isfinite(ratio), ratio, 0.0) * dv
        J = np.array([np.sum(ratio), np.sum(ratio * v), np.sum(ratio * v * v)])
        if not (np.all(np.isfinite(J)) and J[0] > 0):
            return None
        m1 = J[1] / J[0]
        spread = max(J[2] / J[0] - m1 * m1, 0.0) if np.isfinite(self._vw) else np.inf
        with np.errstate(over="ignore"):
            return float(width * m1), float(
                np.float64(width) * (np.float64(width) * spread)
            )

    def _right_excess(self, cw, log_cw):
        """``(log E X, log Var X)`` for ``X = W - cw`` given ``W >= cw``, a cut right of the base mean.

        Where scipy cannot evaluate the density around ``cw`` (or ``cw`` itself overflows), both are
        extrapolated from the largest cut ``w* = 2^j`` where it can, from their values at ``w*/64``,
        ``w*/8`` and ``w*``: as regularly varying functions of the cut (exact in the limit for polynomial
        tails, where ``E X ∝ cw``, and for exponential ones, where it is constant) or, for tails lighter
        than any exponential, with logarithms linear in the cut, whichever the three points fit better.
        """
        got = self._excess(cw, right=True) if np.isfinite(cw) else None
        if got is None:
            lo, hi = (
                3,
                1023,
            )  # the largest j with a computable excess at 2^j, by bisection
            if self._local_width(2.0**lo, right=True) is None:
                raise ArithmeticError(
                    f"the base law's density is not computable in its right tail at {2.0**lo}"
                )
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (
                    (mid, hi)
                    if self._local_width(2.0**mid, right=True) is not None
                    else (lo, mid)
                )
            w3 = 2.0 ** np.array([lo, lo - 3, lo - 6])
            got3 = [self._excess(w, right=True) for w in w3]
            if any(g is None for g in got3):
                raise ArithmeticError(
                    f"the base law's density is not computable in its right tail beyond {w3[-1]}"
                )
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.log(np.array(got3))  # rows: w*, w*/8, w*/64
                # log E X and log Var X linear in log w (regularly varying tails) or in w (lighter than any
                # exponential): the model whose two successive slopes agree better
                out = []
                for k in range(2):
                    y = logs[:, k]
                    for x, x_cut in ((np.log(w3), log_cw), (w3, np.exp(log_cw))):
                        s1, s2 = (
                            (y[0] - y[1]) / (x[0] - x[1]),
                            (y[1] - y[2]) / (x[1] - x[2]),
                        )
                        fit = abs(s1 - s2) / max(abs(s1), abs(s2), 1e-300)
                        guess = y[0] + s1 * (x_cut - x[0]) if s1 != 0 else y[0]
                        out.append((fit, guess))
                best = [min(out[0:2])[1], min(out[2:4])[1]]
                return tuple(
                    float(v) if np.isfinite(v) or np.isinf(v) else -np.inf for v in best
                )
        with np.errstate(divide="ignore"):
            return float(np.log(got[0])), float(np.log(got[1]))

    def _general_moments(self, q):
        """``(mean, bias, variance)`` of ``Ŷ_q`` for any base, in the base's standard units around the cut.

        With ``Z = loc + s W`` and the cut ``cw = (-q - loc)/s``: right of the base mean ``μ_W`` the mean
        is ``s E[W - cw | W >= cw]`` (the mean excess, never ``q + bias``, which cancels); left of it
        ``E[W | W >= cw] = μ_W + F(μ_W - cw + l_1)/S`` with ``l_1 = E[cw - W | W <= cw]``, the mass removed.
        """
        loc, s, mw, vw = self._loc, self._scale, self._mw, self._vw
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            gap = -q - loc
            cw = gap / s
            log_cw = np.log(abs(gap)) - np.log(s) if gap != 0 else -np.inf
            if cw > mw:
                log_m, log_v = self._right_excess(cw, log_cw)
                mean = float(np.exp(np.log(s) + log_m))
                var = float(np.exp(2 * np.log(s) + log_v))
                return mean, mean - q, var
            logF = self._std_log("logcdf", cw) if np.isfinite(cw) else -np.inf
            F = float(np.exp(logF)) if np.isfinite(logF) else 0.0
            if F > 0:
                left = self._excess(cw, right=False)
                l1, lv = left if left is not None else (0.0, 0.0)
                S = float(-np.expm1(logF))
                d = mw - cw
                dev = F * (d + l1) / S
                second = (vw - F * (d * d + 2 * d * l1 + lv + l1 * l1)) / S
                vstd = max(second - dev * dev, 0.0)
            else:
                dev, vstd = 0.0, vw
            bias = loc + s * (mw + dev)
            mean = max((q + loc) + s * (mw + dev), 0.0)
            var = float(s * (s * vstd))
        return mean, bias, var

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
            var = np.where(
                near,
                scale * (scale * (1.0 - lam * (lam - cn))),
                (scale * g1) * (scale * (g_next - g1)),
            )
        return mean, bias, var

    # --- Mechanism interface -----------------------------------------------------------------
    def _bias(self, q):
        """``E[Ŷ_q] - q = E[Z | Z >= -q]``; positive for every ``q >= 0`` when ``E Z = 0`` (Prop. 6)."""
        return self._moment(q, 1)

    def _mean(self, q):
        """``E[Ŷ_q]``; for a cut above the base mean it is the mean residual ``E[Z - c | Z >= c]`` itself,
        never ``q + bias`` (which cancels to 0 when ``q`` is far below 0)."""
        return self._moment(q, 0)

    def _variance(self, q):
        return self._moment(q, 2)

    def _moment(self, q, k):
        """Entry ``k`` of ``(mean, bias, variance)``: closed forms for Laplace and normal bases, else
        :meth:`_general_moments` at each ``q``."""
        closed = self._closed_moments(q)
        if closed is not None:
            return closed[k]
        return np.array(
            [self._general_moments(float(v))[k] for v in q.ravel()]
        ).reshape(q.shape)

    def _cdf(self, x, q):
        """``P(Ŷ_q <= x) = (F(x - q) - F(-q)) / S(-q)`` for ``x >= 0`` (see ``Restricted._law``)."""
        return self._law_function("cdf", x, q)

    def _sf(self, x, q):
        """``P(Ŷ_q > x) = S(x - q) / S(-q)`` for ``x >= 0`` (see ``Restricted._law``)."""
        return self._law_function("sf", x, q)

    def _logcdf(self, x, q):
        return self._law_function("logcdf", x, q)

    def _logsf(self, x, q):
        return self._law_function("logsf", x, q)

    def _logpdf(self, x, q):
        return self._law_function("logpdf", x, q)

    def _law_function(self, name, x, q):
        if (
            self.base.dist.name == "laplace"
        ):  # the law is Truncated's on [0, inf): exact far outside too
            loc, scale = self._loc_scale()
            law = Truncated(scale, lower=0.0, upper=np.inf)
            return {
                "cdf": law.cdf,
                "sf": law.sf,
                "logcdf": law.logcdf,
                "logsf": law.logsf,
                "logpdf": law.logpdf,
            }[name](x, q + loc)
        return self._law(x, q)[name] + 0.0

    def _law(self, x, q):
        """``cdf``, ``sf``, ``logcdf``, ``logsf``, ``logpdf`` of ``Ŷ_q`` at ``x``, in the base's standard units
        around the cut, in log space.

        With ``Z = loc + s W``, the cut ``c = (-q - loc)/s`` and ``u = x/s``, ``Ŷ_q/s`` is ``W - c`` given
        ``W >= c``; ``c``, ``u`` and ``z = c + u`` are carried with their logarithms, which stay finite
        where ``q/s`` or ``x/s`` overflow.  Where the doubles resolve ``z`` relative to ``u``
        (``u > 1e-5 max(1, |c|)``), the law is a difference of log-tails of the base at ``z`` and ``c``:
        log-survival differences right of the base median (``log h(z) + lS(z) - lS(c)`` for the density,
        ``h = f/S`` the hazard, so two underflowing tails never meet), log-cdf differences left of it.
        Closer to the cut ``z`` rounds to ``c``, and the log-tail difference is the hazard's Taylor series,
        ``lS(c + u) - lS(c) = -u h (1 + u g/2) + O(u³)`` with ``g = h'/h`` (mirrored on the left), from
        ``u`` itself.  The tails of the normal, logistic and Student t bases are exact or asymptotic series
        where scipy's fail (``logsf`` of t is ``-inf`` beyond ``1e62``, its ``logpdf`` beyond ``1.3e154``).
        """
        kit, loc, s = self._kit, self._loc, self._scale
        x, q = np.broadcast_arrays(
            np.asarray(x, dtype=float), np.asarray(q, dtype=float)
        )
        with np.errstate(all="ignore"):
            ls = np.log(s)
            A = -q - loc
            c, Lc = A / s, np.log(np.abs(A)) - ls
            xp = np.where(x > 0, np.minimum(x, np.finfo(float).max), 0.0)
            u, Lu = xp / s, np.log(xp) - ls
            Z = xp + A
            z, Lz = Z / s, np.log(np.abs(Z)) - ls
            near = Lu - np.maximum(Lc, 0.0) <= np.log(
                1e-5
            )  # z does not resolve u: the Taylor series
            right = c >= kit.median
            # right of the median: D = lS(z) - lS(c) <= 0
            lh = kit.log_h(c, Lc)
            sg, lg = kit.g(c, Lc)
            ug = sg * np.exp(Lu + lg)
            D_near = -np.exp(Lu + lh) * (1 + ug / 2)
            D = np.where(near, D_near, kit.dS(c, Lc, z, Lz, u, Lu))
            D = np.minimum(D, 0.0)
            lcdf_r = np.where(
                -D > 1e-300, np.log(-np.expm1(D)), Lu + lh + np.log1p(ug / 2)
            )
            lpdf_r = np.where(near, lh + ug, kit.log_h(z, Lz)) - ls + D
            # left of it: E = lF(z) - lF(c) >= 0
            lFc, lSc = kit.lF(c, Lc), kit.lS(c, Lc)
            lk = kit.log_k(c, Lc)
            sgl, lgl = kit.g_left(c, Lc)
            ugl = sgl * np.exp(Lu + lgl)
            E = np.exp(Lu + lk) * (1 + ugl / 2)
            em1 = np.where(
                E > 1.0,
                E + np.log(-np.expm1(-E)),
                np.where(E > 1e-300, np.log(np.expm1(E)), Lu + lk + np.log1p(ugl / 2)),
            )
            lcdf_near = np.where(lFc == -np.inf, -np.inf, lFc + em1 - lSc)
            lpdf_near = np.where(lFc == -np.inf, -np.inf, lk + ugl + lFc + E - lSc)
            lFz, lSz = kit.lF(z, Lz), kit.lS(z, Lz)
            dF = np.maximum(kit.dF(c, Lc, z, Lz, u, Lu), 0.0)
            below = lFz + np.log(-np.expm1(-dF)) - lSc  # z left of the median too
            half = np.log(0.5)
            across = (
                np.log(0.5 * -np.expm1(lFc - half) + 0.5 * -np.expm1(lSz - half)) - lSc
            )
            lcdf_far = np.where(
                z <= kit.median, np.where(lFz == -np.inf, -np.inf, below), across
            )
            lcdf_l = np.minimum(np.where(near, lcdf_near, lcdf_far), 0.0)
            lsf_l = np.where(
                near | (z <= kit.median),
                np.log1p(-np.exp(lcdf_l)),
                np.minimum(lSz - lSc, 0.0),
            )
            lpdf_l = np.where(near, lpdf_near, kit.lpdf(z, Lz) - lSc) - ls
            logcdf = np.where(right, lcdf_r, lcdf_l)
            logsf = np.where(right, D, lsf_l)
            logpdf = np.where(right, lpdf_r, lpdf_l)
        inside = x >= 0
        top = x == np.inf
        logcdf = np.where(top, 0.0, np.where(inside, logcdf, -np.inf))
        logsf = np.where(top, -np.inf, np.where(inside, logsf, 0.0))
        logpdf = np.where(inside & ~top, logpdf, -np.inf)
        return {
            "logcdf": logcdf,
            "logsf": logsf,
            "logpdf": logpdf,
            "cdf": np.exp(logcdf),
            "sf": np.exp(logsf),
        }

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
        u = check.probability_array("p", p)
        q = self._q(q)
        with np.errstate(invalid="ignore"):
            z = np.where(
                u <= 0.5,
                self.base.ppf(np.minimum(u, 0.5)),
                self.base.isf(np.maximum(1 - u, 0.0)),
            )
        return _float(q + z)

    def _ppf(self, p, q):
        """Quantile function of the restricted ``Ŷ_q`` at ``p`` (Prop. 6, ``Ŷ^1_q``); ``Ŷ_q = ppf(U, q)``.

        Solves ``F(z) = F(-q) + p S(-q)`` with ``ppf`` while the target is below 1/2 and
        ``S(z) = (1 - p) S(-q)`` with ``isf`` above, so both tails stay accurate.
        """
        if self._law_by_bisection():
            return self._exact_ppf(p, q)
        return np.where(p == 0, 0.0, self._ppf(p, q))

    def _exact_ppf(self, p, q):
        """Quantiles to the last bits of the log-space ``Restricted._law``: the fast ``_ppf`` as a start, then Newton
        steps on ``logcdf(x) = log p`` (``logsf(x) = log(1 - p)`` above the median); points that do not settle
        (a start that is 0 or inf) go to bisection over the doubles (``Mechanism.ppf``)."""
        p, q = np.broadcast_arrays(
            np.asarray(p, dtype=float), np.asarray(q, dtype=float)
        )
        with np.errstate(all="ignore"):
            x = np.asarray(self._ppf(p, q), dtype=float)
            lower = p <= 0.5
            target = np.where(lower, np.log(p), np.log1p(-p))
            done = np.zeros(p.shape, dtype=bool)
            for _ in range(6):
                law = self._law(x, q)
                r = np.where(lower, law["logcdf"], law["logsf"]) - target
                slope = np.where(
                    lower,
                    np.exp(law["logpdf"] - law["logcdf"]),
                    -np.exp(law["logpdf"] - law["logsf"]),
                )
                done = np.abs(r) <= 1e-13 * np.maximum(1.0, np.abs(target))
                step = np.where(done, 0.0, r / slope)
                ok = np.isfinite(step) & np.isfinite(x) & (x > 0)
                x = np.where(ok, np.maximum(x - step, 0.5 * x), x)
            ends = (p == 0) | (p == 1)
        rest = ~done & ~ends
        if rest.any():
            x = np.array(x)
            x[rest] = np.asarray(Mechanism.ppf(self, p[rest], q[rest]))
        return np.where(p == 0, 0.0, np.where(p == 1, np.inf, x))

    def _law_by_bisection(self):
        """Whether quantiles (and draws) invert the log-space :meth:`cdf` by bisection over the doubles, exact to
        its last bit: for every base but the Laplace (closed form).  The linear-space shortcut ``_ppf`` loses
        small ``p`` to ``F(c) + p S(c)`` and its ``_far_ppf`` (an exponential excess of width ``1/|(log f)'|``)
        is off by ``O(1/c²)`` for the normal and wholly for t's Pareto-like excess.  The normal samples
        through its own exact route (:func:`_normal_excess`)."""
        return self.base.dist.name != "laplace"

    def _ppf(self, u, q):
        u, q = np.broadcast_arrays(u, q)
        c = -q
        with np.errstate(all="ignore"):
            Fc = np.exp(self._logF(c))
            Sc = np.exp(self._logS(c))
            target = Fc + u * Sc
            lower = self.base.ppf(np.minimum(target, 0.5))
            upper = self.base.isf(np.maximum((1 - u) * Sc, 0.0))
            z = np.where(target <= 0.5, lower, upper)
            out = q + np.maximum(z, c)
        far = (~np.isfinite(out) | (Sc < 1e-290)) & (
            u < 1
        )  # (u = 1: the support's end, inf)
        if far.any():
            out = np.array(out, dtype=float)
            out[far] = self._far_ppf(u[far], q[far])
        return out

    def _far_ppf(self, u, q):
        """Quantiles where the kept mass ``S(-q)`` underflows: in the base's standard units, ``w`` solves
        ``log S(w) = log(1 - u) + log S(cw)`` (bisection over the doubles, in log space), and the release is
        ``s (w - cw)``, the excess over the cut (``q + Z`` would cancel).  Where scipy's ``logsf`` is lost at
        the cut itself, or the doubles cannot resolve the excess next to ``cw``, the excess is drawn from the
        exponential law of the density's local width there, as in :meth:`_excess`."""
        loc, s = self._loc, self._scale
        out = np.empty(u.shape)
        values, which = np.unique(q, return_inverse=True)
        which = which.reshape(u.shape)
        for k, qv in enumerate(values):
            sel = which == k
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                e = -np.log1p(
                    -u[sel]
                )  # the draws' standard exponential (inf at u = 1: the support's end)
                cw = (-qv - loc) / s
                logS = self._std_log("logsf", cw) if np.isfinite(cw) else -np.inf
                width = self._local_width(cw, right=True) if np.isfinite(cw) else None
                resolved = width is None or width >= 1e13 * float(np.spacing(abs(cw)))
                if np.isfinite(logS) and resolved:
                    w = _invert_cdf(
                        lambda x, p: self._std.logsf(x) <= p,
                        logS - e,
                        _below(cw),
                        np.inf,
                    )
                    out[sel] = s * (w - cw)
                else:
                    log_m = (
                        np.log(width)
                        if width is not None
                        else self._right_excess(cw, np.log(abs(qv + loc)) - np.log(s))[
                            0
                        ]
                    )
                    out[sel] = np.exp(np.log(s) + log_m) * e
        return np.maximum(out, 0.0)

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
        """Inverse cdf of one uniform per draw, in the base's standard units around the cut, vectorized.

        Laplace and normal bases take a direct route (the laws are the same): Laplace is
        :class:`dpbook.Truncated` on ``[0, inf)``; for the normal, ``Z >= c`` is sampled as ``-ndtri(u Φ(-c))``,
        one ``ndtri`` per draw, except for one cut: many draws at a cut within 8 standard deviations by exact
        rejection from strips (:mod:`dpbook._kernels.strips`), fewer at or left of the mean from one
        of numpy's normals a draw, reflected or redrawn below the cut (:func:`_normal_reflected`), and far right
        of it by exact rejection from exponential proposals (:func:`_normal_tail_excess`).  A logistic base has a closed
        form (:meth:`_logistic_draws`); a Student t base with 3 degrees of freedom and one true value is sampled
        exactly by strips (many draws at a cut within 8 scales: :mod:`dpbook._kernels.strips`) or else by ratio
        of uniforms (:func:`_t3_excess`), without a special function.  Draws at one cut of a base of
        ``_UNIMODAL_BASES`` or ``_BIMODAL_BASES`` (the skew normal, Gumbel, Student t with other degrees of
        freedom, the double gamma, ...), as many as :meth:`_strips_from` says or more, are made by exact rejection
        from 4,096 strips built from the base's log-density alone (:func:`_generic_strip_table`, refused where
        ``|log f|`` at the cut passes ``2^16`` or the density is seen to rise away from its modes); any other
        base, and fewer draws, map the uniforms to the base's quantiles once, vectorized (:meth:`_inverse_draws`)."""
        name = self.base.dist.name
        if name in ("laplace", "norm"):
            loc, scale = self._loc_scale()
            q = _compact(q)
            if name == "laplace":
                return Truncated(scale, lower=0.0, upper=np.inf)._sample(
                    q + loc, shape, rng
                )
            with np.errstate(over="ignore"):
                cut = np.clip(-(q + loc) / scale, -1e300, 1e300)
            if cut.size == 1:  # many draws at one cut: the strips where they apply
                size, lead = math.prod(shape), (q + loc).item()
                z = _normal_strip_draws(
                    rng, size, cut.item(), math.inf, lead, scale, 0.0, math.inf
                )
                if z is not None:
                    return z.reshape(shape)
            if cut.size == 1 and not 0.0 < cut.item() < _NORMAL_RIGHT:
                # one cut at or left of the mean: numpy's normals; far right: exponentials
                c, size = cut.item(), math.prod(shape)
                if c <= 0.0:
                    lead = (q + loc).item()
                    z = _normal_reflected(rng, size, -c, lead, scale, 0.0, math.inf)
                else:
                    z = _normal_tail_excess(rng, size, c)
                    z *= scale
                return z.reshape(shape)
            keep = special.ndtr(-cut)  # P(N >= cut)
            if np.all(keep > 1e-300):
                if keep.size == 1:  # one cut: in blocks, each value folded in once
                    keep, lead = keep.item(), (q + loc).item()

                    def draw(u, q):
                        np.subtract(1.0, u, out=u)  # in (0, 1]: ndtri(0) would be -inf
                        u *= keep
                        z = special.ndtri(u, out=u)
                        z *= -scale
                        z += lead
                        return _bound_in_place(z, 0.0)

                    return _uniform_blocks(rng, shape, q, draw)
                u = np.asarray(
                    rng.random(shape)
                )  # a 0-d array, not a float, when shape is ()
                np.subtract(1.0, u, out=u)  # in (0, 1]: ndtri(0) would be -inf
                u *= keep
                z = np.asarray(special.ndtri(u))
                z *= -scale
                z += loc
                z += q
                return np.maximum(z, 0.0, out=z)
            return scale * _normal_excess(
                np.broadcast_to(cut, shape), rng.random(shape)
            )
        if name == "logistic":
            return _uniform_blocks(rng, shape, _compact(q), self._logistic_draws)
        one = _compact(q)
        if (
            (name in self._UNIMODAL_BASES or name in self._BIMODAL_BASES)
            and one.size == 1
            and not (name == "t" and self._kit.nu == 3.0)
        ):
            with np.errstate(over="ignore"):
                c = -(float(one.reshape(())) + self._loc) / self._scale
            size = math.prod(shape)
            out = _generic_strip_draws(
                rng,
                size,
                lambda: self._strip_table(c),
                self._scale,
                self._strips_from(),
            )
            if out is not None:  # many draws at one cut: the strips
                return out.reshape(shape)
        if name == "t" and self._kit.nu == 3.0 and one.size == 1:
            with np.errstate(over="ignore"):
                a = float(one.reshape(())) + self._loc
                c = -a / self._scale
            out = _t3_strip_draws(rng, math.prod(shape), c, self._scale)
            if out is not None:  # many draws at a cut within 8 scales: the strips
                return out.reshape(shape)
            if abs(c) <= _T3_CUT:
                out = _t3_excess(rng, math.prod(shape), c)
                out *= self._scale
                return out.reshape(shape)
        u = np.asarray(rng.random(shape), dtype=float)
        return self._inverse_draws(u, np.broadcast_to(q, u.shape))

    def __getstate__(self):
        """The instance without its caches (the strips' tables hold closures, which do not pickle)."""
        state = dict(self.__dict__)
        for key in ("_strip_tables", "_standard"):
            state.pop(key, None)
        return state

    def _strips_from(self):
        """The fewest draws at one true value this base takes from the strips (:meth:`_sample`):
        ``_QUICK_QUANTILE_STRIPS`` for a quick quantile, 16 where scipy inverts the cdf by its generic root search
        (``_ppf`` or ``_isf`` not overridden: milliseconds a draw), ``_SLOW_QUANTILE_STRIPS`` for the others; by the
        base's class alone."""
        dist = self._std.dist
        if dist.name in self._QUICK_QUANTILE_BASES:
            return _QUICK_QUANTILE_STRIPS
        generic = stats.rv_continuous
        if type(dist)._ppf is generic._ppf or type(dist)._isf is generic._isf:
            return 16
        return _SLOW_QUANTILE_STRIPS

    def _strip_table(self, cut):
        """The strips of the standardized base on ``[cut, inf)`` (:func:`_generic_strip_table`), the last 16 kept."""
        cache = self.__dict__.setdefault("_strip_tables", {})
        if cut not in cache:
            if len(cache) >= 16:
                cache.pop(next(iter(cache)))
            peaks, troughs = self._std_extrema()
            cache[cut] = (
                _generic_strip_table(
                    self._std_logpdf,
                    lambda w: self._kit.lS(w, np.log(np.abs(w))),
                    self._std_tail,
                    peaks,
                    troughs,
                    cut,
                )
                if peaks
                else None
            )
        return cache[cut]

    def _std_logpdf(self, w):
        """The standardized base's log-density at ``w`` (an array), ``-inf`` where scipy's formula fails: the
        distribution's own ``_logpdf`` at its shape parameters (its support is the whole line, so that nothing
        of what the public ``logpdf`` adds, argument checks and the support's mask, applies: 200 ns a point
        less; ``tests/_kernels/test_strips.py`` checks the two agree)."""
        w = np.asarray(w, dtype=float)
        law, shapes = self._std.dist, self._std.args
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (boost's overflow warnings)
            try:
                out = np.asarray(law._logpdf(w, *shapes), dtype=float)
            except (
                ArithmeticError,
                SystemError,
            ):  # boost raises at some points (noncentral t(3, -4) at 1e154)
                out = np.array(
                    [_logpdf_or_nan(law, v, shapes) for v in w.ravel()]
                ).reshape(w.shape)
        return np.nan_to_num(out, nan=-np.inf, posinf=-np.inf, neginf=-np.inf)

    def _std_tail(self, rng, size, e):
        """``size`` exact draws of ``W - e`` given ``W >= e`` for the standardized base ``W``: the restricted
        law of the standardized base at the true value ``-e``, by its inverse cdf (:meth:`_inverse_draws`)."""
        standard = self.__dict__.get("_standard")
        if standard is None:
            standard = self.__dict__["_standard"] = Restricted(self._std)
        u = rng.random(size)
        return standard._inverse_draws(u, np.full(size, -e))

    def _std_extrema(self):
        """``(peaks, troughs)`` of the standardized base's density: its mode (:meth:`_std_mode`), or for a bimodal
        base (``_BIMODAL_BASES``) ``±m`` around 0; ``([], [])`` at a bimodal base's shapes with a pole at 0."""
        bimodal = self._BIMODAL_BASES.get(self._std.dist.name)
        if bimodal is None:
            return [self._std_mode()], []
        shape = float(self._std.args[0])
        if not shape > 1.0:
            return [], []
        m = bimodal(shape)
        return [-m, m], [0.0]

    def _std_mode(self):
        """The standardized base's mode, found numerically: the largest ``logpdf`` on a grid of 4,001 points
        ``median ± iqr sinh(t)`` (out to ``8e4`` interquartile ranges), then Brent's method between its
        neighbours (a unimodal base: the mode lies there)."""
        mode = self.__dict__.get("_mode")
        if mode is None:
            std = self._std
            with np.errstate(all="ignore"):
                med = float(std.median())
                iqr = float(std.ppf(0.75) - std.ppf(0.25))
            grid = med + iqr * np.sinh(np.linspace(-12.0, 12.0, 4001))
            lf = self._std_logpdf(grid)
            i = int(np.argmax(lf))
            lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
            found = optimize.minimize_scalar(
                lambda x: -float(self._std_logpdf(np.array([x]))[0]),
                bounds=(lo, hi),
                method="bounded",
                options={"xatol": 1e-14 * max(1.0, abs(float(grid[i])))},
            )
            mode = float(found.x)
            if not self._std_logpdf(np.array([mode]))[0] >= lf[i]:
                mode = float(grid[i])
            self.__dict__["_mode"] = mode
        return mode

    def _logistic_draws(self, u, q):
        """The restricted logistic law's quantiles at the uniforms ``u`` (overwritten), in closed form.

        With ``S(w) = 1/(1 + e^w)`` the quantile solves ``S(W) = (1 - u) S(c)``: ``e^W = (e^c + u)/(1 - u)``.
        Right of ``c = -34`` the release is ``s (W - c) = s log((1 + u e^{-c})/(1 - u))`` (an exponential
        excess for a far cut), whose rounding near the cut, ``s 2^-53``, is that of the uniform itself; left of
        it ``q + loc + s W``, with ``W = log((e^c + u)/(1 - u))``: the cut's own term ``e^c`` is below
        ``2e-15``."""
        loc, s = self._loc, self._scale
        with np.errstate(over="ignore", divide="ignore"):
            a = q + loc
            c = -a / s
            near = c >= -34.0
            one_minus = np.subtract(1.0, u)
            if np.all(near):  # the common case: one logarithm per draw
                u *= np.exp(-c)
                u += 1.0
                u /= one_minus
                np.log(u, out=u)
                u *= s
                return u
            far = np.log((np.exp(np.minimum(c, 0.0)) + u) / one_minus) * s + a
            close = np.log((1.0 + u * np.exp(-np.maximum(c, -34.0))) / one_minus) * s
        return np.maximum(np.where(near, close, far), 0.0)

    def _inverse_draws(self, u, q):
        """The restricted law's quantiles at the uniforms ``u`` through the base's own quantile functions, called
        once on all draws (Student t: ``scipy.special.stdtrit``; other bases: scipy's ``ppf``/``isf``).

        In the base's standard units with the cut ``c``: right of the base median the upper tail is the
        accurate one, ``W = isf(e^{log S(c) + log(1 - u)})`` and the release is the excess ``s (W - c)``; left
        of it ``W`` solves ``F(W) = F(c) + u S(c)`` (``ppf`` up to 1/2, ``isf`` of ``(1 - u) S(c)`` beyond) and
        the release is ``q + loc + s W``.  For a Student t cut beyond ``max(1e10, sqrt(1e17 ν))`` the tail is
        Pareto to every digit, ``s (W - c) = (-q - loc) expm1(-log(1 - u)/ν)``.  Draws whose target leaves the
        doubles (a tail mass below 1e-300) go to the exact inversion of the log-space law (:meth:`_exact_ppf`).
        """
        kit, loc, s = self._kit, self._loc, self._scale
        with np.errstate(all="ignore"):
            a = q + loc
            c = -a / s
            L = np.log(np.abs(a)) - np.log(s)
            lS, lF = kit.lS(c, L), kit.lF(c, L)
            log_rest = np.log1p(-u)
            right = c >= kit.median
            target = lS + log_rest  # log S(W)
            p = np.exp(lF) + u * np.exp(lS)  # F(W), left of the median
            upper = right | (p > 0.5)
            w = np.where(
                upper,
                kit.isf(np.exp(target)),
                kit.ppf(np.minimum(p, 0.5)),
            )
            x = np.where(right, s * (w - c), a + s * w)
            if isinstance(kit, _StudentTail):
                pareto = c > max(_BIG, np.sqrt(1e17 * kit.nu))
                x = np.where(pareto, -a * np.expm1(-log_rest / kit.nu), x)
            else:
                pareto = np.zeros((), dtype=bool)
            lost = ~np.isfinite(x) | (upper & ~pareto & (target < -690.0))
        x = np.array(np.maximum(x, 0.0), dtype=float)  # (0-d stays an array)
        if lost.any():
            x[lost] = self._exact_ppf(u[lost], q[lost])
        return x

    def _loc_scale(self):
        """``(loc, scale)`` of a Laplace or normal base: its mean, and its std over √2 or 1."""
        _, loc, scale = self.base.dist._parse_args(*self.base.args, **self.base.kwds)
        return float(loc), float(
            scale
        )  # not std()/√2: the variance underflows for scales below 1e-154

    # --- privacy description (dpbook.audit) -------------------------------------------------
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
            raise NotImplementedError(
                f"Restricted is audited for Laplace and normal bases only, got {name!r}"
            )
        params = dict(zip(("loc", "scale"), self.base.args))
        params.update(self.base.kwds)
        loc, s = float(params.get("loc", 0.0)), float(params.get("scale", 1.0))
        if name == "laplace":
            return union_description(
                s, [0.0], [np.inf], shift=loc, worst_pairs=corner_pairs((-loc, np.inf))
            )
        base = self.base

        def enclosure(x, y):  # the centre and N(q) = P(q + X >= 0) increase with q
            x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            return (
                x + loc,
                y + loc,
                np.full(x.shape, s),
                np.full(x.shape, s),
                base.logsf(-x),
                base.logsf(-y),
            )

        def log_norm_ratio(
            q1, q2
        ):  # log N(q2) - log N(q1), N(q) = Φ((q + loc)/s), close pairs kept
            q1, q2 = np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
            value, err = _log_cdf_ratio((q2 + loc) / s, (q1 + loc) / s)
            with np.errstate(
                over="ignore", invalid="ignore"
            ):  # (q + loc)'s own rounding
                slope = np.maximum(np.abs(q1 + loc) / s, 1.0) + 1.0
                err = (
                    err
                    + 4
                    * np.finfo(float).eps
                    * (np.abs(q1) + np.abs(q2) + 2 * abs(loc))
                    / s
                    * slope
                )
            return value, np.where(np.isfinite(err), err, np.inf)

        return PrivacyDescription(
            center=lambda q: np.asarray(q) + loc,
            scale=lambda q: np.full(np.shape(q), s),
            shape="gauss",
            pieces=((0.0, np.inf),),
            log_norm=lambda q: base.logsf(-np.asarray(q)),
            log_norm_ratio=log_norm_ratio,
            landmarks=(-loc,),
            length=s,
            to_q=lambda t: t - loc,
            lipschitz=None,
            enclosure=enclosure,
            center_shift=loc,
        )


_GL = np.polynomial.legendre.leggauss(40)


def _logpdf_or_nan(law, w, shapes):
    """``law._logpdf`` at the one point ``w``, NaN where scipy raises (boost's overflow, surfacing as a
    ``SystemError`` when warnings are errors)."""
    try:
        return float(np.asarray(law._logpdf(np.array([w]), *shapes))[0])
    except (ArithmeticError, SystemError):
        return np.nan


# --- the standardized base law around the cut, in log space (the law functions of Restricted) ----------
#
# Each kit evaluates the standardized base W at points ``w`` given together with ``L = log|w|``, which
# stays finite where ``w`` itself overflows (a cut ``(-q - loc)/s`` beyond the doubles): ``lS``/``lF``
# (log survival / log cdf), ``lpdf``, ``log_h`` (log hazard ``f/S``), ``g`` as ``(sign, log|g|)`` with
# ``g = h + (log f)'`` (so ``h' = h g``), and ``dS(c, z)`` = ``lS(z) - lS(c)`` for ``z = c + u > c``,
# ``u`` known exactly (``u, Lu``).  Symmetric kits get the left tail by reflection.

_BIG = 1e10  # beyond, the tails are their asymptotic series (relative corrections below 1e-20)


class _Symmetric:
    median = 0.0

    def lF(self, w, L):
        return self.lS(-w, L)

    def log_k(self, w, L):
        """``log(f/F)`` at ``w``: the reflected hazard."""
        return self.log_h(-w, L)

    def g_left(self, w, L):
        """``(sign, log|g_L|)``, ``g_L = (log f)' - f/F`` (``k' = k g_L``): minus the right ``g`` at ``-w``."""
        sg, lg = self.g(-w, L)
        return -sg, lg

    def dF(self, c, Lc, z, Lz, u, Lu):
        """``lF(z) - lF(c) >= 0``: the right difference of the reflection, from ``-z`` to ``-c``."""
        return -self.dS(-z, Lz, -c, Lc, u, Lu)


class _NormalTail(_Symmetric):
    _HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)

    def lS(self, w, L):
        return special.log_ndtr(-w)

    def lpdf(self, w, L):
        return -0.5 * w * w - self._HALF_LOG_2PI

    def log_h(self, w, L):
        # sqrt(2/π)/erfcx(w/√2) for w >= -5 (no overflow), f/S directly below, log w far right
        mid = np.clip(w, -5.0, _BIG)
        out = 0.5 * np.log(2 / np.pi) - np.log(special.erfcx(mid / np.sqrt(2)))
        out = np.where(w < -5.0, self.lpdf(w, L) - self.lS(w, L), out)
        return np.where(w > _BIG, L, out)

    def g(self, w, L):
        """``g = h - w``, the mean excess ``E[W - w | W >= w]`` (> 0).  It only enters the Taylor term ``u g/2``
        (below ``1e-5`` relative), so ``h - w`` may lose up to 8 digits to cancellation below ``w = 1e4``;
        beyond, its series ``1/w - 2/w³``."""
        near = w <= 1e4
        wn = np.where(near, w, 0.0)
        direct = np.exp(self.log_h(wn, L)) - wn
        far = -L + np.log1p(-2 * np.exp(-2 * L))
        return np.ones(np.shape(w)), np.where(near, np.log(np.abs(direct)), far)

    def dS(self, c, Lc, z, Lz, u, Lu):
        # right of 1: lS = log f - log h, so lS(z) - lS(c) = -u (c + u/2) - log h(z) + log h(c), u exact
        quad = np.exp(Lu + np.logaddexp(np.where(c > 0, Lc, -np.inf), Lu - np.log(2.0)))
        far = -quad - self.log_h(z, Lz) + self.log_h(c, Lc)
        return np.where(c > 1.0, far, self.lS(z, Lz) - self.lS(c, Lc))


class _LogisticTail(_Symmetric):
    def lS(self, w, L):
        return -np.logaddexp(0.0, w)

    def lpdf(self, w, L):
        a = np.abs(w)
        return -a - 2 * np.log1p(np.exp(-a))

    def log_h(self, w, L):  # h = F(w)
        return -np.logaddexp(0.0, -w)

    def g(self, w, L):  # g = F + (1 - 2F) = S(w)
        return np.ones(np.shape(w)), self.lS(w, L)

    def dS(self, c, Lc, z, Lz, u, Lu):
        # lS(w) = -w - log1p(e^-w) for w >= 0: the difference is -u exactly, plus the small logs
        far = (
            -u
            - np.log1p(np.exp(-np.maximum(z, 0.0)))
            + np.log1p(np.exp(-np.maximum(c, 0.0)))
        )
        return np.where(c >= 0, far, self.lS(z, Lz) - self.lS(c, Lc))


class _StudentTail(_Symmetric):
    """Student's t with ``nu`` degrees of freedom; scipy's formulas up to ``|w| = 1e10``, beyond them the
    series ``S(w) = x^a / (2 a B(a, 1/2)) (1 + (a + 1/2)/(a + 1) x + O(x²))``, ``x = ν/(ν + w²)``, ``a = ν/2``
    (the incomplete beta's hypergeometric series), with ``log x`` from ``log|w|``: scipy's ``logsf`` is
    ``-inf`` beyond ``w ≈ 1e62`` and its ``logpdf`` beyond ``1.3e154``, where both are finite."""

    def __init__(self, nu):
        self.nu = float(nu)
        a = self.nu / 2
        self._a = a
        self._c0 = -np.log(2 * a) - special.betaln(a, 0.5)
        self._k1 = (a + 0.5) / (a + 1)
        self._lpdf0 = (
            special.gammaln((self.nu + 1) / 2)
            - special.gammaln(a)
            - 0.5 * np.log(self.nu * np.pi)
        )
        self._law = stats.t(self.nu)

    def _log_x(self, L):
        return np.log(self.nu) - 2 * L - np.log1p(self.nu * np.exp(-2 * L))

    def ppf(self, p):
        return special.stdtrit(self.nu, p)

    def isf(self, p):
        return -special.stdtrit(self.nu, p)

    def lS(self, w, L):
        lx = self._log_x(L)
        far = self._a * lx + self._c0 + np.log1p(self._k1 * np.exp(lx))
        near = self._law.logsf(np.clip(w, -_BIG, _BIG))
        left = -np.exp(self._a * lx + self._c0)  # log(1 - S(|w|)), S(|w|) below 1e-50
        return np.where(w > _BIG, far, np.where(w < -_BIG, left, near))

    def lpdf(self, w, L):
        far = self._lpdf0 - (self.nu + 1) / 2 * (
            2 * L - np.log(self.nu) + np.log1p(self.nu * np.exp(-2 * L))
        )
        return np.where(
            np.abs(w) > _BIG, far, self._law.logpdf(np.clip(w, -_BIG, _BIG))
        )

    def log_h(self, w, L):
        return self.lpdf(w, L) - self.lS(w, L)

    def g(self, w, L):
        # g w = h w + (log f)' w = e^{log h + L} - (ν + 1)/(1 + ν/w²) (about -1 far out); g = (g w)/w
        gw = np.exp(self.log_h(w, L) + L) - (self.nu + 1) / (
            1 + self.nu * np.exp(-2 * L)
        )
        gw = np.where(w < 0, -gw, gw)  # (g w)/w with the sign of w
        wn = np.clip(w, -_BIG, _BIG)
        gn = np.exp(self.log_h(wn, L)) - (self.nu + 1) * wn / (self.nu + wn * wn)
        far = np.abs(w) > _BIG
        return np.where(far, np.sign(gw), np.sign(gn)), np.where(
            far, np.log(np.abs(gw)) - L, np.log(np.abs(gn))
        )

    def dS(self, c, Lc, z, Lz, u, Lu):
        # far right both series: a (log x_z - log x_c) with log(z/c) = log1p(u/c) exact
        ratio = np.log1p(np.exp(Lu - Lc))
        dlx = (
            -2 * ratio
            - np.log1p(self.nu * np.exp(-2 * Lz))
            + np.log1p(self.nu * np.exp(-2 * Lc))
        )
        far = (
            self._a * dlx
            + np.log1p(self._k1 * np.exp(self._log_x(Lz)))
            - np.log1p(self._k1 * np.exp(self._log_x(Lc)))
        )
        return np.where(c > _BIG, far, self.lS(z, Lz) - self.lS(c, Lc))


class _GenericTail:
    """Any other base: scipy's standardized functions, silenced; ``g`` from a central difference of
    ``log f``.  Beyond where scipy evaluates them the answers are the limits scipy gives."""

    def __init__(self, std):
        self.law = std
        self.median = float(std.median())

    def ppf(self, p):
        return self.law.ppf(p)

    def isf(self, p):
        return self.law.isf(p)

    def lS(self, w, L):
        return self._tail(
            np.nan_to_num(
                self.law.logsf(w), nan=-np.inf, posinf=np.inf, neginf=-np.inf
            ),
            w,
            right=True,
        )

    def lF(self, w, L):
        return self._tail(
            np.nan_to_num(
                self.law.logcdf(w), nan=-np.inf, posinf=np.inf, neginf=-np.inf
            ),
            w,
            right=False,
        )

    def _tail(self, value, w, right):
        """Where scipy's log-tail is lost (``-inf``) but its density is not: ``log f - log|(log f)'|``, the
        exponential-tail approximation (relative error ``O((log f)''/(log f)'²)``, e.g. ``e^{-w}`` for Gumbel)."""
        lost = (
            (value == -np.inf)
            & np.isfinite(w)
            & ((w > self.median) if right else (w < self.median))
        )
        if not np.any(lost):
            return value
        slope = self._dlogf(w)
        guess = self.lpdf(w, None) - np.log(np.abs(slope))
        ok = lost & np.isfinite(guess) & ((slope < 0) if right else (slope > 0))
        return np.where(ok, guess, value)

    def lpdf(self, w, L):
        return np.nan_to_num(
            self.law.logpdf(w), nan=-np.inf, posinf=np.inf, neginf=-np.inf
        )

    def log_h(self, w, L):
        return self.lpdf(w, L) - self.lS(w, L)

    def log_k(self, w, L):
        return self.lpdf(w, L) - self.lF(w, L)

    def _dlogf(self, w):
        d = 1e-4 * np.maximum(1.0, np.abs(w))
        return (self.lpdf(w + d, None) - self.lpdf(w - d, None)) / ((w + d) - (w - d))

    def g(self, w, L):
        g = np.nan_to_num(
            np.exp(self.log_h(w, L)) + self._dlogf(w), nan=0.0, posinf=0.0, neginf=0.0
        )
        return np.sign(g), np.log(np.abs(g))

    def g_left(self, w, L):
        g = np.nan_to_num(
            self._dlogf(w) - np.exp(self.log_k(w, L)), nan=0.0, posinf=0.0, neginf=0.0
        )
        return np.sign(g), np.log(np.abs(g))

    def dS(self, c, Lc, z, Lz, u, Lu):
        return np.nan_to_num(
            self.lS(z, Lz) - self.lS(c, Lc), nan=-np.inf, posinf=np.inf, neginf=-np.inf
        )

    def dF(self, c, Lc, z, Lz, u, Lu):
        return np.nan_to_num(
            self.lF(z, Lz) - self.lF(c, Lc), nan=np.inf, posinf=np.inf, neginf=-np.inf
        )


#: the fewest draws at one true value that a base of ``Restricted._QUICK_QUANTILE_BASES`` takes from the strips: about
#: where a table (20-45 ms for them) and the closed-form quantiles of as many draws (0.5-1.7 µs each) cost the same
_QUICK_QUANTILE_STRIPS = 2**16

#: the fewest draws at one true value that a base of ``Restricted._UNIMODAL_BASES`` or ``_BIMODAL_BASES`` outside
#: ``_QUICK_QUANTILE_BASES`` takes from the strips: a table is then cheaper than the inverse cdf of a few thousand
#: draws (about 8,000 for Student's t, a hundred for the skew normal, one for the normal-inverse Gaussian); the route
#: depends on the base and the size only, so that a seed gives the same draws whatever was cached
_SLOW_QUANTILE_STRIPS = 2**13

#: the cut of a normal base right of which one ``ndtri`` a draw costs more, measured, than Robert's exponential
#: proposals (:func:`_normal_tail_excess`, two exponentials a proposal, 83% kept at ``c = 0.5``, ``ndtri`` slower
#: in the tail); at or left of the mean (``c <= 0``) one of numpy's normals a draw, reflected or redrawn below
#: the cut (:func:`_normal_reflected`), costs less than both.  Between 0 and it the ``ndtri`` and Robert's cost
#: about numpy's Laplace draw.
_NORMAL_RIGHT = 0.5


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


#: a cut ``|c|`` up to which Student's t(3) is sampled by ratio of uniforms (:func:`_t3_excess`): ``c V`` stays
#: finite and the box, of sides ``~ 1/c`` and ``~ 1/c²``, far from the doubles' floor
_T3_CUT = 1e100

#: proposals per block of :func:`_t3_excess` (temporaries of 128 kB)
_T3_BLOCK = 2**14

_SQRT3 = math.sqrt(3.0)


def _t3_excess(rng, size, cut):
    """``size`` draws of ``W - cut`` given ``W >= cut``, for ``W`` Student's t with 3 degrees of freedom, exactly.

    Kinderman and Monahan's ratio of uniforms: for a point ``(U, V)`` uniform on ``{0 < v <= f(u/v)^{1/2}}``,
    ``U/V`` has the density ``∝ f``.  For t(3), ``f(w) ∝ (1 + w²/3)^{-2}``, and with ``u = √3 U`` the region is the
    disc ``U² + V² <= V`` (centre ``(0, 1/2)``, radius ``1/2``): ``W = √3 U/V``, with no special function.  The
    cut is the half-plane ``U >= m V``, ``m = cut/√3``.  Points are proposed uniformly, block by block, on the
    smaller of two parallelograms holding the part of the disc kept, and kept when inside it (strictly:
    ``V > 0``); the kept points are independent and uniform on it, taken in order, so the draws are exact (up
    to their rounding) and never negative:

    * sheared along the cut's line: ``U = U' + m V`` with ``U'`` uniform on ``[0, (sqrt(1 + m²) - m)/2]`` (the
      largest ``U - m V`` on the disc) and ``V`` on ``[0, 1]`` (``[0, 1/(1 + m²)]`` for ``m > 0``, the top of the
      part kept); every proposal is right of the cut, and the draw is ``√3 U'/V`` (no cancellation);
    * for a cut far left (``m < -3/4``, where the sheared width passes 1), the bounding box of the disc,
      ``|U| <= 1/2``, the draw ``(√3 U - cut V)/V`` where it is not negative.

    The part kept fills ``π/4`` of the box for a far left cut, ``0.80`` of the sheared one at ``cut = -0.5``,
    ``0.79`` at the mean and about ``2/3`` for a far right cut (a thin wedge at the origin).
    """
    m = cut / _SQRT3
    root = math.hypot(1.0, m)
    v_hi = 1.0 if m <= 0.0 else 1.0 / (1.0 + m * m)
    # the sheared width (sqrt(1 + m²) - m)/2, without cancellation for m > 0
    width = 0.5 * (root - m) if m <= 0.0 else 0.5 / (root + m)
    sheared = width <= 1.0  # else (m < -3/4) the disc's box, of width 1
    if not sheared:
        width = 1.0
    with np.errstate(over="ignore", under="ignore"):
        # the area kept, π/4 P(W >= cut), over the proposals': how many proposals a draw costs
        rate = (math.pi / 4) * float(stats.t.sf(cut, 3)) / (width * v_hi)
    rate = rate if rate > 1 / 6 else 1 / 6  # (and not NaN)
    out = np.empty(size)
    filled = 0
    r, a, b = np.empty(2 * _T3_BLOCK), np.empty(_T3_BLOCK), np.empty(_T3_BLOCK)
    inside = np.empty(_T3_BLOCK, dtype=bool)
    while filled < size:
        k = min(_T3_BLOCK, int((size - filled) * 1.05 / rate) + 16)
        rng.random(out=r[: 2 * k])
        u, v, x, y, w = r[:k], r[k : 2 * k], a[:k], b[:k], inside[:k]
        if v_hi != 1.0:
            v *= v_hi
        if sheared:
            u *= width  # U'
            np.multiply(v, m, out=x)
            x += u  # U
            x *= x
        else:
            u -= 0.5  # U
            np.multiply(u, u, out=x)
        np.subtract(1.0, v, out=y)
        y *= v
        np.less(x, y, out=w)  # inside the disc: U² < V (1 - V)
        with np.errstate(divide="ignore", invalid="ignore"):  # (V = 0 is outside)
            if sheared:
                np.divide(u, v, out=x)
            else:
                np.multiply(v, cut, out=y)
                np.multiply(u, _SQRT3, out=x)
                x -= y
                w &= x >= 0.0  # right of the cut
                x /= v
        x = x[w]
        got = min(x.size, size - filled)
        if sheared:
            x *= _SQRT3
        out[filled : filled + got] = x[:got]
        filled += got
    return out
