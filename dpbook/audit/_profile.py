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
support when it is a discrete Laplace kernel (``kernel_rate``), whose runs of outputs beyond the centres
and ends are geometric sums in closed form (else ``NotImplementedError``).

:func:`privacy_profile` takes the supremum over neighbouring true values (δ(ε) of the mechanism): for a
kernel of one scale the worst pair is on the edge ``|q1 - q2| = Δ``, and the supremum along it is a
certified branch and bound whose cells are bounded by monotonicity, translation, curvature and, for a clamp,
the kernel's own divergence (see its docstring); :func:`epsilon_for_delta` inverts it on the upper side.
This module imports numpy and scipy only.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _identity
from .._kernels.gaussian import _GL16, _K, _LOG_SQRT_2PI, _log1mexp, _log_normal_mass
from .._kernels.laplace import _piece_log_mass
from ..neighbours import TRUE_VALUES, Neighbours
from ._discrete import discrete_pair_loss, discrete_report
from ._search import (
    _MAX_PAIRS,
    _edge_grid,
    _interval,
    _log_norm_ratio,
    _moving_support,
    _moving_support_check,
    _pair,
    describe,
    privacy_loss,
)
from .description import PrivacyDescription

__all__ = [
    "ProfileBounds",
    "epsilon_for_delta",
    "pair_profile",
    "privacy_profile",
    "profile_bounds",
]


#: (segment, pair, ε) elements evaluated at once (bounded memory)
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
        mechanism's only from above: :func:`profile_bounds` gives it as a bound) and for an integer-valued
        law with an infinite support whose description has no ``kernel_rate`` (a
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
    if _moving_support(desc):  # bounded noise: the closed form of its own
        return _moving_pair_bounds(desc, q1, q2, _epsilon(epsilon), name)
    return _continuous_bounds(desc, q1, q2, _epsilon(epsilon))


def _continuous_bounds(desc, q1, q2, eps, loss=None):
    """``(upper, lower)`` of one pair's divergence for a validated exact :class:`PrivacyDescription` (``loss``:
    the pair's audited loss, when already computed with others)."""
    _check_size(desc, eps.size)
    if q1 == q2:
        zero = np.zeros(eps.shape)
        return zero, zero
    if loss is None:
        loss = _pair_losses(desc, [(q1, q2)])[0]
    flat = eps.ravel()
    upper, lower = _pair_bounds(
        desc,
        np.array([q1]),
        np.array([q2]),
        np.array([loss]),
        np.zeros(flat.size, dtype=np.intp),
        flat,
    )
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


def _check_size(desc, size):
    """Refuse more ε values than one pair computes in about a minute."""
    segments = len(desc.pieces) * (3 if desc.shape == "laplace" else 1) + len(
        desc.atoms
    )
    if size * segments > _MAX_PAIRS:
        raise ValueError(
            f"epsilon: {size} values on {segments} segments would take more than a minute; "
            "pass fewer values"
        )


def _pair_bounds(desc, q1, q2, loss, pair, eps):
    """``(upper, lower)`` of ``H_ε(q1[j], q2[j])`` at ``ε = eps[k]``, ``j = pair[k]``, for every slot ``k``: many
    pairs (``q1 != q2``, ``loss`` their audited losses), each at its own ε values, in one vectorized pass."""
    # the description's callables may overflow to the infinities they mean (a true value 1e300 scales of
    # 1e-300 from a bound): errstate covers them, and everything here reads an inf as what it is
    with np.errstate(over="ignore", under="ignore"):
        value, err = _density(desc, q1, q2, pair, eps)
        a_value, a_err = _atoms(desc, q1, q2, pair, eps)
    value = value + a_value
    err = err + a_err + 4 * np.finfo(float).eps * value
    with np.errstate(over="ignore"):
        upper = np.minimum(np.nextafter(value + err, np.inf), 1.0)
        lower = np.maximum(np.nextafter(value - err, -np.inf), 0.0)
    # from the pair's (finite) privacy loss on, the auditor's certified upper bound, δ is exactly 0
    loss = loss[pair]
    dead = ((eps >= loss) & np.isfinite(loss) & (loss >= 0)) | (value + err == 0)
    return np.where(dead, 0.0, upper), np.where(dead, 0.0, lower)


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


def _pair_numbers(desc, q1, q2):
    """A description's numbers at each pair ``(q1[j], q2[j])`` (1-D arrays of floats): the kernels' centres
    and scales, ``log N(q1)``, ``log N(q1) - log N(q2)`` and its error, and the centres' rounding."""
    m1, m2 = _per_pair(desc.center, q1), _per_pair(desc.center, q2)
    s1, s2 = _per_pair(desc.scale, q1), _per_pair(desc.scale, q2)
    n1 = (
        _per_pair(desc.log_norm, q1)
        if desc.log_norm is not None
        else np.zeros(q1.shape)
    )
    if q1.size == 1:
        nr, nr_err = (np.array([float(v)]) for v in _log_norm_ratio(desc, q1[0], q2[0]))
    else:
        nr, nr_err = (
            np.broadcast_to(np.asarray(v, dtype=float), q1.shape)
            for v in _log_norm_ratio(desc, q1, q2)
        )
    centre_err = (
        np.zeros(q1.shape)
        if desc.center is _identity
        else np.spacing(np.abs(m1)) + np.spacing(np.abs(m2))
    )
    return m1, m2, s1, s2, n1, nr, nr_err, centre_err


def _density(desc, q1, q2, pair, eps):
    """``(Σ over segments of ∫_A (p1 - e^ε p2), a bound on its rounding error)`` at each slot ``(pair[k], eps[k])``
    (0 at ε = inf): each pair's segment table is built once, then every (segment, slot) is evaluated, a chunk
    at a time, and summed by slot."""
    value = np.zeros(eps.shape)
    err = np.zeros(eps.shape)
    finite = np.isfinite(
        eps
    )  # at ε = inf the densities (positive on every piece) add nothing
    if not finite.any() or not desc.pieces:
        return value, err
    m1, m2, s1, s2, n1, nr, nr_err, centre_err = _pair_numbers(desc, q1, q2)
    laplace = desc.shape == "laplace"
    if laplace:
        table, owner, scalars = _laplace_parts(
            desc, m1, m2, s1, s2, nr, nr_err, centre_err
        )
        per_pair = np.vstack([s1, s2, n1, centre_err, scalars])
    else:
        table, owner, scalars = _gauss_parts(desc, m1, m2, s1, centre_err)
        per_pair = np.vstack([s1, n1, nr, nr_err, centre_err, scalars])
    if not owner.size:
        return value, err
    terms = _laplace_terms if laplace else _gauss_terms
    # every (segment, slot) of the same pair: the segments of a pair in order, each at all its slots
    slots = np.flatnonzero(finite)
    slots = slots[np.argsort(pair[slots], kind="stable")]
    at = np.searchsorted(pair[slots], np.arange(q1.size + 1))
    # each segment (in order) at every slot of its pair: a ragged range of the sorted slots per segment
    length = (at[1:] - at[:-1])[owner]
    elem_row = np.repeat(np.arange(owner.size), length)
    if not elem_row.size:
        return value, err
    start = np.cumsum(length) - length
    elem_slot = slots[
        np.arange(elem_row.size) + np.repeat(at[:-1][owner] - start, length)
    ]
    # a Laplace segment where L is constant (β = 0) has the same interval at every ε: its ε-free parts once
    flat = table[7] == 0 if laplace else np.zeros(owner.size, bool)
    fixed = (
        np.array(_laplace_flat_rows(table[:, flat], per_pair[:, owner[flat]]), float)
        if flat.any()
        else None
    )
    row_at = np.cumsum(flat) - 1  # a flat row's place among the flat rows
    for i in range(0, elem_row.size, _CHUNK):
        r, k = elem_row[i : i + _CHUNK], elem_slot[i : i + _CHUNK]
        f = flat[r]
        if not f.any():
            c, c_err, live = terms(table[:, r], per_pair[:, owner[r]], eps[k])
        else:
            c, c_err, live = (
                np.empty(r.shape),
                np.empty(r.shape),
                np.empty(r.shape, bool),
            )
            c[f], c_err[f], live[f] = _laplace_flat_terms(
                fixed[:, row_at[r[f]]], eps[k[f]]
            )
            if not f.all():
                c[~f], c_err[~f], live[~f] = terms(
                    table[:, r[~f]], per_pair[:, owner[r[~f]]], eps[k[~f]]
                )
        v, e = _live_sums(c, c_err, live, k, eps.size)
        value, err = value + v, err + e
    return value, err


def _laplace_flat_rows(table, per_pair):
    """The parts of :func:`_laplace_terms` that do not depend on ε, once for each segment where ``L`` is constant
    (``β = 0``: ``A`` is the whole segment at every ε where it is live), computed as there."""
    u, v, sig1, sig2, r, lr, lr_err, _ = table
    s1, s2, n1, centre_err, lc, lc_err, y2 = per_pair
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        w = v - u
        direction = np.where(r == u, 1.0, -1.0)
        rho1, rho2 = direction * -sig1 / s1, direction * -sig2 / s2
        h, h_err = _shift_log(rho1, rho2, w, s1, s2)
        lam_raw = _piece_log_mass(0.0, s1, u, v)
        out = [u < v, lr, lr_err, h, lam_raw - n1, h_err]
        out += [_K * (2.0 + np.abs(lam_raw) + np.abs(n1)), lc_err, 1 / s1, s2]
        for end in (u, v):
            fin = np.isfinite(end)
            y = np.where(fin, end, 0.0)
            move = _K * np.abs(y) + centre_err
            d1, d2 = np.abs(y) / s1, np.abs(y - y2) / s2
            p1 = np.exp(-d1 - np.log(2 * s1) - n1)
            out += [
                fin,
                d2 - d1 + lc,
                d1 + d2 + np.abs(lc),
                move * p1,
                move * move * p1,
            ]
    return out


def _shift_log(rho1, rho2, w, s1, s2):
    """``h``, the log-ratio's change across a segment of width ``w`` entered with log-slopes ``rho1``, ``rho2``
    (the integral's shift in the exponent, the two scales' integrals where they differ), and its rounding
    allowance: the one home of both for :func:`_laplace_flat_rows` and :func:`_laplace_terms`."""
    up = np.maximum(rho2, 0.0) - np.maximum(rho1, 0.0)
    h = np.where(up == 0, 0.0, up * w)
    skew = s1 != s2
    if skew.any():
        h = h + np.where(skew, _log_exp_integral(w, s2) - _log_exp_integral(w, s1), 0.0)
    h_err = _K * (
        np.abs(h) + (np.abs(rho1) + np.abs(rho2)) * np.where(np.isfinite(w), w, 0.0)
    )
    if skew.any():
        h_err = h_err + np.where(
            skew,
            _K * (np.abs(_log_exp_integral(w, s1)) + np.abs(_log_exp_integral(w, s2))),
            0.0,
        )
    return h, h_err


def _laplace_flat_terms(fixed, e):
    """:func:`_laplace_terms` for segments where ``L`` is constant, from their parts of :func:`_laplace_flat_rows`."""
    nonempty, lr, lr_err, h, lam, h_err, lam_err, lc_err, inv_s1, s2 = fixed[:10]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        live = (nonempty != 0) & (lr > e)
        x_raw = (e - lr) + h
        x = np.minimum(x_raw, 0.0)
        c = np.exp(lam + np.log(-np.expm1(x)))
        x_err = (lr_err + _K * e) + h_err
        c_err = _product_error(c, lam, x, lam_err, x_err)
        for fin, l_end, d_sum, move_p1, move2_p1 in (fixed[10:15], fixed[15:20]):
            gap = e - l_end
            gap_err = _K * (d_sum + e) + lc_err
            up_gap = np.exp(np.minimum(gap + gap_err, 700.0))
            f = np.abs(np.expm1(gap)) + 2 * gap_err * up_gap
            c_err = c_err + np.where(
                fin != 0, move_p1 * f + move2_p1 * (inv_s1 + up_gap / s2), 0.0
            )
    return c, c_err, live & (x_raw < x_err)


def _per_pair(fn, q):
    """A description's callable at each true value of ``q``, as floats (one value: called with a float, as for
    a single pair; a callable that does not take arrays is called value by value)."""
    if q.size == 1:
        return np.array([float(fn(float(q[0])))])
    try:
        out = np.asarray(fn(q), dtype=float)
    except (TypeError, ValueError):
        out = None
    if out is None or out.size not in (1, q.size):
        return np.array([float(fn(float(v))) for v in q])
    return np.broadcast_to(out, q.shape).astype(float)


def _laplace_parts(desc, m1, m2, s1, s2, nr, nr_err, centre_err):
    """Laplace kernels, every pair at once (1-D arrays of their numbers, one entry a pair): offsets ``y = t - m1``
    (exact differences of close doubles); kinks at ``0``, ``y2``.  Returns ``(rows, owner, scalars)``: the
    segments' ``(u, v, σ1, σ2, r, L(r), its error, β)`` as the 8 rows of an array, in the order of the pairs and,
    within a pair, of the pieces and of the segments along each; the pair of each segment; and ``(lc, its
    error, y2)`` of each pair as the 3 rows of another."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        y2 = m2 - m1
        uniform = s1 == s2
        log_s1 = np.array([0.0 if u else math.log(v) for u, v in zip(uniform, s1)])
        log_s2 = np.array([0.0 if u else math.log(v) for u, v in zip(uniform, s2)])
        lc = np.where(uniform, 0.0, log_s2 - log_s1) + nr
        lc_err = nr_err + np.where(uniform, 0.0, _K * (np.abs(log_s1) + np.abs(log_s2)))
        # each piece's ends and its cuts at the two centres (0 and y2, once where they meet) inside it:
        # three segments a piece, the empty ones dropped below
        pieces = np.array(sorted(desc.pieces), dtype=float).reshape(-1, 2)
        ya = pieces[None, :, 0] - m1[:, None]
        yb = pieces[None, :, 1] - m1[:, None]
        low_k = np.where(y2 < 0.0, y2, 0.0)[:, None]
        high_k = np.where(y2 < 0.0, 0.0, y2)[:, None]
        has_low = (ya < low_k) & (low_k < yb)
        has_high = (ya < high_k) & (high_k < yb) & (high_k != low_k)
        c1 = np.where(has_low, low_k, ya)
        c2 = np.where(has_high, high_k, yb)
        shape = (m1.size, pieces.shape[0], 3)
        u = np.stack([ya, c1, c2], axis=-1).reshape(shape)
        v = np.stack([c1, c2, yb], axis=-1).reshape(shape)
        owner = np.broadcast_to(np.arange(m1.size)[:, None, None], shape)
        keep = (u < v).reshape(-1)
        u, v, owner = u.reshape(-1)[keep], v.reshape(-1)[keep], owner.reshape(-1)[keep]
        y2_, s1_, s2_, lc_, lc_err_ = (a[owner] for a in (y2, s1, s2, lc, lc_err))
        mid = np.where(np.isinf(v), u, np.where(np.isinf(u), v, 0.5 * (u + v)))
        sig1 = np.where((mid > 0) | ((mid == 0) & (u >= 0)), 1.0, -1.0)
        sig2 = np.where((mid > y2_) | ((mid == y2_) & (u >= y2_)), 1.0, -1.0)
        # the anchor: the finite end nearest a centre (L is evaluated there; the first on a tie)
        key_u = np.minimum(np.abs(u), np.abs(u - y2_))
        key_v = np.minimum(np.abs(v), np.abs(v - y2_))
        r = np.where(np.isinf(u) | (np.isfinite(v) & (key_v < key_u)), v, u)
        # L is constant where the scales agree and so do the signs: σ(m1 - m2)/s + const, exactly
        constant = uniform[owner] & (sig1 == sig2)
        lr_flat = -sig1 * y2_ / s1_ + lc_
        err_flat = _K * (np.abs(y2_) / s1_ + np.abs(lc_) + np.abs(lr_flat)) + lc_err_
        d1, d2 = np.abs(r) / s1_, np.abs(r - y2_) / s2_
        lr_kink = d2 - d1 + lc_
        err_kink = (
            _K * (d1 + d2 + np.abs(y2_) / s2_ + np.abs(lc_) + np.abs(lr_kink)) + lc_err_
        )
        lr = np.where(constant, lr_flat, lr_kink)
        lr_err = np.where(constant, err_flat, err_kink)
        lr_err += centre_err[owner] * (1 / s1_ + 1 / s2_)
        beta = -sig1 / s1_ + sig2 / s2_
    return (
        np.vstack([u, v, sig1, sig2, r, lr, lr_err, beta]),
        owner,
        np.vstack([lc, lc_err, y2]),
    )


def _gauss_parts(desc, m1, m2, s, centre_err):
    """Gaussian kernels of one scale, every pair at once: ``z = (t - m1)/s``; ``L = δm (z + δm/2) + nr`` is linear
    on each piece.  Returns ``(rows, owner, scalars)``: the pieces' ``(za, zb)`` as the 2 rows of an array (pair
    by pair, the pieces in order), the pair of each, and ``(δm, its error)`` of each pair as the 2 rows of
    another."""
    with np.errstate(over="ignore", invalid="ignore"):
        dm = (m1 - m2) / s
        dm_err = _K * np.abs(dm) + centre_err / s
        pieces = np.array(sorted(desc.pieces), dtype=float).reshape(-1, 2)
        za = (pieces[None, :, 0] - m1[:, None]) / s[:, None]
        zb = (pieces[None, :, 1] - m1[:, None]) / s[:, None]
    owner = np.repeat(np.arange(m1.size), pieces.shape[0])
    return np.vstack([za.reshape(-1), zb.reshape(-1)]), owner, np.vstack([dm, dm_err])


def _laplace_terms(table, per_pair, e):
    """Each element's contribution ``∫_A (p1 - e^ε p2)`` and its rounding allowance, and whether it is live (1-D
    arrays: a segment of :func:`_laplace_parts`, its pair's numbers and an ε each)."""
    u, v, sig1, sig2, r, lr, lr_err, beta = table
    s1, s2, n1, centre_err, lc, lc_err, y2 = per_pair
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
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
        h, h_err = _shift_log(rho1, rho2, w, s1, s2)
        x_raw = g + h
        x = np.minimum(x_raw, 0.0)
        lam_raw = _piece_log_mass(0.0, s1, lo, hi)
        lam = lam_raw - n1
        c = np.exp(lam + np.log(-np.expm1(x)))
        # rounding allowances: of x (the log-ratio at the reference end, the cut, h) and of log P1(A)
        g_err = np.where(
            cut_in,
            lr_err + _K * (e + np.abs(lr) + np.abs(beta) * (np.abs(cut) + np.abs(r))),
            lr_err + _K * e,
        )
        x_err = g_err + h_err
        lam_err = _K * (2.0 + np.abs(lam_raw) + np.abs(n1))
        c_err = _product_error(c, lam, x, lam_err, x_err)
        # a piece end or kink (a rounded offset) moves by `move`: the contribution changes by the integrand
        # p1 (1 - e^{ε - L}) there, plus a second-order term (cut ends move nothing: 0 there)
        for end, is_cut in ((lo, cut_in & (beta > 0)), (hi, cut_in & (beta < 0))):
            fin = np.isfinite(end) & ~is_cut
            y = np.where(fin, end, 0.0)
            move = _K * np.abs(y) + centre_err
            d1, d2 = np.abs(y) / s1, np.abs(y - y2) / s2
            gap = e - (d2 - d1 + lc)
            gap_err = _K * (d1 + d2 + np.abs(lc) + e) + lc_err
            p1 = np.exp(-d1 - np.log(2 * s1) - n1)
            up_gap = np.exp(np.minimum(gap + gap_err, 700.0))
            f = np.abs(np.expm1(gap)) + 2 * gap_err * up_gap
            c_err = c_err + np.where(
                fin, move * p1 * f + move * move * p1 * (1 / s1 + up_gap / s2), 0.0
            )
    return c, c_err, live & (x_raw < x_err)


def _live_sums(c, c_err, live, slot, size):
    """The sums by ``slot`` (of ``size``) of the contributions ``c`` and their error bounds ``c_err`` where ``live``
    (the computed ``x`` is below its error bound: elsewhere the true ``x >= 0`` and the segment or piece adds
    exactly nothing); an error bound is at most 2, NaN included."""
    c = np.where(live, c, 0.0)
    c_err = np.where(live, np.minimum(np.nan_to_num(c_err, nan=2.0), 2.0), 0.0)
    return (
        np.bincount(slot, weights=c, minlength=size),
        np.bincount(slot, weights=c_err, minlength=size),
    )


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
    return np.log(s) + np.log(-np.expm1(-w / s))


def _gauss_terms(table, per_pair, e):
    """As :func:`_laplace_terms`, for the pieces of :func:`_gauss_parts`."""
    za, zb = table
    s, n1, nr, nr_err, centre_err, dm, dm_err = per_pair
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        cut = (e - nr) / np.where(dm != 0, dm, 1.0) - 0.5 * dm
        lo = np.where(dm > 0, np.maximum(za, cut), za)
        hi = np.where(dm < 0, np.minimum(zb, cut), zb)
        # a cut end is any point near the root: the contribution is computed for the interval it
        # bounds, and moving it changes the contribution to second order only (the integrand is 0 there)
        piece_lo, piece_hi = lo == za, hi == zb
        live = (lo < hi) & ((dm != 0) | (nr > e))
        lo, hi = np.where(live, lo, 0.0), np.where(live, hi, 1.0)
        lam_raw, e1 = _log_normal_mass(lo, hi)
        ref = np.where(dm < 0, hi, lo)
        cut_in = np.where(dm > 0, ~piece_lo, np.where(dm < 0, ~piece_hi, False))
        short = _gauss_short(lo, hi)[0]
        x_raw, x_err = np.empty(lo.shape), np.empty(lo.shape)
        # long intervals: x = ε - nr + log P2(A) - log P1(A)
        j = ~short
        lam2_raw, e2 = _log_normal_mass(lo[j] + dm[j], hi[j] + dm[j])
        x_raw[j] = e[j] - nr[j] + (lam2_raw - lam_raw[j])
        x_err[j] = e1[j] + e2
        # short intervals: x = ε - L(ref) + h from the end of least log-ratio (the cut, if any)
        j = short
        g = np.where(cut_in[j], 0.0, e[j] - (dm[j] * (ref[j] + 0.5 * dm[j]) + nr[j]))
        h = _gauss_short_h(lo[j], hi[j], ref[j], dm[j])[1]
        x_raw[j] = g + h
        x_err[j] = _K * (
            np.abs(h) + np.abs(dm[j]) * (np.abs(ref[j]) + np.abs(dm[j]))
        ) + dm_err[j] * (np.abs(ref[j]) + np.abs(dm[j]) + (hi[j] - lo[j]))
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
        x_err = x_err + _K * (e + np.abs(nr)) + nr_err + dm_err * (reach + 1.0)
        lam_err = e1 + _K * (1.0 + np.abs(n1))
        c_err = _product_error(c, lam, x, lam_err, x_err)
        # a piece end (a rounded offset) moves by `move`: the contribution changes by the integrand
        # p1 (1 - e^{ε - L}) there, plus a second-order term (cut ends move nothing: it is 0 there)
        for end, piece in ((lo, piece_lo), (hi, piece_hi)):
            fin = np.isfinite(end) & piece
            z = np.where(fin, end, 0.0)
            move = _K * np.abs(z) + centre_err / s
            gap = e - (dm * (z + 0.5 * dm) + nr)
            gap_err = (
                _K * (np.abs(dm) * (np.abs(z) + np.abs(dm)) + np.abs(nr) + e)
                + nr_err
                + dm_err * (np.abs(z) + np.abs(dm))
            )
            p1 = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - n1)
            up_gap = np.exp(np.minimum(gap + gap_err, 700.0))
            f = np.abs(np.expm1(gap)) + 2 * gap_err * up_gap
            slope = (np.abs(z) + np.abs(dm) + 1.0) * (1.0 + up_gap)
            c_err = c_err + np.where(fin, move * p1 * f + move * move * p1 * slope, 0.0)
    return c, c_err, live & (x_raw < x_err)


def _gauss_short_h(lo, hi, ref, dm):
    """``(short, h)`` with ``h = log E[e^{-δm (Z - ref)}]`` for ``Z`` standard normal conditioned on ``[lo, hi]``,
    on short intervals (``w <= 1``, ``|z0| w <= 1``): 16-point Gauss–Legendre, written as ``log1p`` of a mean
    of ``expm1`` terms, so ``h`` keeps its relative accuracy however small it is (``x = ε - L(ref) + h``)."""
    short, z0 = _gauss_short(lo, hi)
    with np.errstate(over="ignore", invalid="ignore"):
        w = hi - lo
        nodes, weights = _GL16
        ws = np.where(short, w, 1.0)[..., None]
        zs = np.where(short, lo, 0.0)[..., None] + 0.5 * ws * (1.0 + nodes)
        zz = np.where(short, z0, 0.0)[..., None]
        f = weights * np.exp(-0.5 * (zs - zz) * (zs + zz))
        t = np.expm1(
            -np.asarray(dm)[..., None] * (zs - np.where(short, ref, 0.0)[..., None])
        )
        h = np.log1p(np.sum(f * t, axis=-1) / np.sum(f, axis=-1))
    return short, h


def _gauss_short(lo, hi):
    """``(short, z0)``: the intervals ``[lo, hi]`` on which :func:`_gauss_short_h` integrates, and their point
    nearest 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        z0 = np.where(hi < 0, hi, np.where(lo > 0, lo, 0.0))
        return (hi - lo <= 1.0) & (np.abs(z0) * (hi - lo) <= 1.0), z0


# --- integer-valued laws ----------------------------------------------------------------------------


def _discrete_bounds(desc, q1, q2, eps, name):
    """``(upper, lower)`` for a :class:`DiscreteDescription`: the exact sum of ``(m1 - e^ε m2)_+ =
    m1 (1 - e^{ε - r})`` over every output ``k`` where the log-ratio ``r`` (the family's accurate ``log_ratio``)
    exceeds ε.

    A finite support is summed output by output.  With the family's ``kernel_rate`` theorem (a discrete
    Laplace kernel of rate ``λ`` centred at the true value, conditioned on the support or clamped to it)
    only the outputs from one below the lower centre to one above the upper one and next to the support's
    finite ends are summed one by one (:func:`_kernel_outputs`); on each run of outputs between them no
    centre and no end lies, so both laws' masses fall geometrically, by ``e^{-λ}`` a step, away from the run's
    heavier end and the log-ratio is the same at every output of the run: the run adds
    ``m1(top) (1 - e^{-λ n})/(1 - e^{-λ}) (1 - e^{ε - r})_+`` (``n`` its length, ``1`` for ``e^{-λ n}`` on an
    infinite tail), a closed form with its rounding bounded as the single outputs'."""
    why = f" for the integer-valued {name}"
    q1 = float(check.integer_array("q1", q1, why=why))
    q2 = float(check.integer_array("q2", q2, why=why))
    lo, hi = desc.support
    n_out = hi - lo + 1
    runs = []
    if math.isfinite(n_out) and (
        n_out * max(eps.size, 1) <= _MAX_PAIRS or desc.kernel_rate is None
    ):
        k = np.arange(lo, hi + 1.0)
    elif desc.kernel_rate is not None:
        k, runs = _kernel_outputs(lo, hi, q1, q2)
    else:
        raise NotImplementedError(
            f"pair_profile sums over the outputs of an integer-valued law with a finite support, or in "
            f"closed form over a discrete Laplace kernel (the description's kernel_rate); {name} has "
            f"support {desc.support!r} and no kernel_rate"
        )
    if k.size * max(eps.size, 1) > _MAX_PAIRS:
        raise ValueError(
            f"epsilon: {eps.size} values over {k.size:.0f} outputs would take more than a minute; "
            "pass fewer values"
        )
    if q1 == q2:
        zero = np.zeros(eps.shape)
        return zero, zero
    flat = eps.ravel()[:, None]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        l1 = np.asarray(desc.logpmf(k, q1), dtype=float)
        r = np.asarray(desc.log_ratio(k, q1, q2), dtype=float)
        value = np.zeros(flat.shape[0])
        err = np.zeros(flat.shape[0])
        missing = (r == np.inf) & (l1 > -np.inf)  # M(q1) lands here, M(q2) never
        alone = float(np.sum(np.exp(l1[missing])))
        value, err = (
            value + alone,
            err + _K * float(np.sum((1 + np.abs(l1[missing])) * np.exp(l1[missing]))),
        )
        keep = np.isfinite(r) & (l1 > -np.inf)
        l1k, rk = l1[keep], r[keep]
        l_err = _K * (1.0 + np.abs(l1k))
        if runs:  # each run: its mass under q1 (log) and its log-ratio, with the mass's rounding
            lam = float(desc.kernel_rate)
            log_step = math.log(-math.expm1(-lam))
            for a, b in runs:
                ends = [v for v in (a, b) if math.isfinite(v)]
                ends_l1 = np.asarray(desc.logpmf(np.array(ends), q1), dtype=float)
                ends_r = np.asarray(desc.log_ratio(np.array(ends), q1, q2), dtype=float)
                top = float(np.max(ends_l1))
                ratio = float(ends_r[0])
                if top == -np.inf or not ratio > -np.inf:
                    continue
                length = b - a + 1
                log_mass = top - log_step
                if math.isfinite(length):
                    log_mass += math.log(-math.expm1(-lam * length))
                if ratio == np.inf:  # M(q2) never lands on the run
                    value = value + math.exp(log_mass)
                    err = err + _K * (4 + abs(top) + abs(log_mass)) * math.exp(log_mass)
                    continue
                l1k = np.r_[l1k, log_mass]
                rk = np.r_[rk, ratio]
                rounding = _K * (8.0 + abs(top) + abs(log_step) + abs(log_mass))
                l_err = np.r_[l_err, rounding]
        l1k, rk, l_err = l1k[None, :], rk[None, :], l_err[None, :]
        x_raw = flat - rk
        x = np.minimum(x_raw, 0.0)
        c = np.exp(l1k + np.log(-np.expm1(x)))
        # the family's log_ratio is accurate relative to itself (also for close laws)
        x_err = _K * np.abs(rk) + 2 * np.spacing(np.abs(np.nan_to_num(x_raw)))
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


def _kernel_outputs(lo, hi, q1, q2):
    """``(outputs, runs)`` for a discrete Laplace kernel on the support ``[lo, hi]`` and the pair ``(q1, q2)``:
    the outputs summed one by one (from one below the lower centre ``clip(q)`` to one above the upper one,
    and the support's finite ends with their neighbours) and the runs of outputs between and beyond them,
    ``(a, b)`` (``a = -inf`` or ``b = inf`` for a tail), which hold no centre and no end."""
    c1, c2 = min(max(q1, lo), hi), min(max(q2, lo), hi)
    picked = set(np.arange(min(c1, c2) - 1.0, max(c1, c2) + 2.0).tolist())
    for end in (lo, hi):
        if math.isfinite(end):
            picked |= {end - 1.0, end, end + 1.0}
    k = np.array(sorted(v for v in picked if lo <= v <= hi))
    runs = []
    if lo == -math.inf:
        runs.append((-math.inf, float(k[0]) - 1.0))
    runs += [
        (float(a) + 1.0, float(b) - 1.0) for a, b in zip(k[:-1], k[1:]) if b - a > 1
    ]
    if hi == math.inf:
        runs.append((float(k[-1]) + 1.0, math.inf))
    return k, runs


# --- the atoms -------------------------------------------------------------------------------------


def _atoms(desc, q1, q2, pair, eps):
    """``(Σ_atoms (m1 - e^ε m2)_+, a bound on its rounding error)`` at each slot ``(pair[k], eps[k])``."""
    value = np.zeros(eps.shape)
    err = np.zeros(eps.shape)
    for atom in desc.atoms:
        logmass = atom[1]
        # per pair: log m1, and the log-ratio with its error (NaN where M(q2) puts no mass there)
        l1s, diffs, d_errs = (np.full(q1.size, np.nan) for _ in range(3))
        for j in range(q1.size):
            a, b = float(q1[j]), float(q2[j])
            l1, l2 = float(logmass(a)), float(logmass(b))
            l1s[j] = l1
            if l1 == -math.inf or l2 == -math.inf:
                continue
            diff, d_err = l1 - l2, 4 * float(np.spacing(abs(l1)) + np.spacing(abs(l2)))
            if len(atom) > 2:  # the accurate ratio, where it gives a number
                out = atom[2](a, b)
                fine, f_err = (
                    out if isinstance(out, tuple) else (out, 4 * np.spacing(abs(out)))
                )
                fine, f_err = float(fine), float(f_err)
                if not (math.isnan(fine) or math.isnan(f_err)):
                    diff, d_err = fine, f_err
            diffs[j], d_errs[j] = diff, d_err
        l1, diff, d_err = l1s[pair], diffs[pair], d_errs[pair]
        with np.errstate(
            over="ignore", invalid="ignore", divide="ignore", under="ignore"
        ):
            # M(q1) lands here, M(q2) never: all of m1 counts at every ε
            alone = (l1 > -np.inf) & np.isnan(diff)
            whole = np.exp(np.where(alone, l1, -np.inf))
            value = value + whole
            err = err + np.where(alone, _K * (1.0 + np.abs(l1)) * whole, 0.0)
            x_raw = eps - diff
            x = np.minimum(x_raw, 0.0)
            c = np.exp(l1 + np.log(-np.expm1(x)))
            x_err = d_err + 2 * np.spacing(np.abs(x_raw))
            l_err = _K * (1.0 + np.abs(l1))
            c_err = _product_error(c, l1, x, l_err, x_err)
            dead = np.isnan(diff) | np.isinf(eps) | (x_raw >= x_err)
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


def privacy_profile(mechanism, sensitivity, epsilon, *, domain=None, neighbours=None):
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
    clamp) is a post-processing of ``q + Z``, so no pair exceeds the kernel's own divergence at ``Δ``;
    (v) every law is within its outside mass ``β`` of the kernel's in every set of outputs (conditioning on
    the pieces, or moving that mass to the atoms, changes no probability by more), so
    ``H(u, u + Δ) <= H_K + β + e^ε β'`` with ``H_K`` the kernel's own divergence at ``Δ`` and ``β`` (``β'``)
    the largest outside mass at the centres of the cell (of the cell shifted by ``Δ``).
    The cells start at the landmarks of the auditor's search along the edge (``privacy_loss``); cells
    running off to infinity use the kernel itself (every law is within its outside mass of it in every
    half-line) and the mass an end atom keeps.  Cells whose bound exceeds the best pair found by more than
    ``1e-4`` of it are halved, the worst first, within a budget of about ``1024`` pair evaluations (``8192``
    for several ε).  One
    search serves every ε: each cell carries the ε at which it is still open; a halved cell is searched on
    at the ε where its bound exceeds the best pair found there, and settled with its bound at the others;
    the cells beyond the landmarks are searched only at the ε where (v) leaves them above the best pair
    found at the landmarks.  The pairs of a round are evaluated together, each at its cells' ε only (one
    vectorized pass).  The value returned is the largest bound of any cell at each ε (and of any pair
    evaluated there): never below δ(ε).  Its
    slack, the distance to the best pair found, is :func:`pair_profile`'s rounding allowance (``~1e-12``
    relative) for Laplace, Gaussian and clamped (``BIT``-like) laws (a clamped Gaussian near its loss:
    up to ``4e-2`` relative, ``2e-6`` absolute); for a truncation or normalization the search may end at
    the budget.  Measured on 1,000 ε spread over ``[0, loss)``: two pieces (``Truncated`` on ``[0, 2]``,
    ``Normalized`` on ``[0, 1] ∪ [2, 4]``) at most ``1e-4`` relative; Chapter 12's clinic (six pieces) a median
    of ``1e-3`` relative and at most ``2.4e-4`` absolute; a one-sided ``GaussianTruncated`` a median of
    ``7e-3`` relative and at most ``9e-5`` absolute; the relative slack grows to order 1 close to the loss,
    where δ is tiny.  A kernel far narrower than the range is the loose case: ``GaussianTruncated(0.0373)`` on
    ``[0, 1]`` with ``Δ = 0.01`` at ``ε = 1`` gives ``1.3e-4`` where the best pair is ``1.0e-5`` (:func:`profile_bounds`
    reports both, and ``exact=False``).  At
    ``ε >=`` the audited loss the value is exactly 0.  An integer-valued family with a finite support and a
    finite domain is summed over every integer pair of the domain: exact.

    Every kind of description.  :func:`profile_bounds` gives the value with the best pair found below it and
    says whether it is δ(ε) itself (``exact``: up to :func:`pair_profile`'s rounding, ``1e-9`` relative):

    ===================================================  =====================================================
    description                                          answer
    ===================================================  =====================================================
    a kernel of one scale, centre ``q`` plus a constant   the edge search above: exact (Laplace, Gaussian, clamps)
    (Laplace, Gauss; clamped, truncated, normalized)     or a bound within its slack (a search that ends at its
                                                         budget: truncations, normalizations)
    integer-valued, finite support and domain            every pair summed: exact
    integer-valued, a discrete Laplace kernel            pairs summed with geometric tails in closed form
    (``kernel_rate``), infinite support or domain        (``_discrete_bounds``): exact; on the whole line the
                                                         law only translates, so ``(0, Δ)`` is worst on any
                                                         domain; with a finite end of the support on an
                                                         infinite domain the pairs near the ends, and bounds
                                                         of ``~e^{-40}`` beyond (``_discrete_far_profile``)
    the base of a post-processing (``exact=False``)      the base's profile: an upper bound (post-processing
                                                         cannot raise a hockey-stick divergence), ``lower = 0``
    neighbours in ``log q`` (``'log'``, ``'relative'``)  the edge search on the family described in ``log q``
                                                         (``log_q``): exact (LogLaplace's default)
    a positive family, additive neighbours               its ``log_q`` is a location family: the pair at the
                                                         largest log-distance, ``(lo, lo + Δ)``: exact; a
                                                         domain reaching 0: 1 (the point mass at ``q = 0``)
    a scale that varies with ``q`` (``enclosure``)       a certified upper bound (windowed loss and the mass
                                                         outside the window, randomized-response form; 1 on an
                                                         infinite domain), pairs on the edge below it
    no description (Restricted with a logistic or t      ``NotImplementedError``, as for ``privacy_loss``
    base)
    ===================================================  =====================================================

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism with a ``privacy_description()`` (see the table).
    sensitivity : float
        ``Δ > 0``: true values at most ``Δ`` apart are neighbours (see ``neighbours``).
    epsilon : float or array_like
        ``ε >= 0`` (``inf`` allowed); the result has its shape.
    domain : (float, float), optional
        The closed interval of true values (ends may be infinite); default ``mechanism.domain``.
    neighbours : {'additive', 'log', 'relative'}, optional
        How ``sensitivity`` is read, as for :func:`dpbook.privacy_loss` (default: the family's own relation,
        ``'log'`` for :class:`dpbook.LogLaplace`); only ``'additive'`` for an integer-valued family.

    Returns
    -------
    float or ndarray
        δ(ε), an upper bound never below it (see Method for its slack, and the table).

    Raises
    ------
    ValueError
        For a ``sensitivity``, ``epsilon``, ``domain`` or ``neighbours`` that is not valid, naming it and its
        value.
    NotImplementedError
        Where no bound is proved: a family without a description (``Restricted`` with a base that is not
        Laplace-shaped), atoms inside the density's range or with a normalized density, a centre that is not
        the true value plus a constant (other than a positive family whose ``log_q`` is a location family);
        an integer-valued law with an infinite support or domain and no ``kernel_rate``.

    Examples
    --------
    >>> from dpbook import Laplace
    >>> delta = privacy_profile(Laplace(1.0), 1.0, [0.0, 0.5, 1.0])
    >>> [round(float(d), 6) for d in delta]  # 1 - e^{(ε - Δ/b)/2}
    [0.393469, 0.221199, 0.0]
    """
    upper, _ = _privacy_profile_bounds(
        mechanism, sensitivity, epsilon, domain=domain, neighbours=neighbours
    )
    return float(upper) if upper.ndim == 0 else upper


def epsilon_for_delta(mechanism, sensitivity, delta, *, domain=None, neighbours=None):
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
    neighbours : {'additive', 'log', 'relative'}, optional
        As for :func:`privacy_profile`.

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
        return _privacy_profile_bounds(
            mechanism, sensitivity, e, domain=domain, neighbours=neighbours
        )[0]

    top = float(profile(0.0))
    if top <= d:
        return 0.0
    loss = _audited_loss(mechanism, sensitivity, domain, neighbours)
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
    # certified by the call a user makes, privacy_profile at this one ε (a search over many ε shares a larger
    # budget, so its bound at an ε may be tighter than the one-ε search's): step up until that holds too
    step = max(hi - lo, 1e-10 * hi)
    for _ in range(64):
        if float(profile(hi)) <= d:
            return hi
        hi += step
        step *= 2.0
    return math.inf


def _audited_loss(mechanism, sensitivity, domain, neighbours=None):
    return float(
        privacy_loss(mechanism, sensitivity, domain=domain, neighbours=neighbours)
    )


def _privacy_profile_bounds(
    mechanism, sensitivity, epsilon, *, domain=None, neighbours=None
):
    """``(upper, lower)``: arrays shaped like ``epsilon``; ``upper`` is :func:`privacy_profile` (never below δ(ε)),
    ``lower`` the largest lower bound of a pair evaluated (never above it; 0 for a post-processing, whose own
    law is not described)."""
    desc = describe(mechanism)
    name = type(mechanism).__name__
    delta = check.positive("sensitivity", sensitivity)
    eps = _epsilon(epsilon)
    lo, hi = _interval("domain", mechanism.domain if domain is None else domain)
    if not isinstance(desc, PrivacyDescription):
        if neighbours is not None:
            Neighbours.parse(
                f"neighbours (for the integer-valued {name})",
                neighbours,
                (Neighbours.ADDITIVE,),
            )
        upper, lower = _discrete_profile(desc, delta, lo, hi, eps, name)
        # the base of a post-processing: its profile bounds the release's from above only
        return upper, (lower if desc.exact else np.zeros(eps.shape))
    relation = Neighbours.parse(
        "neighbours", desc.neighbours if neighbours is None else neighbours, TRUE_VALUES
    )
    # bounded noise: a translation family, exact at |q1 - q2| = Δ
    if _moving_support(desc):
        return _moving_profile_bounds(desc, delta, lo, hi, eps, name, relation)
    flat = eps.ravel()
    upper, lower = np.zeros(flat.shape), np.zeros(flat.shape)
    # from the audited loss on (never below the truth) every pair's divergence is exactly 0
    loss = _audited_loss(mechanism, delta, (lo, hi), relation)
    live = flat < loss
    if relation == Neighbours.ADDITIVE and desc.positive and lo <= 0:
        # the law at q = 0, a point mass at 0, which no other has: δ(inf) = 1 too
        live[:] = True
    if live.any():
        if relation != Neighbours.ADDITIVE:  # the family described in log q
            base, d, lo_t, hi_t = _log_relation(desc, delta, lo, hi, relation, name)
            _edge_hypotheses(base, name)
            upper[live], lower[live] = _edge_profile(base, d, lo_t, hi_t, flat[live])
        elif desc.positive:
            upper[live], lower[live] = _positive_profile(
                desc, delta, lo, hi, flat[live], name
            )
        elif not desc.uniform:
            upper[live], lower[live] = _varying_scale_profile(
                mechanism, desc, delta, lo, hi, flat[live], loss
            )
        else:
            _edge_hypotheses(desc, name)
            upper[live], lower[live] = _edge_profile(desc, delta, lo, hi, flat[live])
    if not desc.exact:  # the base of a post-processing: an upper bound only
        lower[:] = 0.0
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


def _bare_kernel(desc):
    """``desc``'s kernel alone: on the whole line, no atoms, no normalizer (the law of ``q + c + Z``)."""
    return dataclasses.replace(
        desc,
        pieces=((-math.inf, math.inf),),
        atoms=(),
        log_norm=None,
        log_norm_ratio=None,
    )


def _edge_profile(desc, delta, lo, hi, eps):
    """``(upper, lower)`` of the supremum over the edge, for finite ε below the loss (the method of
    :func:`privacy_profile`)."""
    if hi - lo <= delta:  # the two ends: exact
        (up, up_lo), (dn, dn_lo) = _evaluate(desc, [(lo, hi), (hi, lo)], eps)
        return np.maximum(up, dn), np.maximum(up_lo, dn_lo)
    if _translates(desc):  # every edge pair is the pair at u: exact
        u = lo if math.isfinite(lo) else (hi - delta if math.isfinite(hi) else 0.0)
        (up, up_lo), (dn, dn_lo) = _evaluate(
            desc, [(u, u + delta), (u + delta, u)], eps
        )
        return np.maximum(up, dn), np.maximum(up_lo, dn_lo)
    ulo, uhi = lo, hi - delta
    grid, remote = _edge_grid(desc, delta, ulo, uhi, [])
    # the kernel's own divergence at Δ, both directions (translation invariant: the pairs (0, Δ), (Δ, 0))
    kernel = _bare_kernel(desc)
    (k_up, _), (k_dn, _) = _evaluate(kernel, [(0.0, delta), (delta, 0.0)], eps)
    # a kernel whose outside mass the atoms hold is a post-processing (a clamp) of q + c + Z: no pair of it
    # exceeds the kernel's own divergence at Δ
    cap = np.ones(eps.shape)
    if desc.log_norm is None and len(desc.pieces) == 1:
        cap = k_up
    shift = 0.0 if desc.center_shift is None else float(desc.center_shift)
    s = float(np.asarray(desc.scale(np.array(0.0))))
    gaps = _gaps(desc.pieces)
    top = np.finfo(float).max
    with np.errstate(over="ignore"):
        grow_all = np.exp(eps)
    # u -> [upper, lower of H(u, u + Δ), upper, lower of H(u + Δ, u), evaluated?] over all ε (NaN where not)
    points = {}
    spent = 0

    # the best pair found at each ε (its upper and lower value), kept up as points are evaluated (each point is
    # evaluated once at each ε)
    best_up, best_low = np.full(eps.shape, -np.inf), np.full(eps.shape, -np.inf)

    def best():
        return best_up.copy(), best_low.copy()

    def kernel_bounds(cells):
        """Bound (v) on each cell ``(a, b, idx)`` of ``u`` at the ε of ``eps[idx]``: every law is within its outside
        mass ``β`` of the kernel's in every set of outputs, so ``H(u, u + Δ) <= H_K + β(u) + e^ε β(u + Δ)`` (and
        the mirror image), ``H_K`` the kernel's.  The cells' masses in one vectorized pass."""
        a_ = np.array([c[0] for c in cells], dtype=float)
        b_ = np.array([c[1] for c in cells], dtype=float)
        b1s = _outside_mass(desc, s, gaps, a_ + shift, b_ + shift)
        b2s = _outside_mass(desc, s, gaps, a_ + delta + shift, b_ + delta + shift)
        out = []
        with np.errstate(over="ignore", invalid="ignore"):
            for (_, _, idx), b1, b2 in zip(cells, b1s, b2s):
                grow = grow_all[idx]
                up = (k_up[idx] + b1 + grow * b2) * (1 + 1e-15)
                dn = (k_dn[idx] + b2 + grow * b1) * (1 + 1e-15)
                out.append(
                    (np.where(np.isnan(up), 1.0, up), np.where(np.isnan(dn), 1.0, dn))
                )
        return out

    def evaluate_points(want):
        """Evaluate both pairs of each point ``u`` of ``want`` at ``eps[i]`` for each index array ``i`` it holds."""
        nonlocal spent
        new = sorted(want)
        sets = [np.unique(np.concatenate(want[v])) for v in new]
        values = _evaluate(
            desc,
            [p for u in new for p in ((u, u + delta), (u + delta, u))],
            eps,
            [i for i in sets for _ in range(2)],
        )
        spent += 2 * len(new)
        for k, (u, idx) in enumerate(zip(new, sets)):
            if u not in points:  # (four rows of one block)
                points[u] = [*np.full((4, eps.size), np.nan), np.zeros(eps.shape, bool)]
            rec = points[u]
            (rec[0][idx], rec[1][idx]), (rec[2][idx], rec[3][idx]) = values[
                2 * k : 2 * k + 2
            ]
            rec[4][idx] = True
            best_up[idx] = np.maximum(
                best_up[idx], np.maximum(rec[0][idx], rec[2][idx])
            )
            best_low[idx] = np.maximum(
                best_low[idx], np.maximum(rec[1][idx], rec[3][idx])
            )

    def bounds_of(cells, target):
        """An upper bound of ``max(H(u, u + Δ), H(u + Δ, u))`` over ``u`` in each cell ``(a, b, idx)`` (ends may
        be infinite) at each ε of ``eps[idx]``: the ends are evaluated where not yet, in one batch, then the
        monotone pairs of the cells at the ε where the other bounds leave them above ``target``."""
        nonlocal spent
        want = {}
        for a, b, idx in cells:
            for v in (a, b):
                if math.isfinite(v):
                    known = (
                        points[v][4][idx] if v in points else np.zeros(idx.size, bool)
                    )
                    if not known.all():
                        want.setdefault(v, []).append(idx[~known])
        evaluate_points(want)
        # the translation and curvature bounds' constants of every finite cell, in one vectorized pass each
        a_, b_ = (
            np.array([c[k] for c in cells if math.isfinite(c[0] + c[1])])
            for k in (0, 1)
        )
        d1s = iter(_drift(desc, s, a_ + shift, b_ - a_))
        d2s = iter(_drift(desc, s, a_ + delta + shift, b_ - a_))
        k1s = iter(_curvature(desc, s, a_ + shift, b_ + shift))
        k2s = iter(_curvature(desc, s, a_ + delta + shift, b_ + delta + shift))
        outer = [c for c in cells if not inside[0] <= c[0] <= c[1] <= inside[1]]
        kbs = iter(kernel_bounds(outer))  # β is small only away from the landmarks
        parts = []
        with np.errstate(over="ignore", invalid="ignore"):
            for a, b, idx in cells:
                ends = [points[v] for v in (a, b) if math.isfinite(v)]
                grow = grow_all[idx]
                finite = math.isfinite(a) and math.isfinite(b)
                if finite:
                    # the translation bound from the cell's lower end: the law of M(u) - u moves by at
                    # most d1 (d2 for u + Δ) in every half-line over the cell
                    d1, d2 = float(next(d1s)), float(next(d2s))
                else:  # from the kernel itself: within β of it in every half-line
                    d1 = 2 * _outside_mass(desc, s, gaps, a + shift, b + shift)
                    d2 = 2 * _outside_mass(
                        desc, s, gaps, a + delta + shift, b + delta + shift
                    )
                t_up = ends[0][0][idx] + d1 + (grow * d2 if d2 > 0 else 0.0)
                t_dn = ends[0][2][idx] + d2 + (grow * d1 if d1 > 0 else 0.0)
                if finite:
                    # the curvature bound: for a fixed half-line (-inf, τ] of outputs F_u(τ) has a bounded
                    # second derivative in u, so each direction is at most its larger end value + K h^2/8
                    k1, k2 = float(next(k1s)), float(next(k2s))
                    w = ((b - a) / s) ** 2 / 8  # the curvatures are in units of s^-2
                    c_up = (
                        np.maximum(ends[0][0][idx], ends[1][0][idx])
                        + (k1 + grow * k2) * w
                    )
                    c_dn = (
                        np.maximum(ends[0][2][idx], ends[1][2][idx])
                        + (k2 + grow * k1) * w
                    )
                    t_up, t_dn = np.minimum(t_up, c_up), np.minimum(t_dn, c_dn)
                t_up = np.where(np.isnan(t_up), 1.0, t_up)  # no bound: 1 bounds any δ
                t_dn = np.where(np.isnan(t_dn), 1.0, t_dn)
                if not inside[0] <= a <= b <= inside[1]:
                    kb_up, kb_dn = next(kbs)
                    t_up = np.minimum(t_up, kb_up)
                    t_dn = np.minimum(t_dn, kb_dn)
                found = np.maximum.reduce(
                    [np.maximum(e[0][idx], e[2][idx]) for e in ends]
                )
                parts.append((t_up, t_dn, found))
        # the monotone bound, H(u, u + Δ) <= H(a, b + Δ), at the ε where the others leave the cell open
        mono, sets, need = [], [], []
        for (a, b, idx), (t_up, t_dn, _) in zip(cells, parts):
            open_ = np.minimum(np.maximum(t_up, t_dn), cap[idx]) > target[idx]
            need.append(open_)
            if open_.any():
                qa = a if math.isfinite(a) else -top
                qb = b + delta if math.isfinite(b + delta) else top
                mono += [(qa, qb), (qb, qa)]
                sets += [idx[open_]] * 2
        values = iter(_evaluate(desc, mono, eps, sets))
        spent += len(mono)
        out = []
        for (a, b, idx), (t_up, t_dn, found), open_ in zip(cells, parts, need):
            if open_.any():
                (m_up, _), (m_dn, _) = next(values), next(values)
                t_up, t_dn = t_up.copy(), t_dn.copy()
                t_up[open_] = np.minimum(
                    t_up[open_], np.where(np.isnan(m_up), 1.0, m_up)
                )
                t_dn[open_] = np.minimum(
                    t_dn[open_], np.where(np.isnan(m_dn), 1.0, m_dn)
                )
            bound = np.maximum(t_up, t_dn)
            if not (math.isfinite(a) and math.isfinite(b)):
                bound = np.minimum(bound, _far_atom_bound(desc, a, b, delta))
            out.append(
                np.minimum(np.maximum(bound, found), np.maximum(cap[idx], found))
            )
        return out

    # many ε share the cells but not the places where each needs them halved: eight times the budget of one ε
    budget = _PROFILE_BUDGET if eps.size == 1 else 8 * _PROFILE_BUDGET
    every = np.arange(eps.size)
    ends = [(float(a), float(b)) for a, b in zip(grid[:-1], grid[1:])]
    if ulo == -math.inf:
        ends.insert(0, (-math.inf, float(grid[0])))
    if uhi == math.inf:
        ends.append((float(grid[-1]), math.inf))
    if not ends:
        ends = [(float(grid[0]), float(grid[0]))]
    # the landmarks and the points between them first, at every ε; the cells beyond are searched only at the ε
    # where the kernel bound (v) leaves them above the best pair found there
    anchors = grid[remote == 0]
    inside = float(anchors.min()), float(anchors.max())
    evaluate_points({float(u): [every] for u in grid if inside[0] <= u <= inside[1]})
    settled = np.zeros(
        eps.shape
    )  # the largest bound of any cell (at an ε) no longer searched
    found = best()[0]
    cells = []
    outer = iter(
        kernel_bounds(
            [(a, b, every) for a, b in ends if not inside[0] <= a <= b <= inside[1]]
        )
    )
    for a, b in ends:
        bound = np.ones(eps.shape)
        if not inside[0] <= a <= b <= inside[1]:
            bound = np.maximum(*next(outer))
        open_ = bound > found
        settled[~open_] = np.maximum(settled[~open_], bound[~open_])
        if open_.any():
            cells.append((a, b, every[open_]))
    bounds = bounds_of(cells, found * (1 + _PROFILE_RTOL) + 1e-300)

    while True:
        found, _ = best()
        target = found * (1 + _PROFILE_RTOL) + 1e-300
        # the excess weighed by the profile's size (relative near its top, absolute where δ is small)
        weight = found + 1e-2 * found.max() + 1e-300
        keep, excess = [], []
        for (a, b, idx), bd in zip(cells, bounds):
            splittable = (
                math.isfinite(a)
                and math.isfinite(b)
                and b - a > 4 * np.spacing(max(abs(a), abs(b)))
            )
            over = (bd - target[idx]) / weight[idx]
            worst = float(np.max(over)) if over.size else -math.inf
            if splittable and worst > 0:
                keep.append(((a, b, idx), bd, bd > found[idx]))
                excess.append(worst)
            else:
                settled[idx] = np.maximum(settled[idx], bd)
        room = (
            budget - spent
        ) // 4  # a split costs a midpoint and at most two monotone pairs
        if not keep or room <= 0:
            for (_, _, idx), bd, _ in keep:
                settled[idx] = np.maximum(settled[idx], bd)
            break
        order = np.argsort(excess)[
            ::-1
        ]  # the worst cells first, while the budget lasts
        for i in order[room:]:
            (_, _, idx), bd, _ = keep[i]
            settled[idx] = np.maximum(settled[idx], bd)
        # a split cell is searched on at the ε where its bound is open; it is settled at the others
        cells = []
        for i in order[:room]:
            (a, b, idx), bd, open_ = keep[i]
            settled[idx[~open_]] = np.maximum(settled[idx[~open_]], bd[~open_])
            mid = 0.5 * (a + b)
            cells += [(a, mid, idx[open_]), (mid, b, idx[open_])]
        bounds = bounds_of(cells, target)
    found, low = best()
    return np.maximum(settled, found), low


def _evaluate(desc, pairs, eps, sets=None):
    """``[(upper, lower), ...]`` of ``H_ε`` for each pair (a pair of equal true values: 0), at ``eps`` or, with
    ``sets``, at ``eps[sets[i]]`` for the i-th pair: all pairs in one vectorized pass."""
    if not pairs:
        return []
    _check_size(desc, eps.size)
    if sets is None:
        sets = [np.arange(eps.size)] * len(pairs)
    out = [(np.zeros(len(i)), np.zeros(len(i))) for i in sets]
    todo = [k for k, (q1, q2) in enumerate(pairs) if q1 != q2 and len(sets[k])]
    if not todo:
        return out
    losses = np.array(_pair_losses(desc, [pairs[k] for k in todo]))
    q1 = np.array([float(pairs[k][0]) for k in todo])
    q2 = np.array([float(pairs[k][1]) for k in todo])
    sizes = np.array([len(sets[k]) for k in todo], dtype=np.intp)
    pair = np.repeat(np.arange(len(todo)), sizes)
    upper, lower = _pair_bounds(
        desc, q1, q2, losses, pair, np.concatenate([eps[sets[k]] for k in todo])
    )
    ends = np.cumsum(sizes).tolist()
    for k, start, stop in zip(todo, [0] + ends[:-1], ends):
        out[k] = (upper[start:stop], lower[start:stop])
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
    atoms hold the kernel's outside mass (the density is not normalized).  ``c`` and ``h``: arrays, one cell
    each."""
    c, h = np.broadcast_arrays(np.asarray(c, dtype=float), np.asarray(h, dtype=float))
    lo, hi = (np.array(v, dtype=float)[:, None] for v in zip(*desc.pieces))
    with np.errstate(over="ignore", invalid="ignore"):
        cut = hi - h
        inner = cut > lo
        num, num_err = _log_kernel_mass(
            desc, s, c, np.broadcast_to(lo, cut.shape), cut, inner
        )
        den, den_err = np.zeros(c.shape), np.zeros(c.shape)
        if desc.log_norm is not None:
            reach = lo - h
            den, den_err = _log_kernel_mass(
                desc,
                s,
                c,
                reach,
                np.broadcast_to(hi, reach.shape),
                np.ones(reach.shape, bool),
            )
        gap = np.minimum(num - den - num_err - den_err, 0.0)
    return np.where(inner.any(axis=0), np.minimum(1.0, -np.expm1(gap) + 1e-300), 1.0)


def _curvature(desc, s, c_lo, c_hi):
    """A bound of ``s^2 |d^2/dq^2 F_q(τ)|`` (scale-free) over every output ``τ`` and every centre in ``[c_lo, c_hi]``.

    For a clamp (atoms holding the outside mass) ``F_q(τ)`` is the kernel's cdf at ``τ - m(q)`` or a constant, so
    the bound is ``sup |k'|``.  For a kernel conditioned on the pieces, ``F = A/N`` with ``A`` the kernel's mass
    of the pieces below ``τ`` and ``N`` of all of them: ``A'`` and ``N'`` are sums of ``±k`` at the interval ends
    (the finite piece ends and ``τ``), ``A''`` and ``N''`` of ``±k'``, so with ``A <= N``
    ``|F''| <= (E1 + k'max)/N + 2 (E0 + kmax) E0/N^2 + E1/N + 2 E0^2/N^2``, where ``E0`` (``E1``) sums the largest
    ``k`` (``|k'|``) at each finite end over the cell and ``N`` is at least the mass of the pieces cut short by
    the cell's width (see :func:`_drift`); ``k`` is counted in units of ``1/s``, ``k'`` of ``1/s^2``.  ``c_lo``,
    ``c_hi``: arrays, one cell each (``inf`` where there is no bound)."""
    c_lo, c_hi = np.broadcast_arrays(
        np.asarray(c_lo, dtype=float), np.asarray(c_hi, dtype=float)
    )
    if desc.shape == "laplace":
        kmax, dmax = 0.5, 0.5

        def k0(z):
            return 0.5 * np.exp(-z)

        def k1(z_lo, z_hi):
            return k0(z_lo)

    else:
        kmax, dmax = 1 / math.sqrt(2 * math.pi), 1 / math.sqrt(2 * math.pi * math.e)

        def k0(z):
            return np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

        def k1(z_lo, z_hi):  # |k'(z)| = z k(z) rises to z = 1, then falls
            z = np.minimum(np.maximum(1.0, z_lo), z_hi)
            return z * k0(z)

    if desc.log_norm is None:  # a clamp
        return np.full(c_lo.shape, dmax * (1 + 1e-9))
    e0, e1 = np.zeros(c_lo.shape), np.zeros(c_lo.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for a, b in desc.pieces:
            for e in (a, b):
                if math.isfinite(e):
                    z_lo = np.maximum(np.maximum(e - c_hi, c_lo - e), 0.0) / s
                    z_hi = np.maximum(np.abs(e - c_lo), np.abs(e - c_hi)) / s
                    e0 += k0(z_lo)
                    e1 += k1(z_lo, z_hi)
        lo, hi = (np.array(v, dtype=float)[:, None] for v in zip(*desc.pieces))
        cut = hi - (c_hi - c_lo)
        inner = cut > lo
        log_n, err = _log_kernel_mass(
            desc, s, c_lo, np.broadcast_to(lo, cut.shape), cut, inner
        )
        n = np.exp(log_n - err)
        bound = (
            (e1 + dmax) / n + 2 * (e0 + kmax) * e0 / n**2 + e1 / n + 2 * e0**2 / n**2
        )
        # (n^2 underflows, e.g. a scale of 1e300 over pieces of unit width: no bound)
        return np.where(inner.any(axis=0) & (n * n != 0), bound * (1 + 1e-9), math.inf)


def _log_kernel_mass(desc, s, c, x, y, keep):
    """``(log of the kernel's mass of the intervals [x, y] where keep, at centre c, a bound on its rounding error)``:
    arrays, an interval a row and a cell a column (``c`` one per cell)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        if desc.shape == "laplace":
            v = _piece_log_mass(c, s, x, y)
            e = _K * (2.0 + np.abs(v))
        else:
            v, e = _log_normal_mass((x - c) / s, (y - c) / s)
            e = e + _K * (2.0 + np.abs(v))
        v = np.where(keep, v, -np.inf)
        top = np.max(v, axis=0)
        live = top > -np.inf
        shift = np.where(live, top, 0.0)
        total = top + np.log(np.sum(np.exp(v - shift), axis=0))
        err = np.max(np.where(keep, e, 0.0), axis=0) + _K * (
            np.sum(keep, axis=0) + np.abs(total)
        )
    return np.where(live, total, -np.inf), np.where(live, err, 0.0)


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
    and symmetric), so it is largest at the centre nearest the gap; 1 when a centre lies in the gap.
    ``c_lo`` and ``c_hi`` may be arrays (one bound per cell, in one vectorized pass); floats give a float."""
    scalar = np.ndim(c_lo) == 0 and np.ndim(c_hi) == 0
    c_lo, c_hi = np.broadcast_arrays(
        np.asarray(c_lo, dtype=float), np.asarray(c_hi, dtype=float)
    )
    total = np.zeros(c_lo.shape)
    hit = np.zeros(c_lo.shape, bool)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for x, y in gaps:
            hit |= (c_hi >= x) & (c_lo <= y)
            c = np.where(c_hi < x, c_hi, c_lo)
            if desc.shape == "laplace":
                mass = np.exp(_piece_log_mass(c, s, x, y))
            else:
                value, err = _log_normal_mass((x - c) / s, (y - c) / s)
                mass = np.exp(value + err)
            total += np.where(hit, 0.0, mass)
        out = np.where(hit, 1.0, np.minimum(total * (1 + 1e-9), 1.0))
    return float(out) if scalar else out


def _discrete_profile(desc, delta, lo, hi, eps, name):
    """Every integer pair ``q1 != q2`` of the domain at most ``Δ`` apart: the exact maximum of their profiles.

    A discrete Laplace kernel on the whole line (``kernel_rate``, support ``(-inf, inf)``) only translates with
    ``q``, so every pair ``(u, u + d)`` has the profile of ``(0, d)``; its log-ratio is monotone in the output
    (a monotone likelihood ratio), so moving ``q2`` away from ``q1`` only raises it (as for the continuous
    kernels, :func:`privacy_profile`): the pairs ``(0, D)`` and ``(D, 0)``, ``D`` the largest integer distance
    in the domain at most ``Δ``, are the worst, on any domain.  With a finite end of the support and an
    infinite domain: :func:`_discrete_far_profile`.  Otherwise the domain must be finite."""
    if desc.kernel_rate is not None and desc.support != (-math.inf, math.inf):
        if not math.isfinite(hi - lo):
            return _discrete_far_profile(desc, delta, lo, hi, eps, name)
    elif desc.kernel_rate is not None:
        width = math.floor(hi) - math.ceil(lo) if hi - lo < math.inf else math.inf
        step = min(math.floor(delta), width)
        if step < 1:
            zero = np.zeros(eps.shape)
            return zero, zero
        (u1, l1), (u2, l2) = (
            _discrete_bounds(desc, x, y, eps, name) for x, y in ((0, step), (step, 0))
        )
        return np.maximum(u1, u2), np.maximum(l1, l2)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise NotImplementedError(
            f"{name}: privacy_profile enumerates the integer pairs of a finite domain; an infinite "
            f"one needs the description's kernel_rate (a discrete Laplace kernel); got domain "
            f"({lo!r}, {hi!r})"
        )
    upper, lower = np.zeros(eps.shape), np.zeros(eps.shape)
    for q1, q2 in _integer_pairs(lo, hi, delta):
        up, low = _discrete_bounds(desc, q1, q2, eps, name)
        upper, lower = np.maximum(upper, up), np.maximum(lower, low)
    return upper, lower


def _integer_pairs(lo, hi, delta):
    """Every pair ``(q1, q2)`` of distinct integers of ``[lo, hi]`` at most ``delta`` apart (both orders), refused
    with a ``ValueError`` beyond ``_MAX_INTEGER_PAIRS``."""
    a, b, step = math.ceil(lo), math.floor(hi), math.floor(delta)
    n = b - a + 1
    count = n * 2 * min(step, max(n - 1, 0))
    if count > _MAX_INTEGER_PAIRS:
        raise ValueError(
            f"domain: ({lo!r}, {hi!r}) holds about {count} integer pairs at most {delta!r} apart, "
            f"over the limit of {_MAX_INTEGER_PAIRS}; pass a shorter domain"
        )
    for q1 in range(a, b + 1):
        for d in range(-step, step + 1):
            if d != 0 and a <= q1 + d <= b:
                yield q1, q1 + d


def _discrete_far_profile(desc, delta, lo, hi, eps, name):
    """A discrete Laplace kernel (``kernel_rate`` ``λ``, ``α = e^{-λ}``) with a finite end of its support, on an
    infinite domain: the pairs ``(u, u + D)`` and ``(u + D, u)`` (the edge: a monotone likelihood ratio, kept by
    conditioning and by clamping), enumerated from ``R`` beyond each finite end of the support to ``T`` inside
    an infinite side, and two bounds for the rest (``lower`` is the best pair enumerated):

    * beyond a finite end ``e`` by ``R`` or more (both true values): the kernel centred there puts all but
      ``β' = α^{R+1}/(1 + α)`` of its mass beyond ``e``, so the law is within ``β'`` in total variation of a law
      that does not depend on ``q`` (the point mass at ``e`` for a clamp; for a conditioning the law is that
      law exactly): ``H <= TV <= 2 β'``;
    * ``T`` or more inside an infinite side (the nearer true value): the law is within ``β = α^{T+1}/(1 + α)`` of
      the kernel centred at ``q`` (the kernel's mass beyond the end, moved or cut), whose divergence at
      distance ``D`` does not depend on ``u``: ``H(u) <= H(u_T) + 2 (1 + e^ε) β`` with ``u_T`` the pair at ``T``.

    ``R = T`` is chosen so that these add about ``e^{-40}``, at most ``512`` (about ``40 b + Δ``: exact for scales
    ``b`` up to about 12; a wider kernel gets a looser bound, up to 1, which ``profile_bounds`` reports as not
    exact; a scale of ``1e6`` takes about 5 s).  From the audited loss on (the discrete auditor's exact
    maximum) the profile is 0."""
    lam = float(desc.kernel_rate)
    s_lo, s_hi = desc.support
    a = math.ceil(lo) if math.isfinite(lo) else -math.inf
    b = math.floor(hi) if math.isfinite(hi) else math.inf
    step = math.floor(delta)
    finite = eps[np.isfinite(eps)]
    top = float(np.max(finite)) if finite.size else 0.0
    loss = float(
        discrete_report(desc, step, (lo, hi), name=name)["epsilon"]
    )  # exact, never below
    top = min(top, loss) if math.isfinite(loss) else top
    depth = math.ceil((40.0 + math.log(2.0) + np.logaddexp(0.0, top)) / lam)
    depth = int(min(depth, _MAX_INTEGER_PAIRS // 8))
    first = s_lo - depth - step if math.isfinite(s_lo) else s_hi - step - depth
    last = s_hi + depth if math.isfinite(s_hi) else s_lo + depth
    u_lo, u_hi = max(a, first), min(b - step, last)
    upper, lower = np.zeros(eps.shape), np.zeros(eps.shape)
    ends = {}
    for u in range(int(u_lo), int(u_hi) + 1):
        for q1, q2 in ((u, u + step), (u + step, u)):
            up, low = _discrete_bounds(desc, q1, q2, eps, name)
            upper, lower = np.maximum(upper, up), np.maximum(lower, low)
            if u in (u_lo, u_hi):
                ends[u] = np.maximum(ends.get(u, 0.0), up)
    log_tail = -lam * (depth + 1) - math.log1p(math.exp(-lam))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for region_end, beyond, end_value in (
            (s_lo, a < u_lo, ends.get(u_lo)),
            (s_hi, b - step > u_hi, ends.get(u_hi)),
        ):
            if not beyond:
                continue
            if math.isfinite(region_end):  # beyond a finite end: H <= 2 β'
                bound = np.full(eps.shape, 2 * math.exp(log_tail))
            else:  # inside an infinite side: H(u_T) + 2 (1 + e^ε) β
                far = np.exp(math.log(2.0) + np.logaddexp(0.0, eps) + log_tail)
                bound = end_value + far
            upper = np.maximum(upper, np.minimum(bound * (1 + 16 * _EPS), 1.0))
    dead = eps >= loss
    return np.where(dead, 0.0, upper), np.where(dead, 0.0, lower)


# --- a support that moves with the centre (bounded noise) -------------------------------------------


def _moving_hockey(s, a, b, d, eps):
    """``(value, error bound)`` of ``H_ε`` for a Laplace kernel of scale ``s`` on the noise support ``[a, b]``,
    the pair of centres ``(0, d)``, ``d > 0``, at each finite or infinite ε of the flat array ``eps``.

    ``P1`` has density ``e^{-|t|/s}/(2sN)`` on ``[a, b]``, ``P2`` the same about ``d`` on ``[d + a, d + b]``
    (``N`` the kernel's mass of ``[a, b]``).  Where ``p2 = 0`` the log-ratio ``L`` is ``+inf``; on the overlap
    ``[d + a, b]`` it is ``d/s`` for ``t <= 0``, ``(d - 2t)/s`` on ``[0, d]``, ``-d/s`` beyond: nonincreasing, so
    ``{L > ε} = [a, τ)`` with ``τ = (d - sε)/2`` for ``ε < d/s``.  Hence

        H_ε = P1([a, d + a)) + ∫_{d + a}^{min(0, b)} (p1 - e^ε p2) + ∫_{max(d + a, 0)}^{min(b, τ)} (p1 - e^ε p2),

    the last two only for ``ε < d/s`` and over nonempty intervals ``[u, v]``: on ``t <= 0``,
    ``(1 - e^{ε - d/s}) e^{v/s} (1 - e^{-(v - u)/s})/(2N)``; on ``[0, d]`` up to ``b < τ``,
    ``(1 - e^{-(b - u)/s}) e^{-u/s} (1 - e^{ε - (d - u - b)/s})/(2N)``, and up to ``τ``
    ``e^{-u/s} (1 - e^{(ε - (d - 2u)/s)/2})²/(2N)`` (``(√X - √Y)²`` with ``X = e^{-u/s}``,
    ``Y = e^{ε - (d - u)/s}``).  Every term is a product of factors ``e^{y}`` and ``1 - e^{x}`` (``x < 0``), written
    with ``expm1``: nothing cancels.  The error bound: a factor ``1 - e^{x}`` whose ``x`` is off by at most ``e``
    is off by at most ``e/|x|`` relative (as ``e^{x}/(1 - e^{x}) <= 1/|x|``), ``e^{y}`` by ``expm1(e)``; each
    exponent's ``e`` is ``_K`` times the size of the numbers it is computed from (``d`` rounded once), and the
    outside mass moves with its end ``d + a`` by at most the density's maximum times that end's rounding.
    """
    log2 = math.log(2.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        log_n = float(_piece_log_mass(0.0, s, a, b))
        n_rel = math.expm1(_K * (2.0 + abs(log_n)))
        end = d + a
        # how far the computed end d + a may be from the true one
        move = _K * (abs(d) + abs(a))
        # the density's largest value within the move of the end, times the move, in logs (s may be 1e-300)
        near = max(abs(end) - move, 0.0) / s
        move_mass = (
            math.exp(math.log(move) - log2 - math.log(s) - log_n - near)
            if move
            else 0.0
        )
        if end >= b:  # the supports do not overlap: H = TV = 1
            value = np.ones(eps.shape)
            return value, np.full(eps.shape, min(move_mass, 1.0))
        if end <= 0.0:
            # P1([a, a + d)) = e^{a/s} (e^{d/s} - 1)/(2N): no rounded end d + a, whose error would be large
            # against a short width d far from the centre
            x_d = d / s
            if x_d > 1.0:  # log(e^{d/s} - 1)
                log_gap = x_d + float(_log1mexp(-x_d))
            else:  # log(d/s) + log((e^{d/s} - 1)/(d/s)), kept where d/s underflows
                rel_gap = math.expm1(x_d) / x_d if x_d > 0 else 1.0
                log_gap = math.log(d) - math.log(s) + math.log(rel_gap)
            log_out = a / s + log_gap - log2 - log_n
            out = math.exp(log_out)
            out_rel = _moving_expm1(_K * (abs(a) / s + 2 * x_d + 4.0))
            move_mass = 0.0
        else:
            out = math.exp(float(_piece_log_mass(0.0, s, a, end)) - log_n)
            out_rel = _K
        value = np.full(eps.shape, out)
        err = np.full(eps.shape, out * (2 * n_rel + out_rel) + move_mass)
        big_d = d / s
        live = np.isfinite(eps) & (eps < big_d)
        e = np.where(live, eps, 0.0)
        # the error of ε - d/s relative to d/s - ε, in units where nothing overflows
        r_d = np.where(live, e / np.where(big_d > 0, big_d, 1.0), 0.0)
        ratio_d = _K * (1 + r_d) / np.maximum(1 - r_d, 1e-300)

        def add(log_term, rel, mask):
            nonlocal value, err
            term = np.where(mask, np.exp(log_term), 0.0)
            rel = np.where(mask, rel, 0.0)
            extra = np.where(
                term > 0, term * np.minimum(rel + 2 * n_rel + _K, 1e300), 0.0
            )
            # a live term that underflowed is below the smallest double
            extra = extra + np.where(mask & (term == 0), np.finfo(float).tiny, 0.0)
            value, err = value + term, err + extra

        # t <= 0: [u, v] = [d + a, min(0, b)]
        u, v = end, min(0.0, b)
        if u < v:
            x = e - big_d
            y = (v - u) / s
            ratio_y = _K * (abs(u) + abs(v) + abs(d)) / (v - u)
            e_v = _K * abs(v) / s
            log_term = np.log(-np.expm1(x)) + v / s + _log1mexp(-y) - log2 - log_n
            rel = _chain(
                [
                    _moving_rel(ratio_d, big_d - e),
                    _moving_rel(ratio_y, y),
                    _moving_expm1(e_v),
                ]
            )
            add(log_term, rel, live)
        # t in [0, d]: [u, v] = [max(d + a, 0), min(b, τ)]
        u = max(end, 0.0)
        e_u = 0.0 if end < 0 else _K * (abs(d) + abs(a)) / s
        eu_s = 0.0 if end < 0 else _K * (abs(d) + abs(a))  # e_u in units of the outputs
        es = np.minimum(e * s, d)  # ε s <= d on the live ε
        # b < τ: the set {L > ε} reaches the support's end
        to_b = live & (e < (d - 2 * b) / s)
        to_tau = live & ~to_b & (e < (d - 2 * u) / s)  # u < τ <= b
        if u < b:
            x = e - (d - u - b) / s
            y = (b - u) / s
            gap = np.maximum((d - u - b) - es, 1e-300)
            ratio_x = (_K * (es + abs(d) + abs(u) + abs(b)) + eu_s) / gap
            ratio_y = (_K * (abs(b) + abs(u)) + eu_s) / (b - u)
            log_term = _log1mexp(-y) - u / s + np.log(-np.expm1(x)) - log2 - log_n
            rel = _chain(
                [
                    _moving_rel(ratio_x, -x),
                    _moving_rel(ratio_y, y),
                    _moving_expm1(_K * u / s + e_u),
                ]
            )
            add(log_term, rel, to_b)
        x = e - (d - 2 * u) / s
        gap = np.maximum((d - 2 * u) - es, 1e-300)
        ratio_x = (_K * (es + abs(d) + 2 * abs(u)) + 2 * eu_s) / gap
        log_term = -u / s + 2 * np.log(-np.expm1(0.5 * x)) - log2 - log_n
        half = _moving_rel(ratio_x, -0.5 * x)
        rel = _chain([half, half, _moving_expm1(_K * u / s + e_u)])
        add(log_term, rel, to_tau)
    return value, err + 4 * np.finfo(float).eps * value


def _moving_rel(ratio, mag):
    """A bound on the relative error of the factor ``1 - e^{-mag}`` (``mag > 0``) when ``mag`` is off by at most
    ``ratio * mag``: ``ratio`` (as ``e^{-m}/(1 - e^{-m}) <= 1/m``), and for ``mag >= 1`` and ``ratio <= 1/2`` also
    ``expm1(ratio mag)/expm1(mag) <= 2 e^{-(1 - ratio) mag}`` (0 where ``mag`` overflows: the factor is 1)."""
    ratio = np.nan_to_num(np.asarray(ratio, dtype=float), nan=np.inf)
    mag = np.asarray(mag, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        far = np.where(
            (ratio <= 0.5) & (mag >= 1.0), 2 * np.exp(-(1 - ratio) * mag), np.inf
        )
    return np.fmin(ratio, far)


def _moving_expm1(x):
    """``e^x - 1`` for a relative error bound, capped below the overflow (a bound that large means no bound)."""
    return math.expm1(min(x, 700.0))


def _chain(rels):
    """The relative error of a product whose factors are off by the relative errors ``rels``."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.exp(
            sum(np.log1p(np.minimum(np.nan_to_num(r, nan=np.inf), 1e300)) for r in rels)
        )
    return np.where(np.isfinite(total), total - 1.0, np.inf)


def _moving_bounds(desc, d, eps):
    """``(upper, lower)`` of ``H_ε`` for the pair of centres ``(0, d)`` of a moving support (``d`` of either sign:
    ``d < 0`` is the reflected pair, the support ``[-b, -a]``)."""
    s = float(np.asarray(desc.scale(np.array(0.0))))
    a, b = (float(v) for v in desc.noise_support)
    flat = eps.ravel()
    if d == 0:
        return np.zeros(eps.shape), np.zeros(eps.shape)
    if d < 0:
        a, b, d = -b, -a, -d
    value, err = _moving_hockey(s, a, b, d, flat)
    with np.errstate(over="ignore", invalid="ignore"):
        upper = np.minimum(np.nextafter(value + err, np.inf), 1.0)
        lower = np.maximum(np.nextafter(value - err, -np.inf), 0.0)
    upper = np.where(np.isnan(upper), 1.0, upper)
    lower = np.where(np.isnan(lower), 0.0, lower)
    return upper.reshape(eps.shape), lower.reshape(eps.shape)


def _moving_pair_bounds(desc, q1, q2, eps, name):
    """:func:`pair_profile` for a moving support: the centres differ by ``q2 - q1`` (a translation family)."""
    _moving_support_check(desc, name)
    with np.errstate(over="ignore"):
        d = q2 - q1
    if math.isinf(d):  # true values beyond each other's reach: disjoint supports
        return np.ones(eps.shape), np.ones(eps.shape)
    return _moving_bounds(desc, d, eps)


def _moving_profile_bounds(desc, delta, lo, hi, eps, name, relation):
    """:func:`privacy_profile` for a moving support, exactly: a translation family (centre ``q`` plus a constant,
    one scale, the support and normalizer moving with the centre) has ``H(q1, q2) = H(0, q2 - q1)``; its density is
    log-concave (a Laplace kernel on an interval), so for ``d > 0`` the log-ratio of ``p(t)`` to ``p(t - d)`` is
    nonincreasing in ``t``, the optimal set is a half-line and ``H(0, d) = sup_τ F(τ) - e^ε F(τ - d)`` is
    nondecreasing in ``d``: the supremum over neighbours is at ``|q1 - q2| = min(Δ, hi - lo)``, the larger of the
    two directions."""
    _moving_support_check(desc, name)
    if relation != Neighbours.ADDITIVE:
        raise NotImplementedError(
            f"{name}: a moving support is covered for additive neighbours, got {relation!r}"
        )
    w = min(delta, hi - lo)
    up1, lo1 = _moving_bounds(desc, w, eps)
    up2, lo2 = _moving_bounds(desc, -w, eps)
    return np.maximum(up1, up2), np.maximum(lo1, lo2)


# --- every family: the relations in log q, a positive family, a scale that varies, the answer's kind -----

#: ``profile_bounds(...).exact`` where ``upper - lower <= _EXACT_RTOL * upper`` (pair_profile's rounding
#: allowance, tested below 1e-9 relative)
_EXACT_RTOL = 1e-9

#: pairs on the edge evaluated for the lower bound of a family whose scale varies with the true value
_VARYING_PAIRS = 33


class ProfileBounds(NamedTuple):
    """The privacy profile δ(ε) with what is known of its accuracy: :func:`profile_bounds`.

    ``lower <= δ(ε) <= upper`` at every ε.

    Attributes
    ----------
    upper : float or ndarray
        :func:`privacy_profile`'s value: never below δ(ε).
    lower : float or ndarray
        The largest lower bound of a pair of neighbouring true values evaluated: never above δ(ε).  It is
        ``0`` for a post-processing whose own law is not described (its profile is bounded from above only,
        by its base's).
    exact : bool or ndarray of bool
        ``True`` where ``upper`` is δ(ε) itself up to :func:`pair_profile`'s rounding allowance
        (``upper - lower <= 1e-9 upper``; a δ of exactly 0 included); ``False`` where ``upper`` is an upper
        bound whose slack ``upper - lower`` is wider than that (a post-processing, a scale that varies
        with the true value, a branch and bound that stopped at its budget).
    """

    upper: float | np.ndarray
    lower: float | np.ndarray
    exact: bool | np.ndarray


def profile_bounds(mechanism, sensitivity, epsilon, *, domain=None, neighbours=None):
    """Bounds of the privacy profile δ(ε): :func:`privacy_profile`'s value with the best pair found.

    Parameters
    ----------
    mechanism, sensitivity, epsilon, domain, neighbours
        As for :func:`privacy_profile`.

    Returns
    -------
    ProfileBounds
        ``(upper, lower, exact)``, each shaped like ``epsilon``: ``lower <= δ(ε) <= upper``; ``upper`` is
        :func:`privacy_profile`'s value; ``exact`` says where it is δ(ε) up to rounding (see
        :class:`ProfileBounds` and the table in :func:`privacy_profile`).

    Examples
    --------
    >>> from dpbook import Laplace, PostProcessed
    >>> b = profile_bounds(Laplace(1.0), 1.0, 0.5)
    >>> round(b.upper, 6), round(b.lower, 6), b.exact  # 1 - e^{(ε - 1)/2}, exact
    (0.221199, 0.221199, True)
    >>> b = profile_bounds(PostProcessed(1.0, abs, breakpoints=[0.0]), 1.0, 0.5)
    >>> round(b.upper, 6), b.lower, b.exact  # the base's profile: an upper bound only
    (0.221199, 0.0, False)
    """
    upper, lower = _privacy_profile_bounds(
        mechanism, sensitivity, epsilon, domain=domain, neighbours=neighbours
    )
    exact = upper - lower <= _EXACT_RTOL * upper
    if upper.ndim == 0:
        return ProfileBounds(float(upper), float(lower), bool(exact))
    return ProfileBounds(upper, lower, exact)


def _translates(desc):
    """Whether the description is a pure location family: one kernel of one scale on the whole line, no
    atoms, no normalizer, centre ``q`` (plus a constant).  Then ``H(q1, q2)`` depends on ``q2 - q1`` only."""
    return (
        desc.uniform
        and tuple(desc.pieces) == ((-math.inf, math.inf),)
        and not desc.atoms
        and desc.log_norm is None
        and (desc.center is _identity or desc.center_shift is not None)
    )


def _log_relation(desc, delta, lo, hi, relation, name):
    """``(description in log q, K, log lo, log hi)`` for the neighbour relations ``'log'`` (``|log q1 - log q2|
    <= K``) and ``'relative'`` (``K = log(1 + Δ)``): the profile is the edge supremum of the family described
    in ``log q`` (``log_q``; ``privacy_loss`` has checked the relation and the domain)."""
    if desc.log_q is None:  # (privacy_loss refuses first; kept for a direct call)
        raise NotImplementedError(
            f"neighbours={relation.value!r} needs a family described in log q; {name} is not"
        )
    k = math.log1p(delta) if relation == Neighbours.RELATIVE else delta
    # the domain's ends in log q, each moved outwards by two ulps (log is within one of the truth): a
    # domain that holds the true one, so the supremum over it is not below the truth
    lo_t = -math.inf
    if lo > 0:
        lo_t = math.nextafter(math.nextafter(math.log(lo), -math.inf), -math.inf)
    hi_t = math.nextafter(math.nextafter(math.log(hi), math.inf), math.inf)
    if relation == Neighbours.RELATIVE:  # log1p is within one ulp too
        k = math.nextafter(math.nextafter(k, math.inf), math.inf)
    return desc.log_q, k, lo_t, hi_t


def _positive_profile(desc, delta, lo, hi, eps, name):
    """A positive family (``positive``) with additive neighbours: in ``v = log q`` it is the family ``log_q``.

    When ``log_q`` is a location family (:func:`_translates`: a kernel of one scale centred at ``v`` plus a
    constant, on the whole line), the divergence of a pair depends only on ``d = log q2 - log q1``, and it
    is nondecreasing in ``|d|`` (the reduction to the edge in :func:`privacy_profile`: a monotone likelihood
    ratio and the stochastic order it gives).  Over pairs with ``|q1 - q2| <= Δ`` in ``[lo, hi]`` the largest
    ``|d|`` is ``log(u + Δ) - log(u)`` at the smallest ``u``, a decreasing function of ``u``: the worst pairs
    are ``(lo, min(lo + Δ, hi))`` and its reverse, at log-distance ``log1p(min(Δ, hi - lo)/lo)``, rounded up
    (down) by 8 ulps for the upper (lower) bound.  A domain reaching 0 holds the law at ``q = 0``, a point
    mass at the output 0 (``positive``), which no law at ``q > 0`` has: δ(ε) = 1 at every ε, exactly."""
    if lo <= 0:
        one = np.ones(eps.shape)
        return one, one
    base = desc.log_q
    if base is None or not _translates(base):
        raise NotImplementedError(
            f"{name}: a positive family whose description in log q is not a location family; "
            "privacy_profile covers one kernel of one scale centred at log q"
        )
    with np.errstate(over="ignore"):
        d = math.log1p(min(delta, hi - lo) / lo)
    d_up, d_low = d * (1 + 8 * _EPS), d * (1 - 8 * _EPS)
    (u1, _), (u2, _) = _evaluate(base, [(0.0, d_up), (d_up, 0.0)], eps)
    (_, l1), (_, l2) = _evaluate(base, [(0.0, d_low), (d_low, 0.0)], eps)
    return np.maximum(u1, u2), np.maximum(l1, l2)


_EPS = float(np.finfo(float).eps)


def _varying_scale_profile(mechanism, desc, delta, lo, hi, eps, loss):
    """A scale that varies with the true value (CroftLaplace): a certified upper bound, not the profile.

    Upper.  Split the outputs into a window ``W = [w_lo, w_hi]`` and the rest.  Over a finite domain the
    family's ``enclosure`` (centre ``<= m``, scale ``<= s``, log-normalizer ``>= n`` on a cell of true values)
    bounds the mass any law puts beyond ``w_hi >= m`` by ``e^{-(w_hi - m)/s - n}/2`` (and below ``w_lo``
    likewise): ``T``, the largest over cells.  The audited loss over outputs in ``W`` (both orders of every
    neighbouring pair, never below the truth) is ``εW``.  For an event ``S``, with ``a = P1(S ∩ W)``,
    ``c = P2(S ∩ W)``: ``a <= e^{εW} c``, and ``P2(W - S) <= e^{εW} P1(W - S)`` with ``P2(W - S) >= 1 - T - c``
    and ``P1(W - S) <= 1 - a`` gives ``a <= 1 - (1 - T - c) e^{-εW}``; ``a - e^ε c`` under the smaller of the two
    (slopes ``e^{εW} > e^ε > e^{-εW}``) is largest where they meet, so

        P1(S) - e^ε P2(S) <= (1 - e^{ε - εW}) (1 - (1 - T) e^{-εW})/(1 - e^{-2 εW}) + T

    for ``ε < εW`` (``T`` alone from ``εW`` on; ``T = 0`` recovers randomized response, the bound of any
    ``εW``-DP pair).  The bound is the least over a few windows (4, 8 and 16 of the largest scales beyond the
    centres), and at most 1 (an infinite domain: 1); without an enclosure the whole line with the loss.
    Lower: the pairs ``(u, u + Δ)`` and ``(u + Δ, u)`` on a grid of ``u`` over the domain's finite part near the
    landmarks (the largest lower bound among them; ``pair_profile`` is exact for any scale)."""
    options = [(loss, 0.0)]
    if desc.enclosure is not None and math.isfinite(hi - lo) and not desc.log_output:
        cells = np.linspace(lo, hi, 65)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            m_lo, m_hi, _, s_hi, n_lo, _ = (
                np.asarray(v, dtype=float)
                for v in desc.enclosure(cells[:-1], cells[1:])
            )
        starts = [a for a, _ in desc.pieces]
        stops = [b for _, b in desc.pieces]
        scale = float(np.max(s_hi))
        for k in (4.0, 8.0, 16.0):
            w_lo = (
                -math.inf
                if min(starts) > -math.inf
                else float(np.min(m_lo)) - k * scale
            )
            w_hi = (
                math.inf if max(stops) < math.inf else float(np.max(m_hi)) + k * scale
            )
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                tails = np.zeros(m_hi.shape)
                if math.isfinite(w_hi):
                    tails += 0.5 * np.exp(-(w_hi - m_hi) / s_hi - n_lo)
                if math.isfinite(w_lo):
                    tails += 0.5 * np.exp(-(m_lo - w_lo) / s_hi - n_lo)
            t = float(np.max(tails)) * (1 + 1e-9)
            if not t < 1:
                continue
            e_w = float(
                privacy_loss(mechanism, delta, domain=(lo, hi), window=(w_lo, w_hi))
            )
            options.append((e_w, t))
    upper = np.ones(eps.shape)
    for e_w, t in options:
        if math.isinf(e_w):
            continue
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            inner = (
                -np.expm1(np.minimum(eps - e_w, 0.0))
                * (-math.expm1(-e_w) + t * math.exp(-e_w))
                / -math.expm1(-2 * e_w)
                if e_w > 0
                else np.zeros(eps.shape)
            )
        bound = (inner + t) * (1 + 16 * _EPS)
        upper = np.minimum(upper, np.where(np.isnan(bound), 1.0, bound))
    marks = [float(v) for v in desc.landmarks if math.isfinite(v)] or [0.0]
    reach = 8 * float(desc.length)
    a = lo if math.isfinite(lo) else min(marks) - reach
    b = hi - delta if math.isfinite(hi) else max(marks) + reach
    if b <= a:
        pairs = [(lo, hi), (hi, lo)] if math.isfinite(hi - lo) else []
    else:
        us = np.linspace(a, b, _VARYING_PAIRS)
        pairs = [p for u in us for p in ((u, u + delta), (u + delta, u))]
    lower = np.zeros(eps.shape)
    for _, low in _evaluate(desc, pairs, eps):
        lower = np.maximum(lower, low)
    return np.maximum(upper, lower), lower
