"""Chapter 23's view (dpbook_book.widgets.topdown): it draws the library's exact misallocations."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import topdown as td  # noqa: E402


def test_table_is_the_library_exact_misallocation():
    table = td.misallocation_table(1.0, 10)
    assert set(table) == set(td.POSTS)
    counts = np.array(td.AREAS)
    mech = dpbook.DiscreteLaplace(1.0)
    for post, got in table.items():
        total = int(counts.sum()) if post in td.NEEDS_TOTAL else None
        want = dpbook.expected_misallocation(
            post, counts, mech, td.FUNDS, threshold=10, total=total
        )
        assert got.exact and want.exact
        assert np.array_equal(got.expected, want.expected), post


def test_total_preserving_misallocation_is_bias_times_funds_per_person():
    """Chapter 23's proposition, between two exact engines: allocation and the counts' moments."""
    counts, mech = np.array(td.AREAS), dpbook.DiscreteLaplace(1.0)
    total = int(counts.sum())
    table = td.misallocation_table(1.0, 0)
    for post in td.NEEDS_TOTAL:
        bias = dpbook.histogram_moments(post, counts, mech, total=total).bias
        want = td.FUNDS / total * bias
        assert np.allclose(table[post].expected, want, rtol=0, atol=1e-9), post
        assert table[post].expected[0] > 0 > table[post].expected[-1], post


def test_bars_draw_the_table():
    fig = td.draw_misallocation(epsilon=0.5, threshold=12)
    (ax,) = fig.axes
    table = td.misallocation_table(0.5, 12)
    heights = np.array([p.get_height() for p in ax.patches])
    want = np.concatenate([np.asarray(table[p].expected) for p in td.POSTS])
    assert np.allclose(heights, want, rtol=0, atol=1e-12)
    fair = dpbook.allocate(np.array(td.AREAS), td.FUNDS, threshold=12)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [f"q = {q}, fair {s:.0f}" for q, s in zip(td.AREAS, fair)]
    plt.close(fig)


def test_the_view_is_registered_with_a_small_grid():
    v = widgets.VIEWS["draw_misallocation"]
    frames = np.prod([len(values) for values in v.frame_grid().values()])
    assert v.draw is td.draw_misallocation and frames <= widgets.MAX_FRAMES


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        td.misallocation_table(0.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        td.misallocation_table(float("nan"), 0)
    with pytest.raises(ValueError, match="threshold"):
        td.misallocation_table(1.0, -1)
    with pytest.raises(ValueError, match="threshold"):
        td.misallocation_table(1.0, 2.5)
