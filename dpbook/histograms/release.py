"""Releasing a histogram: noisy counts cell by cell, then a post-processing of the noisy vector only.

The release is ``post(mechanism.sample(counts), total)``: the input mechanism adds its noise to each
true count, and the post-processing (:data:`POSTPROCESSINGS`) sees the noisy vector and the public
total, never the true counts.  Its privacy is therefore the input mechanism's (post-processing
cannot add privacy loss: Dwork & Roth 2014, Proposition 2.1, reference ``dwork2014``), with the
total as a public invariant: the release is private only among histograms sharing that total.
"""

from __future__ import annotations

import numpy as np

from ._engine import counts_array, noise_family, post_function
from .postprocess import clamp_counts, integer_simplex, project_simplex

__all__ = ["POSTPROCESSINGS", "release_histogram"]


def _raw(noisy, total=None):
    """The noisy counts as released (``total`` unused)."""
    return np.asarray(noisy)


def _clamp(noisy, total=None):
    """Each cell ``max(y, 0)`` (``total`` unused): :func:`dpbook.clamp_counts`."""
    return clamp_counts(noisy)


def _needs_total(name, total):
    if total is None:
        raise ValueError(
            f"total must be given for post={name!r} (the public total the counts sum to), got None"
        )
    return total


def _simplex(noisy, total):
    """The Euclidean projection onto ``{x >= 0, sum x = total}``: :func:`dpbook.project_simplex`."""
    return project_simplex(noisy, _needs_total("simplex", total))


def _integer_simplex(noisy, total):
    """The nearest nonnegative integer vector summing to ``total``: :func:`dpbook.integer_simplex`."""
    return integer_simplex(noisy, _needs_total("integer_simplex", total))


class _PostProcessings(dict):
    """The post-processings of a noisy histogram, by name (functions of ``(noisy, total)``).

    ``"raw"`` and ``"clamp"`` ignore ``total``; ``"simplex"`` and ``"integer_simplex"`` need it (a
    ``ValueError`` naming ``total`` without it).  A ``dict``: ``POSTPROCESSINGS["simplex"](y, 10)``.
    """


POSTPROCESSINGS = _PostProcessings(
    raw=_raw,
    clamp=_clamp,
    simplex=_simplex,
    integer_simplex=_integer_simplex,
)

#: The post-processings that need the public total.
NEEDS_TOTAL = frozenset({"simplex", "integer_simplex"})


def release_histogram(counts, mechanism, post, *, total=None, rng=None):
    """Release a histogram: noisy counts from ``mechanism`` cell by cell, then the post-processing ``post``.

    ``noisy = mechanism.sample(counts)`` (each true count plus independent noise), then
    ``POSTPROCESSINGS[post](noisy, total)``.  The post-processing receives the noisy vector and the
    public ``total`` only, so the release is exactly as private as the noisy counts (post-processing,
    Dwork & Roth 2014, ``dwork2014``), the total being a public invariant: a histogram with sensitivity
    ``Δ`` (one person changes at most ``Δ`` in total over the cells, L1) is ε-DP at ``scale = Δ/ε``.

    Parameters
    ----------
    counts : array_like, shape (..., n)
        The true counts (``>= 0``; integers for :class:`dpbook.DiscreteLaplace`); leading axes are
        independent histograms.
    mechanism : dpbook.Laplace or dpbook.DiscreteLaplace
        The input mechanism (a release that is the count plus independent noise).
    post : {'raw', 'clamp', 'simplex', 'integer_simplex'}
        The post-processing (:data:`POSTPROCESSINGS`).
    total : float, int or array_like, shape (...,), keyword-only
        The public total, needed by ``'simplex'`` and ``'integer_simplex'`` (an integer for the
        latter).  Never read from ``counts``: passing the true total makes it a public invariant.
    rng : int, numpy.random.Generator or None, keyword-only
        The random generator (SPEC 7).

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Floats (``int64`` for ``'integer_simplex'``, and for ``'raw'`` with discrete noise).

    Examples
    --------
    >>> from dpbook import DiscreteLaplace, release_histogram
    >>> x = release_histogram([5, 0, 12], DiscreteLaplace(1.0), "integer_simplex", total=17, rng=1)
    >>> int(x.sum()), bool((x >= 0).all())
    (17, True)
    """
    fn = post_function(post, POSTPROCESSINGS)
    mech = noise_family(mechanism)
    arr = counts_array(counts, mech)
    if post in NEEDS_TOTAL:
        _needs_total(post, total)
    noisy = mech.sample(arr, rng=rng)
    return fn(np.asarray(noisy), total)
