"""The chapters' interactive views.

A *view* is a plain drawing function ``draw(**params) -> matplotlib.figure.Figure`` whose keyword
defaults are the figure the printed book shows, registered with :func:`view` together with the
controls a reader may move.  A chapter draws the static figure by calling the function (the
fallback for readers without a kernel) and shows the live version with :func:`show`.  The widget
benchmark times every registered function, so each redraw stays below 100 ms.

Controls are given as keyword arguments of :func:`view`:

- ``(min, max, step)`` — a float slider (an int slider if all three are ints);
- a list of options — a dropdown;
- a bool — a checkbox.

The views themselves live in one module per part of the book: ``bounded``, ``nonnegative``,
``normalized`` and ``choosing``.  Nothing in :mod:`dpbook` imports this package.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

#: every registered view, by name
VIEWS: dict = {}


@dataclass(frozen=True)
class View:
    """A drawing function with its controls and its default parameters."""

    name: str
    draw: object
    controls: dict = field(default_factory=dict)

    @property
    def defaults(self):
        sig = inspect.signature(self.draw)
        return {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}


def view(name=None, **controls):
    """Register ``draw`` as an interactive view with the given controls (see the module docstring)."""

    def register(draw):
        key = name or draw.__name__
        defaults = View(key, draw).defaults
        missing = [c for c in controls if c not in defaults]
        if missing:
            raise ValueError(f"controls {missing} are not keyword parameters with defaults of {draw.__name__}")
        VIEWS[key] = View(key, draw, dict(controls))
        return draw

    return register


def _control(label, spec, value):
    import ipywidgets as w

    layout = w.Layout(width="auto")
    style = {"description_width": "initial"}
    if isinstance(spec, bool):
        return w.Checkbox(value=bool(value), description=label)
    if isinstance(spec, (list, dict)):
        return w.Dropdown(options=spec, value=value, description=label, style=style)
    lo, hi, step = spec
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, step)):
        return w.IntSlider(value=value, min=lo, max=hi, step=step, description=label,
                           continuous_update=False, style=style, layout=layout)
    return w.FloatSlider(value=value, min=lo, max=hi, step=step, description=label,
                         continuous_update=False, readout_format=".3g", style=style, layout=layout)


def show(name_or_draw, **overrides):
    """Build the live widget for a registered view: its controls above the redrawn figure.

    ``overrides`` set the initial control values (else the drawing function's defaults).
    """
    import ipywidgets as w
    from IPython.display import Image, display

    v = _lookup(name_or_draw)
    params = {**v.defaults, **overrides}
    controls = {k: _control(k, spec, params[k]) for k, spec in v.controls.items()}
    out = w.Output()

    def redraw(_change=None):
        kwargs = {**params, **{k: c.value for k, c in controls.items()}}
        with out:
            out.clear_output(wait=True)
            display(Image(render(v, **kwargs)))

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")), out])


def render(name_or_draw, **params):
    """One redraw, as the live widget does it: draw the view, render it to PNG once, close it.

    Returns the PNG bytes.  The PNG is rendered at the figure's own size (the style's fixed margins
    fit it), not through the inline backend's ``bbox_inches="tight"``, which draws every figure twice,
    and compressed lightly (the same pixels, in a few ms less).  Python's cyclic garbage collector is
    paused while the figure lives (and restored after): otherwise its tens of thousands of objects
    outlive young-generation collections, get promoted, and trigger a full collection of the whole
    kernel (60–200 ms) every dozen redraws; closed first, they are freed by the next young collection.
    """
    import gc
    import io

    import matplotlib.pyplot as plt

    v = _lookup(name_or_draw)
    collecting = gc.isenabled()
    gc.disable()
    try:
        fig = v.draw(**{**v.defaults, **params})
        png = io.BytesIO()
        try:
            _share_mathtext(fig)
            fig.savefig(png, format="png", pil_kwargs={"compress_level": 1})
        finally:
            plt.close(fig)
    finally:
        if collecting:
            gc.enable()
    return png.getvalue()


_MATHTEXT = []


def _share_mathtext(fig):
    """Let the figure's Agg renderer use one mathtext parser shared by every redraw.

    Matplotlib caches parsed mathtext per parser, and each new figure's renderer makes a new parser,
    so every redraw would parse each ``$...$`` label afresh (several ms apiece).  A parser holds
    nothing but that cache (keyed on the string, dpi and font), so sharing it changes no pixel.
    """
    get_renderer = getattr(fig.canvas, "get_renderer", None)
    if get_renderer is None:
        return
    renderer = get_renderer()
    if not hasattr(renderer, "mathtext_parser"):
        return
    if not _MATHTEXT:
        _MATHTEXT.append(renderer.mathtext_parser)
    renderer.mathtext_parser = _MATHTEXT[0]


def _lookup(name_or_draw):
    if isinstance(name_or_draw, View):
        return name_or_draw
    if isinstance(name_or_draw, str):
        try:
            return VIEWS[name_or_draw]
        except KeyError:
            raise ValueError(f"no view named {name_or_draw!r}; known: {sorted(VIEWS)}") from None
    for v in VIEWS.values():
        if v.draw is name_or_draw:
            return v
    raise ValueError(f"{name_or_draw!r} is not a registered view")


def load_all():
    """Import every part's module so that :data:`VIEWS` holds every view of the book."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return VIEWS
