import matplotlib
import matplotlib.pyplot as plt
import pytest

from dpbook_book.widgets import VIEWS
from dpbook_book.widgets import bounded as w

matplotlib.use("Agg")

NAMES = [
    "draw_likelihood_ratio",
    "draw_neighbour_changes",
    "draw_bounded_laws",
    "draw_mse_rates",
]

CHANGED = [
    ("draw_likelihood_ratio", {"epsilon": 0.1}),
    ("draw_likelihood_ratio", {"sensitivity": 3.0, "q": -3.0}),
    ("draw_neighbour_changes", {"statistic": "covariance"}),
    (
        "draw_neighbour_changes",
        {"statistic": "covariance", "n": 6, "relation": "substitution"},
    ),
    ("draw_neighbour_changes", {"statistic": "mean", "n": 3, "relation": "add_remove"}),
    ("draw_bounded_laws", {"q": -1.0}),
    ("draw_bounded_laws", {"q": 2.0, "epsilon": 0.05, "lower": -2.0, "upper": 0.5}),
    ("draw_mse_rates", {"mechanism": "truncated"}),
    ("draw_mse_rates", {"epsilon": 0.1, "position": 0.0}),
]


def test_all_views_registered():
    assert set(NAMES) == set(w.__all__)
    for name in NAMES:
        assert VIEWS[name].draw is getattr(w, name)


@pytest.mark.parametrize("name, params", CHANGED)
def test_changed_controls(name, params):
    v = VIEWS[name]
    fig = v.draw(**{**v.defaults, **params})
    assert isinstance(fig, matplotlib.figure.Figure) and fig.axes
    plt.close(fig)
