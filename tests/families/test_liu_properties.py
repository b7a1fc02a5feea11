"""Liu (2019) Props. 1 and 2 as property tests, and McGlinchey–Mason's ratio (9)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpbook

scales = st.floats(-2, 2).map(lambda e: 10**e)


@st.composite
def bounded(draw):
    """(b, lower, upper, q) with q in [lower, upper]; one-sided bounds too; width at most 60 b."""
    b = draw(scales)
    lo = b * draw(st.floats(-10, 10))
    width = b * 10 ** draw(st.floats(-3, math.log10(60)))
    kind = draw(st.sampled_from(["interval", "lower", "upper"]))
    q = lo + width * draw(st.floats(0, 1))
    if kind == "lower":
        return b, lo, math.inf, q
    if kind == "upper":
        return b, -math.inf, lo + width, q
    return b, lo, lo + width, q


def both(b, lo, hi):
    return dpbook.BIT(b, lower=lo, upper=hi), dpbook.Truncated(b, lower=lo, upper=hi)


@settings(max_examples=100, deadline=None)
@given(bounded())
def test_prop_1a_unbiased_iff_midpoint(setup):
    b, lo, hi, q = setup
    for mech in both(b, lo, hi):
        if math.isfinite(lo) and math.isfinite(hi):
            assert abs(mech.bias((lo + hi) / 2)) <= 1e-13 * b
        gap = (hi - q) - (q - lo)  # B - A: the bias is zero only where it vanishes
        if abs(gap) > 1e-6 * b or math.isinf(gap):
            assert mech.bias(q) != 0


@settings(max_examples=100, deadline=None)
@given(bounded())
def test_prop_1b_same_sign_and_1c_bit_no_more_biased(setup):
    b, lo, hi, q = setup
    bit, trunc = both(b, lo, hi)
    gap = (hi - q) - (q - lo)
    if abs(gap) > 1e-6 * b or math.isinf(gap):
        assert np.sign(bit.bias(q)) == np.sign(trunc.bias(q)) == np.sign(gap)
    assert abs(bit.bias(q)) <= abs(trunc.bias(q)) * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(bounded(), st.floats(-700, 700))
def test_prop_1bc_hold_for_every_real_q(setup, shift):
    b, lo, hi, _ = setup
    q = (lo if math.isfinite(lo) else hi) + b * shift
    bit, trunc = both(b, lo, hi)
    assert abs(bit.bias(q)) <= abs(trunc.bias(q)) * (1 + 1e-12) + 1e-300
    if bit.bias(q) != 0 and trunc.bias(q) != 0:
        assert np.sign(bit.bias(q)) == np.sign(trunc.bias(q))


@settings(max_examples=100, deadline=None)
@given(bounded())
def test_prop_2_mse_at_most_laplace(setup):
    b, lo, hi, q = setup
    for mech in both(b, lo, hi):
        assert 0 <= mech.mse(q) <= 2 * b**2 * (1 + 1e-12)
        assert mech.variance(q) <= mech.mse(q) * (1 + 1e-12)


def test_prop_2_bound_attained_by_one_sided_truncation_at_the_bound():
    assert math.isclose(dpbook.Truncated(1.3).mse(0.0), 2 * 1.3**2, rel_tol=1e-14)


def test_prop_2_mse_consistency():
    for mech_class in (dpbook.BIT, dpbook.Truncated):
        mse = [
            mech_class(b, lower=0.0, upper=1.0).mse(0.2)
            for b in (1.0, 0.1, 0.01, 0.001)
        ]
        assert np.all(np.diff(mse) < 0) and mse[-1] <= 2 * 0.001**2


@settings(max_examples=100, deadline=None)
@given(
    st.floats(0, 300),
    st.floats(-2, 1).map(lambda e: 10**e),
    st.floats(-2, 2).map(lambda e: 10**e),
)
def test_ratio_9_closed_form_and_above_two(t, epsilon, sensitivity):
    q = t * sensitivity / epsilon
    ratio = dpbook.restriction_ramp_bias_ratio(q, epsilon, sensitivity)
    closed = 2 * math.exp(t) * (t + 2) / (2 * math.exp(t / 2) - 1)
    assert math.isclose(ratio, closed, rel_tol=1e-10)
    assert ratio > 2


def test_ratio_9_minimum_is_4_at_0():
    q = np.linspace(0, 50, 5001)
    ratio = dpbook.restriction_ramp_bias_ratio(q, 0.7, 1.3)
    assert np.argmin(ratio) == 0 and ratio[0] == 4.0 and np.all(np.diff(ratio) > 0)
    assert dpbook.restriction_ramp_bias_ratio(800.0, 1.0, 1.0) == math.inf


def test_ratio_9_bad_input():
    for kwargs, name in [
        ({"q": -1.0, "epsilon": 1, "sensitivity": 1}, "q"),
        ({"q": np.nan, "epsilon": 1, "sensitivity": 1}, "q"),
        ({"q": 1.0, "epsilon": 0, "sensitivity": 1}, "epsilon"),
        ({"q": 1.0, "epsilon": 1, "sensitivity": -1}, "sensitivity"),
    ]:
        with pytest.raises(ValueError, match=name):
            dpbook.restriction_ramp_bias_ratio(**kwargs)
