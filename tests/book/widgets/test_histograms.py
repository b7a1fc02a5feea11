"""Chapter 22's view (dpbook_book.widgets.histograms): it draws the library's exact moments."""

import matplotlib

matplotlib.use("Agg")

import math  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import histograms as hv  # noqa: E402


def test_sensitivity_and_scale_are_the_librarys():
    n = 10
    library = n * dpbook.histogram_sensitivity(
        n, relation="substitution", denominator="public"
    )
    assert hv.SENSITIVITY == library == 2.0
    assert hv.histogram_scale(0.5) == dpbook.laplace_scale(0.5, 2.0) == 4.0
    assert hv.histogram_counts(3).tolist() == [3, *hv.OTHER_COUNTS]
    assert hv.histogram_counts(np.int64(0)).dtype == np.int64


def test_table_is_histogram_moments_and_keeps_the_total():
    table = hv.histogram_bias_table(1.0, 0)
    counts = np.array([0, *hv.OTHER_COUNTS])
    mech = dpbook.DiscreteLaplace(2.0)
    assert set(table) == set(hv.METHODS) <= set(dpbook.POSTPROCESSINGS)
    for key, got in table.items():
        want = dpbook.histogram_moments(key, counts, mech, total=int(counts.sum()))
        assert got.exact and np.array_equal(got.bias, want.bias)
        assert np.array_equal(got.mse, want.mse)
    tol = 10 * max(m.error for m in table.values())
    assert np.all(np.abs(table["raw"].bias) <= tol)
    for key in ("simplex", "integer_simplex"):  # the total is kept: the biases cancel
        assert abs(table[key].bias.sum()) <= 3 * tol
        assert table[key].bias[0] > 0.1 and table[key].bias[-1] < -0.1
    assert np.all(table["clamp"].bias > -tol) and table["clamp"].bias[0] > 0.5


def test_bars_draw_the_table():
    fig = hv.draw_histogram_bias(epsilon=2.0, q1=5)
    table = hv.histogram_bias_table(2.0, 5)
    ax, ax2 = fig.axes
    heights = np.array([p.get_height() for p in ax.patches]).reshape(len(hv.METHODS), 3)
    rmse = np.array([p.get_height() for p in ax2.patches]).reshape(len(hv.METHODS), 3)
    for k, key in enumerate(hv.METHODS):
        assert np.allclose(heights[k], table[key].bias, rtol=1e-12, atol=0)
        assert np.allclose(rmse[k], np.sqrt(table[key].mse), rtol=1e-12, atol=0)
    plt.close(fig)


def test_view_is_registered_within_the_frame_budget():
    view = widgets.VIEWS["draw_histogram_bias"]
    assert view.draw is hv.draw_histogram_bias
    grid = view.frame_grid()
    assert math.prod(len(v) for v in grid.values()) <= widgets.MAX_FRAMES
    assert set(grid) == {"epsilon", "q1"}


def test_bad_inputs_name_the_parameter():
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ValueError, match="q1"):
            hv.histogram_counts(bad)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            hv.histogram_scale(bad)
