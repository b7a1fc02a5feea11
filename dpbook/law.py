"""The law of one release: :meth:`Mechanism.at(q) <dpbook.Mechanism.at>` returns a :class:`Law`.

A mechanism family maps a true value ``q`` to a random release ``M(q)``; its methods are vectorized
over ``q``.  A :class:`Law` holds *one* such law, ``M(q)`` at a fixed ``q``, and answers with the
method names and meanings of a frozen ``scipy.stats`` distribution: ``cdf``, ``sf``, ``ppf``, ``isf``,
``logcdf``, ``logsf``, ``pdf``, ``logpdf``, ``pmf``, ``mean``, ``var``, ``std``, ``median``,
``interval``, ``expect``, ``support`` and ``rvs``.

Many releases of the book are *mixed* laws: clamping puts point masses on the bounds, a ramp or a step
post-processing puts them on its flat values.  For these, as for a scipy distribution, ``cdf``
includes the point masses (it is right-continuous), ``pdf``/``logpdf`` is the density of the
absolutely continuous part only (so it integrates to ``1 - sum of the point masses``), and
``pmf(x)`` is the point mass at ``x`` (0 away from the atoms).  ``ppf`` is the generalized inverse
``ppf(p) = inf{x : cdf(x) >= p}``, which returns the atom's location for every ``p`` its jump covers.

The law object is generic: it only calls the family's primitives (``cdf(x, q)``, ``sf``,
``logpdf``, ``atoms``, ``ppf``, ``isf``, ``mean``, ``variance`` and the class attribute ``support``),
as a ``scipy.stats.rv_continuous`` subclass only provides ``_cdf``, ``_pdf``, ``_ppf``.  Families without
a closed-form quantile inherit ``_invert_cdf``: bisection on the cdf over the ordered
double-precision numbers, exact to the last bit of the computed cdf and exact at atoms.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from . import _validation as check

__all__ = ["Law"]

_SIGN_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


def _key(x):
    """Map doubles to int64 keys that sort as the doubles do (``-0.0`` just below ``+0.0``)."""
    i = np.asarray(x, dtype=np.float64).view(np.int64)
    return i ^ ((i >> 63) & _SIGN_MASK)


def _unkey(k):
    """The inverse of :func:`_key`."""
    k = np.asarray(k, dtype=np.int64)
    return (k ^ ((k >> 63) & _SIGN_MASK)).view(np.float64)


def _invert_cdf(reached, p, lo, hi):
    """The smallest double ``x`` in ``(lo, hi]`` with ``reached(x, p)`` true, for each ``p``, by bisection.

    ``reached(x, p)`` must be monotone in ``x`` (false, then true) and true at ``hi``; it is never
    evaluated at ``lo`` or ``hi``.  The search runs over the ordered doubles, so it ends after at most
    64 halvings at the exact switching point of the *computed* predicate.  With
    ``reached = cdf(x) >= p`` this is the generalized inverse ``inf{x: cdf(x) >= p}``: a jump of the cdf
    (a point mass) is found at its exact location.
    """
    p = np.asarray(p, dtype=float)
    k_lo = np.broadcast_to(_key(lo), p.shape).copy()
    k_hi = np.broadcast_to(_key(hi), p.shape).copy()
    for _ in range(70):
        open_ = k_hi - 1 > k_lo  # (k_hi - k_lo would overflow between -inf and inf)
        if not open_.any():
            break
        mid = (k_lo >> 1) + (k_hi >> 1) + (k_lo & k_hi & 1)
        mid = np.where(open_, mid, k_hi)
        with np.errstate(over="ignore", under="ignore"):
            ok = np.asarray(reached(_unkey(mid), p), dtype=bool)
        k_hi = np.where(open_ & ok, mid, k_hi)
        k_lo = np.where(open_ & ~ok, mid, k_lo)
    return _unkey(k_hi) + 0.0  # -0.0 -> 0.0


def _below(a):
    """The largest double below ``a`` (``-inf`` for ``a = -inf``)."""
    return -np.inf if a == -np.inf else float(np.nextafter(a, -np.inf))


class Law:
    """The law of the release ``M(q)`` of a mechanism at one true value ``q``, shaped like ``scipy.stats``.

    Made by :meth:`dpbook.Mechanism.at`; every method delegates to the family's vectorized
    primitives with ``q`` fixed, so a law and its family always agree.

    Parameters
    ----------
    mechanism : Mechanism
        The family.
    q : float
        The true value (validated as the family validates it).

    Examples
    --------
    >>> from dpbook import BIT
    >>> law = BIT(1.0, lower=0.0, upper=2.0).at(0.5)
    >>> round(law.pmf(0.0), 6), round(law.cdf(0.0), 6)  # the point mass at the lower bound
    (0.303265, 0.303265)
    >>> law.ppf(0.2)  # inside the jump at 0: the atom's location
    0.0
    >>> round(law.expect(), 12) == round(law.mean(), 12)
    True
    """

    def __init__(self, mechanism, q):
        qa = mechanism._q(q)
        if qa.ndim != 0:
            raise ValueError(f"q must be a single true value for a law, got shape {qa.shape}; use the family's "
                             "vectorized methods for many q")
        self.mechanism = mechanism
        self.q = float(qa)

    def __repr__(self):
        return f"{self.mechanism!r}.at({self.q!r})"

    # --- distribution functions ------------------------------------------------------------
    def cdf(self, x):
        """``P(M(q) <= x)``, point masses included."""
        return self.mechanism.cdf(x, self.q)

    def sf(self, x):
        """``P(M(q) > x) = 1 - cdf(x)``, computed directly where the family can (tail accuracy)."""
        return self.mechanism.sf(x, self.q)

    def logcdf(self, x):
        """``log cdf(x)``."""
        return self.mechanism.logcdf(x, self.q)

    def logsf(self, x):
        """``log sf(x)``."""
        return self.mechanism.logsf(x, self.q)

    def ppf(self, p):
        """The quantile function ``inf{x : cdf(x) >= p}`` at ``p`` in ``[0, 1]``; ``ppf(0)`` is the support's lower end."""
        return self.mechanism.ppf(p, self.q)

    def isf(self, p):
        """The inverse survival function ``inf{x : sf(x) <= p}`` (``= ppf(1 - p)``), accurate for small ``p``."""
        return self.mechanism.isf(p, self.q)

    def pdf(self, x):
        """Density of the absolutely continuous part of the law (point masses excluded)."""
        return self.mechanism.pdf(x, self.q)

    def logpdf(self, x):
        """``log pdf(x)``; ``-inf`` where the continuous part has no density."""
        return self.mechanism.logpdf(x, self.q)

    def pmf(self, x):
        """``P(M(q) = x)``: the point mass at ``x``, 0 away from the atoms."""
        return self.mechanism.pmf(x, self.q)

    def logpmf(self, x):
        """``log pmf(x)``, from the family's own ``logpmf`` where it has one (integer-valued families)."""
        own = getattr(self.mechanism, "logpmf", None)
        if own is not None:
            return own(x, self.q)
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(x))

    def atoms(self):
        """The point masses as a list of ``(location, probability)`` pairs (empty for a continuous law)."""
        return [(float(a), float(m)) for a, m in self.mechanism.atoms(self.q)]

    def support(self):
        """``(a, b)``: the smallest closed interval of the family's outputs, as ``scipy``'s ``support()``."""
        a, b = self.mechanism.support
        return float(a), float(b)

    # --- moments and summaries -------------------------------------------------------------
    def mean(self):
        """``E[M(q)]`` (the family's closed form or quadrature; ``inf`` where it diverges)."""
        return float(self.mechanism.mean(self.q))

    def var(self):
        """``Var[M(q)]``."""
        return float(self.mechanism.variance(self.q))

    def std(self):
        """``sqrt(var())``."""
        return math.sqrt(self.var())

    def median(self):
        """``ppf(0.5)``."""
        return float(self.ppf(0.5))

    def interval(self, confidence):
        """The central interval ``(ppf((1 - c)/2), isf((1 - c)/2))`` holding probability ``c = confidence``."""
        c = check.real_array("confidence", confidence)
        if ((c < 0) | (c > 1)).any():
            raise ValueError(f"confidence must lie in [0, 1], got {confidence!r}")
        tail = (1.0 - c) / 2.0
        return self.ppf(tail), self.isf(tail)

    def expect(self, func=None, *, lb=None, ub=None, conditional=False):
        """``E[func(M(q))]``, or over ``lb <= M(q) <= ub`` only, as ``scipy.stats``' ``expect``.

        The continuous part is integrated with ``scipy.integrate.quad`` against ``pdf``, split at the
        family's kinks (the true value, piece ends, the support's ends, the atoms) and at widening
        distances from the median; the point masses are summed.  ``conditional=True`` divides by
        ``P(lb <= M(q) <= ub)``.  ``func`` must accept an array and be finite where the law lives;
        ``func=None`` is the identity.  Like ``scipy.integrate.quad`` itself, this needs the law to be
        resolved by doubles: for ``|q|`` beyond about ``1e12`` times the law's spread the density can
        no longer be evaluated finely enough, and quad warns.
        """
        if func is None:
            def func(x):
                return x
        elif not callable(func):
            raise ValueError(f"func must be callable or None, got {func!r}")
        a, b = self.support()
        lo = a if lb is None else max(a, check.extended_real("lb", lb))
        hi = b if ub is None else min(b, check.extended_real("ub", ub))
        if lo > hi:
            return 0.0
        own = self.mechanism._law_expect(func, self.q, lo, hi)
        if own is not None:
            total = own
        else:
            total = self._continuous(func, lo, hi) + sum(
                float(np.asarray(func(np.float64(t)))) * m for t, m in self.atoms() if lo <= t <= hi and m > 0)
        if conditional:
            return total / (float(self.cdf(hi)) - float(self.cdf(_below(lo))))
        return total

    def _cuts(self, lo, hi):
        """Where to split the quadrature: kinks and a geometric ladder around the median."""
        med = self.median()
        spread = float(self.isf(0.25) - self.ppf(0.25))
        if not (np.isfinite(spread) and spread > 0):
            spread = max(abs(med), 1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            ladder = med + spread * np.array([-256.0, -64.0, -16.0, -4.0, -1.0, 0.0, 1.0, 4.0, 16.0, 64.0, 256.0])
        pts = [lo, hi, *ladder[np.isfinite(ladder)], *self.mechanism._kinks(self.q), *(t for t, _ in self.atoms())]
        return np.unique(np.asarray([p for p in pts if lo <= p <= hi and not np.isnan(p)], dtype=float))

    def _continuous(self, func, lo, hi):
        pts = self._cuts(lo, hi)
        total = 0.0

        def integrand(x):
            d = float(self.pdf(x))
            return 0.0 if d == 0.0 else float(np.asarray(func(np.float64(x)))) * d

        for left, right in zip(pts[:-1], pts[1:]):
            val, _ = integrate.quad(integrand, left, right, limit=200, epsabs=1e-14, epsrel=1e-11)
            total += val
        return total

    # --- sampling --------------------------------------------------------------------------
    def rvs(self, size=None, *, random_state=None):
        """Draw releases ``M(q)``: ``size`` as numpy's; ``random_state`` an int seed, a ``numpy.random.Generator`` or None."""
        rng = check.generator(random_state, "random_state")
        return self.mechanism.sample(self.q, size, rng=rng)
