"""How long each interactive figure of the book takes to redraw, as a ratio to a fixed simple figure.

Every view registered in :mod:`dpbook_book.widgets` (``load_all()`` imports every part's module) is
drawn with its defaults, then with each control moved by one step (a slider one step away from its
default, a dropdown on another option, a checkbox flipped), as a live widget redraws:
``--render live`` (default) times :class:`dpbook_book.widgets.Redraw` (one kept figure whose artists
are updated, one PNG), alternating between the defaults and the moved value so that every timed
redraw changes the figure; ``--render fresh`` times :func:`dpbook_book.widgets.render` (a new figure
per redraw, as the widgets did before they kept their figure); ``--render png-tight`` the inline
backend's tight PNG (two draws); ``--render draw`` only ``fig.canvas.draw()``.  Each case is the
median of ``--runs`` runs after one warm-up.

Times are process CPU time (on this 2-core machine shared by several jobs wall-clock time mostly
measures the other jobs; both are printed), and since even CPU time varies with the machine and its
load, each is also given as a ratio to a **baseline redraw** measured in the same run, just before
the view's cases (the load drifts during a run): a fixed simple figure (one axes, two 400-point curves,
labels, a title and a legend, in the book's style) drawn
afresh and rendered to PNG (``baseline()``).  The budget is a ratio (``--budget-ratio``, default
1.26): half the slowest ratio, 2.52, measured with ``--render fresh`` when every redraw rebuilt its
figure (80 ms on a quiet machine then).  Exit status 1 if the slowest redraw is over budget.

    python benchmarks/bench_widgets.py [--runs 5] [--budget-ratio 1.26] [--render live|fresh|png-tight|draw]
                                       [--json out.json] [--import MODULE] [--view NAME]
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpbook_book import widgets  # noqa: E402
from dpbook_book.plotting import figure, use_style  # noqa: E402
from dpbook_book.widgets import load_all  # noqa: E402


def moved(spec, value):
    """The value a reader reaches by moving a control with ``spec`` once from ``value``."""
    if isinstance(spec, bool):
        return not value
    if isinstance(spec, dict):
        spec = list(spec.values())
    if isinstance(spec, list):
        others = [o[1] if isinstance(o, tuple) else o for o in spec]
        others = [o for o in others if o != value]
        return others[0] if others else value
    lo, hi, step = spec
    up = value + step
    return up if up <= hi else value - step


def baseline():
    """The baseline redraw: a fixed simple figure in the book's style, drawn afresh, rendered to PNG, closed."""
    x = np.linspace(0.0, 10.0, 400)
    fig, ax = figure()
    ax.plot(x, np.sin(x), label="sin")
    ax.plot(x, np.cos(x), ls="--", label="cos")
    ax.set(xlabel="x", ylabel="y", title="baseline")
    ax.legend(loc="upper right")
    fig.savefig(io.BytesIO(), format="png", pil_kwargs={"compress_level": 1})
    plt.close(fig)


def time_baseline(runs):
    """Median CPU and wall seconds of :func:`baseline` over ``3 * runs`` runs, after one warm-up."""
    baseline()
    cpu, wall = [], []
    for _ in range(3 * runs):
        c0, w0 = time.process_time(), time.perf_counter()
        baseline()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def redraw(view, kwargs, render="live", live=None):
    """One redraw; returns the CPU seconds spent in the drawing function itself (``live``: the view's Redraw)."""
    c0 = time.process_time()
    if render == "live":
        live.png(**kwargs)
        return time.process_time() - c0
    if render == "fresh":
        widgets.render(view, **kwargs)
        return time.process_time() - c0
    fig = view.draw(**kwargs)
    c1 = time.process_time()
    if render == "png-tight":
        fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    else:
        fig.canvas.draw()
    plt.close(fig)
    return c1 - c0


def time_case(view, kwargs, runs, render="live", start=None, cold=False):
    """Medians over ``runs`` redraws, after one warm-up, of (CPU s, wall s, CPU s in ``draw``).

    With ``render="live"`` each timed redraw follows a redraw at ``start`` on the same kept figure,
    so that it is a real change (as a reader moving the control back and forth).
    """
    live = widgets.Redraw(view) if render == "live" else None
    try:
        redraw(view, kwargs, render, live)
        cpu, wall, fn = [], [], []
        for _ in range(runs):
            if live is not None and start is not None:
                live.png(**start)
            if live is not None and cold:
                live.kept.forget_layers()
            c0, w0 = time.process_time(), time.perf_counter()
            fn.append(redraw(view, kwargs, render, live))
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
    finally:
        if live is not None:
            live.close()
    return statistics.median(cpu), statistics.median(wall), statistics.median(fn)


def cases(view):
    defaults = view.defaults
    yield "defaults", dict(defaults)
    for name, spec in view.controls.items():
        value = moved(spec, defaults[name])
        yield f"{name}={value!r}", {**defaults, name: value}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=int, default=5, help="timed runs per case (median)"
    )
    parser.add_argument(
        "--budget-ratio",
        type=float,
        default=1.26,
        help="slowest redraw allowed, as a multiple of the baseline redraw",
    )
    parser.add_argument(
        "--render",
        choices=["live", "fresh", "png-tight", "draw"],
        default="live",
        help="live: the live widget's redraw, dpbook_book.widgets.Redraw (default); fresh: a new "
        "figure per redraw, dpbook_book.widgets.render; png-tight: the inline backend's "
        "tight PNG; draw: fig.canvas.draw() only",
    )
    parser.add_argument("--json", help="also write the timings to this file")
    parser.add_argument(
        "--import",
        dest="modules",
        action="append",
        default=[],
        help="import this module too (registers extra views)",
    )
    parser.add_argument(
        "--view", action="append", default=[], help="time only this view (repeatable)"
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="live: forget the kept figure's rendered axis layers before each timed redraw "
        "(a reader reaching values not shown before)",
    )
    args = parser.parse_args(argv)
    if args.render == "live" and not hasattr(widgets, "Redraw"):
        print("this dpbook_book has no widgets.Redraw: timing --render fresh")
        args.render = "fresh"

    use_style()
    for module in args.modules:
        importlib.import_module(module)
    views = load_all()
    if args.view:
        views = {k: v for k, v in views.items() if k in args.view}
    if not views:
        print(
            "no views registered in dpbook_book.widgets (or none of --view): nothing measured, the benchmark fails"
        )
        return 1

    rows, failed, bases = [], [], []
    for name in sorted(views):
        view = views[name]
        base_cpu, base_wall = time_baseline(
            args.runs
        )  # again for each view: the machine's load drifts
        bases.append((base_cpu, base_wall))
        every = list(cases(view))
        for j, (case, kwargs) in enumerate(every):
            start = every[1 if j == 0 and len(every) > 1 else 0][
                1
            ]  # the defaults, or for them the first move
            try:
                cpu, wall, fn = time_case(
                    view, kwargs, args.runs, args.render, start, args.cold
                )
            except Exception as exc:  # a broken view is reported, and fails the run
                failed.append(f"{name} [{case}]: {type(exc).__name__}: {exc}")
                plt.close("all")
                continue
            rows.append(
                {
                    "view": name,
                    "case": case,
                    "ms": 1e3 * cpu,
                    "wall_ms": 1e3 * wall,
                    "draw_fn_ms": 1e3 * fn,
                    "ratio": cpu / base_cpu,
                }
            )

    for line in failed:
        print(f"ERROR {line}")
    if not rows:
        return 1
    width = max(len(r["view"]) + len(r["case"]) for r in rows) + 3
    base_cpu, base_wall = (statistics.median(b[k] for b in bases) for k in (0, 1))
    print(
        f"baseline redraw (a fixed simple figure, fresh, to PNG; timed before each view, each ratio is to "
        f"its view's): median {1e3 * base_cpu:.1f} ms CPU, {1e3 * base_wall:.1f} ms wall"
    )
    print(
        f"{'view [control moved]':<{width}} {'CPU':>9} {'wall':>9} {'(in draw)':>10} {'ratio':>6}"
    )
    for r in rows:
        flag = "  OVER BUDGET" if r["ratio"] > args.budget_ratio else ""
        print(
            f"{r['view'] + ' [' + r['case'] + ']':<{width}} {r['ms']:6.1f} ms {r['wall_ms']:6.1f} ms"
            f" {r['draw_fn_ms']:7.1f} ms {r['ratio']:6.2f}{flag}"
        )
    slowest = max(rows, key=lambda r: r["ms"])
    over = sorted({r["view"] for r in rows if r["ratio"] > args.budget_ratio})
    mode = args.render + (", cold" if args.cold and args.render == "live" else "")
    print(
        f"\n{len(views)} views, {len(rows)} redraws ({mode}), median of {args.runs} runs each; "
        f"slowest: {slowest['view']} [{slowest['case']}] {slowest['ms']:.1f} ms CPU = "
        f"{slowest['ratio']:.2f} x baseline (budget {args.budget_ratio:g} x); over budget: {', '.join(over) or 'none'}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "budget_ratio": args.budget_ratio,
                    "runs": args.runs,
                    "render": mode,
                    "baseline_ms": 1e3 * base_cpu,
                    "baseline_wall_ms": 1e3 * base_wall,
                    "redraws": rows,
                },
                fh,
                indent=1,
            )
    return int(slowest["ratio"] > args.budget_ratio or bool(failed))


if __name__ == "__main__":
    sys.exit(main())
