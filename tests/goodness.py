"""A χ² goodness-of-fit test of a family's draws against its own law (shared by the sampler tests)."""

import numpy as np
from scipy import stats


def chi2_pvalue(mech, q, draws, bins=64):
    """χ² of the draws against the law, on cells between its quantiles (atoms make cells of their own)."""
    edges = np.unique(
        np.asarray(mech.ppf(np.linspace(0, 1, bins + 1)[1:-1], q), dtype=float)
    )
    F = np.r_[0.0, np.asarray(mech.cdf(edges, q)), 1.0]
    expected = np.diff(F) * draws.size
    counts = np.bincount(
        np.searchsorted(edges, draws, side="left"), minlength=edges.size + 1
    )
    keep = expected > 0
    assert counts[~keep].sum() == 0, "draws where the law has no mass"
    stat = float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))
    return stats.chi2.sf(stat, max(int(keep.sum()) - 1, 1)), counts, expected
