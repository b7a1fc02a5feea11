import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from dpbook_book.widgets import VIEWS
from dpbook_book.widgets import studies as w

matplotlib.use("Agg")

NAMES = ["draw_covariance_release", "draw_proportions_study", "draw_multiple_synthesis"]


@pytest.mark.parametrize(
    "name,params",
    [
        (
            "draw_covariance_release",
            {"n": 50, "epsilon": 0.2, "rho": -0.5, "statistic": "var1"},
        ),
        (
            "draw_covariance_release",
            {"n": 800, "epsilon": 5.0, "rho": 0.0, "statistic": "var2"},
        ),
        (
            "draw_proportions_study",
            {"epsilon": 0.1, "method": "tree", "kind": "truncated", "metric": "bias"},
        ),
        (
            "draw_proportions_study",
            {"epsilon": 5.0, "method": "all_but_one", "kind": "bit", "metric": "rmse"},
        ),
        (
            "draw_multiple_synthesis",
            {"epsilon": 0.1, "kind": "truncated", "releases": 2},
        ),
    ],
)
def test_extreme_controls(name, params):
    fig = VIEWS[name].draw(**params)
    assert all(
        np.isfinite(line.get_ydata()).all()
        for ax in fig.axes
        for line in ax.get_lines()
        if len(line.get_ydata())
    )
    plt.close(fig)


def test_plot_bands():
    fig, ax = plt.subplots()
    x = np.array([50, 100])
    w.plot_bands(
        ax, x, np.random.default_rng(0).normal(size=(2, 50)), [0.0, 0.0], "C0", "bit"
    )
    assert len(ax.get_lines()) == 2
    plt.close(fig)
