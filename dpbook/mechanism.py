"""The interface every dpbook mechanism family shares.

A *mechanism family* is a map from a true value ``q`` to a random release.  Each family
offers its statistical properties next to its sampler (as diffprivlib does), all vectorized
over ``q`` and the output ``x`` with numpy broadcasting:

``bias(q)``, ``mean(q)``, ``variance(q)``, ``mse(q)``, ``cdf(x, q)``,
``sample(q, size=None, rng=None)``, and, for the privacy auditor, ``logpdf(x, q)`` (the
log-density of the absolutely continuous part of the law, ``-inf`` where it vanishes) and
``atoms(q)`` (the point masses).
"""

from __future__ import annotations

import numpy as np

from . import _validation as check


class Mechanism:
    """Base class: subclasses implement ``bias``, ``variance``, ``cdf``, ``_sample``."""

    #: the set of true values the mechanism is meant for, as a ``(lo, hi)`` pair
    domain = (-np.inf, np.inf)
    #: the smallest closed interval holding every output
    support = (-np.inf, np.inf)

    def _q(self, q):
        """Validate true values (finite reals); subclasses may narrow this."""
        return check.finite_array("q", q)

    def bias(self, q):
        """E[M(q)] - q."""
        raise NotImplementedError

    def mean(self, q):
        """E[M(q)]."""
        q = self._q(q)
        return _float(q + self.bias(q))

    def variance(self, q):
        """Var[M(q)]."""
        raise NotImplementedError

    def mse(self, q):
        """E[(M(q) - q)^2] = variance + bias^2."""
        q = self._q(q)
        return _float(self.variance(q) + self.bias(q) ** 2)

    def cdf(self, x, q):
        """P(M(q) <= x)."""
        raise NotImplementedError

    def logpdf(self, x, q):
        """Log-density of the absolutely continuous part of the law of M(q) at x."""
        raise NotImplementedError

    def atoms(self, q):
        """Point masses of the law of M(q): a list of ``(location, probability)`` pairs."""
        return []

    def sample(self, q, size=None, rng=None):
        """Draw releases M(q).

        The output has shape ``size`` when given (``q`` is broadcast to it), else the shape of ``q``.
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

    def __init__(self, scale, lower=0.0, upper=np.inf):
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
