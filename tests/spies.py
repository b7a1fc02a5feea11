"""Shared test helpers that watch the library's shared checks."""

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
