"""The shared checks of :mod:`dpbook._kernels.validation` (the per-caller tests sit with each caller's tests)."""

import math
import re

import numpy as np
import pytest
from spies import spy_on_integer_array

from dpbook._kernels import validation as check


@pytest.mark.parametrize(
    "bad, kind",
    [
        (math.nan, "NaN"),
        ([1.0, math.nan], "NaN"),
        (math.inf, "finite"),
        ([-math.inf, 2.0], "finite"),
        (2.5, "integers"),
        ([0.0, 1.0, -0.5], "integers"),
        (3.0000000001, "integers"),  # no tolerance: a near-integer is not a count
        (3 + 2.0**-51, "integers"),  # the float just above 3
        (np.nextafter(-7.0, -8.0), "integers"),
        ("a", "real numbers"),
        ([1, "a"], "real numbers"),
    ],
)
def test_integer_array_refuses_each_kind_of_bad_input_naming_parameter_and_value(
    bad, kind
):
    with pytest.raises(ValueError, match=kind) as info:
        check.integer_array("counts", bad)
    message = str(info.value)
    assert message.startswith("counts must")
    assert repr(bad) in message


def test_integer_array_limit_and_reason():
    assert check.integer_array("x", 2.0**52, limit=2.0**52) == 2.0**52
    assert check.integer_array("x", -(2.0**52), limit=2.0**52) == -(2.0**52)
    for bad in (2.0**52 + 2, [0.0, -(2.0**53)]):
        with pytest.raises(
            ValueError,
            match=re.escape("x must be integers with |x| <= 2**52 (why), got"),
        ):
            check.integer_array("x", bad, limit=2.0**52, why=" (why)")
    with pytest.raises(
        ValueError, match=re.escape("x must be integers with |x| <= 10.0, got 11")
    ):
        check.integer_array("x", 11, limit=10.0)
    # without a limit every float beyond 2**52 is an integer (their spacing is >= 1)
    assert check.integer_array("x", 2.0**60) == 2.0**60


@pytest.mark.parametrize(
    "good",
    [
        0,
        -3,
        7.0,
        np.int64(5),
        np.float32(4.0),
        [1, 2, 3],
        [[0.0, -1.0], [2.0, 1e15]],
        np.arange(4),
        np.array(-2.0),
        [],
    ],
)
def test_integer_array_passes_integers_as_a_float_array_of_the_same_shape(good):
    arr = check.integer_array("q", good)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float64
    assert arr.shape == np.shape(good)
    assert np.array_equal(arr, np.asarray(good, dtype=float))


def test_the_spy_records_and_still_checks(monkeypatch):
    seen = spy_on_integer_array(monkeypatch)
    assert check.integer_array("n", [1, 2]).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="n must be integers"):
        check.integer_array("n", 0.5)
    assert seen == ["n", "n"]


@pytest.mark.parametrize(
    "bad",
    [
        True,
        np.array([True, False]),
        "1",
        ["0.5"],
        1 + 0j,
        np.array([1, 2], dtype=object),
        {1: 2},
    ],
)
def test_only_real_numbers_are_numbers(bad):
    """A string, a bool, a complex number or an object array is refused, naming the parameter (numpy would
    convert the first two to floats without a word)."""
    for check_one in (check.real_array, check.finite_array, check.integer_array):
        with pytest.raises(ValueError, match="q must be real numbers"):
            check_one("q", bad)


def test_a_size_beyond_memory_is_refused_before_allocating():
    for size in (10**13, (10**7, 10**7)):
        with pytest.raises(ValueError, match=r"size=.* bytes"):
            check.size(size)
    assert check.size((1000, 1000)) == (1000, 1000)
