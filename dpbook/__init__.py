"""dpbook: range-adherent Laplace mechanisms for bounded and nonnegative statistics.

The library behind the dpbook textbook.  One module per idea of the book:

==================  ==========================================================================
``laplace``         :class:`Laplace`, the Laplace mechanism
``mechanism``       :class:`Mechanism`, the interface every mechanism family shares
``law``             :class:`Law`, the law of one release, shaped like a frozen ``scipy.stats`` law
``clamping``        :class:`BIT` — Liu Def. 2(b); McGlinchey–Mason (4), (5)
``truncation``      :class:`Truncated` — Liu Def. 2(a); McGlinchey–Mason (8), Cor. 1
``postprocessing``  :class:`TranslatedRamp`, :class:`PostProcessed`, α*, the Prop. 5 constant
``restriction``     :class:`Restricted` and the quantile coupling of McGlinchey–Mason Prop. 6
``multiplicative``  :class:`LogLaplace` — McGlinchey–Mason §3.1
``normalization``   :class:`Normalized`, :class:`CroftLaplace` and Croft–Sack–Shi's scales
``discrete``        counts: :class:`DiscreteLaplace`, :class:`DiscreteBIT`, :class:`DiscreteTruncated`
``exact_sampling``  :func:`discrete_laplace_noise`, exact integer noise (Canonne–Kamath–Steinke)
``rounding``        :class:`Rounded`, any release rounded to the nearest integer, audited exactly
``optimal``         linear programs for the best nonnegative post-processing (real and count), verified
``optimal_counts``  :func:`optimal_count_mechanism`: GRS's universal optimality checked by LP
``privacy``         the exact auditor :func:`privacy_loss` and :class:`PrivacyDescription`
``calibration``     the scale for a privacy target: :func:`laplace_scale`, :func:`truncated_scale`
``intervals``       exact confidence intervals: :func:`confidence_interval`, :func:`interval_coverage`
``reporting``       the release card of one release: :func:`release_card`
``sensitivity``     global sensitivities of bounded-data statistics (Liu's supplement)
``studies``         Higham's projection, the universal-histogram tree, combining rules
==================  ==========================================================================

``import dpbook`` imports numpy and scipy and nothing else.  The book's own support code (its
interactive views, figure style, exercise answers, peer-library adapters and worked examples) is the
separate package :mod:`dpbook_book`, which the core never imports.

**One public API.**  The names in ``dpbook.__all__`` (listed in the book's API reference) are the
public interface, all importable from ``dpbook`` directly.  Each mechanism family is a class whose
vectorized methods (``bias``, ``mean``, ``variance``, ``mse``, ``cdf``, ``sf``, ``ppf``, ``isf``, ``pdf``,
``pmf``, ``sample``) take the true value ``q``, and whose ``at(q)`` gives the law of one release; the
closed-form formula functions behind the methods are private (``_bit_mean``, ``_truncated_cdf``, ...).
Functions that no class duplicates (scales, bounds, the auditor, sensitivities, the studies) are
public.  Optional parameters are keyword-only; ``rng`` accepts an int seed, a
``numpy.random.Generator`` or ``None``.
"""

from . import (
    calibration,
    clamping,
    intervals,
    laplace,
    law,
    mechanism,
    multiplicative,
    normalization,
    optimal,
    postprocessing,
    privacy,
    reporting,
    restriction,
    sensitivity,
    studies,
    truncation,
)
from .clamping import BIT
from .intervals import (
    ConfidenceInterval,
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
from .laplace import Laplace
from .law import Law
from .mechanism import Mechanism
from .multiplicative import LogLaplace, log_laplace_moment, relative_bias
from .normalization import (
    CroftLaplace,
    Normalized,
    croft_boundary_scale,
    croft_lower_bounds,
    croft_scale,
    croft_table2,
    croft_uniform_scale,
)
from .optimal import (
    clamped_sum_bias,
    CountBiasVerification,
    CountPostProcessed,
    LeastCountBias,
    least_count_bias,
    optimal_count_postprocessing,
    optimal_count_threshold_rules,
    verify_count_bias,
    BiasVerification,
    MSEVerification,
    OptimalPostProcessing,
    StepPostProcessed,
    dp_bias_lower_bound,
    laplace_cell_masses,
    min_bias_postprocessing,
    optimal_postprocessing,
    verify_bias,
    verify_mse,
)
from .postprocessing import (
    BiasCertificate,
    PostProcessed,
    TranslatedRamp,
    bias_lower_bound,
    optimal_ramp_shift,
    piecewise_linear_phi,
    ramp_worst_bias,
    softplus_phi,
    translated_ramp_phi,
)
from .calibration import laplace_scale, log_laplace_scale, required_epsilon, required_scale, truncated_scale
from .privacy import PrivacyDescription, PrivacyReport, describe, pair_loss, privacy_loss, privacy_report
from .reporting import ReleaseCard, release_card
from .restriction import Restricted, restriction_ramp_bias_ratio
from .sensitivity import (
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
from .studies import (
    bias_rmse,
    clipped_bivariate_normal,
    combine_releases,
    consistent_tree,
    consistent_tree_covariance,
    coverage,
    max_sample_variance,
    nearest_correlation,
    nearest_psd,
    nonnegative_tree,
    release_all_but_one,
    release_rescaled,
    release_tree,
    sanitize_covariance,
    simulate_proportions,
    tree_levels,
    wald_coverage,
    wald_interval,
)
from .truncation import Truncated
from .exact_sampling import discrete_laplace_noise
from .optimal_counts import (
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
from .discrete import (
    DiscreteBIT,
    DiscreteLaplace,
    DiscreteTruncated,
    discrete_truncated_epsilon,
    discrete_truncated_scale,
)
from ._discrete_audit import DiscreteDescription
from .rounding import Rounded

__all__ = [
    # a release rounded to an integer: round(M(q)) of any family, its exact law and privacy (Chapter 18)
    "Rounded",
    # counts: the discrete Laplace law clamped and conditioned, and their exact privacy (Part V)
    "DiscreteLaplace",
    "DiscreteBIT",
    "DiscreteTruncated",
    "DiscreteDescription",
    "discrete_truncated_epsilon",
    "discrete_truncated_scale",
    # universally optimal counts: the program over all ε-DP count mechanisms and GRS (Chapter 19)
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
    "BiasVerification",
    "MSEVerification",
    "OptimalPostProcessing",
    "laplace_cell_masses",
    "verify_bias",
    "verify_mse",
    "min_bias_postprocessing",
    "optimal_postprocessing",
    "dp_bias_lower_bound",
    # the least-bias post-processing of a count (Chapter 20)
    "CountPostProcessed",
    "CountBiasVerification",
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
    "privacy_loss",
    "privacy_report",
    "truncated_scale",
    # sensitivities of bounded-data statistics
    "RELATIONS",
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
    # Liu's simulation studies
    "nearest_psd",
    "nearest_correlation",
    "max_sample_variance",
    "sanitize_covariance",
    "clipped_bivariate_normal",
    "tree_levels",
    "consistent_tree",
    "nonnegative_tree",
    "consistent_tree_covariance",
    "release_rescaled",
    "release_all_but_one",
    "release_tree",
    "simulate_proportions",
    "wald_interval",
    "wald_coverage",
    "coverage",
    "bias_rmse",
    "combine_releases",
    # reporting a bounded release: exact intervals
    "ConfidenceInterval",
    "confidence_interval",
    "randomized_interval",
    "interval_coverage",
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
]

__version__ = "0.1.0"
