"""Tests of dpbook/histograms/release.py: the release of a histogram and what its post-processing sees."""

import numpy as np
import pytest

import dpbook
from dpbook import (
    BIT,
    POSTPROCESSINGS,
    DiscreteBIT,
    DiscreteLaplace,
    Laplace,
    Rounded,
    release_histogram,
)
from dpbook.histograms import release


def test_postprocessings_named_and_need_total():
    assert set(POSTPROCESSINGS) == {"raw", "clamp", "simplex", "integer_simplex"}
    y = np.array([[3.5, -1.0, 2.0]])
    assert np.array_equal(POSTPROCESSINGS["raw"](y, None), y)
    assert np.array_equal(POSTPROCESSINGS["clamp"](y, None), [[3.5, 0.0, 2.0]])
    for name in ("simplex", "integer_simplex"):
        with pytest.raises(ValueError, match="total"):
            POSTPROCESSINGS[name](y, None)
    assert POSTPROCESSINGS["simplex"](y, 4.0).sum() == pytest.approx(4.0)
    assert POSTPROCESSINGS["integer_simplex"](y, 4).sum() == 4


@pytest.mark.parametrize("mech", [Laplace(1.5), DiscreteLaplace(1.5)])
def test_release_invariants_and_seed(mech):
    counts = np.array([[0, 3, 40], [7, 7, 7]])
    for post in POSTPROCESSINGS:
        x = release_histogram(counts, mech, post, total=counts.sum(-1), rng=5)
        assert x.shape == counts.shape
        again = release_histogram(counts, mech, post, total=counts.sum(-1), rng=5)
        assert np.array_equal(x, again)
        if post != "raw":
            assert (x >= 0).all()
        if post in ("simplex", "integer_simplex"):
            assert np.allclose(x.sum(-1), counts.sum(-1))
    x = release_histogram(counts, mech, "integer_simplex", total=[43, 21], rng=1)
    assert x.dtype == np.int64 and x.sum(-1).tolist() == [43, 21]


def test_postprocessing_sees_only_the_noisy_vector_and_the_total(monkeypatch):
    """The privacy of the release is the mechanism's: the post-processing receives the noisy vector (the
    mechanism's draw, not the counts) and the public total, and nothing else."""
    seen = []
    real = POSTPROCESSINGS["simplex"]

    def spy(*args, **kwargs):
        seen.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setitem(POSTPROCESSINGS, "simplex", spy)
    counts = np.array([5.0, 0.0, 12.0])
    mech = Laplace(2.0)
    out = release_histogram(counts, mech, "simplex", total=17.0, rng=11)
    assert len(seen) == 1
    (noisy, total), kwargs = seen[0]
    assert kwargs == {}
    expected_noisy = mech.sample(counts, rng=11)
    assert np.array_equal(
        noisy, expected_noisy
    )  # the mechanism's draw with the same seed
    assert not np.array_equal(noisy, counts)
    assert not np.shares_memory(noisy, counts)
    assert total == 17.0
    assert np.array_equal(out, real(expected_noisy, 17.0))


def test_total_is_never_read_from_the_counts():
    with pytest.raises(ValueError, match="total"):
        release_histogram([1, 2], Laplace(1.0), "simplex", rng=0)
    with pytest.raises(ValueError, match="total"):
        release_histogram([1, 2], DiscreteLaplace(1.0), "integer_simplex", rng=0)


class _MyLaplace(Laplace):
    pass


@pytest.mark.parametrize(
    "mech",
    [
        BIT(1.0, lower=0.0, upper=np.inf),
        DiscreteBIT(1.0, lower=0),
        Rounded(Laplace(1.0)),
        _MyLaplace(1.0),
        "laplace",
        None,
    ],
)
def test_only_additive_noise_mechanisms(mech):
    with pytest.raises(ValueError, match="mechanism"):
        release_histogram([1, 2], mech, "raw", rng=0)


def test_bad_input():
    with pytest.raises(ValueError, match="post"):
        release_histogram([1, 2], Laplace(1.0), "project", rng=0)
    with pytest.raises(ValueError, match="counts"):
        release_histogram([1, -2], Laplace(1.0), "raw", rng=0)
    with pytest.raises(ValueError, match="counts"):
        release_histogram([1.5, 2], DiscreteLaplace(1.0), "raw", rng=0)
    with pytest.raises(ValueError, match="counts"):
        release_histogram(3, Laplace(1.0), "raw", rng=0)
    with pytest.raises(ValueError, match="counts"):
        release_histogram([np.nan, 2], Laplace(1.0), "raw", rng=0)


def test_exported():
    """Each public name is in ``dpbook.__all__`` and ``dpbook.histograms`` (by name: the doctest run may
    import the module file a second time, so object identity is not the check)."""
    for name in release.__all__:
        assert name in dpbook.__all__ and name in dpbook.histograms.__all__
        assert type(getattr(dpbook, name)) is type(getattr(release, name))
