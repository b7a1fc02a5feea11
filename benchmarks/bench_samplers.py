"""Throughput of every dpbook sampler against numpy's own ``Generator.laplace``.

Run ``python benchmarks/bench_samplers.py [--draws N] [--repeats R]``.  For each sampler it times
``N`` draws (best of ``R``), prints samples per second and the ratio to numpy's raw Laplace sampler
of the same size timed in the same process (best of both timings at the start and at the end, so
the reference is the fastest it ever was).  A range-adherent sampler below 0.8x is flagged and the
exit status is 1.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

import dpbook

THRESHOLD = 0.8


def best_time(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def candidates():
    """(label, factory, q); optional families are included only when dpbook has them."""
    cases = [
        ("Laplace", lambda: dpbook.Laplace(1.0), 0.3),
        ("BIT [0, 1]", lambda: dpbook.BIT(1.0, 0.0, 1.0), 0.3),
        ("BIT [0, inf)", lambda: dpbook.BIT(1.0), 0.3),
        ("Truncated [0, 1]", lambda: dpbook.Truncated(1.0, 0.0, 1.0), 0.3),
        ("Truncated [0, inf)", lambda: dpbook.Truncated(1.0), 0.3),
        ("Truncated [0, 1], q 50 b outside", lambda: dpbook.Truncated(1.0, 0.0, 1.0), -50.0),
        ("Truncated [0, inf), q 5000 b outside", lambda: dpbook.Truncated(1.0), -5000.0),
    ]
    optional = {
        "TranslatedRamp": ([{"scale": 1.0, "shift": 0.3517}], 0.3),
        "LogLaplace": ([{"scale": 0.3}], 2.0),
        "CroftLaplace": ([{"scale": 1.0}, {"scale": 1.0, "lower": 0.0}, {"epsilon": 1.0, "sensitivity": 1.0}], 0.3),
        "Normalized": ([{"scale": 1.0}, {"scale": 1.0, "lower": 0.0, "upper": 1.0}, {"scale": 1.0, "lower": 0.0}], 0.3),
    }
    for name, (kwargs_options, q) in optional.items():
        if not hasattr(dpbook, name):
            print(f"  ({name}: not in dpbook yet, skipped)")
            continue
        for kwargs in kwargs_options:
            try:
                getattr(dpbook, name)(**kwargs).sample(q, size=10, rng=np.random.default_rng(0))
            except (TypeError, ValueError):
                continue
            cases.append((f"{name}({', '.join(f'{k}={v}' for k, v in kwargs.items())})",
                          lambda name=name, kwargs=kwargs: getattr(dpbook, name)(**kwargs), q))
            break
        else:
            print(f"  ({name}: no known constructor worked, skipped)")
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    n, r = args.draws, args.repeats
    rng = np.random.default_rng(12345)

    cases = candidates()
    reference = best_time(lambda: rng.laplace(0.3, 1.0, size=n), r)
    timings = []
    for label, factory, q in cases:
        mech = factory()
        mech.sample(q, size=1000, rng=rng)
        timings.append((label, best_time(lambda: mech.sample(q, size=n, rng=rng), r)))
    reference = min(reference, best_time(lambda: rng.laplace(0.3, 1.0, size=n), r))

    print(f"{n:.0e} draws, best of {r}; numpy Generator.laplace: {n / reference / 1e6:8.1f} M samples/s")
    print(f"{'sampler':44s} {'M samples/s':>12s} {'x numpy':>8s}")
    failed = []
    for label, seconds in timings:
        ratio = reference / seconds
        flag = ""
        if label != "Laplace" and ratio < THRESHOLD:
            flag = f"  < {THRESHOLD}x"
            failed.append(label)
        print(f"{label:44s} {n / seconds / 1e6:12.1f} {ratio:8.2f}{flag}")
    if failed:
        print(f"below {THRESHOLD}x numpy: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
