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
import warnings

import numpy as np
from scipy import integrate

from ._kernels import validation as check
from ._kernels.arrays import _below

__all__ = ["Law"]


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
            raise ValueError(
                f"q must be a single true value for a law, got shape {qa.shape}; use the family's "
                "vectorized methods for many q"
            )
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
        """The quantile function ``inf{x : cdf(x) >= p}`` at ``p`` in ``[0, 1]``; ``ppf(0)`` is the support's
        lower end."""
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
        return self.mechanism.logpmf(x, self.q)

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
        resolved by doubles: the density integrated over the same cells must give the continuous mass
        the cdf gives, and quad must not report trouble, else (a law far narrower than the spacing of the
        doubles at ``q``, whose density quad never sees) a ``ValueError`` is raised rather than a wrong
        answer returned.
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
                float(np.asarray(func(np.float64(t)))) * m
                for t, m in self.atoms()
                if lo <= t <= hi and m > 0
            )
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
            ladder = med + spread * np.array(
                [-256.0, -64.0, -16.0, -4.0, -1.0, 0.0, 1.0, 4.0, 16.0, 64.0, 256.0]
            )
        pts = [
            lo,
            hi,
            *ladder[np.isfinite(ladder)],
            *self.mechanism._kinks(self.q),
            *(t for t, _ in self.atoms()),
        ]
        return np.unique(
            np.asarray(
                [p for p in pts if lo <= p <= hi and not np.isnan(p)], dtype=float
            )
        )

    def _continuous(self, func, lo, hi):
        pts = self._cuts(lo, hi)
        total = mass = 0.0

        def integrand(x):
            d = float(self.pdf(x))
            return 0.0 if d == 0.0 else float(np.asarray(func(np.float64(x)))) * d

        def density(x):
            return float(self.pdf(x))

        with warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                for left, right in zip(pts[:-1], pts[1:]):
                    total += integrate.quad(
                        integrand, left, right, limit=200, epsabs=1e-14, epsrel=1e-11
                    )[0]
                    mass += integrate.quad(
                        density, left, right, limit=200, epsabs=1e-14, epsrel=1e-11
                    )[0]
            except integrate.IntegrationWarning as trouble:
                raise ValueError(
                    f"q={self.q!r}: the law of {self.mechanism!r} at q is not resolved by quadrature "
                    f"in doubles (quad: {str(trouble).split('.')[0]})"
                ) from None
        # the quadrature must see the continuous mass the cdf holds: a law far narrower than the spacing of
        # the doubles near it (or a density quad steps over) is refused, never answered wrongly
        held = (
            float(self.cdf(hi))
            - float(self.cdf(_below(lo)))
            - sum(m for t, m in self.atoms() if lo <= t <= hi and m > 0)
        )
        if not abs(mass - held) <= 1e-9 * held + 1e-13:
            raise ValueError(
                f"q={self.q!r}: the law of {self.mechanism!r} at q is not resolved by quadrature in "
                f"doubles (its density integrates to {mass:.6g} on [{lo!r}, {hi!r}], its cdf says "
                f"{held:.6g}); it is too narrow for the spacing of the doubles near q"
            )
        # the nodes are rounded to the doubles near q: what quad loses of the mass it loses of E[func] alike
        return total * (held / mass) if mass > 0 else total

    # --- sampling --------------------------------------------------------------------------
    def rvs(self, size=None, *, random_state=None):
        """Draw releases ``M(q)``: ``size`` as numpy's; ``random_state`` an int seed, a
        ``numpy.random.Generator`` or None."""
        rng = check.generator(random_state, "random_state")
        return self.mechanism.sample(self.q, size, rng=rng)
