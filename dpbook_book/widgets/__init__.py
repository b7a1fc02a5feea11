"""The chapters' interactive views.

A *view* is a plain drawing function ``draw(**params) -> matplotlib.figure.Figure`` whose keyword
defaults are the figure the printed book shows, registered with :func:`view` together with the
controls a reader may move and the grid of their values the published page precomputes.  A chapter
shows it with one cell, ``show(draw_xxx)``, captioned and named in the cell's ``mystnb.figure``
metadata; :func:`show` returns a widget that

- on the published page (no kernel), lets the reader move the controls over the grid: every figure
  on the grid is drawn when the notebook executes, and the controls select among them in the browser
  (ipywidgets ``Stack`` s whose ``selected_index`` follows each control's ``index`` by ``jsdlink``);
- carries the figure at the defaults as ``image/png`` too, for readers without widgets and the PDF;
- in a live kernel with ``show(..., live=True)``, moves in the controls' registered (finer) steps and
  redraws through Python.

Every redraw, the frames' included, goes through :class:`Redraw`: one kept figure whose artists are
updated (:class:`dpbook_book.plotting.KeptFigure`), rendered to PNG once.  The widget benchmark,
``benchmarks/bench_widgets.py``, times every view's redraw against a baseline figure.

Controls are given as keyword arguments of :func:`view`:

- ``(min, max, step)`` — a slider (an int slider if all three are ints);
- a list of options (or ``(label, value)`` pairs) — a dropdown;
- a bool — a checkbox;

and ``grid={control: values}`` (``None`` for every option of a dropdown) says which controls the
published page offers and at which values; the others stay at their defaults there.

The views themselves live in one module per part of the book: ``bounded``, ``studies``,
``nonnegative``, ``normalized``, ``choosing`` and ``peers``, ``bounds`` (where the bounds come
from: the clipping trade-off), ``histograms`` (the exact bias of each cell of a post-processed
three-cell histogram), ``topdown`` (who pays: the misallocation of a fund shared in
proportion to released counts), ``profiles`` (privacy profiles δ(ε) of the bounded Laplace
releases), ``gaussian`` (Laplace or Gaussian noise for k clamped releases under one (ε, δ)), and
``bounded_noise`` (Geng et al.'s truncated Laplacian against the analytic Gaussian at one (ε, δ)).
Nothing in :mod:`dpbook` imports this package.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np

#: every registered view, by name
VIEWS: dict = {}


#: the most frames one view may precompute for the static page (the product of its grid's sizes)
MAX_FRAMES = 40

#: how a control is labelled next to its slider (else by its parameter name)
LABELS = {
    "epsilon": "ε",
    "sensitivity": "Δ",
    "alpha": "α",
    "rho": "ρ",
    "q": "q",
    "K": "K",
    "max_count": "largest count m",
    "q1": "q₁",
    "q2": "q₂",
    "n": "n",
    "i": "i",
    "width": "range width w",
}


@dataclass(frozen=True)
class View:
    """A drawing function with its controls, the grid of their values the static page precomputes, and its defaults."""

    name: str
    draw: object
    controls: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)

    @property
    def defaults(self):
        sig = inspect.signature(self.draw)
        return {
            k: p.default
            for k, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty
        }

    @property
    def summary(self):
        """The first line of the drawing function's docstring, without markup (the frames' alt text starts with it)."""
        doc = inspect.getdoc(self.draw) or self.name
        return (
            doc.split("\n\n")[0]
            .replace("\n", " ")
            .replace("``", "")
            .replace("`", "")
            .strip()
        )

    def frame_grid(self, **overrides):
        """The values each gridded control takes on the static page, in slider order (``{name: tuple}``).

        A gridded control whose starting value (its default or its override) is not on its grid gets
        that value added, so the first frame shown is always the figure at the starting values.
        """
        params = {**self.defaults, **overrides}
        out = {}
        for key, values in self.grid.items():
            values = list(values)
            if params[key] not in values:
                values = (
                    sorted([*values, params[key]])
                    if _numeric(values)
                    else [*values, params[key]]
                )
            out[key] = tuple(values)
        return out

    def fixed(self):
        """The controls the static page holds at their defaults (registered, but not on the grid)."""
        return [k for k in self.controls if k not in self.grid]


def positive_epsilon(epsilon):
    """``epsilon`` as a float, or a ``ValueError`` naming it unless it is a finite number ``> 0`` (not a bool):
    the check every view with an ε control makes of it."""
    if not (
        isinstance(epsilon, (int, float, np.number))
        and not isinstance(epsilon, bool)
        and math.isfinite(epsilon)
        and epsilon > 0
    ):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return float(epsilon)


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _options(spec):
    """The values a dropdown/checkbox control offers, with their labels: ``[(label, value)]``."""
    if isinstance(spec, bool):
        return [("off", False), ("on", True)]
    if isinstance(spec, dict):
        return list(spec.items())
    return [o if isinstance(o, tuple) else (str(o), o) for o in spec]


def view(name=None, grid=None, **controls):
    """Register ``draw`` as an interactive view with the given controls (see the module docstring).

    ``grid`` maps some controls to the values the static page precomputes (``None`` for all of a
    dropdown's options); the static page offers only those controls, each as a slider over its grid
    values, and holds the others at their defaults.  At most :data:`MAX_FRAMES` frames in all.
    """

    def register(draw):
        key = name or draw.__name__
        defaults = View(key, draw).defaults
        missing = [c for c in controls if c not in defaults]
        if missing:
            raise ValueError(
                f"controls {missing} are not keyword parameters with defaults of {draw.__name__}"
            )
        frames = {}
        for c, values in (grid or {}).items():
            if c not in controls:
                raise ValueError(
                    f"grid control {c!r} of {draw.__name__} is not one of its controls {sorted(controls)}"
                )
            spec = controls[c]
            if values is None:
                if not isinstance(spec, (bool, list, dict)):
                    raise ValueError(
                        f"grid of slider {c!r} of {draw.__name__} must list its values"
                    )
                values = [v for _, v in _options(spec)]
            elif not isinstance(spec, (bool, list, dict)):
                lo, hi, _ = spec
                if not all(lo <= v <= hi for v in values):
                    raise ValueError(
                        f"grid of {c!r} of {draw.__name__} leaves [{lo}, {hi}]: {values!r}"
                    )
            frames[c] = tuple(values)
        count = 1
        for values in frames.values():
            count *= len(values) + 1  # room for a starting value off the grid
        if frames and count > 2 * MAX_FRAMES:
            raise ValueError(f"grid of {draw.__name__} has too many frames: {count}")
        VIEWS[key] = View(key, draw, dict(controls), frames)
        return draw

    return register


def _label(key):
    return LABELS.get(key, key)


def _format(value):
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _live_control(key, spec, value):
    """A control at the registered (fine) step, for :func:`show`'s ``live=True``."""
    import ipywidgets as w

    layout = w.Layout(width="auto")
    style = {"description_width": "initial"}
    label = _label(key)
    if isinstance(spec, (bool, list, dict)):
        return w.Dropdown(
            options=_options(spec), value=value, description=label, style=style
        )
    lo, hi, step = spec
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, step)):
        return w.IntSlider(
            value=value,
            min=lo,
            max=hi,
            step=step,
            description=label,
            continuous_update=False,
            style=style,
            layout=layout,
        )
    return w.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=label,
        continuous_update=False,
        readout_format=".3g",
        style=style,
        layout=layout,
    )


def _grid_control(key, spec, values, value):
    """A control over a grid of values: its ``index`` selects the frame (a slider, or a dropdown for options)."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    if isinstance(spec, (bool, list, dict)):
        labels = dict((v, lab) for lab, v in _options(spec))
        options = [(labels.get(v, _format(v)), v) for v in values]
        return w.Dropdown(
            options=options, value=value, description=_label(key), style=style
        )
    options = [(_format(v), v) for v in values]
    if (
        len(options) <= 2
    ):  # two positions read better as a choice than as a slider with no middle
        return w.Dropdown(
            options=options, value=value, description=_label(key), style=style
        )
    return w.SelectionSlider(
        options=options,
        value=value,
        description=_label(key),
        continuous_update=True,
        style=style,
        layout=w.Layout(width="min(100%, 420px)"),
    )


class Redraw:
    """The live redraw of one view: one kept figure whose artists each redraw updates, rendered to PNG once.

    ``png(**params)`` is what a live widget does when a control moves; the static page's frames are
    made the same way, one after another on the same figure.  ``close()`` frees the figure.
    """

    def __init__(self, name_or_draw):
        from dpbook_book.plotting import KeptFigure

        self.view = _lookup(name_or_draw)
        self.kept = KeptFigure(self.view.draw)

    def figure(self, **params):
        """The kept figure, updated to ``params`` (the view's defaults for the rest)."""
        return self.kept.update(**{**self.view.defaults, **params})

    def png(self, **params):
        """One redraw: update the kept figure's artists, render it to PNG once (see :func:`render`)."""
        return _png(lambda: self.figure(**params), close=False)

    def close(self):
        self.kept.close()


def _png(make, close):
    """PNG bytes of the figure ``make()`` returns, with the collector paused (see :func:`render`)."""
    import gc

    import matplotlib.pyplot as plt

    from dpbook_book.plotting import png_bytes

    collecting = gc.isenabled()
    gc.disable()
    try:
        fig = make()
        try:
            _share_mathtext(fig)
            png = png_bytes(fig)
        finally:
            if close:
                plt.close(fig)
    finally:
        if collecting:
            gc.enable()
    return png


def compact_png(png):
    """``png`` with its colours reduced to a 256-colour palette: under a third of the bytes, for embedded frames."""
    import io

    from PIL import Image, PngImagePlugin

    image = Image.open(io.BytesIO(png))
    info = PngImagePlugin.PngInfo()
    for (
        key,
        value,
    ) in image.text.items():  # the figure's recorded text size (plotting.png_bytes)
        info.add_text(key, value)
    out = io.BytesIO()
    # fast octree: 9 ms a frame against median cut's 47 ms, and smaller files (the views draw lines and
    # flat fills, no colour gradients); zlib's default level: 4 ms against level 9's 22 ms, 17% larger
    image.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE).save(
        out, "png", pnginfo=info, dpi=image.info.get("dpi", (100, 100))
    )
    return out.getvalue()


def _alt(v, params, keys):
    values = ", ".join(f"{_label(k)} = {_format(params[k])}" for k in keys)
    return f"{v.summary} ({values})" if values else v.summary


def _img(png, alt):
    import base64
    import html

    data = base64.b64encode(png).decode("ascii")
    return (
        f'<img alt="{html.escape(alt, quote=True)}" src="data:image/png;base64,{data}" '
        f'style="max-width: 100%; height: auto; display: block;">'
    )


def _view_widget_class():
    import ipywidgets as w

    class ViewWidget(w.VBox):
        """A view as shown in a chapter: its controls above its frames, with a static PNG for non-widget readers."""

        def __init__(self, children, png, text, **kwargs):
            super().__init__(children, **kwargs)
            self._png, self._text = png, text

        def _repr_mimebundle_(self, **kwargs):
            import base64

            data = super()._repr_mimebundle_(**kwargs) or {}
            data["image/png"] = base64.b64encode(self._png).decode("ascii")
            data["text/plain"] = self._text
            return data

    return ViewWidget


def show(name_or_draw, live=False, **overrides):
    """Show a registered view in a chapter: its controls above its figure.

    By default (``live=False``) every figure on the view's grid (:meth:`View.frame_grid`) is drawn now,
    each as an image with alt text, and the controls select among them in the browser (each control's
    ``index`` is linked to an ipywidgets ``Stack`` by ``jsdlink``), so the published page responds with
    no kernel.  Two or more gridded controls nest the stacks: the first control picks among stacks, the
    next one among the frames of each.  Controls off the grid are held at their values.  The frames are
    drawn by :class:`Redraw` on one kept figure.

    With ``live=True`` the controls move in their registered (finer) steps and a Python observer
    redraws the one figure through :class:`Redraw` (a live kernel only).

    ``overrides`` set the starting values (else the drawing function's defaults).  The returned widget
    also carries the figure at the starting values as ``image/png`` (and a ``text/plain`` line), for
    notebooks without widgets and the PDF.
    """
    import ipywidgets as w

    v = _lookup(name_or_draw)
    unknown = [k for k in overrides if k not in v.defaults]
    if unknown:
        raise ValueError(f"{v.name} has no parameter {unknown[0]!r}")
    params = {**v.defaults, **overrides}
    redraw = Redraw(v)
    ViewWidget = _view_widget_class()
    bar = w.Layout(
        display="flex", flex_flow="row wrap", align_items="center", grid_gap="4px 16px"
    )
    png = redraw.png(**params)
    if live:
        controls = {
            k: _live_control(k, spec, params[k]) for k, spec in v.controls.items()
        }
        body = w.HTML(_img(png, _alt(v, params, list(controls))))

        def update(_change=None):
            now = {**params, **{k: c.value for k, c in controls.items()}}
            body.value = _img(redraw.png(**now), _alt(v, now, list(controls)))

        for c in controls.values():
            c.observe(update, names="value")
    else:
        grid = v.frame_grid(**overrides)
        controls = {
            k: _grid_control(k, v.controls[k], grid[k], params[k]) for k in grid
        }
        try:
            body = _stack(v, redraw, params, grid, list(grid), controls)
        finally:
            redraw.close()
    children = (
        [w.Box(list(controls.values()), layout=bar), body] if controls else [body]
    )
    text = f"{v.name}: {v.summary}"
    shown = ViewWidget(children, png, text, layout=w.Layout(width="100%"))
    shown.add_class("dpbook-view")
    return shown


def _stack(v, redraw, params, grid, keys, controls):
    """The frames for every value of ``keys`` (nested stacks), the others as in ``params``."""
    import ipywidgets as w

    if not keys:
        return w.HTML(
            _img(compact_png(redraw.png(**params)), _alt(v, params, list(grid)))
        )
    key, rest = keys[0], keys[1:]
    children = [
        _stack(v, redraw, {**params, key: value}, grid, rest, controls)
        for value in grid[key]
    ]
    stack = w.Stack(children, selected_index=grid[key].index(params[key]))
    w.jsdlink((controls[key], "index"), (stack, "selected_index"))
    return stack


def render(name_or_draw, **params):
    """One redraw from scratch: draw the view on a new figure, render it to PNG once, close it.

    Returns the PNG bytes.  The PNG is rendered at the figure's own size (the style's fixed margins
    fit it), not through the inline backend's ``bbox_inches="tight"``, which draws every figure twice,
    and compressed lightly (the same pixels, in a few ms less).  Python's cyclic garbage collector is
    paused while the figure lives (and restored after): otherwise its tens of thousands of objects
    outlive young-generation collections, get promoted, and trigger a full collection of the whole
    kernel (60–200 ms) every dozen redraws; closed first, they are freed by the next young collection.
    A live widget redraws faster through :class:`Redraw`, which keeps the figure.
    """
    v = _lookup(name_or_draw)
    return _png(lambda: v.draw(**{**v.defaults, **params}), close=True)


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
            raise ValueError(
                f"no view named {name_or_draw!r}; known: {sorted(VIEWS)}"
            ) from None
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
