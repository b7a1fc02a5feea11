"""Every interactive view of the book: registered, drawable at its defaults and at every control's extremes.

Speed is not asserted here (timed unit tests are flaky on a shared machine): the widget benchmark,
``benchmarks/bench_widgets.py``, times every redraw as a ratio to a baseline figure drawn in the same run.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpbook_book import widgets  # noqa: E402

VIEWS = widgets.load_all()
PARTS = {"bounded", "studies", "nonnegative", "normalized", "choosing", "peers"}


def _extremes(spec, default):
    if isinstance(spec, bool):
        return [not default]
    if isinstance(spec, (list, dict)):
        values = [
            o[1] if isinstance(o, tuple) else o for o in spec
        ]  # (label, value) pairs
        return [v for v in values if v != default]
    lo, hi, _ = spec
    return [v for v in (lo, hi) if v != default]


CASES = [(name, {}) for name in sorted(VIEWS)] + [
    (name, {key: value})
    for name in sorted(VIEWS)
    for key, spec in VIEWS[name].controls.items()
    for value in _extremes(spec, VIEWS[name].defaults[key])
]


def test_every_part_has_views():
    modules = {v.draw.__module__.rsplit(".", 1)[-1] for v in VIEWS.values()}
    assert PARTS <= modules
    assert len(VIEWS) >= 20


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_view_draws(name, params):
    view = VIEWS[name]
    fig = view.draw(**{**view.defaults, **params})
    assert isinstance(fig, Figure) and fig.axes
    fig.canvas.draw()
    for ax in fig.axes:
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), dtype=float)
            assert not np.isnan(y).all(), (
                f"{name}: line {line.get_label()!r} is all NaN"
            )
    plt.close(fig)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_every_control_is_a_parameter_with_a_default(name):
    view = VIEWS[name]
    for key in view.controls:
        assert key in view.defaults


def test_render_returns_a_png():
    name = sorted(VIEWS)[0]
    assert widgets.render(name)[:8] == b"\x89PNG\r\n\x1a\n"
