"""The contract every dpbook mechanism family fulfils: :class:`Mechanism`.

A *mechanism family* is a map from a true value ``q`` to a random release ``M(q)``.  Its public
methods (``bias``, ``cdf``, ``ppf``, ``sample``, ``at`` ...) live here, once: each validates its
arguments, converts them to float arrays and returns a float for a scalar, then calls the family's
private *kernel* (``_bias``, ``_cdf``, ``_ppf``, ``_sample`` ...) on clean arrays, as
``scipy.stats.rv_continuous`` does.  A family module therefore reads as mathematics: kernels that cite
the paper and equation they implement, and the family's description of its own privacy.

The list of what a family must and may define is the docstring of :class:`Mechanism`; the book's
back-matter page *Adding a mechanism family* walks through one.
"""

from __future__ import annotations

import abc
import math
from typing import NamedTuple

import numpy as np

from ._kernels import validation as check
from ._kernels.arrays import _below, _float, _invert_cdf
from .law import Law

__all__ = ["BiasCertificate", "Mechanism", "interval_family"]


class Mechanism(abc.ABC):
    """The abstract base class of every mechanism family: the contract in one place.

    Every public method validates its input once, here (a ``ValueError`` naming the parameter for a
    string, a bool, an object array, a NaN; a refusal naming ``size`` for a sample that would not fit
    in memory), broadcasts, and returns a Python float for scalar input.  A family writes *kernels*
    on validated float arrays (``q`` a float array of true values, ``x`` of outputs, ``p`` of
    probabilities in ``[0, 1]``; they broadcast against each other).

    **A family must define** (abstract here):

    ``_bias(q)``, ``_variance(q)``
        ``E[M(q)] - q`` and ``Var M(q)``.
    ``_cdf(x, q)``
        ``P(M(q) <= x)``, point masses included.
    ``_logpdf(x, q)``
        The log-density of the absolutely continuous part (``-inf`` where it vanishes; a purely
        atomic law returns ``-inf`` everywhere).
    ``_sample(q, shape, rng)``
        Draws of shape ``shape`` (``q`` is already broadcast to it) from a ``numpy.random.Generator``.
    ``privacy_description()``
        What the auditor needs (``dpbook.audit``): a :class:`~dpbook.PrivacyDescription` for a
        real-valued law, a :class:`~dpbook.DiscreteDescription` for an integer-valued one.  Read by
        :func:`dpbook.privacy_loss`, :func:`dpbook.privacy_report`, :func:`dpbook.pair_loss`.

    **A family may define** (each has a default here; who reads it in brackets):

    ``_mean(q)``, ``_mse(q)``
        Default ``q + _bias`` and ``_variance + _bias**2`` [users, calibration, release card].
    ``_sf``, ``_logcdf``, ``_logsf``
        Default ``1 - _cdf`` and logarithms: override where a tail needs its own accuracy [law,
        intervals, auditor checks].
    ``_ppf(p, q)``, ``_isf(p, q)``
        Default: exact bisection over the doubles on ``_cdf``/``_sf`` [law, sampler tests, intervals].
    ``_atoms(q)``
        The point masses as ``[(location, mass array), ...]``; default none [``pmf``, law, intervals].
    ``_logpmf(x, q)``
        Default ``log pmf``; integer-valued families override it for tails [law].
    ``_q(q)``
        Validation of true values (default: finite reals); families narrow it, e.g. to integers or
        to ``q > 0`` [every public method].
    ``_kinks(q)``, ``_law_expect(func, q, lo, hi)``
        Where the density is not smooth (default ``[q]``) and an own way to compute
        ``E[func(M(q)); lo <= M <= hi]`` (default ``None``: quadrature) [:meth:`dpbook.Law.expect`].
    ``stochastic_order()``
        ``(bool, reason)``: is ``P_q(M <= x)`` nonincreasing in ``q``? [intervals, calibration].
    ``score_bound()``
        ``(c, b)`` with ``|d/dq log p_q(x)| <= c/b``, or ``None`` [release card].
    ``max_abs_bias()``
        ``sup |bias(q)|`` over the domain in closed form (or, for :class:`~dpbook.PostProcessed`, the
        certified search's value), or ``None`` when the family cannot state it [calibration].
    ``law_is_numerical()``
        ``True`` when the law is computed by quadrature, not in closed form [intervals].
    ``_quantile_in_q(x, p, v, upper)``
        The true value ``q`` solving ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or
        ``P_q(M > x) + (1 - v) P_q(M = x) = p`` (``upper`` true) in closed form, vectorized (``±inf``
        where the transform stays on one side of ``p``), or ``None`` (default: no closed form, the
        ends are found by bisection).  A plain array is a starting point only: the ends are searched
        from it on ``_cdf``/``_sf`` (the bisection's doubles wherever the computed tail is monotone; a
        wrong formula costs time, never a wrong end).  A ``dpbook._kernels.inversion.Root(root, width)``
        adds a proved bound ``width`` on how far from ``root`` the computed transform can cross ``p``;
        the intervals then take the ends from it without evaluating the law (over the integers the
        search's own integers, over the doubles ``root`` moved outward by ``width``) [intervals].
    ``_quantiles_in_q(x, p, v_top, v_bottom)``
        The two ends' ``_quantile_in_q`` (lower tail with ``v_top``, upper with ``v_bottom``) as a pair, or
        ``None``; the default calls it twice, a family may share the work of the two [intervals].

    **Traits** (class attributes, declared here with their defaults):

    ``domain``, ``support``
        ``(lo, hi)`` of the true values the mechanism is meant for and of its outputs.
    ``integer_valued``
        True values and releases are integers [auditor, intervals, calibration, release card].
    ``stochastically_increasing``
        A declared answer for :meth:`stochastic_order` (``None``: not declared).
    ``bias_monotone``
        ``|bias(q)|`` is largest at an end of any interval of true values [release card].
    ``mse_scales_as_q_squared``
        ``mse(q)`` is ``q**2`` times a constant [release card].
    """

    domain = (-np.inf, np.inf)
    support = (-np.inf, np.inf)
    integer_valued = False
    stochastically_increasing = None
    bias_monotone = False
    mse_scales_as_q_squared = False

    # --- what a family must define -------------------------------------------------------------
    @abc.abstractmethod
    def _bias(self, q):
        """``E[M(q)] - q`` on validated ``q``."""

    @abc.abstractmethod
    def _variance(self, q):
        """``Var M(q)`` on validated ``q``."""

    @abc.abstractmethod
    def _cdf(self, x, q):
        """``P(M(q) <= x)`` on validated ``x``, ``q``."""

    @abc.abstractmethod
    def _logpdf(self, x, q):
        """Log-density of the continuous part on validated ``x``, ``q``."""

    @abc.abstractmethod
    def _sample(self, q, shape, rng):
        """Draws of shape ``shape`` (``q`` broadcast to it) from the Generator ``rng``."""

    @abc.abstractmethod
    def privacy_description(self):
        """What the auditor needs: a :class:`dpbook.PrivacyDescription` or :class:`dpbook.DiscreteDescription`."""

    # --- hooks with defaults -------------------------------------------------------------------
    def _q(self, q):
        """Validate true values (finite reals); families narrow this."""
        return check.finite_array("q", q)

    def _mean(self, q):
        return q + self._bias(q)

    def _mse(self, q):
        # in numpy, not Python floats: a bias beyond 1.3e154 squares to inf (the truth), never OverflowError
        with np.errstate(over="ignore"):
            return np.asarray(self._variance(q)) + np.asarray(self._bias(q)) ** 2

    def _sf(self, x, q):
        return 1.0 - np.asarray(self._cdf(x, q))

    def _logcdf(self, x, q):
        with np.errstate(divide="ignore"):
            return np.log(self._cdf(x, q))

    def _logsf(self, x, q):
        with np.errstate(divide="ignore"):
            return np.log(self._sf(x, q))

    def _atoms(self, q):
        return []

    def _pmf(self, x, q):
        out = np.zeros(np.broadcast(x, q).shape)
        for loc, mass in self._atoms(q):
            out = out + np.where(x == loc, mass, 0.0)
        return out

    def _logpmf(self, x, q):
        with np.errstate(divide="ignore"):
            return np.log(self._pmf(x, q))

    def _ppf(self, p, q):
        p, q = np.broadcast_arrays(p, q)
        lo, hi = self.support
        x = _invert_cdf(lambda x, t: self._cdf(x, q) >= t, p, _below(lo), hi)
        return np.where(p == 0, lo, np.where(p == 1, hi, x))

    def _isf(self, p, q):
        p, q = np.broadcast_arrays(p, q)
        lo, hi = self.support
        x = _invert_cdf(lambda x, t: self._sf(x, q) <= t, p, _below(lo), hi)
        return np.where(p == 1, lo, np.where(p == 0, hi, x))

    def _kinks(self, q):
        """Points (for one ``q``) where the continuous density is not smooth, for :meth:`Law.expect`."""
        return [q]

    def _law_expect(self, func, q, lo, hi):
        """``E[func(M(q)); lo <= M(q) <= hi]`` if the family has a better way than quadrature, else None."""
        return None

    def stochastic_order(self):
        """Whether the family is stochastically increasing in ``q``, with the reason.

        ``P_q(M <= x)`` nonincreasing in ``q`` for every ``x`` is what makes the exact confidence set of
        :func:`dpbook.confidence_interval` an interval.  Each family states its own proof; the default
        reads the trait ``stochastically_increasing``, else says it is unknown.

        Returns
        -------
        (bool, str)
        """
        flag = type(self).stochastically_increasing
        if isinstance(flag, bool):
            return flag, f"declared by {type(self).__name__}.stochastically_increasing"
        return False, f"unknown for {type(self).__name__}"

    def score_bound(self):
        """``(c, b)`` with ``|d/dq log p_q(x)| <= c/b`` for every ``q`` and ``x``, or ``None`` if unknown."""
        return None

    def max_abs_bias(self):
        """``sup |bias(q)|`` over the domain as the family can state it, or ``None`` (then callers search)."""
        return None

    def accepts(self, q):
        """Whether ``q`` is a true value the family takes: finite and passing its own check (a domain end may be
        open, as ``q > 0`` for log-Laplace) [intervals, calibration]."""
        if not np.isfinite(q):
            return False
        try:
            self._q(q)
        except ValueError:
            return False
        return True

    def law_is_numerical(self):
        """True when the family's law is computed numerically (quadrature), not in closed form."""
        return False

    def _quantile_in_q(self, x, p, v, upper):
        """The ``q`` where the randomized PIT of ``x`` equals ``p`` (see the class docstring), or ``None``."""
        return None

    def _quantiles_in_q(self, x, p, v_top, v_bottom):
        """Both ends' roots, ``(_quantile_in_q(x, p, v_top, False), _quantile_in_q(x, p, v_bottom, True))``, or
        ``None`` without a closed form (see the class docstring).  A family may compute the two at once."""
        top = self._quantile_in_q(x, p, v_top, False)
        if top is None:
            return None
        return top, self._quantile_in_q(x, p, v_bottom, True)

    # --- the public methods: validate once, call the kernel ------------------------------------
    def at(self, q):
        """The law of the release ``M(q)`` at one true value, shaped like a frozen ``scipy.stats`` law.

        Returns
        -------
        dpbook.Law
        """
        return Law(self, q)

    def bias(self, q):
        """``E[M(q)] - q``."""
        return _float(self._bias(self._q(q)))

    def mean(self, q):
        """``E[M(q)]``."""
        return _float(self._mean(self._q(q)))

    def variance(self, q):
        """``Var[M(q)]``."""
        return _float(self._variance(self._q(q)))

    def mse(self, q):
        """``E[(M(q) - q)^2] = variance + bias^2``."""
        return _float(self._mse(self._q(q)))

    def cdf(self, x, q):
        """``P(M(q) <= x)``, point masses included."""
        return _float(self._cdf(check.real_array("x", x), self._q(q)))

    def sf(self, x, q):
        """``P(M(q) > x)``."""
        return _float(self._sf(check.real_array("x", x), self._q(q)))

    def logcdf(self, x, q):
        """``log P(M(q) <= x)``."""
        return _float(self._logcdf(check.real_array("x", x), self._q(q)))

    def logsf(self, x, q):
        """``log P(M(q) > x)``."""
        return _float(self._logsf(check.real_array("x", x), self._q(q)))

    def logpdf(self, x, q):
        """Log-density of the absolutely continuous part of the law of ``M(q)`` at ``x`` (``-inf`` where it
        vanishes)."""
        return _float(self._logpdf(check.real_array("x", x), self._q(q)))

    def pdf(self, x, q):
        """Density of the absolutely continuous part of the law of ``M(q)`` (point masses excluded); ``inf`` where
        it exceeds the largest double (a law narrower than ``1e-308``: :meth:`logpdf` keeps it)."""
        logpdf = self._logpdf(check.real_array("x", x), self._q(q))
        with np.errstate(over="ignore"):
            return _float(np.exp(logpdf))

    def atoms(self, q):
        """Point masses of the law of ``M(q)``: a list of ``(location, probability)`` pairs."""
        return self._atoms(self._q(q))

    def pmf(self, x, q):
        """``P(M(q) = x)``: the point mass at ``x``, 0 away from the atoms."""
        return _float(self._pmf(check.real_array("x", x), self._q(q)))

    def logpmf(self, x, q):
        """``log P(M(q) = x)`` (``-inf`` away from the atoms)."""
        return _float(self._logpmf(check.real_array("x", x), self._q(q)))

    def ppf(self, p, q):
        """The quantile function ``inf{x : cdf(x, q) >= p}`` at ``p`` in ``[0, 1]`` (``support[0]`` at ``p = 0``)."""
        return _float(self._ppf(check.probability_array("p", p), self._q(q)))

    def isf(self, p, q):
        """The inverse survival function ``inf{x : sf(x, q) <= p}`` (``= ppf(1 - p, q)``), accurate for small ``p``."""
        return _float(self._isf(check.probability_array("p", p), self._q(q)))

    def sample(self, q, size=None, *, rng=None):
        """Draw releases ``M(q)``.

        The output has shape ``size`` when given (``q`` is broadcast to it), else the shape of ``q``.
        ``rng`` is an int seed, a ``numpy.random.Generator`` or ``None`` (a fresh generator).  A
        ``size`` whose draws would not fit in memory is refused before anything is allocated.  An
        integer-valued family returns ``int64`` draws where they fit.
        """
        q = self._q(q)
        size = check.size(size)
        rng = check.generator(rng)
        shape = (
            np.shape(q)
            if size is None
            else ((size,) if isinstance(size, int) else size)
        )
        out = self._sample(np.broadcast_to(q, shape), shape, rng)
        if (
            self.integer_valued
        ):  # the family chooses the dtype (int64 where every draw fits)
            out = np.asarray(out)
            return out if out.ndim else out[()]
        return _float(out)

    def __repr__(self):
        params = ", ".join(
            f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_")
        )
        return f"{type(self).__name__}({params})"


class BiasCertificate(NamedTuple):
    """A certified worst-case bias ``B = sup |bias(q)|``: the one result type of every such computation.

    ``lower <= B <= upper`` over the true values ``q_range`` (and over all larger ones too when
    ``tail_exact``).  Made by :meth:`dpbook.PostProcessed.certify_max_abs_bias` (a certified grid),
    :func:`dpbook.verify_bias` (a step map: closed forms on a grid, exact beyond its last edge) and
    :func:`dpbook.verify_count_bias` (a count map: exact sums, nothing left unchecked).

    Attributes
    ----------
    value : float
        The largest ``|bias|`` found, at ``argmax`` (``inf``: approached as ``q → ∞``); ``= lower``.
    lower, upper : float
        A rigorous bracket of ``B`` (``upper == lower`` when the computation is exact).
    argmax : float
    q_range : (float, float)
        The true values checked directly.
    tail_exact : bool
        Whether the bracket also holds beyond ``q_range[1]`` (a tail with a closed form).
    step : float
        The grid step of the search (``1.0`` for counts, every integer checked).
    biases : array or None
        The exact biases at the counts ``0, 1, ..., T`` (count maps only).
    """

    value: float
    lower: float
    upper: float
    argmax: float
    q_range: tuple
    tail_exact: bool
    step: float = math.nan
    biases: object = None

    @property
    def exact(self):
        """Whether ``B`` is known exactly over every true value ``q >= q_range[0]``."""
        return self.lower == self.upper and self.tail_exact

    @property
    def q_max(self):
        """The end of the range checked directly, ``q_range[1]``."""
        return self.q_range[1]


class IntervalMechanism(Mechanism):
    """A Laplace-based family on ``[lower, upper]``: BIT and Truncated share these parameters."""

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


def interval_family(name, family):
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
            raise ValueError(
                f"{name}(scale, lower=..., upper=...) must return a dpbook.Mechanism, got {mech!r}"
            )
        return mech

    return make
