"""Many counts at once (Chapters 22–23): post-processings of noisy histograms and a small TopDown.

Counts live on the last axis: every function takes ``(..., n)`` arrays, the leading axes being
independent histograms.  :mod:`.postprocess` holds the pure post-processings of noisy counts
(clamping, the simplex projection, its nearest integer vector); :mod:`.topdown` the level-by-level
integer release of a hierarchy below a known total.
"""

from .allocation import Misallocation, allocate, expected_misallocation
from .exact import HistogramMoments, histogram_moments, simulate_histogram_moments
from .postprocess import (
    clamp_counts,
    integer_simplex,
    project_simplex,
    simplex_threshold,
)
from .release import POSTPROCESSINGS, release_histogram
from .topdown import TopDownBias, topdown, topdown_bias

__all__ = [
    "clamp_counts",
    "simplex_threshold",
    "project_simplex",
    "integer_simplex",
    "topdown",
    "TopDownBias",
    "topdown_bias",
    "POSTPROCESSINGS",
    "release_histogram",
    "HistogramMoments",
    "histogram_moments",
    "simulate_histogram_moments",
    "Misallocation",
    "allocate",
    "expected_misallocation",
]
