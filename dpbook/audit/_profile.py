"""The exact hockey-stick divergence between the laws of two true values: :func:`pair_profile`.

For true values ``q1``, ``q2`` and ``ε >= 0`` the divergence

    δ(ε) = sup_S P(M(q1) ∈ S) - e^ε P(M(q2) ∈ S)
         = ∫ (p1 - e^ε p2)_+ dt + Σ_atoms (m1 - e^ε m2)_+

is the δ of the pair at ε (the pair is (ε, δ)-indistinguishable in this direction exactly when
``δ >= δ(ε)``).  It is computed from the mechanism's :class:`~dpbook.PrivacyDescription` alone, in
closed form: in the output coordinate ``t`` the log-ratio ``L(t) = log p1(t) - log p2(t)`` is linear
between its kinks (the two centres of a Laplace kernel; none for a Gaussian kernel of one scale), so on
each linear segment of each piece the set ``{L > ε}`` is an interval found by solving a linear
equation, and its two masses are Laplace (normal) masses of an interval.  A segment contributes

    P1(A) (1 - e^x),   x = ε + log P2(A) - log P1(A) <= 0,

written with ``-expm1(x)`` and, for the Laplace kernel, with ``x`` computed from the log-ratio at an end
of ``A`` and the exact ratio of two exponential integrals (``x`` is then exact where ``L`` is constant,
the regime of close pairs), so nothing cancels: a δ of ``1e-300`` keeps its digits, and scales of
``1e±300`` neither overflow nor underflow.  The output coordinate may be ``t = log x``
(``log_output``): the divergence does not change under a bijection of the outputs.

Every step carries a bound on its rounding error, so the computation gives an interval
``[lower, upper]`` holding the divergence; :func:`pair_profile` returns ``upper`` (privacy numbers never
err low).  Its width is a few dozen ulps of each term involved, relative to the divergence: about
``1e-12`` for ε away from the pair's loss, wider as ε nears it (the set ``{L > ε}`` shrinks, and δ is
that sensitive to the rounding of the description's numbers).  From the pair's loss on (the auditor's
certified upper bound, :func:`dpbook.pair_loss`) the divergence is exactly 0.

An integer-valued law (a :class:`~dpbook.DiscreteDescription`) with a finite support is summed over every
output, each term ``m1 (1 - e^{ε - r})`` from the family's accurate log-ratio ``r``; one with an infinite
support is not covered yet (``NotImplementedError``).

:func:`privacy_profile` takes the supremum over neighbouring true values (δ(ε) of the mechanism): for a
kernel of one scale the worst pair is on the edge ``|q1 - q2| = Δ``, and the supremum along it is a
certified branch and bound whose cells are bounded by monotonicity, translation, curvature and, for a clamp,
the kernel's own divergence (see its docstring); :func:`epsilon_for_delta` inverts it on the upper side.
This module imports numpy and scipy only.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _identity
from .._kernels.gaussian import _GL16, _K, _LOG_SQRT_2PI, _log_normal_mass
from .._kernels.laplace import _piece_log_mass
from ._discrete import discrete_pair_loss
from ._search import (
    _MAX_PAIRS,
    _edge_grid,
    _interval,
    _log_norm_ratio,
    _pair,
    describe,
    privacy_loss,
)
from .description import PrivacyDescription

__all__ = ["epsilon_for_delta", "pair_profile", "privacy_profile"]


#: (segments x ε values) evaluated at once (bounded memory)
_CHUNK = 2**16


def pair_profile(mechanism, q1, q2, epsilon):
    """The exact hockey-stick divergence of the laws of two true values: δ(ε) of the pair.

    ``δ(ε) = sup_S P(M(q1) ∈ S) - e^ε P(M(q2) ∈ S)``: the integral of ``(p1 - e^ε p2)_+`` over the
    outputs plus the sum of ``(m1 - e^ε m2)_+`` over the point masses.  It is nonincreasing in ε, equals
    the total variation distance at ``ε = 0``, vanishes from ``ε = pair_loss(mechanism, q1, q2)`` on, and at
    ``ε = inf`` is the mass ``M(q1)`` puts where ``M(q2)`` has none.  Not symmetric: swap the arguments for
    the other direction.

    Computed in closed form from the mechanism's :class:`PrivacyDescription` (the log-ratio of the two
    densities is linear between its kinks, so the set where it exceeds ε is a union of intervals found
    exactly), in log space, with every rounding error bounded: the value returned is an upper bound of δ(ε),
    never less than it, above it by at most a rounding allowance: about ``1e-12`` relative for ε away from
    the pair's loss, growing like ``1/(loss - ε)`` near it, where δ(ε) itself is that sensitive to the
    rounding of the description's numbers (tested below ``1e-9`` relative at random ε).

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism whose ``privacy_description()`` describes its law exactly: a
        :class:`PrivacyDescription` with ``exact=True``, or a :class:`DiscreteDescription` with a finite
        support (summed over every output).
    q1, q2 : float
        The two true values (integers for an integer-valued family).
    epsilon : float or array_like
        ``ε >= 0`` (``inf`` allowed); the result has its shape.

    Returns
    -------
    float or ndarray
        δ(ε), rounded upwards.

    Raises
    ------
    ValueError
        For an ``epsilon`` that is negative, NaN or not a real number, for true values that are not
        finite (or not positive for a positive family), and for more ε values than can be computed in
        about a minute.
    NotImplementedError
        For a description that is not exact (the base of a post-processing, whose profile bounds the
        mechanism's only from above) and for an integer-valued law with an infinite support (a
        :class:`DiscreteDescription` is summed over every output of a finite support, exactly).

    Examples
    --------
    >>> from dpbook import Laplace
    >>> delta = pair_profile(Laplace(1.0), 0.0, 1.0, [0.0, 0.5, 1.0])
    >>> [round(float(d), 6) for d in delta]  # 1 - e^{(ε - 1)/2} below ε = 1
    [0.393469, 0.221199, 0.0]
    """
    upper, _ = _pair_profile_bounds(mechanism, q1, q2, epsilon)
    return float(upper) if upper.ndim == 0 else upper


def _pair_profile_bounds(mechanism, q1, q2, epsilon):
    """``(upper, lower)``: arrays shaped like ``epsilon`` with ``lower <= δ(ε) <= upper``."""
    desc = describe(mechanism)
    name = type(mechanism).__name__
    if not desc.exact:
        raise NotImplementedError(
            f"the law of {name} is not described exactly (its description is the base of a "
            "post-processing, whose profile is only an upper bound); pair_profile computes exact "
            "profiles only"
        )
    if not isinstance(desc, PrivacyDescription):
        return _discrete_bounds(desc, q1, q2, _epsilon(epsilon), name)
    q1, q2 = check.finite("q1", q1), check.finite("q2", q2)
    for label, q in (("q1", q1), ("q2", q2)):
        if desc.positive and q <= 0:
            raise ValueError(f"{label} must be > 0 for {name}, got {q!r}")
    return _continuous_bounds(desc, q1, q2, _epsilon(epsilon))


def _continuous_bounds(desc, q1, q2, eps, loss=None):
    """``(upper, lower)`` of one pair's divergence for a validated exact :class:`PrivacyDescription` (``loss``:
    the pair's audited loss, when already computed with others)."""
    segments = len(desc.pieces) * (3 if desc.shape == "laplace" else 1) + len(
        desc.atoms
    )
    if eps.size * segments > _MAX_PAIRS:
        raise ValueError(
            f"epsilon: {eps.size} values on {segments} segments would take more than a minute; "
            "pass fewer values"
        )
    flat = eps.ravel()
    if q1 == q2:
        zero = np.zeros(eps.shape)
        return zero, zero
    # the description's callables may overflow to the infinities they mean (a true value 1e300 scales of
    # 1e-300 from a bound): errstate covers them, and everything here reads an inf as what it is
    with np.errstate(over="ignore", under="ignore"):
        value, err = _density(desc, q1, q2, flat)
        a_value, a_err = _atoms(desc, q1, q2, flat)
    value = value + a_value
    err = err + a_err + 4 * np.finfo(float).eps * value
    with np.errstate(over="ignore"):
        upper = np.minimum(np.nextafter(value + err, np.inf), 1.0)
        lower = np.maximum(np.nextafter(value - err, -np.inf), 0.0)
    # from the pair's (finite) privacy loss on, the auditor's certified upper bound, δ is exactly 0
    if loss is None:
        loss = _pair_losses(desc, [(q1, q2)])[0]
    dead = ((flat >= loss) & math.isfinite(loss) & (loss >= 0)) | (value + err == 0)
    upper, lower = np.where(dead, 0.0, upper), np.where(dead, 0.0, lower)
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


def _pair_losses(desc, pairs):
    """The auditor's certified loss of each pair, in one vectorized call."""
    q1, q2 = (np.array(v, dtype=float) for v in zip(*pairs))
    with np.errstate(
        all="ignore"
    ):  # (its Gaussian branch divides by s^2, 0 for s = 1e-300)
        return [float(v) for v in _pair(desc, q1, q2, (-math.inf, math.inf))[0]]


def _epsilon(epsilon):
    eps = check.real_array("epsilon", epsilon)
    if (eps < 0).any():
        raise ValueError(
            f"epsilon must be >= 0 (a finite number or inf), got {check._short_repr(epsilon)}"
        )
    return eps


# --- the densities ---------------------------------------------------------------------------------


def _density(desc, q1, q2, eps):
    """``(Σ over segments of ∫_A (p1 - e^ε p2), a bound on its rounding error)`` for finite ε (0 at inf)."""
    value = np.zeros(eps.shape)
    err = np.zeros(eps.shape)
    finite = np.isfinite(
        eps
    )  # at ε = inf the densities (positive on every piece) add nothing
    if not finite.any() or not desc.pieces:
        return value, err
    m1, m2 = float(desc.center(q1)), float(desc.center(q2))
    s1, s2 = float(desc.scale(q1)), float(desc.scale(q2))
    n1 = float(desc.log_norm(q1)) if desc.log_norm is not None else 0.0
    nr, nr_err = (float(v) for v in _log_norm_ratio(desc, q1, q2))
    centre_err = (
        0.0
        if desc.center is _identity
        else float(np.spacing(abs(m1)) + np.spacing(abs(m2)))
    )
    evaluate, size = (
        _laplace_parts(desc, m1, m2, s1, s2, n1, nr, nr_err, centre_err)
        if desc.shape == "laplace"
        else _gauss_parts(desc, m1, m2, s1, n1, nr, nr_err, centre_err)
    )
    e = eps[finite]
    step = max(1, _CHUNK // max(size, 1))
    v_out, e_out = np.zeros(e.shape), np.zeros(e.shape)
    for i in range(0, e.size, step):
        v, r = evaluate(e[i : i + step])
        v_out[i : i + step], e_out[i : i + step] = v, r
    value[finite], err[finite] = v_out, e_out
    return value, err


def _laplace_parts(desc, m1, m2, s1, s2, n1, nr, nr_err, centre_err):
    """Laplace kernels: offsets ``y = t - m1`` (exact differences of close doubles); kinks at ``0``, ``y2``."""
    with np.errstate(over="ignore", invalid="ignore"):
        y2 = m2 - m1
        uniform = s1 == s2
        lc = (0.0 if uniform else math.log(s2) - math.log(s1)) + nr
        lc_err = nr_err + (
            0.0 if uniform else _K * (abs(math.log(s1)) + abs(math.log(s2)))
        )
        rows = []
        for a, b in sorted(desc.pieces):
            ya, yb = a - m1, b - m1
            cuts = sorted(k for k in {0.0, y2} if ya < k < yb)
            ends = [ya] + cuts + [yb]
            for u, v in zip(ends[:-1], ends[1:]):
                if not u < v:
                    continue
                mid = u if math.isinf(v) else (v if math.isinf(u) else 0.5 * (u + v))
                sig1 = 1.0 if mid > 0 or (mid == 0 and u >= 0) else -1.0
                sig2 = 1.0 if mid > y2 or (mid == y2 and u >= y2) else -1.0
                # the anchor: the finite end nearest a centre (L is evaluated there)
                finite_ends = [x for x in (u, v) if math.isfinite(x)]
                r = min(finite_ends, key=lambda x: min(abs(x), abs(x - y2)))
                if (
                    uniform and sig1 == sig2
                ):  # L is constant: σ(m1 - m2)/s + const, exactly
                    lr = -sig1 * y2 / s1 + lc
                    lr_err = _K * (abs(y2) / s1 + abs(lc) + abs(lr)) + lc_err
                else:
                    d1, d2 = abs(r) / s1, abs(r - y2) / s2
                    lr = d2 - d1 + lc
                    lr_err = _K * (d1 + d2 + abs(y2) / s2 + abs(lc) + abs(lr)) + lc_err
                lr_err += centre_err * (1 / s1 + 1 / s2)
                beta = -sig1 / s1 + sig2 / s2
                rows.append((u, v, sig1, sig2, r, lr, lr_err, beta))
    cols = np.array(rows, dtype=float).reshape(-1, 8).T[:, :, None]
    u, v, sig1, sig2, r, lr, lr_err, beta = cols

    def evaluate(eps):
        e = eps[None, :]
        with np.errstate(
            over="ignore", invalid="ignore", divide="ignore", under="ignore"
        ):
            cut = r + (e - lr) / np.where(beta == 0, 1.0, beta)
            lo = np.where(beta > 0, np.maximum(u, cut), u)
            hi = np.where(beta < 0, np.minimum(v, cut), v)
            cut_in = ((beta > 0) & (cut > u)) | ((beta < 0) & (cut < v))
            live = (lo < hi) & ((beta != 0) | (lr > e))
            lo, hi = np.where(live, lo, 0.0), np.where(live, hi, 1.0)
            ref_low = np.where(cut_in, beta > 0, r == u)
            g = np.where(cut_in, 0.0, e - lr)
            w = hi - lo
            # log-slopes of p1, p2 going from the reference end into A
            direction = np.where(ref_low, 1.0, -1.0)
            rho1, rho2 = direction * -sig1 / s1, direction * -sig2 / s2
            up = np.maximum(rho2, 0.0) - np.maximum(rho1, 0.0)
            h = np.where(up == 0, 0.0, up * w)
            if s1 != s2:
                h = h + (_log_exp_integral(w, s2) - _log_exp_integral(w, s1))
            x_raw = g + h
            x = np.minimum(x_raw, 0.0)
            lam_raw = _piece_log_mass(0.0, s1, lo, hi)
            lam = lam_raw - n1
            c = np.exp(lam + np.log(-np.expm1(x)))
            # rounding allowances: of x (the log-ratio at the reference end, the cut, h) and of log P1(A)
            g_err = np.where(
                cut_in,
                lr_err + _K * (e + abs(lr) + np.abs(beta) * (np.abs(cut) + np.abs(r))),
                lr_err + _K * e,
            )
            h_err = _K * (
                np.abs(h)
                + (np.abs(rho1) + np.abs(rho2)) * np.where(np.isfinite(w), w, 0.0)
            )
            if s1 != s2:
                h_err = h_err + _K * (
                    np.abs(_log_exp_integral(w, s1)) + np.abs(_log_exp_integral(w, s2))
                )
            x_err = g_err + h_err
            lam_err = _K * (2.0 + np.abs(lam_raw) + abs(n1))
            c_err = _product_error(c, lam, x, lam_err, x_err)
            # a piece end or kink (a rounded offset) moves by `move`: the contribution changes by the
            # integrand p1 (1 - e^{ε - L}) there, plus a second-order term (cut ends move nothing: 0 there)
            for end, is_cut in ((lo, cut_in & (beta > 0)), (hi, cut_in & (beta < 0))):
                fin = np.isfinite(end) & ~is_cut
                y = np.where(fin, end, 0.0)
                move = _K * np.abs(y) + centre_err
                d1, d2 = np.abs(y) / s1, np.abs(y - y2) / s2
                gap = e - (d2 - d1 + lc)
                gap_err = _K * (d1 + d2 + abs(lc) + e) + lc_err
                p1 = np.exp(-d1 - math.log(2 * s1) - n1)
                up_gap = np.exp(np.minimum(gap + gap_err, 700.0))
                f = np.abs(np.expm1(gap)) + 2 * gap_err * up_gap
                c_err = c_err + np.where(
                    fin, move * p1 * f + move * move * p1 * (1 / s1 + up_gap / s2), 0.0
                )
            return _live_sums(c, c_err, live & (x_raw < x_err))

    return evaluate, u.shape[0]


def _live_sums(c, c_err, live):
    """The sums over axis 0 of the contributions ``c`` and their error bounds ``c_err`` where ``live`` (the
    computed ``x`` is below its error bound: elsewhere the true ``x >= 0`` and the segment or piece adds exactly
    nothing); an error bound is at most 2, NaN included."""
    c = np.where(live, c, 0.0)
    c_err = np.where(live, np.minimum(np.nan_to_num(c_err, nan=2.0), 2.0), 0.0)
    return c.sum(axis=0), c_err.sum(axis=0)


def _product_error(c, lam, x, lam_err, x_err):
    """A bound on the error of ``c = e^lam (1 - e^x)`` when ``lam`` and ``x`` are off by at most ``lam_err``
    and ``x_err``: ``c (e^{lam_err} - 1) + e^{lam + x + lam_err} (e^{x_err} - 1)``, the second term in log
    space (``e^{x}`` may underflow where ``e^{x_err}`` overflows)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        x_err = np.asarray(x_err, dtype=float)
        log_expm1 = np.where(
            x_err > 1.0, x_err + np.log(-np.expm1(-x_err)), np.log(np.expm1(x_err))
        )
        second = np.exp(lam + x + lam_err + log_expm1)
        first = np.where(c == 0, 0.0, c * np.expm1(lam_err))
        return first + np.where(np.isnan(second), np.inf, second)


def _log_exp_integral(w, s):
    """``log ∫_0^w e^{-y/s} dy = log s + log(1 - e^{-w/s})``."""
    return math.log(s) + np.log(-np.expm1(-w / s))


def _gauss_parts(desc, m1, m2, s, n1, nr, nr_err, centre_err):
    """Gaussian kernels of one scale: ``z = (t - m1)/s``; ``L = δm (z + δm/2) + nr`` is linear on each piece."""
    with np.errstate(over="ignore", invalid="ignore"):
        dm = (m1 - m2) / s
        dm_err = _K * abs(dm) + centre_err / s
        rows = [((a - m1) / s, (b - m1) / s) for a, b in sorted(desc.pieces)]
    cols = np.array(rows, dtype=float).reshape(-1, 2).T[:, :, None]
    za, zb = cols

    def evaluate(eps):
        e = eps[None, :]
        with np.errstate(
            over="ignore", invalid="ignore", divide="ignore", under="ignore"
        ):
            cut = (e - nr) / (dm if dm != 0 else 1.0) - 0.5 * dm
            lo, hi = za + 0 * e, zb + 0 * e
            if dm > 0:
                lo = np.maximum(za, cut)
            elif dm < 0:
                hi = np.minimum(zb, cut)
            # a cut end is any point near the root: the contribution is computed for the interval it
            # bounds, and moving it changes the contribution to second order only (the integrand is 0 there)
            piece_lo, piece_hi = lo == za, hi == zb
            live = (lo < hi) & ((dm != 0) | (nr > e))
            lo, hi = np.where(live, lo, 0.0), np.where(live, hi, 1.0)
            lam_raw, e1 = _log_normal_mass(lo, hi)
            lam2_raw, e2 = _log_normal_mass(lo + dm, hi + dm)
            x_raw = e - nr + (lam2_raw - lam_raw)
            x_err = e1 + e2
            # short intervals: x = ε - L(ref) + h from the end of least log-ratio (the cut, if any)
            ref = hi if dm < 0 else lo
            cut_in = (
                ~(piece_lo if dm > 0 else piece_hi)
                if dm != 0
                else np.zeros(lo.shape, bool)
            )
            g = np.where(cut_in, 0.0, e - (dm * (ref + 0.5 * dm) + nr))
            short, h = _gauss_short_h(lo, hi, ref, dm)
            x_raw = np.where(short, g + h, x_raw)
            x_err = np.where(
                short,
                _K * (np.abs(h) + abs(dm) * (np.abs(ref) + abs(dm)))
                + dm_err * (np.abs(ref) + abs(dm) + (hi - lo)),
                x_err,
            )
            x = np.minimum(x_raw, 0.0)
            lam = lam_raw - n1
            c = np.exp(lam + np.log(-np.expm1(x)))
            reach = np.zeros(
                c.shape
            )  # largest finite |z + δm| over A: |d log P2/dδm| <= reach + 1
            for end in (lo, hi):
                fin = np.isfinite(end)
                reach = np.maximum(
                    reach, np.where(fin, np.abs(np.where(fin, end, 0.0) + dm), 0.0)
                )
            x_err = x_err + _K * (e + abs(nr)) + nr_err + dm_err * (reach + 1.0)
            lam_err = e1 + _K * (1.0 + abs(n1))
            c_err = _product_error(c, lam, x, lam_err, x_err)
            # a piece end (a rounded offset) moves by `move`: the contribution changes by the integrand
            # p1 (1 - e^{ε - L}) there, plus a second-order term (cut ends move nothing: it is 0 there)
            for end, piece in ((lo, piece_lo), (hi, piece_hi)):
                fin = np.isfinite(end) & piece
                z = np.where(fin, end, 0.0)
                move = _K * np.abs(z) + centre_err / s
                gap = e - (dm * (z + 0.5 * dm) + nr)
                gap_err = (
                    _K * (abs(dm) * (np.abs(z) + abs(dm)) + abs(nr) + e)
                    + nr_err
                    + dm_err * (np.abs(z) + abs(dm))
                )
                p1 = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - n1)
                up_gap = np.exp(np.minimum(gap + gap_err, 700.0))
                f = np.abs(np.expm1(gap)) + 2 * gap_err * up_gap
                slope = (np.abs(z) + abs(dm) + 1.0) * (1.0 + up_gap)
                c_err = c_err + np.where(
                    fin, move * p1 * f + move * move * p1 * slope, 0.0
                )
            return _live_sums(c, c_err, live & (x_raw < x_err))

    return evaluate, za.shape[0]


def _gauss_short_h(lo, hi, ref, dm):
    """``(short, h)`` with ``h = log E[e^{-δm (Z - ref)}]`` for ``Z`` standard normal conditioned on ``[lo, hi]``,
    on short intervals (``w <= 1``, ``|z0| w <= 1``): 16-point Gauss–Legendre, written as ``log1p`` of a mean
    of ``expm1`` terms, so ``h`` keeps its relative accuracy however small it is (``x = ε - L(ref) + h``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = hi - lo
        z0 = np.where(hi < 0, hi, np.where(lo > 0, lo, 0.0))
        short = (w <= 1.0) & (np.abs(z0) * w <= 1.0)
        nodes, weights = _GL16
        ws = np.where(short, w, 1.0)[..., None]
        zs = np.where(short, lo, 0.0)[..., None] + 0.5 * ws * (1.0 + nodes)
        zz = np.where(short, z0, 0.0)[..., None]
        f = weights * np.exp(-0.5 * (zs - zz) * (zs + zz))
        t = np.expm1(-dm * (zs - np.where(short, ref, 0.0)[..., None]))
        h = np.log1p(np.sum(f * t, axis=-1) / np.sum(f, axis=-1))
    return short, h


# --- integer-valued laws ----------------------------------------------------------------------------


def _discrete_bounds(desc, q1, q2, eps, name):
    """``(upper, lower)`` for a :class:`DiscreteDescription` with a finite support: the exact sum of
    ``(m1 - e^ε m2)_+ = m1 (1 - e^{ε - r})`` over every output ``k`` where the log-ratio ``r`` (the family's
    accurate ``log_ratio``) exceeds ε."""
    why = f" for the integer-valued {name}"
    q1 = float(check.integer_array("q1", q1, why=why))
    q2 = float(check.integer_array("q2", q2, why=why))
    lo, hi = desc.support
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise NotImplementedError(
            f"pair_profile sums over the outputs of an integer-valued law with a finite support only; "
            f"{name} has support {desc.support!r}"
        )
    n_out = hi - lo + 1
    if n_out * max(eps.size, 1) > _MAX_PAIRS:
        raise ValueError(
            f"epsilon: {eps.size} values over {n_out:.0f} outputs would take more than a minute; "
            "pass fewer values"
        )
    if q1 == q2:
        zero = np.zeros(eps.shape)
        return zero, zero
    k = np.arange(lo, hi + 1.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        l1 = np.asarray(desc.logpmf(k, q1), dtype=float)
        r = np.asarray(desc.log_ratio(k, q1, q2), dtype=float)
        flat = eps.ravel()[:, None]
        value = np.zeros(flat.shape[0])
        err = np.zeros(flat.shape[0])
        missing = (r == np.inf) & (l1 > -np.inf)  # M(q1) lands here, M(q2) never
        alone = float(np.sum(np.exp(l1[missing])))
        value, err = (
            value + alone,
            err + _K * float(np.sum((1 + np.abs(l1[missing])) * np.exp(l1[missing]))),
        )
        keep = np.isfinite(r) & (l1 > -np.inf)
        l1k, rk = l1[keep][None, :], r[keep][None, :]
        x_raw = flat - rk
        x = np.minimum(x_raw, 0.0)
        c = np.exp(l1k + np.log(-np.expm1(x)))
        # the family's log_ratio is accurate relative to itself (also for close laws)
        x_err = _K * np.abs(rk) + 2 * np.spacing(np.abs(np.nan_to_num(x_raw)))
        l_err = _K * (1.0 + np.abs(l1k))
        c_err = np.minimum(_product_error(c, l1k, x, l_err, x_err), 2.0)
        dead = np.isinf(flat) | (x_raw >= x_err)
        value = value + np.sum(np.where(dead, 0.0, c), axis=1)
        err = (
            err
            + np.sum(np.where(dead, 0.0, c_err), axis=1)
            + 4 * np.finfo(float).eps * value
        )
        upper = np.minimum(np.nextafter(value + err, np.inf), 1.0)
        lower = np.maximum(np.nextafter(value - err, -np.inf), 0.0)
    # from the pair's (finite) loss on, the auditor's exact maximum over the outputs, δ is exactly 0
    loss = float(discrete_pair_loss(desc, q1, q2, None, name))
    zero = (value + err == 0) | ((eps.ravel() >= loss) & (loss < math.inf))
    upper, lower = np.where(zero, 0.0, upper), np.where(zero, 0.0, lower)
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


# --- the atoms -------------------------------------------------------------------------------------


def _atoms(desc, q1, q2, eps):
    """``(Σ_atoms (m1 - e^ε m2)_+, a bound on its rounding error)``."""
    value = np.zeros(eps.shape)
    err = np.zeros(eps.shape)
    for atom in desc.atoms:
        logmass = atom[1]
        l1, l2 = float(logmass(q1)), float(logmass(q2))
        if l1 == -math.inf:
            continue
        if (
            l2 == -math.inf
        ):  # M(q1) lands here, M(q2) never: all of m1 counts at every ε
            value = value + math.exp(l1)
            err = err + _K * (1.0 + abs(l1)) * math.exp(l1)
            continue
        diff, d_err = l1 - l2, 4 * float(np.spacing(abs(l1)) + np.spacing(abs(l2)))
        if len(atom) > 2:  # the accurate ratio, where it gives a number
            out = atom[2](q1, q2)
            fine, f_err = (
                out if isinstance(out, tuple) else (out, 4 * np.spacing(abs(out)))
            )
            fine, f_err = float(fine), float(f_err)
            if not (math.isnan(fine) or math.isnan(f_err)):
                diff, d_err = fine, f_err
        with np.errstate(
            over="ignore", invalid="ignore", divide="ignore", under="ignore"
        ):
            x_raw = eps - diff
            x = np.minimum(x_raw, 0.0)
            c = np.exp(l1 + np.log(-np.expm1(x)))
            x_err = d_err + 2 * np.spacing(np.abs(x_raw))
            l_err = _K * (1.0 + abs(l1))
            c_err = _product_error(c, l1, x, l_err, x_err)
            dead = np.isinf(eps) | (x_raw >= x_err)
            c, c_err = np.where(dead, 0.0, c), np.where(dead, 0.0, c_err)
        value, err = value + c, err + np.minimum(c_err, 2.0)
    return value, err


# --- the privacy profile: the supremum over neighbouring pairs ---------------------------------------

#: pair evaluations the certified search over the edge may spend before it reports the bound it reached
_PROFILE_BUDGET = 1024

#: the search stops refining a cell once its bound is within this of the best pair found (relative)
_PROFILE_RTOL = 1e-4

#: integer pairs of true values an integer-valued family's profile may enumerate
_MAX_INTEGER_PAIRS = 2**12


def privacy_profile(mechanism, sensitivity, epsilon, *, domain=None):
    """The privacy profile of ``mechanism``: δ(ε), the smallest δ for which it is (ε, δ)-DP.

    ``δ(ε) = sup pair_profile(mechanism, q1, q2, ε)`` over true values ``q1, q2`` in ``domain`` with
    ``|q1 - q2| <= Δ``, both directions: the largest hockey-stick divergence of two neighbouring laws.  It
    is nonincreasing in ε, and 0 from ``ε = privacy_loss(mechanism, Δ)`` on.

    Method.  The worst pair comes from the family's :class:`PrivacyDescription`: a kernel of one scale
    (``uniform``, Laplace or Gaussian) whose centre is ``q`` plus a constant, conditioned on the pieces or
    with the mass outside them held by atoms beyond them.  *Reduction to the edge.*  For ``q1 < q2`` the
    log-ratio of the two laws is nonincreasing in the output (kernel of one scale; the atoms are the
    kernel's masses beyond the support), so the optimal set ``{L > ε}`` is a half-line and
    ``H(q1, q2) = sup_τ F_{q1}(τ) - e^ε F_{q2}(τ)``; the same monotone ratio gives ``F_{q'} <= F_q`` for
    ``q' >= q``, so moving ``q2`` up or ``q1`` down can only raise ``H``: the supremum is on the edge,
    ``δ(ε) = sup_u max(H(u, u + Δ), H(u + Δ, u))`` over ``u`` in ``[lo, hi - Δ]`` (the pair ``(lo, hi)`` when the
    domain is shorter than ``Δ``).  *Certified supremum over u.*  On a cell ``[a, b]`` of ``u`` (``h = b - a``)
    four bounds hold, each proved from the same hypotheses: (i) the monotonicity above gives
    ``H(u, u + Δ) <= H(a, b + Δ)``; (ii) the law of ``M(u) - u`` differs from that of ``M(a) - a`` by at most
    ``D`` in total variation (one minus the kernel's mass of the pieces cut short by ``h`` over its mass of
    the pieces reached ``h`` further: 0 where the law only translates), and a half-line's probabilities
    move by at most that, so ``H(u, u + Δ) <= H(a, a + Δ) + D + e^ε D'`` (``D'`` for ``u + Δ``); (iii) for a
    fixed half-line ``(-inf, τ]`` of outputs ``F_u(τ)`` has a second derivative in ``u`` bounded by sums of
    the kernel and its slope at the piece ends and ``τ`` over the normalizer, so each direction is at most
    its larger end value plus ``(K + e^ε K') h^2/8``; (iv) a kernel whose outside mass the atoms hold (a
    clamp) is a post-processing of ``q + Z``, so no pair exceeds the kernel's own divergence at ``Δ``.
    The cells start at the landmarks of the auditor's search along the edge (``privacy_loss``); cells
    running off to infinity use the kernel itself (every law is within its outside mass of it in every
    half-line) and the mass an end atom keeps.  Cells whose bound exceeds the best pair found by more than
    ``1e-4`` of it are halved, the worst first, within a budget of about ``1024`` pair evaluations.  The
    value returned is the largest bound of any cell (and of any pair evaluated): never below δ(ε).  Its
    slack, the distance to the best pair found, is :func:`pair_profile`'s rounding allowance (``~1e-12``
    relative) for Laplace, Gaussian and clamped (``BIT``-like) laws (a clamped Gaussian near its loss:
    up to ``4e-2`` relative, ``2e-6`` absolute); for a truncation or normalization the search usually ends
    at the budget: measured ``~1e-4`` relative for a few ε; for 49 ε spread over ``[0, loss)`` a median of
    ``5e-4`` to ``3e-2`` relative and at most ``2e-3`` absolute, the relative slack growing to order 1
    within 2% of the loss, where δ is tiny (``_privacy_profile_bounds`` gives the bounds).  At
    ``ε >=`` the audited loss the value is exactly 0.  An integer-valued family with a finite support and a
    finite domain is summed over every integer pair of the domain: exact.

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism whose law its description gives exactly (see :func:`pair_profile`).
    sensitivity : float
        ``Δ > 0``: true values at most ``Δ`` apart are neighbours.
    epsilon : float or array_like
        ``ε >= 0`` (``inf`` allowed); the result has its shape.
    domain : (float, float), optional
        The closed interval of true values (ends may be infinite); default ``mechanism.domain``.

    Returns
    -------
    float or ndarray
        δ(ε), an upper bound never below it (see Method for its slack).

    Raises
    ------
    ValueError
        For a ``sensitivity``, ``epsilon`` or ``domain`` that is not valid, naming it and its value.
    NotImplementedError
        Where the reduction to the edge is not proved: a scale that varies with the true value
        (:class:`dpbook.CroftLaplace`), a centre that is not the true value plus a constant
        (:class:`dpbook.LogLaplace`), a description that is not exact (a post-processing), atoms inside
        the density's range or with a normalized density; an integer-valued law with an infinite support
        or domain.

    Examples
    --------
    >>> from dpbook import Laplace
    >>> delta = privacy_profile(Laplace(1.0), 1.0, [0.0, 0.5, 1.0])
    >>> [round(float(d), 6) for d in delta]  # 1 - e^{(ε - Δ/b)/2}
    [0.393469, 0.221199, 0.0]
    """
    upper, _ = _privacy_profile_bounds(mechanism, sensitivity, epsilon, domain=domain)
    return float(upper) if upper.ndim == 0 else upper


def epsilon_for_delta(mechanism, sensitivity, delta, *, domain=None):
    """The smallest ε at which ``mechanism`` is (ε, δ)-DP: the inverse of :func:`privacy_profile`.

    δ(ε) is nonincreasing, so the answer is found by bracketing on ε; the value returned is on the upper
    side: ``privacy_profile(mechanism, sensitivity, ε) <= delta`` at the returned ε (so the mechanism is
    (ε, δ)-DP there, certified), within ``1e-10`` relative of the smallest ε where the certified profile
    drops to ``delta``.  At ``delta = 0`` it is :func:`dpbook.privacy_loss` (the audited loss, an upper
    bound never below the truth); ``inf`` when no finite ε reaches ``delta``.

    Parameters
    ----------
    mechanism : Mechanism
        As for :func:`privacy_profile`.
    sensitivity : float
        ``Δ > 0``.
    delta : float
        ``0 <= δ <= 1``.
    domain : (float, float), optional
        The closed interval of true values; default ``mechanism.domain``.

    Returns
    -------
    float

    Examples
    --------
    >>> from dpbook import Laplace
    >>> round(epsilon_for_delta(Laplace(1.0), 1.0, 0.221199), 4)  # 1 - e^{(ε - 1)/2} = δ
    0.5
    """
    d = check.nonnegative("delta", delta)
    if d > 1.0:
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")

    def profile(e):
        return _privacy_profile_bounds(mechanism, sensitivity, e, domain=domain)[0]

    top = float(profile(0.0))
    if top <= d:
        return 0.0
    loss = _audited_loss(mechanism, sensitivity, domain)
    if math.isfinite(loss):
        hi = loss  # the profile is exactly 0 there
    else:
        if float(profile(math.inf)) > d:
            return math.inf
        hi = 1.0
        while float(profile(hi)) > d:
            if hi > 1e300:
                return math.inf
            hi *= 16.0
    if d == 0.0:
        return hi
    lo = 0.0
    # U(lo) > d >= U(hi): each round tries 255 points of the bracket (a search costs about the same for one
    # ε or a thousand) and keeps the first where U <= d
    for _ in range(8):
        if hi - lo <= 1e-10 * hi:
            break
        grid = np.linspace(lo, hi, 257)[1:-1]
        vals = profile(grid)
        ok = np.flatnonzero(vals <= d)
        if ok.size == 0:
            lo = float(grid[-1])
        else:
            k = int(ok[0])
            hi = float(grid[k])
            lo = float(grid[k - 1]) if k > 0 else lo
    return hi


def _audited_loss(mechanism, sensitivity, domain):
    return float(privacy_loss(mechanism, sensitivity, domain=domain))


def _privacy_profile_bounds(mechanism, sensitivity, epsilon, *, domain=None):
    """``(upper, lower)``: arrays shaped like ``epsilon``; ``upper`` is :func:`privacy_profile` (never below δ(ε)),
    ``lower`` the largest lower bound of a pair evaluated (never above it)."""
    desc = describe(mechanism)
    name = type(mechanism).__name__
    delta = check.positive("sensitivity", sensitivity)
    eps = _epsilon(epsilon)
    lo, hi = _interval("domain", mechanism.domain if domain is None else domain)
    if not desc.exact:
        raise NotImplementedError(
            f"the law of {name} is not described exactly (its description is the base of a "
            "post-processing, whose profile is only an upper bound); privacy_profile computes "
            "exact profiles only"
        )
    if not isinstance(desc, PrivacyDescription):
        return _discrete_profile(desc, delta, lo, hi, eps, name)
    _edge_hypotheses(desc, name)
    flat = eps.ravel()
    upper, lower = np.zeros(flat.shape), np.zeros(flat.shape)
    # from the audited loss on (never below the truth) every pair's divergence is exactly 0
    loss = _audited_loss(mechanism, delta, (lo, hi))
    live = flat < loss
    if live.any():
        upper[live], lower[live] = _edge_profile(desc, delta, lo, hi, flat[live])
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


def _edge_hypotheses(desc, name):
    """Refuse a description for which the reduction to the edge is not proved (the module's hypotheses)."""
    if not desc.uniform:
        raise NotImplementedError(
            f"{name}: its scale varies with the true value, so the optimal sets of a pair are not "
            "half-lines and the worst pair need not be Δ apart; privacy_profile covers kernels of one "
            "scale"
        )
    if not (desc.center is _identity or desc.center_shift is not None):
        raise NotImplementedError(
            f"{name}: its centre is not the true value plus a constant (e.g. a multiplicative "
            "family, described in log q), which the reduction to the edge assumes"
        )
    if desc.atoms and desc.log_norm is not None:
        raise NotImplementedError(
            f"{name}: point masses together with a normalized density; privacy_profile covers a "
            "kernel conditioned on its pieces or one whose outside mass the atoms hold"
        )
    inner = min(a for a, _ in desc.pieces), max(b for _, b in desc.pieces)
    if any(inner[0] < atom[0] < inner[1] for atom in desc.atoms):
        raise NotImplementedError(
            f"{name}: a point mass inside the range of the density, where the log-ratio need not "
            "be monotone in the output"
        )


def _edge_profile(desc, delta, lo, hi, eps):
    """``(upper, lower)`` of the supremum over the edge, for finite ε below the loss (the method of
    :func:`privacy_profile`)."""
    if hi - lo <= delta:  # the two ends: exact
        (up, up_lo), (dn, dn_lo) = _evaluate(desc, [(lo, hi), (hi, lo)], eps)
        return np.maximum(up, dn), np.maximum(up_lo, dn_lo)
    ulo, uhi = lo, hi - delta
    grid, _ = _edge_grid(desc, delta, ulo, uhi, [])
    # a kernel whose outside mass the atoms hold is a post-processing (a clamp) of q + c + Z: no pair of it
    # exceeds the kernel's own divergence at Δ (translation invariant: the pair (0, Δ))
    cap = 1.0
    if desc.log_norm is None and len(desc.pieces) == 1:
        kernel = dataclasses.replace(
            desc, pieces=((-math.inf, math.inf),), atoms=(), log_norm_ratio=None
        )
        cap = _evaluate(kernel, [(0.0, delta)], eps)[0][0]
    shift = 0.0 if desc.center_shift is None else float(desc.center_shift)
    s = float(np.asarray(desc.scale(np.array(0.0))))
    gaps = _gaps(desc.pieces)
    top = np.finfo(float).max
    points = {}  # u -> ((upper, lower) of H(u, u + Δ), of H(u + Δ, u))
    spent = 0

    def bounds_of(cells, target):
        """An upper bound of ``max(H(u, u + Δ), H(u + Δ, u))`` over ``u`` in each cell (ends may be infinite):
        the cells' new ends are evaluated in one batch, then the monotone pairs of the cells the other
        bounds leave above ``target``."""
        nonlocal spent
        new = sorted({v for c in cells for v in c if math.isfinite(v)} - points.keys())
        pairs = [p for u in new for p in ((u, u + delta), (u + delta, u))]
        values = _evaluate(desc, pairs, eps)
        spent += len(pairs)
        for i, u in enumerate(new):
            points[u] = (values[2 * i], values[2 * i + 1])
        parts = []
        with np.errstate(over="ignore", invalid="ignore"):
            grow = np.exp(eps)
            for a, b in cells:
                ends = [points[v] for v in (a, b) if math.isfinite(v)]
                finite = math.isfinite(a) and math.isfinite(b)
                if finite:
                    # the translation bound from the cell's lower end: the law of M(u) - u moves by at
                    # most d1 (d2 for u + Δ) in every half-line over the cell
                    d1 = _drift(desc, s, a + shift, b - a)
                    d2 = _drift(desc, s, a + delta + shift, b - a)
                else:  # from the kernel itself: within β of it in every half-line
                    d1 = 2 * _outside_mass(desc, s, gaps, a + shift, b + shift)
                    d2 = 2 * _outside_mass(
                        desc, s, gaps, a + delta + shift, b + delta + shift
                    )
                t_up = ends[0][0][0] + d1 + (grow * d2 if d2 > 0 else 0.0)
                t_dn = ends[0][1][0] + d2 + (grow * d1 if d1 > 0 else 0.0)
                if finite:
                    # the curvature bound: for a fixed half-line (-inf, τ] of outputs F_u(τ) has a bounded
                    # second derivative in u, so each direction is at most its larger end value + K h^2/8
                    k1 = _curvature(desc, s, a + shift, b + shift)
                    k2 = _curvature(desc, s, a + delta + shift, b + delta + shift)
                    w = ((b - a) / s) ** 2 / 8  # the curvatures are in units of s^-2
                    c_up = (
                        np.maximum(ends[0][0][0], ends[1][0][0]) + (k1 + grow * k2) * w
                    )
                    c_dn = (
                        np.maximum(ends[0][1][0], ends[1][1][0]) + (k2 + grow * k1) * w
                    )
                    t_up, t_dn = np.minimum(t_up, c_up), np.minimum(t_dn, c_dn)
                t_up = np.where(np.isnan(t_up), 1.0, t_up)  # no bound: 1 bounds any δ
                t_dn = np.where(np.isnan(t_dn), 1.0, t_dn)
                found = np.maximum.reduce([np.maximum(e[0][0], e[1][0]) for e in ends])
                parts.append((t_up, t_dn, found))
        # the monotone bound, H(u, u + Δ) <= H(a, b + Δ), where the others leave the cell open
        need = [
            k
            for k, (t_up, t_dn, found) in enumerate(parts)
            if (np.minimum(np.maximum(t_up, t_dn), cap) > target).any()
        ]
        mono = []
        for k in need:
            a, b = cells[k]
            qa = a if math.isfinite(a) else -top
            qb = b + delta if math.isfinite(b + delta) else top
            mono += [(qa, qb), (qb, qa)]
        values = _evaluate(desc, mono, eps)
        spent += len(mono)
        out = []
        for k, ((a, b), (t_up, t_dn, found)) in enumerate(zip(cells, parts)):
            if k in need:
                i = 2 * need.index(k)
                m_up, m_dn = values[i][0], values[i + 1][0]
                t_up = np.minimum(t_up, np.where(np.isnan(m_up), 1.0, m_up))
                t_dn = np.minimum(t_dn, np.where(np.isnan(m_dn), 1.0, m_dn))
            bound = np.maximum(t_up, t_dn)
            if not (math.isfinite(a) and math.isfinite(b)):
                bound = np.minimum(bound, _far_atom_bound(desc, a, b, delta))
            out.append(np.minimum(np.maximum(bound, found), np.maximum(cap, found)))
        return out

    cells = [(float(a), float(b)) for a, b in zip(grid[:-1], grid[1:])]
    if ulo == -math.inf:
        cells.insert(0, (-math.inf, float(grid[0])))
    if uhi == math.inf:
        cells.append((float(grid[-1]), math.inf))
    if not cells:
        cells = [(float(grid[0]), float(grid[0]))]
    bounds = bounds_of(cells, -np.inf)

    def best():
        vals = list(points.values())
        up = np.maximum.reduce([np.maximum(v[0][0], v[1][0]) for v in vals])
        low = np.maximum.reduce([np.maximum(v[0][1], v[1][1]) for v in vals])
        return up, low

    settled = np.zeros(eps.shape)  # the largest bound of any cell no longer searched
    while True:
        found, _ = best()
        target = found * (1 + _PROFILE_RTOL) + 1e-300
        keep, excess = [], []
        for (a, b), bd in zip(cells, bounds):
            splittable = (
                math.isfinite(a)
                and math.isfinite(b)
                and b - a > 4 * np.spacing(max(abs(a), abs(b)))
            )
            # the excess weighed by the profile's size (relative near its top, absolute where δ is small)
            over = float(np.max((bd - target) / (found + 1e-2 * found.max() + 1e-300)))
            if splittable and over > 0:
                keep.append(((a, b), bd))
                excess.append(over)
            else:
                settled = np.maximum(settled, bd)
        room = (
            _PROFILE_BUDGET - spent
        ) // 4  # a split costs a midpoint and at most two monotone pairs
        if not keep or room <= 0:
            for _, bd in keep:
                settled = np.maximum(settled, bd)
            break
        order = np.argsort(excess)[
            ::-1
        ]  # the worst cells first, while the budget lasts
        split = [keep[i][0] for i in order[:room]]
        for i in order[room:]:
            settled = np.maximum(settled, keep[i][1])
        cells = [c for a, b in split for c in ((a, 0.5 * (a + b)), (0.5 * (a + b), b))]
        bounds = bounds_of(cells, target)
    found, low = best()
    return np.maximum(settled, found), low


def _evaluate(desc, pairs, eps):
    """``[(upper, lower), ...]`` of ``H_ε`` for each pair (a pair of equal true values: 0)."""
    if not pairs:
        return []
    losses = _pair_losses(desc, pairs)
    out = []
    for (q1, q2), loss in zip(pairs, losses):
        if q1 == q2:
            out.append((np.zeros(eps.shape), np.zeros(eps.shape)))
        else:
            out.append(_continuous_bounds(desc, float(q1), float(q2), eps, loss))
    return out


def _far_atom_bound(desc, a, b, delta):
    """On a cell of ``u`` that runs off to ``-inf`` (``+inf``), both laws put at least the mass the lowest
    (highest) atom has at the cell's inner end: ``H <= TV <= 1 - that mass`` (1 without such an atom)."""
    if not desc.atoms:
        return 1.0
    low = a == -math.inf
    t, logmass = min(desc.atoms)[:2] if low else max(desc.atoms)[:2]
    inner = min(a for a, _ in desc.pieces) if low else max(b for _, b in desc.pieces)
    if (t > inner) if low else (t < inner):
        return 1.0
    q = (
        b + delta if low else a
    )  # the mass is nonincreasing (nondecreasing) in q: least at the inner end
    with np.errstate(over="ignore", under="ignore"):
        rest = -math.expm1(float(logmass(np.array(q))))
    return min(1.0, rest * (1 + 1e-9) + 1e-300)


def _drift(desc, s, c, h):
    """A bound of the total variation between the laws of ``M(q) - m(q)`` at centres ``c`` and ``c + x`` for every
    ``x`` in ``[0, h]``: ``1 - W(P_h)/W(P^h)`` with ``W`` the kernel's mass at centre ``c``, ``P_h`` the pieces cut
    short by ``h`` at their upper ends (where both laws have their density, up to the normalizers) and ``P^h``
    the pieces reached ``h`` further down (bounding every normalizer on the way); the denominator is 1 when the
    atoms hold the kernel's outside mass (the density is not normalized)."""
    inner = [(a, b - h) for a, b in desc.pieces if b - h > a]
    if not inner:
        return 1.0
    num, num_err = _log_kernel_mass(desc, s, c, inner)
    den, den_err = 0.0, 0.0
    if desc.log_norm is not None:
        den, den_err = _log_kernel_mass(
            desc, s, c, [(a - h, b) for a, b in desc.pieces]
        )
    gap = min(num - den - num_err - den_err, 0.0)
    return min(1.0, -math.expm1(gap) + 1e-300)


def _curvature(desc, s, c_lo, c_hi):
    """A bound of ``s^2 |d^2/dq^2 F_q(τ)|`` (scale-free) over every output ``τ`` and every centre in ``[c_lo, c_hi]``.

    For a clamp (atoms holding the outside mass) ``F_q(τ)`` is the kernel's cdf at ``τ - m(q)`` or a constant, so
    the bound is ``sup |k'|``.  For a kernel conditioned on the pieces, ``F = A/N`` with ``A`` the kernel's mass
    of the pieces below ``τ`` and ``N`` of all of them: ``A'`` and ``N'`` are sums of ``±k`` at the interval ends
    (the finite piece ends and ``τ``), ``A''`` and ``N''`` of ``±k'``, so with ``A <= N``
    ``|F''| <= (E1 + k'max)/N + 2 (E0 + kmax) E0/N^2 + E1/N + 2 E0^2/N^2``, where ``E0`` (``E1``) sums the largest
    ``k`` (``|k'|``) at each finite end over the cell and ``N`` is at least the mass of the pieces cut short by
    the cell's width (see :func:`_drift`); ``k`` is counted in units of ``1/s``, ``k'`` of ``1/s^2``."""
    if desc.shape == "laplace":
        kmax, dmax = 0.5, 0.5

        def k0(z):
            return 0.5 * math.exp(-z)

        def k1(z_lo, z_hi):
            return k0(z_lo)

    else:
        kmax, dmax = 1 / math.sqrt(2 * math.pi), 1 / math.sqrt(2 * math.pi * math.e)

        def k0(z):
            return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

        def k1(z_lo, z_hi):  # |k'(z)| = z k(z) rises to z = 1, then falls
            z = min(max(1.0, z_lo), z_hi)
            return z * k0(z)

    if desc.log_norm is None:  # a clamp
        return dmax * (1 + 1e-9)
    e0 = e1 = 0.0
    for a, b in desc.pieces:
        for e in (a, b):
            if math.isfinite(e):
                z_lo = max(e - c_hi, c_lo - e, 0.0) / s
                z_hi = max(abs(e - c_lo), abs(e - c_hi)) / s
                e0 += k0(z_lo)
                e1 += k1(z_lo, z_hi)
    inner = [(a, b - (c_hi - c_lo)) for a, b in desc.pieces if b - (c_hi - c_lo) > a]
    if not inner:
        return math.inf
    log_n, err = _log_kernel_mass(desc, s, c_lo, inner)
    n = math.exp(log_n - err)
    if n == 0:
        return math.inf
    bound = (e1 + dmax) / n + 2 * (e0 + kmax) * e0 / n**2 + e1 / n + 2 * e0**2 / n**2
    return bound * (1 + 1e-9)


def _log_kernel_mass(desc, s, c, intervals):
    """``(log of the kernel's mass of the intervals at centre c, a bound on its rounding error)``."""
    logs, errs = [], []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for x, y in intervals:
            if desc.shape == "laplace":
                v = float(_piece_log_mass(c, s, x, y))
                e = _K * (2.0 + abs(v))
            else:
                v, e = (float(t) for t in _log_normal_mass((x - c) / s, (y - c) / s))
                e += _K * (2.0 + abs(v))
            logs.append(v)
            errs.append(e)
    top = max(logs)
    if top == -math.inf:
        return -math.inf, 0.0
    total = top + math.log(sum(math.exp(v - top) for v in logs))
    return total, max(errs) + _K * (len(logs) + abs(total))


def _gaps(pieces):
    """The closed intervals outside the union of ``pieces`` (sorted, touching pieces merged)."""
    out = []
    edge = -math.inf
    for a, b in sorted(pieces):
        if a > edge:
            out.append((edge, a))
        edge = max(edge, b)
    if edge < math.inf:
        out.append((edge, math.inf))
    return out


def _outside_mass(desc, s, gaps, c_lo, c_hi):
    """An upper bound of ``β``, the kernel's mass outside the pieces, over every centre in ``[c_lo, c_hi]``.

    A gap's mass under a kernel centred outside it falls as the centre moves away (the kernel is unimodal
    and symmetric), so it is largest at the centre nearest the gap; 1 when a centre lies in the gap."""
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for x, y in gaps:
            if c_hi >= x and c_lo <= y:
                return 1.0
            c = c_hi if c_hi < x else c_lo
            if desc.shape == "laplace":
                mass = math.exp(float(_piece_log_mass(c, s, x, y)))
            else:
                value, err = _log_normal_mass((x - c) / s, (y - c) / s)
                mass = math.exp(float(value) + float(err))
            total += mass
    return min(total * (1 + 1e-9), 1.0)


def _discrete_profile(desc, delta, lo, hi, eps, name):
    """Every integer pair ``q1 != q2`` of the domain at most ``Δ`` apart: the exact maximum of their profiles."""
    if not (math.isfinite(desc.support[0]) and math.isfinite(desc.support[1])):
        raise NotImplementedError(
            f"{name}: an integer-valued law with an infinite support {desc.support!r}; "
            "privacy_profile sums over the outputs of a finite support only"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise NotImplementedError(
            f"{name}: privacy_profile enumerates the integer pairs of a finite domain; got "
            f"domain ({lo!r}, {hi!r})"
        )
    a, b, step = math.ceil(lo), math.floor(hi), math.floor(delta)
    values = np.arange(a, b + 1)
    count = values.size * 2 * min(step, max(values.size - 1, 0))
    if count > _MAX_INTEGER_PAIRS:
        raise ValueError(
            f"domain: ({lo!r}, {hi!r}) holds about {count} integer pairs at most {delta!r} apart, "
            f"over the limit of {_MAX_INTEGER_PAIRS}; pass a shorter domain"
        )
    upper, lower = np.zeros(eps.shape), np.zeros(eps.shape)
    for q1 in values:
        for d in range(-step, step + 1):
            q2 = q1 + d
            if d == 0 or not a <= q2 <= b:
                continue
            up, low = _discrete_bounds(desc, int(q1), int(q2), eps, name)
            upper, lower = np.maximum(upper, up), np.maximum(lower, low)
    return upper, lower
