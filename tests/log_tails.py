"""A shared check for the families' log-space tails (``logcdf``, ``logsf``)."""

import numpy as np


def assert_log_tails_match_logs_of_the_law(mech, xs, qs):
    """``logcdf``/``logsf`` equal ``log(cdf)``/``log(sf)`` wherever those are finite, and are infinite
    exactly where they are (the log-space versions must agree with the law where nothing underflows)."""
    for q in qs:
        for log_fn, fn in ((mech.logcdf, mech.cdf), (mech.logsf, mech.sf)):
            with np.errstate(divide="ignore"):
                want = np.log(fn(xs, q))
            got = log_fn(xs, q)
            assert np.array_equal(np.isinf(got), np.isinf(want)), (q, got, want)
            ok = np.isfinite(want)
            assert np.allclose(got[ok], want[ok], rtol=1e-12, atol=1e-15), (
                q,
                got,
                want,
            )
