"""pytest set-up for the tests, the notebooks and the doctests.

Hypothesis draws the same cases in every run (``derandomize``) and keeps no database of past
failures: a run is reproducible, and CI cannot fail on a case no earlier run drew.  A case worth
keeping is written into its test as an ``@example``.  To search afresh, run with
``--hypothesis-profile=explore``.
"""

from hypothesis import settings

settings.register_profile("dpbook", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile("dpbook")

# The library is imported once, under its package names, before any doctest is collected: pytest's
# importlib mode would otherwise load a module given by its path (``pytest dpbook/x.py tests/...``) a
# second time, and a test's monkeypatch would reach one copy while the library calls the other.
import dpbook  # noqa: E402, F401


def pytest_configure(config):
    # the chapters nbval runs are kept in the build's execution cache (_ext/dpbook_site/nbval_cache.py)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))
    from dpbook_site.nbval_cache import NbvalCache, available

    if available():
        config.pluginmanager.register(NbvalCache(), "dpbook-nbval-cache")
