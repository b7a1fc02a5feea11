"""dpbook: range-adherent Laplace mechanisms for bounded and nonnegative statistics.

The library behind the dpbook textbook.  Its folders are its layers (each imports only from the ones
below it):

=====================  =======================================================================
``_kernels``           private numerics: Laplace tails and piece masses, exact integer sampling,
                       validation, array helpers
``mechanism``, ``law``  the contract every family fulfils (:class:`Mechanism`) and the law of one
                       release (:class:`Law`)
``audit``              what a family tells the auditor (:class:`PrivacyDescription`,
                       :class:`DiscreteDescription`) and the search (:func:`privacy_loss`)
``families``           one module per mechanism family: :class:`Laplace`, :class:`BIT`,
                       :class:`Truncated`, the ramps, :class:`Restricted`, :class:`LogLaplace`,
                       :class:`Normalized`, the counts, :class:`Rounded`, the step maps
``inference``          exact confidence intervals and the release card
``design``             calibration, sensitivities, least-bias programs, universal optimality
``consistency``        many releases made consistent: PSD repair, the tree of sums
=====================  =======================================================================

``import dpbook`` imports numpy and scipy and nothing else.  The book's own support code (its
interactive views, figure style, exercise answers, peer-library adapters, Liu's study drivers) is
the separate package :mod:`dpbook_book`, which the core never imports.

**One public API.**  The names in ``dpbook.__all__`` (listed in the book's API reference) are the
public interface, all importable from ``dpbook`` directly.  What a mechanism family must and may
define is stated once, in :class:`dpbook.Mechanism`.  Optional parameters are keyword-only; ``rng``
accepts an int seed, a ``numpy.random.Generator`` or ``None``.  The modules of the flat layout of
earlier releases (``dpbook.clamping``, ``dpbook.privacy``, ...) still import, with a
``DeprecationWarning``, for this release.
"""

from . import _legacy
from ._kernels.exact_sampling import discrete_laplace_noise
from .audit import (
    DiscreteDescription,
    PrivacyDescription,
    PrivacyReport,
    ProfileBounds,
    composed_profile,
    describe,
    epsilon_for_delta,
    pair_loss,
    pair_profile,
    pair_renyi,
    privacy_loss,
    privacy_profile,
    privacy_report,
    profile_bounds,
    renyi_profile,
)
from .consistency import (
    Hierarchy,
    consistent_hierarchy,
    consistent_tree,
    consistent_tree_covariance,
    nearest_correlation,
    nearest_psd,
    nonnegative_tree,
    tree_levels,
)
from .design.bounded_noise import (
    bounded_laplace_scale,
    geng_truncated_laplace,
    noise_amplitude_power,
)
from .design.calibration import (
    croft_boundary_scale,
    croft_lower_bounds,
    croft_scale,
    croft_table2,
    croft_uniform_scale,
    laplace_scale,
    log_laplace_scale,
    profile_scale,
    required_epsilon,
    required_scale,
    restriction_ramp_bias_ratio,
    truncated_scale,
)
from .design.clipping import (
    ClippedMeanMSE,
    OptimalClip,
    clipped_mean_mse,
    clipped_moments,
    clipping_bias,
    optimal_clip,
)
from .design.gaussian import (
    analytic_gaussian_scale,
    bounded_gaussian_scale,
    gaussian_delta,
)
from .design.least_bias import (
    MSEVerification,
    OptimalPostProcessing,
    dp_bias_lower_bound,
    min_bias_postprocessing,
    optimal_postprocessing,
    verify_bias,
    verify_mse,
)
from .design.least_count_bias import (
    LeastCountBias,
    clamped_sum_bias,
    least_count_bias,
    optimal_count_postprocessing,
    optimal_count_threshold_rules,
    verify_count_bias,
)
from .design.private_bounds import (
    ApproxBoundsLaw,
    BoundsAudit,
    BudgetSplit,
    CoinPress,
    PrivateMeanMSE,
    QuantileLaw,
    approx_bounds,
    approx_bounds_law,
    approx_bounds_privacy_loss,
    best_budget_split,
    bounds_privacy_loss,
    coinpress_mean,
    coinpress_privacy_loss,
    minmax_privacy_loss,
    private_mean_mse,
    private_quantile,
    quantile_law,
    quantile_privacy_loss,
)
from .design.sensitivity import (
    RELATIONS,
    brute_force_sensitivity,
    budget_split,
    covariance_sensitivity,
    histogram_sensitivity,
    mean_sensitivity,
    neighbour_changes,
    proportion_sensitivity,
    release_sample_mean,
    sample_covariance,
    sample_variance,
    sanitized_mean,
    variance_sensitivity,
    worst_neighbours,
)
from .design.universal_optimality import (
    OptimalCountMechanism,
    RemappedGeometric,
    absolute_loss,
    best_remap,
    expected_loss,
    matrix_epsilon,
    optimal_count_mechanism,
    remapped_geometric,
    squared_loss,
    zero_one_loss,
)
from .families.bounded_noise import TruncatedLaplaceNoise
from .families.clamping import BIT
from .families.count_postprocessing import CountPostProcessed
from .families.discrete import (
    DiscreteBIT,
    DiscreteLaplace,
    DiscreteTruncated,
    discrete_truncated_epsilon,
    discrete_truncated_scale,
)
from .families.folded import FoldedLaplace
from .families.gaussian import Gaussian, GaussianBIT, GaussianTruncated
from .families.laplace import Laplace
from .families.multiplicative import LogLaplace, log_laplace_moment, relative_bias
from .families.normalization import CroftLaplace, Normalized
from .families.postprocessing import (
    PostProcessed,
    TranslatedRamp,
    bias_lower_bound,
    optimal_ramp_shift,
    piecewise_linear_phi,
    ramp_worst_bias,
    softplus_phi,
    translated_ramp_phi,
)
from .families.restriction import Restricted
from .families.rounding import Rounded
from .families.step import StepPostProcessed, laplace_cell_masses
from .families.truncation import Truncated
from .histograms import (
    POSTPROCESSINGS,
    HistogramMoments,
    Misallocation,
    TopDownBias,
    allocate,
    clamp_counts,
    expected_misallocation,
    histogram_moments,
    integer_simplex,
    project_simplex,
    release_histogram,
    simplex_threshold,
    simulate_histogram_moments,
    topdown,
    topdown_bias,
)
from .inference.intervals import (
    ConfidenceInterval,
    ExactInterval,
    clipped_laplace_interval,
    confidence_interval,
    expected_length,
    interval_coverage,
    is_stochastically_increasing,
    laplace_interval,
    plugin_interval,
    proportion_coverage,
    proportion_interval,
    randomized_interval,
)
from .inference.reporting import ReleaseCard, release_card
from .law import Law
from .mechanism import BiasCertificate, Mechanism
from .neighbours import Neighbours

__all__ = [
    # a release rounded to an integer: round(M(q)) of any family, its exact law and privacy (Chapter 19)
    "Rounded",
    # counts: the discrete Laplace law clamped and conditioned, and their exact privacy (Part V)
    "DiscreteLaplace",
    "DiscreteBIT",
    "DiscreteTruncated",
    "DiscreteDescription",
    "discrete_truncated_epsilon",
    "discrete_truncated_scale",
    # universally optimal counts: the program over all ε-DP count mechanisms and GRS (Chapter 20)
    "optimal_count_mechanism",
    "remapped_geometric",
    "best_remap",
    "expected_loss",
    "matrix_epsilon",
    "absolute_loss",
    "squared_loss",
    "zero_one_loss",
    "OptimalCountMechanism",
    "RemappedGeometric",
    # exact integer noise (Part V)
    "discrete_laplace_noise",
    # the interface and the law of one release
    "Mechanism",
    "Law",
    # mechanism families
    "Laplace",
    "BIT",
    "Truncated",
    "TranslatedRamp",
    "PostProcessed",
    "StepPostProcessed",
    "Restricted",
    "LogLaplace",
    "Normalized",
    "CroftLaplace",
    "FoldedLaplace",
    # the Gaussian mechanism on the line and on a bounded range, its exact δ(ε) and calibration (issue 20)
    "Gaussian",
    "GaussianBIT",
    "GaussianTruncated",
    "gaussian_delta",
    "analytic_gaussian_scale",
    "bounded_gaussian_scale",
    # bounded noise: Holohan et al.'s bounded Laplace and Geng et al.'s truncated Laplacian (issue 20)
    "bounded_laplace_scale",
    "TruncatedLaplaceNoise",
    "geng_truncated_laplace",
    "noise_amplitude_power",
    # scales and constants of the families
    "laplace_scale",
    "log_laplace_scale",
    "log_laplace_moment",
    "relative_bias",
    "optimal_ramp_shift",
    "ramp_worst_bias",
    "bias_lower_bound",
    "translated_ramp_phi",
    "softplus_phi",
    "piecewise_linear_phi",
    "restriction_ramp_bias_ratio",
    "croft_boundary_scale",
    "croft_scale",
    "croft_uniform_scale",
    "croft_lower_bounds",
    "croft_table2",
    # the best nonnegative post-processing
    "BiasCertificate",
    "MSEVerification",
    "OptimalPostProcessing",
    "laplace_cell_masses",
    "verify_bias",
    "verify_mse",
    "min_bias_postprocessing",
    "optimal_postprocessing",
    "dp_bias_lower_bound",
    # the least-bias post-processing of a count (Chapter 21)
    "CountPostProcessed",
    "LeastCountBias",
    "verify_count_bias",
    "optimal_count_postprocessing",
    "least_count_bias",
    "optimal_count_threshold_rules",
    "clamped_sum_bias",
    # the privacy auditor
    "PrivacyDescription",
    "PrivacyReport",
    "describe",
    "pair_loss",
    "pair_profile",
    "privacy_profile",
    "epsilon_for_delta",
    "profile_bounds",
    "ProfileBounds",
    "pair_renyi",
    "renyi_profile",
    "composed_profile",
    "privacy_loss",
    "privacy_report",
    "truncated_scale",
    "profile_scale",
    # where the bounds come from: clipping bias against noise, the best clip (Part IV)
    "clipping_bias",
    "clipped_moments",
    "ClippedMeanMSE",
    "clipped_mean_mse",
    "OptimalClip",
    "optimal_clip",
    # where the bounds come from: bounds chosen privately, each audited exactly (Part IV)
    "private_quantile",
    "quantile_law",
    "QuantileLaw",
    "approx_bounds",
    "approx_bounds_law",
    "ApproxBoundsLaw",
    "coinpress_mean",
    "CoinPress",
    "BoundsAudit",
    "quantile_privacy_loss",
    "approx_bounds_privacy_loss",
    "coinpress_privacy_loss",
    "minmax_privacy_loss",
    "bounds_privacy_loss",
    "private_mean_mse",
    "PrivateMeanMSE",
    "best_budget_split",
    "BudgetSplit",
    # sensitivities of bounded-data statistics
    "RELATIONS",
    "Neighbours",
    "budget_split",
    "mean_sensitivity",
    "proportion_sensitivity",
    "histogram_sensitivity",
    "variance_sensitivity",
    "covariance_sensitivity",
    "sample_variance",
    "sample_covariance",
    "brute_force_sensitivity",
    "neighbour_changes",
    "worst_neighbours",
    "release_sample_mean",
    "sanitized_mean",
    # consistency of many releases: PSD repair (Higham) and the universal-histogram tree (Hay et al.)
    "nearest_psd",
    "nearest_correlation",
    "tree_levels",
    "consistent_tree",
    "nonnegative_tree",
    "consistent_tree_covariance",
    # reporting a bounded release: exact intervals
    "ConfidenceInterval",
    "confidence_interval",
    "randomized_interval",
    "interval_coverage",
    "ExactInterval",
    "expected_length",
    "is_stochastically_increasing",
    "plugin_interval",
    "clipped_laplace_interval",
    "laplace_interval",
    "proportion_interval",
    "proportion_coverage",
    # accuracy before release
    "required_scale",
    "required_epsilon",
    # the release card
    "ReleaseCard",
    "release_card",
    # Many counts at once (Chapters 22–23)
    "Hierarchy",
    "consistent_hierarchy",
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

from ._version import __version__  # noqa: E402, F401  (its one home; not in __all__)


def __getattr__(name):
    return _legacy.moved_attribute(name)
