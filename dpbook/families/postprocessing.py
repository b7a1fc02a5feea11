"""Post-processing the Laplace mechanism into ``[0, ∞)`` (McGlinchey–Mason §4 and §5.1).

Any measurable ``φ: R → [0, ∞)`` applied to ``Y_q = q + L_b`` keeps ε-DP.  The ramp
``τ(x) = max(x, 0)`` is clamping (bias ``(b/2)e^{-q/b}``, eq. (5)); the translated ramps
``τ_α(x) = max(x - α, 0)`` do better, best at ``α* = b W(1/2)`` (Theorem 4.1); and no ``φ`` at all
gets its worst-case bias below ``b W(1/e)`` (the constant behind Proposition 5).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize, signal, special

from .._kernels import validation as check
from .._kernels.arrays import _compact, _float
from .._kernels.inversion import _ramp_ends, _ramp_root
from .._kernels.laplace import _laplace_cdf, _laplace_logcdf
from ..audit.description import (
    corner_pairs,
    laplace_cdf_curvature,
    laplace_description,
    laplace_log_cdf_ratio,
)
from ..families import clamping
from ..mechanism import BiasCertificate, Mechanism

__all__ = [
    "TranslatedRamp",
    "PostProcessed",
    "optimal_ramp_shift",
    "ramp_worst_bias",
    "bias_lower_bound",
    "translated_ramp_phi",
    "softplus_phi",
    "piecewise_linear_phi",
]

#: the largest finite double (a check of φ's values that costs no array)
_FLOAT_MAX = float(np.finfo(float).max)


def ramp_worst_bias(shift, scale):
    """``B(α) = max{(b/2) e^{-α/b}, α}``, the worst-case bias of the translated ramp (McGlinchey–Mason Thm 4.1).

    The bias of ``τ_α(q + L_b)`` decreases in ``q`` from ``(b/2)e^{-α/b}`` at ``q = 0`` to ``-α`` as
    ``q → ∞``, so its largest absolute value is the larger of the two ends.

    Parameters
    ----------
    shift : float
        ``α >= 0``.
    scale : float
        ``b > 0``.

    Examples
    --------
    >>> ramp_worst_bias(0.0, 2.0)
    1.0
    """
    a = check.nonnegative("shift", shift)
    b = check.positive("scale", scale)
    return max(0.5 * b * math.exp(-a / b), a)


def optimal_ramp_shift(scale):
    """The optimal shift ``α* = b W(1/2) ≈ 0.3517337112 b`` of McGlinchey–Mason Theorem 4.1.

    ``α*`` solves ``(b/2) e^{-α/b} = α``; with ``t = α/b`` that is ``t e^t = 1/2``, i.e.
    ``t = W(1/2)`` for the principal Lambert W.  The worst-case bias there is ``B(α*) = α*``.

    >>> round(optimal_ramp_shift(1.0), 10)
    0.3517337112
    """
    b = check.positive("scale", scale)
    return b * float(special.lambertw(0.5).real)


def bias_lower_bound(scale):
    """``b W(1/e) ≈ 0.2784645428 b``: no nonnegative post-processing has a smaller worst-case bias.

    The explicit constant inside the proof of McGlinchey–Mason Proposition 5.  Let ``φ >= 0`` have
    worst-case bias ``B`` and put ``m(q) = E φ(q + L_b)``.  At ``q = 0``, ``m(0) <= B``.  The Laplace
    density satisfies ``f_q(x) <= e^{q/b} f_0(x)``, so (because ``φ >= 0``) ``m(q) <= e^{q/b} B``, and
    then ``B >= q - m(q) >= q - e^{q/b} B``, i.e. ``B >= q / (1 + e^{q/b})`` for every ``q >= 0``.  The
    right side is largest where ``1 + e^t = t e^t`` (``t = q/b``), i.e. ``t = 1 + W(1/e)``, and its value
    there is ``b e^{-t} = b (t - 1) = b W(1/e)``.

    >>> round(bias_lower_bound(1.0), 10)
    0.2784645428
    """
    b = check.positive("scale", scale)
    return b * float(special.lambertw(1.0 / math.e).real)


class TranslatedRamp(Mechanism):
    """``τ_α(q + L_b) = max(q + L_b - α, 0)``: the translated ramp of McGlinchey–Mason §4.

    Its law is that of clamping at 0 (:class:`dpbook.BIT` with ``lower=0``) at the true value
    ``q - α``, so every property is BIT's, read at ``q - α``.  The mean is
    ``(q - α) + (b/2) e^{(α - q)/b}`` for ``q >= α`` and ``(b/2) e^{(q - α)/b}`` below (proof of Thm 4.1).

    Parameters
    ----------
    scale : float
        ``b > 0``.
    shift : float
        ``α >= 0``; :func:`optimal_ramp_shift` gives the one with the least worst-case bias.

    Examples
    --------
    >>> mech = TranslatedRamp(scale=1.0, shift=optimal_ramp_shift(1.0))
    >>> round(mech.max_abs_bias(), 6)
    0.351734
    """

    bias_monotone = True

    def stochastic_order(self):
        return True, "a nondecreasing map of the Laplace location family"

    def score_bound(self):
        return 1.0, self.scale

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, scale, shift):
        self.scale = check.positive("scale", scale)
        self.shift = check.nonnegative("shift", shift)
        self._clamped = clamping.BIT(self.scale, lower=0.0)

    def _bias(self, q):
        y = q - self.shift
        # below the shift the mean is tiny and q is exact: bias = mean - q; above it, BIT's bias minus the shift
        with np.errstate(over="ignore"):
            return np.where(
                y < 0,
                np.asarray(self._clamped.mean(y)) - q,
                np.asarray(self._clamped.bias(y)) - self.shift,
            )

    def _mean(self, q):
        """``E max(Y_q - α, 0)``: BIT's mean at ``q - α`` (never ``q + bias``, which cancels when ``α >> |q|``)."""
        return self._clamped.mean(q - self.shift)

    def _variance(self, q):
        return self._clamped.variance(q - self.shift)

    def _cdf(self, x, q):
        return self._clamped.cdf(x, q - self.shift)

    def _logpdf(self, x, q):
        return self._clamped.logpdf(x, q - self.shift)

    def _sf(self, x, q):
        return self._clamped.sf(x, q - self.shift)

    def _logcdf(self, x, q):
        """BIT's ``logcdf`` at ``q - α``: in log space, finite deep in the tail."""
        return self._clamped.logcdf(x, q - self.shift)

    def _logsf(self, x, q):
        return self._clamped.logsf(x, q - self.shift)

    def _ppf(self, p, q):
        """BIT's quantile at ``q - α``: exact, 0 on the jump at 0."""
        return self._clamped.ppf(p, q - self.shift)

    def _isf(self, p, q):
        return self._clamped.isf(p, q - self.shift)

    def _quantile_in_q(self, x, p, v, upper):
        """BIT's roots (``lower = 0``) read at ``y = q - α`` and moved to ``q``, with the atom at 0 solved also
        below the bound (``q < α``, where the atom holds more than half the law), each with the proved width of
        the zone where the computed transform may cross ``p`` (:func:`dpbook._kernels.inversion._ramp_root`)."""
        return _ramp_root(x, p, v, upper, self.scale, self.shift)

    def _quantiles_in_q(self, x, p, v_top, v_bottom):
        """Both ends' roots at once (:func:`dpbook._kernels.inversion._ramp_ends`: the same doubles, the work on
        the releases and the atom shared), else one by one."""
        ends = _ramp_ends(x, p, v_top, v_bottom, self.scale, self.shift)
        return super()._quantiles_in_q(x, p, v_top, v_bottom) if ends is None else ends

    def _atoms(self, q):
        """The point mass at 0: ``[(0.0, P(q + L_b <= α))]``."""
        return self._clamped.atoms(q - self.shift)

    def _kinks(self, q):
        return [q - self.shift]

    def max_abs_bias(self):
        """``B(α) = max{(b/2) e^{-α/b}, α}``, exactly (Theorem 4.1); see :func:`ramp_worst_bias`."""
        return ramp_worst_bias(self.shift, self.scale)

    def _sample(self, q, shape, rng):
        return self._clamped._sample(_compact(q) - self.shift, shape, rng)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: BIT's law with ``lower = 0`` at the true value ``q - α``.

        As for :class:`dpbook.BIT`, the loss of a pair is ``|q1 - q2|/b`` wherever the two lie, so a
        corner pair of the domain is a worst pair.
        """
        b, alpha = self.scale, self.shift
        return laplace_description(
            b,
            ((0.0, np.inf),),
            center=lambda q: np.asarray(q) - alpha,
            center_shift=-alpha,
            atoms=(
                (
                    0.0,
                    lambda q: _laplace_logcdf(alpha, q, b),
                    lambda q1, q2: laplace_log_cdf_ratio(alpha, q1, q2, b),
                ),
            ),
            landmarks=(alpha,),
            to_q=lambda t: t + alpha,
            worst_pairs=corner_pairs(),
            curvature=laplace_cdf_curvature(b, (alpha,)),
        )


_GL_HI = np.polynomial.legendre.leggauss(12)


_GL_LO = np.polynomial.legendre.leggauss(6)


class PostProcessed(Mechanism):
    """``φ(q + L_b)`` for any measurable ``φ: R → [0, ∞)`` (McGlinchey–Mason §5.1, the cone ``V_+``).

    Moments are computed by ``scipy.integrate.quad``, split at ``q`` and at ``breakpoints``.  The
    bias is integrated as ``E[φ(Y_q) - Y_q]`` (``E Y_q = q``), so it stays accurate where it is tiny.
    The law of ``φ(Y_q)`` is known through its cdf (computed numerically, see ``cdf``) and
    ``at(q).expect`` (one integral against the Laplace law); its quantiles are :meth:`Mechanism.ppf`'s
    exact bisection on that cdf.  A general ``φ`` has no computed density or atoms: ``pdf``, ``pmf`` and
    ``atoms`` raise ``NotImplementedError``.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    phi : callable
        Vectorized ``φ``; must return finite values ``>= 0`` (checked on a probe grid).
    breakpoints : sequence of float
        Where ``φ`` kinks or jumps; between them ``φ`` should be smooth.
    tail : (float, float) or None
        ``(x0, c)`` declaring ``φ(x) = x - c`` for ``x >= x0`` (checked on sample points).  Then the bias
        is ``-c + (bias(x0) + c) e^{-(q - x0)/b}`` for ``q >= x0``, which makes the worst case over the
        whole half-line exact.

    Examples
    --------
    >>> ramp = PostProcessed(1.0, lambda x: np.maximum(x, 0.0), breakpoints=[0.0], tail=(0.0, 0.0))
    >>> round(ramp.max_abs_bias(), 12)
    0.5
    >>> round(ramp.at(0.0).cdf(0.0), 12)  # the ramp's point mass at 0
    0.5
    """

    def stochastic_order(self):
        return (
            False,
            "phi is an arbitrary callable: pass increasing=True if phi is nondecreasing",
        )

    def score_bound(self):
        return 1.0, self.scale

    def law_is_numerical(self):
        return True

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, scale, phi, *, breakpoints=(), tail=None):
        self.scale = check.positive("scale", scale)
        if not callable(phi):
            raise ValueError(f"phi must be a callable, got {phi!r}")
        self.phi = phi
        bps = check.finite_array("breakpoints", breakpoints).ravel()
        self.breakpoints = tuple(float(v) for v in np.unique(bps))
        if tail is not None:
            try:
                x0, c = tail
            except (TypeError, ValueError):
                raise ValueError(f"tail must be a pair (x0, c), got {tail!r}") from None
            tail = (check.finite("tail", x0), check.finite("tail", c))
        self.tail = tail
        b = self.scale
        probe = np.concatenate([np.linspace(-60 * b, 60 * b, 241), self.breakpoints])
        self._phi(probe)
        if tail is not None:
            xs = tail[0] + b * np.array([0.0, 0.37, 1.0, 3.3, 10.0, 100.0, 1e3])
            if not np.allclose(self._phi(xs), xs - tail[1], rtol=1e-12, atol=1e-12 * b):
                raise ValueError(
                    f"tail {tail!r} claims phi(x) = x - {tail[1]} for x >= {tail[0]}, but phi disagrees"
                )

    def _phi(self, x):
        x = np.asarray(x, dtype=float)
        y = np.broadcast_to(np.asarray(self.phi(x), dtype=float), x.shape)
        bad = ~(np.isfinite(y) & (y >= 0))
        if bad.any():
            i = np.flatnonzero(bad.ravel())[0]
            raise ValueError(
                f"phi must return finite values >= 0, got phi({x.ravel()[i]!r}) = {y.ravel()[i]!r}"
            )
        return y

    def _phi_at(self, x):
        """``φ(x)`` at one float ``x``, checked as :meth:`_phi` checks it (the integrands' fast path:
        QUADPACK asks for one point at a time, and an array per point costs more than ``φ`` itself)."""
        y = float(self.phi(x))
        if not (y >= 0.0 and y <= _FLOAT_MAX):
            raise ValueError(
                f"phi must return finite values >= 0, got phi({x!r}) = {y!r}"
            )
        return y

    # --- integrals against the Laplace law ---------------------------------------------------
    def _expect(self, g, q, *, unit, side=None, noise=0.0):
        """``E g(Y_q) = (1/2) ∫ g(q + b t) e^{-|t|} dt``, in the standardized variable ``t = (x - q)/b``.

        The ``t``-range ``[-T, T]`` (``T = 745``: ``e^{-T}`` is below the smallest double; less only if
        ``q + bT`` would overflow) is split at ``0, ±1, ±10, ±40`` and at the breakpoints, and on each
        piece the factor ``e^{-|t_e|}`` of its end nearest 0 is pulled out, so that neither a scale of
        1e-300 (the whole law inside one rounding step of ``q``) nor 1e300 (``b²`` overflows) nor a
        far piece (``e^{-|t|}`` underflows) loses the answer.  ``unit`` is the size of ``g`` below which
        an absolute error does not matter; ``noise`` the rounding noise of ``g`` itself (``φ`` is evaluated
        at ``q + bt``, which rounds to ``ulp(q)``), which no quadrature can beat; ``side``
        ``"left"``/``"right"`` keeps ``t < 0``/``t > 0`` only.
        """
        b = self.scale
        with np.errstate(over="ignore"):
            T = float(min(745.0, (np.finfo(float).max - abs(q)) / b))
            cuts = np.array([-40.0, -10.0, -1.0, 1.0, 10.0, 40.0])
            bps = (np.asarray(self.breakpoints, dtype=float) - q) / b
        lo, hi = (
            (-T, 0.0) if side == "left" else (0.0, T) if side == "right" else (-T, T)
        )
        inner = np.concatenate([cuts, bps[np.isfinite(bps)]]) if bps.size else cuts
        edges = np.unique(
            np.concatenate([[lo, 0.0, hi], inner[(inner > lo) & (inner < hi)]])
        )
        edges = edges[(edges >= lo) & (edges <= hi)]
        total = 0.0
        for t1, t2 in zip(edges[:-1], edges[1:]):
            e = t1 if t1 >= 0 else t2

            def f(t, e=e):
                return g(q + b * t) * np.exp(-(abs(t) - abs(e)))

            val, err, *info = integrate.quad(
                f, t1, t2, epsabs=1e-15 * unit, epsrel=1e-12, limit=200, full_output=1
            )
            # QUADPACK flags 1e-12 as out of reach when the integrand's rounding noise is of that order;
            # accept its answer only if its own error estimate is still within 1e-10 relative.
            if len(info) > 1 and err > 1e-10 * abs(val) + 1e-13 * unit + noise * (
                t2 - t1
            ):
                raise ArithmeticError(
                    f"quad could not integrate phi on t in [{t1}, {t2}] for q={q}: {info[1]}"
                )
            total += 0.5 * val * math.exp(-abs(e))
        return total

    def _each(self, fn, q):
        q = self._q(q)
        return _float(np.array([fn(float(v)) for v in q.ravel()]).reshape(q.shape))

    def _noise(self, q):
        """The rounding noise of ``φ(q + bt)`` (absolute): a few ``ulp(q)``."""
        return 64.0 * float(np.spacing(abs(q)))

    def _bias(self, q):
        return self._each(
            lambda v: self._expect(
                lambda x: self._phi_at(x) - x, v, unit=self.scale, noise=self._noise(v)
            ),
            q,
        )

    def _mean(self, q):
        return self._each(
            lambda v: self._expect(
                self._phi_at, v, unit=self.scale, noise=self._noise(v)
            ),
            q,
        )

    def _variance(self, q):
        """``s² (E[D²] - (E D)²)`` with ``D = (φ(Y_q) - m)/s``, ``m`` the computed mean and ``s = max(b, ulp(m))``.

        In units of ``s``, nothing overflows before the end (``b²`` may; then the variance is ``inf``, as its
        true value is beyond the doubles); subtracting ``(E D)²`` removes the rounding error of ``m``.  A
        black-box ``φ`` is only known at doubles, so where ``b`` is below the rounding step of ``q`` the
        law of ``φ(Y_q)`` is resolved to that step only.
        """
        b = self.scale

        def var(v):
            m = self._expect(self._phi_at, v, unit=b, noise=self._noise(v))
            unit = max(b, float(np.spacing(abs(m))))
            noise = 1e3 * self._noise(v) / unit
            d1 = self._expect(
                lambda x: (self._phi_at(x) - m) / unit, v, unit=1.0, noise=noise
            )
            d2 = self._expect(
                lambda x: ((self._phi_at(x) - m) / unit) ** 2, v, unit=1.0, noise=noise
            )
            with np.errstate(over="ignore"):
                return float(
                    np.float64(unit) * (np.float64(unit) * max(d2 - d1 * d1, 0.0))
                )

        return self._each(var, q)

    def _cdf(self, x, q):
        """``P(φ(Y_q) <= x)``, numerically.

        ``φ`` is evaluated on ``q + b·[-45, 45]`` (1801 points plus the breakpoints); each cell where
        ``φ - x`` changes sign is cut at the crossing (``scipy.optimize.brentq``) and the Laplace mass
        of the part where ``φ <= x`` is added; beyond ``±45b`` (mass ``< 1e-19``) ``φ`` is taken to stay on
        the side of ``x`` it has at the end of the grid.  A crossing pair inside one cell (a narrow
        excursion of ``φ`` across ``x``, width below ``0.05b``) is missed.
        """
        x, q = np.broadcast_arrays(x, q)
        out = np.array(
            [self._cdf1(float(xv), float(qv)) for xv, qv in zip(x.ravel(), q.ravel())]
        )
        return out.reshape(x.shape)

    def _cdf1(self, x, q):
        b = self.scale
        grid = q + b * np.linspace(-45.0, 45.0, 1801)
        inside = [p for p in self.breakpoints if grid[0] < p < grid[-1]]
        grid = np.unique(np.concatenate([grid, inside]))
        below = self._phi(grid) <= x
        F = _laplace_cdf(grid, q, b)
        total = F[0] * below[0] + (1.0 - F[-1]) * below[-1]
        both = below[:-1] & below[1:]
        total += np.sum((F[1:] - F[:-1])[both])
        for k in np.flatnonzero(below[:-1] != below[1:]):
            lo, hi = grid[k], grid[k + 1]
            # to 1e-14 of the scale (an absolute 1e-14 is wider than the whole law when b is tiny)
            r = optimize.brentq(
                lambda t: float(self._phi(t)) - x,
                lo,
                hi,
                xtol=max(1e-14 * b, 5e-324),
                maxiter=2000,
            )
            Fr = float(_laplace_cdf(r, q, b))
            total += (Fr - F[k]) if below[k] else (F[k + 1] - Fr)
        return min(max(total, 0.0), 1.0)

    def _logpdf(self, x, q):
        """Not available: the law of ``φ(Y_q)`` for a general ``φ`` has no computed density or atoms.

        Use ``cdf``, ``ppf`` (numerical) and ``at(q).expect`` (quadrature against the Laplace law).
        """
        raise NotImplementedError(
            "PostProcessed has no density: use cdf, ppf or at(q).expect"
        )

    def _atoms(self, q):
        """Not available (see :meth:`logpdf`)."""
        raise NotImplementedError(
            "PostProcessed has no computed atoms: use cdf, ppf or at(q).expect"
        )

    def _law_expect(self, func, q, lo, hi):
        """``E[func(φ(Y_q)); lo <= φ(Y_q) <= hi]`` as one integral against the Laplace law of ``Y_q``."""

        def g(x):
            y = self._phi(x)
            return np.where(
                (y >= lo) & (y <= hi), np.asarray(func(y), dtype=float), 0.0
            )

        return self._expect(g, q, unit=0.0)

    def _sample(self, q, shape, rng):
        return self._phi(rng.laplace(q, self.scale, size=shape))

    # --- the worst-case bias, certified ------------------------------------------------------
    def max_abs_bias(self, *, q_max=None, step=None):
        """``sup_{q >= 0} |bias(q)|`` (McGlinchey–Mason eq. (12)); see :meth:`certify_max_abs_bias`."""
        return self.certify_max_abs_bias(q_max=q_max, step=step).value

    def certify_max_abs_bias(self, *, q_max=None, step=None):
        """The worst-case bias with a certified bracket.

        Write ``m(q) = E φ(q + L_b) = A(q) + C(q)`` with ``A`` the contribution of ``x < q`` and ``C``
        of ``x > q``.  On a grid ``x_0 = 0 < … < x_N = q_max`` (cells cut at the breakpoints, width
        ``<= step``) these obey ``A_{i+1} = e^{-h/b} A_i + P_i``, ``C_i = e^{-h/b} C_{i+1} + R_i``, where
        ``P_i, R_i`` are integrals of ``φ`` over one cell (Gauss–Legendre, 12 nodes, with the 6-node
        rule's difference as error estimate).  For ``q`` inside cell ``i``, with ``s = q - x_i``,

        ``m(q) = A_i e^{-s/b} + C_{i+1} e^{-(h-s)/b} + I(q)``,  ``e^{-h/b} Φ_i <= I(q) <= Φ_i``,

        where ``Φ_i = (1/2b) ∫_cell φ`` — only ``φ >= 0`` is used.  Both bounds on ``bias = m - q`` are
        convex in ``q``, so the upper one peaks at a cell end and the lower one is least at a stationary
        point found in closed form.  The bracket is therefore rigorous up to the cell quadrature,
        and its width is ``O(φ h²/b²)``.

        Beyond ``q_max`` nothing is claimed, unless ``tail=(x0, c)`` was declared: then the bias is
        ``-c + K e^{-(q-x0)/b}`` for ``q >= x0``, monotone, so the supremum there is
        ``max(|bias(x0)|, |c|)`` exactly, and ``q_max`` defaults to ``max(x0, 0)``.

        Parameters
        ----------
        q_max : float, optional
            End of the checked range; default ``max(x0, 0)`` with a tail, else
            ``max(0, largest breakpoint) + 40 b``.
        step : float, optional
            Largest cell width; default ``b/500``.

        Returns
        -------
        BiasCertificate
        """
        b = self.scale
        if self.tail is not None:
            x0, c = self.tail
            q_max = max(x0, 0.0) if q_max is None else check.nonnegative("q_max", q_max)
            tail_exact = q_max >= x0
        else:
            q_max = (
                max([0.0, *self.breakpoints]) + 40 * b
                if q_max is None
                else check.nonnegative("q_max", q_max)
            )
            tail_exact = False
        step = b / 500 if step is None else check.positive("step", step)
        cells = q_max / step + len(self.breakpoints)
        need = (
            cells * 12 * 8 * 12
        )  # the cells' 12-node Gauss tables, about a dozen arrays of them
        if need > 2**30:
            raise ValueError(
                f"q_max/step = {q_max / step:.3g} cells would need ~{need / 2**30:.3g} GiB (limit 1 GiB); choose a larger step"  # noqa: E501
            )

        if q_max == 0.0:
            grid = np.array([0.0])
        else:
            cuts = [0.0] + [p for p in self.breakpoints if 0.0 < p < q_max] + [q_max]
            pieces = [
                np.linspace(a, z, max(1, math.ceil((z - a) / step)) + 1)[:-1]
                for a, z in zip(cuts[:-1], cuts[1:])
            ]
            grid = np.concatenate(pieces + [[q_max]])

        A0 = self._expect_side(grid[0], left=True)
        CN = self._expect_side(grid[-1], left=False)
        bias_grid, upper = self._grid_bracket(grid, A0, CN)
        k = int(np.argmax(np.abs(bias_grid)))
        value, argmax = float(abs(bias_grid[k])), float(grid[k])
        if tail_exact:
            end = abs(float(bias_grid[-1]))
            limit = abs(self.tail[1])
            if limit > value:
                value, argmax = limit, math.inf
            upper = max(upper, end, limit)
        return BiasCertificate(
            value, value, max(upper, value), argmax, (0.0, float(q_max)), tail_exact
        )

    def _expect_side(self, q, left):
        """``A(q)`` (``left``) or ``C(q)``: ``(1/2b) ∫ φ(x) e^{-|x-q|/b}`` over ``x < q`` or ``x > q``."""
        return self._expect(
            self._phi_at, q, unit=self.scale, side="left" if left else "right"
        )

    def _grid_bracket(self, grid, A0, CN):
        """Bias on the grid and a certified upper bound of ``|bias|`` between grid points."""
        b = self.scale
        if grid.size == 1:
            bias = np.array([A0 + CN - grid[0]])
            return bias, float(abs(bias[0]))
        left, right = grid[:-1], grid[1:]
        h = right - left
        decay = np.exp(-h / b)

        def cell_integrals(rule):
            nodes, weights = rule
            x = 0.5 * (left + right)[:, None] + 0.5 * h[:, None] * nodes[None, :]
            w = 0.5 * h[:, None] * weights[None, :] / (2 * b)
            y = self._phi(x) * w
            P = np.sum(y * np.exp(-(right[:, None] - x) / b), axis=1)
            R = np.sum(y * np.exp(-(x - left[:, None]) / b), axis=1)
            return P, R, np.sum(y, axis=1)

        P, R, Phi = cell_integrals(_GL_HI)
        P6, R6, Phi6 = cell_integrals(_GL_LO)
        eP, eR, ePhi = np.abs(P - P6), np.abs(R - R6), np.abs(Phi - Phi6)

        A = _recur(A0, decay, P)
        C = _recur(CN, decay[::-1], R[::-1])[::-1]
        eA = _recur(0.0, decay, eP)
        eC = _recur(0.0, decay[::-1], eR[::-1])[::-1]
        bias = A + C - grid

        Ai, Cj, slack = A[:-1], C[1:], eA[:-1] + eC[1:] + ePhi
        up = (
            np.maximum(Ai + Cj * decay + Phi - left, Ai * decay + Cj + Phi - right)
            + slack
        )
        a, cp = Ai / b, Cj * decay / b
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.where(cp > 0, (1 + np.sqrt(1 + 4 * a * cp)) / (2 * cp), np.inf)
            s = np.clip(b * np.log(y), 0.0, h)
        low = (
            Ai * np.exp(-s / b)
            + Cj * np.exp(-(h - s) / b)
            + decay * Phi
            - (left + s)
            - slack
        )
        upper = float(max(np.max(up), np.max(-low), np.max(np.abs(bias))))
        return bias, upper

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace base ``q + L_b`` with ``exact=False``.

        The law of ``φ(q + L_b)`` is not described for a general ``φ``; by the post-processing property
        the base's loss is an upper bound on its loss.
        """
        return laplace_description(self.scale, worst_pairs=corner_pairs(), exact=False)


# --- members of the cone V_+ (McGlinchey–Mason §5.1), as keyword arguments of PostProcessed ----------


def translated_ramp_phi(shift=0.0):
    """The translated ramp ``τ_α(x) = max(x - α, 0)`` (McGlinchey–Mason §4; ``α = 0`` is the ramp, eq. (4)).

    Returns the keyword arguments of :class:`PostProcessed`: ``phi``, ``breakpoints`` (where ``φ``
    kinks) and ``tail`` (``(x0, c)`` with ``φ(x) = x - c`` for ``x >= x0``).  :class:`TranslatedRamp` is
    the same law with closed forms.

    Parameters
    ----------
    shift : float
        ``α >= 0``.

    Examples
    --------
    >>> kw = translated_ramp_phi(0.5)
    >>> kw["phi"](np.array([0.0, 2.0])).tolist(), kw["breakpoints"], kw["tail"]
    ([0.0, 1.5], [0.5], (0.5, 0.5))
    """
    a = check.nonnegative("shift", shift)
    return {
        "phi": lambda x: np.maximum(np.asarray(x, dtype=float) - a, 0.0),
        "breakpoints": [a],
        "tail": (a, a),
    }


def softplus_phi(shift, width):
    """The softplus ``φ(x) = w log(1 + e^{(x - α)/w})``, a smooth member of McGlinchey–Mason's cone ``V_+`` (§5.1).

    It lies above the translated ramp ``τ_α`` by at most ``w log 2`` and tends to it as ``w → 0``; it
    has no kink and no exact linear tail (``tail`` is ``None``).

    Parameters
    ----------
    shift : float
        ``α >= 0``, the centre of the corner.
    width : float
        ``w > 0``, the width of the corner.

    Returns
    -------
    dict
        Keyword arguments of :class:`PostProcessed` (see :func:`translated_ramp_phi`).

    Examples
    --------
    >>> round(float(softplus_phi(0.0, 1.0)["phi"](0.0)), 12)  # log 2
    0.69314718056
    """
    a = check.nonnegative("shift", shift)
    w = check.positive("width", width)
    return {
        "phi": lambda x: w * np.logaddexp(0.0, (np.asarray(x, dtype=float) - a) / w),
        "breakpoints": [],
        "tail": None,
    }


def piecewise_linear_phi(shift, slope, offset):
    """A piecewise-linear ``φ`` in McGlinchey–Mason's cone ``V_+`` (§5.1) that stays at 0 and then catches up.

    ``φ = 0`` up to ``a = shift``, then slope ``s = slope > 1`` until it meets the line ``x - c``
    (``c = offset``, ``0 <= c <= a``) at ``x_1 = (s a - c)/(s - 1)``, and ``x - c`` beyond.  It is
    ``s τ_a - (s - 1) τ_{x_1}``, a combination of translated ramps.

    Parameters
    ----------
    shift : float
        ``a >= 0``, where ``φ`` leaves zero.
    slope : float
        ``s > 1``, the slope of the catch-up piece.
    offset : float
        ``c`` in ``[0, shift]``, the lag behind the identity for large ``x``.

    Returns
    -------
    dict
        Keyword arguments of :class:`PostProcessed` (see :func:`translated_ramp_phi`).

    Examples
    --------
    >>> kw = piecewise_linear_phi(1.0, 3.0, 0.5)
    >>> [round(float(v), 12) for v in kw["phi"](np.array([0.0, 1.2, 2.0]))], kw["breakpoints"], kw["tail"]
    ([0.0, 0.6, 1.5], [1.0, 1.25], (1.25, 0.5))
    """
    a = check.nonnegative("shift", shift)
    s = check.finite("slope", slope)
    if not s > 1:
        raise ValueError(f"slope must be > 1, got {slope!r}")
    c = check.nonnegative("offset", offset)
    if c > a:
        raise ValueError(f"offset must be <= shift = {a!r}, got {offset!r}")
    x1 = max(
        (s * a - c) / (s - 1), a
    )  # = a exactly when c = a (rounding could put it below)

    def piecewise(x):
        # the quadratures' one point at a time: the same arithmetic, without arrays
        if isinstance(x, float):
            return x - c if x >= x1 else s * max(x - a, 0.0)
        x = np.asarray(x, dtype=float)
        return np.where(x >= x1, x - c, s * np.maximum(x - a, 0.0))

    return {"phi": piecewise, "breakpoints": [a, x1], "tail": (x1, c)}


def _recur(start, factor, increment):
    """``v_0 = start``, ``v_{i+1} = factor_i v_i + increment_i``."""
    out = np.empty(len(increment) + 1)
    out[0] = start
    if np.all(factor == factor[0]):
        out[1:] = signal.lfilter(
            [1.0], [1.0, -factor[0]], increment, zi=[factor[0] * start]
        )[0]
    else:
        v = start
        for i, (f, inc) in enumerate(zip(factor, increment)):
            v = f * v + inc
            out[i + 1] = v
    return out
