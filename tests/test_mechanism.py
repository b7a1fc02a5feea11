"""What BIT and Truncated share through ``IntervalMechanism``: parameters, attributes, the worst-case bias."""

import math

import numpy as np
import pytest

import dpbook

#: each family with how far (in scales) the bias is tabulated to check it decreases
FAMILIES = [(dpbook.BIT, 30), (dpbook.Truncated, 60)]


@pytest.mark.parametrize("family, span", FAMILIES)
def test_max_abs_bias_is_attained_at_the_bounds(family, span):
    for b, lo, hi in [
        (1.0, 0.0, math.inf),
        (2.0, -1.0, 1.0),
        (0.5, -3.0, 7.0),
        (1.0, -math.inf, 2.0),
    ]:
        mech = family(b, lower=lo, upper=hi)
        grid = np.linspace(max(lo, -span * b), min(hi, span * b), 3001)
        bias = np.asarray(mech.bias(grid))
        assert np.all(np.diff(bias) < 0)
        assert np.max(np.abs(bias)) <= mech.max_abs_bias() * (1 + 1e-12)
        assert math.isclose(np.max(np.abs(bias)), mech.max_abs_bias(), rel_tol=1e-12)
    assert family(1.0, lower=-math.inf, upper=math.inf).max_abs_bias() == 0.0


def test_worst_case_bias_of_the_ramp_and_of_restriction():
    assert dpbook.BIT(3.0).max_abs_bias() == 1.5
    assert dpbook.Truncated(1.0).max_abs_bias() == 1.0


@pytest.mark.parametrize("family", [f for f, _ in FAMILIES])
def test_attributes(family):
    mech = family(2.0, lower=-1.0, upper=4.0)
    assert mech.domain == (-1.0, 4.0) and mech.support == (-1.0, 4.0)
    assert isinstance(mech.bias(0.0), float) and mech.bias([0.0, 1.0]).shape == (2,)


@pytest.mark.parametrize("family", [f for f, _ in FAMILIES])
@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"scale": 0}, "scale"),
        ({"scale": -1}, "scale"),
        ({"scale": np.nan}, "scale"),
        ({"scale": np.inf}, "scale"),
        ({"scale": 1, "lower": 1, "upper": 1}, "lower"),
        ({"scale": 1, "lower": 2, "upper": 1}, "lower"),
        ({"scale": 1, "lower": np.nan}, "lower"),
        ({"scale": 1, "upper": np.nan}, "upper"),
    ],
)
def test_bad_parameters(family, kwargs, name):
    with pytest.raises(ValueError, match=name):
        family(**kwargs)
