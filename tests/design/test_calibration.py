"""Accuracy before release: required_scale / required_epsilon, checked by plugging the answer back in.

The target is met at the answer, and missed with 1% less budget (``1.01`` times the scale, or the
mechanism calibrated at ``0.99 ε``); the target's values are recomputed here from the families' exact
methods on a dense grid, independently of the search inside the library.
"""

import math

import numpy as np
import pytest

import dpbook

FAMILIES = (dpbook.Laplace, dpbook.BIT, dpbook.Truncated)
LOWER, UPPER = 0.0, 1.0


def make(family, b):
    return (
        family(b) if family is dpbook.Laplace else family(b, lower=LOWER, upper=UPPER)
    )


def value(family, b, target, q=0.3, level=0.9):
    mech = make(family, b)
    grid = np.linspace(LOWER, UPPER, 4001)
    if target == "mse":
        return float(mech.mse(q))
    if target == "abs_bias":
        return abs(float(mech.bias(q)))
    if target == "max_mse":
        return float(np.max(mech.mse(grid)))
    if target == "max_abs_bias":
        return float(np.max(np.abs(mech.bias(grid))))
    if target == "length":
        return float(
            dpbook.expected_length(
                mech, lambda x: dpbook.confidence_interval(mech, x, level), q
            )
        )
    raise AssertionError(target)


BOUNDS = {
    "mse": 0.01,
    "abs_bias": 0.01,
    "max_mse": 0.01,
    "max_abs_bias": 0.02,
    "length": 0.4,
}


def calibrated(family, epsilon, delta):
    if family is dpbook.Truncated:
        return dpbook.truncated_scale(epsilon, delta, LOWER, UPPER)
    return dpbook.laplace_scale(epsilon, delta)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", list(BOUNDS))
def test_required_scale_meets_the_target_and_one_percent_more_misses(family, target):
    bound = BOUNDS[target]
    if family is dpbook.Laplace and target in ("abs_bias", "max_abs_bias"):
        assert (
            dpbook.required_scale(
                family, lower=LOWER, upper=UPPER, target=target, bound=bound, q=0.3
            )
            == math.inf
        )
        return
    b = dpbook.required_scale(
        family, lower=LOWER, upper=UPPER, target=target, bound=bound, q=0.3, level=0.9
    )
    assert value(family, b, target) <= bound * (1 + 1e-6)
    assert value(family, 1.01 * b, target) > bound


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", ["max_mse", "mse", "length"])
def test_required_epsilon_is_audited_and_one_percent_less_misses(family, target):
    delta, bound = 0.05, BOUNDS[target]
    eps = dpbook.required_epsilon(
        family,
        lower=LOWER,
        upper=UPPER,
        sensitivity=delta,
        target=target,
        bound=bound,
        q=0.3,
        level=0.9,
    )
    b = dpbook.required_scale(
        family, lower=LOWER, upper=UPPER, target=target, bound=bound, q=0.3, level=0.9
    )
    assert math.isclose(calibrated(family, eps, delta), b, rel_tol=1e-8)
    assert value(family, calibrated(family, eps, delta), target) <= bound * (1 + 1e-6)
    assert value(family, calibrated(family, 0.99 * eps, delta), target) > bound
    if (
        family is dpbook.Truncated
    ):  # charged its true epsilon, more than the nominal Δ/b
        assert eps > 1.05 * delta / b


def test_at_a_value_closed_form_for_laplace():
    # MSE of the Laplace mechanism is 2b^2 everywhere
    b = dpbook.required_scale(
        dpbook.Laplace, lower=0.0, upper=1.0, target="mse", bound=0.08, q=0.5
    )
    assert math.isclose(b, 0.2, rel_tol=1e-9)
    eps = dpbook.required_epsilon(
        dpbook.Laplace,
        lower=0.0,
        upper=1.0,
        sensitivity=1.0,
        target="max_mse",
        bound=0.08,
    )
    assert math.isclose(eps, 5.0, rel_tol=1e-9)


def test_half_line_worst_case_is_the_limit():
    # the ramp's MSE rises to 2b^2 as q -> inf
    b = dpbook.required_scale(
        dpbook.BIT, lower=0.0, upper=math.inf, target="max_mse", bound=0.08
    )
    assert math.isclose(b, 0.2, rel_tol=1e-6)


@pytest.mark.slow
def test_a_loose_bound_needs_no_budget():
    # on [0, 1] no scale makes the worst MSE of BIT exceed 1
    assert (
        dpbook.required_scale(
            dpbook.BIT, lower=0.0, upper=1.0, target="max_mse", bound=1.0
        )
        == math.inf
    )
    assert (
        dpbook.required_epsilon(
            dpbook.BIT,
            lower=0.0,
            upper=1.0,
            sensitivity=1.0,
            target="max_mse",
            bound=1.0,
        )
        == 0.0
    )


def test_callable_family():
    b = dpbook.required_scale(
        lambda s: dpbook.TranslatedRamp(s, dpbook.optimal_ramp_shift(s)),
        lower=0.0,
        upper=math.inf,
        target="max_abs_bias",
        bound=0.1,
    )
    assert math.isclose(dpbook.optimal_ramp_shift(b), 0.1, rel_tol=1e-8)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(target="nope", bound=1.0), "target"),
        (dict(target="mse", bound=1.0), "q"),
        (dict(target="max_mse", bound=0.0), "bound"),
        (dict(target="max_mse", bound=-1.0), "bound"),
        (dict(target="length", bound=1.0, q=0.5, level=1.0), "level"),
    ],
)
def test_bad_targets(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dpbook.required_scale(dpbook.BIT, lower=0.0, upper=1.0, **kwargs)


def test_bad_family_bounds_and_sensitivity():
    with pytest.raises(ValueError, match="family"):
        dpbook.required_scale("BIT", lower=0.0, upper=1.0, target="max_mse", bound=0.1)
    with pytest.raises(ValueError, match="lower"):
        dpbook.required_scale(
            dpbook.BIT, lower=1.0, upper=0.0, target="max_mse", bound=0.1
        )
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.required_epsilon(
            dpbook.BIT,
            lower=0.0,
            upper=1.0,
            sensitivity=0.0,
            target="max_mse",
            bound=0.1,
        )


# --- counts: the discrete families, worst cases exact over the integers ------------------------------

DISCRETE = (dpbook.DiscreteLaplace, dpbook.DiscreteBIT, dpbook.DiscreteTruncated)
N = 20  # counts in {0, ..., 20}


def make_count(family, b):
    return (
        family(b) if family is dpbook.DiscreteLaplace else family(b, lower=0, upper=N)
    )


def count_value(family, b, target, q=3, level=0.9):
    mech = make_count(family, b)
    grid = np.arange(0, N + 1.0)  # every integer true value: the exact worst case
    ci = lambda x: dpbook.confidence_interval(mech, x, level)  # noqa: E731
    return float(
        {
            "mse": lambda: mech.mse(q),
            "abs_bias": lambda: abs(mech.bias(q)),
            "max_mse": lambda: np.max(mech.mse(grid)),
            "max_abs_bias": lambda: np.max(np.abs(mech.bias(grid))),
            "length": lambda: dpbook.expected_length(mech, ci, q),
        }[target]()
    )


# lengths are step-like in b (integer ends): bounds between two attainable lengths
COUNT_BOUNDS = {
    "mse": 4.0,
    "abs_bias": 0.2,
    "max_mse": 4.0,
    "max_abs_bias": 0.5,
    "length": 7.0,
}


@pytest.mark.parametrize("family", DISCRETE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", list(COUNT_BOUNDS))
def test_count_required_scale_meets_the_target_and_one_percent_more_misses(
    family, target
):
    bound = COUNT_BOUNDS[target]
    b = dpbook.required_scale(
        family, lower=0, upper=N, target=target, bound=bound, q=3, level=0.9
    )
    if family is dpbook.DiscreteLaplace and target in ("abs_bias", "max_abs_bias"):
        assert b == math.inf  # unbiased
        return
    assert count_value(family, b, target) <= bound * (1 + 1e-6)
    assert count_value(family, 1.01 * b, target) > bound


def test_count_required_scale_closed_form_and_the_bounds_it_is_built_with():
    # Var of the discrete Laplace law 2α/(1 - α)^2 = 4 at α = 1/2: b = 1/log 2
    b = dpbook.required_scale(
        dpbook.DiscreteLaplace, lower=0, upper=N, target="max_mse", bound=4.0
    )
    assert math.isclose(b, 1 / math.log(2), rel_tol=1e-9)
    # DiscreteBIT is built with the bounds (on a half-line its bias at 0 would be smaller)
    b = dpbook.required_scale(
        dpbook.DiscreteBIT, lower=0, upper=2, target="max_mse", bound=0.5
    )
    mech = dpbook.DiscreteBIT(b, lower=0, upper=2)
    assert math.isclose(float(np.max(mech.mse([0, 1, 2]))), 0.5, rel_tol=1e-8)


@pytest.mark.parametrize("target", ["max_mse", "mse", "max_abs_bias"])
def test_count_required_epsilon_is_audited(target):
    bound, delta = COUNT_BOUNDS[target], 1
    for family in (dpbook.DiscreteBIT, dpbook.DiscreteTruncated):
        eps = dpbook.required_epsilon(
            family, lower=0, upper=N, sensitivity=delta, target=target, bound=bound, q=3
        )
        b = dpbook.required_scale(
            family, lower=0, upper=N, target=target, bound=bound, q=3
        )
        if family is dpbook.DiscreteBIT:
            assert eps == pytest.approx(delta / b, rel=1e-14)  # clamping is exactly Δ/b
            continue
        assert eps == pytest.approx(
            dpbook.discrete_truncated_epsilon(b, lower=0, upper=N, sensitivity=delta),
            rel=1e-14,
        )
        assert eps > 1.05 * delta / b  # conditioning is charged its true ε
        back = dpbook.discrete_truncated_scale(eps, lower=0, upper=N, sensitivity=delta)
        assert math.isclose(back, b, rel_tol=1e-8)
        assert (
            count_value(
                family,
                dpbook.discrete_truncated_scale(0.99 * eps, lower=0, upper=N),
                target,
            )
            > bound
        )


def test_count_refusals_say_why():
    with pytest.raises(
        ValueError, match="integer true values"
    ):  # a half-line of counts: not enumerable
        dpbook.required_scale(
            dpbook.DiscreteBIT, lower=0, upper=math.inf, target="max_mse", bound=1.0
        )
    with pytest.raises(ValueError, match="integer true values"):
        dpbook.required_scale(
            dpbook.DiscreteTruncated, lower=0, upper=10**6, target="max_mse", bound=1.0
        )
    with pytest.raises(ValueError, match="q must be integers"):
        dpbook.required_scale(
            dpbook.DiscreteBIT, lower=0, upper=N, target="mse", bound=1.0, q=2.5
        )
    with pytest.raises(ValueError, match="lower"):
        dpbook.required_scale(
            dpbook.DiscreteBIT, lower=0.5, upper=N, target="max_mse", bound=1.0
        )
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.required_epsilon(
            dpbook.DiscreteBIT,
            lower=0,
            upper=N,
            sensitivity=1.5,
            target="max_mse",
            bound=1.0,
        )


# --- profile_scale: the smallest scale the certified privacy profile allows ----------------------------


@pytest.mark.parametrize(
    "eps,delta",
    [
        (1.0, 1e-5),
        pytest.param(0.5, 1e-8, marks=pytest.mark.slow),
        pytest.param(3.0, 1e-3, marks=pytest.mark.slow),
    ],
)
def test_profile_scale_of_the_gaussian_is_the_analytic_scale(eps, delta):
    s = dpbook.profile_scale(dpbook.Gaussian, 1.0, eps, delta)
    assert s == pytest.approx(dpbook.analytic_gaussian_scale(eps, delta), rel=1e-6)
    assert dpbook.privacy_profile(dpbook.Gaussian(s), 1.0, eps) <= delta
    assert dpbook.gaussian_delta(s, eps) <= delta


def normalized(s):
    return dpbook.Normalized(s, [(0.0, 1.0)])


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 1e-5), (2.0, 1e-6)])
def test_profile_scale_is_certified_and_a_hair_less_fails(eps, delta):
    """Holohan's bounded Laplace law (Normalized on [0, 1]): the profile passes at the answer, fails 1e-6
    below it, passes on a grid up to 8 times it (the docstring's measurement), and δ > 0 buys a scale at
    which the law is not ε-DP."""
    s = dpbook.profile_scale(normalized, 1.0, eps, delta)
    assert dpbook.privacy_profile(normalized(s), 1.0, eps) <= delta
    assert dpbook.privacy_profile(normalized(s * (1 - 1e-6)), 1.0, eps) > delta
    grid = s * np.geomspace(1.0, 8.0, 13)[1:]
    assert all(dpbook.privacy_profile(normalized(g), 1.0, eps) <= delta for g in grid)
    assert dpbook.privacy_loss(normalized(s), 1.0) > eps


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 1e-5), (1.0, 0.1)])
def test_profile_scale_of_the_bounded_laplace_is_below_holohan(eps, delta):
    """Holohan et al.'s calibration (dpbook.bounded_laplace_scale) of the same law at the same (ε, δ) holds
    (its profile is at most δ) and asks for more: measured 1.08, 1.005 and 1.5 times the exact scale."""
    s = dpbook.profile_scale(normalized, 1.0, eps, delta)
    holohan = dpbook.bounded_laplace_scale(eps, delta, 1.0, 0.0, 1.0)
    assert dpbook.privacy_profile(normalized(holohan), 1.0, eps) <= delta
    assert s <= holohan


@pytest.mark.slow
def test_profile_scale_of_the_bounded_gaussian_is_below_chen_hale(
    eps=0.5, delta=1e-3, upper=1.0
):
    """Chen & Hale's σ is pure ε-DP (tests/design/test_gaussian.py); the exact profile at (ε, δ) asks for
    less: measured 0.55 and 0.53 of their σ on [0, 1] with Δ = 1 at (1, 1e-5) and (0.5, 1e-3)."""

    def make(s):
        return dpbook.GaussianTruncated(s, lower=0.0, upper=upper)

    s = dpbook.profile_scale(make, 1.0, eps, delta)
    chen_hale = dpbook.bounded_gaussian_scale(eps, delta, 1.0, 0.0, upper)
    assert s < 0.6 * chen_hale
    assert dpbook.privacy_profile(make(s), 1.0, eps) <= delta
    assert dpbook.privacy_profile(make(s * (1 - 1e-6)), 1.0, eps) > delta


def test_profile_scale_bracket_and_bad_input():
    eps, delta = 1.0, 1e-5
    s = dpbook.profile_scale(normalized, 1.0, eps, delta)
    assert dpbook.profile_scale(
        normalized, 1.0, eps, delta, low=0.5 * s, high=2 * s
    ) == pytest.approx(s, rel=1e-7)
    assert dpbook.profile_scale(normalized, 1.0, eps, delta, low=2 * s) == 2 * s
    with pytest.raises(ValueError, match="high"):
        dpbook.profile_scale(normalized, 1.0, eps, delta, high=0.5 * s)
    for kwargs, name in (
        (dict(make=1.0), "make"),
        (dict(sensitivity=0.0), "sensitivity"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(low=-1.0), "low"),
        (dict(high=math.nan), "high"),
        (dict(low=2.0, high=1.0), "low"),
    ):
        args = dict(make=normalized, sensitivity=1.0, epsilon=eps, delta=delta)
        args.update(kwargs)
        with pytest.raises(ValueError, match=name):
            dpbook.profile_scale(**args)
