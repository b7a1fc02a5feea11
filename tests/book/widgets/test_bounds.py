"""The view of "Where the bounds come from" (dpbook_book.widgets.bounds): it draws the library's
clipped-mean MSE and optimal clip."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import bounds as bd  # noqa: E402


def test_the_view_is_registered_with_at_most_40_frames():
    view = widgets.VIEWS["draw_clipping_tradeoff"]
    frames = np.prod([len(v) for v in view.frame_grid().values()])
    assert 1 < frames <= widgets.MAX_FRAMES
    assert set(view.grid["law"]) == set(bd.LAWS)


def test_curves_are_the_library_mse_and_the_marker_its_optimum():
    fig = bd.draw_clipping_tradeoff(law="expon", n=100, epsilon=0.5)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    law = bd.clipping_law("expon")
    u = np.asarray(lines["MSE (sum)"].get_xdata())
    for i in (0, 17, len(u) - 1):
        r = dpbook.clipped_mean_mse(law, 100, 0.0, u[i], 0.5)
        assert lines["clipping bias²"].get_ydata()[i] == r.bias**2
        assert lines["sampling variance"].get_ydata()[i] == r.sampling_variance
        assert lines["Laplace noise"].get_ydata()[i] == r.noise_mse
        assert lines["MSE (sum)"].get_ydata()[i] == r.mse
    best = dpbook.optimal_clip(law, 100, 0.5, lower=0.0)
    (marker,) = [ln for label, ln in lines.items() if label.startswith("best")]
    assert marker.get_xdata()[0] == best.upper
    assert marker.get_ydata()[0] == best.mse.mse
    # the marked point is the lowest of the drawn total, and inside the drawn range
    total = np.asarray(lines["MSE (sum)"].get_ydata())
    assert best.mse.mse <= total.min() and u[0] < best.upper < u[-1]
    plt.close(fig)


def test_bad_law_names_the_parameter():
    with pytest.raises(ValueError, match="kind"):
        bd.clipping_law("cauchy")
