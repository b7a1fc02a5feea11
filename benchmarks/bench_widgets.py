"""How long each interactive figure of the book takes to redraw.

Every view registered in :mod:`dpbook.widgets` (``load_all()`` imports every part's module) is
drawn with its defaults, then once with each control moved by one step (a slider one step away
from its default, a dropdown on another option, a checkbox flipped), as the live widget redraws:
exactly what the live widget does on each redraw: :func:`dpbook_book.widgets.render` (the drawing
function, one PNG at the figure's own size, Agg backend, close).  ``--render png-tight`` times the
inline backend's tight PNG instead (two draws), ``--render draw`` only ``fig.canvas.draw()`` (both
also show the time spent in the drawing function alone).  Each case is the median of ``--runs``
runs after one warm-up.

The budget (100 ms) applies to the process CPU time of a redraw: on this 2-core machine shared by
several jobs, wall-clock time mostly measures the other jobs (both are printed).  A redraw is
single-threaded, so on an idle machine its wall time equals its CPU time.  Exit status 1 if the
slowest redraw is over budget.

    python benchmarks/bench_widgets.py [--runs 5] [--budget-ms 100] [--render widget|png-tight|draw]
                                       [--json out.json] [--import MODULE]
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

from dpbook_book.plotting import use_style  # noqa: E402
from dpbook_book import widgets  # noqa: E402
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


def redraw(view, kwargs, render="widget"):
    """One redraw; returns the CPU seconds spent in the drawing function itself."""
    c0 = time.process_time()
    if render == "widget":
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


def time_case(view, kwargs, runs, render="widget"):
    """Medians over ``runs`` redraws, after one warm-up, of (CPU s, wall s, CPU s in ``draw``)."""
    redraw(view, kwargs, render)
    cpu, wall, fn = [], [], []
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        fn.append(redraw(view, kwargs, render))
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall), statistics.median(fn)


def cases(view):
    defaults = view.defaults
    yield "defaults", dict(defaults)
    for name, spec in view.controls.items():
        value = moved(spec, defaults[name])
        yield f"{name}={value!r}", {**defaults, name: value}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (median)")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="slowest redraw allowed")
    parser.add_argument("--render", choices=["widget", "png-tight", "draw"], default="widget",
                        help="widget: exactly the live widget's redraw, dpbook_book.widgets.render (default); "
                             "png-tight: the inline backend's tight PNG; draw: fig.canvas.draw() only")
    parser.add_argument("--json", help="also write the timings to this file")
    parser.add_argument("--import", dest="modules", action="append", default=[],
                        help="import this module too (registers extra views)")
    args = parser.parse_args(argv)

    use_style()
    for module in args.modules:
        importlib.import_module(module)
    views = load_all()
    if not views:
        print("no views registered in dpbook.widgets")
        return 0

    rows, failed = [], []
    for name in sorted(views):
        view = views[name]
        for case, kwargs in cases(view):
            try:
                cpu, wall, fn = time_case(view, kwargs, args.runs, args.render)
            except Exception as exc:  # a broken view is reported, and fails the run
                failed.append(f"{name} [{case}]: {type(exc).__name__}: {exc}")
                plt.close("all")
                continue
            rows.append({"view": name, "case": case, "ms": 1e3 * cpu, "wall_ms": 1e3 * wall,
                         "draw_fn_ms": 1e3 * fn})

    for line in failed:
        print(f"ERROR {line}")
    if not rows:
        return 1
    width = max(len(r["view"]) + len(r["case"]) for r in rows) + 3
    print(f"{'view [control moved]':<{width}} {'CPU':>9} {'wall':>9} {'(in draw)':>10}")
    for r in rows:
        flag = "  OVER BUDGET" if r["ms"] > args.budget_ms else ""
        print(f"{r['view'] + ' [' + r['case'] + ']':<{width}} {r['ms']:6.1f} ms {r['wall_ms']:6.1f} ms"
              f" {r['draw_fn_ms']:7.1f} ms{flag}")
    slowest = max(rows, key=lambda r: r["ms"])
    over = sorted({r["view"] for r in rows if r["ms"] > args.budget_ms})
    print(f"\n{len(views)} views, {len(rows)} redraws ({args.render}), median of {args.runs} runs each; "
          f"slowest: {slowest['view']} [{slowest['case']}] {slowest['ms']:.1f} ms CPU "
          f"(budget {args.budget_ms:.0f} ms); over budget: {', '.join(over) or 'none'}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"budget_ms": args.budget_ms, "runs": args.runs, "render": args.render,
                       "redraws": rows}, fh, indent=1)
    return int(slowest["ms"] > args.budget_ms or bool(failed))


if __name__ == "__main__":
    sys.exit(main())
