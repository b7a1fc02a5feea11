"""How long each interactive figure of the book takes to redraw, as a ratio to a fixed simple figure.

Every view registered in :mod:`dpbook_book.widgets` (each part's module is imported, and any
``--import``) is drawn with its defaults, then with each control moved by one step (a slider one step
away from its default, a dropdown on another option, a checkbox flipped), as a live widget redraws:
``--render live`` (default) times :class:`dpbook_book.widgets.Redraw` (one kept figure per view,
whose artists are updated, one PNG), alternating between the defaults and the moved value so that
every timed redraw changes the figure; ``--render fresh`` times :func:`dpbook_book.widgets.render` (a new figure
per redraw, as the widgets did before they kept their figure); ``--render png-tight`` the inline
backend's tight PNG (two draws); ``--render draw`` only ``fig.canvas.draw()``.  ``--cold`` forgets
what a view keeps between redraws (its module's caches, the kept figure's rendered axis layers)
before each timed redraw: the cost of reaching a value not shown before.

Times are process CPU time (on this 2-core machine shared by several jobs wall-clock time mostly
measures the other jobs; both are printed), and since even CPU time varies with the machine and its
load, each redraw is also given as a ratio to a **baseline redraw** timed just before it (the load
drifts during a run, and between runs): a fixed simple figure (one axes, two 400-point curves,
labels, a title and a legend, in the book's style) drawn afresh and rendered to PNG
(``baseline()``).  A case's ratio is the median, over ``--runs`` runs after one warm-up, of each
redraw's ratio to its baseline.  The budget is a ratio (``--budget-ratio``, default 1.26): half the
slowest ratio, 2.52, measured with ``--render fresh`` when every redraw rebuilt its figure (80 ms on
a quiet machine then).  A case over budget is timed again (``--retime`` more runs, by default twice
``--runs``) and judged on all its runs, so that a burst of load on the machine does not fail it.

Exit status: 2 if a view cannot be drawn (or a view module cannot be imported), else 1 if a redraw
is over budget, else 0.

    python benchmarks/bench_widgets.py [--runs 3] [--retime N] [--budget-ratio 1.26] [--cold]
                                       [--render live|fresh|png-tight|draw]
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


def forget_caches(view):
    """Clear the ``functools`` caches of the view's module (the numbers it keeps between redraws)."""
    module = sys.modules.get(view.draw.__module__)
    for obj in list(vars(module).values()) if module else []:
        if callable(getattr(obj, "cache_clear", None)):
            obj.cache_clear()


def time_case(view, kwargs, runs, render="live", start=None, cold=False, live=None):
    """``runs`` timed redraws after one warm-up, each just after a baseline redraw (:func:`baseline`).

    Returns the samples, ``{"cpu", "wall", "fn", "base_cpu", "base_wall"}`` (seconds, one per run): the
    baseline is timed next to each redraw, so that a redraw and its baseline see the same load.
    With ``render="live"`` each timed redraw follows a redraw at ``start`` on the same kept figure,
    so that it is a real change (as a reader moving the control back and forth); with ``cold`` the
    kept figure's rendered axis layers and the view module's caches are forgotten first (a reader
    reaching values not shown before).  ``live`` is the view's :class:`dpbook_book.widgets.Redraw` to
    time (one per view, as a chapter's widget; else a new one, closed after).
    """
    own = live is None and render == "live"
    if own:
        live = widgets.Redraw(view)
    samples = {k: [] for k in ("cpu", "wall", "fn", "base_cpu", "base_wall")}
    try:
        redraw(view, kwargs, render, live)
        for _ in range(runs):
            c0, w0 = time.process_time(), time.perf_counter()
            baseline()
            samples["base_cpu"].append(time.process_time() - c0)
            samples["base_wall"].append(time.perf_counter() - w0)
            if live is not None and start is not None:
                live.png(**start)
            if cold:
                forget_caches(view)
                if live is not None:
                    live.kept.forget_layers()
            c0, w0 = time.process_time(), time.perf_counter()
            samples["fn"].append(redraw(view, kwargs, render, live))
            samples["cpu"].append(time.process_time() - c0)
            samples["wall"].append(time.perf_counter() - w0)
    finally:
        if own:
            live.close()
    return samples


def summary(samples):
    """A case's row: medians of its samples (ms), and its ratio, the median of each redraw's ratio to
    the baseline timed just before it."""
    med = {k: statistics.median(v) for k, v in samples.items()}
    ratios = [c / b for c, b in zip(samples["cpu"], samples["base_cpu"])]
    return {
        "ms": 1e3 * med["cpu"],
        "wall_ms": 1e3 * med["wall"],
        "draw_fn_ms": 1e3 * med["fn"],
        "baseline_ms": 1e3 * med["base_cpu"],
        "ratio": statistics.median(ratios),
        "runs": len(ratios),
    }


def load_views(modules=()):
    """Every registered view, importing each part's module on its own: ``(views, failures)``.

    A module that cannot be imported is a failure (its views cannot be drawn), not the end of the run.
    """
    import pkgutil
    import traceback

    failures = []
    names = [
        f"{widgets.__name__}.{m.name}" for m in pkgutil.iter_modules(widgets.__path__)
    ]
    for name in [*names, *modules]:
        try:
            importlib.import_module(name)
        except Exception as exc:  # reported, and fails the run
            line = traceback.format_exception_only(type(exc), exc)[-1].strip()
            failures.append(f"import {name}: {line}")
    return dict(widgets.VIEWS), failures


def cases(view):
    defaults = view.defaults
    yield "defaults", dict(defaults)
    for name, spec in view.controls.items():
        value = moved(spec, defaults[name])
        yield f"{name}={value!r}", {**defaults, name: value}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=int, default=3, help="timed runs per case (median)"
    )
    parser.add_argument(
        "--retime",
        type=int,
        default=None,
        help="timed runs added to a case that looks over budget (default 2 x --runs; 0: none)",
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
        help="forget the view module's caches and (live) the kept figure's rendered axis layers "
        "before each timed redraw (a reader reaching values not shown before)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    retime = 2 * args.runs if args.retime is None else args.retime

    use_style()
    views, failed = load_views(args.modules)
    if args.view:
        unknown = [v for v in args.view if v not in views]
        failed += [f"{v}: no such view" for v in unknown]
        views = {k: v for k, v in views.items() if k in args.view}
    if not views:
        for line in failed:
            print(f"ERROR {line}")
        print(
            "no views registered in dpbook_book.widgets (or none of --view): nothing measured, the benchmark fails"
        )
        return 2

    rows = []
    for name in sorted(views):
        view = views[name]
        live = widgets.Redraw(view) if args.render == "live" else None
        every = list(cases(view))
        for j, (case, kwargs) in enumerate(every):
            start = every[1 if j == 0 and len(every) > 1 else 0][
                1
            ]  # the defaults, or for them the first move
            try:
                samples = time_case(
                    view, kwargs, args.runs, args.render, start, args.cold, live
                )
                row = {"view": name, "case": case, **summary(samples)}
                if row["ratio"] > args.budget_ratio and retime:
                    # over budget in a short run: time it again, longer, and judge all its runs
                    more = time_case(
                        view, kwargs, retime, args.render, start, args.cold, live
                    )
                    for key, values in more.items():
                        samples[key] += values
                    row = {
                        "view": name,
                        "case": case,
                        **summary(samples),
                        "retimed": True,
                    }
            except Exception as exc:  # a broken view is reported, and fails the run
                failed.append(f"{name} [{case}]: {type(exc).__name__}: {exc}")
                plt.close("all")
                continue
            rows.append(row)
        if live is not None:
            live.close()

    for line in failed:
        print(f"ERROR {line}")
    if not rows:
        return 2
    width = max(len(r["view"]) + len(r["case"]) for r in rows) + 3
    base_ms = statistics.median(r["baseline_ms"] for r in rows)
    print(
        f"baseline redraw (a fixed simple figure, fresh, to PNG; timed just before each timed redraw, each "
        f"ratio is the median of the redraws' ratios to their baselines): median {base_ms:.1f} ms CPU"
    )
    print(
        f"{'view [control moved]':<{width}} {'CPU':>9} {'wall':>9} {'(in draw)':>10} {'ratio':>6}"
    )
    for r in rows:
        flag = "  OVER BUDGET" if r["ratio"] > args.budget_ratio else ""
        again = f"  (re-timed, {r['runs']} runs)" if r.get("retimed") else ""
        print(
            f"{r['view'] + ' [' + r['case'] + ']':<{width}} {r['ms']:6.1f} ms {r['wall_ms']:6.1f} ms"
            f" {r['draw_fn_ms']:7.1f} ms {r['ratio']:6.2f}{flag}{again}"
        )
    slowest = max(rows, key=lambda r: r["ratio"])
    over = sorted({r["view"] for r in rows if r["ratio"] > args.budget_ratio})
    mode = args.render + (", cold" if args.cold else "")
    print(
        f"\n{len(views)} views, {len(rows)} redraws ({mode}), median of {args.runs} runs each "
        f"({retime} more where over budget); slowest: {slowest['view']} [{slowest['case']}] "
        f"{slowest['ms']:.1f} ms CPU = {slowest['ratio']:.2f} x baseline (budget "
        f"{args.budget_ratio:g} x); over budget: {', '.join(over) or 'none'}"
        + (f"; cannot be drawn: {len(failed)}" if failed else "")
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "budget_ratio": args.budget_ratio,
                    "runs": args.runs,
                    "render": mode,
                    "baseline_ms": base_ms,
                    "redraws": rows,
                    "errors": failed,
                },
                fh,
                indent=1,
            )
    if failed:
        return 2
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
