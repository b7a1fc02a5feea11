"""Exact discrete Laplace noise from random integers: inversion against exact integer thresholds.

The discrete Laplace law with scale ``b`` puts mass ``(1 - α) / (1 + α) · α^|k|`` on each integer
``k``, with ``α = exp(-1/b)``.  :func:`discrete_laplace_noise` draws from it *exactly*: every
decision is a comparison of integers drawn uniformly by ``rng.integers`` with integers computed in
exact (Python integer) arithmetic; no floating-point number is formed from the random bits, so the
law of the output is the discrete Laplace law itself, not a rounded approximation of it (the
floating-point Laplace sampler leaks through its low bits; an integer one has no low bits to leak).

A float scale is a dyadic rational: ``scale.as_integer_ratio()`` gives integers ``num, den`` with
``b = num / den`` exactly, and ``α = exp(-den/num)``.  The draw, with a block length
``m = max(1, ⌊b/8⌋)`` and ``β = α^m``:

* **Zero, sign and block count from one uniform.**  ``K ≠ 0`` with probability
  ``s_0 = 2α/(1 + α)``, and then ``|K| - 1 = Y`` is geometric, ``P(Y = y) = (1 - α) α^y``; writing
  ``Y = m·H + L`` (``0 <= L < m``), ``H`` is geometric with ratio ``β`` and independent of ``L``
  (Canonne, Kamath & Steinke 2020, Algorithm 2's decomposition).  So ``P(K ≠ 0, H >= h) = s_0 β^h``,
  and with a uniform real ``V`` in ``[0, 1)`` the count ``G = #{g >= 0 : V < s_g}``, ``s_g = s_0 β^g``,
  is 0 for ``K = 0`` and ``1 + H`` otherwise.  ``V`` is read as a stream of 63-bit words: the first
  word ``U`` (the low 63 bits of one ``rng.integers(-2**63, 2**63)``, whose sign bit is the sign of
  ``K``) is compared with the exact integers ``T_g = ⌊2^63 s_g⌋`` (:func:`_table`): ``V < s_g`` iff
  ``U < T_g``, except on a tie ``U = T_g`` (probability 2^-63 per threshold), where the next words
  of ``V`` are compared with the next bits of ``s_g``, computed exactly (:func:`_count_exact`).  A
  guide table on the top 12 bits of ``U`` finds the count with two lookups and one comparison.
* **The remainder** ``L`` (when ``m > 1``): uniform on ``{0, ..., m-1}`` accepted with probability
  ``exp(-L/b)``, by Canonne, Kamath & Steinke (2020, "The discrete Gaussian for differential
  privacy", NeurIPS), Algorithm 1 (:func:`_bernoulli_exp_fraction`): ``L/b <= 1/8``, so one draw
  of a random integer almost always decides it.

``T_g`` is the floor of an irrational number (``s_g`` is transcendental by Lindemann's theorem), found
from brackets of ``exp(-p/q)`` in fixed-point integer arithmetic with outward rounding
(:func:`_exp_neg`: its Taylor series, alternating, whose remainder is below the next term), at a
precision raised until the bracket holds a single integer.  All of it is exact: the only
approximation anywhere is in choosing how many words of ``V`` to read, never in a decision.

The generator is numpy's ``Generator``: reproducible from a seed, fast, and **not** a
cryptographically secure source.  The exactness here is about the law; a production release must
also draw its random integers from the operating system's secure source (as OpenDP does).
"""

from __future__ import annotations

import functools
import numbers
from fractions import Fraction

import numpy as np

from . import validation as check

__all__ = ["discrete_laplace_noise"]


# Largest scale discrete_laplace_noise accepts (2**52, about 4.5e15).  Above it an
# int64 draw could overflow with a probability that is no longer negligible.
MAX_SCALE = 2**52


_INT64_MAX = np.iinfo(np.int64).max


# Numerators and denominators are kept below 2**62 so that every product the samplers form
# (c * k with the round counter k, U * den) fits in an int64; see _bernoulli_exp_fraction.
_MAX_PART = 2**62

# Bits of one word of the uniform V (the sign takes one more bit of the same int64 draw), bits of
# the guide table's index, and the block divisor (m = max(1, ⌊b / _BLOCK⌋)).  Tests lower the
# first two to enumerate every path of the sampler.
_WORD_BITS = 63
_GUIDE_BITS = 12
_BLOCK = 8


def _exact_ratio(scale):
    """Return ``(num, den)``, coprime positive ints with ``scale == num / den`` exactly."""
    if isinstance(scale, numbers.Rational) and not isinstance(scale, bool):
        ratio = Fraction(scale)
        if ratio <= 0:
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    else:
        ratio = Fraction(*float(check.positive("scale", scale)).as_integer_ratio())
    if ratio > MAX_SCALE:
        raise ValueError(
            f"scale must be <= 2**52 (about 4.5e15) for exact int64 noise, got {scale!r}"
        )
    if ratio.numerator >= _MAX_PART:
        raise ValueError(
            f"scale must have an exact numerator below 2**62, got {scale!r} = {ratio}; "
            "use a float scale or Fraction.limit_denominator"
        )
    return ratio.numerator, ratio.denominator


# --- exact brackets of exp(-p/q) in fixed point -----------------------------------------------------


def _ceil_div(a, b):
    return -(-a // b)


def _exp_small(r, q, prec):
    """``(lo, hi)`` with ``lo <= 2**prec · exp(-r/q) <= hi`` for ints ``0 <= r <= q``.

    The Taylor series ``Σ (-x)^k / k!`` with ``x = r/q <= 1`` alternates with decreasing terms, so
    its remainder after a term is at most that term; each term is bracketed by floor and ceiling.
    """
    one = 1 << prec
    lo = hi = t_lo = t_hi = one
    k = 0
    while t_hi > 1:
        k += 1
        t_lo = t_lo * r // (q * k)
        t_hi = _ceil_div(t_hi * r, q * k)
        if k & 1:
            lo, hi = lo - t_hi, hi - t_lo
        else:
            lo, hi = lo + t_lo, hi + t_hi
    return max(lo - t_hi, 0), min(hi + t_hi, one)


def _exp_neg(p, q, prec):
    """``(lo, hi)`` with ``lo <= 2**prec · exp(-p/q) <= hi``, ints ``p >= 0``, ``q >= 1``."""
    if p == 0:
        return 1 << prec, 1 << prec
    if p >= prec * q:  # exp(-p/q) <= exp(-prec) < 2**-prec
        return 0, 1
    n, r = divmod(p, q)
    work = prec + 2 * n.bit_length() + 16
    lo, hi = _exp_small(r, q, work)
    e_lo, e_hi = _exp_small(1, 1, work)
    while n:  # times exp(-1)**n, by squaring, rounded outward
        if n & 1:
            lo, hi = lo * e_lo >> work, _ceil_div(hi * e_hi, 1 << work)
        e_lo, e_hi = e_lo * e_lo >> work, _ceil_div(e_hi * e_hi, 1 << work)
        n >>= 1
    return lo >> (work - prec), _ceil_div(hi, 1 << (work - prec))


@functools.lru_cache(maxsize=4096)
def _threshold_floor(g, bits, num, den, m):
    """``⌊2**bits · s_g⌋`` exactly, ``s_g = 2α/(1 + α) · α^(m·g)``, ``α = exp(-den/num)``.

    ``s_g`` is irrational, so raising the precision of its bracket ends with one integer in it.
    """
    guard = 32
    while True:
        prec = bits + guard
        e_lo, e_hi = _exp_neg((1 + m * g) * den, num, prec)
        a_lo, a_hi = _exp_neg(den, num, prec)
        one = 1 << prec
        lo = (2 * e_lo << prec) // (one + a_hi)
        hi = _ceil_div(2 * e_hi << prec, one + a_lo)
        if lo >> guard == hi >> guard:
            return lo >> guard
        guard *= 2


class _Table:
    """The thresholds ``T_g = ⌊2^w s_g⌋ >= 1`` (descending) and their guide table."""

    def __init__(self, num, den, m, word, guide_bits):
        self.num, self.den, self.m, self.word = num, den, m, word
        guard = 64
        prec = word + guard
        a_lo, a_hi = _exp_neg(den, num, prec)
        b_lo, b_hi = _exp_neg(m * den, num, prec)
        one = 1 << prec
        s_lo = (2 * a_lo << prec) // (one + a_hi)
        s_hi = _ceil_div(2 * a_hi << prec, one + a_lo)
        floors = []
        while s_hi >> guard:
            t = s_lo >> guard
            if (
                t != s_hi >> guard
            ):  # the bracket straddles an integer: compute this one exactly
                t = _threshold_floor(len(floors), word, num, den, m)
            if t == 0:
                break
            floors.append(t)
            s_lo, s_hi = s_lo * b_lo >> prec, _ceil_div(s_hi * b_hi, one)
        self.thresholds = np.array(floors, dtype=np.int64)
        self.ascending = self.thresholds[::-1].copy()
        self.below = np.concatenate(
            ([-1], self.ascending)
        )  # below[i]: the i-th smallest
        gb = min(guide_bits, word)
        self.shift = word - gb
        buckets = self.thresholds >> self.shift
        counts = np.bincount(buckets, minlength=1 << gb)
        # base[j]: thresholds above bucket j (all counted for a U in it); thr[j]: its only one
        self.base = (counts[::-1].cumsum()[::-1] - counts).astype(np.int64)
        self.thr = np.full(1 << gb, -1, dtype=np.int64)
        single = counts[buckets] == 1
        self.thr[buckets[single]] = self.thresholds[single]
        dense = counts >= 2
        dense[0] = True  # U = 0 ties with every T_g = 0 beyond the table
        self.base[dense] = -1


@functools.lru_cache(maxsize=64)
def _table(num, den, m, word, guide_bits):
    return _Table(num, den, m, word, guide_bits)


def _count_exact(rng, prefix, table):
    """``G = #{g : V < s_g}`` exactly, given the first word ``prefix`` of ``V``; reads more words.

    With ``F_g = ⌊2^bits s_g⌋`` (nonincreasing in ``g``) and ``V`` in
    ``[prefix, prefix + 1) / 2^bits``: every ``g`` with ``F_g > prefix`` counts, every ``g`` with
    ``F_g < prefix`` does not; if some ``F_g = prefix`` the next word of ``V`` decides between them.
    """
    word, num, den, m = table.word, table.num, table.den, table.m
    bits, first = word, 0
    while True:

        def above(g, bits=bits, prefix=prefix):
            return _threshold_floor(g, bits, num, den, m) > prefix

        # A = the first g >= first with F_g <= prefix: doubling, then bisection
        lo, step = first, 1
        while above(lo + step - 1):
            lo, step = lo + step, 2 * step
        hi = lo + step - 1  # above(lo - 1) (or lo = first), not above(hi)
        while lo < hi:
            mid = (lo + hi) // 2
            if above(mid):
                lo = mid + 1
            else:
                hi = mid
        if _threshold_floor(lo, bits, num, den, m) < prefix:
            return lo
        prefix = (prefix << word) + int(rng.integers(0, 1 << word))
        bits += word
        first = lo


def _block_count(rng, n, table):
    """``n`` draws of ``(G, s)``: the count ``G`` of thresholds above ``V`` and a sign ``s`` in {-1, 0}."""
    word = table.word
    z = rng.integers(-(1 << word), 1 << word, size=n)
    sign = z >> word
    u = z & ((1 << word) - 1)
    j = u >> table.shift
    base, thr = table.base[j], table.thr[j]
    g = base + (thr > u)
    hard = np.flatnonzero((thr == u) | (base < 0))
    if (
        hard.size
    ):  # a dense bucket or a tie: the sorted table, then the exact count on a tie
        uh = u[hard]
        pos = np.searchsorted(table.ascending, uh, side="right")
        g[hard] = table.thresholds.size - pos
        tie = (uh == 0) | (table.below[pos] == uh)
        for i in np.flatnonzero(tie):
            g[hard[i]] = _count_exact(rng, int(uh[i]), table)
    return g, sign


def _bernoulli_exp_fraction(rng, n, a, c):
    """``n`` draws of Bernoulli(exp(-a/c)), ``a`` an int or int64 array with ``0 <= a <= c``.

    Canonne, Kamath & Steinke (2020), Algorithm 1 for γ = a/c in [0, 1], with an int
    ``1 <= c < 2**62``: for ``k = 1, 2, ...`` draw Bernoulli(a/(c·k)) as
    ``rng.integers(0, c·k) < a`` until it is 0; the result is 1 iff that ``k`` is odd.  Every
    undecided entry is at the same ``k`` in a round, so ``c·k`` is one integer; if it reaches 2**63
    the draw is split into the independent pair Bernoulli(a/c), Bernoulli(1/k).  Returns a bool
    array of length ``n``.
    """
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), (n,))
    if n and (a == c).all():  # Bernoulli(c/c) needs no draw in round 1
        out = np.zeros(n, dtype=bool)
        idx = np.arange(n)
    else:
        one = rng.integers(0, c, size=n) < a
        out = ~one
        idx = np.flatnonzero(one)
        a = a[idx]
    k = 2
    while idx.size:
        if c * k <= _INT64_MAX:
            one = rng.integers(0, c * k, size=idx.size) < a
        else:
            one = (rng.integers(0, c, size=idx.size) < a) & (
                rng.integers(0, k, size=idx.size) == 0
            )
        out[idx[~one]] = bool(k & 1)
        idx, a = idx[one], a[one]
        k += 1
    return out


def _truncated_geometric(rng, n, m, num, den):
    """``n`` draws of R on {0, ..., m-1} with P(R = r) ∝ exp(-r·den/num), for ``m·den <= num``.

    Canonne, Kamath & Steinke (2020), Algorithm 2, first step: ``U`` uniform on {0, ..., m-1},
    kept with probability exp(-U·den/num) (:func:`_bernoulli_exp_fraction`), else redrawn.
    """
    out = rng.integers(0, m, size=n)
    idx = np.flatnonzero(~_bernoulli_exp_fraction(rng, n, out * den, num))
    while idx.size:
        u = rng.integers(0, m, size=idx.size)
        keep = _bernoulli_exp_fraction(rng, idx.size, u * den, num)
        out[idx[keep]] = u[keep]
        idx = idx[~keep]
    return out


def _discrete_laplace(rng, n, num, den):
    """``n`` discrete Laplace draws with scale ``num/den``, int64 (see the module docstring)."""
    m = max(1, num // (den * _BLOCK))
    table = _table(num, den, m, _WORD_BITS, _GUIDE_BITS)
    g, sign = _block_count(rng, n, table)
    if g.size and g.max() > _INT64_MAX // m:
        raise OverflowError("a discrete Laplace draw exceeded the int64 range")
    if m > 1:  # |K| = 1 + m·(G - 1) + L for G >= 1, and 0 for G = 0
        mag = m * g + (_truncated_geometric(rng, n, m, num, den) + (1 - m))
        mag *= g > 0
    else:
        mag = g
    return (mag ^ sign) - sign


def discrete_laplace_noise(scale, size=None, *, rng=None):
    """Exact discrete Laplace noise: ``P(K = k) ∝ exp(-|k|/scale)`` on the integers, as int64.

    Inversion of a uniform read as 63-bit random integers against exact integer thresholds, with
    the block decomposition and the exact Bernoulli(exp(-γ)) of Canonne, Kamath & Steinke (2020,
    Algorithms 1 and 2), at the scale's exact rational value (``float.as_integer_ratio``): only
    comparisons of integers drawn by ``rng.integers`` with integers computed exactly, so the
    output has exactly the law ``(1 - α)/(1 + α) · α^|k|``, ``α = exp(-1/scale)`` (the two-sided
    geometric of Ghosh, Roughgarden & Sundararajan; the noise of OpenDP's integer Laplace).
    Vectorized over the draws: one random integer per draw below scale 16, about three above
    (the remainder and its Bernoulli).

    Parameters
    ----------
    scale : float, int or fractions.Fraction
        The scale ``b > 0`` (``b = Δ/ε`` for an ε-DP count with sensitivity Δ), at most
        2**52.  Floats are used at their exact binary value; a Fraction is
        used exactly if its reduced numerator is below 2**62.
    size : int or tuple of ints, optional
        Output shape; ``None`` (default) returns one Python int.
    rng : int, numpy.random.Generator, numpy.random.SeedSequence or None, optional
        Source of the random integers (only its ``integers`` method is called).  numpy's
        generators are reproducible but not cryptographically secure: fine for teaching and
        simulation, not for a production release.

    Returns
    -------
    int or numpy.ndarray of int64

    Raises
    ------
    ValueError
        If ``scale`` is not a finite number in (0, 2**52], or ``size`` or ``rng`` is invalid.
    OverflowError
        If a draw would leave the int64 range (it never wraps); below 2**52 the probability of
        that is under exp(-2000) per draw.

    Examples
    --------
    >>> from dpbook import discrete_laplace_noise
    >>> k = discrete_laplace_noise(2.0, size=5, rng=1)
    >>> k.dtype, k.shape
    (dtype('int64'), (5,))
    >>> discrete_laplace_noise(2.0, size=5, rng=1).tolist() == k.tolist()
    True
    >>> discrete_laplace_noise(1e-300, size=3, rng=0).tolist()
    [0, 0, 0]
    """
    num, den = _exact_ratio(scale)
    shape = check.size(size)
    gen = check.generator(rng)
    n = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
    out = _discrete_laplace(gen, n, num, den)
    if shape is None:
        return int(out[0])
    return out.reshape(shape)
