"""Throughput of every dpbook family's sampler against numpy's own ``Generator.laplace``, from the family registry.

Run ``python benchmarks/bench_samplers.py [--draws N] [--repeats R] [--family NAME ...] [--typical]``.  The cases are
every case of every row of the family registry (``tests/registry.py``, the table that drives the generic tests),
typical and extreme (``--typical``: the typical ones only), each at its first true value: a family is benchmarked as
soon as it has a row.  Two rows are added here: ``restricted-scipy``, :class:`dpbook.Restricted` with each scipy base
of its generic strips (``registry.STRIP_BASES``) and three of them at the extremes, and ``restricted-other``, a base
outside them (reported, not bounded; only when named).  Every case is timed on ``N`` draws (the registry's
``sampler_fast`` sizes the goodness-of-fit tests, not this bound: a slow sampler is what the bound is for).

**The measurement.**  For each case the script times ``N`` draws of the family and ``N`` draws of numpy's raw
Laplace sampler in ``R`` interleaved pairs, after one untimed call of each: the two calls of a pair run back to
back, in the order numpy-family in one pair and family-numpy in the next (so that neither always runs on the
cache or the core the other left), and each pair gives one ratio, numpy's time over the family's.  The case's
ratio is the median of its ``R`` pair ratios, printed with their spread (the smallest and the largest): a pair
measured while another process held the core moves one ratio, not the median, and a wide spread says that the
machine was busy.  Times are the process's CPU time (``time.process_time``; every sampler and the baseline run
in one thread): the wall clock also counts the time the process waits for a core.

The bound (issue 26): every range-adherent continuous sampler at least at numpy's pace, a median ratio of 1.0,
at typical and extreme parameters.  A row is outside the bound only for a reason that is a trait of the row,
printed next to it: the Laplace mechanism (numpy's sampler behind dpbook's validation: the reference itself;
likewise the Gaussian mechanism and numpy's normal sampler),
integer-valued families (exact integer noise; ``benchmarks/bench_discrete.py`` compares them with OpenDP) and
a general post-processing ``φ(q + L_b)`` (the cost of ``φ``).  The exit status is 2 when a case cannot be
built or sampled, or its check draws are not finite, not of the asked shape, or raise a warning (the error
is printed: nothing is skipped), or a ``--family`` names no registry row; else 1 when a bounded sampler's
median ratio is below the bound; else 0.  A row whose noise is Gaussian (the registry's ``noise``) is also
timed against numpy's normal sampler the same way, its ratio printed after the row (issue 20's bar: at least
numpy's normal pace; reported, not part of the exit status).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import statistics
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import registry  # noqa: E402  (tests/registry.py: the family registry)

import dpbook  # noqa: E402

THRESHOLD = 1.0


def best_time(fn, repeats):
    """The smallest CPU time of ``repeats`` calls of ``fn``."""
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def paired_times(reference, candidate, pairs):
    """``pairs`` pairs ``(time(reference), time(candidate))``, the two calls of a pair back to back and their
    order alternating from pair to pair, after one untimed call of each."""
    reference()
    candidate()
    out = []
    for i in range(pairs):
        if i % 2:
            mine = best_time(candidate, 1)
            out.append((best_time(reference, 1), mine))
        else:
            theirs = best_time(reference, 1)
            out.append((theirs, best_time(candidate, 1)))
    return out


def excluded(row):
    """Why a row is outside the bound (``None``: it is bounded), read from its traits."""
    if row.family is dpbook.Laplace:
        return "the reference: numpy's sampler itself plus validation"
    if row.family is dpbook.Gaussian:
        return "numpy's normal sampler itself plus validation"
    if row.integer_valued:
        return "integer-valued (bench_discrete.py times exact integer noise against OpenDP)"
    if not row.has_density:
        return "a general post-processing φ(q + L_b): the cost of φ"
    if row is RESTRICTED_OTHER:
        return "a base the strips do not take (its density has a pole at 0): scipy's own quantile function"
    return None


def _rescaled(base, kw):
    """The frozen scipy law ``base`` with the keywords ``kw`` (``scale``) replacing or joining its own."""
    return base.dist(*base.args, **{**base.kwds, **kw})


#: :class:`dpbook.Restricted` with the scipy bases beyond the registry's (issue 26: "any scipy base"): every base of
#: its generic strips (``registry.STRIP_BASES``) at a cut near its mode, three of them at the extremes (a cut 8
#: scales right, a scale of 1e-300, one of 1e300); and, outside the bound, a base the strips do not take (a pole at
#: 0), which keeps scipy's quantiles
RESTRICTED_SCIPY = registry.Row(
    "restricted-scipy",
    dpbook.Restricted,
    typical=tuple(
        registry.Case(name, lambda make=make: dpbook.Restricted(make()), (0.5,))
        for name, make in registry.STRIP_BASES.items()
    ),
    extreme=tuple(
        registry.Case(
            f"{name} {label}",
            lambda name=name, kw=kw: dpbook.Restricted(
                _rescaled(registry.STRIP_BASES[name](), kw)
            ),
            (q,),
        )
        for name, label, kw, q in (
            ("gumbel_r", "cut=8", {}, -8.0),
            ("t", "scale=1e-300", {"scale": 1e-300}, 5e-301),
            ("skewnorm", "scale=1e300", {"scale": 1e300}, -3e300),
        )
    ),
    closed_form=False,
    audit="unsupported",
)
RESTRICTED_OTHER = registry.Row(
    "restricted-other",
    dpbook.Restricted,
    typical=(
        registry.Case(
            "dgamma(0.8)", lambda: dpbook.Restricted(stats.dgamma(0.8)), (0.5,)
        ),
    ),
    closed_form=False,
    audit="unsupported",
)


def cases(names=(), typical_only=False):
    """``(label, row, case)`` for every case, typical and extreme, of every registry row (or of the rows named), and
    of the ``restricted-scipy`` row above; ``restricted-other`` when named (its million draws through scipy's
    quantile take 20 s: it is outside the bound, and CI does not spend them)."""
    out = []
    for row in registry.ROWS + (RESTRICTED_SCIPY, RESTRICTED_OTHER):
        if (names and row.name not in names) or (not names and row is RESTRICTED_OTHER):
            continue
        for case in row.typical if typical_only else row.cases():
            out.append((f"{row.name} {case.id}", row, case))
    return out


def checked(mech, q):
    """Build-time check of a case: 1000 draws of the right shape, finite, and no warning on the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draws = np.asarray(mech.sample(q, size=1000, rng=np.random.default_rng(0)))
    if draws.shape != (1000,) or not np.isfinite(draws.astype(float)).all():
        raise ValueError(
            f"sample(q={q!r}, size=1000) gave shape {draws.shape} or a non-finite draw"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6)
    parser.add_argument(
        "--repeats", type=int, default=7, help="interleaved timing pairs per case"
    )
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        help="only this registry row (repeatable)",
    )
    parser.add_argument("--typical", action="store_true", help="the typical cases only")
    args = parser.parse_args(argv)
    n, r = args.draws, args.repeats
    if r < 1:
        parser.error(f"--repeats must be at least 1, got {r}")  # (exit status 2)
    rng = np.random.default_rng(12345)
    chosen = cases(args.family, args.typical)
    unknown = set(args.family) - {row.name for _, row, _ in chosen}
    if unknown or not chosen:
        parser.error(
            f"no registry row named {sorted(unknown) or args.family}; rows: {[row.name for row in registry.ROWS]}"
        )  # (exit status 2)

    print(
        f"{n:.0e} draws; median of {r} interleaved pairs (family, numpy's Generator.laplace of the same size), "
        "with the pairs' smallest and largest ratio"
    )
    print(
        f"{'registry row and case':46s} {'M samples/s':>12s} {'x numpy':>8s} {'spread':>13s}"
    )
    timings, errors, failed = [], [], []
    for label, row, case in chosen:
        q = case.qs[0]
        try:
            mech = case.build()
            checked(mech, q)
        except Exception as error:  # a case that cannot run fails the benchmark
            errors.append(f"{label}: {type(error).__name__}: {error}")
            continue

        def timed(reference):
            """The pairs' ratios (the reference's time over the family's) and the family's median time."""
            times = paired_times(reference, lambda: mech.sample(q, size=n, rng=rng), r)
            ratios = [theirs / max(mine, 1e-9) for theirs, mine in times]
            return ratios, statistics.median(mine for _, mine in times)

        try:
            ratios, seconds = timed(lambda: rng.laplace(0.3, 1.0, size=n))
            normal = ""
            if (
                row.noise == "gauss"
            ):  # Gaussian noise: also against numpy's normal (issue 20)
                against = statistics.median(
                    timed(lambda: rng.normal(0.3, 1.0, size=n))[0]
                )
                normal = f"  ({against:.3f}x numpy's normal)"
        except Exception as error:
            errors.append(f"{label}: {type(error).__name__}: {error}")
            continue
        ratio = statistics.median(ratios)
        reason = excluded(row)
        timings.append((label, ratio, reason))
        if reason:
            note = f"  (not bounded: {reason})"
        elif ratio < THRESHOLD:
            note = f"  < {THRESHOLD}x"
            failed.append(label)
        else:
            note = ""
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
        print(
            f"{label:46s} {n / seconds / 1e6:12.2f} {ratio:8.3f} {spread:>13s}{note}{normal}",
            flush=True,
        )
    print("\nsmallest median ratio per registry row:")
    for name in dict.fromkeys(row.name for _, row, _ in chosen):
        mine = [t for t in timings if t[0].split(" ", 1)[0] == name]
        if mine:
            label, ratio, reason = min(mine, key=lambda t: t[1])
            note = f"  (not bounded: {reason})" if reason else ""
            print(f"  {name:24s} {ratio:8.3f}  at {label.split(' ', 1)[1]}{note}")
    for line in errors:
        print(f"ERROR (could not run): {line}")
    if failed:
        print(f"below {THRESHOLD}x numpy (median): {', '.join(failed)}")
    if errors:
        print(f"{len(errors)} case(s) could not run: the benchmark fails")
    if not failed and not errors:
        print(
            f"every bounded sampler is at or above {THRESHOLD}x numpy ({len(timings)} cases, none skipped)"
        )
    return 2 if errors else 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
