"""The samplers' in-place bound (``dpbook._kernels.arrays._bound_in_place``): numpy's own values, faster."""

import math

import numpy as np
import pytest

from dpbook._kernels.arrays import _CONSTANT, _bound_in_place


def _cases():
    rng = np.random.default_rng(50)
    x = rng.normal(
        size=3 * _CONSTANT + 17
    )  # several blocks of the constant and a short last one
    x[:6] = [-0.0, 0.0, np.nan, np.inf, -np.inf, 5e-324]
    return x


@pytest.mark.parametrize(
    "lower, upper",
    [
        (0.0, math.inf),
        (-0.0, math.inf),
        (-math.inf, 0.0),
        (-math.inf, -0.0),
        (-0.5, 0.25),
        (np.float64(1e-300), math.inf),
        (-math.inf, math.inf),
        (1, math.inf),
    ],
)
def test_the_same_values_as_numpy(lower, upper):
    """Bit for bit what numpy's scalar ``maximum``/``minimum`` (one finite bound) or ``clip`` (two) give, signed
    zeros and NaNs included, in place; a strided or short array, and array bounds, take numpy's own call."""
    x = _cases()
    if lower != -math.inf and upper != math.inf:
        ref = np.clip(x, lower, upper)
    elif lower != -math.inf:
        ref = np.maximum(x, lower)
    elif upper != math.inf:
        ref = np.minimum(x, upper)
    else:
        ref = x.copy()
    out = x.copy()
    got = _bound_in_place(out, lower, upper)
    assert got is out
    assert np.array_equal(out.view(np.int64), ref.view(np.int64))
    strided = x.copy()[::3]
    _bound_in_place(strided, lower, upper)
    assert np.array_equal(strided.view(np.int64), ref[::3].view(np.int64))
    short = x[:40].copy()
    _bound_in_place(short, lower, upper)
    assert np.array_equal(short.view(np.int64), ref[:40].view(np.int64))


def test_array_bounds_and_a_2d_block():
    x = _cases()[: 2 * _CONSTANT].reshape(2, -1)
    lo = np.full(x.shape, -0.1)
    ref = np.clip(x, lo, 0.3)
    assert np.array_equal(_bound_in_place(x.copy(), lo, 0.3), ref, equal_nan=True)
    ref = np.maximum(x, 0.2)
    assert np.array_equal(_bound_in_place(x.copy(), 0.2), ref, equal_nan=True)
