"""dpbook next to production libraries: adapters to IBM's diffprivlib, float forensics, budget splits.

Part IV of the book compares dpbook with diffprivlib (Holohan et al. 2019) and OpenDP.  This module
holds the few helpers that comparison needs and that are not formulas of the papers:

* :func:`peer_scale`, :func:`dpbook_counterpart`, :func:`peer_property`, :func:`peer_sample` read a
  diffprivlib mechanism (``LaplaceTruncated``, ``LaplaceBoundedDomain``, ``LaplaceFolded``,
  ``Laplace``) and give the dpbook mechanism with the same law, or its own answers over many true
  values.  diffprivlib's ``LaplaceTruncated`` *clamps* (it is :class:`~dpbook.clamping.BIT`, Liu
  Def. 2(b)); its ``LaplaceBoundedDomain`` *conditions* (it is :class:`~dpbook.truncation.Truncated`,
  Liu Def. 2(a)) with the scale of Holohan, Antonatos, Braghin & Mac Aonghusa (2020).
* :func:`lowest_bit` reads where the last set bit of a double sits, which is what leaks from a
  floating-point sampler (Mironov 2012).

diffprivlib is imported only when a function needs it; the core :mod:`dpbook` never imports this package.
"""

from __future__ import annotations

import warnings

import numpy as np

from dpbook import BIT, Laplace, Truncated
from dpbook import _validation as check
from dpbook.mechanism import _float

__all__ = ["dpbook_counterpart", "lowest_bit", "peer_property", "peer_sample", "peer_scale"]


def _mechanisms():
    try:
        from diffprivlib import mechanisms
    except ImportError as err:  # pragma: no cover - the book's requirements install it
        raise ImportError("dpbook.peers needs diffprivlib (pip install -r requirements.txt)") from err
    return mechanisms


def _peer(mech):
    m = _mechanisms()
    if not isinstance(mech, m.Laplace):
        raise ValueError(f"mech must be a diffprivlib Laplace-family mechanism, got {mech!r}")
    return m


def peer_scale(mech):
    """The Laplace scale a diffprivlib mechanism's sampler uses.

    ``LaplaceBoundedDomain``: the scale it calibrates (Holohan et al. 2020, the fixed point of
    ``b = Δ / (ε - log ΔC(b) - log(1 - δ))``), read from its own ``_find_scale``.  The others:
    ``Δ / (ε - log(1 - δ))``, what their ``randomise`` uses.  NaN when diffprivlib's calibration
    fails (an interval narrower than ``Δ``; its numpy warnings are silenced).

    Parameters
    ----------
    mech : diffprivlib.mechanisms.Laplace
        An instance of ``Laplace`` or of one of its subclasses.

    Returns
    -------
    float
    """
    m = _peer(mech)
    if isinstance(mech, m.LaplaceBoundedDomain):
        if mech._scale is None:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                mech._scale = mech._find_scale()
        return float(mech._scale)
    return float(mech.sensitivity / (mech.epsilon - np.log(1 - mech.delta)))


def dpbook_counterpart(mech):
    """The dpbook mechanism whose law is that of the diffprivlib mechanism ``mech``'s sampler.

    ``LaplaceBoundedDomain`` -> :class:`~dpbook.truncation.Truncated` (Liu Def. 2(a)),
    ``LaplaceTruncated`` -> :class:`~dpbook.clamping.BIT` (Liu Def. 2(b)), ``Laplace`` ->
    :class:`~dpbook.laplace.Laplace`, each at :func:`peer_scale`.  ``LaplaceFolded`` (reflection into
    the bounds) has no dpbook family: ``ValueError``.
    """
    m = _peer(mech)
    b = peer_scale(mech)
    if isinstance(mech, m.LaplaceBoundedDomain):
        return Truncated(b, lower=mech.lower, upper=mech.upper)
    if isinstance(mech, m.LaplaceTruncated):
        return BIT(b, lower=mech.lower, upper=mech.upper)
    if type(mech) is m.Laplace:
        return Laplace(b)
    raise ValueError(f"mech has no dpbook counterpart: {type(mech).__name__}")


def peer_property(mech, name, q):
    """diffprivlib's own answer ``mech.<name>(q)`` at every true value in ``q``, as an array.

    diffprivlib's ``bias`` and ``variance`` take one number at a time and may compute ``inf * 0``;
    this evaluates them one by one with numpy's warnings silenced, so that a NaN it returns is
    recorded as NaN instead of stopping the caller.

    Parameters
    ----------
    mech : diffprivlib.mechanisms.Laplace
    name : {'bias', 'variance', 'mse'}
    q : float or array_like
        True values.

    Returns
    -------
    float or ndarray
    """
    _peer(mech)
    if name not in ("bias", "variance", "mse"):
        raise ValueError(f"name must be 'bias', 'variance' or 'mse', got {name!r}")
    q = check.finite_array("q", q)
    method = getattr(mech, name)
    out = np.empty(q.shape)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, v in np.ndenumerate(q):
            out[i] = method(float(v))
    return _float(out)


def peer_sample(mech, q, size):
    """``size`` releases of the true value ``q`` by diffprivlib's own ``mech.randomise``.

    Seed the mechanism (``random_state=``) for reproducible draws.

    Returns
    -------
    ndarray of shape ``(size,)``
    """
    _peer(mech)
    q = check.finite("q", q)
    n = check.size(size)
    if not isinstance(n, int):
        raise ValueError(f"size must be an int >= 0, got {size!r}")
    return np.fromiter((mech.randomise(q) for _ in range(n)), dtype=float, count=n)


def lowest_bit(x, window=None):
    """The exponent ``k`` of the least significant set bit of each double: ``x = m 2^k`` with ``m`` odd.

    Zero has no set bit: ``-inf``.  The floating-point leak of Mironov (2012): an output whose
    lowest bit is finer than every output one true value can produce rules that value out.

    Parameters
    ----------
    x : float or array_like
        Finite doubles.
    window : (float, float), optional
        Keep only the entries of ``x`` in ``[lo, hi)`` (the result is then 1-d).

    Returns
    -------
    float or ndarray

    >>> lowest_bit([0.75, 3.0, 0.1])
    array([ -2.,   0., -55.])
    """
    x = check.finite_array("x", x)
    if window is not None:
        lo, hi = window
        x = x[(x >= lo) & (x < hi)]
    mant, exp = np.frexp(x)
    m = np.abs(mant * 2.0**53).astype(np.int64)
    low = m & -m
    with np.errstate(divide="ignore"):
        tz = np.where(m == 0, -np.inf, np.log2(np.maximum(low, 1)))
    return _float(exp - 53 + tz)
