"""Throughput of every dpbook sampler against numpy's own ``Generator.laplace``.

Run ``python benchmarks/bench_samplers.py [--draws N] [--repeats R]``.  For each sampler it times
``N`` draws and numpy's raw Laplace sampler of the same size in the same process, alternating the two
``R`` times, and prints samples per second and the ratio of the best times.  Timing the reference
next to each sampler keeps the ratio fair when the load of the machine changes during the run.

The bound: every range-adherent dpbook sampler (BIT, Truncated, TranslatedRamp, LogLaplace,
Normalized, CroftLaplace, Restricted with a Laplace or normal base) must reach 0.8x numpy; one below
it is flagged and the exit status is 1.  Two rows are reported but excluded from the bound, with the
reason printed next to them: ``Laplace`` (numpy's own sampler behind dpbook's validation, the
reference itself) and ``Restricted`` with another base law (its inverse cdf goes through scipy's
generic ``ppf``).
The machine may be shared: compare ratios, and repeat runs before trusting a single one.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import stats

import dpbook

THRESHOLD = 0.8

#: a union of four pieces (two half-lines, two bounded pieces) around q = 0.3
FOUR_PIECES = [(-np.inf, -2.0), (0.0, 1.0), (2.0, 3.0), (5.0, np.inf)]

REFERENCE = "the plain Laplace mechanism: numpy's sampler itself plus validation"
TEACHING = "any other base law: inverse cdf through scipy's generic ppf"


def best_time(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def candidates():
    """``(label, family, args, kwargs, q, excluded)``: ``excluded`` is ``None`` for a bounded sampler,
    else the reason it is outside the bound."""
    return [
        ("Laplace", "Laplace", (1.0,), {}, 0.3, REFERENCE),
        ("BIT [0, 1]", "BIT", (1.0, 0.0, 1.0), {}, 0.3, None),
        ("BIT [0, inf)", "BIT", (1.0,), {}, 0.3, None),
        ("Truncated [0, 1]", "Truncated", (1.0, 0.0, 1.0), {}, 0.3, None),
        ("Truncated [0, inf)", "Truncated", (1.0,), {}, 0.3, None),
        ("Truncated [0, 1], q 50 b outside", "Truncated", (1.0, 0.0, 1.0), {}, -50.0, None),
        ("Truncated [0, inf), q 5000 b outside", "Truncated", (1.0,), {}, -5000.0, None),
        ("TranslatedRamp(scale=1.0, shift=0.3517)", "TranslatedRamp", (), {"scale": 1.0, "shift": 0.3517}, 0.3, None),
        ("LogLaplace(scale=0.3)", "LogLaplace", (), {"scale": 0.3}, 2.0, None),
        ("CroftLaplace(epsilon=1.0, sensitivity=1.0)", "CroftLaplace", (), {"epsilon": 1.0, "sensitivity": 1.0}, 0.3, None),
        ("Normalized [0, 1] (1 piece)", "Normalized", (1.0, [(0.0, 1.0)]), {}, 0.3, None),
        ("Normalized, 4 pieces", "Normalized", (1.0, FOUR_PIECES), {}, 0.3, None),
        ("Restricted(laplace(scale=1.0))", "Restricted", (stats.laplace(scale=1.0),), {}, 0.3, None),
        ("Restricted(norm)", "Restricted", (stats.norm,), {}, 0.3, None),
        ("Restricted(logistic)", "Restricted", (stats.logistic,), {}, 0.3, TEACHING),
    ]


def build(cases):
    """Instantiate the cases whose family exists and accepts the arguments; report the others."""
    built = []
    for label, family, args, kwargs, q, excluded in cases:
        if not hasattr(dpbook, family):
            print(f"  ({label}: {family} not in dpbook yet, skipped)")
            continue
        try:
            mech = getattr(dpbook, family)(*args, **kwargs)
            mech.sample(q, size=1000, rng=np.random.default_rng(0))
        except (TypeError, ValueError) as error:
            print(f"  ({label}: constructor failed, skipped: {error})")
            continue
        built.append((label, mech, q, excluded))
    return built


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    n, r = args.draws, args.repeats
    rng = np.random.default_rng(12345)

    cases = build(candidates())
    laplace = lambda: rng.laplace(0.3, 1.0, size=n)
    timings = []
    for label, mech, q, excluded in cases:
        draw = lambda: mech.sample(q, size=n, rng=rng)
        own_reference = seconds = math.inf
        for _ in range(r):
            own_reference = min(own_reference, best_time(laplace, 1))
            seconds = min(seconds, best_time(draw, 1))
        timings.append((label, own_reference, seconds, excluded))
    reference = min(t[1] for t in timings)

    print(f"{n:.0e} draws, best of {r}; numpy Generator.laplace: {n / reference / 1e6:8.1f} M samples/s at best")
    print(f"{'sampler':44s} {'M samples/s':>12s} {'x numpy':>8s}")
    failed = []
    for label, own_reference, seconds, excluded in timings:
        ratio = own_reference / seconds
        if excluded:
            note = f"  (not bounded: {excluded})"
        elif ratio < THRESHOLD:
            note = f"  < {THRESHOLD}x"
            failed.append(label)
        else:
            note = ""
        print(f"{label:44s} {n / seconds / 1e6:12.1f} {ratio:8.2f}{note}")
    if failed:
        print(f"below {THRESHOLD}x numpy: {', '.join(failed)}")
    else:
        print(f"every bounded sampler is at or above {THRESHOLD}x numpy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
