"""Throughput of every dpbook family's sampler against numpy's own ``Generator.laplace``, from the family registry.

Run ``python benchmarks/bench_samplers.py [--draws N] [--repeats R] [--family NAME ...]``.  The cases are
the typical cases of every row of the family registry (``tests/registry.py``, the table that drives the
generic tests), each at its first true value: a family is benchmarked as soon as it has a row.  For each
case the script times ``N`` draws and numpy's raw Laplace sampler of the same size in the same process,
alternating the two ``R`` times, and prints samples per second and the ratio of the best times (the
baseline measured next to each sampler keeps the ratio fair when the load of the machine changes).  A
row whose sampler inverts its law numerically (``sampler_fast=False``: 10^6 Student t draws take minutes)
is timed on ``N/100`` draws, against the baseline at the same size.

The bound: every range-adherent continuous sampler must reach 0.8x numpy.  A row is outside the bound
only for a reason that is a trait of the row, printed next to it: the Laplace mechanism (numpy's
sampler behind dpbook's validation: the reference itself), integer-valued families (exact integer
noise; ``benchmarks/bench_discrete.py`` compares them with OpenDP), a general post-processing
``φ(q + L_b)`` (the cost of ``φ``), and a sampler that inverts its law numerically (scipy's generic
``ppf``).  The exit status is 2 when a case cannot be built or sampled (the error is printed: nothing
is skipped, and ``.ci/run`` fails), else 1 when a bounded sampler is below the bound (reported by
``.ci/run``; the speed itself is issue 26's), else 0.
The machine may be shared: compare ratios, and repeat runs before trusting a single one.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import registry  # noqa: E402  (tests/registry.py: the family registry)

import dpbook  # noqa: E402

THRESHOLD = 0.8


def best_time(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def excluded(row):
    """Why a row is outside the 0.8x bound (``None``: it is bounded), read from its traits."""
    if row.family is dpbook.Laplace:
        return "the reference: numpy's sampler itself plus validation"
    if row.integer_valued:
        return "integer-valued (bench_discrete.py times exact integer noise against OpenDP)"
    if not row.has_density:
        return "a general post-processing φ(q + L_b): the cost of φ"
    if not row.sampler_fast:
        return "inverts its law numerically (scipy's generic ppf)"
    return None


def cases(names=()):
    """``(label, row, case)`` for the typical cases of every registry row (or of the rows named)."""
    out = []
    for row in registry.ROWS:
        if names and row.name not in names:
            continue
        for case in row.typical:
            out.append((f"{row.name} {case.id}", row, case))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        help="only this registry row (repeatable)",
    )
    args = parser.parse_args(argv)
    n, r = args.draws, args.repeats
    rng = np.random.default_rng(12345)
    chosen = cases(args.family)
    unknown = set(args.family) - {row.name for _, row, _ in chosen}
    if unknown or not chosen:
        print(
            f"no registry row named {sorted(unknown) or args.family}; rows: {[row.name for row in registry.ROWS]}"
        )
        return 1

    print(
        f"{n:.0e} draws (numerical samplers: {max(n // 100, 1000):.0e}), best of {r}, each against numpy's "
        "Generator.laplace of the same size timed in turn with it"
    )
    print(f"{'registry row and case':46s} {'M samples/s':>12s} {'x numpy':>8s}")
    timings, errors, failed = [], [], []
    for label, row, case in chosen:
        q = case.qs[0]
        size = n if row.sampler_fast else max(n // 100, 1000)
        try:
            mech = case.build()
            check = np.asarray(mech.sample(q, size=1000, rng=np.random.default_rng(0)))
            if check.shape != (1000,) or not np.isfinite(check.astype(float)).all():
                raise ValueError(
                    f"sample(q={q!r}, size=1000) gave shape {check.shape} or a non-finite draw"
                )
        except Exception as error:  # a case that cannot run fails the benchmark
            errors.append(f"{label}: {type(error).__name__}: {error}")
            continue

        def draw():
            return mech.sample(q, size=size, rng=rng)

        def laplace():
            return rng.laplace(0.3, 1.0, size=size)

        reference = seconds = math.inf
        for _ in range(r):
            reference = min(reference, best_time(laplace, 1))
            seconds = min(seconds, best_time(draw, 1))
        reason = excluded(row)
        timings.append((label, reference, seconds, reason))
        ratio = reference / seconds
        if reason:
            note = f"  (not bounded: {reason})"
        elif ratio < THRESHOLD:
            note = f"  < {THRESHOLD}x"
            failed.append(label)
        else:
            note = ""
        print(
            f"{label:46s} {size / seconds / 1e6:12.2f} {ratio:8.3f}{note}", flush=True
        )
    for line in errors:
        print(f"ERROR (could not run): {line}")
    if failed:
        print(f"below {THRESHOLD}x numpy: {', '.join(failed)}")
    if errors:
        print(f"{len(errors)} case(s) could not run: the benchmark fails")
    if not failed and not errors:
        print(
            f"every bounded sampler is at or above {THRESHOLD}x numpy ({len(timings)} cases, none skipped)"
        )
    return 2 if errors else 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
