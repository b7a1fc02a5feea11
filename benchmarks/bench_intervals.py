"""Time exact confidence intervals for every family of the registry: 1e5 releases at once, against 1e5 cdf
evaluations in the same run.

Run: ``python benchmarks/bench_intervals.py [--n 100000] [--repeat 3] [--family NAME ...]``.  The cases are
the first typical case of every row of the family registry (``tests/registry.py``) whose family is
stochastically increasing (``stochastic_order()``: what makes the exact confidence set an interval), at its
first true value in the domain.  For each: draw ``n`` releases (seeded), then time
``dpbook.confidence_interval(mech, x, 0.95)`` (vectorized over the ``n`` releases; the non-randomized
interval, and the randomized one) and ``mech.cdf(x, q)`` on the same releases, the baseline measured in the
same process.  Prints intervals per second and the cost of one interval in cdf evaluations (the ratio of
the two times), for the closed-form path (a family's ``_quantile_in_q`` root polished on the law: a few
evaluations per end) and, in the same process, for the search it replaces (``search/cdf``: the bisection
over the doubles, up to 64 halvings per end, or the galloping search over the integers; ``speed-up``:
the ratio of the two).  A row outside (no stochastic order, or no true value in its domain) is listed with its
reason; a case that raises fails the run (exit status 1).
"""

from __future__ import annotations

import argparse
import sys

from bench_samplers import (
    best_time,
    registry,
)  # this folder is on sys.path when a benchmark runs as a script

import dpbook
from dpbook.inference import intervals


def cases(names=()):
    """``(row, case, q)`` to time, and ``(row, reason)`` for the rows left out by a trait."""
    chosen, outside = [], []
    for row in registry.ROWS:
        if names and row.name not in names:
            continue
        case = row.typical[0]
        try:
            mech = case.build()
            increasing, why = mech.stochastic_order()
        except (
            Exception
        ) as error:  # a row that cannot even be built fails the run below
            chosen.append((row, case, error))
            continue
        if not increasing:
            outside.append((row, f"not stochastically increasing ({why})"))
            continue
        lo, hi = mech.domain
        inside = [q for q in case.qs if lo <= q <= hi]
        if not inside:
            outside.append(
                (row, f"no true value of its first case in its domain {mech.domain}")
            )
            continue
        chosen.append((row, case, inside[0]))
    return chosen, outside


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        help="only this registry row (repeatable)",
    )
    args = parser.parse_args(argv)
    n = args.n
    chosen, outside = cases(args.family)
    print(f"n = {n} releases per call, best of {args.repeat}")
    print(
        f"{'registry row and case':>34} {'cdf [s]':>9} {'CI [s]':>9} {'CI/s':>10} {'CI/cdf':>8}"
        f" {'search/cdf':>11} {'speed-up':>9} {'rand. CI [s]':>13} {'rand./cdf':>10}"
    )
    errors = []
    for row, case, q in chosen:
        label = f"{row.name} {case.id}"
        if isinstance(q, Exception):
            errors.append(f"{label}: {type(q).__name__}: {q}")
            continue
        try:
            mech = case.build()
            x = mech.sample(q, n, rng=2026)
            t_cdf = best_time(lambda: mech.cdf(x, q), args.repeat)
            t_ci = best_time(
                lambda: dpbook.confidence_interval(mech, x, 0.95), args.repeat
            )
            t_rand = best_time(
                lambda: dpbook.confidence_interval(
                    mech, x, 0.95, randomize=True, rng=1
                ),
                args.repeat,
            )
            search = (
                intervals._neyman_integer if mech.integer_valued else intervals._neyman
            )
            t_bisect = best_time(
                lambda: search(mech, x, 0.95, None, closed_form=False), args.repeat
            )
        except Exception as error:  # a case that cannot run fails the benchmark
            errors.append(f"{label}: {type(error).__name__}: {error}")
            continue
        print(
            f"{label:>34} {t_cdf:>9.4f} {t_ci:>9.3f} {n / t_ci:>10.3g} {t_ci / t_cdf:>8.1f}"
            f" {t_bisect / t_cdf:>11.1f} {t_bisect / t_ci:>9.1f} {t_rand:>13.3f}"
            f" {t_rand / t_cdf:>10.1f}"
        )
    for row, reason in outside:
        print(f"{row.name:>34}  (not timed: {reason})")
    for line in errors:
        print(f"ERROR (could not run): {line}")
    if errors:
        print(f"{len(errors)} case(s) could not run: the benchmark fails")
    return 1 if errors or not chosen else 0


if __name__ == "__main__":
    sys.exit(main())
