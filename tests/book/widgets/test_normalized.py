"""Part III views (dpbook_book.widgets.normalized): what the figures show (every view draws:
tests/book/widgets/test_widgets.py)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book.widgets import normalized as w  # noqa: E402


def test_leak_view_shows_the_exact_boundary_ratio():
    fig = w.draw_normalization_leak(epsilon=1.0, i=1.0)
    dots = [line for line in fig.axes[1].get_lines() if line.get_marker() == "o"]
    assert dots and dots[0].get_ydata()[0] == pytest.approx(
        np.log(2 * np.e - 1), rel=1e-12
    )
    plt.close(fig)


def test_true_epsilon_curve_is_the_audited_loss():
    loss = w._truncation_loss_curve(np.inf)
    eps = np.array(w.EPS_GRID)
    assert loss == pytest.approx(eps + np.log(2 - np.exp(-eps)), rel=1e-9)
    assert np.all(loss[1:] > loss[:-1]) and np.all((eps < loss) & (loss < 2 * eps))


def test_scales_cache_orders_the_three_scales():
    liu, star, croft = w._scales(1.0)
    assert liu == 1.0 and star == pytest.approx(1.612605, abs=1e-6) and croft == 2.0


def test_clinic_bounds_and_release():
    rows = dpbook.croft_lower_bounds(1.0, 7.0, w.CLINIC)
    assert len(rows) == 3 * 3 + 2
    assert max(b for *_, b in rows) == pytest.approx(
        dpbook.croft_uniform_scale(1.0, 7.0, w.CLINIC), rel=1e-9
    )


def test_plot_timings_draws_two_lines():
    fig = w.plot_timings([2, 4, 8], [0.1, 0.2, 0.4], [0.001, 0.001, 0.001])
    assert len(fig.axes[0].get_lines()) == 2
    plt.close(fig)


def test_true_epsilon_options_are_widths_with_separate_labels():
    """The option values are the widths themselves; the labels are only shown (never used as keys)."""
    from dpbook_book.widgets import VIEWS

    spec = VIEWS["draw_true_epsilon"].controls["width"]
    assert [v for _, v in spec] == list(w.WIDTHS) and all(
        isinstance(v, float) for _, v in spec
    )
    fig = w.draw_true_epsilon(epsilon=1.0, width=10.0)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert any("[0, 10Δ]" in lab for lab in labels)
    plt.close(fig)
    with pytest.raises(ValueError, match="width"):
        w.draw_true_epsilon(width="[0, 10Δ]")
