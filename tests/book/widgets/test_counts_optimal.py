"""Chapter 20's view (dpbook_book.widgets.counts_optimal): it draws the library's two mechanisms."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import counts_optimal as co  # noqa: E402


@pytest.mark.parametrize("kind", sorted(co.PRIORS))
@pytest.mark.parametrize("n", [2, 10, 20])
def test_priors_are_distributions_on_the_counts(kind, n):
    p = co.count_prior(kind, n)
    assert p.shape == (n + 1,) and np.all(p >= 0) and abs(p.sum() - 1) < 1e-12


def test_losses_are_the_library_functions():
    assert co.count_loss("absolute") is dpbook.absolute_loss
    assert co.count_loss("squared") is dpbook.squared_loss
    assert co.count_loss("zero_one") is dpbook.zero_one_loss


def _squares(ax):
    """(report, count, probability) of each square of a Hinton panel (area = probability / 0.92**2).

    The panel is one ``fill_between``: a polygon per row, that is the points along its lower curve
    (after the start), then along its upper curve backwards.  Each square is four of those points,
    ``(left, i), (left, bottom), (right, bottom), (right, i)`` below and ``top`` for ``bottom`` above.
    """
    (collection,) = ax.collections
    out = []
    for path in collection.get_paths():
        v = path.vertices
        k = (
            len(v) - 3
        ) // 2  # start, the lower curve, end, the upper curve backwards, closing point
        assert len(v) == 2 * k + 3 and k % 4 == 0
        lower, upper = (
            v[1 : k + 1].reshape(-1, 4, 2),
            v[k + 2 : 2 * k + 2][::-1].reshape(-1, 4, 2),
        )
        assert np.array_equal(
            lower[:, :, 0], upper[:, :, 0]
        )  # the same x along both curves
        left, right, mid = lower[:, 0, 0], lower[:, 2, 0], lower[:, 0, 1]
        bottom, top = lower[:, 1, 1], upper[:, 1, 1]
        assert np.array_equal(lower[:, 1, 0], left) and np.array_equal(
            lower[:, 3, 0], right
        )
        assert np.array_equal(lower[:, 2, 1], bottom) and np.array_equal(
            upper[:, 2, 1], top
        )
        assert (
            np.all(mid == mid[0])
            and np.all(lower[:, 3, 1] == mid)
            and np.all(upper[:, [0, 3], 1] == mid[0])
        )
        assert np.all(
            right[:-1] <= left[1:]
        )  # squares in order along the row, not overlapping
        assert np.allclose(
            right - left, top - bottom, rtol=1e-12, atol=1e-14
        )  # squares
        out.extend(
            zip((left + right) / 2, (bottom + top) / 2, ((right - left) / 0.92) ** 2)
        )
    return np.array(out)


def test_the_squares_are_the_library_matrices_and_the_titles_their_values():
    fig = co.draw_count_optimal(prior="binomial", loss="squared", epsilon=1.0, n=8)
    p = co.count_prior("binomial", 8)
    lp = dpbook.optimal_count_mechanism(8, 1.0, prior=p, loss=dpbook.squared_loss)
    grs = dpbook.remapped_geometric(8, 1.0, prior=p, loss=dpbook.squared_loss)
    for ax, matrix, value in (
        (fig.axes[1], lp.matrix, lp.value),
        (fig.axes[2], grs.matrix, grs.value),
    ):
        squares = _squares(ax)
        assert squares.shape == (81, 3)
        r, i = np.rint(squares[:, 0]).astype(int), np.rint(squares[:, 1]).astype(int)
        assert np.allclose(squares[:, 0], r) and np.allclose(squares[:, 1], i)
        assert np.allclose(squares[:, 2], matrix[i, r], rtol=1e-9, atol=1e-15)
        assert f"{value:.4f}" in ax.get_title()
    assert lp.value == pytest.approx(grs.value, abs=1e-9)
    plt.close(fig)


def test_spike_prior_remaps_every_output_to_the_spike():
    fig = co.draw_count_optimal(prior="spike", loss="zero_one", epsilon=2.0, n=9)
    squares = _squares(fig.axes[2])
    shown = squares[squares[:, 2] > 1e-12]
    assert set(np.rint(shown[:, 0]).astype(int)) == {3}  # the report is always n // 3
    assert np.allclose(shown[:, 2], 1.0)
    assert "0.0000" in fig.axes[2].get_title()
    plt.close(fig)


def test_solved_programs_are_cached_bounded_and_read_only():
    """A live redraw reuses the solved programs; the cache is bounded and no caller can change it."""
    first = co._solve("uniform", "absolute", 0.75, 7)
    p, (lp_matrix, lp_value), (grs_matrix, grs_value) = first
    assert co._solve("uniform", "absolute", 0.75, 7) is first
    assert co._solve.cache_info().maxsize is not None
    for a in (p, lp_matrix, grs_matrix):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 0.5
    lp = dpbook.optimal_count_mechanism(
        7, 0.75, prior=np.full(8, 1 / 8), loss=dpbook.absolute_loss
    )
    assert np.array_equal(lp_matrix, lp.matrix) and lp_value == lp.value


def test_view_is_registered_with_a_static_grid_within_the_frame_budget():
    views = widgets.load_all()
    v = views["draw_count_optimal"]
    sizes = [len(values) for values in v.frame_grid().values()]
    assert sizes == [3, 3, 3] and np.prod(sizes) <= widgets.MAX_FRAMES


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="kind"):
        co.count_prior("flat", 5)
    with pytest.raises(ValueError, match="kind"):
        co.count_loss("absolute_loss")
