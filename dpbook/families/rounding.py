"""A release rounded to an integer: :class:`Rounded`, the law of ``round(M(q))`` for any dpbook family.

Part V compares the discrete mechanisms for counts with Part I's continuous ones rounded to the
nearest integer.  Rounding maps the cell ``(k - 1/2, k + 1/2]`` to ``k``: a tie ``k + 1/2`` goes *down*
to ``k``.  That is the convention of a right-continuous cdf ``F`` (point masses included), for which

    P(round(M) = k) = F(k + 1/2) - F(k - 1/2) = S(k - 1/2) - S(k + 1/2),     P(round(M) <= x) = F(⌊x⌋ + 1/2),

with ``S = 1 - F`` the survival function.  Ties have probability zero for the continuous part of a law;
an atom that sits exactly on ``k + 1/2`` (a ramp's flat value, say) is counted in ``k``, and
:meth:`Rounded.sample` rounds it the same way.

**Accuracy.**  Each mass is a difference of two tail probabilities on the side where they are small:
``F(k + 1/2) - F(k - 1/2)`` where ``F(k + 1/2) <= S(k - 1/2)``, else ``S(k - 1/2) - S(k + 1/2)``, written
in logarithms (``log F(k + 1/2) + log(1 - F(k - 1/2)/F(k + 1/2))`` with ``log1p``/``expm1``), so masses far
in a tail keep their relative accuracy (no ``1 - 1`` cancellation, no underflow before the log).  What
remains is the conditioning of the difference itself: the relative error of a mass is about
``2^-52 min(F(k + 1/2), S(k - 1/2))/P(k)``, small unless one cell holds a tiny share of a wide law
(a scale of ``1e6`` keeps about ten digits).

**Moments.**  On a finite support the moments are exact finite sums over its integers.  On an infinite
one they are sums over a window with a proved tail bound: if the base describes its law to the auditor
as a Laplace kernel (``privacy_description()`` returns a :class:`dpbook.PrivacyDescription` with
``shape='laplace'``, ``exact=True``, outputs not in logs), its density at ``t`` is at most
``e^{-|t - m|/s}/(2 s N)`` (centre ``m``, scale ``s``, normalizing mass ``N``), so beyond the centre and
every atom ``S(t) <= B(t) = e^{-(t - m)/s}/(2N)`` (and the mirror bound for ``F``).  Since
``|round(x) - x| <= 1/2``, with ``u = c - 1/2``,

    E[(R - c)^2; R > c + K] <= E[(X - u)^2; X > t] <= B(t) ((t - u)^2 + 2 s (t - u) + 2 s^2),  t = c + K + 1/2,

(integrating ``(x - u)^2 dF`` by parts against the bound on ``S``), and likewise ``B(t)(t - u + s)`` for the
first moment and ``B(t)`` for the mass.  The window is widened until these are below
``2^-60 max(1, s)^j`` for the ``j``-th moment, i.e. below the rounding of the sum.  A base without such a
description (a heavy tail, a post-processing whose law is not described) is refused with a
``ValueError``, as is a window of more than ``2^22`` integers (a scale above about 3 10^4).

**Privacy.**  Rounding is post-processing, so the base's ε bounds the rounded release's.  On a finite
support :meth:`Rounded.privacy_description` describes the rounded law itself as a
:class:`dpbook.DiscreteDescription` (log-masses of every integer output), so
:func:`dpbook.privacy_report` computes the *exact* ε of the rounded release over integer true values
(counts).  Rounding :class:`dpbook.BIT` at ``b = 1/ε`` on ``{0..n}`` keeps exactly ε: a cell that lies below
both true values of a pair (the cell of ``0``, ``(-∞, 1/2]``, for counts ``1 <= q1 < q2``) holds the
Laplace tail there, whose masses are in the ratio ``e^{(q2 - q1)/b}`` exactly.  Rounding
:class:`dpbook.Truncated` at its audited scale gives a smaller exact ε over counts (0.776 for ε = 1 on
``{0..10}``, attained by the counts 1 and 2 at the output 0; the tests and Chapter 19 give the numbers):
rounding pools truncation's worst outputs with whole cells, and counts never sit between the integers
(over real true values the rounded release loses up to 0.865 there, which is why true values must be
integers).  On an infinite support
the description is the base's, marked ``exact=False``: the auditor reports the base's ε as an upper bound.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._kernels import validation as check
from .._kernels.inversion import _rounded_root
from ..audit.description import DiscreteDescription, PrivacyDescription
from ..mechanism import Mechanism
from .laplace import Laplace

__all__ = ["Rounded"]


#: the most integers one law may be summed over (moments, atoms, expect)
_MAX_CELLS = 2**22


#: tail bound of the moments on an infinite support: 2^-60 max(1, s)^j
_TAIL = 2.0**-60


#: the largest magnitude an int64 sample may hold
_INT64_MAX = 2.0**63 - 1024


def _round_half_down(x):
    """The integer ``k`` with ``x`` in ``(k - 1/2, k + 1/2]`` (exact: ``x - rint(x)`` is exact by Sterbenz)."""
    r = np.rint(x)
    with np.errstate(invalid="ignore"):
        return r - (x - r == -0.5)


def _log1mexp(d):
    """``log(1 - e^d)`` for ``d <= 0`` (``-inf`` at ``d = 0``), accurate on both sides of ``-log 2``."""
    d = np.asarray(d, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > -math.log(2), np.log(-np.expm1(d)), np.log1p(-np.exp(d)))


class Rounded(Mechanism):
    """The release ``round(M(q))`` of a dpbook mechanism ``M``: the integer ``k`` with ``M(q)`` in ``(k -
    1/2, k + 1/2]``.

    A post-processing of ``M`` with integer outputs (module docstring for the tie convention, the
    accuracy of the masses, the moments' tail bound and the privacy audit: exact on a finite support, the
    base's ε as an upper bound on an infinite one, e.g. a rounded :class:`dpbook.Laplace`):
    ``pmf(k, q) = F(k + 1/2) - F(k - 1/2)`` with ``F`` the base's cdf.  Part V compares it with the
    discrete mechanisms for counts (:class:`dpbook.DiscreteBIT`, :class:`dpbook.DiscreteTruncated`).

    Parameters
    ----------
    mechanism : Mechanism
        The base family (any :class:`dpbook.Mechanism`); its domain is the rounded release's domain.  The
        true values are counts: integers of that domain (validated by the base, then as integers), so
        that an audit over integer true values is the whole truth.

    Examples
    --------
    >>> import math
    >>> from dpbook import BIT, Rounded
    >>> r = Rounded(BIT(1.0, lower=0.0, upper=3.0))
    >>> r.support, r.domain
    ((0.0, 3.0), (0.0, 3.0))
    >>> round(r.pmf(0, 1.0), 6) == round(0.5 * math.exp(-0.5), 6)   # P(BIT(1) <= 1/2) = e^{-1/2}/2
    True
    >>> round(sum(r.pmf(k, 1.0) for k in range(4)), 12)
    1.0
    >>> r.sample(1.0, size=3, rng=7).dtype
    dtype('int64')
    """

    #: true values and releases are integers (``dpbook.inference.intervals`` inverts the law over integer ``q``)
    integer_valued = True

    def __init__(self, mechanism):
        if not isinstance(mechanism, Mechanism):
            raise ValueError(
                f"mechanism must be a dpbook.Mechanism (e.g. dpbook.BIT(1.0, lower=0, upper=10)), "
                f"got {mechanism!r}"
            )
        self.mechanism = mechanism

    def __repr__(self):
        return f"Rounded({self.mechanism!r})"

    @property
    def domain(self):
        return self.mechanism.domain

    @property
    def support(self):
        """The smallest interval holding every output, ``round`` of the base support's ends (half-integers go down)."""
        lo, hi = self.mechanism.support
        lo = float(_round_half_down(lo)) if math.isfinite(lo) else lo
        hi = float(_round_half_down(hi)) if math.isfinite(hi) else hi
        return (lo, hi)

    def _q(self, q):
        return check.integer_array(
            "q",
            self.mechanism._q(q),
            why=" (Rounded releases a count; its audit is over integer true values)",
        )

    def stochastic_order(self):
        """Rounding is a nondecreasing map, so the base's stochastic order carries over."""
        flag, why = self.mechanism.stochastic_order()
        return (
            flag,
            f"rounding (a nondecreasing map) of {type(self.mechanism).__name__}: {why}",
        )

    # --- the law -------------------------------------------------------------------------------
    def _cell(self, x, q):
        """``(k, x, q)``: ``x`` and ``q`` broadcast, ``k = ⌊x⌋`` (``±inf`` kept)."""
        x, q = np.broadcast_arrays(x, q)
        return np.floor(x), x, q

    def _logpmf(self, x, q):
        """``log P(round(M(q)) = x)`` (``-inf`` at non-integers and outside the support)."""
        x, q = np.broadcast_arrays(x, q)
        lo, hi = self.support
        ok = np.isfinite(x) & (x == np.floor(x)) & (x >= lo) & (x <= hi)
        k = np.where(ok, x, 0.0)
        base = self.mechanism
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lf_hi = np.asarray(base.logcdf(k + 0.5, q), dtype=float)
            lf_lo = np.asarray(base.logcdf(k - 0.5, q), dtype=float)
            ls_lo = np.asarray(base.logsf(k - 0.5, q), dtype=float)
            ls_hi = np.asarray(base.logsf(k + 0.5, q), dtype=float)
            lower_side = lf_hi <= ls_lo
            from_cdf = lf_hi + _log1mexp(np.minimum(lf_lo - lf_hi, 0.0))
            from_sf = ls_lo + _log1mexp(np.minimum(ls_hi - ls_lo, 0.0))
            out = np.where(
                lower_side,
                np.where(lf_hi == -np.inf, -np.inf, from_cdf),
                np.where(ls_lo == -np.inf, -np.inf, from_sf),
            )
        return np.where(ok, out, -np.inf)

    def _pmf(self, x, q):
        """``P(round(M(q)) = x) = F(x + 1/2) - F(x - 1/2)`` (0 at non-integers and outside the support)."""
        return np.exp(self.logpmf(x, q))

    def _cdf(self, x, q):
        """``P(round(M(q)) <= x) = F(⌊x⌋ + 1/2)``."""
        k, x, q = self._cell(x, q)
        with np.errstate(invalid="ignore"):
            out = np.asarray(
                self.mechanism.cdf(np.where(np.isfinite(k), k + 0.5, 0.0), q),
                dtype=float,
            )
        return np.where(k == -np.inf, 0.0, np.where(k == np.inf, 1.0, out))

    def _sf(self, x, q):
        """``P(round(M(q)) > x) = S(⌊x⌋ + 1/2)``, from the base's survival function (tail accuracy)."""
        k, x, q = self._cell(x, q)
        out = np.asarray(
            self.mechanism.sf(np.where(np.isfinite(k), k + 0.5, 0.0), q), dtype=float
        )
        return np.where(k == -np.inf, 1.0, np.where(k == np.inf, 0.0, out))

    def _logcdf(self, x, q):
        k, x, q = self._cell(x, q)
        with np.errstate(divide="ignore"):
            out = np.asarray(
                self.mechanism.logcdf(np.where(np.isfinite(k), k + 0.5, 0.0), q),
                dtype=float,
            )
        return np.where(k == -np.inf, -np.inf, np.where(k == np.inf, 0.0, out))

    def _logsf(self, x, q):
        k, x, q = self._cell(x, q)
        with np.errstate(divide="ignore"):
            out = np.asarray(
                self.mechanism.logsf(np.where(np.isfinite(k), k + 0.5, 0.0), q),
                dtype=float,
            )
        return np.where(k == -np.inf, 0.0, np.where(k == np.inf, -np.inf, out))

    def _quantile_in_q(self, x, p, v, upper):
        """For a rounded :class:`dpbook.Laplace`: the Laplace tail read at ``x ± 1/2`` and solved for ``q``, with
        the proved width of the zone where the computed transform may cross ``p``, or the end decided next to
        the release (:func:`dpbook._kernels.inversion._rounded_root`); ``None`` for any other base."""
        if type(self.mechanism) is not Laplace:
            return None
        return _rounded_root(x, p, v, upper, self.mechanism.scale)

    #: the law has no continuous part: the integer-valued families' ``-inf`` and 0 everywhere
    def _logpdf(self, x, q):
        """The law has no continuous part: ``-inf`` everywhere."""
        return np.full(np.broadcast(x, q).shape, -np.inf)

    def _atoms(self, q):
        """Every integer of a finite support with its mass (at one true value)."""
        if q.ndim:
            raise ValueError(
                f"q must be a single true value for atoms, got shape {q.shape}"
            )
        lo, hi = self.support
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo >= _MAX_CELLS:
            raise ValueError(
                f"the law of {self!r} has too many atoms to list; use pmf(k, q)"
            )
        k = np.arange(lo, hi + 1.0)
        return list(zip(k.tolist(), np.asarray(self.pmf(k, q)).tolist()))

    # --- moments -------------------------------------------------------------------------------
    def _tail_bound(self):
        """``(m(q), s, log N(q), atoms)`` of the base's Laplace-kernel description, or ValueError."""
        desc = self.mechanism.privacy_description()
        if not (
            isinstance(desc, PrivacyDescription)
            and desc.exact
            and desc.shape == "laplace"
            and desc.uniform
            and not desc.log_output
        ):
            raise ValueError(
                f"the moments of {self!r} need a proved tail bound on its infinite support: "
                "the base must describe its law as a Laplace kernel of one scale "
                "(privacy_description()); this one does not"
            )
        return desc

    def _window(self, q):
        """The integers ``[a, b]`` (one true value) over which the sums run, with the tail bound proved."""
        lo, hi = self.support
        if not (math.isfinite(lo) and math.isfinite(hi)):
            desc = self._tail_bound()
            qa = np.asarray(q, dtype=float)
            m = float(np.asarray(desc.center(qa)))
            s = float(np.asarray(desc.scale(qa)))
            log_n = (
                0.0 if desc.log_norm is None else float(np.asarray(desc.log_norm(qa)))
            )
            atoms = [
                (float(t), float(np.asarray(log_mass(qa))))
                for t, log_mass, *_ in desc.atoms
            ]
            c = float(_round_half_down(np.clip(float(q), lo, hi)))
            a = max(lo, c - self._reach(-1.0, c, m, s, log_n, atoms, q))
            b = min(hi, c + self._reach(1.0, c, m, s, log_n, atoms, q))
        else:
            a, b = lo, hi
        if b - a + 1 > _MAX_CELLS:
            raise ValueError(
                f"the moments of {self!r} at q={q!r} would sum {b - a + 1:.3g} integers; "
                f"the limit is {_MAX_CELLS}"
            )
        return a, b

    def _reach(self, sign, c, m, s, log_n, atoms, q):
        """The smallest ``K`` tried (doubling) whose tail beyond ``c ± K`` has the bound of the module docstring
        below ``2^-60 max(1, s)^2``: the kernel's bound ``B(t)`` past the centre plus each atom beyond
        ``t`` at its own mass, times the largest ``(R - c)^2`` it can round to."""
        target = math.log(_TAIL) + 2 * math.log(max(1.0, s))
        d = max(sign * (m - c), 0.0) + 1.0
        for _ in range(2100):
            du = d + 1.0  # |t - u| = K + 1 with u = c - sign/2, t = c + sign (K + 1/2)
            terms = [
                -(d + sign * (c - m)) / s
                - math.log(2.0)
                - log_n
                + math.log(du * du + 2 * s * du + 2 * s * s)
            ]
            terms += [
                lm + 2 * math.log(abs(t - c) + 0.5)
                for t, lm in atoms
                if sign * (t - c) > d
            ]
            if max(terms) + math.log(len(terms)) <= target:
                return math.ceil(d)
            d = max(d * 1.5, d + s)
        raise ValueError(
            f"no tail bound found for {self!r} at q={q!r}"
        )  # pragma: no cover

    def _sums(self, q):
        """``(bias, variance, mse)`` at each true value (exact sums; module docstring)."""
        if self.mechanism.integer_valued:  # rounding an integer is the identity
            base = self.mechanism
            return [
                np.asarray(base.bias(q)),
                np.asarray(base.variance(q)),
                np.asarray(base.mse(q)),
            ]
        flat = np.ravel(q)
        out = np.empty((3, flat.size))
        for i, qi in enumerate(flat):
            a, b = self._window(qi)
            k = np.arange(a, b + 1.0)
            p = np.asarray(self.pmf(k, qi), dtype=float)
            c = float(np.clip(_round_half_down(qi), a, b))
            off = float(np.sum((k - c) * p))
            mean = c + off
            out[0, i] = (c - qi) + off
            out[1, i] = float(np.sum((k - mean) ** 2 * p))
            with np.errstate(over="ignore"):
                out[2, i] = float(np.sum((k - qi) ** 2 * p))
        return [v.reshape(np.shape(q)) for v in out]

    def _bias(self, q):
        """``E[round(M(q))] - q``: an exact sum over the support (module docstring)."""
        return self._sums(q)[0]

    def _mean(self, q):
        return q + np.asarray(self._sums(q)[0])

    def _variance(self, q):
        """``Var[round(M(q))]``: an exact sum about the mean."""
        return self._sums(q)[1]

    def _mse(self, q):
        """``E[(round(M(q)) - q)^2]``: an exact sum."""
        return self._sums(q)[2]

    def _law_expect(self, func, q, lo, hi):
        """``E[func(R); lo <= R <= hi]``: the sum over the moments' window (:meth:`_window`)."""
        a, b = self._window(q)
        a = max(a, math.ceil(lo)) if math.isfinite(lo) else a
        b = min(b, math.floor(hi)) if math.isfinite(hi) else b
        if a > b:
            return 0.0
        k = np.arange(a, b + 1.0)
        p = np.asarray(self.pmf(k, q), dtype=float)
        vals = np.asarray(func(k), dtype=float)
        keep = p > 0
        return math.fsum((vals[keep] * p[keep]).tolist())

    # --- sampling ------------------------------------------------------------------------------
    def _sample(self, q, shape, rng):
        """Draw ``round(M(q))``: the base's draws rounded (ties down), as ``int64`` when every draw fits
        in int64 (a float array of integers otherwise)."""
        x = np.asarray(self.mechanism.sample(q, rng=rng), dtype=float)
        k = _round_half_down(x)
        return k.astype(np.int64) if np.all(np.abs(k) < _INT64_MAX) else k

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor.

        Finite support: a :class:`dpbook.DiscreteDescription` of the rounded law itself (every integer of
        the support is an output the auditor enumerates; the log-ratio is the difference of the two
        log-masses), so the audit over integer true values is exact.  Infinite support: the base's own
        description marked ``exact=False`` (post-processing: the base's ε is an upper bound), or the base's
        discrete description unchanged if it is integer-valued (rounding an integer is the identity).
        """
        lo, hi = self.support
        if math.isfinite(lo) and math.isfinite(hi):
            support_k = np.arange(lo, hi + 1.0)

            def log_ratio(k, q1, q2):
                with np.errstate(invalid="ignore"):
                    return np.asarray(self.logpmf(k, q1), dtype=float) - np.asarray(
                        self.logpmf(k, q2), dtype=float
                    )

            def outputs(q1, q2):
                shape = np.broadcast(np.asarray(q1), np.asarray(q2)).shape
                return np.broadcast_to(support_k, shape + support_k.shape)

            return DiscreteDescription(
                log_ratio=log_ratio,
                logpmf=self.logpmf,
                support=(lo, hi),
                outputs=outputs,
            )
        desc = self.mechanism.privacy_description()
        if isinstance(desc, DiscreteDescription):
            return desc
        return dataclasses.replace(desc, exact=False)
