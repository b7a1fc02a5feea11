"""The module names of the flat layout of earlier releases, kept for one release with a ``DeprecationWarning``.

``import dpbook.clamping`` (or ``dpbook.privacy``, ...) still works and gives a module whose attributes
are read from the module each name moved to; the flat names ``dpbook.BIT``, ``dpbook.privacy_loss``,
... are unchanged and are the ones to use.  Liu's study drivers (``dpbook.sanitize_covariance``, ...)
moved to the book's support package, :mod:`dpbook_book.studies`; ``dpbook.<driver>`` imports it on
first use, with the same warning.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: old module name -> the modules its names moved to, searched in order
MOVED_MODULES = {
    "calibration": ("dpbook.design.calibration",),
    "clamping": ("dpbook.families.clamping",),
    "discrete": ("dpbook.families.discrete",),
    "exact_sampling": ("dpbook._kernels.exact_sampling",),
    "intervals": ("dpbook.inference.intervals",),
    "laplace": ("dpbook.families.laplace", "dpbook.design.calibration"),
    "multiplicative": ("dpbook.families.multiplicative", "dpbook.design.calibration"),
    "normalization": ("dpbook.families.normalization", "dpbook.design.calibration"),
    "optimal": (
        "dpbook.design.least_bias",
        "dpbook.families.step",
        "dpbook.families.count_postprocessing",
        "dpbook.design.least_count_bias",
    ),
    "optimal_counts": ("dpbook.design.universal_optimality",),
    "postprocessing": ("dpbook.families.postprocessing",),
    "privacy": ("dpbook.audit",),
    "reporting": ("dpbook.inference.reporting",),
    "restriction": ("dpbook.families.restriction",),
    "rounding": ("dpbook.families.rounding",),
    "sensitivity": ("dpbook.design.sensitivity",),
    "studies": ("dpbook.consistency", "dpbook_book.studies"),
    "truncation": ("dpbook.families.truncation",),
}

#: public names that left the core for the book's support package
MOVED_NAMES = {
    name: "dpbook_book.studies"
    for name in (
        "max_sample_variance",
        "sanitize_covariance",
        "clipped_bivariate_normal",
        "release_rescaled",
        "release_all_but_one",
        "release_tree",
        "simulate_proportions",
        "wald_interval",
        "wald_coverage",
        "coverage",
        "bias_rmse",
        "combine_releases",
    )
}


#: result types merged into one, kept by their old names for one release
RENAMED = {
    "BiasVerification": "BiasCertificate",
    "CountBiasVerification": "BiasCertificate",
}


def _warn(old, new):
    warnings.warn(
        f"{old} has moved to {new}; it keeps its old name for this release only "
        "(the flat names dpbook.X are unchanged)",
        DeprecationWarning,
        stacklevel=3,
    )


class _MovedModule(types.ModuleType):
    """A stand-in for an old module: attributes are read from the modules its names moved to."""

    def __init__(self, name, targets):
        super().__init__(name, f"Deprecated alias of {', '.join(targets)}.")
        self._targets = targets

    def __setattr__(self, attr, value):
        # a value set here would reach no code (the names live in the modules they moved to): refuse it
        # rather than let a patch, a monkeypatch in a test say, silently change nothing
        if attr.startswith("__") or attr == "_targets":
            return super().__setattr__(attr, value)
        raise AttributeError(
            f"{self.__name__} is a deprecated alias: set {attr!r} on the module that defines it "
            f"({', '.join(self._targets)})"
        )

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        for target in self._targets:
            module = importlib.import_module(target)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(
            f"module {self.__name__!r} (moved to {', '.join(self._targets)}) has no attribute {attr!r}"
        )


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        head, _, old = fullname.partition(".")
        if head == "dpbook" and old in MOVED_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        old = spec.name.partition(".")[2]
        _warn(spec.name, " and ".join(MOVED_MODULES[old]))
        return _MovedModule(spec.name, MOVED_MODULES[old])

    def exec_module(self, module):
        return None


if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.append(_Finder())


def moved_attribute(name):
    """``dpbook.<name>`` for a name that moved: the old module or the study driver, with a warning."""
    if name in MOVED_MODULES:
        return importlib.import_module(f"dpbook.{name}")
    if name in MOVED_NAMES:
        _warn(f"dpbook.{name}", f"{MOVED_NAMES[name]}.{name}")
        return getattr(importlib.import_module(MOVED_NAMES[name]), name)
    if name in RENAMED:
        _warn(f"dpbook.{name}", f"dpbook.{RENAMED[name]}")
        return getattr(importlib.import_module("dpbook"), RENAMED[name])
    raise AttributeError(f"module 'dpbook' has no attribute {name!r}")
