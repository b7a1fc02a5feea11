"""Time Croft, Sack & Shi's uniform scale: the paper's search (Theorem 3) against dpbook's fast method.

Run: ``python benchmarks/bench_croft.py``.  For n = 10, 100, 1000 random disjoint finite constraints
(the feasible set is two half-lines with n - 1 pieces between them; gap and piece lengths spread over
two orders of magnitude around Δ/ε), prints the time of ``croft_uniform_scale(method="paper")``
(bisection, O(n^2) per step) and of ``method="fast"`` (running log-sums and a root finder,
O(n) per step), their ratio and their relative disagreement.
"""

from __future__ import annotations

import time

import numpy as np

import dpbook


def random_allowed(rng, n):
    cuts = np.cumsum(
        rng.exponential(1.0, size=2 * n) * 10 ** rng.uniform(-1.5, 0.7, size=2 * n)
    )
    return list(zip(np.r_[-np.inf, cuts[1::2]], np.r_[cuts[0::2], np.inf]))


def best_time(fn, repeat):
    best, value = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main():
    rng = np.random.default_rng(2024)
    epsilon, sensitivity = 1.0, 1.0
    print(
        f"{'n':>6} {'paper [s]':>11} {'fast [s]':>11} {'speed-up':>10} {'rel. diff':>10}  sigma*eps/Delta"
    )
    for n in (10, 100, 1000):
        allowed = random_allowed(rng, n)
        fast_t, fast = best_time(
            lambda: dpbook.croft_uniform_scale(epsilon, sensitivity, allowed), 5
        )
        paper_t, paper = best_time(
            lambda: dpbook.croft_uniform_scale(
                epsilon, sensitivity, allowed, method="paper"
            ),
            3 if n < 1000 else 1,
        )
        print(
            f"{n:>6} {paper_t:>11.4g} {fast_t:>11.4g} {paper_t / fast_t:>10.0f} {abs(paper - fast) / fast:>10.1e}  {fast:.12f}"  # noqa: E501
        )


if __name__ == "__main__":
    main()
