"""Rényi divergences of the laws of two true values, their supremum over neighbours, and composition.

For true values ``q1``, ``q2`` and an order ``α > 1`` the Rényi divergence (Mironov 2017)

    D_α(P1 || P2) = log(∫ p1^α p2^(1 - α) + Σ_atoms m1^α m2^(1 - α)) / (α - 1)

is computed from the mechanism's :class:`~dpbook.PrivacyDescription` alone, in closed form.  Writing the
integrand as ``p1 e^{(α - 1) L}`` with ``L = log p1 - log p2`` the log-ratio: for a Laplace kernel both
``log p1`` and ``L`` are linear between the two centres and the piece ends, so on each such segment the
integrand is a Laplace kernel with a changed rate, integrated exactly; for a Gaussian kernel of one scale
``L`` is linear on each piece and the integrand is a normal kernel with the same variance and a moved centre,
``e^{α(α - 1)δm²/2}`` times a normal mass of the piece moved by ``(α - 1)δm`` (``δm`` the centres' distance in
scales).  Each segment and atom gives a term in log space, divided by ``α - 1`` before the terms are summed
(a logsumexp), so that orders up to ``1e12`` and scales of ``1e±300`` neither overflow nor underflow.  An
integer-valued law with a finite support is summed over every output.  At ``α = inf`` the divergence is the
pair's privacy loss, :func:`dpbook.pair_loss`.

Every term carries a bound on its rounding error; :func:`pair_renyi` returns the value plus the bound (never
below the divergence) and at most the pair's loss (``D_α`` is nondecreasing in ``α``, van Erven and
Harremoës 2014).  :func:`renyi_profile` takes the supremum over neighbouring true values (the
Rényi-DP curve of the mechanism) and :func:`composed_profile` converts ``k`` times it into an upper bound on
δ(ε) of ``k`` adaptively composed releases.  This module imports numpy and scipy only.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from .._kernels.gaussian import _K, _LOG_SQRT_2PI, _log_normal_mass
from ._discrete import discrete_pair_loss
from ._profile import (
    _bare_kernel,
    _edge_hypotheses,
    _gaps,
    _integer_pairs,
    _outside_mass,
    _pair_numbers,
)
from ._search import (
    _edge_grid,
    _interval,
    _moving_support,
    _moving_support_check,
    _pair,
    describe,
    privacy_loss,
)
from .description import PrivacyDescription

__all__ = ["composed_profile", "pair_renyi", "renyi_profile"]

#: orders as many at once as memory allows in one pair (terms x orders)
_MAX_ORDERS = 2**20

#: pair evaluations the search over the edge may spend before it reports the bound it reached
_RENYI_BUDGET = 4096

#: the search stops refining a cell once its bound is within this of the best pair found (relative)
_RENYI_RTOL = 1e-4

#: integer pairs of true values an integer-valued family's profile may enumerate

#: the default orders of :func:`composed_profile`: 1 + 1e-2 ... 1 + 1e4, geometric (and inf, pure DP)
_ORDERS = 1.0 + np.geomspace(1e-2, 1e4, 121)


def pair_renyi(mechanism, q1, q2, order):
    """The Rényi divergence ``D_α(M(q1) || M(q2))`` of the laws of two true values, in nats, exactly.

    ``D_α = log(∫ p1^α p2^(1-α) + Σ_atoms m1^α m2^(1-α)) / (α - 1)`` (Mironov 2017), for
    orders ``α > 1``; at ``α = inf`` it is the largest log-ratio, :func:`dpbook.pair_loss`.  It is ``inf``
    where ``M(q1)`` puts mass where ``M(q2)`` has none (bounded noise whose support moves with ``q``,
    :class:`dpbook.TruncatedLaplaceNoise`, for every pair of distinct true values), or where the integral
    diverges in a tail.  Not symmetric: swap the arguments for the other direction.

    Computed in closed form from the mechanism's :class:`PrivacyDescription`: on each segment of the
    log-ratio (between the two centres and the piece ends) the integrand is a Laplace kernel with a changed
    rate, or, for a Gaussian kernel of one scale, a normal kernel with a moved centre and the same variance,
    so each segment is an exact exponential integral or normal mass, taken in log space; the atoms are
    summed.  An integer-valued law with a finite support is summed over every output.  Every rounding
    error is bounded: the value returned is never below ``D_α`` and above it by at most about ``1e-14``
    relative plus ``1e-14/(α - 1)`` absolute (a few ulps of ``log ∫``, divided by ``α - 1``; more for a
    Gaussian kernel at very large ``α δm``, where the closed form's terms grow like ``α δm²``); it never
    exceeds the pair's loss, :func:`dpbook.pair_loss` (``D_α`` is nondecreasing in ``α``).

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism whose ``privacy_description()`` describes its law exactly (see
        :func:`dpbook.pair_profile`).
    q1, q2 : float
        The two true values (integers for an integer-valued family).
    order : float or array_like
        Orders ``α > 1`` (``inf`` allowed); the result has its shape.

    Returns
    -------
    float or ndarray
        ``D_α`` in nats, rounded upwards.

    Raises
    ------
    ValueError
        For an ``order`` that is not a real number above 1, or NaN; true values that are not finite (or
        not integers for an integer-valued family); more orders than fit in memory.
    NotImplementedError
        For a description that is not exact (a post-processing) and an integer-valued law with an
        infinite support.

    Examples
    --------
    >>> from dpbook import Gaussian, Laplace
    >>> round(pair_renyi(Gaussian(2.0), 0.0, 1.0, 3.0), 12)  # α Δ² / (2 σ²)
    0.375
    >>> [round(float(d), 6) for d in pair_renyi(Laplace(1.0), 0.0, 1.0, [2.0, float("inf")])]
    [0.619124, 1.0]
    """
    desc = describe(mechanism)
    alpha = _orders(order)
    upper, _ = _pair_bounds(desc, q1, q2, alpha, type(mechanism).__name__)
    return float(upper) if upper.ndim == 0 else upper


def _orders(order, name="order"):
    alpha = check.real_array(name, order)
    if (alpha <= 1).any():
        raise ValueError(
            f"{name} must be > 1 (a finite number or inf), got {check._short_repr(order)}"
        )
    return alpha


def _pair_bounds(desc, q1, q2, alpha, name):
    """``(upper, lower)`` arrays shaped like ``alpha`` holding ``D_α`` of one pair (validated orders)."""
    if not desc.exact:
        raise NotImplementedError(
            f"the law of {name} is not described exactly (its description is the base of a "
            "post-processing); pair_renyi computes exact divergences only"
        )
    if isinstance(desc, PrivacyDescription):
        q1, q2 = check.finite("q1", q1), check.finite("q2", q2)
        for label, q in (("q1", q1), ("q2", q2)):
            if desc.positive and q <= 0:
                raise ValueError(f"{label} must be > 0 for {name}, got {q!r}")
    else:
        why = f" for the integer-valued {name}"
        q1 = float(check.integer_array("q1", q1, why=why))
        q2 = float(check.integer_array("q2", q2, why=why))
        lo, hi = desc.support
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise NotImplementedError(
                f"pair_renyi sums over the outputs of an integer-valued law with a finite support "
                f"only; {name} has support {desc.support!r}"
            )
    return _bounds(desc, q1, q2, alpha, name)


def _bounds(desc, q1, q2, alpha, name):
    """``(upper, lower)`` of ``D_α`` for one pair of validated true values."""
    up, low = _evaluate(desc, [(q1, q2)], alpha.ravel(), name)[0]
    return up.reshape(alpha.shape), low.reshape(alpha.shape)


def _evaluate(desc, pairs, a, name):
    """``[(upper, lower), ...]`` of ``D_α`` (flat orders ``a``) for each pair of validated true values, all the
    pairs of a real-valued law in one vectorized computation."""
    q1, q2 = (np.array(v, dtype=float) for v in zip(*pairs))
    # bounded noise (a support moving with q): M(q1) lands where M(q2) never does, q1 != q2
    if _moving_support(desc):
        _moving_support_check(desc, name)
        d = np.where(q1 == q2, 0.0, math.inf)[:, None] + np.zeros(a.size)
        return list(zip(d, d))
    finite = np.isfinite(a)
    f = a[finite]
    with np.errstate(all="ignore"):
        if isinstance(desc, PrivacyDescription):
            loss, _, _, loss_low = _pair(desc, q1, q2, (-math.inf, math.inf))
            if f.size:
                value, err = _sum_terms(_continuous_terms(desc, q1, q2, f), f)
        else:
            loss = np.asarray(discrete_pair_loss(desc, q1, q2, None, name), dtype=float)
            loss_low = loss
            if f.size:
                parts = []
                for x, y in pairs:
                    v, e = _discrete_terms(desc, x, y, f)
                    parts.append(_sum_terms((v[None], e[None]), f))
                value = np.concatenate([v for v, _ in parts])
                err = np.concatenate([e for _, e in parts])
        loss = np.asarray(loss, dtype=float).reshape(-1, 1)
        upper = np.broadcast_to(loss, (len(pairs), a.size)).copy()
        lower = np.broadcast_to(
            np.maximum(np.asarray(loss_low, dtype=float).reshape(-1, 1), 0.0),
            upper.shape,
        ).copy()
        if f.size:
            up = np.minimum(np.nextafter(np.maximum(value, 0.0) + err, np.inf), loss)
            low = np.maximum(np.nextafter(value - err, -np.inf), 0.0)
            # a NaN (terms beyond the floats, orders above ~1e12): D_α <= D_inf, the loss
            bad = np.isnan(up) | np.isnan(low)
            upper[:, finite] = np.where(bad, loss, up)
            lower[:, finite] = np.where(bad, 0.0, np.minimum(low, up))
    same = q1 == q2
    upper[same], lower[same] = 0.0, 0.0
    return list(zip(upper, lower))


def _sum_terms(terms, a):
    """``(D, error bound)``, shaped ``(pairs, orders)``, from terms ``(v, e)`` shaped ``(pairs, terms, orders)``:
    ``D = log Σ e^{(α-1) v} / (α-1)``, each ``v`` known to within ``e``."""
    v, e = terms
    am1 = a - 1.0
    top = np.max(v, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    share = np.exp(
        am1 * (v - safe[:, None, :])
    )  # each term's share of the largest: in [0, 1]
    total = np.sum(share, axis=1)
    value = np.where(np.isfinite(top), safe + np.log(total) / am1, top)
    # the error of the log of the sum: Σ share_j (e^{(α-1) e_j} - 1) / Σ share_j, in D's units
    grown = np.expm1(np.minimum(am1 * e, 700.0))
    spread = np.sum(np.where(share > 0, share * grown, 0.0), axis=1) / total
    err = np.log1p(spread) / am1 + _K * (np.abs(safe) + (v.shape[1] + 1.0) / am1)
    return value, np.where(np.isnan(err), np.inf, err)


def _continuous_terms(desc, q1, q2, a):
    """The terms ``(v, e)``, shaped ``(pairs, terms, orders)``, of a :class:`PrivacyDescription`: each segment's
    ``log ∫ p1^α p2^(1-α) / (α - 1)`` and each atom's."""
    m1, m2, s1, s2, n1, nr, nr_err, centre_err = _pair_numbers(desc, q1, q2)
    # per pair (axis 0), per segment (axis 1), per order (axis 2)
    col = [x[:, None, None] for x in (m1, m2, s1, s2, n1, nr, nr_err, centre_err)]
    pieces = np.array(sorted(desc.pieces), dtype=float).reshape(-1, 2)
    if desc.shape == "laplace":
        v, e = _laplace_terms(pieces, *col, a - 1.0)
    else:
        v, e = _gauss_terms(pieces, *col[:3], *col[4:], a)
    if desc.atoms:
        va, ea = _atom_terms(desc, q1, q2, a - 1.0)
        v, e = np.concatenate([v, va], axis=1), np.concatenate([e, ea], axis=1)
    return v, e


def _laplace_terms(pieces, m1, m2, s1, s2, n1, nr, nr_err, centre_err, am1):
    """Laplace kernels: offsets ``y = t - m1``; each piece is cut at the kinks ``0`` and ``y2 = m2 - m1`` into
    three segments (some empty), on which ``log p1 = -|y|/s1 - log(2 s1) - n1`` and ``L`` are linear, so
    ``∫ p1 e^{(α-1)L}`` over one is ``e^{E(y*)} s1 (1 - e^{-|γ| w/s1})/|γ|`` with ``E = log p1 + (α-1)L``,
    ``y*`` its larger end (``inf`` if that end is infinite: the integral diverges) and
    ``γ = s1 dE/dy = -σ1 + (α-1)(σ2 s1/s2 - σ1)`` (``σ`` the signs of ``y`` and ``y - y2``)."""
    y2 = m2 - m1
    uniform = s1 == s2
    rho = s1 / s2
    lc = np.where(uniform, 0.0, np.log(s2) - np.log(s1)) + nr
    lc_err = nr_err + np.where(
        uniform, 0.0, _K * (np.abs(np.log(s1)) + np.abs(np.log(s2)))
    )
    ya = pieces[:, 0][None, :, None] - m1  # (pairs, pieces, 1)
    yb = pieces[:, 1][None, :, None] - m1
    k_lo, k_hi = np.minimum(0.0, y2), np.maximum(0.0, y2)
    up = np.where(y2 > 0, 1.0, -1.0)  # the sign of y between the two centres
    segments = [  # (u, v, σ1, σ2)
        (ya, np.minimum(yb, k_lo), -1.0, -1.0),
        (np.maximum(ya, k_lo), np.minimum(yb, k_hi), up, -up),
        (np.maximum(ya, k_hi), yb, 1.0, 1.0),
    ]
    values, errors = [], []
    for u, v, sig1, sig2 in segments:
        u, v, sig1, sig2 = np.broadcast_arrays(u, v, sig1, sig2)
        live = u < v
        gam = -sig1 + am1 * (sig2 * rho - sig1)
        g = np.abs(gam)
        w = (v - u) / s1
        log_int = np.where(g == 0, np.log(w), np.log(-np.expm1(-g * w)) - np.log(g))
        # a rounded piece end (not a cut at a centre, where the integrand is continuous) moves log ∫ by
        # its shift times the integrand there over the integral: |γ|/(s1 (1 - e^{-|γ| w})) at the larger
        # end of E, that times e^{-|γ| w} at the other
        at_max = np.where(
            g * w > 0, g / (s1 * -np.expm1(-g * w)), 1 / np.maximum(v - u, 1e-300)
        )
        at_min = np.where(g * w > 0, at_max * np.exp(-g * w), at_max)
        log_int_err = _K * (2.0 + np.abs(log_int))
        for y_end, piece_end, is_max in ((u, ya, gam <= 0), (v, yb, gam > 0)):
            moved = (y_end == piece_end) & np.isfinite(y_end)
            shift = np.where(
                moved, _K * np.abs(np.where(moved, y_end, 0.0)) + centre_err, 0.0
            )
            log_int_err = log_int_err + np.where(
                shift > 0, shift * np.where(is_max, at_max, at_min), 0.0
            )
        end = np.where(gam > 0, v, u)
        diverges = np.isinf(end) | ((g == 0) & np.isinf(w))
        y = np.where(np.isfinite(end), end, 0.0)
        const = uniform & (sig1 == sig2)  # L is constant: exactly -σ y2/s + nr
        d1, d2 = np.abs(y) / s1, np.abs(y - y2) / s2
        ell = np.where(const, -sig1 * y2 / s1, d2 - d1) + lc
        ell_err = (
            np.where(
                const,
                _K * (np.abs(y2) / s1 + np.abs(lc) + np.abs(ell)),
                _K * (d1 + d2 + np.abs(y2) / s2 + np.abs(lc) + np.abs(ell)),
            )
            + lc_err
            + centre_err * (1 / s1 + 1 / s2)
        )
        big_a = -d1 - math.log(2.0) - n1
        a_err = _K * (d1 + 1.0 + np.abs(n1)) + centre_err / s1
        value = np.where(diverges, math.inf, ell + (big_a + log_int) / am1)
        err = np.where(diverges, 0.0, ell_err + (a_err + log_int_err) / am1)
        values.append(np.where(live, value, -math.inf))
        errors.append(np.where(live, err, 0.0))
    return np.concatenate(values, axis=1), np.concatenate(errors, axis=1)


def _gauss_terms(pieces, m1, m2, s, n1, nr, nr_err, centre_err, a):
    """Gaussian kernels of one scale: ``z = (t - m1)/s``, ``L = δm (z + δm/2) + nr`` with ``δm = (m1 - m2)/s``;
    ``∫_piece p1 e^{(α-1)L} = e^{(α-1)(α δm²/2 + nr) - n1} (Φ(zb - c) - Φ(za - c))``, ``c = (α - 1) δm``."""
    am1 = a - 1.0
    dm = (m1 - m2) / s
    dm_err = _K * np.abs(dm) + centre_err / s
    c = am1 * dm
    za = (pieces[:, 0][None, :, None] - m1) / s
    zb = (pieces[:, 1][None, :, None] - m1) / s
    lam, lam_err = _log_normal_mass(za - c, zb - c)
    head = a * dm * dm / 2 + nr
    value = head + (lam - n1) / am1
    # |d log mass / d end| = φ(end - c)/mass at a finite piece end, and |d log mass/dc| is at most their sum
    slope, moved = 0.0, 0.0
    for z in (za, zb):
        fin = np.isfinite(z)
        x = np.where(fin, z - c, 0.0)
        here = np.where(fin, np.exp(-0.5 * x * x - _LOG_SQRT_2PI - lam), 0.0)
        slope = slope + here
        moved = moved + here * np.where(fin, _K * np.abs(z) + centre_err / s, 0.0)
    err = (
        nr_err
        + _K * (np.abs(head) + np.abs(nr) + 1.0)
        + dm_err * (a * np.abs(dm) + slope)
        + (lam_err + _K * (np.abs(n1) + np.abs(lam) + 1.0) + moved) / am1
    )
    return value, err


def _atom_terms(desc, q1, q2, am1):
    """Each atom's ``m1^α m2^(1-α)`` as the term ``log m1/(α - 1) + log m1 - log m2`` (``(pairs, atoms, orders)``)."""
    values, errors = [], []
    for atom in desc.atoms:
        l1 = np.broadcast_to(np.asarray(atom[1](q1), dtype=float), q1.shape)
        l2 = np.broadcast_to(np.asarray(atom[1](q2), dtype=float), q1.shape)
        diff = l1 - l2
        d_err = 4 * (np.spacing(np.abs(l1)) + np.spacing(np.abs(l2)))
        if len(atom) > 2:  # the accurate ratio, where it gives a number
            out = atom[2](q1, q2)
            fine, f_err = (
                out if isinstance(out, tuple) else (out, 4 * np.spacing(np.abs(out)))
            )
            fine = np.broadcast_to(np.asarray(fine, dtype=float), q1.shape)
            f_err = np.broadcast_to(np.asarray(f_err, dtype=float), q1.shape)
            ok = ~(np.isnan(fine) | np.isnan(f_err))
            diff, d_err = np.where(ok, fine, diff), np.where(ok, f_err, d_err)
        l1, diff, d_err = l1[:, None], diff[:, None], d_err[:, None]
        value = np.where(
            l1 == -math.inf,
            -math.inf,  # M(q1) never lands here
            np.where(l2[:, None] == -math.inf, math.inf, l1 / am1 + diff),
        )
        err = np.where(np.isfinite(value), d_err + _K * (1.0 + np.abs(l1)) / am1, 0.0)
        values.append(value)
        errors.append(err)
    return np.stack(values, axis=1), np.stack(errors, axis=1)


def _discrete_terms(desc, q1, q2, a):
    """Every output ``k`` of a finite support: the term ``log m1(k)/(α - 1) + r(k)`` (``r`` the family's
    accurate log-ratio), as ``(v, e)`` shaped ``(outputs, orders)``."""
    am1 = a - 1.0
    lo, hi = desc.support
    k = np.arange(lo, hi + 1.0)
    l1 = np.asarray(desc.logpmf(k, q1), dtype=float)
    r = np.asarray(desc.log_ratio(k, q1, q2), dtype=float)
    keep = l1 > -np.inf
    l1, r = l1[keep], r[keep]
    if (r == np.inf).any():  # M(q1) lands where M(q2) never does
        return np.full((1, a.size), math.inf), np.zeros((1, a.size))
    if l1.size * a.size > _MAX_ORDERS:
        raise ValueError(
            f"order: {a.size} orders over {l1.size} outputs would not fit in memory; "
            "pass fewer orders"
        )
    value = l1[:, None] / am1[None, :] + r[:, None]
    err = _K * (np.abs(r)[:, None] + (1.0 + np.abs(l1))[:, None] / am1[None, :])
    return value, err


# --- the Rényi profile: the supremum over neighbouring pairs -----------------------------------------


def renyi_profile(mechanism, sensitivity, order, *, domain=None):
    """The Rényi-DP curve of ``mechanism``: ``ε(α) = sup D_α(M(q1) || M(q2))`` over neighbouring true values.

    The supremum runs over ``q1, q2`` in ``domain`` with ``|q1 - q2| <= Δ``, both directions; the mechanism
    is ``(α, ε(α))``-Rényi DP (Mironov 2017) and no smaller ``ε`` will do.  It is nondecreasing in ``α``, and
    at ``α = inf`` it is :func:`dpbook.privacy_loss`, which therefore bounds every order (the values returned
    use both: an upper bound at one order bounds every smaller one).

    Method.  *Reduction to the edge.*  Under the hypotheses of :func:`dpbook.privacy_profile` (a kernel of one
    scale centred at ``q`` plus a constant, conditioned on its pieces or clamped by atoms beyond them) the
    pair's log-ratio is monotone in the output, and privacy_profile's argument shows that every hockey-stick
    divergence ``H_γ(P_{q1} || P_{q2})``, ``γ >= 0``, is nondecreasing as ``q2`` moves away from ``q1`` and as
    ``q1`` moves away from ``q2``.  Taylor's formula with integral remainder for ``f(x) = x^α``
    (``f''(γ) = α(α - 1)γ^(α-2) >= 0``) at 1 gives
    ``x^α = 1 + α(x - 1) + ∫_0^1 f''(γ)(γ - x)_+ dγ + ∫_1^∞ f''(γ)(x - γ)_+ dγ``; take the expectation under
    ``P2`` (``x = dP1/dP2``, the part of ``P1`` that ``P2`` lacks at ``x = ∞``), use
    ``E(x - γ)_+ = H_γ(P1 || P2)`` and, for ``γ < 1``, ``H_γ(P1 || P2) = 1 - γ + γ H_{1/γ}(P2 || P1)``, and put
    ``γ = e^{±ε}``:

        ∫ p1^α p2^(1-α) = 1 + α(α - 1) ∫_0^∞ (e^{(α-1)ε} H_ε(P1 || P2) + e^{-αε} H_ε(P2 || P1)) dε

    (``H_ε`` the hockey-stick divergence at ``e^ε``, :func:`dpbook.pair_profile`; the tests check this identity
    numerically).  Every integrand is nondecreasing as the pair moves apart, so ``D_α`` is too: the supremum is
    on the edge ``|q1 - q2| = Δ`` (the two ends of a domain shorter than ``Δ``).  *Certified supremum over u.*
    For ``u`` in a cell ``[a, b]`` of the edge the same monotonicity gives ``D_α(u, u + Δ) <= D_α(a, b + Δ)``
    and ``D_α(u + Δ, u) <= D_α(b + Δ, a)``.  A clamp (atoms holding the kernel's outside mass) is a
    post-processing of ``q + Z``, so no pair exceeds the kernel's own ``D_α`` at ``Δ`` (data processing).  A
    kernel conditioned on its pieces (normalizer ``N``) has
    ``∫ p1^α p2^(1-α) <= N1^{-α} N2^{α-1} e^{(α-1) D_ker}`` with ``N2^{α-1} <= 1``, so on a wide cell or one
    running off to infinity ``D_α <= D_ker + α/(α - 1) log(1/(1 - β))``, ``β`` the largest kernel mass outside
    the pieces over the cell's centres.  The cells start at the landmarks of the auditor's search along the
    edge; those whose bound exceeds the best pair found by more than ``1e-4`` of it are halved, worst first,
    within about ``4096`` pair evaluations.  The value returned is the largest bound of any cell and of any pair
    evaluated: never below ``ε(α)``.  Its slack, the distance to the best pair found (``_renyi_profile_bounds``
    gives both), is the rounding allowance of :func:`pair_renyi` for Laplace, the Gaussian and a clamp far from
    its bounds, where the kernel's own divergence caps every cell; otherwise the monotone bound converges only
    linearly in the cell's width and the search usually ends at its budget: measured ``2e-4`` to ``2.6e-2``
    relative (a median near ``5e-3``) for truncations, normalizations and two-sided clamps at orders
    ``1.5 ... 64``, largest on a one-sided range, in 0.1 to 0.4 s.  An integer-valued family with a finite
    support and domain is summed over every integer pair: exact.

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism whose law its description gives exactly (see :func:`dpbook.pair_profile`).
    sensitivity : float
        ``Δ > 0``: true values at most ``Δ`` apart are neighbours.
    order : float or array_like
        Orders ``α > 1`` (``inf`` allowed); the result has its shape.
    domain : (float, float), optional
        The closed interval of true values (ends may be infinite); default ``mechanism.domain``.

    Returns
    -------
    float or ndarray
        ``ε(α)`` in nats, an upper bound never below it.

    Raises
    ------
    ValueError
        For a ``sensitivity``, ``order`` or ``domain`` that is not valid, naming it and its value.
    NotImplementedError
        Where :func:`dpbook.privacy_profile` raises it: the reduction to the edge is not proved (a scale
        varying with the true value, a centre that is not the true value plus a constant, atoms inside
        the density's range or with a normalized density), a description that is not exact, an
        integer-valued law with an infinite support or domain.

    Examples
    --------
    >>> from dpbook import Gaussian, Truncated
    >>> round(renyi_profile(Gaussian(2.0), 1.0, 4.0), 12)  # α Δ² / (2 σ²)
    0.5
    >>> eps = renyi_profile(Truncated(1.0, lower=0.0, upper=5.0), 1.0, [2.0, 64.0, float("inf")])
    >>> [round(float(e), 4) for e in eps]  # the truncated Laplace: above the Laplace's 0.6191, 0.9891, 1
    [0.6409, 1.4185, 1.4854]
    """
    upper, _ = _renyi_profile_bounds(mechanism, sensitivity, order, domain=domain)
    return float(upper) if upper.ndim == 0 else upper


def _renyi_profile_bounds(mechanism, sensitivity, order, *, domain=None):
    """``(upper, lower)`` arrays shaped like ``order``: ``upper`` is :func:`renyi_profile` (never below ``ε(α)``),
    ``lower`` the largest lower bound of a pair evaluated (never above it)."""
    desc = describe(mechanism)
    name = type(mechanism).__name__
    delta = check.positive("sensitivity", sensitivity)
    alpha = _orders(order)
    lo, hi = _interval("domain", mechanism.domain if domain is None else domain)
    if not desc.exact:
        raise NotImplementedError(
            f"the law of {name} is not described exactly (its description is the base of a "
            "post-processing); renyi_profile computes exact profiles only"
        )
    if not isinstance(desc, PrivacyDescription):
        return _discrete_renyi(desc, delta, lo, hi, alpha, name)
    # bounded noise (a support moving with q): every pair of distinct true values has D_α = inf
    if _moving_support(desc):
        _moving_support_check(desc, name)
        return np.full(alpha.shape, math.inf), np.full(alpha.shape, math.inf)
    _edge_hypotheses(desc, name)
    flat = alpha.ravel()
    upper, lower = np.zeros(flat.shape), np.zeros(flat.shape)
    finite = np.isfinite(flat)
    # α = inf: the audited pure-DP loss (never below the truth), which also bounds every finite order
    loss = privacy_loss(mechanism, delta, domain=(lo, hi))
    upper[~finite] = loss
    if finite.any():
        a = flat[finite]
        if hi - lo <= delta:  # the two ends: exact
            (u1, l1), (u2, l2) = _evaluate(desc, [(lo, hi), (hi, lo)], a, name)
            upper[finite], lower[finite] = np.maximum(u1, u2), np.maximum(l1, l2)
        else:
            upper[finite], lower[finite] = _edge_renyi(desc, delta, lo, hi, a, name)
    return _monotone_in_order(flat, np.minimum(upper, loss), lower, alpha.shape)


def _monotone_in_order(flat, upper, lower, shape):
    """``ε(α)`` is nondecreasing in ``α`` (so is each pair's ``D_α``): an upper bound at a larger order bounds
    every smaller one, a lower bound at a smaller order every larger one."""
    order = np.argsort(flat, kind="stable")
    up, low = upper[order], lower[order]
    up = np.minimum.accumulate(up[::-1])[::-1]
    low = np.maximum.accumulate(low)
    upper, lower = np.empty_like(upper), np.empty_like(lower)
    upper[order], lower[order] = up, low
    return upper.reshape(shape), lower.reshape(shape)


def _edge_renyi(desc, delta, lo, hi, a, name):
    """``(upper, lower)`` of the supremum over the edge (the method of :func:`renyi_profile`)."""
    ulo, uhi = lo, hi - delta
    grid, _ = _edge_grid(desc, delta, ulo, uhi, [])
    s = float(np.asarray(desc.scale(np.array(0.0))))
    shift = 0.0 if desc.center_shift is None else float(desc.center_shift)
    kernel = _bare_kernel(desc)
    d_ker = _evaluate(kernel, [(0.0, delta)], a, name)[0][0]
    clamp = (
        desc.log_norm is None
    )  # a clamp or the kernel itself: a post-processing of q + Z
    cap = d_ker if clamp else np.full(a.shape, math.inf)
    gaps = _gaps(desc.pieces)
    points = {}  # u -> ((upper, lower) of D(u, u + Δ), of D(u + Δ, u))
    spent = 0

    def bounds_of(cells):
        """An upper bound of ``max(D(u, u + Δ), D(u + Δ, u))`` over ``u`` in each cell: the cells' new ends and
        monotone pairs ``(a, b + Δ)``, ``(b + Δ, a)`` are evaluated in one batch."""
        nonlocal spent
        new = sorted({v for c in cells for v in c if math.isfinite(v)} - points.keys())
        pairs = [p for u in new for p in ((u, u + delta), (u + delta, u))]
        finite = [c for c in cells if math.isfinite(c[0]) and math.isfinite(c[1])]
        pairs += [p for x, y in finite for p in ((x, y + delta), (y + delta, x))]
        values = _evaluate(desc, pairs, a, name) if pairs else []
        spent += len(pairs)
        for i, u in enumerate(new):
            points[u] = (values[2 * i], values[2 * i + 1])
        mono = iter(values[2 * len(new) :])
        out = []
        for x, y in cells:
            ends = [points[v] for v in (x, y) if math.isfinite(v)]
            found = np.maximum.reduce([np.maximum(e[0][0], e[1][0]) for e in ends])
            up = np.full(a.shape, math.inf)
            if math.isfinite(x) and math.isfinite(y):
                up = np.maximum(next(mono)[0], next(mono)[0])
            # conditioned on its pieces: D <= D_ker + α/(α - 1) log(1/(1 - β)) (it helps on wide cells
            # far out, where β is small; narrow cells are left to the monotone bound)
            if not clamp and not (y - x < s / 64):
                beta = _outside_mass(desc, s, gaps, x + shift, y + delta + shift)
                if beta < 1:
                    kern = d_ker + a / (a - 1.0) * -math.log1p(-beta) * (1 + 1e-9)
                    up = np.minimum(up, kern)
            out.append(np.maximum(np.minimum(up, cap), found))
        return out

    cells = [(float(x), float(y)) for x, y in zip(grid[:-1], grid[1:])]
    if ulo == -math.inf:
        cells.insert(0, (-math.inf, float(grid[0])))
    if uhi == math.inf:
        cells.append((float(grid[-1]), math.inf))
    if not cells:
        cells = [(float(grid[0]), float(grid[0]))]
    bounds = bounds_of(cells)

    def best():
        vals = list(points.values())
        up = np.maximum.reduce([np.maximum(v[0][0], v[1][0]) for v in vals])
        low = np.maximum.reduce([np.maximum(v[0][1], v[1][1]) for v in vals])
        return up, low

    settled = np.zeros(a.shape)  # the largest bound of any cell no longer searched
    while True:
        found, _ = best()
        target = found * (1 + _RENYI_RTOL) + 1e-300
        keep, excess = [], []
        for (x, y), bd in zip(cells, bounds):
            splittable = (
                math.isfinite(x)
                and math.isfinite(y)
                and y - x > 4 * np.spacing(max(abs(x), abs(y)))
            )
            over = float(np.max((bd - target) / (found + 1e-300)))
            if splittable and over > 0:
                keep.append(((x, y), bd))
                excess.append(over)
            else:
                settled = np.maximum(settled, bd)
        room = (
            _RENYI_BUDGET - spent
        ) // 4  # a split: a midpoint and two monotone pairs
        if not keep or room <= 0:
            for _, bd in keep:
                settled = np.maximum(settled, bd)
            break
        worst = np.argsort(excess)[::-1]
        split = [keep[i][0] for i in worst[:room]]
        for i in worst[room:]:
            settled = np.maximum(settled, keep[i][1])
        cells = [c for x, y in split for c in ((x, 0.5 * (x + y)), (0.5 * (x + y), y))]
        bounds = bounds_of(cells)
    found, low = best()
    return np.maximum(settled, found), low


def _discrete_renyi(desc, delta, lo, hi, alpha, name):
    """Every integer pair ``q1 != q2`` of the domain at most ``Δ`` apart: the exact maximum of ``D_α``."""
    if not (math.isfinite(desc.support[0]) and math.isfinite(desc.support[1])):
        raise NotImplementedError(
            f"{name}: an integer-valued law with an infinite support {desc.support!r}; "
            "renyi_profile sums over the outputs of a finite support only"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise NotImplementedError(
            f"{name}: renyi_profile enumerates the integer pairs of a finite domain; got "
            f"domain ({lo!r}, {hi!r})"
        )
    flat = alpha.ravel()
    upper, lower = np.zeros(flat.shape), np.zeros(flat.shape)
    for q1, q2 in _integer_pairs(lo, hi, delta):
        up, low = _bounds(desc, float(q1), float(q2), flat, name)
        upper, lower = np.maximum(upper, up), np.maximum(lower, low)
    return _monotone_in_order(flat, upper, lower, alpha.shape)


# --- composition -----------------------------------------------------------------------------------


def composed_profile(mechanism, sensitivity, epsilon, k, *, orders=None):
    """An upper bound on δ(ε) of ``k`` adaptively composed releases of ``mechanism``, from its Rényi-DP curve.

    Rényi DP composes additively (Mironov 2017): ``k`` adaptive releases, each ``(α, ε(α))``-RDP, are
    ``(α, k ε(α))``-RDP.  Each order then gives ``(ε, δ)``-DP with (Canonne, Kamath and Steinke 2020,
    Proposition 12 of arXiv:2004.00010v4, as Google's ``dp_accounting`` cites it in its ``compute_delta``,
    which converts with the same formula; the authors' own code writes it
    ``e^{(α-1)(τ-ε)} (1 - 1/α)^α / (α - 1)``, the same number)

        δ = e^{(α - 1)(k ε(α) - ε)} (1 - 1/α)^(α - 1) / α,

    and the value returned is the smallest over the orders (at most 1).  The order ``α = inf`` is pure DP:
    ``δ = 0`` from ``ε = k privacy_loss`` on (the basic composition of pure DP).  ``ε(α)`` is
    :func:`renyi_profile` (never below the truth), so the value is never below the δ(ε) of the ``k``-fold
    composition of the worst pairs; it is a bound, not the composition's exact profile (the conversion from
    Rényi DP loses a little: for ``k = 1`` compare :func:`dpbook.privacy_profile`).

    Parameters
    ----------
    mechanism : Mechanism
        As for :func:`renyi_profile`.
    sensitivity : float
        ``Δ > 0``.
    epsilon : float or array_like
        ``ε >= 0`` (``inf`` allowed); the result has its shape.
    k : int
        The number of releases, ``k >= 1``.
    orders : array_like, optional
        The orders ``α > 1`` to minimize over (default: 121 orders from ``1.01`` to ``10001``, geometric in
        ``α - 1``).

    Returns
    -------
    float or ndarray
        An upper bound on δ(ε) of the composition, in ``[0, 1]``.

    Raises
    ------
    ValueError
        For a ``sensitivity``, ``epsilon``, ``k`` or ``orders`` that is not valid, naming it and its value.
    NotImplementedError
        Where :func:`renyi_profile` raises it.

    Examples
    --------
    >>> from dpbook import Gaussian
    >>> delta = composed_profile(Gaussian(4.0), 1.0, [1.0, 2.0], 10)
    >>> [f"{d:.2e}" for d in delta]  # the exact δ of the composition: 6.1e-02, 3.7e-03
    ['1.29e-01', '1.10e-02']
    """
    eps = check.real_array("epsilon", epsilon)
    if (eps < 0).any():
        raise ValueError(
            f"epsilon must be >= 0 (a finite number or inf), got {check._short_repr(epsilon)}"
        )
    k = check.count("k", k, 1)
    if orders is None:
        alpha = _ORDERS
    else:
        alpha = _orders(orders, "orders").ravel()
        if alpha.size == 0:
            raise ValueError(f"orders must hold at least one order, got {orders!r}")
    alpha = np.unique(np.r_[alpha, math.inf])
    rdp = np.asarray(renyi_profile(mechanism, sensitivity, alpha), dtype=float)
    finite = np.isfinite(alpha)
    a, r = alpha[finite], k * rdp[finite]
    pure = k * rdp[~finite][0]  # k ε(inf): pure DP's basic composition
    flat = eps.ravel()[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        log_delta = (a - 1.0) * (r - flat + np.log1p(-1.0 / a)) - np.log(a)
        log_delta = np.where(np.isinf(r), 0.0, log_delta)  # no bound from such an order
        log_delta = np.where(np.isnan(log_delta), 0.0, log_delta)
    delta = np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)
    if math.isfinite(pure):
        delta = np.where(flat[:, 0] >= pure, 0.0, delta)
    delta = delta.reshape(eps.shape)
    return float(delta) if delta.ndim == 0 else delta
