"""The privacy audit: what a family tells the auditor, and the search for its worst case.

A family describes its own law through :meth:`dpbook.Mechanism.privacy_description`, which returns a
:class:`PrivacyDescription` (real-valued laws) or a :class:`DiscreteDescription` (integer-valued laws);
:func:`privacy_loss` and :func:`privacy_report` only search over pairs of neighbouring true values and
outputs, and never look at the family's type; :func:`pair_profile` computes the exact hockey-stick
divergence δ(ε) of one pair from the same description, :func:`privacy_profile` its supremum over
neighbouring pairs (with :func:`profile_bounds`, its lower bound and whether it is exact) and
:func:`epsilon_for_delta` its inverse; :func:`pair_renyi` the Rényi divergence of one pair,
:func:`renyi_profile` its supremum (the Rényi-DP curve) and :func:`composed_profile` a bound on δ(ε) of
``k`` composed releases from it.
"""

from ._profile import (
    ProfileBounds,
    epsilon_for_delta,
    pair_profile,
    privacy_profile,
    profile_bounds,
)
from ._renyi import composed_profile, pair_renyi, renyi_profile
from ._search import PrivacyReport, describe, pair_loss, privacy_loss, privacy_report
from .description import DiscreteDescription, PrivacyDescription

__all__ = [
    "DiscreteDescription",
    "PrivacyDescription",
    "PrivacyReport",
    "ProfileBounds",
    "composed_profile",
    "describe",
    "epsilon_for_delta",
    "pair_loss",
    "pair_profile",
    "pair_renyi",
    "privacy_loss",
    "privacy_profile",
    "privacy_report",
    "profile_bounds",
    "renyi_profile",
]
