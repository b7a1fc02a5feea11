"""Chapter 24's view (dpbook_book.widgets.profiles): it draws the library's privacy profiles."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import profiles as pr  # noqa: E402


def test_releases_are_the_part_iii_families_at_the_aimed_scale():
    b = dpbook.laplace_scale(pr.AIMED, 1.0)
    lap, bit, trunc = (
        pr.release(name, 2.0) for name in ("Laplace", "BIT", "Truncated")
    )
    assert isinstance(lap, dpbook.Laplace) and lap.scale == b
    assert isinstance(bit, dpbook.BIT) and bit.domain == (0.0, 2.0)
    assert isinstance(trunc, dpbook.Truncated) and trunc.domain == (0.0, 2.0)
    assert pr.release("Truncated", math.inf).domain == (0.0, math.inf)


def test_profile_is_the_library_profile_on_the_grid():
    eps = np.array(pr.EPS_GRID)
    assert pr.AIMED in pr.EPS_GRID and eps[0] == 0.0 and np.all(np.diff(eps) > 0)
    got = pr.profile("Truncated", 2.0)
    want = dpbook.privacy_profile(pr.release("Truncated", 2.0), 1.0, eps)
    assert np.array_equal(got, want)
    # the Laplace curve is its closed form, 1 - e^{-(ε₀ - ε)/2} below ε₀ (Chapter 24)
    closed = np.where(eps < pr.AIMED, -np.expm1(-(pr.AIMED - eps) / 2), 0.0)
    assert np.allclose(pr.profile("Laplace", 5.0), closed, rtol=1e-11, atol=0)
    # clamping to a range at least Δ wide has the Laplace profile; truncation costs a δ at ε₀
    assert np.allclose(pr.profile("BIT", 2.0), closed, rtol=1e-9, atol=0)
    assert got[pr.EPS_GRID.index(pr.AIMED)] > 0.01


def test_curves_draw_the_profiles():
    fig = pr.draw_profiles(width=2.0)
    (ax,) = fig.axes
    curves = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(curves) == len(pr.RELEASES)
    for line, name in zip(curves, pr.RELEASES, strict=True):
        assert np.array_equal(line.get_xdata(), np.array(pr.EPS_GRID))
        assert np.array_equal(line.get_ydata(), pr.profile(name, 2.0))
    (point,) = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert (
        point.get_ydata()[0]
        == pr.profile("Truncated", 2.0)[pr.EPS_GRID.index(pr.AIMED)]
    )
    plt.close(fig)


def test_the_view_is_registered_with_a_small_grid():
    v = widgets.VIEWS["draw_profiles"]
    frames = np.prod([len(values) for values in v.frame_grid().values()])
    assert v.draw is pr.draw_profiles and frames <= widgets.MAX_FRAMES
    assert v.frame_grid() == {"width": pr.WIDTHS}


def test_bad_inputs_name_the_parameter():
    for bad in (0.0, -1.0, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="width"):
            pr.release("Truncated", bad)
    with pytest.raises(ValueError, match="name"):
        pr.release("Gaussian", 2.0)
