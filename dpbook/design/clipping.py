"""Clipping, exactly: the bias and MSE of a clipped mean (or sum) released by a bounded mechanism.

A column of ``n`` records ``X_i`` drawn from a law with cdf ``F`` and survival function ``S = 1 - F``
is clipped to ``[l, u]`` and its mean released with noise calibrated to the mean's sensitivity
``(u - l)/n`` (:func:`dpbook.mean_sensitivity`).  As an estimate of ``E X`` the release errs by

* the **clipping bias** ``E clip(X, l, u) - E X = ∫_{-∞}^{l} F(x) dx - ∫_{u}^{∞} S(x) dx``
  (:func:`clipping_bias`; Amin et al. (2019) frame the choice of ``[l, u]`` as this bias against the
  noise);
* the **sampling variance** ``Var clip(X, l, u) / n`` (:func:`clipped_moments`);
* the **noise**: ``2 b²`` with ``b = Δ/ε`` for the Laplace mechanism.

:func:`clipped_mean_mse` adds them up; :func:`optimal_clip` finds the clip that minimizes the sum.

Every moment is an integral of ``S`` or ``F`` over one side of the law's median ``m``: with
``c = clip(m, l, u)``,

* ``E clip(X, l, u) - c = ∫_c^u S(x) dx - ∫_l^c F(x) dx``,
* ``E (clip(X, l, u) - c)² = ∫_c^u 2(x - c) S(x) dx + ∫_l^c 2(c - x) F(x) dx``

(``c`` is within one standard deviation of the clipped mean, so the variance loses no digits).  For a
continuous law the integrals are computed by an adaptive Gauss–Kronrod (7, 15) rule, vectorized over
pieces that end at the law's quantiles ``m``, ``S^{-1}(0.5·10^{-k})``, ``F^{-1}(0.5·10^{-k})``
(``k = 1 … 300``: on each piece the integrand falls by at most a factor 10) and at the support's ends,
the last piece to ``±∞`` by the map ``x = t ± w (1 - s)/s``; pieces are halved until the sum of the
Kronrod–Gauss differences (a conservative error estimate) is below ``1e-12`` of the result, and a
``ValueError`` naming the law is raised when it cannot be.  For a discrete law on a lattice
``m + ℤ`` the integrands are constant on each cell ``[k, k + 1)``, so the integrals are finite sums
of closed forms, summed outward in blocks; a sum that reaches no end of the support stops when the
rest is below ``1e-13`` of the total by the geometric bound ``S(K)/(1 - r)`` with
``r = S(K)/S(K - 1)``, valid when the tail's ratios do not increase (a log-concave tail: Poisson,
binomial, geometric, negative binomial); the ratios of the last block are checked to be
nonincreasing before it is used.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .._kernels import validation as check
from ..families.clamping import BIT
from ..families.laplace import Laplace
from ..families.truncation import Truncated
from .calibration import laplace_scale, truncated_scale
from .sensitivity import mean_sensitivity

__all__ = [
    "ClippedMeanMSE",
    "OptimalClip",
    "clipping_bias",
    "clipped_moments",
    "clipped_mean_mse",
    "optimal_clip",
]

#: the relative accuracy every integral is computed to (a conservative error estimate)
RTOL = 1e-12

# Gauss–Kronrod (7, 15) nodes on [-1, 1] (QUADPACK's qk15), the Kronrod and the Gauss weights
_XK = np.array(
    [
        0.991455371120812639206854697526329,
        0.949107912342758524526189684047851,
        0.864864423359769072789712788640926,
        0.741531185599394439863864773280788,
        0.586087235467691130294144845693013,
        0.405845151377397166906606412076961,
        0.207784955007898467600689403773245,
        0.0,
    ]
)
_WK = np.array(
    [
        0.022935322010529224963732008058970,
        0.063092092629978553290700663189204,
        0.104790010322250183839876322541518,
        0.140653259715525918745189590510238,
        0.169004726639267902826583426598550,
        0.190350578064785409913256402421014,
        0.204432940075298892414161999234649,
        0.209482141084727828012999174891714,
    ]
)
_WG = np.array(
    [
        0.129484966168869693270611432679082,
        0.279705391489276667901467771423780,
        0.381830050505118944950369775488975,
        0.417959183673469387755102040816327,
    ]
)
_NODES = np.concatenate([-_XK[:-1], _XK[::-1]])  # 15 nodes, ascending
_KRONROD = np.concatenate([_WK[:-1], _WK[::-1]])
_GAUSS = np.zeros(15)
_GAUSS[[1, 3, 5, 7, 9, 11, 13]] = np.concatenate([_WG[:-1], _WG[::-1]])

_MAX_ROUNDS = 200
_MAX_PIECES = 200_000
_MAX_CELLS = 2**25
_FAMILIES = {Laplace: "Laplace", BIT: "BIT", Truncated: "Truncated"}


class _Law:
    """A frozen scipy law with what the integrals need: its median, support, quantile breakpoints."""

    def __init__(self, data):
        # a law with no shape parameters, e.g. scipy.stats.rv_histogram(...), is frozen as it is
        if isinstance(data, (stats.rv_continuous, stats.rv_discrete)):
            data = data() if not data.numargs else data
        frozen = isinstance(data, stats.distributions.rv_frozen)
        dist = data.dist if frozen else None
        if not isinstance(dist, (stats.rv_continuous, stats.rv_discrete)):
            raise ValueError(
                "data must be a frozen scipy.stats distribution, e.g. scipy.stats.lognorm(1.0), "
                f"got {data!r}"
            )
        self.data = data
        self.discrete = isinstance(dist, stats.rv_discrete)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.median = float(data.median())
            lo, hi = data.support()
            self.lo, self.hi = float(lo), float(hi)
            mean = float(data.mean())
        if not math.isfinite(self.median):
            raise ValueError(f"data: the median of {self.name} is not finite")
        self.mean = mean
        self._breaks = None

    @property
    def name(self):
        args = [repr(a) for a in self.data.args]
        args += [f"{k}={v!r}" for k, v in self.data.kwds.items()]
        return f"scipy.stats.{self.data.dist.name}({', '.join(args)})"

    def require_mean(self):
        if not math.isfinite(self.mean):
            raise ValueError(
                f"data: {self.name} has no finite mean E X (scipy gives {self.mean!r}), so "
                "the clipping bias E clip(X, l, u) - E X is undefined"
            )
        return self.mean

    def sf(self, x):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self.data.sf(x), dtype=float)

    def cdf(self, x):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self.data.cdf(x), dtype=float)

    def breaks(self):
        """Quantiles ``F^{-1}(0.5·10^{-k})`` (ascending, below the median) and ``S^{-1}(0.5·10^{-k})``."""
        if self._breaks is None:
            p = 0.5 * 10.0 ** -np.arange(1, 301, dtype=float)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                up = np.asarray(self.data.isf(p), dtype=float)
                low = np.asarray(self.data.ppf(p), dtype=float)
            up = up[np.isfinite(up) & (up > self.median)]
            low = low[np.isfinite(low) & (low < self.median)]
            self._breaks = (np.unique(low), np.unique(up))
        return self._breaks


#: the absolute rounding of a tail probability as scipy computes it (often ``1 - F``): a few units of
#: ``eps``; below it no quadrature can resolve an integral of the tail (next to a finite support end
#: the tail itself is that small)
_TAIL_ROUNDING = 64.0 * np.finfo(float).eps


def _gk(f, a, b, weight=None):
    """Kronrod sums and |Kronrod - Gauss| on pieces ``[a_i, b_i]`` (finite), shape ``(pieces, P)``.

    With ``weight`` (``x -> `` the integrand's factor in front of the tail probability, shape like
    ``f``'s), a piece's error at or below the rounding of the tail itself
    (``_TAIL_ROUNDING`` × its length × the largest weight on it) counts as none."""
    mid = a / 2 + b / 2
    half = b / 2 - a / 2
    x = mid[:, None] + half[:, None] * _NODES[None, :]
    y = f(x)  # (pieces, 15, P)
    value = half[:, None] * np.einsum("ijp,j->ip", y, _KRONROD)
    err = half[:, None] * np.abs(np.einsum("ijp,j->ip", y, _KRONROD - _GAUSS))
    if weight is not None:
        with np.errstate(
            over="ignore", invalid="ignore"
        ):  # inf: no floor beyond the doubles
            floor = (
                _TAIL_ROUNDING * 2.0 * half[:, None] * np.max(np.abs(weight(x)), axis=1)
            )
        err = np.where(err <= floor, 0.0, err)
    return value, err


def _adaptive(f, edges, law, atol, weight=None):
    """``∫ f`` (``P`` components) over consecutive pieces of ``edges`` (finite, ascending), each component
    to ``RTOL |∫ f| + atol`` by the sum of the pieces' Kronrod–Gauss differences (``weight``: see
    :func:`_gk`)."""
    a, b = edges[:-1], edges[1:]
    keep = b > a
    a, b = a[keep], b[keep]
    done, done_err = [], np.zeros_like(atol)
    for _ in range(_MAX_ROUNDS):
        if a.size == 0:
            break
        value, err = _gk(f, a, b, weight)
        total = _fsum(done, value)
        tol = RTOL * np.abs(total) + atol
        if np.all(done_err + err.sum(axis=0) <= tol):
            return total
        small = np.all(err <= 0.5 * tol / a.size, axis=1)
        done.append(value[small])
        done_err = done_err + err[small].sum(axis=0)
        a, b = a[~small], b[~small]
        mid = a / 2 + b / 2
        split = (mid > a) & (mid < b)
        if not split.all():  # pieces too short to halve: take them as they are
            value, err = _gk(f, a[~split], b[~split], weight)
            done.append(value)
            done_err = done_err + err.sum(axis=0)
            a, b, mid = a[split], b[split], mid[split]
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
        if a.size > _MAX_PIECES:
            break
    if a.size == 0:  # every piece accepted (else: out of rounds or pieces, unfinished)
        total = _fsum(done, np.zeros((0, atol.size)))
        if np.all(done_err <= np.maximum(RTOL * np.abs(total) + atol, 1e-300)):
            return total
    raise ValueError(
        f"data: the integrals of the tails of {law.name} do not reach a relative accuracy of "
        f"{RTOL:g} (a tail too heavy or too irregular for the quadrature)"
    )


def _fsum(done, value):
    parts = np.concatenate([*done, value]) if done else value
    return np.array([math.fsum(parts[:, p]) for p in range(parts.shape[1])])


def _masked(values, tail):
    """``values`` with 0 where the tail probability is 0 (so ``inf * 0`` never makes a NaN)."""
    with np.errstate(all="ignore"):
        out = np.where(tail > 0, values, 0.0)
    if np.isnan(out).any():
        raise ValueError("data: the law's cdf/sf returned NaN")
    return out


def _continuous_side(law, a, b, c, upper, powers):
    """``(∫_a^b T, ∫_a^b 2|x - c| T)`` with ``T = S`` (``upper``, ``a >= m``) or ``T = F`` (``b <= m``)."""
    low, up = law.breaks()
    tail = law.sf if upper else law.cdf
    inner = up if upper else low
    inner = inner[(inner > a) & (inner < b)]
    ends = [law.lo, law.hi, law.median]
    inner = np.unique(
        np.concatenate([inner, [e for e in ends if a < e < b and math.isfinite(e)]])
    )
    powers = np.array(powers, dtype=float)

    def weight(x):
        with np.errstate(all="ignore"):
            return (2.0 * np.abs(x - c))[..., None] ** powers

    def f(x):
        t = tail(x)[..., None]
        with np.errstate(all="ignore"):
            return _masked(weight(x) * t, t)

    finite = np.concatenate(
        [[a] if math.isfinite(a) else [], inner, [b] if math.isfinite(b) else []]
    )
    zero = np.zeros(powers.size)
    total = _adaptive(f, finite, law, zero, weight) if finite.size >= 2 else zero
    atol = RTOL * np.abs(total)
    unit = np.array([0.0, 1.0])
    if not math.isfinite(b):  # [t, inf): x = t + w (1 - s)/s
        t = finite[-1] if finite.size else law.median
        w = max(abs(t), 1.0)
        total = total + _adaptive(_mapped(f, t, w, 1.0), unit, law, atol)
    if not math.isfinite(a):  # (-inf, t]: x = t - w (1 - s)/s
        t = finite[0] if finite.size else law.median
        w = max(abs(t), 1.0)
        total = total + _adaptive(_mapped(f, t, w, -1.0), unit, law, atol)
    out = [0.0, 0.0]
    for p, v in zip(powers, total):
        out[int(p)] = float(v)
    return out[0], out[1]


def _mapped(f, t, w, sign):
    def g(s):
        with np.errstate(all="ignore"):
            x = t + sign * w * (1.0 - s) / s
            y = f(x)
            return np.where(y == 0, 0.0, y * ((w / s) / s)[..., None])

    return g


def _discrete_side(law, a, b, c, upper, powers):
    """The sums of :func:`_continuous_side` for a law on the lattice ``m + ℤ`` (see the module docstring)."""
    o = law.median
    if upper:  # S = 0 from the support's top on
        b = min(b, law.hi)
    else:  # F = 0 below the support's bottom
        a = max(a, law.lo)
    if not a < b:
        return 0.0, 0.0
    if upper:  # cells [k, k + 1) from the one holding a upward; S constant on each
        start, step, end = o + math.floor(a - o), 1.0, b
    else:  # cells [k, k + 1) from the one holding b downward; F constant on each
        start, step, end = o + math.floor(b - o), -1.0, a
    tail = law.sf if upper else law.cdf
    totals = [[], []]
    done, block = 0, 4096
    while True:
        k = start + step * (done + np.arange(block, dtype=float))
        x0, x1 = np.maximum(k, a), np.minimum(k + 1.0, b)
        width = np.maximum(x1 - x0, 0.0)
        t = tail(k)
        with np.errstate(all="ignore"):  # cells of zero width far out: masked below
            if upper:
                moment = (x1 - c) ** 2 - (x0 - c) ** 2
            else:
                moment = (c - x0) ** 2 - (c - x1) ** 2
            moment = np.where(width > 0, moment, 0.0)
        totals[0].extend(_masked(width * t, t))
        totals[1].extend(_masked(moment * t, t))
        done += block
        nxt = start + step * done
        past = nxt >= end if upper else nxt + 1.0 <= end
        if past or t[-1] == 0:
            break
        # the rest, by the geometric bound of a tail whose ratios do not increase
        ratios = t[1:] / t[:-1]
        r = ratios[-1]
        if r < 1 and np.all(np.diff(ratios) <= 1e-12):
            dist = abs(nxt - c)
            first = t[-1] * r / (1 - r)
            second = t[-1] * r * ((2 * dist + 1) / (1 - r) + 2 * r / (1 - r) ** 2)
            s0, s1 = math.fsum(totals[0]), math.fsum(totals[1])
            if first <= 1e-13 * abs(s0) and (
                1 not in powers or second <= 1e-13 * abs(s1)
            ):
                break
        if done >= _MAX_CELLS:
            raise ValueError(
                f"data: the tail of {law.name} is too heavy or too wide to sum exactly "
                f"(more than {_MAX_CELLS} lattice points)"
            )
        block *= 2
    return math.fsum(totals[0]), math.fsum(totals[1])


def _side(law, a, b, c, upper, powers=(0, 1)):
    if not a < b:
        return 0.0, 0.0
    side = _discrete_side if law.discrete else _continuous_side
    return side(law, a, b, c, upper, powers)


def _area(law, a, b, upper):
    """``∫_a^b S`` (``upper``) or ``∫_a^b F``."""
    return _side(law, a, b, law.median, upper, (0,))[0]


def _upper_tail(law, u):
    """``∫_u^∞ S(x) dx = E (X - u)^+``."""
    m = law.median
    if u >= m:
        return _area(law, u, math.inf, True)
    return (m - u) - _area(law, u, m, False) + _area(law, m, math.inf, True)


def _lower_tail(law, l):
    """``∫_{-∞}^l F(x) dx = E (l - X)^+``."""
    m = law.median
    if l <= m:
        return _area(law, -math.inf, l, False)
    return _area(law, -math.inf, m, False) + (l - m) - _area(law, m, l, True)


#: the laws met lately, by value (see :func:`_cached`)
_LAWS = OrderedDict()


def _cached(law, what, lower, upper):
    """``_bias`` or ``_moments`` of a law, remembered by the law's name and parameters (so that a curve
    over many ``(n, ε)`` and the optimal clip's grid integrate each window once).  Only the laws of
    ``scipy.stats`` itself are remembered (a user's ``rv_histogram`` or subclass may share a name)."""
    dist = law.data.dist
    key = (dist.name, law.name, law.lo, law.hi)
    # scipy's own law of that name, if any (freezing copies the law's object: compare types)
    template = vars(stats).get(dist.name)
    try:
        hash(key)
        known = isinstance(template, (stats.rv_continuous, stats.rv_discrete)) and (
            type(template) is type(dist)
        )
    except TypeError:  # parameters that are not hashable
        known = False
    if not known:
        return (_bias if what == "bias" else _moments)(law, lower, upper)
    _LAWS[key] = law
    _LAWS.move_to_end(key)
    while len(_LAWS) > 64:
        _LAWS.popitem(last=False)
    return _remembered(key, what, lower, upper)


@functools.lru_cache(maxsize=16384)
def _remembered(key, what, lower, upper):
    law = _LAWS[key]
    return (_bias if what == "bias" else _moments)(law, lower, upper)


def _bias(law, lower, upper):
    law.require_mean()
    below = _lower_tail(law, lower) if math.isfinite(lower) else 0.0
    above = _upper_tail(law, upper) if math.isfinite(upper) else 0.0
    return below - above


def _moments(law, lower, upper):
    """``(mean, variance)`` of ``clip(X, lower, upper)`` (see the module docstring)."""
    top, bottom = min(upper, law.hi), max(lower, law.lo)  # where clip(X, l, u) lives
    infinite = not (math.isfinite(bottom) and math.isfinite(top))
    if infinite and not math.isfinite(law.mean):
        raise ValueError(
            f"data: {law.name} has no finite mean, so clip(X, {lower!r}, {upper!r}) has none "
            "either unless both bounds are finite"
        )
    powers = (0, 1)
    if infinite:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            var = float(law.data.var())
        if not math.isfinite(var):
            other = law.lo if top == math.inf else law.hi
            both = bottom == -math.inf and top == math.inf
            if not (both or math.isfinite(other)):
                raise ValueError(
                    f"data: {law.name} has no finite variance; clip(X, {lower!r}, {upper!r}) "
                    "may have one, but which tail is heavy cannot be told: give finite bounds"
                )
            powers = (0,)
    c = min(max(law.median, lower), upper)
    s1, s2 = _side(law, c, upper, c, True, powers)
    f1, f2 = _side(law, lower, c, c, False, powers)
    offset = s1 - f1
    if powers == (0,):
        return c + offset, math.inf
    return c + offset, max(s2 + f2 - offset**2, 0.0)


def _bounds(lower, upper):
    return check.bounds(lower, upper)


def clipping_bias(data, lower, upper):
    """The clipping bias ``E clip(X, lower, upper) - E X``, exact.

    ``= ∫_{-∞}^{l} F(x) dx - ∫_{u}^{∞} S(x) dx``: the lower bound raises the mean by the area under
    the cdf below it, the upper bound lowers it by the area under the survival function above it
    (each integral computed as the module docstring says, to a relative accuracy of ``1e-12``).

    Parameters
    ----------
    data : frozen scipy.stats distribution
        The law of one record, continuous or discrete, e.g. ``scipy.stats.lognorm(1.0)``.
    lower, upper : float
        The clipping bounds, ``lower < upper``; ``lower`` may be ``-inf`` and ``upper`` ``inf``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the law has no finite mean (a Cauchy law, a Pareto law with shape ``b <= 1``): then the bias
        is undefined whatever the bounds; and for bounds that are not numbers with ``lower < upper``.

    Examples
    --------
    >>> from scipy import stats
    >>> round(clipping_bias(stats.expon(), 0.0, 2.0), 12)  # -∫_2^∞ e^{-x} dx = -e^{-2}
    -0.135335283237
    """
    lower, upper = _bounds(lower, upper)
    return _bias(_Law(data), lower, upper)


def clipped_moments(data, lower, upper):
    """The mean and variance of ``clip(X, lower, upper)``, exact.

    Both bounds finite (or infinite where the law's support ends anyway): any law (its mean need not
    exist).  An infinite bound needs the law's mean
    (a ``ValueError`` naming the law otherwise); the variance is ``inf`` when the law's variance is
    infinite and the infinite bound is on its only unbounded side (e.g. ``upper = inf`` for a Pareto
    law with shape ``b <= 2``).

    Parameters
    ----------
    data : frozen scipy.stats distribution
    lower, upper : float
        ``lower < upper``, either may be infinite.

    Returns
    -------
    (float, float)
        ``(E clip(X, l, u), Var clip(X, l, u))``.

    Examples
    --------
    >>> from scipy import stats
    >>> mean, var = clipped_moments(stats.uniform(0, 2), 0.0, 1.0)  # half the mass sits at 1
    >>> round(mean, 12), round(var, 12)  # 3/4 and 2/3 - 9/16 = 5/48
    (0.75, 0.104166666667)
    """
    lower, upper = _bounds(lower, upper)
    mean, var = _moments(_Law(data), lower, upper)
    return float(mean), float(var)


@dataclass(frozen=True)
class ClippedMeanMSE:
    """The error of a private clipped mean (or sum) as an estimate of ``E X`` (or ``n E X``).

    ``mse == bias**2 + sampling_variance + noise_mse``.

    Attributes
    ----------
    bias : float
        The clipping bias of the statistic: ``E clip(X, l, u) - E X`` for the mean, ``n`` times it for
        the sum.  Exact.
    sampling_variance : float
        ``Var clip(X, l, u) / n`` for the mean, ``n Var clip(X, l, u)`` for the sum.  Exact.
    noise_mse : float
        What the mechanism adds to the MSE: ``E(M - μ)² - E(Ȳ - μ)²`` for the release ``M`` of the
        clipped statistic ``Ȳ`` and the target ``μ``, i.e. ``E mse_M(Ȳ) + 2 E[(Ȳ - μ) bias_M(Ȳ)]``;
        ``2 b²`` for Laplace noise (exact).
    mse : float
        ``E (M - μ)²``.
    exact : bool
        True for Laplace noise; False for BIT and Truncated, whose ``noise_mse`` averages their
        exact conditional bias and MSE over a normal approximation of the law of ``Ȳ``.
    release_bias : float
        ``E M - μ`` (equal to ``bias`` for Laplace noise).
    scale : float
        The mechanism's ε-DP scale ``b`` for the statistic.
    sensitivity : float
        ``(u - l)/n`` for the mean, ``u - l`` for the sum (replace-one neighbours, ``n`` public).
    lower, upper : float
    n : int
    epsilon : float
    statistic : str
        ``"mean"`` or ``"sum"``.
    """

    bias: float
    sampling_variance: float
    noise_mse: float
    mse: float
    exact: bool
    release_bias: float
    scale: float
    sensitivity: float
    lower: float
    upper: float
    n: int
    epsilon: float
    statistic: str


def _family(family):
    for known, name in _FAMILIES.items():
        if family is known:
            return name
    raise ValueError(
        "family must be dpbook.Laplace, dpbook.BIT or dpbook.Truncated (a bounded release of "
        f"a mean), got {family!r}"
    )


def _statistic(statistic):
    if statistic not in ("mean", "sum"):
        raise ValueError(f"statistic must be 'mean' or 'sum', got {statistic!r}")
    return statistic


#: the nodes of the normal approximation of the clipped mean's law (probabilists' Gauss–Hermite)
_HERMITE = np.polynomial.hermite_e.hermegauss(48)


@functools.lru_cache(maxsize=256)
def _truncated_unit(epsilon, n):
    """``truncated_scale(ε, 1, 0, n)``: the truncated mechanism's scale for ``Δ = (u - l)/n`` is ``Δ`` times it
    (the mechanism on ``[l, u]`` is an affine image of the one on ``[0, n]`` with sensitivity 1)."""
    return truncated_scale(epsilon, 1.0, 0.0, float(n))


def _mse(law, n, lower, upper, epsilon, family, statistic):
    """:class:`ClippedMeanMSE` on validated arguments (the law's mean exists)."""
    mu = law.mean
    delta = mean_sensitivity(lower, upper, n)
    bias = _cached(law, "bias", lower, upper)
    mean, var = _cached(law, "moments", lower, upper)
    sampling = var / n
    if family == "Truncated":
        scale = delta * _truncated_unit(epsilon, n)
    else:
        scale = laplace_scale(epsilon, delta)
    if family == "Laplace":
        noise = Laplace(scale).mse(0.0)
        release_bias, exact = bias, True
    else:
        mech = (BIT if family == "BIT" else Truncated)(scale, lower=lower, upper=upper)
        z, w = _HERMITE
        y = np.clip(mean + math.sqrt(sampling) * z, lower, upper)
        w = w / w.sum()
        mb = np.asarray(mech.bias(y))
        noise = float(w @ (np.asarray(mech.mse(y)) + 2.0 * (y - mu) * mb))
        release_bias, exact = bias + float(w @ mb), False
    k = 1 if statistic == "mean" else n
    out = dict(
        bias=k * bias,
        sampling_variance=k * k * sampling,
        noise_mse=k * k * noise,
        release_bias=k * release_bias,
        scale=k * scale,
        sensitivity=k * delta,
    )
    with np.errstate(over="ignore"):  # a bias beyond 1e154 squares to inf, the truth
        mse = float(
            np.float64(out["bias"]) ** 2 + out["sampling_variance"] + out["noise_mse"]
        )
    return ClippedMeanMSE(
        mse=mse,
        exact=exact,
        lower=lower,
        upper=upper,
        n=n,
        epsilon=epsilon,
        statistic=statistic,
        **out,
    )


def clipped_mean_mse(
    data, n, lower, upper, epsilon, *, family=Laplace, statistic="mean"
):
    """The MSE of a private mean (or sum) of ``n`` records clipped to ``[lower, upper]``, about ``E X``.

    The records are clipped, averaged (``Ȳ``) and released by ``family`` at the scale that makes it
    ε-DP for the sensitivity ``Δ = (u - l)/n`` (:func:`dpbook.mean_sensitivity`; replace-one
    neighbours, ``n`` public): ``b = Δ/ε`` (:func:`dpbook.laplace_scale`) for ``dpbook.Laplace`` and
    ``dpbook.BIT`` (post-processing), the smallest ε-DP scale for ``dpbook.Truncated`` on ``[l, u]``,
    ``Δ · truncated_scale(ε, 1, 0, n)`` (:func:`dpbook.truncated_scale`; the mechanism on ``[l, u]`` is
    an affine image of the one on ``[0, n]`` with sensitivity 1).  Then

    ``MSE = bias² + Var clip(X, l, u)/n + noise_mse``,

    exact for Laplace noise (``noise_mse = 2b²``).  For BIT and Truncated the first two terms are exact
    and ``noise_mse = E mse_M(Ȳ) + 2 E[(Ȳ - μ) bias_M(Ȳ)]`` averages the mechanism's exact bias and MSE
    at each true value over a normal approximation ``N(E Ȳ, Var Ȳ)`` of the law of ``Ȳ`` (clipped to
    ``[l, u]``, 48 Gauss–Hermite nodes); the result says ``exact=False``.  With ``statistic="sum"``
    the release is ``n Ȳ`` with sensitivity ``u - l``: every family here is scale-equivariant, so the
    sum's bias is ``n`` times the mean's and its MSE terms ``n²`` times.

    Parameters
    ----------
    data : frozen scipy.stats distribution
        The law of one record (its mean must exist: ``μ = E X`` is the target).
    n : int
        The number of records, ``>= 1``, public.
    lower, upper : float
        Finite clipping bounds, ``lower < upper``.
    epsilon : float
        ``ε > 0``.
    family : dpbook.Laplace, dpbook.BIT or dpbook.Truncated, keyword-only
    statistic : {"mean", "sum"}, keyword-only

    Returns
    -------
    ClippedMeanMSE

    Examples
    --------
    >>> from scipy import stats
    >>> r = clipped_mean_mse(stats.uniform(0, 1), 100, 0.0, 1.0, 1.0)  # no clipping bias
    >>> r.bias, round(r.sampling_variance, 12), round(r.noise_mse, 12)  # 1/(12·100), 2(1/100)²
    (0.0, 0.000833333333, 0.0002)
    """
    law = _Law(data)
    n = check.count("n", n, 1)
    lower, upper = _bounds(lower, upper)
    epsilon = check.positive("epsilon", epsilon)
    name = _family(family)
    statistic = _statistic(statistic)
    mean_sensitivity(lower, upper, n)  # the bounds must be finite
    law.require_mean()
    return _mse(law, n, lower, upper, epsilon, name, statistic)


@dataclass(frozen=True)
class OptimalClip:
    """The MSE-optimal clipping window ``[lower, upper]`` and the error there.

    Attributes
    ----------
    lower, upper : float
    mse : ClippedMeanMSE
        The error at the optimum (``mse.mse`` is the least MSE).
    condition : float
        The first-order condition's derivative at the optimum (Laplace noise; ``nan`` otherwise): 0
        up to the accuracy of the integrals, or a sign change at a kink for a discrete law.
    """

    lower: float
    upper: float
    mse: ClippedMeanMSE
    condition: float


def _derivative(law, n, epsilon, lower, upper, symmetric):
    """Half the derivative of the mean's MSE with Laplace noise: in ``u`` or in the half-width ``w``."""
    mu = law.mean
    mean, _ = _cached(law, "moments", lower, upper)
    bias = mean - mu
    s_up = float(law.sf(upper))
    noise = 2.0 * (upper - lower) / (n * epsilon) ** 2
    if not symmetric:
        return s_up * (bias + (upper - mean) / n) + noise
    f_low = float(law.cdf(lower))
    return (
        bias * (s_up - f_low)
        + (s_up * (upper - mean) + f_low * (mean - lower)) / n
        + 2.0 * noise
    )


def _candidates(law, lower):
    """Upper clips to try (ascending): quantiles of the upper tail above ``lower`` and points near it."""
    k = np.concatenate([np.linspace(0.0, 2.0, 41)[1:], np.linspace(2.0, 30.0, 57)[1:]])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = np.asarray(law.data.isf(10.0**-k), dtype=float)
    q = q[np.isfinite(q) & (q > lower)]
    if q.size == 0:
        raise ValueError(
            f"lower = {lower!r} is above almost all of {law.name}: nothing is left to clip"
        )
    near = lower + (q[0] - lower) * 10.0 ** -np.arange(0.25, 6.01, 0.25)
    return np.unique(np.concatenate([near, q]))


def optimal_clip(data, n, epsilon, *, lower=None, family=Laplace, statistic="mean"):
    """The clip that minimizes :func:`clipped_mean_mse`: the best ``upper`` for a fixed ``lower``, or a window.

    With ``lower`` given (e.g. 0 for nonnegative data) the upper clip ``u > l`` is chosen; with
    ``lower=None`` the window ``[m - w, m + w]`` symmetric about the law's median ``m``.  For Laplace
    noise the mean's MSE is ``B(u)² + V(u)/n + 2((u - l)/(nε))²`` with ``dB/du = dE clip/du = S(u)``
    and ``dV/du = 2 S(u)(u - E clip)``, so the optimum solves the **first-order condition**

    ``S(u) [B(u) + (u - E clip(X, l, u))/n] + 2(u - l)/(nε)² = 0``,

    and for the window (``dB/dw = S(m + w) - F(m - w)``)

    ``B (S(m+w) - F(m-w)) + [S(m+w)(m + w - E clip) + F(m-w)(E clip - m + w)]/n + 8w/(nε)² = 0``.

    For a law symmetric about its median the best window shrinks to (almost) the median itself (no
    clipping bias, and no noise as ``w → 0``): an oracle that knows the centre; use a fixed ``lower``
    for nonnegative data.

    The MSE is evaluated on a grid of quantiles of the law (``S^{-1}(10^{-k})``, ``0 < k <= 30``, and
    points between ``l`` and the first of them); the root is then found between the neighbours of the
    best grid point by Brent's bracketing method (``brentq``) to the last bits.  For BIT and Truncated
    (approximate MSE) the MSE itself is minimized in the same bracket by Brent's bounded method.  The
    sum's optimum is the mean's (its MSE is ``n²`` times).

    Parameters
    ----------
    data : frozen scipy.stats distribution
        The law of one record (its mean must exist).
    n : int
    epsilon : float
    lower : float or None, keyword-only
        A fixed finite lower clip, or ``None`` for the symmetric window.
    family, statistic : keyword-only
        As in :func:`clipped_mean_mse`.

    Returns
    -------
    OptimalClip

    Examples
    --------
    >>> from scipy import stats
    >>> best = optimal_clip(stats.expon(), 1000, 1.0, lower=0.0)
    >>> round(best.upper, 4), abs(best.condition) < 1e-15
    (5.1352, True)
    """
    law = _Law(data)
    n = check.count("n", n, 1)
    epsilon = check.positive("epsilon", epsilon)
    name = _family(family)
    statistic = _statistic(statistic)
    law.require_mean()
    symmetric = lower is None
    if symmetric:
        m = law.median
        up = _candidates(law, m) - m
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            down = m - np.asarray(law.data.ppf(10.0 ** -np.linspace(0.05, 30, 97)))
        down = down[np.isfinite(down) & (down > 0)]
        grid = np.unique(np.concatenate([up, down]))

        def window(w):
            return m - w, m + w

    else:
        lower = check.finite("lower", lower)
        grid = _candidates(law, lower)

        def window(u):
            return lower, u

    def mse(t):
        return _mse(law, n, *window(t), epsilon, name, "mean").mse

    values = np.array([mse(t) for t in grid])
    i = int(np.argmin(values))
    lo = grid[i - 1] if i > 0 else grid[0] / 2 if symmetric else (lower + grid[0]) / 2
    hi = grid[i + 1] if i + 1 < grid.size else 2 * grid[-1] - grid[-2]
    condition = math.nan
    if name == "Laplace":

        def g(t):
            return _derivative(law, n, epsilon, *window(t), symmetric)

        g_lo, g_hi = g(lo), g(hi)
        if g_lo < 0 < g_hi:
            best = optimize.brentq(
                g, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500
            )
        else:  # a kink at the grid point (a discrete law) or a flat stretch: the grid's best
            best = grid[i]
        condition = g(best)
    else:
        found = optimize.minimize_scalar(
            mse,
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-10 * max(abs(hi), 1e-300)},
        )
        best = found.x if found.fun <= values[i] else grid[i]
    low, high = window(best)
    return OptimalClip(
        float(low),
        float(high),
        _mse(law, n, low, high, epsilon, name, statistic),
        float(condition),
    )
