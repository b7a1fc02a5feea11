"""Time exact confidence intervals for every family of the registry against the family's own cdf, in the same run.

Run: ``python benchmarks/bench_intervals.py [--n 20000] [--repeat 9] [--family NAME ...]``.  The cases are the
first typical case of every row of the family registry (``tests/registry.py``) whose family is
stochastically increasing (``stochastic_order()``: what makes the exact confidence set an interval), at its
first true value in the domain.  For each: draw ``n`` releases (seeded), then time
``dpbook.confidence_interval(mech, x, 0.95)`` (vectorized over the releases; the non-randomized interval,
and the randomized one) and ``mech.cdf(x, q)`` on the same releases, alternating them ``repeat`` times in
the same process (the baseline measured next to each interval keeps the ratio fair when the load of the
machine changes).  Prints intervals per second and the cost of one interval in cdf evaluations (the ratio
of the best times), and, for a family with a closed form in ``q`` (``_quantile_in_q``), the search it
replaces (``search/cdf``: the bisection over the doubles, up to 64 halvings per end, or the galloping
search over the integers; ``speed-up``: the ratio of the two).  A family without a closed form, whose
interval is that search, is timed once on at most ``--n-search`` releases (to keep the run short; its
ratio then includes the search's per-call overhead, larger at a small ``n``).

The bound (issue 26, point 1): an interval of a family with a closed form costs at most ``LIMIT = 5`` cdf
evaluations, plain and randomized; such a row over it is marked ``OVER``.  A row outside (no stochastic
order, or no true value in its domain) is listed with its reason.  The exit status is 2 when a case cannot
run (the error is printed: nothing is skipped), else 1 when a closed-form row is over the bound, else 0.
The machine may be shared: compare ratios, and repeat runs before trusting a single one.

**The allocator.**  glibc gives every array above 128 kB its own pages and returns freed memory to the
system, so an array computation pays page faults that depend on the allocator's history (on this project's
virtual machine a randomized interval measured 4x to 20x one cdf evaluation in the same run, the same code
1.7x to 3.7x with freed memory kept).  Both timings should count arithmetic, not the kernel's page faults:
the script keeps freed memory in the process (``mallopt``: no trimming, no per-array mapping below 32 MB)
and says so; ``--allocator-as-is`` measures without it.
"""

from __future__ import annotations

import argparse
import ctypes
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


#: the cost of a closed-form interval, in cdf evaluations (issue 26, point 1)
LIMIT = 5.0


def steady_allocator():
    """Keep freed memory in the process (glibc's ``mallopt``: ``M_TRIM_THRESHOLD`` 256 MB,
    ``M_MMAP_THRESHOLD`` 32 MB, its largest); ``False`` where there is no glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-1, 256 << 20)) and bool(libc.mallopt(-3, 32 << 20))
    except (OSError, AttributeError):
        return False


def paired(fns, repeats, warm=True):
    """The best time of each function, called in turn ``repeats`` times (after one untimed round when
    ``warm``)."""
    for fn in fns if warm else ():
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], best_time(fn, 1))
    return best


def closed_form(mech, x):
    """Whether the family inverts its law in ``q`` in closed form (``_quantile_in_q``)."""
    return mech._quantile_in_q(x[:1], 0.025, 1.0, False) is not None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--n-search", type=int, default=2_000)
    # the best of 9 rounds: a row costs milliseconds, and with 5 a loaded minute moved a ratio by up to 1
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--allocator-as-is",
        action="store_true",
        help="do not keep freed memory in the process (see the module docstring)",
    )
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        help="only this registry row (repeatable)",
    )
    args = parser.parse_args(argv)
    chosen, outside = cases(args.family)
    steady = False if args.allocator_as_is else steady_allocator()
    print(f"freed memory kept in the process (mallopt): {'yes' if steady else 'no'}")
    print(
        f"n = {args.n} releases per call ({args.n_search} without a closed form), "
        f"best of {args.repeat}; bound: {LIMIT:g} cdf evaluations per closed-form interval"
    )
    print(
        f"{'registry row and case':>34} {'n':>6} {'cdf [s]':>9} {'CI [s]':>9} {'CI/s':>10}"
        f" {'CI/cdf':>8} {'rand./cdf':>10} {'search/cdf':>11} {'speed-up':>9}"
    )
    errors, over = [], []
    for row, case, q in chosen:
        label = f"{row.name} {case.id}"
        if isinstance(q, Exception):
            errors.append(f"{label}: {type(q).__name__}: {q}")
            continue
        try:
            mech = case.build()
            x = mech.sample(q, args.n, rng=2026)
            closed = closed_form(mech, x)
            if not closed:
                x = x[: args.n_search]
            t_cdf, t_ci, t_rand = paired(
                [
                    lambda: mech.cdf(x, q),
                    lambda: dpbook.confidence_interval(mech, x, 0.95),
                    lambda: dpbook.confidence_interval(
                        mech, x, 0.95, randomize=True, rng=1
                    ),
                ],
                args.repeat if closed else 1,
                warm=closed,
            )
            search = ""
            if closed:
                find = (
                    intervals._neyman_integer
                    if mech.integer_valued
                    else intervals._neyman
                )
                (t_search,) = paired(
                    [lambda: find(mech, x, 0.95, None, closed_form=False)], 1
                )
                search = f" {t_search / t_cdf:>11.1f} {t_search / t_ci:>9.1f}"
        except Exception as error:  # a case that cannot run fails the benchmark
            errors.append(f"{label}: {type(error).__name__}: {error}")
            continue
        ratio, rand = t_ci / t_cdf, t_rand / t_cdf
        flag = ""
        if closed and max(ratio, rand) > LIMIT:
            over.append(label)
            flag = "  OVER"
        print(
            f"{label:>34} {x.size:>6} {t_cdf:>9.4f} {t_ci:>9.4f} {x.size / t_ci:>10.3g}"
            f" {ratio:>8.1f} {rand:>10.1f}{search or f'{chr(32) * 11} {chr(32) * 9}'}{flag}"
        )
    for row, reason in outside:
        print(f"{row.name:>34}  (not timed: {reason})")
    for line in errors:
        print(f"ERROR (could not run): {line}")
    if errors or not chosen:
        print(f"{len(errors)} case(s) could not run: the benchmark fails")
        return 2
    if over:
        print(f"over the bound of {LIMIT:g} cdf evaluations: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
