"""The book's shared figure style: one look for every figure, one colour per mechanism.

Figures use fixed margins rather than a layout engine: constrained layout more than doubles the
cost of a redraw, and widget redraws must be fast (``benchmarks/bench_widgets.py``).  For the same
reason titles sit at a fixed height (``axes.titley``) instead of being lifted over whatever is above
the axes, which costs a second layout of the tick labels on every draw; nothing of the book's figures
is above the axes.  :class:`KeptFigure` redraws a drawing function's figure by updating its artists,
on a canvas that draws text from cached glyph bitmaps and lays out each legend once per draw.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import matplotlib as mpl
import matplotlib.pyplot as plt

#: one colour per mechanism family, used by every chapter
COLORS = {
    "laplace": "#4c72b0",
    "bit": "#dd8452",
    "truncated": "#55a868",
    "ramp": "#dd8452",
    "translated_ramp": "#c44e52",
    "restricted": "#55a868",
    "log_laplace": "#8172b3",
    "croft": "#937860",
    "normalized": "#da8bc3",
    "bound": "#8c8c8c",
    "simulation": "#222222",
}

#: The width (inches) of every figure: the text column's.  A figure is shown at most as wide as the
#: column, and on a 400 px phone about 350 CSS px wide, so its text is scaled by 350 / (72 x width)
#: CSS px per point: 0.97 at this width, and :data:`MIN_FONT` stays above 9 CSS px.  Panels that would
#: sit side by side are stacked instead (:func:`figure`), each as wide as the column.
COLUMN_WIDTH = 5.0
#: the height (inches) of one panel's plotting area, and the fixed margins around panels (inches)
PANEL_HEIGHT = 2.3
MARGIN_BOTTOM, MARGIN_TOP, PANEL_GAP = 0.55, 0.35, 0.85
#: the smallest font size (points) of any text in a figure (ticks, legends, annotations);
#: ``tests/test_site.py`` measures it on the page from the size each figure records (:func:`png_bytes`)
MIN_FONT = 9.5

STYLE = {
    "figure.figsize": (COLUMN_WIDTH, PANEL_HEIGHT + MARGIN_BOTTOM + MARGIN_TOP),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.subplot.left": 0.16,
    "figure.subplot.right": 0.96,
    "figure.subplot.bottom": MARGIN_BOTTOM
    / (PANEL_HEIGHT + MARGIN_BOTTOM + MARGIN_TOP),
    "figure.subplot.top": 1 - MARGIN_TOP / (PANEL_HEIGHT + MARGIN_BOTTOM + MARGIN_TOP),
    "figure.subplot.wspace": 0.35,
    "figure.subplot.hspace": PANEL_GAP / PANEL_HEIGHT,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10.5,
    "axes.titley": 1.0,
    "axes.labelsize": 10,
    "xtick.labelsize": MIN_FONT,
    "ytick.labelsize": MIN_FONT,
    "legend.fontsize": MIN_FONT,
    "legend.frameon": True,
    "legend.framealpha": 0.85,
    "legend.edgecolor": "none",
    "lines.linewidth": 1.8,
    "font.size": 10,
}


def use_style():
    """Apply the book's style globally (chapters call it once in their set-up cell).

    In IPython it also has figures shown as PNG through :func:`png_bytes`, so each records its
    smallest text.
    """
    mpl.rcParams.update(STYLE)
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        from matplotlib.figure import Figure

        shell.display_formatter.formatters["image/png"].for_type(
            Figure, functools.partial(png_bytes, tight=True)
        )


#: the PNG text chunk holding a figure's smallest text height in the image's pixels (see :func:`png_bytes`)
TEXT_SIZE_KEY = "dpbook:smallest-text-px"


def smallest_text(fig):
    """The smallest font size (points) of the visible, non-empty texts of ``fig`` (``None`` without text)."""
    from matplotlib.text import Text

    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_figure(root=True) is fig
    ]
    return min(sizes) if sizes else None


def png_bytes(fig, tight=False, dpi=None):
    """``fig`` as PNG bytes, recording its smallest text's height in pixels (the ``dpbook:`` text chunk).

    The site test reads that height back and scales it by the width the page shows the image at, so
    a figure's legibility on a phone is measured, not guessed.  ``tight`` crops to the drawn artists
    (as the notebook's inline display does); the views' frames keep the figure's own size.
    """
    import io

    dpi = dpi or mpl.rcParams["savefig.dpi"]
    if dpi == "figure":
        dpi = fig.dpi
    smallest = smallest_text(fig)
    metadata = {TEXT_SIZE_KEY: f"{smallest * dpi / 72:.2f}"} if smallest else {}
    out = io.BytesIO()
    fig.savefig(
        out,
        format="png",
        dpi=dpi,
        metadata=metadata,
        bbox_inches="tight" if tight else None,
        pil_kwargs={"compress_level": 1} if not tight else None,
    )
    return out.getvalue()


@contextlib.contextmanager
def style():
    """The book's style inside a ``with`` block only.

    Only the keys of :data:`STYLE` are restored afterwards (``mpl.rc_context`` would also restore
    pyplot's interactive flag, so a kernel's first figure made inside it would switch automatic
    display off).
    """
    saved = {k: mpl.rcParams[k] for k in STYLE}
    mpl.rcParams.update(STYLE)
    try:
        yield
    finally:
        mpl.rcParams.update(saved)


def figure(ncols=1, nrows=1, width=None, height=None, **kwargs):
    """A new figure in the book's style, drawn for the text column: returns ``(fig, axes)`` like ``plt.subplots``.

    Every figure is :data:`COLUMN_WIDTH` wide (a wider ``width`` is narrowed to it), so its text keeps
    its size on a phone.  A row of panels (``nrows=1``, ``ncols > 1``) is stacked into a column instead,
    each panel as wide as the figure, with the fixed margins of the style; ``axes`` is still the
    sequence of the panels, in order (``width_ratios`` become ``height_ratios``).  ``height`` sets
    one panel's plotting height when the panels are stacked.

    Inside :meth:`KeptFigure.update` it returns the kept figure instead (see there).
    """
    kept = _KEPT.get()
    if kept is not None:
        return kept._subplots(ncols, nrows, width, height, kwargs)
    w = min(width or COLUMN_WIDTH, COLUMN_WIDTH)
    rows, cols = nrows, ncols
    stacked = nrows == 1 and ncols > 1
    if stacked:
        rows, cols = ncols, 1
        gridspec = dict(kwargs.pop("gridspec_kw", None) or {})
        if "width_ratios" in gridspec:
            gridspec["height_ratios"] = gridspec.pop("width_ratios")
        if gridspec:
            kwargs["gridspec_kw"] = gridspec
        if "sharey" in kwargs and "sharex" not in kwargs:
            kwargs["sharex"] = False
    panel = (
        min(height - MARGIN_BOTTOM - MARGIN_TOP, PANEL_HEIGHT)
        if (height and not stacked)
        else PANEL_HEIGHT
    )
    if stacked and height:
        panel = min(height, PANEL_HEIGHT)
    h = rows * panel + (rows - 1) * PANEL_GAP + MARGIN_BOTTOM + MARGIN_TOP
    squeeze = kwargs.get("squeeze", True)
    with style():
        fig, axes = plt.subplots(rows, cols, figsize=(w, h), **kwargs)
    fig.subplots_adjust(
        bottom=MARGIN_BOTTOM / h, top=1 - MARGIN_TOP / h, hspace=PANEL_GAP / panel
    )
    if stacked and not squeeze:
        axes = axes.reshape(nrows, ncols)
    return fig, axes


#: the :class:`KeptFigure` whose drawing function is running, if any
_KEPT = contextvars.ContextVar("dpbook_kept_figure", default=None)

#: the Axes methods that add artists; in a kept figure their artists are matched call by call
_MAKERS = frozenset(
    {
        "plot",
        "loglog",
        "semilogx",
        "semilogy",
        "step",
        "scatter",
        "axhline",
        "axvline",
        "axhspan",
        "axvspan",
        "fill_between",
        "fill_betweenx",
        "vlines",
        "hlines",
        "stairs",
        "hist",
        "bar",
        "barh",
        "annotate",
        "text",
    }
)


class KeptFigure:
    """One figure that a drawing function redraws by updating its artists instead of rebuilding it.

    ``draw(**params)`` is an ordinary drawing function that makes its figure with :func:`figure`.
    :meth:`update` runs it with :func:`figure` handing back the figure of the previous run (the same
    axes, cleared of nothing), and every artist-making call (``ax.plot``, ``ax.axhline``,
    ``ax.fill_between``, ``ax.annotate``, ...; see ``_MAKERS``) matched, by its place in the sequence
    of calls on its axes, to the artist the same call made last time: that artist takes the new data
    (``set_data``, ``set_xy``, ``set_paths``, ``set_text``...) and style and is returned in place of the
    new one.  Labels, titles, limits and ticks are set on the same axes as before; a legend is made
    afresh.  A call with no counterpart keeps its new artist, and artists no call reused are removed,
    so the figure is always what ``draw`` draws (the widget tests compare the pixels with a fresh
    figure's).  What this saves is building the figure and its axes, the renderer's text-layout
    cache (it lives as long as the canvas) and, most of all, drawing axes decorations that did not
    change: each axis (ticks, tick labels, grid lines, label) is drawn from a rendered layer when an
    earlier redraw drew it showing the same thing (``_draw_axis``).  Its canvas also draws every text
    from glyph bitmaps rasterized once (:func:`_kept_canvas_class`) and lays each legend out once per
    draw (:func:`_lay_out_once`); both give matplotlib's own pixels.
    """

    def __init__(self, draw):
        self.draw = draw
        self.fig = None
        self._layout = None
        self._axes = []  # (real axes, calls made last time: [(method, [artists], container)])
        self._calls = []  # this run's calls, per axes
        self._layers = {}  # rendered axis layers, by what they show (see _draw_axis)

    def update(self, **params):
        """Run ``draw(**params)`` on the kept figure; returns the figure."""
        token = _KEPT.set(self)
        try:
            fig = self.draw(**params)
        except BaseException:
            self.close()
            raise
        finally:
            _KEPT.reset(token)
        if (
            fig is not self.fig
        ):  # the function made its figure some other way: nothing is kept
            self.close()
            return fig
        self._sweep()
        return fig

    def forget_layers(self):
        """Forget the rendered axis layers (the next redraw renders every axis afresh)."""
        self._layers = {}

    def close(self):
        """Let go of the kept figure (the next :meth:`update` builds a new one)."""
        self.fig, self._layout, self._axes, self._calls, self._layers = (
            None,
            None,
            [],
            [],
            {},
        )

    def _subplots(self, ncols, nrows, width, height, kwargs):
        layout = (ncols, nrows, width, height, tuple(sorted(kwargs.items())))
        fresh = self.fig is None or layout != self._layout
        if fresh:
            self.close()
            token = _KEPT.set(None)
            try:
                self.fig, axes = figure(ncols, nrows, width, height, **kwargs)
            finally:
                _KEPT.reset(token)
            plt.close(
                self.fig
            )  # kept by this object, not by pyplot (which would show it at a cell's end)
            _kept_canvas_class()(
                self.fig
            )  # closing left a bare canvas; an Agg one keeps its renderer between redraws
            self._layout = layout
            self._axes = [(ax, []) for ax in self.fig.axes]
            self._layers = {}
            for ax in self.fig.axes:
                for axis in (ax.xaxis, ax.yaxis):
                    axis.draw = functools.partial(self._draw_axis, axis)
        else:
            for ax, _ in self._axes:
                _restart(ax)
        self._calls = [[] for _ in self._axes]
        proxies = [_KeptAxes(self, i, ax) for i, (ax, _) in enumerate(self._axes)]
        if ncols * nrows == 1 and kwargs.get("squeeze", True):
            return self.fig, proxies[0]
        shape = (
            (nrows, ncols)
            if not kwargs.get("squeeze", True) or (nrows > 1 and ncols > 1)
            else None
        )
        import numpy as np

        arr = np.empty(len(proxies), dtype=object)
        arr[:] = proxies
        return self.fig, arr.reshape(shape) if shape else arr

    def _call(self, i, method, args, kwargs):
        from matplotlib.container import Container

        ax, previous = self._axes[i]
        result = getattr(ax, method)(*args, **kwargs)
        k = len(self._calls[i])
        new = _artists(result)
        last = previous[k] if k < len(previous) and previous[k][0] == method else None
        if (
            last is not None
            and len(last[1]) == len(new)
            and all(map(_transplantable, last[1], new))
        ):
            for o, n in zip(last[1], new):
                _transplant(o, n)
            if isinstance(
                result, Container
            ):  # bar: keep the old container, with the new label
                ax.containers.remove(result)
                last[2].set_label(result.get_label())
                result = last[2]
            else:
                result = _substitute(result, {id(n): o for o, n in zip(last[1], new)})
            self._calls[i].append((method, last[1], last[2]))
        else:
            self._calls[i].append(
                (method, new, result if isinstance(result, Container) else None)
            )
        return result

    #: how many rendered axis layers a kept figure remembers
    LAYERS = 48

    def _draw_axis(self, axis, renderer):
        """Draw ``axis`` (its ticks, tick labels, grid lines and label) from a rendered layer when an
        earlier redraw drew it showing the same thing; else render it alone into a transparent layer,
        remember that, and draw it.  Axis decorations are most of the cost of a redraw, and moving a
        control mostly leaves some axes unchanged.  (Composited, a layer's antialiased edges may differ
        from drawing in place by a unit or two of a colour channel.)"""
        import numpy as np
        from matplotlib.backends.backend_agg import RendererAgg

        if not axis.get_visible():
            return
        if not isinstance(renderer, RendererAgg):  # e.g. saved as PDF: draw in place
            return type(axis).draw(axis, renderer)
        key = _axis_key(axis, renderer)
        layer = self._layers.pop(key, None) if key is not None else None
        if layer is None:
            off = type(renderer)(renderer.width, renderer.height, renderer.dpi)
            off.mathtext_parser = renderer.mathtext_parser
            type(axis).draw(axis, off)
            rgba = np.asarray(off.buffer_rgba())
            rows, cols = (
                np.flatnonzero(rgba[..., 3].any(axis=1)),
                np.flatnonzero(rgba[..., 3].any(axis=0)),
            )
            layer = (
                None
                if rows.size == 0
                else (
                    rgba[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].copy(),
                    int(cols[0]),
                    int(renderer.height - rows[-1] - 1),
                )
            )
            if key is not None:
                while len(self._layers) >= self.LAYERS:
                    self._layers.pop(next(iter(self._layers)))
        if key is not None:
            self._layers[key] = layer
        if layer is not None:
            image, x, y = layer
            gc = renderer.new_gc()
            renderer.draw_image(gc, x, y, image[::-1] if _FLIP else image)
            gc.restore()
        axis.stale = False

    def _legend(self, i, args, kwargs):
        """A legend of this run's artists: labelled artists of the last run not reused so far go first."""
        ax, previous = self._axes[i]
        live = {id(a) for _, arts, _ in self._calls[i] for a in arts}
        for _, arts, _ in previous:
            for a in arts:
                if (
                    id(a) not in live
                    and a.axes is not None
                    and not str(a.get_label()).startswith("_")
                ):
                    a.remove()
        return _lay_out_once(ax.legend(*args, **kwargs))

    def _sweep(self):
        for i, (ax, previous) in enumerate(self._axes):
            live = {id(a) for _, arts, _ in self._calls[i] for a in arts}
            kept = {id(c) for _, _, c in self._calls[i] if c is not None}
            for _, arts, container in previous:
                for a in arts:
                    if id(a) not in live and a.axes is not None:
                        a.remove()
                if (
                    container is not None
                    and id(container) not in kept
                    and container in ax.containers
                ):
                    ax.containers.remove(container)
            self._axes[i] = (ax, self._calls[i])
        self._calls = []


def _lay_out_once(legend):
    """``legend``, laid out and placed once per draw instead of several times.

    Matplotlib lays out a legend's boxes (each label's text extent, the packing of rows and columns)
    to size its frame, again to place its rows, and again for each nested box it draws, and with
    ``loc="best"`` it scores every candidate place against every line's vertices both to size the
    frame and to draw the rows.  Nothing changes between these calls within one draw, so here each
    box's layout and the best place are computed once per draw of the legend (and afresh at the next
    draw): the same numbers, fewer passes; outside a draw every call computes as before.
    """
    from matplotlib.offsetbox import OffsetBox

    memo, drawing = {}, []

    def once(owner, method):
        compute = getattr(owner, method)

        def call(*args):
            if not drawing:
                return compute(*args)
            key = (id(owner), method, *args[:-1], id(args[-1]))
            if key not in memo:
                memo[key] = compute(*args)
            return memo[key]

        setattr(owner, method, call)

    boxes = [legend._legend_box]
    while boxes:
        box = boxes.pop()
        once(box, "get_bbox")
        once(box, "_get_bbox_and_child_offsets")
        boxes.extend(c for c in box.get_children() if isinstance(c, OffsetBox))
    once(legend, "_find_best_position")
    draw = legend.draw

    def draw_once(renderer):
        memo.clear()
        drawing.append(True)
        try:
            return draw(renderer)
        finally:
            drawing.clear()
            memo.clear()

    legend.draw = draw_once
    return legend


#: whether ``RendererAgg.draw_image`` wants the rows of an image bottom first
_FLIP = True


def _axis_key(axis, renderer):
    """Everything an axis's pixels depend on in a kept figure, or ``None`` if it cannot tell."""
    try:
        major = axis.get_majorticklocs()
        minor = axis.get_minorticklocs()
        fmt = axis.get_major_formatter()
        labels = tuple(fmt.format_ticks(major))
        offset = fmt.get_offset() if hasattr(fmt, "get_offset") else ""
        minor_labels = tuple(axis.get_minor_formatter().format_ticks(minor))
    except Exception:
        return None
    return (
        axis.axis_name,
        renderer.width,
        renderer.height,
        tuple(axis.axes.bbox.bounds),
        tuple(axis.get_view_interval()),
        axis.get_scale(),
        tuple(major),
        labels,
        offset,
        tuple(minor),
        minor_labels,
        axis.label.get_text(),
        axis.label.get_visible(),
        tuple(axis.get_tick_params().items())
        if hasattr(axis, "get_tick_params")
        else (),
    )


class _KeptAxes:
    """An axes of a :class:`KeptFigure`, as the drawing function sees it: artist-making calls are matched."""

    def __init__(self, kept, i, ax):
        self._kept, self._i, self._ax = kept, i, ax

    def __getattr__(self, name):
        attr = getattr(self._ax, name)
        if name == "legend":
            return lambda *args, **kwargs: self._kept._legend(self._i, args, kwargs)
        if name not in _MAKERS:
            return attr

        def call(*args, **kwargs):
            return self._kept._call(self._i, name, args, kwargs)

        return call


def _restart(ax):
    """Forget the data limits and the fixed limits of the last run: this run's calls set them again."""
    from matplotlib.transforms import Bbox

    ax.dataLim.set_points(Bbox.null().get_points())
    ax.ignore_existing_data_limits = True
    ax.set_autoscalex_on(True)
    ax.set_autoscaley_on(True)


def _artists(result):
    """The artists a maker returned, flattened (``hist`` returns counts, edges and patches)."""
    from matplotlib.artist import Artist
    from matplotlib.container import Container

    if isinstance(result, Artist):
        return [result]
    if isinstance(result, Container):
        return [a for a in result if isinstance(a, Artist)]
    if isinstance(result, (list, tuple)):
        return [a for r in result for a in _artists(r)]
    return []


def _substitute(result, swap):
    from matplotlib.artist import Artist

    if isinstance(result, Artist):
        return swap.get(id(result), result)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_substitute(r, swap) for r in result)
    if isinstance(result, list):
        return [_substitute(r, swap) for r in result]
    return result


def _transplantable(old, new):
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Polygon, Rectangle, StepPatch
    from matplotlib.text import Text

    if type(old) is not type(new) or old.axes is None:
        return False
    return isinstance(old, (Line2D, Text, Polygon, Rectangle, StepPatch, Collection))


def _transplant(old, new):
    """Give ``old`` the data and the style of ``new`` (same type, same axes) and remove ``new``."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Polygon, Rectangle, StepPatch
    from matplotlib.text import Annotation, Text

    old.update_from(new)
    if isinstance(old, Line2D):
        old.set_data(*new.get_data(orig=True))
    elif isinstance(old, Text):
        old.set_text(new.get_text())
        old.set_position(new.get_position())
        old.set_horizontalalignment(new.get_horizontalalignment())
        old.set_verticalalignment(new.get_verticalalignment())
        if isinstance(old, Annotation):
            old.xy = new.xy
    elif isinstance(old, StepPatch):
        data = new.get_data()
        old.set_data(data.values, data.edges, data.baseline)
    elif isinstance(old, Rectangle):
        old.set_xy(new.get_xy())
        old.set_width(new.get_width())
        old.set_height(new.get_height())
        old.set_angle(new.get_angle())
    elif isinstance(old, Polygon):
        old.set_xy(new.get_xy())
    elif isinstance(old, LineCollection):
        old.set_segments(new.get_segments())
    elif isinstance(old, PolyCollection):  # fill_between's polygons
        paths = new.get_paths()
        old.set_verts_and_codes([p.vertices for p in paths], [p.codes for p in paths])
    else:  # other collections: scatter's markers
        old.set_paths(new.get_paths())
        if len(new.get_offsets()):
            old.set_offsets(new.get_offsets())
    old.set_zorder(new.get_zorder())
    old.stale = True
    new.remove()


#: rendered glyph bitmaps and laid-out strings, shared by every kept figure (see :func:`_kept_canvas_class`)
_GLYPHS, _LAYOUTS = {}, {}
#: how many glyph bitmaps (a few hundred bytes each) and laid-out strings are kept at most
GLYPHS = 20_000


@functools.cache
def _kept_canvas_class():
    """The Agg canvas of a kept figure: its renderer draws text from cached glyph bitmaps.

    Matplotlib's Agg renderer lays out and rasterizes every glyph of every text on every draw, which
    is most of a redraw's cost once the axes come from rendered layers (a legend's labels, the
    titles).  The renderer here keeps, for each glyph, the bitmap FreeType rasterized at a given
    sub-pixel offset (a glyph's 26.6 pen position modulo one pixel), and for each string its layout
    (the glyphs and their advances, for a font, size and dpi).  FreeType rasterizes an outline
    relative to its pixel-aligned bounding box, so a glyph moved by whole pixels has the same bitmap,
    moved by the same pixels: the cached bitmap is composited exactly where and as matplotlib would
    have drawn it, and no pixel changes (the widget tests compare a kept figure's PNG with a fresh
    figure's).
    """
    import math

    from matplotlib.backends.backend_agg import (
        FigureCanvasAgg,
        RendererAgg,
        get_hinting_flag,
    )
    from matplotlib.ft2font import RenderMode

    class KeptRenderer(RendererAgg):
        def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
            if ismath:
                return self.draw_mathtext(gc, x, y, s, prop, angle)
            font = self._prepare_font(prop)
            flags = get_hinting_flag()
            features = mtext.get_fontfeatures() if mtext is not None else None
            language = mtext.get_language() if mtext is not None else None
            size = prop.get_size_in_points()
            key = (font, size, self.dpi, s, flags, features, language)
            items = _LAYOUTS.get(key)
            if items is None:
                items = tuple(
                    (item.ft_object, item.glyph_index, item.x, item.y)
                    for item in font._layout(
                        s, flags=flags, features=features, language=language
                    )
                )
                if len(_LAYOUTS) >= GLYPHS:
                    _LAYOUTS.clear()
                _LAYOUTS[key] = items
            self._draw_text_glyphs_and_boxes(
                gc,
                x,
                y,
                angle,
                ((f, size, g, 0, 1, dx, dy) for f, g, dx, dy in items),
                [],
            )

        def _draw_text_glyphs_and_boxes(self, gc, x, y, angle, glyphs, boxes):
            """Matplotlib's own (3.11), with each glyph's bitmap taken from :data:`_GLYPHS`."""
            cos = math.cos(math.radians(angle))
            sin = math.sin(math.radians(angle))
            flags = get_hinting_flag()
            antialiased = gc.get_antialiased()
            mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
            height = self.height
            for font, size, glyph_index, slant, extend, dx, dy in glyphs:
                px = round(0x40 * (x + dx * cos - dy * sin))
                py = round(0x40 * (height - y + dx * sin + dy * cos))
                key = (
                    font,
                    size,
                    self.dpi,
                    glyph_index,
                    angle,
                    slant,
                    extend,
                    px & 63,
                    py & 63,
                    flags,
                    antialiased,
                )
                cached = _GLYPHS.get(key)
                if cached is None:
                    import numpy as np

                    font.set_size(size, self.dpi)
                    font._set_transform(
                        (
                            0x10000
                            * np.array([[cos, -sin], [sin, cos]])
                            @ [[extend, extend * slant], [0, 1]]
                        )
                        .round()
                        .astype(int),
                        [px & 63, py & 63],
                    )
                    bitmap = font._render_glyph(glyph_index, flags, mode)
                    buffer = bitmap.buffer
                    if not antialiased:
                        buffer *= 0xFF
                    cached = (buffer, bitmap.left, bitmap.top)
                    if len(_GLYPHS) >= GLYPHS:
                        _GLYPHS.clear()
                    _GLYPHS[key] = cached
                buffer, left, top = cached
                # draw_text_image's y is downwards & the bitmap bottom side
                self._renderer.draw_text_image(
                    buffer,
                    left + (px >> 6),
                    int(height) - (top + (py >> 6)) + buffer.shape[0],
                    0,
                    gc,
                )
            if boxes:
                super()._draw_text_glyphs_and_boxes(gc, x, y, angle, (), boxes)

    class KeptCanvas(FigureCanvasAgg):
        def get_renderer(self):
            w, h = self.get_width_height(physical=True)
            key = w, h, self.figure.dpi
            if self._lastKey != key:
                self.renderer = KeptRenderer(w, h, self.figure.dpi)
                self._lastKey = key
            return self.renderer

    return KeptCanvas
