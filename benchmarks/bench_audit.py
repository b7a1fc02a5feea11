"""Benchmark the privacy auditor on a normalized law with many pieces (issue 15, item 5).

Audits ``Normalized(b, allowed)`` with 1,000 pieces (a certified branch and bound along the edge
``(u, u ± Δ)``, and the same with a window cutting the outputs, which adds the kinks' pairs), a window over
200 pieces (41 s before the search was rewritten), and Croft's variable scale with a window (the certified
search over the band), and reports wall time and peak memory (``tracemalloc``), with the audit of
``Truncated`` (a closed form at the corners) measured in the same process as a baseline.  The target:
under 2 s and bounded memory for 1,000 pieces.  Not a timed test: run ``python benchmarks/bench_audit.py``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import dpbook


def measure(fn, repeat=3):
    """(best wall time in s over ``repeat`` untraced runs, peak traced memory in MiB of one more run, result)."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak, out


def pieces(n, rng):
    """``n`` disjoint pieces of random widths and gaps (in units of the scale)."""
    widths = rng.uniform(0.2, 3.0, n)
    gaps = rng.uniform(0.2, 3.0, n)
    starts = np.cumsum(np.r_[0.0, widths[:-1] + gaps[:-1]])
    return [(float(a), float(a + w)) for a, w in zip(starts, widths)]


def main(n=1000, repeat=3, seed=0):
    rng = np.random.default_rng(seed)
    allowed = pieces(n, rng)
    base_t, base_mem, base = measure(
        lambda: dpbook.privacy_report(dpbook.Truncated(1.0), 1.0), repeat
    )
    print(
        f"Truncated (baseline):        {base_t * 1e3:8.2f} ms, peak {base_mem:7.2f} MiB, eps = {base.epsilon:.12f}"
    )
    mech = dpbook.Normalized(1.0, allowed)
    few = dpbook.Normalized(1.0, pieces(200, rng))
    croft = dpbook.CroftLaplace(1.0, 1.0)
    cases = [
        (f"Normalized, {n} pieces", lambda: dpbook.privacy_report(mech, 1.0)),
        (
            "  with a window",
            lambda: dpbook.privacy_report(mech, 1.0, window=(0.0, allowed[n // 2][1])),
        ),
        (
            "Normalized, 200, window",
            lambda: dpbook.privacy_report(few, 1.0, window=(0.0, 300.0)),
        ),
        (
            "Croft, window [0, 10]",
            lambda: dpbook.privacy_report(
                croft, 1.0, domain=(0.0, 10.0), window=(0.0, 10.0)
            ),
        ),
    ]
    times = {}
    for label, fn in cases:
        t, mem, report = measure(fn, repeat)
        times[label] = t
        print(
            f"{label:28s} {t * 1e3:8.2f} ms, peak {mem:7.2f} MiB, eps = {report.epsilon:.12f} "
            f"(exact={report.exact}, slack {report.slack:.1e}, pair {report.q1:.6g} -> {report.q2:.6g}); "
            f"{t / base_t:.0f}x the baseline"
        )
    t = times[f"Normalized, {n} pieces"]
    print(f"target < 2 s for {n} pieces: {'met' if t < 2 else 'NOT met'}")
    return t


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pieces", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    main(args.pieces, args.repeat)
