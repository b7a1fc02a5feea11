"""dpbook_book.widgets.show: frames precomputed over each view's grid, selected by its controls with no kernel.

The page's widget manager runs the ``jsdlink``s in the browser; here the links are followed by hand
(``_follow``) to check that each position of the controls displays the frame drawn at those values.
The browser check itself is ``tests/widget_probe.py``, run by the site test on the built pages.
"""

import base64
import html
import io
import itertools
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpbook_book import widgets  # noqa: E402
from dpbook_book.plotting import KeptFigure, style  # noqa: E402

VIEWS = widgets.load_all()
PNG = b"\x89PNG\r\n\x1a\n"

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_widgets import cases  # noqa: E402

# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("show")


def _links():
    from ipywidgets.widgets.widget import _instances

    return [
        m for m in _instances.values() if isinstance(m, w.widget_link.DirectionalLink)
    ]


def _controls(shown):
    return list(shown.children[0].children)


def _follow(shown):
    """The frame (an HTML widget) the browser displays now: apply every jsdlink, then descend the stacks."""
    controls = {id(c) for c in _controls(shown)}
    for link in _links():
        (src, s_attr), (dst, d_attr) = link.source, link.target
        if id(src) in controls:
            setattr(dst, d_attr, getattr(src, s_attr))
    node = shown.children[1]
    while isinstance(node, w.Stack):
        node = node.children[node.selected_index]
    return node


def _png_of(frame):
    return base64.b64decode(re.search(r'base64,([^"]+)"', frame.value).group(1))


def _alt(frame):
    return html.unescape(re.search(r'alt="([^"]*)"', frame.value).group(1))


@pytest.fixture(scope="module")
def ramp():
    with style():
        return widgets.show("draw_translated_ramp")


@pytest.fixture(scope="module")
def two_controls():
    with style():
        return widgets.show("draw_likelihood_ratio")


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_every_view_has_a_grid_of_at_most_max_frames(name):
    view = VIEWS[name]
    grid = view.frame_grid()
    assert grid, f"{name} has no control on the static page"
    assert math.prod(len(v) for v in grid.values()) <= widgets.MAX_FRAMES
    for key, values in grid.items():
        assert (
            view.defaults[key] in values
        )  # the first frame shown is the default figure


def test_moving_the_control_selects_the_frame_drawn_at_that_value(ramp):
    (slider,) = _controls(ramp)
    assert isinstance(slider, w.SelectionSlider) and slider.description == "α"
    values = [v for _, v in slider.options]
    assert slider.value == VIEWS["draw_translated_ramp"].defaults["alpha"]
    seen = []
    for i, value in enumerate(values):
        slider.index = i
        frame = _follow(ramp)
        assert _alt(frame).endswith(f"(α = {widgets._format(value)})")
        seen.append(_png_of(frame))
    assert len(set(seen)) == len(values)  # every position shows its own figure


def test_two_controls_nest_stacks_and_each_position_shows_its_own_frame(two_controls):
    outer, inner = _controls(two_controls)
    grid = VIEWS["draw_likelihood_ratio"].frame_grid()
    assert [c.description for c in (outer, inner)] == ["Δ", "ε"]
    frames = {}
    for i, j in itertools.product(range(len(outer.options)), range(len(inner.options))):
        outer.index, inner.index = i, j
        frame = _follow(two_controls)
        expected = f"(Δ = {widgets._format(grid['sensitivity'][i])}, ε = {widgets._format(grid['epsilon'][j])})"
        assert _alt(frame).endswith(expected)
        frames[i, j] = _png_of(frame)
    assert len(set(frames.values())) == len(frames)


def test_the_check_notices_a_frame_shown_for_the_wrong_value(ramp):
    """The tests above can fail: with the link cut, moving the slider leaves the old frame."""
    (slider,) = _controls(ramp)
    link = next(lk for lk in _links() if lk.source[0] is slider)
    slider.index = 0
    before = _alt(_follow(ramp))
    link.unlink()
    try:
        slider.index = 3
        assert _alt(_follow(ramp)) == before
    finally:
        w.jsdlink((slider, "index"), link.target)


def test_neighbouring_frames_differ_and_carry_alt_text(ramp):
    stack = ramp.children[1]
    pngs = [_png_of(f) for f in stack.children]
    assert all(p[:8] == PNG for p in pngs)
    assert all(a != b for a, b in zip(pngs, pngs[1:]))
    for frame in stack.children:
        assert _alt(frame).startswith(VIEWS["draw_translated_ramp"].summary)


def test_mimebundle_has_the_widget_view_and_the_default_figure(ramp):
    data = ramp._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == ramp.model_id
    png = base64.b64decode(data["image/png"])
    assert png[:8] == PNG
    size = Image.open(io.BytesIO(png)).size
    assert size == Image.open(io.BytesIO(_png_of(ramp.children[1].children[0]))).size
    assert "draw_translated_ramp" in data["text/plain"]
    assert "dpbook-view" in ramp._dom_classes


def test_overrides_start_elsewhere_and_off_grid_values_join_the_grid():
    with style():
        shown = widgets.show("draw_translated_ramp", alpha=0.33)
    (slider,) = _controls(shown)
    assert slider.value == 0.33 and 0.33 in [v for _, v in slider.options]
    assert _alt(_follow(shown)).endswith("(α = 0.33)")
    with pytest.raises(ValueError, match="beta"):
        widgets.show("draw_translated_ramp", beta=1.0)


def test_live_mode_redraws_through_python():
    with style():
        shown = widgets.show("draw_translated_ramp", live=True)
    (slider,) = _controls(shown)
    assert isinstance(slider, w.FloatSlider) and slider.step == 0.01
    before = shown.children[1].value
    slider.value = 0.52
    after = shown.children[1].value
    assert after != before and "(α = 0.52)" in after


def test_grid_must_fit_the_controls():
    with pytest.raises(ValueError, match="leaves"):
        widgets.view(a=(0.0, 1.0, 0.1), grid={"a": (0.0, 2.0)})(lambda a=0.0: None)
    with pytest.raises(ValueError, match="not one of its controls"):
        widgets.view(a=(0.0, 1.0, 0.1), grid={"b": (0.0,)})(lambda a=0.0, b=0.0: None)


def _pixels(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return np.asarray(Image.open(buf).convert("RGBA")).astype(int)


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.slow
def test_kept_figure_draws_what_a_fresh_figure_draws(name):
    """Updating the kept figure's artists (and reusing rendered axis layers) gives a fresh figure's pixels,
    up to a unit or two where a composited axis layer's antialiased edges meet the background."""
    view = VIEWS[name]
    kept = KeptFigure(view.draw)
    every = list(cases(view))
    try:
        with style():
            for _, kwargs in every + every[:1]:
                fig = kept.update(**kwargs)
                assert fig is kept.fig
                got = _pixels(fig)
                fresh = view.draw(**kwargs)
                want = _pixels(fresh)
                plt.close(fresh)
                assert got.shape == want.shape
                assert np.abs(got - want).max() <= 3, f"{name} {kwargs}"
    finally:
        kept.close()
    assert not plt.get_fignums()


def test_kept_figure_check_fails_on_a_stale_artist():
    """The pixel check can fail: a kept figure whose artist is not updated differs from a fresh one."""
    view = VIEWS["draw_translated_ramp"]
    kept = KeptFigure(view.draw)
    try:
        with style():
            kept.update(alpha=0.1)
            line = kept.fig.axes[0].lines[0]
            stale = line.get_ydata().copy()
            fig = kept.update(alpha=0.8)
            line.set_ydata(stale)
            fresh = view.draw(alpha=0.8)
            assert np.abs(_pixels(fig) - _pixels(fresh)).max() > 3
            plt.close(fresh)
    finally:
        kept.close()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_controls_read_in_the_books_notation(name):
    """Every control of the static page is labelled in the book's notation, not by a code name, offers
    readable options, and a slider has at least three positions (two read better as a choice)."""
    view = VIEWS[name]
    defaults = view.defaults
    for key, values in view.frame_grid().items():
        control = widgets._grid_control(key, view.controls[key], values, defaults[key])
        assert "_" not in control.description, (
            f"{name}: control {key!r} is labelled {control.description!r}"
        )
        labels = [label for label, _ in control.options]
        assert not [s for s in labels if "_" in s], (
            f"{name}: {key!r} offers code names {labels}"
        )
        if isinstance(control, w.SelectionSlider):
            assert len(labels) >= 3, (
                f"{name}: the slider {key!r} has {len(labels)} positions"
            )


def test_notation_check_flags_code_names_and_two_position_sliders():
    two = widgets._grid_control("width", (0.0, 1.0, 0.1), (0.25, 0.5), 0.25)
    assert not isinstance(
        two, w.SelectionSlider
    )  # a choice of two, not a slider with no middle
    coded = widgets._grid_control("max_gap", (0.0, 1.0, 0.1), (0.25, 0.5, 0.75), 0.25)
    assert (
        "_" in coded.description
    )  # a parameter without a label in the book's notation shows its name
