"""Benchmark the privacy auditor on a normalized law with many pieces (issue 15, item 5).

Audits ``Normalized(b, allowed)`` with 1,000 pieces (a certified branch and bound along the edge
``(u, u ± Δ)``) and reports wall time and peak memory (``tracemalloc``), with the audit of
``Truncated`` (a closed form at the corners) measured in the same process as a baseline.  The target:
under 2 s and bounded memory.  Not a timed test: run ``python benchmarks/bench_audit.py``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import dpbook


def measure(fn, repeat=3):
    """(best wall time in s, peak traced memory in MiB, result) of ``fn()``."""
    best, peak, out = np.inf, 0.0, None
    for _ in range(repeat):
        tracemalloc.start()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        peak = max(peak, tracemalloc.get_traced_memory()[1] / 2**20)
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
    base_t, base_mem, base = measure(lambda: dpbook.privacy_report(dpbook.Truncated(1.0), 1.0), repeat)
    mech = dpbook.Normalized(1.0, allowed)
    t, mem, report = measure(lambda: dpbook.privacy_report(mech, 1.0), repeat)
    print(f"Truncated (baseline):      {base_t * 1e3:8.2f} ms, peak {base_mem:7.2f} MiB, eps = {base.epsilon:.12f}")
    print(f"Normalized, {n} pieces: {t * 1e3:8.2f} ms, peak {mem:7.2f} MiB, eps = {report.epsilon:.12f} "
          f"(exact={report.exact}, pair {report.q1:.6g} -> {report.q2:.6g})")
    print(f"ratio to baseline: {t / base_t:.0f}x time; target < 2 s: {'met' if t < 2 else 'NOT met'}")
    return t, mem


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pieces", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    main(args.pieces, args.repeat)
