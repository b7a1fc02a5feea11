"""A brute force shared by the histogram tests: every discrete Laplace noise vector, enumerated."""

import itertools
import math

import numpy as np


def noise_lattice(counts, scale):
    """``(c, w, y)``: the true counts as floats, and the probability ``w`` and noisy histogram ``y = c + k``
    of every noise vector ``k`` with ``|k_i| <= 45 b + 2`` (a product of discrete Laplace pmfs,
    ``(1 - α)/(1 + α) α^|k|``, written here rather than read from the library)."""
    c = np.asarray(counts, dtype=float)
    alpha = math.exp(-1 / scale)
    m = int(45 * scale) + 2
    k = np.arange(-m, m + 1, dtype=float)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)
    grid = np.array(list(itertools.product(range(k.size), repeat=c.size)))
    return c, np.prod(pmf[grid], axis=1), c + k[grid]
