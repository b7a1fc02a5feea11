"""Shared test helper: the randomized transform of a release exactly as the exact intervals compute it."""

import numpy as np


def transform(mech, x, q, v, upper):
    """The lower tail ``P(M < x) + v P(M = x)`` (``upper`` false) or the upper one, computed as the intervals
    compute it (``v`` None: the plain interval's ``P(M <= x)``, resp. ``P(M >= x)``)."""
    step = 1.0 if mech.integer_valued else None
    bx = x - step if step else np.nextafter(x, -np.inf)
    if not upper:
        if v is None:
            return mech.cdf(x, q)
        below, at = mech.cdf(bx, q), mech.cdf(x, q)
        return below + v * np.maximum(at - below, 0.0)
    if v is None:
        return mech.sf(bx, q)
    above, at = mech.sf(x, q), mech.sf(bx, q)
    return above + (1.0 - v) * np.maximum(at - above, 0.0)
