"""Step post-processings of the Laplace mechanism: :class:`StepPostProcessed`, a map constant on cells.

The family of post-processings over which Chapter 14's linear programs search; its law is a sum of
atoms whose masses are Laplace cell masses (:func:`laplace_cell_masses`)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _compact, _float
from .._kernels.laplace import (
    _laplace_cdf,
    _laplace_logpdf,
    _laplace_sf,
    _offsets_in_place,
    _piece_log_mass,
)
from .._kernels.sampling import _uniform_blocks
from ..audit.description import corner_pairs, laplace_description
from ..mechanism import Mechanism

__all__ = ["StepPostProcessed", "laplace_cell_masses"]


def laplace_cell_masses(q, edges, scale):
    """``P(e_{k-1} < q + L_b <= e_k)`` for the cells ``(-inf, e_0], (e_0, e_1], …, (e_{n-1}, e_n]``.

    Each mass is a difference of Laplace distribution-function values left of ``q`` and of
    survival-function values right of it, so that masses far in either tail keep full
    relative precision.

    Parameters
    ----------
    q : array_like
        True values (any shape).
    edges : array_like
        Increasing finite cut points ``e_0 < … < e_n``.
    scale : float
        ``b > 0``.

    Returns
    -------
    ndarray
        Shape ``q.shape + (n + 1,)``, one mass per cell.
    """
    q = np.asarray(q, dtype=float)[..., None]
    lo = np.concatenate([[-np.inf], edges[:-1]])
    hi = np.asarray(edges, dtype=float)
    right = _laplace_sf(lo, q, scale) - _laplace_sf(hi, q, scale)
    left = _laplace_cdf(hi, q, scale) - _laplace_cdf(lo, q, scale)
    middle = 1.0 - _laplace_cdf(lo, q, scale) - _laplace_sf(hi, q, scale)
    return np.where(lo >= q, right, np.where(hi <= q, left, middle))


def _tail_moments(q, s, scale, units=False):
    """``P``, ``E[L; L > t]``, ``E[L^2; L > t]`` of ``L = L_b`` above ``t = s - q`` (the last two over ``b``,
    ``b²`` if ``units``)."""
    t = s - np.asarray(q, dtype=float)
    a = np.abs(t)
    with np.errstate(over="ignore"):
        half = 0.5 * np.exp(-a / scale)
    p = np.where(t >= 0, half, 1.0 - half)
    root = np.sqrt(half)
    with np.errstate(
        over="ignore"
    ):  # in units of b^2, scaled last: a far tail gives 0, not inf * 0 or inf - inf
        z = np.minimum(a / scale, 1e300)  # beyond, the tail mass is 0 anyway
        inner = (z * root) ** 2 + 2 * (z * half) + 2 * half
        m2 = np.where(t >= 0, inner, 2 - inner)
        if units:
            return p, (z + 1) * half, m2
        m1 = (a + scale) * half
        m2 = scale * (scale * m2)
    return p, m1, m2


def _step_args(q, edges, values, shift, scale):
    b = check.positive("scale", scale)
    q = check.finite_array("q", q)
    e = check.finite_array("edges", edges).ravel()
    v = check.finite_array("values", values).ravel()
    if e.size < 1 or np.any(np.diff(e) <= 0):
        raise ValueError(
            f"edges must be a non-empty increasing sequence, got {edges!r}"
        )
    if v.size != e.size:
        raise ValueError(
            f"values must have len(edges) = {e.size} entries, got {v.size}"
        )
    if np.any(v < 0):
        raise ValueError(f"values must be >= 0, got min {v.min()!r}")
    d = check.finite("shift", shift)
    if d > e[-1]:
        raise ValueError(
            f"shift must be <= the last edge {e[-1]!r} (so that phi >= 0), got {shift!r}"
        )
    return q, e, v, d, b


#: up to this many edges a point's cell is counted by one comparison per edge, faster than a bisection
_FEW_EDGES = 8


def _step_map(x, edges, values, shift, out=None):
    """``φ(x)`` on a float array without NaN: ``values[k]`` on ``(e_{k-1}, e_k]``, ``x - shift`` beyond the
    last edge; into ``out`` when given (which may be ``x`` itself).

    The cell ``k`` (the number of edges below ``x``) is counted by comparisons with few edges and found by
    bisection with many; its value is looked up, and the tail chosen by a branchless select."""
    if edges.size > _FEW_EDGES:
        k = np.searchsorted(edges, x, side="left")
    else:
        k = np.zeros(x.shape, dtype=np.intp)
        for e in edges:
            k += x > e
    inside = np.take(values, k, mode="clip")  # k = n: the tail, selected below
    return np.where(x > edges[-1], np.subtract(x, shift, out=out), inside)


def _bias(q, e, v, d, b):
    s = e[-1]
    cells = laplace_cell_masses(q, e, b) @ v
    with np.errstate(over="ignore"):
        return (
            cells
            + (s - d) * _laplace_sf(s, q, b)
            + np.maximum(s - q, 0.0)
            + 0.5 * b * np.exp(-np.abs(q - s) / b)
            - s
        )


def _mse(q, e, v, d, b):
    p, m1, m2 = _tail_moments(q, e[-1], b)
    with np.errstate(
        over="ignore"
    ):  # an MSE beyond the doubles is inf; a cell of no mass adds 0, not inf * 0
        cells = np.sum(
            (np.sqrt(laplace_cell_masses(q, e, b)) * (v - q[..., None])) ** 2, axis=-1
        )
    with np.errstate(over="ignore", invalid="ignore"):
        return cells + np.nan_to_num(
            (np.sqrt(p) * d) ** 2 - 2 * d * m1 + m2, nan=np.inf, posinf=np.inf
        )


class StepPostProcessed(Mechanism):
    """``φ(q + L_b)`` with ``φ`` a nonnegative step function and a linear tail (McGlinchey–Mason §5.1, ``V_+``).

    ``φ = values[k]`` on ``(e_{k-1}, e_k]`` (``e_{-1} = -inf``), ``φ(x) = x - shift`` beyond ``e_n``.
    Being a post-processing of the Laplace mechanism it is ε-DP whenever ``b = Δ/ε``.  Bias and MSE
    are exact (``StepPostProcessed.bias``, ``StepPostProcessed.mse``); the law has an atom at each
    distinct value and
    the shifted Laplace density beyond ``e_n - shift``.  Its quantiles (``ppf``, ``isf``) have no closed
    form: they are :meth:`Mechanism.ppf`'s exact bisection on the cdf, which lands on the atoms exactly.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    edges, values, shift
        As in ``StepPostProcessed.bias``.

    Examples
    --------
    >>> ramp_like = StepPostProcessed(1.0, edges=[0.0], values=[0.0], shift=0.0)
    >>> round(ramp_like.bias(0.0), 12)
    0.5
    """

    def stochastic_order(self):
        v, e = self.values, self.edges
        if np.all(np.diff(v) >= 0) and v[-1] <= e[-1] - self.shift:
            return (
                True,
                "a nondecreasing step map (with its linear tail) of the Laplace location family",
            )
        return (
            False,
            "its step map is not nondecreasing (values decrease, or the tail starts below the last value)",
        )

    def score_bound(self):
        return 1.0, self.scale

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, scale, edges, values, shift):
        _, e, v, d, b = _step_args(0.0, edges, values, shift, scale)
        self.scale, self.edges, self.values, self.shift = b, e, v, d

    def phi(self, x):
        """``φ(x)``, vectorized."""
        return _float(
            _step_map(check.real_array("x", x), self.edges, self.values, self.shift)
        )

    def _bias(self, q):
        return _bias(q, self.edges, self.values, self.shift, self.scale)

    def _mse(self, q):
        return _mse(q, self.edges, self.values, self.shift, self.scale)

    def _mean(self, q):
        """``E φ(Y_q) = Σ_k values[k] m_k(q) + (s - shift) P(Y_q > s) + E(Y_q - s)^+`` directly, never as
        ``q + bias`` (which cancels to 0 far below the first edge, where the mean is ``values[0]``)."""
        e, v, d, b = self.edges, self.values, self.shift, self.scale
        s = e[-1]
        with np.errstate(over="ignore"):
            excess = np.maximum(q - s, 0.0) + 0.5 * b * np.exp(-np.abs(q - s) / b)
            return (
                laplace_cell_masses(q, e, b) @ v
                + (s - d) * _laplace_sf(s, q, b)
                + excess
            )

    def _variance(self, q):
        """``Σ_k m_k (values[k] - μ)^2 + E[(L_b - t)^2; L_b > s - q]`` with ``t = μ + shift - q``: about the mean,
        from the partial moments of the tail, not ``mse - bias^2`` (which cancels and overflows far out)."""
        mu = np.asarray(self.mean(q))
        b = self.scale
        p, m1, m2 = _tail_moments(q, self.edges[-1], b, units=True)
        with np.errstate(over="ignore", invalid="ignore"):
            # in units u = the largest of b, |t| and the values' distances to the mean, scaled last: no
            # term overflows unless the variance does, and none underflows while it is representable
            t = mu - (q - self.shift)
            gaps = self.values - mu[..., None]
            u = np.maximum(np.maximum(b, np.abs(t)), np.max(np.abs(gaps), axis=-1))
            r = b / u
            cells = np.sum(
                (np.sqrt(laplace_cell_masses(q, self.edges, b)) * (gaps / u[..., None]))
                ** 2,
                axis=-1,
            )
            tail = (m2 * r) * r - 2 * (t / u) * (m1 * r) + (t / u * np.sqrt(p)) ** 2
            return u * (u * np.maximum(cells + np.nan_to_num(tail, nan=0.0), 0.0))

    def _cdf(self, x, q):
        x, q = np.broadcast_arrays(x, q)
        masses = laplace_cell_masses(q, self.edges, self.scale)
        steps = np.sum(masses * (self.values <= x[..., None]), axis=-1)
        s = self.edges[-1]
        top = np.maximum(x + self.shift, s)
        line = np.where(
            q >= s,
            _laplace_cdf(top, q, self.scale) - _laplace_cdf(s, q, self.scale),
            _laplace_sf(s, q, self.scale) - _laplace_sf(top, q, self.scale),
        )
        return np.clip(steps + line, 0.0, 1.0)

    def _log_tail(self, x, q, upper):
        """``log P(M <= x)`` (``log P(M > x)`` with ``upper``) in log space: the log-masses of the cells whose
        value is at most (above) ``x`` and of the linear tail's part below (above) ``x``, summed by
        ``logsumexp``, so a tail far below the doubles' smallest number stays finite."""
        x, q = np.broadcast_arrays(x, q)
        lo = np.concatenate([[-np.inf], self.edges[:-1]])
        cells = _piece_log_mass(q[..., None], self.scale, lo, self.edges)
        taken = (self.values > x[..., None]) if upper else (self.values <= x[..., None])
        s = float(self.edges[-1])
        cut = np.maximum(x + self.shift, s)
        line = (
            np.where(
                cut < np.inf,
                _piece_log_mass(q, self.scale, np.where(cut < np.inf, cut, s), np.inf),
                -np.inf,
            )
            if upper
            else np.where(
                cut > s,
                _piece_log_mass(q, self.scale, s, np.where(cut > s, cut, np.inf)),
                -np.inf,
            )
        )
        parts = np.concatenate(
            [np.where(taken, cells, -np.inf), line[..., None]], axis=-1
        )
        return np.minimum(special.logsumexp(parts, axis=-1), 0.0)

    def _logcdf(self, x, q):
        """``log P(M(q) <= x)``, in log space (finite wherever the probability is positive)."""
        return self._log_tail(x, q, upper=False)

    def _logsf(self, x, q):
        """``log P(M(q) > x)``, in log space (finite wherever the probability is positive)."""
        return self._log_tail(x, q, upper=True)

    def _sf(self, x, q):
        """``P(M(q) > x)`` from its log (keeps its digits where ``1 - cdf`` would cancel)."""
        return np.exp(self._log_tail(x, q, upper=True))

    def _logpdf(self, x, q):
        y = x + self.shift
        return np.where(y > self.edges[-1], _laplace_logpdf(y, q, self.scale), -np.inf)

    def _kinks(self, q):
        return [self.edges[-1] - self.shift, q - self.shift]

    def _atoms(self, q):
        """One point mass per distinct value of ``φ`` on the cells: the Laplace masses of its cells."""
        masses = laplace_cell_masses(q, self.edges, self.scale)
        out = []
        for value in np.unique(self.values):
            out.append(
                (
                    float(value),
                    _float(np.sum(masses[..., self.values == value], axis=-1)),
                )
            )
        return out

    def _sample(self, q, shape, rng):
        """``φ(q + L_b)`` by inverse cdf, one uniform ``u`` per draw, block by block.

        For one true value at or below the last edge ``e_n`` the cell of a draw is read off ``u`` itself (its
        place among the Laplace cdf at the edges) and only the tail beyond ``e_n``, in the upper branch of the
        law, needs ``q + L_b = q - b log(2 - 2u)``; otherwise ``q + L_b`` is drawn (one logarithm per draw, as
        every Laplace sampler of the library) and ``φ`` applied to it."""
        b, e, v, d = self.scale, self.edges, self.values, self.shift
        q = _compact(q)
        # the tail's draws are at most |lead| + 37 b (2 - 2u >= 2^-52) from 0: where that is finite, every draw is
        # picked by arithmetic (0 or 1 times the tail, plus the atom or 0: exact), not by a mask (6 ns a draw)
        if q.size == 1 and q.item() <= e[-1]:
            cuts, lead = _laplace_cdf(e, q.item(), b), q.item() - d
            blend = math.isfinite(abs(lead) + 37.0 * b)
            atom, gain = np.append(v, 0.0), np.append(np.zeros(v.size), 1.0)

            def draw(u, q):
                k = (u > cuts[0]).astype(np.intp)
                for cut in cuts[1:]:
                    k += u > cut
                x = u  # the tail's draws, computed in the uniforms' own block
                x *= -2.0
                x += 2.0  # 2 - 2u in (0, 2], exactly
                np.log(x, out=x)
                x *= -b
                x += lead
                if blend:
                    x *= gain.take(k, mode="clip")
                    x += atom.take(k, mode="clip")
                else:
                    np.copyto(x, atom.take(k, mode="clip"), where=k != e.size)
                return x

        else:

            def draw(t, q):
                t *= 2.0
                t -= 1.0
                x = _offsets_in_place(t, b)
                x += q
                return _step_map(x, e, v, d, out=t)

        return _uniform_blocks(rng, shape, q, draw)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace base ``q + L_b`` with ``exact=False`` (an upper bound, by post-processing)."""
        return laplace_description(self.scale, worst_pairs=corner_pairs(), exact=False)
