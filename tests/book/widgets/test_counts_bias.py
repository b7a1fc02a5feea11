"""Chapter 21's views (dpbook_book.widgets.counts_bias): they draw the library's exact biases."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book.widgets import counts_bias as cb  # noqa: E402


def test_lab_counts():
    q = cb.lab_counts(3, per_count=2)
    assert q.dtype == np.int64 and q.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert cb.lab_counts().size == 11 * cb.AREAS_PER_COUNT


@pytest.mark.parametrize("epsilon", [0.25, 1.0, 2.0])
def test_mechanisms_are_the_library_ones_at_scale_one_over_epsilon(epsilon):
    mechs = cb.count_mechanisms(epsilon)
    b = 1 / epsilon
    assert set(mechs) == set(cb.METHODS) - {"total"}
    best = dpbook.least_count_bias(b).value
    for key in ("least", "unbiased"):
        assert mechs[key].integer and mechs[key].scale == b
        assert dpbook.verify_count_bias(mechs[key]).value <= best * (1 + 1e-7) + 1e-15
    assert math.isclose(
        float(mechs["clamp"].bias(0)),
        math.exp(-epsilon) / (1 - math.exp(-2 * epsilon)),
        rel_tol=1e-12,
    )


def test_lab_table_is_the_sum_of_exact_area_biases():
    table = cb.lab_table(0.5, 6)
    q = cb.lab_counts(6)
    mechs = cb.count_mechanisms(0.5)
    for key, mech in mechs.items():
        bias = np.asarray(mech.bias(q))
        assert math.isclose(table[key][0], bias.sum(), rel_tol=1e-12, abs_tol=1e-9)
        var = np.asarray(mech.mse(q)) - bias**2
        assert math.isclose(
            table[key][1], math.sqrt(var.sum() + bias.sum() ** 2), rel_tol=1e-12
        )
    assert table["total"][0] == dpbook.clamped_sum_bias(2.0, int(q.sum()), q.size)
    assert table["raw"][0] == 0.0 and table["clamp"][0] > 10 and table["least"][0] < -10
    assert abs(table["unbiased"][0]) < abs(table["least"][0])


def test_bars_and_lines_draw_the_table():
    fig = cb.draw_small_areas(epsilon=0.5, max_count=6)
    table = cb.lab_table(0.5, 6)
    ax, ax2 = fig.axes
    widths = [p.get_width() for p in ax2.patches]  # horizontal bars, last method on top
    assert np.allclose(
        widths[::-1], [table[k][0] for k in cb.METHODS], rtol=1e-12, atol=1e-12
    )
    mechs = cb.count_mechanisms(0.5)
    lines = {line.get_label(): line for line in ax.get_lines()}
    clamp = lines[cb.METHODS["clamp"]]
    assert np.allclose(clamp.get_ydata(), mechs["clamp"].bias(np.arange(7)))
    plt.close(fig)


def test_least_bias_figure_draws_the_theorem_map():
    fig = cb.draw_least_bias(epsilon=0.5)
    star = dpbook.optimal_count_postprocessing(2.0)
    line = next(l for l in fig.axes[0].get_lines() if "varphi^*" in l.get_label())
    assert np.allclose(line.get_ydata(), star.phi(line.get_xdata()))
    plt.close(fig)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        cb.count_mechanisms(0.0)
    with pytest.raises(ValueError, match="epsilon"):
        cb.count_mechanisms(float("inf"))
    with pytest.raises(ValueError, match="max_count"):
        cb.lab_counts(-1)
    with pytest.raises(ValueError, match="per_count"):
        cb.lab_counts(3, per_count=True)
