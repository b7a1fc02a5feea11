"""Calibration: the noise scale that gives a mechanism a privacy target.

One home for every scale of the book:

* :func:`laplace_scale`: ``b = Δ/ε`` for the Laplace mechanism and its post-processings (BIT, the
  translated ramps) (McGlinchey–Mason Prop. 1);
* :func:`log_laplace_scale`: ``b = K/ε`` for the multiplicative mechanism (McGlinchey–Mason §3.1);
* :func:`truncated_scale`: the smallest uniform scale for which truncation is ε-DP, from the exact
  audit (``dpbook.audit``);
* :func:`profile_scale`: the smallest scale at which any family is (ε, δ)-DP, from its certified
  privacy profile (:func:`dpbook.privacy_profile`);
* Croft, Sack & Shi's scales: :func:`croft_boundary_scale` (their (32)), :func:`croft_scale` (their (33),
  used by :class:`~dpbook.CroftLaplace`), :func:`croft_uniform_scale` (Section 4.2, used with
  :class:`~dpbook.Normalized`), with :func:`croft_lower_bounds` and :func:`croft_table2` behind the
  book's tables, and the validation of a feasible set (a union of intervals) they share with
  :class:`~dpbook.Normalized`.

This module imports the auditor and the privacy interface, no mechanism module: the mechanisms may
import it.
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np
from scipy import optimize, special

from .._kernels import validation as check
from .._kernels.arrays import _float
from .._kernels.croft import _SIGMA1, _allowed, _croft_scale, _eps_delta
from ..audit._profile import privacy_profile
from ..audit._search import _best_of, privacy_loss
from ..audit.description import corner_pairs, union_description
from ..families.clamping import BIT
from ..families.truncation import Truncated
from ..inference.intervals import confidence_interval, expected_length
from ..mechanism import IntervalMechanism, Mechanism

__all__ = [
    "croft_boundary_scale",
    "croft_lower_bounds",
    "croft_scale",
    "croft_table2",
    "croft_uniform_scale",
    "laplace_scale",
    "log_laplace_scale",
    "truncated_scale",
    "profile_scale",
    "required_scale",
    "required_epsilon",
    "restriction_ramp_bias_ratio",
]


def _scale(name_eps, epsilon, name_size, size):
    epsilon = check.positive(name_eps, epsilon)
    size = check.positive(name_size, size)
    b = size / epsilon
    if not (math.isfinite(b) and b > 0):
        raise ValueError(
            f"{name_size}/{name_eps} = {size!r}/{epsilon!r} is not a positive finite float"
        )
    return b


def laplace_scale(epsilon, sensitivity):
    """The scale ``b = Δ/ε`` that makes the Laplace mechanism ε-DP (McGlinchey–Mason Prop. 1).

    >>> laplace_scale(0.5, 1.0)
    2.0
    """
    return _scale("epsilon", epsilon, "sensitivity", sensitivity)


def log_laplace_scale(epsilon, K):
    """The scale ``b = K/ε`` of the log-Laplace mechanism (McGlinchey–Mason §3.1, assumption (10)).

    Parameters
    ----------
    epsilon : float
        Privacy parameter ``ε > 0``.
    K : float
        The relative-change bound of assumption (10), ``K > 0``.

    Examples
    --------
    >>> log_laplace_scale(2.0, 0.5)
    0.25
    """
    return _scale("epsilon", epsilon, "K", K)


def one_sided_truncation_loss(t):
    """``t + log(2 - e^{-t})``, the loss of one-sided truncation at ``t = Δ/b``, without cancellation.

    ``log(2 - e^{-t}) = log1p(-expm1(-t))``: for ``t = 1e-16`` the naive form returns ``1e-16`` (the
    ``1`` absorbs ``t``), the truth is ``2e-16``.
    """
    return t + math.log1p(-math.expm1(-t))


def truncated_scale(epsilon, sensitivity, lower=0.0, upper=np.inf):
    """The smallest uniform scale ``b`` for which ``Truncated(b, lower, upper)`` is ε-DP on ``[lower, upper]``.

    Solves ``privacy_loss(Truncated(b, lower, upper), Δ) = ε`` with Brent's bracketing method.
    One-sided (Liu Def. 2(a) with one infinite bound; McGlinchey–Mason eq. (8)) this is ``b = Δ/t``
    with ``t + log(2 - e^{-t}) = ε``: ``1.612605 Δ/ε`` at ``ε = 1``, between Liu's ``Δ/ε`` (not
    ε-DP) and McGlinchey–Mason's Cor. 1 ``2Δ/ε`` (ε-DP but loose).

    The loss decreases strictly in ``b``, so the root is unique.  For ``l <= q1 < q2 <= u`` the
    worst output is at ``l`` and the log-ratio is ``∫_{q1}^{q2} ψ'(q) dq`` with
    ``ψ'(q) = (2/b) / (1 + R)``, ``R = (1 - e^{-A/b}) / (1 - e^{-B/b})``, ``A = q - l``, ``B = u - q``
    (the other order is its mirror image).  With ``λ = 1/b``,
    ``d log ψ'/dλ = (1/λ) [1 - R/(1 + R) (k(λA) - k(λB))] > 0`` where ``k(y) = y/(e^y - 1)`` lies in
    ``(0, 1]``; so ``ψ'`` falls pointwise as ``b`` grows, hence every pair's loss and their supremum.
    The bracket is ``[Δ/ε, 2Δ/ε]`` (halving the lower end while its loss is below ε): at ``2Δ/ε`` the
    loss is at most ``ε`` by McGlinchey–Mason's Prop. 2 argument.  The root is found in ``t = Δ/b``
    to a relative tolerance (so ``ε = 1e-15`` is solved as accurately as ``ε = 1``).

    Parameters
    ----------
    epsilon : float
        Target ``ε > 0``.
    sensitivity : float
        ``Δ > 0``.
    lower, upper : float
        The truncation interval (either end may be infinite).

    Returns
    -------
    float

    Examples
    --------
    >>> round(truncated_scale(1.0, 1.0), 6)
    1.612605
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.positive("sensitivity", sensitivity)
    lower, upper = check.bounds(lower, upper)
    return _truncated_scale(epsilon, delta, lower, upper)


@functools.lru_cache(maxsize=1024)
def _truncated_scale(epsilon, delta, lower, upper):
    if np.isinf(lower) and np.isinf(upper):
        return _scale("epsilon", epsilon, "sensitivity", delta)
    if np.isinf(lower) != np.isinf(upper):
        # one-sided: the worst case is the corner pair, loss t + log(2 - e^{-t}) with t = Δ/b,
        # increasing in t from 0, between ε/2 and ε; solved directly (tests check it against the audit)
        t = optimize.brentq(
            lambda t: one_sided_truncation_loss(t) - epsilon,
            0.5 * epsilon,
            epsilon,
            xtol=1e-300,
            rtol=4 * np.finfo(float).eps,
            maxiter=500,
        )
        return _scale("epsilon", t, "sensitivity", delta)

    def excess(t):  # in t = Δ/b: the loss increases with t
        b = delta / t
        desc = union_description(
            b, [lower], [upper], worst_pairs=corner_pairs((lower, upper))
        )
        return (
            _best_of(
                desc, desc.worst_pairs(lower, upper, delta), (-math.inf, math.inf)
            ).epsilon
            - epsilon
        )

    hi = epsilon
    lo = epsilon / 2
    while excess(hi) < 0:  # a short interval needs less noise than Δ/ε
        lo, hi = hi, 2 * hi
    t = optimize.brentq(
        excess, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500
    )
    return _scale("epsilon", t, "sensitivity", delta)


#: the relative width of the bracket :func:`profile_scale` returns the upper end of
_PROFILE_RTOL = 1e-8


def profile_scale(make, sensitivity, epsilon, delta, *, low=None, high=None):
    """The smallest scale ``s`` at which ``make(s)`` is (ε, δ)-DP by its certified privacy profile.

    Finds ``s`` with :func:`dpbook.privacy_profile` ``(make(s), sensitivity, epsilon) <= delta``: a failing and a
    passing scale are bracketed (from ``low``/``high`` when given, else from ``s = Δ`` in steps of 4), then
    Brent's method on ``log δ_s(ε) - log δ`` in ``log s`` narrows the bracket to ``1e-8`` relative.  Every scale
    evaluated is kept, and the one returned is the smallest passing one above the largest failing one: the
    profile was evaluated there and is at most ``delta`` (certified: the profile is never below the truth),
    and a scale within ``1e-8`` relative below it failed.  Each step is one profile at one ε (about 10 to 20 of
    them in all).

    Where δ(ε) is not monotone in the scale.  For the Gaussian and Laplace mechanisms δ(ε) falls as the scale
    grows: the larger scale's noise is the smaller's plus independent noise, a post-processing (for Laplace,
    ``b1 < b2``, the added noise is 0 with probability ``(b1/b2)²`` and ``Laplace(b2)`` otherwise, as the
    characteristic functions show).  For a law truncated or
    normalized to a range (:class:`~dpbook.GaussianTruncated`, :class:`~dpbook.Normalized`,
    :class:`~dpbook.Truncated`) no such argument holds: the normalizer's share of the loss need not fall.
    What is returned is then the passing end of the bracket's last crossing: smaller scales than those the
    search evaluated are not examined, and a larger scale is not proved to pass.  Measured with ``Δ = 1`` at
    (ε, δ) = (0.5, 1e-3), (1, 1e-5) and (2, 1e-6): the certified profiles of :class:`~dpbook.Normalized` and
    :class:`~dpbook.GaussianTruncated` on ``[0, 1]`` and ``[0, 5]`` decreased along 13 scales from the
    returned one to 8 times it, so every one of them also passed (the tests repeat it for ``Normalized`` on
    ``[0, 1]``).  Time: one profile a step, so about 0.5 s for ``Normalized`` on ``[0, 1]``; tens of seconds
    to minutes for ``GaussianTruncated`` and for longer ranges, whose certified profiles take seconds.  The
    certified profile of a truncation is an upper bound with a slack of about ``1e-4`` relative (see
    :func:`dpbook.privacy_profile`): the scale returned is the smallest that the *certified* value allows,
    within that slack of the exact one.

    Parameters
    ----------
    make : callable
        ``s -> Mechanism``, e.g. ``lambda s: GaussianTruncated(s, lower=0.0, upper=1.0)``.
    sensitivity : float
        ``Δ > 0``.
    epsilon : float
        ``ε >= 0``.
    delta : float
        ``0 < δ < 1``.
    low, high : float, keyword-only
        Optional bracket: ``high`` must pass (else ``ValueError``); ``low`` is returned if it passes.

    Returns
    -------
    float
        The scale.

    Raises
    ------
    ValueError
        For a bad ``sensitivity``, ``epsilon``, ``delta``, ``low`` or ``high`` (naming it), a ``make`` that is
        not callable, or no passing scale up to ``4^60`` times the start.

    Examples
    --------
    >>> from dpbook import Gaussian, analytic_gaussian_scale
    >>> s = profile_scale(Gaussian, 1.0, 1.0, 1e-5)
    >>> round(s, 6), round(s / analytic_gaussian_scale(1.0, 1e-5), 8)
    (3.730632, 1.0)
    """
    if not callable(make):
        raise ValueError(f"make must be a callable scale -> Mechanism, got {make!r}")
    sensitivity = check.positive("sensitivity", sensitivity)
    epsilon = check.nonnegative("epsilon", epsilon)
    delta = check.positive("delta", delta)
    if not delta < 1:
        raise ValueError(f"delta must be < 1, got {delta!r}")
    low = None if low is None else check.positive("low", low)
    high = None if high is None else check.positive("high", high)
    if low is not None and high is not None and not low < high:
        raise ValueError(f"low must be < high, got low={low!r}, high={high!r}")
    log_delta = math.log(delta)

    def gap(s):  # log δ_s(ε) - log δ: <= 0 passes
        d = float(privacy_profile(make(s), sensitivity, epsilon))
        return math.log(max(d, 1e-300)) - log_delta

    # bracket: (bad, g_bad) fails, (good, g_good) passes
    if high is not None:
        good, g_good = high, gap(high)
        if g_good > 0:
            raise ValueError(
                f"high={high!r} does not reach delta={delta!r} at epsilon={epsilon!r}"
            )
    if low is not None:
        bad, g_bad = low, gap(low)
        if g_bad <= 0:
            return low
    if high is None:
        start = low if low is not None else sensitivity
        s, g = (bad, g_bad) if low is not None else (start, gap(start))
        steps = 0
        while g > 0:
            bad, g_bad = s, g
            s *= 4.0
            steps += 1
            if steps > 60 or not math.isfinite(s):
                raise ValueError(
                    f"delta={delta!r} is reached by no scale up to {s:.3g} at epsilon={epsilon!r}"
                )
            g = gap(s)
        good, g_good = s, g
    if low is None:
        s, g = good, g_good
        steps = 0
        while g <= 0:
            good, g_good = s, g
            s /= 4.0
            steps += 1
            if steps > 60 or s == 0.0:  # every scale down to here passes
                return good
            g = gap(s)
        bad, g_bad = s, g
    # Brent's method in x = log s on the sign of gap; every evaluated scale is recorded, and the answer is the
    # smallest passing one above the largest failing one: the passing end of the last crossing
    seen = {bad: g_bad, good: g_good}

    def f(x):
        t = math.exp(x)
        seen[t] = gap(t)
        return seen[t]

    optimize.brentq(
        f,
        math.log(bad),
        math.log(good),
        xtol=0.5 * _PROFILE_RTOL,
        rtol=1e-15,
        maxiter=200,
    )
    top_fail = max(t for t, g in seen.items() if g > 0)
    return min(t for t, g in seen.items() if g <= 0 and t > top_fail)


def croft_boundary_scale(epsilon, sensitivity):
    """The scale at the boundary of a single infinite constraint: Croft, Sack & Shi, (32).

    ``σ1 = -Δ / (W(-1/(2e)) e ε) = 1.585954 Δ/ε`` (principal Lambert W branch).

    >>> round(croft_boundary_scale(1.0, 1.0), 6)
    1.585954
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    return _SIGMA1 * (sensitivity / epsilon)


def croft_scale(distance, epsilon, sensitivity):
    """The data-dependent scale at ``distance >= 0`` from a single infinite constraint: Croft, Sack & Shi, (33).

    With ``i = distance/Δ`` and ``σ1`` from :func:`croft_boundary_scale`, (33) reads
    ``σ2 = -iΔ e^{iε} σ1 / (W_Z(-(2iΔ e^{-iε}/σ1) e^{-iΔ e^{-iε}/σ1}) e^{iε} σ1 + iΔ)``, the solution of
    ``(σ2/σ1)(2 e^{iΔ/σ2} - 1) = e^{iε}`` (their (25) with ``ΔL1 = 0``, as an equality).  The principal
    branch ``Z = 0`` applies for ``i <= 1/ε`` and the ``-1`` branch beyond (Theorem 1's proof); the
    argument of ``W`` reaches ``-1/e`` exactly at ``i = 1/ε``, so the two pieces join smoothly.

    Sign: the LaTeX of (33) carries the leading minus and, evaluated as above, is positive (its
    denominator is negative); the paper's plain-text rendering drops every minus sign, and read that
    way it gives the negative of the scale.  dpbook returns the positive scale, which satisfies the
    defining equation above (tested).  It equals ``σ1`` at distance 0, decreases, is
    ``(Δ/ε)/(1 + W(-1/(2e))) = 1.302 Δ/ε`` at distance ``Δ/ε`` and tends to ``Δ/ε``.  ``W`` is evaluated
    through ``log(-W)`` by
    Newton's method so that the result keeps full precision at the branch switch.

    >>> round(croft_scale(0.0, 1.0, 1.0), 6), round(croft_scale(1e6, 1.0, 1.0), 4)
    (1.585954, 1.0)
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    distance = check.finite_array("distance", distance)
    if (distance < 0).any():
        raise ValueError(f"distance must be >= 0, got {distance!r}")
    return _float(_croft_scale(distance, epsilon, sensitivity))


# --------------------------------------------------------------------------------------------------
# one scale for every q (Sections 4.2-4.3)


def _endpoint_probabilities(sigma, lo, hi):
    """For each end of each feasible piece, the chance that the normalized law lands on the piece's side.

    At a right end ``e``: ``P(M <= e) = A_L / (A_L + A_R)`` with ``A_L``, ``A_R`` the feasible Laplace
    masses on either side of ``e``; at a left end the mirror image; an infinite end contributes its
    limit 1/2.  The masses come from running log-sums over the pieces (O(n) for all ends).
    """
    finite = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    centre = 0.5 * (finite.min() + finite.max()) if finite.size else 0.0
    lo, hi = (lo - centre) / sigma, (hi - centre) / sigma
    m = len(lo)
    width = hi - lo
    log_len = np.where(
        width > math.log(2),
        np.log1p(-np.exp(-width)),
        np.log(-np.expm1(-np.minimum(width, 1.0))),
    )
    with np.errstate(invalid="ignore"):
        left = np.logaddexp.accumulate(hi + log_len)
        right = np.logaddexp.accumulate((log_len - lo)[::-1])[::-1]
    right_next = np.r_[right[1:], -np.inf]
    left_prev = np.r_[-np.inf, left[:-1]]
    out = np.full(2 * m, 0.5)
    fr = np.isfinite(hi)
    out[:m][fr] = special.expit((left[fr] - hi[fr]) - (right_next[fr] + hi[fr]))
    fl = np.isfinite(lo)
    out[m:][fl] = special.expit((right[fl] + lo[fl]) - (left_prev[fl] - lo[fl]))
    return out


def _uniform_fast(epsilon, sensitivity, lo, hi):
    unit = sensitivity / epsilon
    top = 2.0 * unit

    def gap(sigma):
        return sigma - top * _endpoint_probabilities(sigma, lo, hi).max()

    if gap(unit) >= 0:
        return unit
    return optimize.brentq(
        gap, unit, top, xtol=1e-14 * unit, rtol=4 * np.finfo(float).eps, maxiter=200
    )


def _forbidden(lo, hi):
    """The constraints (complement of the feasible set) as ``(left, right)`` ends, possibly infinite."""
    left = np.r_[-np.inf, hi]
    right = np.r_[lo, np.inf]
    keep = left < right
    return left[keep], right[keep]


def _paper_sums(q, sigma, c_left, c_right):
    """Croft's ``L`` and ``R`` at location ``q``: formulas (4) and (5), one term per constraint (O(n))."""
    is_left = c_right <= q
    with np.errstate(over="ignore"):
        near_l = np.exp(-(q - c_right[is_left]) / sigma)
        far_l = np.exp(-(q - c_left[is_left]) / sigma)
        near_r = np.exp(-(c_left[~is_left] - q) / sigma)
        far_r = np.exp(-(c_right[~is_left] - q) / sigma)
    return 0.5 * np.sum(near_l - far_l), 0.5 * np.sum(near_r - far_r)


def _paper_check(sigma, epsilon, sensitivity, lo, hi, c_left, c_right):
    """Whether ``sigma`` meets all 3n+2 inequalities of Theorem 2: (60)/(61) in both forms and (70)."""
    for j in range(len(lo)):
        for q, form in ((hi[j], "regular"), (lo[j], "symmetric")):
            if math.isinf(q):
                ratio = 1.0
            else:
                left, right = _paper_sums(q, sigma, c_left, c_right)
                near = left if form == "regular" else right
                ratio = (1 - 2 * near) / (1 - (left + right))
            if sensitivity * ratio / sigma > epsilon:
                return False
    for j in range(len(lo) - 1):
        q2, q1 = hi[j], lo[j + 1]
        width = q1 - q2
        l1, r1 = _paper_sums(q1, sigma, c_left, c_right)
        l2, r2 = _paper_sums(q2, sigma, c_left, c_right)
        if (
            math.log(1 - (l2 + r2)) - math.log(1 - (l1 + r1)) + width / sigma
            > epsilon * width / sensitivity
        ):
            return False
    return True


def _uniform_paper(epsilon, sensitivity, lo, hi, digits):
    unit = sensitivity / epsilon
    c_left, c_right = _forbidden(lo, hi)
    if digits is None:
        digits = 13 - math.floor(math.log10(unit))
    low, high = 0.0, 2.0 * unit
    while high - low > 10.0 ** (-digits):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if _paper_check(mid, epsilon, sensitivity, lo, hi, c_left, c_right):
            high = mid
        else:
            low = mid
    return high


def croft_uniform_scale(epsilon, sensitivity, allowed, *, method="fast", digits=None):
    """The smallest scale that, used for every true value, meets Croft's guarantee (38) on ``allowed``.

    Croft, Sack & Shi, §4.2-4.3: Lemmas 7 and 9 give lower bounds on ``σ``, Theorem 2 takes the largest
    of ``3n + 2`` of them (``n`` finite constraints), Theorem 3 finds it by binary search in
    ``O(n^2 (d + log(Δ/ε)))``, Corollary 1 extends this to infinite constraints.

    ``method="paper"`` is that search: bisection on ``(0, 2Δ/ε]`` (Lemma 10) down to ``10^-digits``,
    each step checking (60) (the rearranged (61)) at every piece's right end, its mirror form at every
    left end, and (70) across every gap, with ``L`` and ``R`` summed term by term from (4)-(5), so
    ``O(n)`` per location and ``O(n^2)`` per step.  Lemma 7's bound is stated for "a span"; the
    condition must hold for every location in it, and ``(1 - 2L)/N`` increases along a piece (for a fixed
    ``σ``), so the binding location is its right end (left end for the mirror form).  (70) is evaluated as the
    equivalent ``log N(q2) - log N(q1) + w/σ <= wε/Δ``, which does not overflow.

    ``method="fast"`` uses what the conditions reduce to: the guarantee holds for all pairs and all
    outputs iff at every end ``e`` of a piece ``σ >= (2Δ/ε) p_e(σ)``, where ``p_e`` is the probability
    that the normalized law centred at ``e`` falls on the piece's side of ``e`` (``p = 1/2`` at an
    infinite end).  This is (60) written with feasible masses: ``(1 - 2L)/N = 2 p``.  All ``p_e`` come
    from running log-sums in ``O(n)``, and a bracketing root finder on ``[Δ/ε, 2Δ/ε]`` needs about ten
    evaluations: ``O(n log(1/tol))`` in all.  Two consequences, both tested: (i) Lemma 9's gap bounds
    never bind: ``log N(q)`` is convex in ``q`` across a gap, so its slope there lies between its slopes
    at the gap's two ends, where (60) and its mirror bound it, and (70) (the slope integrated over the
    gap) follows;
    (ii) if the feasible set is bounded on either side (any infinite constraint), the end next to it has
    ``p = 1`` and the answer is exactly ``2Δ/ε``, not an approximation (Table 2's "≤" is attained).

    Parameters
    ----------
    epsilon, sensitivity : float
    allowed : sequence of (lo, hi)
        The feasible pieces (see :class:`Normalized`).
    method : {"fast", "paper"}
    digits : int, optional
        Paper method only: absolute precision ``10^-digits``; default about 13 significant digits.

    Examples
    --------
    >>> croft_uniform_scale(1.0, 1.0, [(0.0, np.inf)])
    2.0
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    lo, hi = _allowed(allowed)
    if method == "fast":
        return float(_uniform_fast(epsilon, sensitivity, lo, hi))
    if method == "paper":
        if digits is not None and (
            not isinstance(digits, (int, np.integer))
            or isinstance(digits, bool)
            or digits < 0
        ):
            raise ValueError(f"digits must be an int >= 0, got {digits!r}")
        return float(_uniform_paper(epsilon, sensitivity, lo, hi, digits))
    raise ValueError(f"method must be 'fast' or 'paper', got {method!r}")


def croft_lower_bounds(epsilon, sensitivity, allowed):
    """Each of Theorem 2's lower bounds on a uniform ``σ``, for the book's tables.

    Returns a list of ``(lemma, form, location, bound)``: Lemma 7 at every finite piece end
    (``form`` ``"regular"`` at right ends, ``"symmetric"`` at left ends; an infinite end gives ``Δ/ε``),
    Lemma 9 for every gap (``"gap"``, location = the gap's left end).  Each bound is the root of its
    inequality taken as an equality, found on ``(0, 2Δ/ε]``; ``0.0`` if the inequality always holds.
    Their maximum is :func:`croft_uniform_scale`.
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    lo, hi = _allowed(allowed)
    unit = sensitivity / epsilon
    top = 2.0 * unit
    c_left, c_right = _forbidden(lo, hi)

    def end_excess(q, form):
        def f(sigma):
            left, right = _paper_sums(q, sigma, c_left, c_right)
            near = left if form == "regular" else right
            return sigma - unit * (1 - 2 * near) / (1 - (left + right))

        return f

    def gap_excess(q2, q1):
        width = q1 - q2

        def f(sigma):
            l1, r1 = _paper_sums(q1, sigma, c_left, c_right)
            l2, r2 = _paper_sums(q2, sigma, c_left, c_right)
            return (
                width * epsilon / sensitivity
                - width / sigma
                - (math.log(1 - (l2 + r2)) - math.log(1 - (l1 + r1)))
            )

        return f

    def solve(f):
        tiny = 1e-6 * unit
        if f(tiny) >= 0:
            return 0.0
        if (
            f(top) <= 0
        ):  # binding at the top: an end next to an infinite constraint needs exactly 2Δ/ε
            return top
        return float(optimize.brentq(f, tiny, top, xtol=1e-14 * unit))

    rows = []
    for j in range(len(lo)):
        for q, form in ((hi[j], "regular"), (lo[j], "symmetric")):
            bound = unit if math.isinf(q) else solve(end_excess(q, form))
            rows.append((7, form, float(q), bound))
    for j in range(len(lo) - 1):
        rows.append((9, "gap", float(hi[j]), solve(gap_excess(hi[j], lo[j + 1]))))
    return rows


def croft_table2(*, epsilon=1.0, sensitivity=1.0):
    """Croft, Sack & Shi's Table 2 (bounds on ``σ`` per constraint configuration), recomputed by dpbook.

    Returns a list of dicts with ``configuration``, ``scale`` (the paper's formula or section),
    ``printed`` (the bound as printed, in units of ``Δ/ε``) and ``computed`` (dpbook's value in units of
    ``Δ/ε``): ``σ1 = 1.585954`` (printed 1.586); ``σ2 < σ1`` (dpbook: ``sup`` over distances > 0 is
    ``σ1``, not attained, ``inf`` is 1); finite constraints ``σ < 2`` (dpbook: approached by two
    half-lines far apart, shown for a gap of ``40Δ/ε``); arbitrary constraints ``σ <= 2`` (dpbook:
    exactly 2 whenever a constraint is infinite, here ``[0, 1] ∪ [3, inf)``).
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    unit = sensitivity / epsilon
    s1 = croft_boundary_scale(epsilon, sensitivity) / unit
    near = float(croft_scale(1e-9 * unit, epsilon, sensitivity)) / unit
    finite = (
        croft_uniform_scale(
            epsilon, sensitivity, [(-np.inf, 0.0), (40.0 * unit, np.inf)]
        )
        / unit
    )
    arbitrary = (
        croft_uniform_scale(epsilon, sensitivity, [(0.0, unit), (3.0 * unit, np.inf)])
        / unit
    )
    return [
        {
            "configuration": "single infinite constraint",
            "scale": "sigma_1: formula (32)",
            "printed": "sigma_1 = 1.586",
            "computed": s1,
        },
        {
            "configuration": "single infinite constraint",
            "scale": "sigma_2: formula (33)",
            "printed": "sigma_2 < 1.586",
            "computed": near,
        },
        {
            "configuration": "arbitrary finite constraints",
            "scale": "Section 4.2",
            "printed": "sigma < 2",
            "computed": finite,
        },
        {
            "configuration": "arbitrary constraints",
            "scale": "Section 4.2",
            "printed": "sigma <= 2",
            "computed": arbitrary,
        },
    ]


# --------------------------------------------------------------------------------------------------
# accuracy before release: the budget a target needs (issue 11)

#: the accuracy targets of :func:`required_scale` and :func:`required_epsilon`
ACCURACY_TARGETS = (
    "max_mse",
    "mse",
    "max_abs_bias",
    "abs_bias",
    "length",
    "max_length",
)


def _family(family, lower, upper):
    """``b -> Mechanism`` from a family class (bounded ones get ``lower``/``upper``) or a callable."""

    if isinstance(family, type) and issubclass(family, IntervalMechanism):
        return lambda b: family(b, lower=lower, upper=upper)
    if (
        isinstance(family, type)
        and issubclass(family, Mechanism)
        and family.integer_valued
    ):  # the discrete families
        if "lower" in inspect.signature(family).parameters:
            return lambda b: family(b, lower=lower, upper=upper)
        return lambda b: family(b)
    if isinstance(family, type) and issubclass(family, Mechanism):
        return lambda b: family(b)
    if callable(family) and not isinstance(family, type):
        return family
    raise ValueError(
        f"family must be a Mechanism class or a callable scale -> Mechanism, got {family!r}"
    )


def _q_grid(lower, upper, scale, points=257):
    """True values at which a worst case over ``[lower, upper]`` is searched: ``points`` evenly spaced on a
    bounded interval; on a half-line (or the line) half of them within 8 scales of the finite end plus a
    geometric ladder out to ``10^4`` scales, where the families' formulas have reached their limits."""
    if np.isfinite(lower) and np.isfinite(upper):
        return np.linspace(lower, upper, points)
    steps = scale * np.concatenate(
        [
            np.linspace(0.0, 8.0, points // 2 + 1),
            np.geomspace(8.0, 1e4, points // 4)[1:],
        ]
    )
    if np.isfinite(lower):
        return lower + steps
    if np.isfinite(upper):
        return upper - steps
    return np.concatenate([-steps[:0:-1], steps])


def _worst_case(values, lower, upper, scale, in_domain, points=257, xtol=1e-10):
    """``max`` of the vectorized ``values(q)`` over ``[lower, upper]``: the grid of :func:`_q_grid`, then a
    bounded Brent refinement on the two cells next to the best grid point (a search, not a certificate)."""
    grid = _q_grid(lower, upper, scale, points)
    grid = grid[in_domain(grid)]
    v = np.asarray(values(grid), dtype=float)
    k = int(np.argmax(v))
    best = float(v[k])
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    if b > a:
        res = optimize.minimize_scalar(
            lambda t: -float(values(np.array([t]))[0]),
            bounds=(a, b),
            method="bounded",
            options={"xatol": xtol * max(1.0, abs(a), abs(b))},
        )
        best = max(best, -float(res.fun))
    return best


#: integer true values an exact worst case of a count may enumerate (the length targets: 1/64 of it)
_MAX_INTEGERS = 2**16


def _integer_worst(values, lower, upper, points):
    """``max`` of ``values(q)`` over the integers of ``[lower, upper]``, exactly (all of them), or ValueError."""
    limit = _MAX_INTEGERS if points > 33 else _MAX_INTEGERS // 64
    if (
        not (math.isfinite(lower) and math.isfinite(upper))
        or math.floor(upper) - math.ceil(lower) + 1 > limit
    ):
        raise ValueError(
            f"lower={lower!r}, upper={upper!r}: the worst case of an integer-valued family is the exact "
            f"maximum over its integer true values, which are limited to {limit} here; give finite, "
            "narrower bounds"
        )
    return float(
        np.max(
            np.asarray(
                values(np.arange(math.ceil(lower), math.floor(upper) + 1.0)),
                dtype=float,
            )
        )
    )


def _accuracy(make, target, lower, upper, q, level):
    """``b -> the target's value`` for the family ``make`` (see :func:`required_scale`)."""

    def length(mech, qs):
        return np.asarray(
            expected_length(mech, lambda x: confidence_interval(mech, x, level), qs)
        )

    def at_q(fn):
        return lambda b: float(np.asarray(fn(make(b), q)))

    def worst(fn, points=257, xtol=1e-10):
        def value(b):
            mech = make(b)
            lo, hi = max(lower, mech.domain[0]), min(upper, mech.domain[1])

            if mech.integer_valued:  # a count: the exact maximum over the integers
                return _integer_worst(lambda g: fn(mech, g), lo, hi, points)

            def ok(g):
                return np.array([mech.accepts(t) for t in g], dtype=bool)

            return _worst_case(lambda g: fn(mech, g), lo, hi, b, ok, points, xtol)

        return value

    if target == "mse":
        return at_q(lambda m, t: m.mse(t))
    if target == "abs_bias":
        return at_q(lambda m, t: np.abs(m.bias(t)))
    if target == "length":
        return at_q(length)
    if target == "max_mse":
        return worst(lambda m, g: np.asarray(m.mse(g)))
    if target == "max_length":
        return worst(length, 33, 1e-4)  # each value is ~800 intervals: a coarser search
    search = worst(lambda m, g: np.abs(np.asarray(m.bias(g))))

    def max_abs_bias(
        b,
    ):  # exact where the family knows its worst case on its own domain
        mech = make(b)
        exact = mech.max_abs_bias()
        if exact is not None and tuple(mech.domain) == (lower, upper):
            return float(exact)
        return search(b)

    return max_abs_bias


def required_scale(family, *, lower, upper, target, bound, q=None, level=0.95):
    """The largest noise scale at which ``family`` on ``[lower, upper]`` meets an accuracy target.

    Answers the question asked *before* a release: how much noise can this accuracy afford?  The
    target's value is computed from the exact formulas of the family at each trial scale and the
    largest scale with ``value <= bound`` is bracketed in steps of 16 and then found by bisection in
    ``log b`` to a relative width of ``1e-10`` (``1e-7`` for the length targets) (so the answer meets the
    target and ``1.01`` times it
    misses, which the tests check by plugging it back in).  The targets' values grow with the scale
    for the families of dpbook; the bisection relies on it.

    Parameters
    ----------
    family : Mechanism class or callable
        :class:`~dpbook.BIT`, :class:`~dpbook.Truncated` (called as ``family(b, lower=, upper=)``),
        :class:`~dpbook.Laplace` (``family(b)``), or any callable ``b -> Mechanism``.
    lower, upper : float, keyword-only
        The bounds of the data (the range of true values of the worst cases).
    target : str, keyword-only
        ``"max_mse"`` (worst MSE over ``q`` in ``[lower, upper]``), ``"mse"`` (MSE at ``q``),
        ``"max_abs_bias"`` (the family's exact ``max_abs_bias()`` when it has one on this domain, else a
        search), ``"abs_bias"`` (at ``q``), ``"length"`` (expected length of
        :func:`~dpbook.confidence_interval` at ``q`` and ``level``; quadrature, see
        :func:`~dpbook.expected_length`), ``"max_length"`` (its worst over ``q``; slow: tens of seconds).
        Worst cases over ``q`` are a grid of 257 true values (33 for ``"max_length"``) plus a bounded
        Brent refinement next to the best one: a search, not a certificate.  For an integer-valued
        family (:class:`~dpbook.DiscreteBIT`, :class:`~dpbook.DiscreteTruncated`, called with the bounds;
        :class:`~dpbook.DiscreteLaplace`, called as ``family(b)``) they are exact maxima over every integer
        of ``[lower, upper]`` (at most ``2^16`` of them, ``2^10`` for ``"max_length"``; else a
        ``ValueError``), ``q`` must be an integer, and the length targets are exact sums.  Their
        expected lengths are step-like in ``b`` (the interval's ends are integers): a ``bound`` equal to
        an attainable length lands on the rounding of that plateau, so give one between two.
    bound : float, keyword-only
        The largest acceptable value of the target (``> 0``; an MSE in squared units, a bias or a
        length in the data's units).
    q : float, keyword-only
        The true value for the at-a-value targets.
    level : float, keyword-only
        Confidence level for the length targets.

    Returns
    -------
    float
        The scale; ``inf`` when every scale meets the target (a bound above the target's limit as the
        noise grows, possible on a bounded interval).

    Raises
    ------
    ValueError
        An unknown ``target``, ``bound <= 0``, a missing ``q``, or a bound no scale down to ``1e-300``
        meets (naming ``bound``).

    Examples
    --------
    >>> from dpbook import BIT, Laplace
    >>> round(required_scale(Laplace, lower=0.0, upper=1.0, target="max_mse", bound=0.02), 9)  # 2b^2 = 0.02
    0.1
    >>> round(required_scale(BIT, lower=0.0, upper=1.0, target="max_abs_bias", bound=0.05), 6)  # (b/2)(1 - e^{-1/b})
    0.100005
    >>> from dpbook import DiscreteLaplace  # Var = 2α/(1 - α)^2 = 4 at α = 1/2: b = 1/log 2
    >>> round(required_scale(DiscreteLaplace, lower=0, upper=10, target="max_mse", bound=4.0) * math.log(2), 9)
    1.0
    """
    lower, upper = check.bounds(lower, upper)
    if target not in ACCURACY_TARGETS:
        raise ValueError(f"target must be one of {ACCURACY_TARGETS}, got {target!r}")
    bound = check.positive("bound", bound)
    if target in ("mse", "abs_bias", "length"):
        if q is None:
            raise ValueError(f"q must be given for target={target!r}, got None")
        q = check.finite("q", q)
    level = check.finite("level", level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    make = _family(family, lower, upper)
    value = _accuracy(make, target, lower, upper, q, level)
    width = upper - lower
    b = width if math.isfinite(width) else (abs(q) if q else 1.0)
    b = b if b > 0 else 1.0

    def meets(s):
        v = value(s)
        return math.isfinite(v) and v <= bound

    step = 16.0  # bracket in steps of 16: at most ~250 trials from 1e300 to 1e-300
    if meets(b):
        good = b
        while meets(step * good):
            good *= step
            if good > 1e300:
                return math.inf
        bad = step * good
    else:
        bad = b
        while not meets(bad / step):
            bad /= step
            if bad < 1e-300:
                raise ValueError(
                    f"bound={bound!r} for target={target!r} is met by no scale down to 1e-300"
                )
        good = bad / step
    rtol = 1e-7 if target in ("length", "max_length") else 1e-10
    while bad / good > 1.0 + rtol:
        mid = math.sqrt(good * bad)
        if meets(mid):
            good = mid
        else:
            bad = mid
    return good


def required_epsilon(
    family, *, lower, upper, sensitivity, target, bound, q=None, level=0.95
):
    """The smallest privacy budget ε whose calibrated ``family`` on ``[lower, upper]`` meets a target.

    The scale :func:`required_scale` allows, charged by the exact auditor: ``ε =``
    :func:`~dpbook.privacy_loss` ``(family(b), sensitivity, domain=(lower, upper))``.  So truncation is
    charged its true ε (``1 + log(2 - e^{-1}) ≈ 1.49`` one-sided at ``b = Δ``, not the nominal 1), and a family whose
    loss falls as the scale grows, calibrated at any smaller ε, gets a larger scale and misses the
    target (the tests check ``0.99 ε``).

    Parameters
    ----------
    family, lower, upper, target, bound, q, level
        As in :func:`required_scale`.
    sensitivity : float, keyword-only
        ``Δ > 0``.

    Returns
    -------
    float
        ``0.0`` when every scale meets the target (:func:`required_scale` returns ``inf``).

    Examples
    --------
    >>> from dpbook import BIT, Truncated
    >>> round(required_epsilon(BIT, lower=0.0, upper=1.0, sensitivity=0.01, target="max_abs_bias", bound=0.05), 6)
    0.099995
    >>> round(required_epsilon(Truncated, lower=0.0, upper=1.0, sensitivity=0.01, target="max_abs_bias", bound=0.05), 6)
    0.366589
    """

    delta = check.positive("sensitivity", sensitivity)
    b = required_scale(
        family, lower=lower, upper=upper, target=target, bound=bound, q=q, level=level
    )
    if math.isinf(b):
        return 0.0
    lower, upper = check.bounds(lower, upper)
    return float(
        privacy_loss(_family(family, lower, upper)(b), delta, domain=(lower, upper))
    )


def restriction_ramp_bias_ratio(q, epsilon, sensitivity):
    """McGlinchey–Mason ratio (9): restriction's bias at ``b = 2Δ/ε`` over the ramp's at ``b = Δ/ε``.

    Both are ε-DP for a nonnegative query (McGlinchey–Mason Prop. 2 doubles ε for restriction).
    The ratio is ``2e^{t}(t + 2)/(2e^{t/2} - 1)`` with ``t = εq/Δ``, increasing from 4 at ``q = 0``;
    it is ``inf`` where the ramp's bias underflows (``t`` beyond about 745).

    >>> restriction_ramp_bias_ratio(0.0, 1.0, 1.0)
    4.0
    """
    b = laplace_scale(epsilon, sensitivity)
    q = check.finite_array("q", q)
    if (q < 0).any():
        raise ValueError(f"q must be >= 0 for a nonnegative query, got {q!r}")
    restricted = np.asarray(Truncated(2 * b, lower=0.0, upper=np.inf).bias(q))
    ramp = np.asarray(BIT(b, lower=0.0, upper=np.inf).bias(q))
    return _float(
        np.divide(restricted, ramp, out=np.full(np.shape(ramp), np.inf), where=ramp > 0)
    )
