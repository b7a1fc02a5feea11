"""Exact discrete Laplace noise from random integers (Canonne, Kamath & Steinke 2020, Algs 1-2).

The discrete Laplace law with scale ``b`` puts mass ``(1 - α) / (1 + α) · α^|k|`` on each integer
``k``, with ``α = exp(-1/b)``.  :func:`discrete_laplace_noise` draws from it *exactly*: every step
is a comparison of integers drawn uniformly by ``rng.integers``; no floating-point number is formed
from the random bits, so the law of the output is the discrete Laplace law itself, not a rounded
approximation of it (the floating-point Laplace sampler leaks through its low bits; an integer one
has no low bits to leak).

A float scale is a dyadic rational: ``scale.as_integer_ratio()`` gives integers ``num, den`` with
``b = num / den`` exactly, and ``1/b = den / num``.  The building blocks, after Canonne, Kamath and
Steinke (2020), "The discrete Gaussian for differential privacy" (NeurIPS), Algorithms 1 and 2:

* :func:`_bernoulli_exp_fraction` — Bernoulli(exp(-a/c)) for ``0 <= a/c <= 1`` (their Algorithm 1,
  first part): draw Bernoulli(a/(c·k)) for k = 1, 2, ... until the first 0; return 1 iff that k is
  odd.  Its probability is ``Σ_j (-a/c)^j / j! = exp(-a/c)``.
* :func:`_bernoulli_exp_large` — Bernoulli(exp(-γ)) for ``γ = g + f/c > 1`` (Algorithm 1, second
  part): ``g`` Bernoulli(exp(-1)) draws that must all be 1, then one Bernoulli(exp(-f/c)).
* :func:`_geometric` — the number of 1s before the first 0 of a Bernoulli(exp(-γ)) sequence, so
  ``P(Y = y) = (1 - e^{-γ}) e^{-γ y}``.
* :func:`_truncated_geometric` — ``U`` uniform on ``{0, ..., m-1}`` accepted with probability
  ``exp(-U/b)`` (the first step of their Algorithm 2).

The geometric magnitude ``Y`` (``α = exp(-1/b)``) is drawn as in Algorithm 2, by blocks: with block
length ``m = ⌊b⌋ >= 1`` (Algorithm 2 uses the scale's numerator and then divides by its
denominator; a block of length ``⌊b⌋`` is the same idea applied to ``Y`` directly, and keeps every
product below ``2^63`` for every float scale), ``Y = m·V + R`` with ``V`` geometric with ratio
``α^m = exp(-m·den/num)`` and ``R`` the truncated geometric on ``{0, ..., m-1}``: then
``P(Y = y) = (1 - α) α^y`` exactly.  For ``b < 1`` the block is 1 and ``V`` counts the 1s of
Bernoulli(exp(-1/b)) with ``1/b = g + f/num``.  Finally a sign ``B`` ~ Bernoulli(1/2) is drawn and
the pair ``(B = 1, Y = 0)`` is rejected (Algorithm 2's last step), which gives the discrete Laplace
law.  All loops are rejection loops run on numpy ``int64`` arrays, each round on the entries still
undecided.

The generator is numpy's ``Generator``: reproducible from a seed, fast, and **not** a
cryptographically secure source.  The exactness here is about the law; a production release must
also draw its random integers from the operating system's secure source (as OpenDP does).
"""

from __future__ import annotations

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


def _bernoulli_exp_fraction(rng, n, a, c):
    """``n`` draws of Bernoulli(exp(-a/c)), ``a`` an int or int64 array with ``0 <= a <= c``.

    Canonne, Kamath & Steinke (2020), Algorithm 1 for γ = a/c in [0, 1], with an int
    ``1 <= c < 2**62``: for ``k = 1, 2, ...`` draw Bernoulli(a/(c·k)) as
    ``rng.integers(0, c·k) < a`` until it is 0; the result is 1 iff that ``k`` is odd.  Every
    undecided entry is at the same ``k`` in a round, so ``c·k`` is one integer; if it reaches 2**63
    the draw is split into the independent pair Bernoulli(a/c), Bernoulli(1/k).  Returns a bool
    array of length ``n``.
    """
    out = np.empty(n, dtype=bool)
    idx = np.arange(n)
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), (n,))
    k = 1
    while idx.size:
        if k == 1 and (a == c).all():
            one = np.ones(idx.size, dtype=bool)  # Bernoulli(c/c) needs no draw
        elif c * k <= _INT64_MAX:
            one = rng.integers(0, c * k, size=idx.size) < a
        else:
            one = (rng.integers(0, c, size=idx.size) < a) & (
                rng.integers(0, k, size=idx.size) == 0
            )
        out[idx[~one]] = bool(k & 1)
        idx, a = idx[one], a[one]
        k += 1
    return out


def _bernoulli_exp_large(rng, n, g, f, c):
    """``n`` draws of Bernoulli(exp(-(g + f/c))) for an int ``g >= 0`` and ``0 <= f < c``.

    Canonne, Kamath & Steinke (2020), Algorithm 1 for γ > 1: ``g`` independent Bernoulli(exp(-1))
    draws must all be 1 (each entry stops at its first 0; ``g`` may be a huge Python int, the loop
    ends when no entry is left), then a Bernoulli(exp(-f/c)).  Returns a bool array of length n.
    """
    out = np.zeros(n, dtype=bool)
    idx = np.arange(n)
    done = 0
    while idx.size and done < g:
        idx = idx[_bernoulli_exp_fraction(rng, idx.size, 1, 1)]
        done += 1
    if idx.size:
        out[idx] = _bernoulli_exp_fraction(rng, idx.size, f, c)
    return out


def _geometric(rng, n, bernoulli):
    """``n`` counts of the 1s before the first 0 of ``bernoulli(size)`` sequences, as int64."""
    count = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        idx = idx[bernoulli(idx.size)]
        count[idx] += 1
    return count


def _truncated_geometric(rng, n, m, num, den):
    """``n`` draws of R on {0, ..., m-1} with P(R = r) ∝ exp(-r·den/num), for ``m·den <= num``.

    Canonne, Kamath & Steinke (2020), Algorithm 2, first step: ``U`` uniform on {0, ..., m-1},
    kept with probability exp(-U·den/num) (:func:`_bernoulli_exp_fraction`), else redrawn.
    """
    out = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        u = rng.integers(0, m, size=idx.size)
        keep = _bernoulli_exp_fraction(rng, idx.size, u * den, num)
        out[idx[keep]] = u[keep]
        idx = idx[~keep]
    return out


def _magnitude(rng, n, num, den):
    """``n`` draws of Y with P(Y = y) = (1 - α) α^y, α = exp(-den/num), as int64."""
    m = num // den
    if m == 0:  # scale < 1: 1/b = g + f/num with g >= 1
        g, f = divmod(den, num)
        return _geometric(
            rng, n, lambda size: _bernoulli_exp_large(rng, size, g, f, num)
        )
    v = _geometric(
        rng, n, lambda size: _bernoulli_exp_fraction(rng, size, m * den, num)
    )
    r = (
        _truncated_geometric(rng, n, m, num, den)
        if m > 1
        else np.zeros(n, dtype=np.int64)
    )
    if v.size and v.max() > (_INT64_MAX - (m - 1)) // m:
        raise OverflowError("a discrete Laplace draw exceeded the int64 range")
    return m * v + r


def _discrete_laplace(rng, n, num, den):
    """``n`` discrete Laplace draws with scale ``num/den`` (Algorithm 2's sign step), int64."""
    out = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:  # a sign B ~ Bernoulli(1/2); the pair (B = 1, Y = 0) is rejected
        y = _magnitude(rng, idx.size, num, den)
        minus = rng.integers(0, 2, size=idx.size) == 1
        keep = ~(minus & (y == 0))
        out[idx[keep]] = np.where(minus, -y, y)[keep]
        idx = idx[~keep]
    return out


def discrete_laplace_noise(scale, size=None, *, rng=None):
    """Exact discrete Laplace noise: ``P(K = k) ∝ exp(-|k|/scale)`` on the integers, as int64.

    Canonne, Kamath & Steinke (2020), Algorithms 1 and 2, with the scale's exact rational value
    (``float.as_integer_ratio``): only comparisons of integers drawn by ``rng.integers``, so the
    output has exactly the law ``(1 - α)/(1 + α) · α^|k|``, ``α = exp(-1/scale)`` (the two-sided
    geometric of Ghosh, Roughgarden & Sundararajan; the noise of OpenDP's integer Laplace).
    Vectorized: each rejection loop runs on numpy int64 arrays over the draws still undecided.

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
