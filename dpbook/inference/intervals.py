r"""Exact confidence intervals for the true value behind one release (issue 11).

Every family of dpbook knows the exact law of its release ``M(q)``, point masses included.  That is
enough to invert it: Neyman's construction through the probability-integral transform (PIT) gives,
for a release ``x``, the set of true values that ``x`` does not reject,

``CI(x) = {q in domain : P_q(M <= x) >= α/2 and P_q(M >= x) >= α/2}``,   ``α = 1 - level``.

**Validity, for any family.**  For a fixed ``q`` the two tails ``F_q(M) = P_q(M' <= M)`` and
``G_q(M) = P_q(M' >= M)`` of the PIT are *sub-uniform*: ``P_q(F_q(M) < t) <= t`` for every ``t``, with
equality when the law has no atoms.  So ``P_q(q ∉ CI(M)) <= P(F_q(M) < α/2) + P(G_q(M) < α/2) <= α``.

**An interval, found by root-finding.**  When the family is *stochastically increasing* in ``q``
(``P_q(M <= x)`` nonincreasing in ``q`` for every ``x``), the first condition holds on a down-set of
``q`` and the second on an up-set, so ``CI(x)`` is an interval whose two ends are found by bisection in
``q`` over the ordered doubles (:func:`dpbook.law._invert_cdf`, exact to the last bit of the computed
law), vectorized over ``x``.  :func:`is_stochastically_increasing` says for each family why it is
(the proofs are listed there) or why it is not; a family that is not is refused with a ``ValueError``
(the set could then be a union of pieces that bisection would not find).

**Closed forms.**  A family whose transform inverts in closed form in ``q`` with a proved error
(``_quantile_in_q`` returning a :class:`dpbook._kernels.inversion.Root`: Laplace, BIT, Truncated and their
discrete twins, the monotone transforms of Laplace noise: TranslatedRamp, LogLaplace and a rounded
Laplace, CountPostProcessed with an integer nondecreasing map, Normalized, FoldedLaplace, and the Gaussian
and its clamping) gives each end without evaluating its law.  Over the integers the ends are the search's own
integers (decided wherever the root's zone of rounding holds no integer, searched elsewhere).  Over the
doubles an end is the root moved outwards by its proved width: the interval holds the bisection's and is
wider by at most twice the width, a few units in the last place of the scale and the release (under
``1e-13`` of them in the tests; for a truncation up to ``1e-11`` where its tail flattens near a bound),
which adds at most the law's mass over that width to the coverage.  A root without a width (a truncation
shorter than two scales, a root in the flat part of its tail next to a bound, a union of pieces longer than
512 scales or unbounded, a Gaussian tail beyond ``1e-80``: each family's root says where) is a starting point
that the search polishes on the law.

**Atoms.**  At a point mass the non-randomized interval is conservative: its coverage at ``q`` is
exactly ``level + Σ_a |J_q(a) \ C|`` over the atoms ``a`` whose jump ``J_q(a) = [P_q(M < a), P_q(M <= a)]``
meets ``C = [α/2, 1 - α/2]`` (a jump lying across ``α/2`` or ``1 - α/2`` adds the part of it outside
``C``); so never more than ``level`` plus the mass of the (at most two) atoms whose jump straddles an
end of ``C``.  The randomized interval uses ``U = P_q(M < x) + V P_q(M = x)`` with ``V ~ U(0, 1)``
independent, which is exactly uniform: its coverage is ``level`` at every ``q``.

**Degenerate answers.**  If no ``q`` of the domain passes (a truncated release very near a bound,
where even ``q = lower`` gives ``P(M <= x) < α/2``), the interval is the nearest end of the domain, as
a single point: adding points to a valid confidence set keeps it valid.  This adds coverage only at
that end of the domain, so there the randomized interval covers with probability above ``level``
(``level + P_q(empty set)``, at most ``level + α/2``); everywhere inside the domain it is exact.

**Counts.**  For an integer-valued family (:class:`~dpbook.DiscreteLaplace`, :class:`~dpbook.DiscreteBIT`,
:class:`~dpbook.DiscreteTruncated`) the true value ranges over the integers of the domain and so do the
releases.  The same construction runs over integer ``q``: ``CI(x)`` is the set of integers that pass, an
integer interval because the families are stochastically increasing (each proves it in its
``stochastic_order()``), its ends found by a galloping search and bisection over the integers.
``P_q(M < x) = P_q(M <= x - 1)`` exactly.  Every release
is an atom, so the interval is conservative and the randomized one exact.  Between two neighbouring
integers the law can move so much that no ``q`` passes: ``U_q > 1 - α/2`` at ``q`` and ``U_{q+1} < α/2``.
The randomized interval is then the empty set, returned as ``[q + 1, q]`` (``low = high + 1``): that is
what keeps its coverage exactly ``level``.  (A non-randomized set empty in the same way would be
returned as ``[q, q + 1]``, which only adds coverage.)  :func:`interval_coverage` sums the law over the
accepted integers and :func:`expected_length` is the sum ``Σ_k P_q(M = k) len(k)``
(no quadrature).  True values and releases are kept within ``±2^52`` (there sums of two integers are exact
doubles); an interval that would reach beyond is refused with a ``ValueError``.

The three intervals a practitioner might use instead, compared in the book by their exact coverage
(:func:`interval_coverage`) and expected length (:func:`expected_length`), live here too:
:func:`plugin_interval`, :func:`clipped_laplace_interval` and :func:`laplace_interval`.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from .._kernels import validation as check
from .._kernels.arrays import _below, _bound_in_place, _float, _invert_cdf, _key, _unkey
from .._kernels.inversion import Root
from ..mechanism import Mechanism

__all__ = [
    "ConfidenceInterval",
    "confidence_interval",
    "randomized_interval",
    "interval_coverage",
    "ExactInterval",
    "expected_length",
    "is_stochastically_increasing",
    "plugin_interval",
    "clipped_laplace_interval",
    "laplace_interval",
    "proportion_interval",
    "proportion_coverage",
]


class ConfidenceInterval(tuple):
    """The result of :func:`confidence_interval`: unpacks as ``low, high``, like ``scipy.stats``'
    ``ConfidenceInterval``.

    Attributes
    ----------
    low, high
        The ends (a float, or an array shaped like the releases ``x``); inside the closure of the
        mechanism's domain.  ``low, high = ci`` and ``ci[0], ci[1]`` give them too.
    level : float
        The confidence level ``1 - α``.
    exact : bool
        True when the coverage equals ``level`` at every true value inside the domain (a randomized
        interval, or a law without point masses; at a finite end of the domain the degenerate answers
        of the module docstring add to it); False when it is at least ``level`` (conservative at point
        masses).
    method : str
        How the interval was built.

    Examples
    --------
    >>> import dpbook
    >>> low, high = dpbook.confidence_interval(dpbook.Laplace(1.0), 0.3, level=0.9)
    >>> round(low, 6), round(high, 6)
    (-2.002585, 2.602585)
    """

    def __new__(cls, low, high, level, exact, method):
        self = super().__new__(cls, (low, high))
        self.level, self.exact, self.method = level, exact, method
        return self

    def __getnewargs__(self):
        return (self[0], self[1], self.level, self.exact, self.method)

    @property
    def low(self):
        return self[0]

    @property
    def high(self):
        return self[1]

    def __repr__(self):
        return (
            f"ConfidenceInterval(low={self.low!r}, high={self.high!r}, level={self.level!r}, "
            f"exact={self.exact!r}, method={self.method!r})"
        )


# --------------------------------------------------------------------------------------------------
# which families are stochastically increasing, and why


def is_stochastically_increasing(mechanism):
    """Whether ``P_q(M <= x)`` is nonincreasing in ``q`` for every ``x``, with the reason.

    The proofs, family by family (MLR: monotone likelihood ratio, which implies stochastic increase):

    * :class:`~dpbook.Laplace`: a location family with a log-concave density has MLR in ``(x, q)``.
    * :class:`~dpbook.BIT`, :class:`~dpbook.TranslatedRamp`, :class:`~dpbook.LogLaplace` (``q e^{L} =
      exp(log q + L)``) and :class:`~dpbook.StepPostProcessed` with nondecreasing ``φ``: a nondecreasing
      map ``T`` of a stochastically increasing family is one (``P(T(Y_q) <= x) = P(Y_q <= T^{-1}(x))``
      with the generalized inverse).
    * :class:`~dpbook.Truncated`, :class:`~dpbook.Normalized` and :class:`~dpbook.Restricted` with a
      log-concave base (Laplace, normal, logistic): conditioning on a *fixed* set multiplies the
      likelihood ratio of two true values by a constant, so MLR survives.
    * :class:`~dpbook.PostProcessed`: ``φ`` is an arbitrary callable, so nothing is known; the caller
      may assert that ``φ`` is nondecreasing (``increasing=True`` in :func:`confidence_interval`).
    * :class:`~dpbook.DiscreteLaplace`, :class:`~dpbook.DiscreteBIT`, :class:`~dpbook.DiscreteTruncated`
      (integer ``q``): the discrete Laplace location family has MLR (``|k - q| - |k - q'|`` is
      nondecreasing in ``k`` for ``q < q'``); clamping is a nondecreasing map and conditioning on a fixed
      set keeps MLR (each family's ``stochastic_order()`` gives its proof).
    * :class:`~dpbook.CroftLaplace`: **not** known.  Its scale shrinks as ``q`` leaves the boundary, and
      a narrower law raises ``P_q(M <= x)`` for ``x`` above ``q`` while the shift lowers it.
    * A family of another class: its own :meth:`~dpbook.Mechanism.stochastic_order` (each family states
      its proof there; the default reads a class attribute ``stochastically_increasing``), else unknown.

    Returns
    -------
    (bool, str)
        The answer and its reason.

    Examples
    --------
    >>> from dpbook import BIT, CroftLaplace
    >>> is_stochastically_increasing(BIT(1.0, lower=0.0, upper=1.0))[0]
    True
    >>> is_stochastically_increasing(CroftLaplace(1.0, 1.0))[0]
    False
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a dpbook Mechanism, got {mechanism!r}")
    ok, why = mechanism.stochastic_order()
    return bool(ok), str(why)


# --------------------------------------------------------------------------------------------------
# validation


def _level(level):
    a = check.finite("level", level)
    if not 0.0 < a < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return a


def _releases(mechanism, x):
    x = check.finite_array("x", x)
    lo, hi = mechanism.support
    if x.size and not lo <= x.min() <= x.max() <= hi:  # (finite: no NaN)
        raise ValueError(
            f"x must lie in the support [{lo}, {hi}] of {type(mechanism).__name__}, got {x!r}"
        )
    return x


#: integer-valued families: true values and releases within ±2^52 (sums of two stay exact doubles)
_INT_LIMIT = 2.0**52


def _has_atoms(mechanism):
    lo, hi = mechanism.domain
    q = (
        0.5 * (lo + hi)
        if np.isfinite(lo) and np.isfinite(hi)
        else (lo + 1.0 if np.isfinite(lo) else (hi - 1.0 if np.isfinite(hi) else 0.0))
    )
    try:
        return any(np.any(np.asarray(m) > 0) for _, m in mechanism.atoms(q))
    except NotImplementedError:
        return True  # unknown: claim only ">= level"


# --------------------------------------------------------------------------------------------------
# the construction


#: the galloping steps tried from a closed-form guess before bisecting what is left of the bracket: a
#: guess ``2^K - 1`` doubles off or closer costs at most ``2 + 2 K`` evaluations, a worse one at most
#: ``2 + K`` more than the bisection alone (64 halvings over the doubles)
_GALLOP_STEPS = 5


def _first_true(reached, shape, start, hi, guess=None, grain=None):
    """Smallest double ``q`` in ``(start, hi]`` with ``reached(q, sel)`` (``hi`` if none below it).

    ``reached(q, sel)`` is monotone in ``q`` (false, then true) and evaluated on the flat positions
    ``sel`` of the releases (``None``: all of them); it is never evaluated at ``start`` or ``hi``.
    Without a ``guess`` this is the bisection over the doubles (:func:`dpbook._kernels.arrays._invert_cdf`,
    at most 64 halvings).  With a ``guess`` (a closed-form root, ``_quantile_in_q``) the predicate is
    evaluated at the guess clipped into ``(start, hi]`` and at its neighbouring double towards the switch:
    where the two differ the guess has located the switch and the answer is read off (two evaluations);
    elsewhere a gallop of at most ``_GALLOP_STEPS`` steps of ``1, 2, 4, ...`` doubles away from the guess
    narrows the bracket, and a bisection over the doubles left in it ends the search
    (:func:`_gallop`).  The answer is the same double either way (the smallest one that qualifies is
    unique): the guess only decides the cost, which is never more than ``2 + _GALLOP_STEPS`` evaluations
    above the bisection's.  ``grain`` (the releases, whose spacing bounds how finely a tail computed from
    ``x - q`` can resolve ``q``): the gallop's first step is half the ratio of the spacings of ``x`` and
    of the guess, so that a guess near ``0`` for a release far from it (where the computed tail is flat
    over runs of that many doubles) is not walked out of one double at a time.
    """
    if guess is None:
        return _invert_cdf(lambda t, _: reached(t, None), np.zeros(shape), start, hi)
    k_lo, k_hi = _key(start), _key(hi)
    guess = np.broadcast_to(np.nan_to_num(guess, nan=hi), shape)
    g = np.clip(_key(guess), k_lo + 1, k_hi).ravel()
    ok = np.ones(g.shape, dtype=bool)
    inner = g < k_hi
    ok[inner] = np.asarray(reached(_unkey(g[inner]), np.flatnonzero(inner)), dtype=bool)
    n = np.where(ok, g - 1, g + 1)  # the neighbour towards the switch
    ok_n = ~ok  # its value when it is start (false) or hi (true)
    ask = (n > k_lo) & (n < k_hi)
    ok_n[ask] = np.asarray(reached(_unkey(n[ask]), np.flatnonzero(ask)), dtype=bool)
    out = np.where(ok, g, n)  # right where the two differ
    left = np.flatnonzero(ok == ok_n)
    if left.size:  # both true: the switch is below n; both false: above n
        down = ok[left]
        a = np.where(down, k_lo, n[left])
        b = np.where(down, n[left], k_hi)
        first = np.ones(left.size, dtype=np.int64)
        if grain is not None:
            g_left = _unkey(g[left])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.spacing(np.abs(_pick(grain, left))) / np.spacing(
                    np.abs(g_left)
                )
            ratio = np.nan_to_num(ratio, nan=1.0, posinf=2.0**46)
            first = np.exp2(np.floor(np.log2(np.clip(ratio, 2.0, 2.0**46))) - 1.0)
            first = first.astype(np.int64)
        out[left] = _gallop(reached, left, down, n[left], a, b, first)
    return (_unkey(out) + 0.0).reshape(shape)


def _gallop(reached, sel, down, anchor, a, b, first, steps=_GALLOP_STEPS, value=_unkey):
    """The smallest point where ``reached`` holds, in the brackets ``(a, b]`` of the positions ``sel``: int64
    ``a``, ``b`` (``reached`` false at ``a``, true at ``b``, neither evaluated) that ``value`` maps to the
    ordered points asked (keys of doubles by default; integers with ``value=np.float64``).

    First at most ``steps`` steps of ``first, 2 first, 4 first, ...`` away from ``anchor`` (downwards where
    ``down``), so that a guess a few points off costs a few evaluations; then a bisection over the points
    left in each bracket (at most 64 halvings), evaluating only the positions still open.  The one search of
    the intervals: over the doubles (:func:`_first_true`) and over the integers (:func:`_int_search`)."""
    step = first.copy()
    live = np.arange(sel.size)
    for _ in range(steps):
        probe = np.where(
            down[live], anchor[live] - step[live], anchor[live] + step[live]
        )
        inside = (probe > a[live]) & (probe < b[live])
        live, probe = live[inside], probe[inside]
        if not live.size:
            break
        res = np.asarray(reached(value(probe), sel[live]), dtype=bool)
        b[live] = np.where(res, probe, b[live])
        a[live] = np.where(res, a[live], probe)
        live = live[res == down[live]]  # still on the same side of the switch
        step *= 2
    live = np.flatnonzero(b - 1 > a)
    while live.size:
        lo, hi = a[live], b[live]
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
        res = np.asarray(reached(value(mid), sel[live]), dtype=bool)
        b[live] = np.where(res, mid, hi)
        a[live] = np.where(res, lo, mid)
        live = live[b[live] - 1 > a[live]]
    return b


def _search(reached, shape, lo, hi, lo_open, hi_open, guess=None, grain=None):
    """Smallest double ``q`` of the domain with ``reached(q, sel)``; ``hi`` (or beyond) when there is none.

    Returns ``(q, found)`` where ``found`` says whether ``reached`` holds at ``q``.  ``guess``: see
    :func:`_first_true`.
    """
    start = lo if lo_open else _below(lo)
    q = _first_true(reached, shape, start, hi, guess, grain)
    if hi_open:
        return q, q < hi
    at_top = q == hi
    found = np.ones(shape, dtype=bool)
    if at_top.any():
        found = ~at_top | np.asarray(reached(np.where(at_top, hi, q), None), dtype=bool)
    return q, found


def _pick(a, sel):
    """The flat positions ``sel`` of ``a`` (all of ``a`` for ``None``)."""
    return a if sel is None else a.ravel()[sel]


def _guesses(mechanism, x, half, v, closed_form):
    """The family's closed-form roots for the two ends (``_quantile_in_q``: a :class:`~dpbook._kernels.
    inversion.Root` with its proved width, or a starting point), or ``(None, None)``."""
    if not closed_form:
        return None, None
    one, zero = (1.0, 0.0) if v is None else (v, v)
    ends = mechanism._quantiles_in_q(x, half, one, zero)
    return (None, None) if ends is None else ends


def _split(guess, shape):
    """``(root, width)`` of a closed-form guess as flat arrays (``width`` NaN where the root is only a
    starting point, all NaN for a bare starting point), or ``(None, None)``."""
    if guess is None:
        return None, None
    if isinstance(guess, Root):
        root, width = guess
    else:
        root, width = guess, np.nan
    root = np.broadcast_to(np.asarray(root, dtype=float), shape).ravel()
    return root, np.broadcast_to(np.asarray(width, dtype=float), shape).ravel()


def _start(mechanism, x, half, v, closed_form):
    """``(flat_x, flat_v, top_root, top_width, bottom_root, bottom_width)``: the releases and uniforms
    flattened, and the family's closed-form roots of the two ends split by :func:`_split`."""
    flat_v = None if v is None else np.asarray(v, dtype=float).ravel()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        top_guess, bottom_guess = _guesses(mechanism, x, half, v, closed_form)
    return (
        x.ravel(),
        flat_v,
        *_split(top_guess, x.shape),
        *_split(bottom_guess, x.shape),
    )


def _neyman(mechanism, x, level, v=None, closed_form=True):
    """The ends of the Neyman set at releases ``x`` (``v``: the uniforms of the randomized version).

    With ``closed_form`` (the default) a family's certified roots (:class:`~dpbook._kernels.inversion.Root`)
    give the ends without evaluating the law: each end is the root moved outwards by its proved width,
    so the interval holds the bisection's (it is wider by at most twice the width and a double, a few
    units in the last place of the scale; see ``dpbook._kernels.inversion``).  Where a root is only a
    starting point the ends are searched from it on the law (the bisection's doubles, or switch points
    of the computed tail next to them), and without one by bisection over the doubles.
    """
    half = (1.0 - level) / 2.0
    lo, hi = (float(t) for t in mechanism.domain)
    lo_open, hi_open = not mechanism.accepts(lo), not mechanism.accepts(hi)
    shape = x.shape
    flat_x, flat_v, top_root, top_width, bottom_root, bottom_width = _start(
        mechanism, x, half, v, closed_form
    )
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if top_root is None:
            todo = np.arange(flat_x.size)
            top, bottom = np.empty(flat_x.size), np.empty(flat_x.size)
        else:
            top, bottom = top_root + top_width, bottom_root - bottom_width
            searched = np.isnan(top_width)
            searched |= np.isnan(bottom_width)
            todo = np.nonzero(searched)[0]
        passed = bottom < hi if hi_open else bottom <= hi
        if todo.size:
            guesses = (None, None) if top_root is None else (top_root, bottom_root)
            top[todo], bottom[todo], passed[todo] = _neyman_search(
                mechanism,
                flat_x[todo],
                half,
                None if flat_v is None else flat_v[todo],
                (lo, hi, lo_open, hi_open),
                *(None if g is None else g[todo] for g in guesses),
            )
    first = np.nextafter(lo, np.inf) if lo_open else lo
    _domain_ends(top, bottom, top < first, passed, lo, hi)
    # a gap of one double: keep both; then on the domain, -0.0 made 0.0 (in place: both are new arrays)
    low, high = np.minimum(bottom, top), np.maximum(bottom, top, out=top)
    for end in (low, high):
        _bound_in_place(end, lo, hi)
        end += 0.0
    return low.reshape(shape), high.reshape(shape)


def _domain_ends(top, bottom, none_low, passed, lo, hi):
    """Both ends set to ``lo`` where no true value passes the left tail (``none_low``: ``U < α/2`` on the whole
    domain), else to ``hi`` where none passes the right one (not ``passed``), in place (``top`` and ``bottom`` are
    arrays of their own).  Few releases, scattered: written on their positions, as a ``where`` over a mask that
    changes at random costs ten times as much."""
    none_low = np.flatnonzero(none_low)
    none_high = np.flatnonzero(~passed)
    for end in (bottom, top):
        end[none_high] = hi
        end[none_low] = lo


def _neyman_search(mechanism, x, half, v, domain, top_guess=None, bottom_guess=None):
    """``(top, bottom, passed)`` at the flat releases ``x`` by the search on the law (see :func:`_neyman`):
    ``top`` the last double of the domain with ``U >= α/2`` (below it when there is none), ``bottom`` the
    first with ``1 - U >= α/2`` and ``passed`` whether there is one; from the guesses where given."""
    lo, hi, lo_open, hi_open = domain
    bx = np.nextafter(x, -np.inf)
    shape = x.shape

    def left_tail(q, sel):  # U from below: P(M < x) + v P(M = x); v = 1 gives P(M <= x)
        if v is None:
            return np.asarray(mechanism.cdf(_pick(x, sel), q))
        below = np.asarray(mechanism.cdf(_pick(bx, sel), q))
        at = np.asarray(mechanism.cdf(_pick(x, sel), q))
        return below + _pick(v, sel) * np.maximum(at - below, 0.0)

    def right_tail(q, sel):  # 1 - U: P(M > x) + (1 - v) P(M = x); v = 0 gives P(M >= x)
        if v is None:
            return np.asarray(mechanism.sf(_pick(bx, sel), q))
        above = np.asarray(mechanism.sf(_pick(x, sel), q))
        at = np.asarray(mechanism.sf(_pick(bx, sel), q))
        return above + (1.0 - _pick(v, sel)) * np.maximum(at - above, 0.0)

    # upper end: the last q with left_tail >= α/2 (left_tail decreases in q)
    fail, failed = _search(
        lambda q, sel: left_tail(q, sel) < half,
        shape,
        lo,
        hi,
        lo_open,
        hi_open,
        top_guess,
        x,
    )
    top = np.where(failed, np.nextafter(fail, -np.inf), fail)
    # lower end: the first q with right_tail >= α/2 (right_tail increases in q)
    bottom, passed = _search(
        lambda q, sel: right_tail(q, sel) >= half,
        shape,
        lo,
        hi,
        lo_open,
        hi_open,
        bottom_guess,
        x,
    )
    return top, bottom, passed


def _int_search(pred, shape, lo, hi, anchor=None):
    """Smallest integer ``q`` in ``[lo, hi]`` (integers within ``±2^52``) with ``pred(q, sel)`` (monotone
    false -> true; evaluated on the flat positions ``sel``, ``None`` for all), by :func:`_gallop` over the
    integers (as int64; the points asked are exact doubles).  With an ``anchor`` (an integer array near the
    answers) ``pred`` is asked there first and the search gallops from it in steps ``1, 2, 4, ...``, so that
    a count's interval costs ``2 log2(distance)`` rounds, not ``log2(hi - lo)``; without one it bisects.
    Returns ``(q, found)``; ``q = hi`` when nothing passes."""
    size = int(np.prod(shape))
    lo_k, hi_k = int(lo), int(hi)
    a = np.full(size, lo_k - 1, dtype=np.int64)  # pred taken false at a, true at b
    b = np.full(size, hi_k, dtype=np.int64)
    down = np.zeros(size, dtype=bool)
    c = a.copy()
    steps = 0
    if anchor is not None:
        c = np.clip(np.broadcast_to(anchor, shape).ravel(), lo, hi).astype(np.int64)
        ok = np.asarray(pred(c.astype(float), None), dtype=bool)
        b, a, down = np.where(ok, c, b), np.where(ok, a, c), ok
        steps = 64
    q = _gallop(
        pred,
        np.arange(size),
        down,
        c,
        a,
        b,
        np.ones(size, dtype=np.int64),
        steps,
        np.float64,
    ).astype(float)
    found = np.ones(size, dtype=bool)
    top = np.flatnonzero(q == hi)
    if top.size:
        found[top] = np.asarray(pred(q[top], top), dtype=bool)
    return q.reshape(shape), found.reshape(shape)


def _int_range(lo, hi):
    """The integer search range: the domain cut to ``±2^52``."""
    return max(float(lo), -_INT_LIMIT), min(float(hi), _INT_LIMIT)


def _anchor(guess, x, rounding):
    """The integer a galloping search starts from: ``rounding`` of the closed-form root, else ``x``."""
    if guess is None:
        return x
    return np.where(np.isnan(guess), x, rounding(np.nan_to_num(guess, nan=0.0)))


def _neyman_integer(mechanism, x, level, v=None, closed_form=True):
    """The ends of the Neyman set over the integer true values of the domain (see the module docstring).

    With ``closed_form`` a family's certified roots (:class:`~dpbook._kernels.inversion.Root`) decide each
    end wherever no integer lies within the root's proved width: the computed predicate is the exact one
    at every integer outside that zone, so the end is the integer next to it, the search's own (no
    evaluation of the law).  The rest is searched: a galloping search from the closed-form roots, else
    from ``x``; the ends are the same integers."""
    half = (1.0 - level) / 2.0
    lo_d, hi_d = (float(t) for t in mechanism.domain)
    lo, hi = _int_range(lo_d, hi_d)
    shape = x.shape
    flat_x, flat_v, top_root, top_width, bottom_root, bottom_width = _start(
        mechanism, x, half, v, closed_form
    )
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if top_root is None:
            todo = np.arange(flat_x.size)
            top, bottom = np.empty(flat_x.size), np.empty(flat_x.size)
            passed = np.empty(flat_x.size, dtype=bool)
        else:
            # the last integer that surely passes, if the first one beyond the zone surely fails
            # (an infinite root is its own end: floor and ceil keep it, and it is sure where its width is 0;
            # where the sum is NaN the end is not sure and the search below writes it)
            top = np.floor(top_root + top_width)
            top_sure = top < top_root - top_width
            top_sure |= np.isinf(top_root) & (top_width == 0.0)
            bottom = np.ceil(bottom_root - bottom_width)
            bottom_sure = bottom > bottom_root + bottom_width
            bottom_sure |= np.isinf(bottom_root) & (bottom_width == 0.0)
            passed = bottom <= hi
            np.clip(top, lo - 1.0, hi, out=top)
            np.clip(bottom, lo, hi, out=bottom)
            todo = np.flatnonzero(~(top_sure & bottom_sure))
        if todo.size:
            top[todo], bottom[todo], passed[todo] = _neyman_integer_search(
                mechanism,
                flat_x[todo],
                half,
                None if flat_v is None else flat_v[todo],
                (lo, hi),
                *(None if g is None else g[todo] for g in (top_root, bottom_root)),
            )
    # (a domain beyond ±2^52 only)
    reach_low = lo > lo_d and (passed & (bottom == lo)).any()
    reach_high = hi < hi_d and (top == hi).any()
    if reach_low or reach_high:
        raise ValueError(
            f"the interval for x={x!r} reaches beyond ±2**52, where integer sums stop being exact "
            "doubles; "
            f"{type(mechanism).__name__}'s domain there is not searched"
        )
    _domain_ends(top, bottom, top < lo, passed, lo, hi)
    low, high = bottom, top
    if v is None:
        low, high = np.minimum(low, high), np.maximum(low, high)
    # randomized: the exact set, which may be empty: low = high + 1 (see randomized_interval)
    return low.reshape(shape) + 0.0, high.reshape(shape) + 0.0


def _neyman_integer_search(
    mechanism, x, half, v, domain, top_guess=None, bottom_guess=None
):
    """``(top, bottom, passed)`` at the flat integer releases ``x`` by the galloping search over the
    integers of ``domain = (lo, hi)`` (see :func:`_neyman_integer`): ``top`` the last integer with
    ``U >= α/2`` (``hi`` if every one passes), ``bottom`` the first with ``1 - U >= α/2`` (``hi`` and
    ``passed`` false if none)."""
    lo, hi = domain
    shape = x.shape
    below_x = x - 1.0  # exact: |x| <= 2^52

    def left_tail(q, sel):  # P(M < x) + v P(M = x)
        at = np.asarray(mechanism.cdf(_pick(x, sel), q))
        if v is None:
            return at
        below = np.asarray(mechanism.cdf(_pick(below_x, sel), q))
        return below + _pick(v, sel) * np.maximum(at - below, 0.0)

    def right_tail(q, sel):  # P(M > x) + (1 - v) P(M = x)
        at = np.asarray(mechanism.sf(_pick(below_x, sel), q))
        if v is None:
            return at
        above = np.asarray(mechanism.sf(_pick(x, sel), q))
        return above + (1.0 - _pick(v, sel)) * np.maximum(at - above, 0.0)

    # the first integer above the root of the decreasing left tail, the first at or above the other's
    up = _anchor(top_guess, x, lambda t: np.floor(t) + 1.0)
    fail, failed = _int_search(
        lambda q, sel: left_tail(q, sel) < half, shape, lo, hi, up
    )
    top = np.where(failed, fail - 1.0, hi)
    down = _anchor(bottom_guess, x, np.ceil)
    bottom, passed = _int_search(
        lambda q, sel: right_tail(q, sel) >= half, shape, lo, hi, down
    )
    return top, bottom, passed


def _prepare(mechanism, x, level, increasing):
    level = _level(level)
    x = _releases(mechanism, x)
    if mechanism.integer_valued:
        x = check.integer_array(
            "x", x, limit=_INT_LIMIT, why=" (releases of an integer-valued family)"
        )
    ok, why = is_stochastically_increasing(mechanism)
    asserted = False
    if not ok:
        if increasing is True:
            asserted = True
        else:
            raise ValueError(
                f"mechanism {type(mechanism).__name__} is not known to be stochastically increasing in q "
                f"({why}); the Neyman set need not be an interval, so no interval is returned"
            )
    method = "neyman"
    if mechanism.law_is_numerical():
        method += ", numerical cdf"
    if asserted:
        method += ", monotonicity asserted by the caller"
    return level, x, method


def confidence_interval(
    mechanism, x, level=0.95, *, randomize=False, rng=None, increasing=None
):
    """The exact confidence interval for the true value ``q`` behind releases ``x`` of ``mechanism``.

    Neyman's construction on the exact law (see the module docstring):
    ``CI(x) = {q in domain : P_q(M <= x) >= α/2, P_q(M >= x) >= α/2}`` with ``α = 1 - level``, an interval
    because the family is stochastically increasing (:func:`is_stochastically_increasing`), its ends
    found by bisection over the doubles of the domain and clipped to it, or from the family's certified
    closed form (module docstring: the same integers; over the doubles, outside the bisection's by a few
    units in the last place).  ``P_q(M >= x)`` is the family's
    survival function at the double just below ``x`` (which includes a point mass at ``x``).  For the
    Laplace mechanism this is the textbook ``x ± b ln(1/α)``.

    Parameters
    ----------
    mechanism : Mechanism
        The family that made the release.
    x : array_like
        Releases, finite and inside ``mechanism.support``.
    level : float
        Confidence level in ``(0, 1)``.
    randomize : bool, keyword-only
        Use the randomized PIT ``U = P_q(M < x) + V P_q(M = x)`` with ``V ~ U(0, 1)`` drawn from ``rng``:
        coverage exactly ``level`` also at point masses (:func:`randomized_interval` with ``v`` given).
    rng : int, Generator, SeedSequence or None, keyword-only
        For ``randomize=True``.
    increasing : bool or None, keyword-only
        ``True`` asserts that the family is stochastically increasing when dpbook cannot prove it (a
        :class:`~dpbook.PostProcessed` with a nondecreasing ``φ``); the ``method`` then says so.

    Returns
    -------
    ConfidenceInterval
        ``(low, high, level, exact, method)``; ``exact`` is True when the coverage equals ``level``
        (randomized, or no point masses), False when it is at least ``level``.

    Raises
    ------
    ValueError
        For ``level`` outside ``(0, 1)``, ``x`` non-finite or outside the support, or a family not
        known to be stochastically increasing.

    Examples
    --------
    >>> import numpy as np
    >>> from dpbook import BIT, Laplace
    >>> ci = confidence_interval(Laplace(1.0), 0.0, 0.9)
    >>> abs(ci.high - 2.302585092994046) < 1e-12  # x + b ln(1/α)
    True
    >>> ci = confidence_interval(BIT(0.2, lower=0.0, upper=1.0), [0.0, 0.5, 1.0], 0.9)
    >>> np.round(ci.low, 4), np.round(ci.high, 4), ci.exact
    (array([0.    , 0.0395, 0.5395]), array([0.4605, 0.9605, 1.    ]), False)

    A count: the true values are the integers of the domain.

    >>> from dpbook import DiscreteBIT, DiscreteLaplace
    >>> confidence_interval(DiscreteLaplace(1.5), 0, 0.9)[:2]  # 0 ± t, α^t/(1 + α) >= 0.05 up to t = 3
    (-3.0, 3.0)
    >>> ci = confidence_interval(DiscreteBIT(1.0, lower=0, upper=10), [0, 3, 10], 0.9)
    >>> ci.low, ci.high
    (array([0., 1., 8.]), array([ 2.,  5., 10.]))
    """
    level, x, method = _prepare(mechanism, x, level, increasing)
    if randomize:
        rng = check.generator(rng)
        return _randomized(mechanism, x, rng.random(x.shape), level, method)
    if mechanism.integer_valued:  # every release is an atom: conservative
        low, high = _neyman_integer(mechanism, x, level)
        return ConfidenceInterval(
            _float(low), _float(high), level, False, method + ", integer q"
        )
    low, high = _neyman(mechanism, x, level)
    return ConfidenceInterval(
        _float(low), _float(high), level, not _has_atoms(mechanism), method
    )


def randomized_interval(mechanism, x, v, level=0.95, *, increasing=None):
    """The randomized Neyman interval at releases ``x`` with the uniforms ``v`` given.

    ``CI(x, v) = {q : α/2 <= U_q <= 1 - α/2}`` with ``U_q = P_q(M < x) + v P_q(M = x)``; for ``V ~ U(0, 1)``
    independent of the release, ``U_q`` is exactly uniform, so the coverage is exactly ``level``.
    Its ends are nondecreasing in ``x`` and in ``v`` (what :func:`interval_coverage` with
    ``randomized=True`` uses), and it lies inside the non-randomized interval.  Away from point masses
    ``v`` plays no role.  For an integer-valued family the set can be empty (the law moves past both
    ends between two neighbouring integers): it is returned as ``low = high + 1``, never widened.

    Parameters
    ----------
    mechanism, x, level, increasing
        As in :func:`confidence_interval`.
    v : array_like
        Uniforms in ``[0, 1]``, broadcast against ``x``.

    Returns
    -------
    ConfidenceInterval

    Examples
    --------
    >>> from dpbook import BIT
    >>> mech = BIT(0.2, lower=0.0, upper=1.0)
    >>> ci = randomized_interval(mech, 0.0, [0.0, 0.5, 1.0], 0.9)
    >>> ci.high.round(4), ci.exact
    (array([0.    , 0.3219, 0.4605]), True)
    """
    level, x, method = _prepare(mechanism, x, level, increasing)
    v = check.real_array("v", v)
    if ((v < 0) | (v > 1)).any():
        raise ValueError(f"v must lie in [0, 1], got {v!r}")
    return _randomized(mechanism, x, v, level, method)


def _randomized(mechanism, x, v, level, method):
    """:func:`randomized_interval` on validated arguments."""
    x, v = np.broadcast_arrays(x, v)
    if mechanism.integer_valued:
        low, high = _neyman_integer(mechanism, x, level, v)
        method += ", integer q"
    else:
        low, high = _neyman(mechanism, x, level, v)
    return ConfidenceInterval(
        _float(low), _float(high), level, True, method + ", randomized"
    )


class ExactInterval:
    """The exact interval procedure of one family at one level: ``x -> confidence_interval(mechanism, x,
    level)`` (or ``(x, v) -> randomized_interval(...)``), as one object that knows its law.

    Call it as the function it stands for.  Its use is :func:`interval_coverage` and
    :func:`expected_length`: they find the releases whose interval holds ``q`` by a search over the
    doubles that any procedure needs, and for this one they start it at the family's quantiles
    ``ppf(α/2, q)`` and ``isf(α/2, q)`` (the ends of the acceptance region of the test at ``q``), so that
    a few evaluations of the procedure replace some sixty.  The answer is the same either way: the
    searches look for the switch of the same predicate and find the same double, except where the
    procedure's computed end lies within rounding of ``q`` over a few doubles, where they may stop at
    different ones (the coverages then differ by the law's mass over those doubles, 2e-16 in the
    library's tests); only the cost changes.

    Parameters
    ----------
    mechanism : Mechanism
    level : float
        In ``(0, 1)``.
    randomized : bool, keyword-only
        The randomized interval (:func:`randomized_interval`), called as ``(x, v)``.
    increasing : bool, optional, keyword-only
        As in :func:`confidence_interval`.

    Examples
    --------
    >>> from dpbook import BIT
    >>> mech = BIT(0.2, lower=0.0, upper=1.0)
    >>> exact = ExactInterval(mech, 0.9)
    >>> round(float(interval_coverage(mech, exact, 0.2)), 9)  # conservative at the point masses
    0.95
    >>> round(float(exact(0.5).low), 4)
    0.0395
    """

    def __init__(self, mechanism, level=0.95, *, randomized=False, increasing=None):
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"mechanism must be a dpbook Mechanism, got {mechanism!r}")
        if increasing not in (None, True, False):
            raise ValueError(
                f"increasing must be None, True or False, got {increasing!r}"
            )
        self.mechanism, self.level = mechanism, _level(level)
        self.randomized, self.increasing = bool(randomized), increasing

    def __call__(self, x, v=None):
        if self.randomized:
            if v is None:
                raise ValueError("v must be given: this is the randomized interval")
            return randomized_interval(
                self.mechanism, x, v, self.level, increasing=self.increasing
            )
        if v is not None:
            raise ValueError(
                f"v must not be given to the non-randomized interval, got {v!r}"
            )
        return confidence_interval(
            self.mechanism, x, self.level, increasing=self.increasing
        )

    def __repr__(self):
        kind = ", randomized=True" if self.randomized else ""
        return f"ExactInterval({self.mechanism!r}, {self.level!r}{kind})"

    def _region(self, q):
        """The family's quantiles ``ppf(α/2, q)`` and ``isf(α/2, q)``: where the releases whose interval
        holds ``q`` begin and end, near enough to start a search from (``None`` when the family cannot
        say, e.g. ``q`` outside its domain).  Where the family's ends come from certified roots, moved
        outwards by their widths (:class:`~dpbook._kernels.inversion.Root`), the releases are moved by the
        same widths (the end ``root(x) + W`` reaches ``q`` at ``x = ppf - W``)."""
        half = (1.0 - self.level) / 2.0
        try:
            first = np.asarray(self.mechanism.ppf(half, q), dtype=float)
            last = np.asarray(self.mechanism.isf(half, q), dtype=float)
        except (ValueError, NotImplementedError):
            return None
        with np.errstate(all="ignore"):
            top = self.mechanism._quantile_in_q(first, half, 1.0, False)
            bottom = self.mechanism._quantile_in_q(last, half, 0.0, True)
            if isinstance(top, Root) and isinstance(bottom, Root):
                first = first - self._moved(first, half, top, False)
                last = last + self._moved(last, half, bottom, True)
        return first, last

    def _moved(self, x, half, root, upper):
        """How far the release moves while the end ``root(x) ± W`` moves by the width ``W``: ``W`` over the
        slope of the root in the release (a secant over ``W``; 1 for a location family, far from 1 for a
        truncation near its bounds), ``W`` where the secant says nothing."""
        w = np.nan_to_num(root.width, nan=0.0, posinf=0.0)
        other = self.mechanism._quantile_in_q(
            x + w if upper else x - w, half, 0.0 if upper else 1.0, upper
        )
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = (other.root - root.root if upper else root.root - other.root) / w
            return np.where(np.isfinite(slope) & (slope > 0.0), w / slope, w)


# --------------------------------------------------------------------------------------------------
# exact coverage and expected length of any interval procedure


def _ends(interval, x, *extra):
    out = interval(x, *extra)
    return np.asarray(out[0], dtype=float), np.asarray(out[1], dtype=float)


def _switch(pred, shape, lo, hi):
    """Smallest double ``x`` in ``[lo, hi]`` with ``pred(x)`` (monotone false -> true), else ``+inf``."""
    x = _invert_cdf(lambda t, _: pred(t), np.zeros(shape), _below(lo), hi)
    if np.isfinite(hi):
        ok = np.asarray(pred(np.where(x == hi, hi, x)), dtype=bool) | (x != hi)
        x = np.where(ok, x, np.inf)
    return x


def _both_ends(ends, q, lo, hi, guess=None):
    """The first argument in ``[lo, hi]`` where ``high >= q`` and the last where ``low <= q``, for
    ``ends(t, sel) -> (low, high)`` nondecreasing in ``t`` (``sel``: the flat positions of the ``2 q.size``
    searches asked, ``None`` for all); both searches run as one batch (one call of ``ends`` per step).
    Without a ``guess`` each is a bisection over the doubles (64 halvings); with ``guess = (g0, g1)``
    (near the first and the last argument, e.g. a family's quantiles) a gallop from it
    (:func:`_first_true`) finds the same switches in a few steps (the same doubles where the
    predicate is monotone to the last bit)."""
    n = q.size
    flat = q.ravel()
    if guess is None:

        def pred(t):
            low, high = ends(t, None)
            return np.concatenate([high[:n] >= flat, low[n:] > flat])

        found = _switch(pred, (2 * n,), lo, hi)
    else:
        both = np.concatenate([flat, flat])
        upper = np.arange(2 * n) >= n

        def reached(t, sel):
            low, high = ends(t, sel)
            at, up = (both, upper) if sel is None else (both[sel], upper[sel])
            return np.where(up, low > at, high >= at)

        g = np.concatenate(
            [np.broadcast_to(g_, q.shape).ravel() for g_ in guess]
        ).astype(float)
        g[n:] = np.nextafter(
            g[n:], np.inf
        )  # the second search looks for the first low > q
        found = np.full(2 * n, np.nan)
        # first the finite ends of the support (one call): where the interval already holds q at
        # ``lo`` (the first search) or still does at ``hi`` (the second), the answer is that end, which
        # a start at the quantiles would reach only after a long walk (the procedure's ends are cut
        # to the domain, its acceptance region to the support)
        if np.isfinite(lo):
            sel = np.arange(n)
            found[sel[np.asarray(reached(np.full(n, lo), sel), dtype=bool)]] = lo
        if np.isfinite(hi):
            sel = np.arange(n, 2 * n)
            found[sel[~np.asarray(reached(np.full(n, hi), sel), dtype=bool)]] = np.inf
        rest = np.flatnonzero(np.isnan(found))
        if rest.size:

            def reached_rest(t, sel):
                return reached(t, rest if sel is None else rest[sel])

            found[rest] = _first_true(
                reached_rest, (rest.size,), _below(lo), hi, np.clip(g[rest], lo, hi)
            )
            # as _switch: +inf where it fails at hi too (the second search was asked at hi above)
            top = rest[(found[rest] == hi) & (rest < n)]
            if top.size and np.isfinite(hi):
                ok = np.asarray(reached(np.full(top.size, hi), top), dtype=bool)
                found[top[~ok]] = np.inf
    first, after = found[:n].reshape(q.shape), found[n:].reshape(q.shape)
    return first, np.where(np.isinf(after), hi, np.nextafter(after, -np.inf))


def _accepted(interval, q, lo, hi, extra=(), guess=None):
    """``[x0, x1]``: the releases whose interval holds ``q`` (ends nondecreasing in ``x``); ``guess``:
    see :func:`_both_ends`."""
    extra = tuple(np.concatenate([e.ravel()] * 2) for e in extra)

    def ends(t, sel):
        if sel is None:
            return _ends(interval, t, *extra)
        return _ends(interval, t, *(e[sel] for e in extra))

    return _both_ends(ends, q, lo, hi, guess)


def _mass(mechanism, q, x0, x1):
    """``P_q(x0 <= M <= x1)`` as ``1 - P(M < x0) - P(M > x1)`` (0 when ``x0 > x1``)."""
    below = np.where(
        np.isinf(x0),
        1.0,
        np.asarray(
            mechanism.cdf(np.where(np.isinf(x0), 0.0, np.nextafter(x0, -np.inf)), q)
        ),
    )
    above = np.asarray(mechanism.sf(np.where(np.isinf(x1), 0.0, x1), q))
    above = np.where(np.isinf(x1), 0.0, above)
    return np.where(x0 <= x1, np.maximum(1.0 - below - above, 0.0), 0.0)


def _atoms(mechanism, q):
    """``atoms(q)`` for an array ``q``; a family that lists its atoms one true value at a time (a rounded
    release) gets the union of their places, with the masses from its vectorized ``pmf``."""
    if q.ndim == 0:
        return mechanism.atoms(q)
    try:
        return mechanism.atoms(q)
    except ValueError:
        places = sorted({float(a) for t in q.ravel() for a, _ in mechanism.atoms(t)})
    return [(a, np.asarray(mechanism.pmf(a, q), dtype=float)) for a in places]


def _own_share(interval, goal):
    """For the exact randomized interval (an :class:`ExactInterval`), ``a -> {v : low(a, v) <= goal <= high(a,
    v)}``'s length from its own law, without calling it: the interval at ``(a, v)`` holds ``goal`` exactly
    where ``α/2 <= U <= 1 - α/2`` for ``U = P_goal(M < a) + v P_goal(M = a)`` (its definition), linear in ``v``,
    so the set is ``[(α/2 - P_<)/P_=, (1 - α/2 - P_<)/P_=]`` cut to ``[0, 1]``.  Only for ``goal`` strictly
    inside the domain (at an end the interval may be that end alone, its degenerate answer); NaN elsewhere,
    and ``None`` for any other procedure (both then searched).  A closed-form end moved out by its proved
    width accepts at most the ``v`` of a transform within that width's mass of ``α/2`` more: the coverage moves
    by that mass (rounding), as for the search."""
    if not (isinstance(interval, ExactInterval) and interval.randomized):
        return None
    mech, half = interval.mechanism, (1.0 - interval.level) / 2.0
    lo, hi = (float(t) for t in mech.domain)
    inner = (goal > lo) & (goal < hi)
    if not inner.any():
        return None
    g = np.where(
        inner,
        goal,
        lo + 1.0 if np.isfinite(lo) else (hi - 1.0 if np.isfinite(hi) else 0.0),
    )

    def share(a):
        below = np.asarray(mech.cdf(np.nextafter(a, -np.inf), g), dtype=float)
        mass = np.maximum(np.asarray(mech.cdf(a, g), dtype=float) - below, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            v_lo = np.where(
                mass > 0,
                (half - below) / mass,
                np.where(below >= half, -np.inf, np.inf),
            )
            v_hi = np.where(
                mass > 0,
                (1.0 - half - below) / mass,
                np.where(below <= 1.0 - half, np.inf, -np.inf),
            )
        out = np.clip(np.clip(v_hi, 0.0, 1.0) - np.clip(v_lo, 0.0, 1.0), 0.0, 1.0)
        return np.where(inner, out, np.nan)

    return share


def interval_coverage(mechanism, interval, q, *, randomized=False, target=None):
    """The exact coverage ``P_q(low(M) <= q <= high(M))`` of an interval procedure, by summing the law.

    With ends nondecreasing in the release, the releases whose interval holds ``q`` form one interval
    ``[x0, x1]``: ``x0`` is the first double of the support with ``high(x) >= q`` and ``x1`` the last
    with ``low(x) <= q``, both found by exact bisection over the doubles; the coverage is
    ``1 - P_q(M < x0) - P_q(M > x1)`` from the family's ``cdf``/``sf`` (point masses included).  No
    simulation; exact to the rounding of the law (the one-double ambiguity at ``x0`` and ``x1`` carries
    the density times one ulp).

    With ``randomized=True`` the procedure is ``interval(x, v)`` with a uniform ``v`` (ends
    nondecreasing in ``x`` and ``v``, as :func:`randomized_interval`): the continuous part is taken at
    ``v = 1/2``, and each point mass ``a`` of the family contributes ``P_q(M = a)`` times the length of
    ``{v : low(a, v) <= q <= high(a, v)}``, found by bisection in ``v``, or, for the exact randomized
    interval itself (an :class:`ExactInterval`) at a target inside its domain, read off its law: the
    ``v`` where ``α/2 <= P(M < a) + v P(M = a) <= 1 - α/2``, an interval of ``v`` in closed form.

    Parameters
    ----------
    mechanism : Mechanism
        The family of the release.
    interval : callable
        ``x -> (low, high, ...)`` vectorized over ``x`` (a :class:`ConfidenceInterval` qualifies);
        ``(x, v) -> ...`` with ``randomized=True``.
    q : array_like
        True values (vectorized).
    randomized : bool, keyword-only
    target : array_like, optional, keyword-only
        The value the interval should hold, when it is not the mechanism's input ``q`` (broadcast
        with ``q``): the coverage is then ``P_q(low(M) <= target <= high(M))``.  A sampled
        statistic uses it (:func:`proportion_coverage`: the mechanism sees ``k/n``, the interval is
        for the population's proportion).

    Returns
    -------
    float or ndarray
        Shaped like ``q``.

    Examples
    --------
    >>> from dpbook import BIT, Laplace
    >>> round(interval_coverage(Laplace(1.0), lambda x: laplace_interval(x, 1.0, 0.9), 0.3), 12)
    0.9
    >>> mech = BIT(0.2, lower=0.0, upper=1.0)
    >>> round(interval_coverage(mech, lambda x: confidence_interval(mech, x, 0.9), 0.2), 9)  # conservative
    0.95
    >>> round(interval_coverage(mech, lambda x, v: randomized_interval(mech, x, v, 0.9), 0.2, randomized=True), 9)
    0.9
    """
    if not callable(interval):
        raise ValueError(
            f"interval must be a callable x -> (low, high), got {interval!r}"
        )
    q = mechanism._q(q)
    if target is None:
        goal = q
    else:
        goal = check.finite_array("target", target)
        goal, q = np.broadcast_arrays(goal, q)
        goal, q = goal.copy(), q.copy()
    if mechanism.integer_valued:
        with np.errstate(over="ignore", under="ignore"):
            return _float(_integer_coverage(mechanism, interval, q, goal, randomized))
    lo, hi = (float(t) for t in mechanism.support)
    guess = interval._region(goal) if isinstance(interval, ExactInterval) else None
    with np.errstate(over="ignore", under="ignore"):
        if not randomized:
            x0, x1 = _accepted(interval, goal, lo, hi, guess=guess)
            return _float(_mass(mechanism, q, x0, x1))
        half = np.full(q.shape, 0.5)
        x0, x1 = _accepted(interval, goal, lo, hi, (half,), guess)
        total = _mass(mechanism, q, x0, x1)
        try:
            atoms = _atoms(mechanism, q)
        except NotImplementedError:
            raise ValueError(
                f"mechanism {type(mechanism).__name__} has no computed point masses: "
                "randomized coverage needs them"
            ) from None
        own = _own_share(interval, goal)
        for a, m in atoms:
            m = np.broadcast_to(np.asarray(m, dtype=float), q.shape)
            at = np.full(q.shape, float(a))
            inside = (x0 <= a) & (a <= x1)
            share = np.full(goal.shape, np.nan) if own is None else own(a)
            todo = np.flatnonzero(np.isnan(share))
            if todo.size:
                both = np.concatenate([at.ravel()[todo]] * 2)
                v0, v1 = _both_ends(
                    lambda v, _: _ends(interval, both, v), goal.ravel()[todo], 0.0, 1.0
                )
                share.reshape(-1)[todo] = np.clip(v1 - np.minimum(v0, 1.0), 0.0, 1.0)
            total = total + m * (share - inside)
        return _float(np.clip(total, 0.0, 1.0))


#: releases of an integer-valued family covered only for some ``v`` (randomized coverage) that one call
#: may sum over, and integers :func:`expected_length` may sum over
_MAX_PARTIAL = 2**16


_MAX_TERMS = 2**22


#: the tail mass :func:`expected_length` leaves out at each end for an integer-valued family
_TAIL = 2.0**-80


def _int_accepted(interval, goal, lo, hi, extra=()):
    """``(k0, k1)``: the first integer release in ``[lo, hi]`` whose interval has ``high >= goal`` (``+inf``
    if none) and the last whose interval has ``low <= goal`` (``hi`` if every one does; ``lo - 1`` if none);
    ends nondecreasing in ``x``.  One batch of bisections over the integers."""
    n = goal.size
    flat = goal.ravel()
    extra = tuple(np.concatenate([e.ravel()] * 2) for e in extra)
    goals = np.concatenate([flat] * 2)
    first = (
        np.arange(2 * n) < n
    )  # the first half asks for high >= goal, the second for low > goal

    def pred(t, sel):
        low, high = _ends(interval, t, *(_pick(e, sel) for e in extra))
        g, f = _pick(goals, sel), _pick(first, sel)
        return np.where(f, high >= g, low > g)

    k, found = _int_search(pred, (2 * n,), lo, hi, np.round(np.concatenate([flat] * 2)))
    k0 = np.where(found[:n], k[:n], np.inf).reshape(goal.shape)
    k1 = np.where(found[n:], k[n:] - 1.0, hi).reshape(goal.shape)
    return k0, k1


def _int_mass(mechanism, q, k0, k1):
    """``P_q(k0 <= M <= k1)`` for integers (``k0 = ±inf``, ``k1 = ±inf`` allowed)."""
    below = np.where(
        np.isinf(k0),
        np.where(k0 > 0, 1.0, 0.0),
        np.asarray(mechanism.cdf(np.where(np.isinf(k0), 0.0, k0 - 1.0), q)),
    )
    above = np.where(
        np.isinf(k1),
        np.where(k1 > 0, 0.0, 1.0),
        np.asarray(mechanism.sf(np.where(np.isinf(k1), 0.0, k1), q)),
    )
    return np.where(k0 <= k1, np.maximum(1.0 - below - above, 0.0), 0.0)


def _integer_coverage(mechanism, interval, q, goal, randomized):
    """:func:`interval_coverage` for an integer-valued family: the mass of the accepted integer releases.

    Randomized: the releases covered for every ``v`` (``high(k, 0) >= goal`` and ``low(k, 1) <= goal``) give
    their whole mass; those covered for some ``v`` only (at most ``2^16`` in one call) give ``P_q(M = k)``
    times the length of ``{v : low(k, v) <= goal <= high(k, v)}``, found by bisection in ``v``."""
    lo, hi = _int_range(*mechanism.support)
    if not randomized:
        k0, k1 = _int_accepted(interval, goal, lo, hi)
        return _int_mass(mechanism, q, k0, k1)
    zero, one = np.zeros(goal.shape), np.ones(goal.shape)
    some0, _ = _int_accepted(
        interval, goal, lo, hi, (one,)
    )  # high(k, 1) >= goal from here
    _, some1 = _int_accepted(
        interval, goal, lo, hi, (zero,)
    )  # low(k, 0) <= goal up to here
    full0, _ = _int_accepted(interval, goal, lo, hi, (zero,))
    _, full1 = _int_accepted(interval, goal, lo, hi, (one,))
    total = _int_mass(mechanism, q, full0, full1)
    # the partial releases: [some0, some1] minus [full0, full1]
    a0, a1 = some0, some1
    empty_full = full0 > full1
    left_end = np.where(empty_full, a1, np.minimum(full0 - 1.0, a1))
    right_start = np.where(empty_full, np.inf, np.maximum(full1 + 1.0, a0))
    n_left = np.where(np.isfinite(a0) & (left_end >= a0), left_end - a0 + 1.0, 0.0)
    n_right = np.where(
        np.isfinite(right_start) & (a1 >= right_start), a1 - right_start + 1.0, 0.0
    )
    count = float(np.sum(n_left) + np.sum(n_right))
    if count > _MAX_PARTIAL:
        raise ValueError(
            f"the interval procedure covers {count:.3g} releases for only some v; the limit is "
            f"{_MAX_PARTIAL} (randomized coverage of an integer-valued family)"
        )
    if count == 0:
        return total
    idx, ks = [], []
    for i in range(goal.size):
        for start, n in (
            (a0.flat[i], n_left.flat[i]),
            (right_start.flat[i], n_right.flat[i]),
        ):
            if n > 0:
                ks.append(start + np.arange(n))
                idx.append(np.full(int(n), i))
    idx, ks = np.concatenate(idx), np.concatenate(ks)
    g = goal.ravel()[idx]
    both = np.concatenate([ks] * 2)
    v0, v1 = _both_ends(lambda v, _: _ends(interval, both, v), g, 0.0, 1.0)
    share = np.clip(v1 - np.minimum(v0, 1.0), 0.0, 1.0)
    mass = np.asarray(mechanism.pmf(ks, q.ravel()[idx]), dtype=float)
    add = np.bincount(idx, weights=mass * share, minlength=goal.size).reshape(
        goal.shape
    )
    return np.clip(total + add, 0.0, 1.0)


def _integer_length(mechanism, interval, q):
    """:func:`expected_length` for an integer-valued family: ``Σ_k P_q(M = k) (high(k) - low(k))`` over the
    integers between the ``2^-80`` quantile and the ``1 - 2^-80`` one (the rest, at most ``2^-79`` of the
    mass, is left out)."""
    flat = q.ravel()
    lo, hi = _int_range(*mechanism.support)
    k_lo = np.maximum(np.asarray(mechanism.ppf(_TAIL, flat), dtype=float), lo)
    k_hi = np.minimum(np.asarray(mechanism.isf(_TAIL, flat), dtype=float), hi)
    n = k_hi - k_lo + 1.0
    if float(n.sum()) > _MAX_TERMS:
        raise ValueError(
            f"expected_length would sum {float(n.sum()):.3g} releases of {type(mechanism).__name__}; "
            f"the limit is {_MAX_TERMS}"
        )
    idx = np.repeat(np.arange(flat.size), n.astype(np.int64))
    ks = k_lo[idx] + (
        np.arange(idx.size) - np.repeat(np.cumsum(n) - n, n.astype(np.int64))
    )
    uniq, inv = np.unique(ks, return_inverse=True)
    low, high = _ends(interval, uniq)
    with np.errstate(invalid="ignore"):
        width = np.where(high > low, high - low, 0.0)[inv]
    mass = np.asarray(mechanism.pmf(ks, flat[idx]), dtype=float)
    return np.bincount(idx, weights=mass * width, minlength=flat.size).reshape(q.shape)


#: Gauss–Legendre nodes for :func:`expected_length`: 48 panels of 16 nodes on [0, 1], refined
#: geometrically towards both ends (where the quantile function runs off)
def _length_nodes(panels=48, order=16):
    t, w = np.polynomial.legendre.leggauss(order)
    half = panels // 2
    edges = np.concatenate([[0.0], 0.5 * np.geomspace(1e-12, 1.0, half)])
    edges = np.concatenate([edges, 1.0 - edges[-2::-1]])
    a, b = edges[:-1, None], edges[1:, None]
    return ((a + b) / 2 + (b - a) / 2 * t).ravel(), ((b - a) / 2 * w).ravel()


_U, _W = _length_nodes()


def expected_length(mechanism, interval, q):
    """``E_q[high(M) - low(M)]``: the expected length of an interval procedure at true values ``q``.

    Computed as ``∫_0^1 len(ppf(u, q)) du`` (the quantile transform, which carries the point masses)
    with composite Gauss–Legendre quadrature on 48 panels of 16 nodes, geometrically refined towards
    ``u = 0`` and ``1``; the part ``u < 5e-13`` at each end is dropped (below ``1e-12`` times the longest
    interval).  Numerical: accurate to about ``1e-6`` relative for the families of dpbook.

    Parameters
    ----------
    mechanism : Mechanism
    interval : callable
        ``x -> (low, high, ...)`` vectorized over ``x``.
    q : array_like
        True values.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from dpbook import Laplace
    >>> L = expected_length(Laplace(1.0), lambda x: laplace_interval(x, 1.0, 0.9), 0.0)
    >>> abs(L - 2 * 2.302585092994046) < 1e-9
    True
    """
    if not callable(interval):
        raise ValueError(
            f"interval must be a callable x -> (low, high), got {interval!r}"
        )
    q = mechanism._q(q)
    if mechanism.integer_valued:
        return _float(_integer_length(mechanism, interval, q))
    x = np.asarray(mechanism.ppf(_U[:, None], q.ravel()[None, :]))
    low, high = _ends(interval, x)
    with np.errstate(invalid="ignore"):
        width = np.where(high > low, high - low, 0.0)
    return _float((_W @ width).reshape(q.shape))


# --------------------------------------------------------------------------------------------------
# the intervals it is compared with


def _alpha(level):
    return 1.0 - _level(level)


def laplace_interval(x, scale, level=0.95):
    """Google's interval for an *unclamped* Laplace release: ``x ± b ln(1/α)``.

    Google's differential-privacy library reports the Laplace release without clamping it to the
    bounds, with this interval (``P(|L_b| > b ln(1/α)) = α``): exact coverage ``level`` for
    :class:`~dpbook.Laplace`, but the release and the interval may leave the bounds.

    Returns
    -------
    (low, high) : pair of float or ndarray

    Examples
    --------
    >>> laplace_interval(0.0, 1.0, 0.5)
    (-0.6931471805599453, 0.6931471805599453)
    """
    x = check.finite_array("x", x)
    half = check.positive("scale", scale) * -np.log(_alpha(level))
    return _float(x - half), _float(x + half)


def clipped_laplace_interval(x, scale, level=0.95, *, lower=-np.inf, upper=np.inf):
    """The Laplace interval ``x ± b ln(1/α)`` intersected with ``[lower, upper]``.

    What a user does with a clamped or truncated release who knows only the Laplace scale: the
    textbook interval, cut to the bounds.  It ignores the point masses and the truncation, so it is
    not valid for bounded mechanisms (the book measures by how much with :func:`interval_coverage`).
    If the whole interval falls outside the bounds it collapses to the nearer bound.

    Returns
    -------
    (low, high) : pair of float or ndarray

    Examples
    --------
    >>> clipped_laplace_interval(0.1, 1.0, 0.5, lower=0.0, upper=1.0)
    (0.0, 0.7931471805599453)
    """
    lower, upper = check.bounds(lower, upper)
    low, high = laplace_interval(x, scale, level)
    return _float(np.clip(low, lower, upper)), _float(np.clip(high, lower, upper))


def plugin_interval(mechanism, x, level=0.95):
    """The plug-in (Wald) interval ``x ± z_{1-α/2} sd(M(q̂))`` with ``q̂ = x`` clipped to the domain.

    The large-sample interval a user computes who treats the release as the truth and knows the
    mechanism's noise: the normal quantile times the exact standard deviation of the release at the
    estimate (:meth:`Mechanism.variance`).  It ignores the bias and the skew near the bounds, so it
    under-covers there (Chapter 5's interval, with the mechanism's noise in place of the sampling
    noise).  Its ends need not be monotone in ``x``.

    Returns
    -------
    (low, high) : pair of float or ndarray

    Examples
    --------
    >>> from dpbook import Laplace
    >>> lo, hi = plugin_interval(Laplace(1.0), 0.0, 0.95)
    >>> round(hi, 6)  # 1.959964 * sqrt(2)
    2.771808
    """
    x = check.finite_array("x", x)
    lo, hi = mechanism.domain
    qhat = np.clip(
        x,
        np.nextafter(lo, np.inf) if not mechanism.accepts(lo) else lo,
        np.nextafter(hi, -np.inf) if not mechanism.accepts(hi) else hi,
    )
    z = float(special.ndtri(1.0 - _alpha(level) / 2.0))
    half = z * np.sqrt(np.asarray(mechanism.variance(qhat)))
    return _float(x - half), _float(x + half)


# --------------------------------------------------------------------------------------------------
# a proportion estimated from a sample, then released


def _no_counts(mechanism):
    if mechanism.integer_valued:
        raise ValueError(
            f"mechanism {type(mechanism).__name__} releases integers, not a proportion k/n in [0, 1]: "
            "for a released count use confidence_interval on the count"
        )


def proportion_interval(mechanism, x, n, level=0.95):
    """An interval for a population proportion ``π`` from one release ``x = M(k/n)``, ``k ~ Binomial(n, π)``.

    The mechanism sees the sample proportion ``k/n``, not ``π``: the interval must hold two errors, the
    noise and the sampling.  It splits ``α = 1 - level`` between them (Bonferroni): the exact interval
    ``[l, h]`` of :func:`confidence_interval` for ``k/n`` at level ``1 - α/2``, then the Clopper–Pearson
    interval at level ``1 - α/2`` evaluated at the counts ``n l`` and ``n h`` (its lower end
    ``Beta.ppf(α/4, k, n - k + 1)`` and upper end ``Beta.ppf(1 - α/4, k + 1, n - k)`` are
    nondecreasing in ``k``, so evaluating them at ``n l <= k <= n h`` only widens it).  Valid:
    ``P(π ∉ I) <= P(k/n ∉ [l, h]) + P(π ∉ CP(k)) <= α/2 + α/2``.  Conservative by construction (each
    part is); :func:`proportion_coverage` gives its exact coverage.  This is the interval of
    Chapter 5's exact column.

    Parameters
    ----------
    mechanism : Mechanism
        A stochastically increasing family on ``[0, 1]`` (e.g. ``BIT(b, lower=0, upper=1)``).
    x : array_like
        Releases of the sample proportion.
    n : int
        The sample size (``n >= 1``).
    level : float
        In ``(0, 1)``.

    Returns
    -------
    ConfidenceInterval
        ``exact`` is False (the coverage is at least ``level``).

    Examples
    --------
    >>> from dpbook import BIT
    >>> ci = proportion_interval(BIT(0.02, lower=0.0, upper=1.0), 0.3, 500, 0.9)
    >>> bool(ci.low < 0.3 < ci.high), bool(0.0 <= ci.low and ci.high <= 1.0)
    (True, True)
    """

    level = _level(level)
    n = check.count("n", n, 1)
    _no_counts(mechanism)
    lo_d, hi_d = (float(t) for t in mechanism.domain)
    if lo_d < 0.0 or hi_d > 1.0:
        raise ValueError(
            f"mechanism's domain must lie in [0, 1] for a proportion, got {mechanism.domain!r}"
        )
    half = (1.0 - level) / 2.0
    ci = confidence_interval(mechanism, x, 1.0 - half)
    k_low = np.asarray(n * np.asarray(ci.low, dtype=float), dtype=float)
    k_high = np.asarray(n * np.asarray(ci.high, dtype=float), dtype=float)
    low, high = np.zeros_like(k_low), np.ones_like(k_high)
    up, down = k_low > 0.0, k_high < n
    low[up] = stats.beta.ppf(half / 2.0, k_low[up], n - k_low[up] + 1.0)
    high[down] = stats.beta.ppf(1.0 - half / 2.0, k_high[down] + 1.0, n - k_high[down])
    return ConfidenceInterval(
        _float(low),
        _float(high),
        level,
        False,
        f"{ci.method} for k/n at {1.0 - half:g}, then Clopper-Pearson (Bonferroni)",
    )


def proportion_coverage(mechanism, interval, pi, n):
    """The exact coverage ``P(low(M) <= π <= high(M))`` of an interval for a population proportion.

    The release is ``M(k/n)`` with ``k ~ Binomial(n, π)``; the coverage is
    ``Σ_k Binomial(k; n, π) P_{k/n}(low(M) <= π <= high(M))``, each term by :func:`interval_coverage`
    with ``target=π`` (exact: no simulation).

    Parameters
    ----------
    mechanism : Mechanism
        The family applied to the sample proportion.
    interval : callable
        ``x -> (low, high, ...)``, ends nondecreasing in ``x`` (as for :func:`interval_coverage`).
    pi : float
        The population proportion, in ``[0, 1]``.
    n : int
        The sample size.

    Returns
    -------
    float

    Examples
    --------
    >>> from dpbook import BIT
    >>> mech = BIT(0.02, lower=0.0, upper=1.0)
    >>> cover = proportion_coverage(mech, lambda x: proportion_interval(mech, x, 200, 0.9), 0.3, 200)
    >>> bool(cover >= 0.9)
    True
    """

    n = check.count("n", n, 1)
    _no_counts(mechanism)
    pi = float(check.finite_array("pi", pi))
    if not 0.0 <= pi <= 1.0:
        raise ValueError(f"pi must be in [0, 1], got {pi!r}")
    k = np.arange(n + 1)
    weight = stats.binom.pmf(k, n, pi)
    keep = weight > 0.0
    cover = interval_coverage(
        mechanism, interval, k[keep] / n, target=np.full(keep.sum(), pi)
    )
    return float(np.clip(np.sum(weight[keep] * np.asarray(cover)), 0.0, 1.0))
