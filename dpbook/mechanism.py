"""The interface every dpbook mechanism family shares.

A *mechanism family* is a map from a true value ``q`` to a random release ``M(q)``.  Each family
offers its statistical properties next to its sampler (as diffprivlib does), all vectorized over
``q`` and the output ``x`` with numpy broadcasting:

* moments: ``bias(q)``, ``mean(q)``, ``variance(q)``, ``mse(q)``;
* the law, with ``scipy.stats``' names and an extra argument ``q``: ``cdf(x, q)``, ``sf``, ``logcdf``,
  ``logsf``, ``ppf(p, q)``, ``isf``, ``pdf``/``logpdf`` (the density of the absolutely continuous part),
  ``pmf`` and ``atoms(q)`` (the point masses);
* ``sample(q, size=None, *, rng=None)``, where ``rng`` is an int seed, a ``numpy.random.Generator`` or
  ``None`` (SPEC 7);
* ``at(q)``: the law of ``M(q)`` at one true value as a :class:`dpbook.Law`, with the method names
  of a frozen ``scipy.stats`` distribution.

A family implements ``bias``, ``variance``, ``cdf``, ``logpdf`` and ``_sample`` (and ``atoms`` if its
law has point masses); everything else has a generic default here that families with closed forms
override: ``sf = 1 - cdf``, ``ppf``/``isf`` by exact bisection on the cdf/sf
(``dpbook.law._invert_cdf``).
"""

from __future__ import annotations

import numpy as np

from . import _validation as check
from .law import Law, _below, _invert_cdf

__all__ = ["Mechanism"]


class Mechanism:
    """Base class of every mechanism family; see the module docstring for the interface."""

    #: the set of true values the mechanism is meant for, as a ``(lo, hi)`` pair
    domain = (-np.inf, np.inf)
    #: the smallest closed interval holding every output
    support = (-np.inf, np.inf)

    #: a family that is stochastically increasing in ``q`` (``P_q(M <= x)`` nonincreasing in ``q`` for
    #: every ``x``) but does not override :meth:`stochastic_order` may declare it here (a bool)
    stochastically_increasing = None
    #: the release card's traits (:mod:`dpbook.reporting`): ``|bias(q)|`` is largest at an end of any
    #: interval of true values (the bias is monotone in ``q``) ...
    _bias_monotone = False
    #: ... and ``mse(q)`` is ``q**2`` times a constant (largest at the top end)
    _mse_scales_as_q_squared = False

    def stochastic_order(self):
        """Whether the family is stochastically increasing in ``q``, with the reason.

        ``P_q(M <= x)`` nonincreasing in ``q`` for every ``x`` is what makes the exact confidence set of
        :func:`dpbook.confidence_interval` an interval.  Each family states its own proof; the default
        reads the class attribute ``stochastically_increasing``, else says it is unknown.

        Returns
        -------
        (bool, str)
        """
        flag = type(self).stochastically_increasing
        if isinstance(flag, bool):
            return flag, f"declared by {type(self).__name__}.stochastically_increasing"
        return False, f"unknown for {type(self).__name__}"

    def _score_bound(self):
        """``(c, b)`` with ``|d/dq log p_q(x)| <= c/b`` for every ``q`` and ``x``, or ``None`` if unknown."""
        return None

    def _law_is_numerical(self):
        """True when the family's law is computed numerically (quadrature), not in closed form."""
        return False

    def _q(self, q):
        """Validate true values (finite reals); subclasses may narrow this."""
        return check.finite_array("q", q)

    def at(self, q):
        """The law of the release ``M(q)`` at one true value, shaped like a frozen ``scipy.stats`` law.

        Returns
        -------
        dpbook.law.Law
        """
        return Law(self, q)

    # --- moments -------------------------------------------------------------------------------
    def bias(self, q):
        """``E[M(q)] - q``."""
        raise NotImplementedError

    def mean(self, q):
        """``E[M(q)]``."""
        q = self._q(q)
        return _float(q + self.bias(q))

    def variance(self, q):
        """``Var[M(q)]``."""
        raise NotImplementedError

    def mse(self, q):
        """``E[(M(q) - q)^2] = variance + bias^2``."""
        q = self._q(q)
        # in numpy, not Python floats: a bias beyond 1.3e154 squares to inf (the truth), never OverflowError
        with np.errstate(over="ignore"):
            return _float(np.asarray(self.variance(q)) + np.asarray(self.bias(q)) ** 2)

    # --- the law -------------------------------------------------------------------------------
    def cdf(self, x, q):
        """``P(M(q) <= x)``, point masses included."""
        raise NotImplementedError

    def sf(self, x, q):
        """``P(M(q) > x)``; the default is ``1 - cdf``, families override it where the tail needs it."""
        return _float(1.0 - np.asarray(self.cdf(x, q)))

    def logcdf(self, x, q):
        """``log P(M(q) <= x)``."""
        with np.errstate(divide="ignore"):
            return _float(np.log(self.cdf(x, q)))

    def logsf(self, x, q):
        """``log P(M(q) > x)``."""
        with np.errstate(divide="ignore"):
            return _float(np.log(self.sf(x, q)))

    def logpdf(self, x, q):
        """Log-density of the absolutely continuous part of the law of ``M(q)`` at ``x`` (``-inf`` where it vanishes)."""
        raise NotImplementedError

    def pdf(self, x, q):
        """Density of the absolutely continuous part of the law of ``M(q)`` (point masses excluded)."""
        return _float(np.exp(self.logpdf(x, q)))

    def atoms(self, q):
        """Point masses of the law of ``M(q)``: a list of ``(location, probability)`` pairs."""
        return []

    def pmf(self, x, q):
        """``P(M(q) = x)``: the point mass at ``x``, 0 away from the atoms."""
        x, q = check.real_array("x", x), self._q(q)
        out = np.zeros(np.broadcast(x, q).shape)
        for loc, mass in self.atoms(q):
            out = out + np.where(x == loc, mass, 0.0)
        return _float(out)

    def ppf(self, p, q):
        """The quantile function ``inf{x : cdf(x, q) >= p}`` at ``p`` in ``[0, 1]`` (``support[0]`` at ``p = 0``).

        The default inverts ``cdf`` numerically: bisection over the ordered doubles
        (``dpbook.law._invert_cdf``), exact to the last bit of the computed cdf and exact at atoms.
        """
        p, q = self._p(p), self._q(q)
        p, q = np.broadcast_arrays(p, q)
        lo, hi = self.support
        x = _invert_cdf(lambda x, t: self.cdf(x, q) >= t, p, _below(lo), hi)
        return _float(np.where(p == 0, lo, np.where(p == 1, hi, x)))

    def isf(self, p, q):
        """The inverse survival function ``inf{x : sf(x, q) <= p}`` (``= ppf(1 - p, q)``), from ``sf`` for tail accuracy."""
        p, q = self._p(p), self._q(q)
        p, q = np.broadcast_arrays(p, q)
        lo, hi = self.support
        x = _invert_cdf(lambda x, t: self.sf(x, q) <= t, p, _below(lo), hi)
        return _float(np.where(p == 1, lo, np.where(p == 0, hi, x)))

    @staticmethod
    def _p(p):
        p = check.real_array("p", p)
        if ((p < 0) | (p > 1)).any():
            raise ValueError(f"p must lie in [0, 1], got {p!r}")
        return p

    def _kinks(self, q):
        """Points (for one ``q``) where the continuous density is not smooth, for :meth:`Law.expect`."""
        return [q]

    def _law_expect(self, func, q, lo, hi):
        """``E[func(M(q)); lo <= M(q) <= hi]`` if the family has a better way than the generic one, else None."""
        return None

    # --- sampling ------------------------------------------------------------------------------
    def sample(self, q, size=None, *, rng=None):
        """Draw releases ``M(q)``.

        The output has shape ``size`` when given (``q`` is broadcast to it), else the shape of ``q``.
        ``rng`` is an int seed, a ``numpy.random.Generator`` or ``None`` (a fresh generator).
        """
        q = self._q(q)
        size = check.size(size)
        rng = check.generator(rng)
        shape = np.shape(q) if size is None else size
        q = np.broadcast_to(q, shape)
        return _float(self._sample(q, shape, rng))

    def _sample(self, q, shape, rng):
        raise NotImplementedError

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


def _compact(q):
    """The smallest array that broadcasts to the broadcast view ``q`` (drops stride-0 axes)."""
    return q[tuple(slice(None, 1) if s == 0 else slice(None) for s in q.strides)]


def _float(a):
    """Return a Python float for 0-d results, else the array."""
    a = np.asarray(a, dtype=float)
    return float(a) if a.ndim == 0 else a


class IntervalMechanism(Mechanism):
    """A Laplace-based family on ``[lower, upper]`` whose statistics are module-level formulas.

    Subclasses name their formula functions ``f(q, scale, lower, upper)`` as the static attributes
    ``_bias``, ``_mean``, ``_variance`` and ``_mse``.
    """

    def __init__(self, scale, *, lower=0.0, upper=np.inf):
        self.scale = check.positive("scale", scale)
        self.lower, self.upper = check.bounds(lower, upper)

    @property
    def domain(self):
        return (self.lower, self.upper)

    @property
    def support(self):
        return (self.lower, self.upper)

    def _params(self):
        return self.scale, self.lower, self.upper

    def bias(self, q):
        return self._bias(q, *self._params())

    def mean(self, q):
        return self._mean(q, *self._params())

    def variance(self, q):
        return self._variance(q, *self._params())

    def mse(self, q):
        return self._mse(q, *self._params())


def _interval_family(name, family):
    """Validate ``family``, a mechanism family on an interval: ``family(scale, *, lower, upper) -> Mechanism``.

    Returns a function ``make(scale, lower, upper)`` that builds the mechanism and checks it is one.
    ``dpbook.BIT`` and ``dpbook.Truncated`` are such families; a family is passed, never named by a string.
    """
    if isinstance(family, str) or not callable(family):
        raise ValueError(
            f"{name} must be a mechanism family called as {name}(scale, lower=..., upper=...), "
            f"e.g. dpbook.BIT or dpbook.Truncated, got {family!r}"
        )

    def make(scale, lower, upper):
        mech = family(scale, lower=lower, upper=upper)
        if not isinstance(mech, Mechanism):
            raise ValueError(f"{name}(scale, lower=..., upper=...) must return a dpbook.Mechanism, got {mech!r}")
        return mech

    return make
