"""The exact auditor for integer-valued mechanisms: :class:`DiscreteDescription` and its search.

A discrete family (``dpbook.DiscreteLaplace``, ``DiscreteBIT``, ``DiscreteTruncated``) describes its law
to the auditor by a :class:`DiscreteDescription`: the log-ratio of the masses of one output under two
true values, the support, and two theorems of the family (each proved where the family defines it):
where, for one pair, the largest log-ratio over outputs sits (``outputs``), and where, over pairs, the
worst pair sits (``worst_pairs``).  :func:`dpbook.privacy_report` hands such a description to
:func:`discrete_report`, which never looks at the family.

The privacy loss of a law on the integers is a maximum of finitely many numbers once the pairs and the
outputs are finite: for true values ``q1, q2`` it is ``max_k log P(M(q1) = k)/P(M(q2) = k)`` (``inf`` where
``M(q2)`` cannot land on an output ``M(q1)`` can).  So the audit is exact:

* pairs: on a finite domain of integer true values every pair ``(q, q ± δ)``, ``1 <= δ <= Δ``, is
  evaluated when the count of (pairs x outputs) stays below ``2^24`` (about a minute on a slow core,
  well under 1 GiB in chunks); otherwise (an infinite or very long domain) the family's ``worst_pairs``;
* outputs: on a finite support (or window) every output, under the same budget; otherwise the family's
  ``outputs(q1, q2)``: finitely many integers among which the maximum over any integer interval of
  outputs is attained, to which the auditor adds the interval's ends.

A request the budget cannot serve and no theorem covers is refused with a ``ValueError`` that says
what was asked and the limit.  This module imports numpy and the standard library only.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from ..neighbours import Neighbours

__all__ = ["discrete_pair_loss", "discrete_report"]


#: (pair, output) evaluations one audit may need before it is refused
_MAX_EVALUATIONS = 2**24


#: evaluations at once (bounded memory: a few arrays of this many doubles)
_CHUNK = 2**20


def _integer_interval(name, value):
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi), got {value!r}") from None
    lo, hi = check.extended_real(name, lo), check.extended_real(name, hi)
    if lo > hi:
        raise ValueError(f"{name} must have lo <= hi, got {value!r}")
    return float(math.ceil(lo)) if math.isfinite(lo) else lo, float(
        math.floor(hi)
    ) if math.isfinite(hi) else hi


def discrete_report(
    desc, sensitivity, domain, window=None, neighbours=None, name="mechanism"
):
    """The exact privacy loss of a discrete family: a dict of :class:`dpbook.PrivacyReport`'s fields.

    Parameters
    ----------
    desc : DiscreteDescription
    sensitivity : int
        ``Δ >= 1``, an integer (a float with an integer value is accepted): true values at most ``Δ``
        apart are neighbours.
    domain : (float, float)
        The true values (integers in this interval; ends may be infinite).
    window : (float, float), optional
        Only outputs in this interval are considered.
    neighbours : None or 'additive'
    name : str
        The family's name, for messages.

    Returns
    -------
    dict
        ``epsilon``, ``q1``, ``q2``, ``output``, ``kind`` (``'atom'``: every output is a point mass; ``'support'``
        where ``M(q1)`` reaches an output ``M(q2)`` cannot), ``exact=True``, ``slack=0.0``.
    """
    if neighbours is not None:
        Neighbours.parse(
            f"neighbours (for the integer-valued {name})",
            neighbours,
            (Neighbours.ADDITIVE,),
        )
    delta = check.positive("sensitivity", sensitivity)
    if delta != math.floor(delta):
        raise ValueError(
            f"sensitivity must be an integer for the integer-valued {name}, got {sensitivity!r}"
        )
    lo, hi = _integer_interval("domain", domain)
    if lo > hi:
        raise ValueError(f"domain holds no integer, got {domain!r}")
    s_lo, s_hi = desc.support
    w_lo, w_hi = (
        (-math.inf, math.inf) if window is None else _integer_interval("window", window)
    )
    o_lo, o_hi = max(s_lo, w_lo), min(s_hi, w_hi)
    if o_lo > o_hi:  # no output in the window: nothing can be told apart
        q = lo if math.isfinite(lo) else (hi if math.isfinite(hi) else 0.0)
        return dict(
            epsilon=0.0, q1=q, q2=q, output=math.nan, kind="atom", exact=True, slack=0.0
        )
    n_out = o_hi - o_lo + 1  # inf for an unbounded range of outputs
    width = hi - lo
    # pairs (q, q + d), d in ±1..±min(Δ, width)
    steps = min(delta, width)
    n_pairs = (
        (width + 1) * 2 * steps - steps * (steps + 1)
        if math.isfinite(width)
        else math.inf
    )
    if steps == 0:
        return dict(
            epsilon=0.0,
            q1=lo,
            q2=lo,
            output=math.nan,
            kind="atom",
            exact=True,
            slack=0.0,
        )
    per_pair = (
        n_out
        if math.isfinite(n_out) and n_out * max(n_pairs, 1) <= _MAX_EVALUATIONS
        else None
    )
    if math.isfinite(n_pairs) and n_pairs * (per_pair or 16) <= _MAX_EVALUATIONS:
        q1, q2 = _all_pairs(lo, hi, int(steps))
    elif desc.worst_pairs is not None:
        pairs = desc.worst_pairs(lo, hi, delta)
        q1 = np.array([p[0] for p in pairs], dtype=float)
        q2 = np.array([p[1] for p in pairs], dtype=float)
        per_pair = (
            n_out
            if math.isfinite(n_out) and n_out * q1.size <= _MAX_EVALUATIONS
            else None
        )
    else:
        raise ValueError(
            f"auditing {name} on domain={domain!r} with sensitivity={sensitivity!r} needs {n_pairs:.3g} "
            f"pairs x {n_out:.3g} outputs; the limit is {_MAX_EVALUATIONS} evaluations (about a minute) and "
            "the family states no worst pair"
        )
    if per_pair is not None:
        outputs = np.arange(o_lo, o_hi + 1.0)[None, :]
        best = _best(desc, q1[:, None], q2[:, None], outputs)
    else:
        best = _best(
            desc, q1[:, None], q2[:, None], _candidates(desc, q1, q2, o_lo, o_hi)
        )
    eps, i, k = best
    kind = "support" if eps == math.inf else "atom"
    return dict(
        epsilon=float(eps),
        q1=float(q1[i]),
        q2=float(q2[i]),
        output=float(k),
        kind=kind,
        exact=True,
        slack=0.0,
    )


def discrete_pair_loss(desc, q1, q2, window=None, name="mechanism"):
    """The exact loss ``max_k log P(M(q1) = k)/P(M(q2) = k)`` of each pair of integer true values.

    Every output of the support (inside ``window``) when the pairs times the outputs stay within the
    budget of ``2^24`` evaluations; otherwise the family's ``outputs(q1, q2)`` theorem plus the ends of
    the outputs' interval.  ``-inf`` never occurs (a pair has a common output or ``+inf``).

    Parameters
    ----------
    desc : DiscreteDescription
    q1, q2 : array_like
        Integer true values (broadcast together).
    window : (float, float), optional
        Only outputs in this interval are considered.
    name : str
        The family's name, for messages.

    Returns
    -------
    ndarray
        Shaped like the broadcast of ``q1`` and ``q2``.
    """
    why = f" for the integer-valued {name}"
    q1, q2 = (
        check.integer_array("q1", q1, why=why),
        check.integer_array("q2", q2, why=why),
    )
    shape = np.broadcast(q1, q2).shape
    q1, q2 = (np.array(v, dtype=float).ravel() for v in np.broadcast_arrays(q1, q2))
    s_lo, s_hi = desc.support
    w_lo, w_hi = (
        (-math.inf, math.inf) if window is None else _integer_interval("window", window)
    )
    o_lo, o_hi = max(s_lo, w_lo), min(s_hi, w_hi)
    if o_lo > o_hi:
        return np.zeros(shape)  # no output to tell the two laws apart by
    n_out = o_hi - o_lo + 1
    if q1.size > _MAX_EVALUATIONS:
        raise ValueError(
            f"q1, q2: {q1.size} pairs exceed the limit of {_MAX_EVALUATIONS} evaluations"
        )
    if math.isfinite(n_out) and n_out * q1.size <= _MAX_EVALUATIONS:
        cand = np.broadcast_to(
            np.arange(o_lo, o_hi + 1.0)[None, :], (q1.size, int(n_out))
        )
    else:
        cand = _candidates(desc, q1, q2, o_lo, o_hi)
    out = np.empty(q1.size)
    rows = max(1, _CHUNK // max(cand.shape[1], 1))
    for start in range(0, q1.size, rows):
        sl = slice(start, start + rows)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            r = np.asarray(
                desc.log_ratio(cand[sl], q1[sl, None], q2[sl, None]), dtype=float
            )
        r = np.where(np.isnan(r), -math.inf, np.broadcast_to(r, cand[sl].shape))
        out[sl] = r.max(axis=1)
    return out.reshape(shape)


def _candidates(desc, q1, q2, o_lo, o_hi):
    """The outputs where each pair's log-ratio is largest over ``[o_lo, o_hi]``: the family's ``outputs``
    theorem plus the interval's finite ends, clipped into it (one row per pair)."""
    cand = np.asarray(desc.outputs(q1, q2), dtype=float).reshape(q1.size, -1)
    ends = [v for v in (o_lo, o_hi) if math.isfinite(v)]
    cand = np.concatenate(
        [cand, np.broadcast_to(np.array(ends, dtype=float), (q1.size, len(ends)))],
        axis=1,
    )
    return np.clip(np.where(np.isfinite(cand), cand, q1[:, None]), o_lo, o_hi)


def _all_pairs(lo, hi, steps):
    q = np.arange(lo, hi + 1.0)
    q1, q2 = [], []
    for d in range(1, steps + 1):
        q1 += [q[:-d], q[d:]]
        q2 += [q[d:], q[:-d]]
    return np.concatenate(q1), np.concatenate(q2)


def _best(desc, q1, q2, outputs):
    """``(max log-ratio, pair index, output)`` over the rows ``q1, q2`` (n x 1) and ``outputs`` (n x m or 1 x m)."""
    n = q1.shape[0]
    m = outputs.shape[1]
    rows = max(1, _CHUNK // max(m, 1))
    best = (-math.inf, 0, math.nan)
    for start in range(0, n, rows):
        a, b = q1[start : start + rows], q2[start : start + rows]
        k = outputs if outputs.shape[0] == 1 else outputs[start : start + rows]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            r = np.asarray(desc.log_ratio(k, a, b), dtype=float)
        r = np.where(
            np.isnan(r), -math.inf, np.broadcast_to(r, np.broadcast(k, a).shape)
        )
        j = int(np.argmax(r))
        v = float(r.flat[j])
        if v > best[0]:
            row, col = divmod(j, r.shape[1])
            kk = np.broadcast_to(k, r.shape)[row, col]
            best = (v, start + row, float(kk))
    return best
