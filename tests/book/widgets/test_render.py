"""dpbook_book.widgets.render: one redraw as the live widget does it, the same pixels as a plain PNG."""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpbook_book import widgets  # noqa: E402
from dpbook_book.plotting import style  # noqa: E402


def _pixels(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _plain_png(view, **params):
    fig = view.draw(**{**view.defaults, **params})
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


@pytest.mark.parametrize(
    "name, params",
    [
        ("draw_log_laplace", {}),
        ("draw_log_laplace", {"K": 0.4}),
        ("draw_postprocessing_bias", {"family": "softplus"}),
        ("draw_croft_audit", {"q": 1.5}),
    ],
)
def test_render_draws_the_same_pixels_as_a_plain_png(name, params):
    widgets.load_all()
    view = widgets.VIEWS[name]
    with style():
        first = widgets.render(view, **params)
        again = widgets.render(
            view, **params
        )  # mathtext now comes from the shared parser's cache
        plain = _plain_png(view, **params)
    assert np.array_equal(_pixels(first), _pixels(plain))
    assert np.array_equal(_pixels(again), _pixels(plain))
    assert not plt.get_fignums()


def test_render_names_an_unknown_view():
    with pytest.raises(ValueError, match="no view named"):
        widgets.render("draw_nothing")


@pytest.mark.parametrize("enabled", [True, False])
def test_render_restores_the_garbage_collector(enabled):
    import gc

    widgets.load_all()
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        widgets.render("draw_croft_scale")
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError):
            widgets.render("draw_postprocessing_bias", family="cubic")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
