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
support is not covered yet (``NotImplementedError``).  This module imports numpy and scipy only.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _identity
from .._kernels.gaussian import _GL16, _K, _LOG_SQRT_2PI, _log_normal_mass
from .._kernels.laplace import _piece_log_mass
from ._discrete import discrete_pair_loss
from ._search import _MAX_PAIRS, _log_norm_ratio, _pair, describe
from .description import PrivacyDescription

__all__ = ["pair_profile"]


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
    eps = _epsilon(epsilon)
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
    with np.errstate(
        all="ignore"
    ):  # (its Gaussian branch divides by s^2, 0 for s = 1e-300)
        loss = float(_pair(desc, q1, q2, (-math.inf, math.inf))[0])
    dead = ((flat >= loss) & math.isfinite(loss) & (loss >= 0)) | (value + err == 0)
    upper, lower = np.where(dead, 0.0, upper), np.where(dead, 0.0, lower)
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


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
            live &= (
                x_raw < x_err
            )  # else the true x >= 0: the segment adds exactly nothing
            c = np.where(live, c, 0.0)
            c_err = np.where(live, np.minimum(np.nan_to_num(c_err, nan=2.0), 2.0), 0.0)
        return c.sum(axis=0), c_err.sum(axis=0)

    return evaluate, u.shape[0]


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
            live &= (
                x_raw < x_err
            )  # else the true x >= 0: the piece adds exactly nothing
            c = np.where(live, c, 0.0)
            c_err = np.where(live, np.minimum(np.nan_to_num(c_err, nan=2.0), 2.0), 0.0)
        return c.sum(axis=0), c_err.sum(axis=0)

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
