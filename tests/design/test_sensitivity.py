from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpbook
from dpbook import (
    RELATIONS,
    brute_force_sensitivity,
    covariance_sensitivity,
    histogram_sensitivity,
    mean_sensitivity,
    proportion_sensitivity,
    release_sample_mean,
    sample_covariance,
    sample_variance,
    sanitized_mean,
    variance_sensitivity,
    worst_neighbours,
)

finite = st.floats(-50, 50, allow_nan=False)
width = st.floats(0.01, 20, allow_nan=False)


def mean(d):
    return d.mean(axis=1)


def grid(lo, hi, k=4):
    return lo + (hi - lo) * np.linspace(0.0, 1.0, k)


@settings(max_examples=60, deadline=None)
@given(lo=finite, w=width, n=st.integers(3, 5), relation=st.sampled_from(RELATIONS))
def test_mean_and_variance_match_brute_force(lo, w, n, relation):
    hi = lo + w
    values = grid(lo, hi)
    assert np.isclose(
        brute_force_sensitivity(mean, values, n, relation=relation),
        mean_sensitivity(lo, hi, n),
        rtol=1e-10,
    )
    assert np.isclose(
        brute_force_sensitivity(sample_variance, values, n, relation=relation),
        variance_sensitivity(lo, hi, n),
        rtol=1e-10,
    )


@settings(max_examples=40, deadline=None)
@given(
    x0=finite,
    wx=width,
    y0=finite,
    wy=width,
    n=st.integers(3, 4),
    relation=st.sampled_from(RELATIONS),
)
def test_covariance_matches_brute_force(x0, wx, y0, wy, n, relation):
    values = np.array(
        [(x, y) for x in grid(x0, x0 + wx, 3) for y in grid(y0, y0 + wy, 3)]
    )
    got = brute_force_sensitivity(sample_covariance, values, n, relation=relation)
    assert np.isclose(
        got, covariance_sensitivity((x0, x0 + wx), (y0, y0 + wy), n), rtol=1e-10
    )


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("n", [2, 3, 6])
def test_proportion_and_histogram(relation, n):
    assert np.isclose(
        brute_force_sensitivity(mean, [0.0, 1.0], n, relation=relation),
        proportion_sensitivity(n),
    )
    cells = np.eye(3)
    own = brute_force_sensitivity(lambda d: d.mean(axis=1), cells, n, relation=relation)
    public = brute_force_sensitivity(
        lambda d: d.sum(axis=1) / n, cells, n, relation=relation
    )
    assert np.isclose(
        own, histogram_sensitivity(n, relation=relation, denominator="own")
    )
    assert np.isclose(
        public, histogram_sensitivity(n, relation=relation, denominator="public")
    )


def test_interior_grid_does_not_reach_the_bound_and_the_worst_case_sits_on_the_bounds():
    assert np.isclose(
        brute_force_sensitivity(sample_variance, np.linspace(0, 1, 9), 4),
        variance_sensitivity(0, 1, 4),
    )
    assert (
        brute_force_sensitivity(sample_variance, np.linspace(0.25, 0.75, 5), 4)
        < variance_sensitivity(0, 1, 4) / 3
    )
    gap, d1, d2 = worst_neighbours(sample_variance, np.linspace(0, 1, 9), 4)
    assert np.isclose(abs(sample_variance(d1) - sample_variance(d2)), gap)
    assert set(d1) | set(d2) <= {0.0, 1.0}


@pytest.mark.parametrize(
    "relation, sizes", [("substitution", (5, 5)), ("add_remove", (5, 4))]
)
def test_worst_pair_is_a_neighbouring_pair(relation, sizes):
    gap, d1, d2 = worst_neighbours(mean, grid(-1, 2), 5, relation=relation)
    assert (len(d1), len(d2)) == sizes
    only_1 = Counter(d1.tolist()) - Counter(d2.tolist())
    only_2 = Counter(d2.tolist()) - Counter(d1.tolist())
    assert sum(only_1.values()) == 1 and sum(only_2.values()) == (
        1 if relation == "substitution" else 0
    )
    assert np.isclose(gap, abs(d1.mean() - d2.mean()))


def test_doctest_values():
    assert mean_sensitivity(0.0, 10.0, 50) == 0.2
    assert proportion_sensitivity(4) == 0.25
    assert brute_force_sensitivity(mean, [0.0, 0.5, 1.0], 4) == 0.25


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: mean_sensitivity(1, 0, 3), "lower"),
        (lambda: mean_sensitivity(0, np.inf, 3), "bounds"),
        (lambda: mean_sensitivity(0, 1, 0), "n"),
        (lambda: mean_sensitivity(0, 1, 2.5), "n"),
        (lambda: variance_sensitivity(0, 1, 1), "n"),
        (lambda: covariance_sensitivity((0, 1), (1, 1), 3), "y_bounds"),
        (lambda: covariance_sensitivity(0, (0, 1), 3), "x_bounds"),
        (lambda: histogram_sensitivity(3, relation="swap"), "relation"),
        (lambda: histogram_sensitivity(3, denominator="n"), "denominator"),
        (lambda: brute_force_sensitivity(mean, [0.0], 3), "values"),
        (lambda: brute_force_sensitivity(mean, [0.0, np.nan], 3), "values"),
        (
            lambda: brute_force_sensitivity(mean, [0.0, 1.0], 3, relation="swap"),
            "relation",
        ),
        (lambda: brute_force_sensitivity(mean, np.linspace(0, 1, 60), 9), "values"),
        (lambda: sanitized_mean([0.5, 2.0], 0, 1, 1.0), "data"),
        (lambda: sanitized_mean([0.5], 0, 1, 0.0), "epsilon"),
        (lambda: sanitized_mean([0.5], 0, 1, 1.0, mechanism="bit"), "mechanism"),
        (
            lambda: sanitized_mean(
                [0.5], 0, 1, 1.0, mechanism=lambda scale, **bounds: scale
            ),
            "mechanism",
        ),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _laplace_family(scale, **bounds):
    return dpbook.Laplace(scale)


@pytest.mark.parametrize("mechanism", [dpbook.BIT, dpbook.Truncated, _laplace_family])
def test_sanitized_mean_law(mechanism):
    rng = np.random.default_rng(7)
    n, lo, hi, eps = 20, 0.0, 4.0, 0.5
    data = np.full((20000, n), 0.6)
    data[:, 0] = 3.0  # mean 0.72
    out = sanitized_mean(data, lo, hi, eps, mechanism=mechanism, rng=rng)
    assert out.shape == (20000,)
    b = dpbook.laplace_scale(eps, mean_sensitivity(lo, hi, n))
    mech = mechanism(b, lower=lo, upper=hi)
    q = 0.72
    se = out.std(ddof=1) / np.sqrt(out.size)
    assert abs(out.mean() - mech.mean(q)) < 5 * se
    if mechanism is dpbook.BIT:
        p_lo = np.mean(out == lo)
        assert abs(p_lo - mech.pmf(mech.lower, q)) < 5 * np.sqrt(
            p_lo * (1 - p_lo) / out.size
        )
        inside = out[(out > lo) & (out < hi)]
        assert inside.size > 0
    else:
        assert stats.kstest(out, lambda x: mech.cdf(x, q)).pvalue > 1e-3
    assert isinstance(
        sanitized_mean([0.1, 0.2], 0, 1, 1.0, mechanism=mechanism, rng=rng), float
    )


def test_release_sample_mean_matches_sanitized_mean_in_law():
    data = np.random.default_rng(3).uniform(-1, 1, size=(5000, 10))
    a = sanitized_mean(
        data, -1, 1, 2.0, mechanism=dpbook.Truncated, rng=np.random.default_rng(11)
    )
    b = release_sample_mean(
        data.mean(axis=1),
        10,
        -1,
        1,
        2.0,
        mechanism=dpbook.Truncated,
        rng=np.random.default_rng(11),
    )
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="sample_mean"):
        release_sample_mean([0.5, 1.5], 10, 0, 1, 1.0)
    with pytest.raises(ValueError, match="n"):
        release_sample_mean(0.5, 0, 0, 1, 1.0)
