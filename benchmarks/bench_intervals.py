"""Time exact confidence intervals: 1e5 releases at once, against 1e5 cdf evaluations in the same run.

Run: ``python benchmarks/bench_intervals.py [--n 100000] [--repeat 3]``.  For BIT and truncation on
``[0, 1]`` and the Laplace mechanism, each at scale 0.2: draw ``n`` releases at ``q = 0.3`` (seeded), then
time ``dpbook.confidence_interval(mech, x, 0.95)`` (vectorized over the ``n`` releases; the
non-randomized interval, and the randomized one) and ``mech.cdf(x, 0.3)`` on the same releases.  Prints
intervals per second and the cost of one interval in cdf evaluations (the ratio of the two times): each
end is a bisection over the doubles (up to 64 halvings), each halving one evaluation of the law.
"""

from __future__ import annotations

import argparse

from bench_samplers import best_time  # this folder is on sys.path when a benchmark runs as a script

import dpbook


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n, q = args.n, 0.3
    families = {
        "BIT": dpbook.BIT(0.2, lower=0.0, upper=1.0),
        "Truncated": dpbook.Truncated(0.2, lower=0.0, upper=1.0),
        "Laplace": dpbook.Laplace(0.2),
    }
    print(f"n = {n} releases per call, best of {args.repeat}")
    print(f"{'family':>10} {'cdf [s]':>9} {'CI [s]':>9} {'CI/s':>10} {'CI/cdf':>8} {'rand. CI [s]':>13} {'rand./cdf':>10}")
    for name, mech in families.items():
        x = mech.sample(q, n, rng=2026)
        t_cdf = best_time(lambda: mech.cdf(x, q), args.repeat)
        t_ci = best_time(lambda: dpbook.confidence_interval(mech, x, 0.95), args.repeat)
        t_rand = best_time(lambda: dpbook.confidence_interval(mech, x, 0.95, randomize=True, rng=1), args.repeat)
        print(f"{name:>10} {t_cdf:>9.4f} {t_ci:>9.3f} {n / t_ci:>10.3g} {t_ci / t_cdf:>8.0f} {t_rand:>13.3f}"
              f" {t_rand / t_cdf:>10.0f}")


if __name__ == "__main__":
    main()
