"""Shared test helpers that watch the library's shared checks."""

import numpy as np

from dpbook._kernels import validation as check


def spy_on_integer_array(monkeypatch):
    """Route :func:`dpbook._kernels.validation.integer_array` through a recorder; returns the list of names it checks.

    The callers' tests use it to show that they go through the shared check (not a copy of it).
    """
    seen = []
    real = check.integer_array

    def recorder(name, value, **options):
        seen.append(name)
        return real(name, value, **options)

    monkeypatch.setattr(check, "integer_array", recorder)
    return seen


def count_law_evaluations(monkeypatch, mechanism):
    """Count the points at which ``mechanism``'s ``_cdf`` and ``_sf`` kernels are evaluated; returns a
    one-element list holding the running count (an array of ``n`` points counts ``n``).

    The intervals' tests use it to measure the cost of an interval in evaluations of the law per release.
    """
    seen = [0]
    for name in ("_cdf", "_sf"):
        real = getattr(mechanism, name)

        def recorder(x, q, real=real):
            seen[0] += np.broadcast(x, q).size
            return real(x, q)

        monkeypatch.setattr(mechanism, name, recorder)
    return seen


def replace_roots(monkeypatch, mechanism, roots):
    """Put ``roots`` in place of ``mechanism``'s closed-form roots (``_quantile_in_q``), for both ends of an
    interval: a family that computes the two at once (``_quantiles_in_q``) then asks ``roots`` for each end, as
    the default of :class:`dpbook.Mechanism` does."""
    import functools

    from dpbook.mechanism import Mechanism

    monkeypatch.setattr(mechanism, "_quantile_in_q", roots)
    monkeypatch.setattr(
        mechanism,
        "_quantiles_in_q",
        functools.partial(Mechanism._quantiles_in_q, mechanism),
    )
