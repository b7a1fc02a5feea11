"""Shared by the interval mechanisms' tests (BIT, Truncated): the comparison rule and the parameter cases."""

import math

import numpy as np
from hypothesis import strategies as st

#: relative agreement asked of every closed form against quadrature
REL = 1e-10


def close(value, ref, atol=0.0):
    assert np.isfinite(value)
    assert abs(value - ref) <= REL * abs(ref) + atol, (value, ref)


@st.composite
def setups(draw):
    """(b, lower, upper, q): finite, [l, inf) and (-inf, u]; q inside, near and up to 700 b outside."""
    b = 10 ** draw(st.floats(-2, 2))
    kind = draw(st.sampled_from(["interval", "lower", "upper"]))
    anchor = b * draw(st.floats(-5, 5))
    width = b * 10 ** draw(st.floats(-3, 3))
    lo, hi = {
        "interval": (anchor, anchor + width),
        "lower": (anchor, math.inf),
        "upper": (-math.inf, anchor),
    }[kind]
    where = draw(st.sampled_from(["inside", "lo", "hi"]))
    if where == "inside" and kind == "interval":
        q = lo + width * draw(st.floats(0, 1))
    else:
        base = {"lo": lo, "hi": hi}.get(where, anchor)
        base = anchor if not math.isfinite(base) else base
        q = base + b * draw(st.one_of(st.floats(-700, 700), st.floats(-3, 3)))
    return b, lo, hi, q
