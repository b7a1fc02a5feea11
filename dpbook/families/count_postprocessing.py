"""Post-processings of the discrete Laplace (geometric) mechanism on the integers: :class:`CountPostProcessed`.

A count release ``phi(q + Z)`` with ``Z`` discrete Laplace and ``phi`` given on a window of integers;
the family Chapter 21's least-bias programs search over."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _float
from .._kernels.discrete_laplace import _dl_split, _dl_tail
from .._kernels.exact_sampling import discrete_laplace_noise
from .._kernels.inversion import _count_map_root
from ..families.discrete import DiscreteLaplace
from ..mechanism import Mechanism

__all__ = ["CountPostProcessed"]


# --- counts: the discrete analogue (Chapter 21) -----------------------------------------------
#
# The release is Y_q = q + K with K discrete Laplace at scale b (P(K = k) ∝ α^|k|, α = e^{-1/b}),
# the true count q ∈ {0, 1, 2, …}, and φ: ℤ → [0, ∞).  Two facts make the program exact:
#
# * below 0, only Σ_{k<0} φ(k) α^{-k} matters for q >= 0 (there P(K = k - q) = α^{-k} P(K = -q)), so
#   φ = 0 on the negatives loses nothing (the mass moves to φ(0));
# * beyond the window, if φ(k) = k - d for k >= T, the bias for q >= T is exactly
#   -d + α^{q-T} (β(T) + d) (every k < T has P(K = k - q) = α^{q-T} P(K = k - T)), monotone in q.
#
# So the largest |bias| over ALL q >= 0 of such a map is max(max_{q<=T} |β(q)|, |d|): a finite
# linear program with no truncation error at all.


def _dl_pmf(k, scale):
    """``P(K = k) = tanh(1/(2b)) e^{-|k|/b}``, from :class:`dpbook.DiscreteLaplace`."""
    return np.asarray(DiscreteLaplace(scale).pmf(k, 0), dtype=float)


def _counts(name, value):
    q = check.finite_array(name, value)
    if np.any(q < 0) or np.any(q != np.round(q)):
        raise ValueError(f"{name} must be integer counts >= 0, got {value!r}")
    return q


class CountPostProcessed(Mechanism):
    """``φ(q + K)``: a nonnegative post-processing of the discrete Laplace release of a count.

    ``φ(k) = 0`` for ``k < 0``, ``φ(k) = values[k]`` for ``0 <= k < T = len(values)`` and
    ``φ(k) = k - shift`` for ``k >= T`` (the release itself, shifted).  With ``integer=True`` the
    output is an integer: ``φ(k)`` is released as ``⌊φ(k)⌋ + 1`` with probability equal to the
    fractional part of ``φ(k)``, else ``⌊φ(k)⌋`` (the mean, hence the bias, is unchanged; the MSE
    grows by the rounding variance).  Being a post-processing of the discrete Laplace mechanism, it
    is ε-DP for counts with ``ε = 1/b`` (sensitivity 1).  This is the class Chapter 21 searches.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    values : array_like
        ``T >= 1`` values ``>= 0``.
    shift : float
        ``d <= T`` (so that the tail ``k - d`` is ``>= 0``).
    integer : bool, optional
        Release integers by randomized rounding.

    The law of the release is purely atomic (the values ``φ(k)``, randomized-rounded with ``integer``);
    its cdf, point masses and moments are exact (finite sums over the window and geometric tails).
    For the auditor it describes its discrete Laplace base with ``exact=False``: the audited ε is an
    upper bound by the post-processing property.

    Examples
    --------
    >>> from dpbook import CountPostProcessed, DiscreteBIT
    >>> rule = CountPostProcessed(1.0, values=[0.0], shift=0.0)   # clamping at 0
    >>> round(float(rule.bias(0)), 12)                            # α/(1 - α^2) at b = 1
    0.42545906412
    >>> abs(rule.cdf(0.0, 2) - DiscreteBIT(1.0, lower=0).cdf(0, 2)) < 1e-15   # the same law as clamping
    True
    """

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def stochastic_order(self):
        """Stochastically increasing exactly when ``φ`` is nondecreasing (a nondecreasing map of the discrete
        Laplace location family, which has a monotone likelihood ratio): ``0 <= values[0] <= ... <= values[-1]
        <= T - shift``."""
        v = self.values
        ok = bool(np.all(np.diff(v) >= 0) and v[-1] <= self.window - self.shift)
        why = "φ is nondecreasing" if ok else "φ decreases somewhere"
        return (
            ok,
            f"{why}; a nondecreasing map of the discrete Laplace location family keeps its order",
        )

    def __init__(self, scale, values, shift, *, integer=False):
        self.scale = check.positive("scale", scale)
        v = check.finite_array("values", values).ravel()
        if v.size < 1 or np.any(v < 0):
            raise ValueError(
                f"values must be a non-empty sequence of numbers >= 0, got {values!r}"
            )
        d = check.finite("shift", shift)
        if d > v.size:
            raise ValueError(
                f"shift must be <= len(values) = {v.size} (so that phi >= 0), got {shift!r}"
            )
        if not isinstance(integer, (bool, np.bool_)):
            raise ValueError(f"integer must be True or False, got {integer!r}")
        self.values, self.shift, self.integer = v, d, bool(integer)

    @property
    def integer_valued(self):
        """With ``integer=True`` the releases are integers (the true values always are)."""
        return self.integer

    @property
    def window(self):
        """``T = len(values)``: from ``T`` on, ``φ(k) = k - shift``."""
        return self.values.size

    def phi(self, k):
        """``φ(k)`` (with ``integer=True``, the mean of the randomized output), vectorized over integers ``k``."""
        k = check.finite_array("k", k)
        if np.any(k != np.round(k)):
            raise ValueError(f"k must be integers, got {k!r}")
        T = self.window
        inside = self.values[np.clip(k, 0, T - 1).astype(np.int64)]
        return _float(np.where(k < 0, 0.0, np.where(k >= T, k - self.shift, inside)))

    def apply(self, y, *, rng=None):
        """``φ`` applied to releases ``y`` (integers), with the randomized rounding if ``integer``."""
        out = np.asarray(self.phi(y), dtype=float)
        if not self.integer:
            return _float(out)
        gen = check.generator(rng)
        low = np.floor(out)
        up = gen.random(size=out.shape) < out - low
        return (low + up).astype(np.int64) if out.ndim else int(low + up)

    def _window_masses(self, q):
        return _dl_pmf(np.arange(self.window)[None, :] - q.ravel()[:, None], self.scale)

    def _q(self, q):
        return _counts("q", q)

    def _mean(self, q):
        """``E φ(q + K) = Σ_{k<T} φ(k) P(K = k - q) + E[K; K >= T - q] + (q - d) P(K >= T - q)``."""
        p_ge, _, m1, _ = _dl_tail(self.window - q, self.scale)
        inside = (self._window_masses(q) @ self.values).reshape(q.shape)
        return inside + m1 + (q - self.shift) * p_ge

    def _bias(self, q):
        """``E φ(q + K) - q``, exact (finite sums and geometric tails), computed without cancelling ``q``."""
        p_ge, p_lt, m1, _ = _dl_tail(self.window - q, self.scale)
        inside = (self._window_masses(q) @ self.values).reshape(q.shape)
        return inside + m1 - self.shift * p_ge - q * p_lt

    def _mse(self, q):
        """``E (φ(q + K) - q)^2``, exact; with ``integer=True`` it includes the rounding variance."""
        b, d = self.scale, self.shift
        p_ge, _, m1, m2 = _dl_tail(self.window - q, b)
        masses = self._window_masses(q)
        below, _, _, _ = _dl_tail(q + 1, b)  # P(q + K < 0): φ = 0 there, error -q
        err = np.sum(
            masses * (self.values[None, :] - q.ravel()[:, None]) ** 2, axis=1
        ).reshape(q.shape)
        out = err + below * q * q + m2 - 2.0 * d * m1 + d * d * p_ge
        if self.integer:
            f = self.values - np.floor(self.values)
            g = (-d) - math.floor(-d)
            out = (
                out + (masses @ (f * (1.0 - f))).reshape(q.shape) + g * (1.0 - g) * p_ge
            )
        return out

    def _variance(self, q):
        """``mse - bias^2`` (both exact; the variance is at least the rounding noise, never cancelled to below 0)."""
        return np.maximum(
            np.asarray(self._mse(q)) - np.asarray(self._bias(q)) ** 2, 0.0
        )

    # --- the law: atoms at the values of φ, exact ------------------------------------------------
    def _noise_le(self, m, q):
        """``P(q + K <= m)`` for integer arrays ``m`` (``±inf`` allowed)."""
        return _dl_split(m + 1 - q, self.scale)[1]

    def _cdf(self, x, q):
        """``P(M(q) <= x)``: the window's values at most ``x``, the negatives (released as 0) and the part of
        the tail ``k - d`` at most ``x``; with ``integer``, each value's two rounded outcomes."""
        x, q = np.broadcast_arrays(np.asarray(x, dtype=float), q)
        T, d = self.window, self.shift
        masses = self._window_masses(q).reshape(q.shape + (T,))
        below = self._noise_le(np.full(q.shape, -1.0), q)
        if not self.integer:
            window = np.sum(masses * (self.values <= x[..., None]), axis=-1)
            with np.errstate(invalid="ignore"):
                m = np.floor(x + d)
            tail = np.where(
                m >= T,
                self._noise_le(m, q) - self._noise_le(np.full(q.shape, T - 1.0), q),
                0.0,
            )
            return np.clip(below * (x >= 0) + window + tail, 0.0, 1.0)
        xf = np.floor(x)
        lo_v = np.floor(self.values)
        frac = self.values - lo_v
        window = np.sum(
            masses
            * ((xf[..., None] >= lo_v + 1) + (1.0 - frac) * (xf[..., None] == lo_v)),
            axis=-1,
        )
        big_d, g = -math.floor(-d), (-d) - math.floor(-d)
        with np.errstate(invalid="ignore"):
            top = xf + big_d
        full = np.where(
            top - 1 >= T,
            self._noise_le(top - 1, q) - self._noise_le(np.full(q.shape, T - 1.0), q),
            0.0,
        )
        part = np.where(
            np.isfinite(top) & (top >= T), (1.0 - g) * self._point(top, q), 0.0
        )
        return np.clip(below * (xf >= 0) + window + full + part, 0.0, 1.0)

    def _point(self, k, q):
        """``P(q + K = k)`` for integer arrays ``k``."""
        return np.asarray(
            DiscreteLaplace(self.scale).pmf(np.where(np.isfinite(k), k - q, 0.0), 0),
            dtype=float,
        ) * np.isfinite(k)

    def _pmf(self, x, q):
        """``P(M(q) = x)``: the masses of every ``k`` whose (rounded) value is ``x``."""
        x, q = np.broadcast_arrays(np.asarray(x, dtype=float), q)
        T, d = self.window, self.shift
        masses = self._window_masses(q).reshape(q.shape + (T,))
        below = self._noise_le(np.full(q.shape, -1.0), q)
        if not self.integer:
            window = np.sum(masses * (self.values == x[..., None]), axis=-1)
            k = x + d
            tail = np.where((k == np.floor(k)) & (k >= T), self._point(k, q), 0.0)
            return below * (x == 0) + window + tail
        whole = x == np.floor(x)
        lo_v = np.floor(self.values)
        frac = self.values - lo_v
        window = np.sum(
            masses
            * (
                (1.0 - frac) * (x[..., None] == lo_v)
                + frac * (x[..., None] == lo_v + 1)
            ),
            axis=-1,
        )
        big_d, g = -math.floor(-d), (-d) - math.floor(-d)
        k0, k1 = x + big_d, x + big_d - 1
        tail = np.where(k0 >= T, (1.0 - g) * self._point(k0, q), 0.0) + np.where(
            k1 >= T, g * self._point(k1, q), 0.0
        )
        return np.where(whole, below * (x == 0) + window + tail, 0.0)

    def _logpdf(self, x, q):
        """The law has no continuous part: ``-inf`` everywhere."""
        return np.full(np.broadcast(x, q).shape, -np.inf)

    def _law_expect(self, func, q, lo, hi):
        """``E[func(M(q)); lo <= M(q) <= hi]``: the sum over ``k = q + K`` within 60 scales of ``q`` (the
        mass beyond is below ``e^{-60}``), each ``k`` with its one or two released values."""
        reach = math.ceil(60.0 * self.scale) + 2
        k = np.arange(max(-1.0, q - reach), q + reach + 1.0)
        p = np.asarray(DiscreteLaplace(self.scale).pmf(k - q, 0), dtype=float)
        p[0] = float(self._noise_le(np.array(k[0]), q)) if k[0] == -1.0 else p[0]
        v = np.asarray(self.phi(np.maximum(k, -1.0)), dtype=float)
        if self.integer:
            low = np.floor(v)
            outs, weights = (low, low + 1.0), (p * (1.0 - (v - low)), p * (v - low))
        else:
            outs, weights = (v,), (p,)
        total = []
        for out, w in zip(outs, weights):
            keep = (w > 0) & (out >= lo) & (out <= hi)
            total.extend((np.asarray(func(out[keep]), dtype=float) * w[keep]).tolist())
        return math.fsum(total)

    def _k_star(self, y):
        """``k*(y)``, the largest ``k`` with ``φ(k) <= y`` for integer releases ``y`` (``-inf`` below 0), for a
        nondecreasing integer ``φ``: ``y + d`` on the tail (``y + d >= T``), else the window's last value at
        most ``y`` (``-1``: only the negatives, where ``φ = 0``)."""
        inside = np.searchsorted(self.values, y, side="right") - 1.0
        k = np.where(y + self.shift >= self.window, y + self.shift, inside)
        return np.where(y < 0.0, -np.inf, k)

    def _quantile_in_q(self, x, p, v, upper):
        """With ``integer=True`` and a nondecreasing integer ``φ`` (integer values and shift), ``P_q(M <= y) =
        P(K <= k*(y) - q)``: the roots of the transform in ``q`` and their proved width
        (:func:`dpbook._kernels.inversion._count_map_root`); ``None`` otherwise (the ends are searched)."""
        v_ = self.values
        if not (
            self.integer
            and self.stochastic_order()[0]
            and np.all(v_ == np.floor(v_))
            and self.shift == math.floor(self.shift)
        ):
            return None
        x = np.asarray(x, dtype=float)
        return _count_map_root(
            self._k_star(x - 1.0),
            self._k_star(x),
            p,
            v,
            upper,
            1.0 / self.scale,
            self.window + 4,
        )

    def _sample(self, q, shape, rng):
        """Draws of ``φ(q + K)``: exact discrete Laplace noise (:func:`dpbook.discrete_laplace_noise`), then
        :meth:`apply`."""
        y = q + np.asarray(
            discrete_laplace_noise(self.scale, shape, rng=rng), dtype=float
        )
        return self.apply(y, rng=rng)

    def privacy_description(self):
        """For the auditor: the discrete Laplace base ``q + K`` with ``exact=False`` (a post-processing's loss is
        at most its base's; the law of ``φ(q + K)`` itself is not described)."""
        return dataclasses.replace(
            DiscreteLaplace(self.scale).privacy_description(), exact=False
        )

    def __repr__(self):
        return (
            f"CountPostProcessed(scale={self.scale!r}, values=<{self.window} values>, "
            f"shift={self.shift!r}, integer={self.integer!r})"
        )
