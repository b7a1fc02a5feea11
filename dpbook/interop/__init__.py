"""Adapters that plug dpbook's mechanism families into the DP libraries practitioners already run.

==================  ==========================================================================
``opendp``          :func:`~dpbook.interop.opendp.make_measurement`: any family as an OpenDP
                    measurement whose privacy map is dpbook's audited ε
``diffprivlib``     :class:`~dpbook.interop.diffprivlib.DpbookMechanism`: any family as a diffprivlib
                    ``DPMechanism``, with its exact ``bias`` and ``variance``
``secure``          :func:`secure_generator`: a ``numpy.random.Generator`` whose every bit comes
                    from the operating system's secure random source
==================  ==========================================================================

``import dpbook`` does not import this package, and importing this package imports neither peer
library: each adapter imports its peer when it is first used, and says which extra to install if it
is missing (``pip install "dpbook[peers]"``).

**What the adapters carry, and what they do not.**  The privacy map is exact, but a sampler is only
as private as the numbers it draws.  The continuous families (:class:`dpbook.Laplace`,
:class:`dpbook.BIT`, :class:`dpbook.Truncated`, ...) sample in floating point: which doubles a
release can be, and their low bits, depend on the true value, so an attacker who sees the exact
double can rule true values out (Mironov 2012; the book's Chapter 16).  The adapters say so in their
docstrings, in the description they attach, and with a :class:`FloatingPointWarning` the first time
an adapter of a continuous family releases.  The count families (:class:`dpbook.DiscreteLaplace`,
:class:`dpbook.DiscreteBIT`, :class:`dpbook.DiscreteTruncated`) have an exact integer sampler
(:func:`dpbook.discrete_laplace_noise`) that forms no floating-point number from its random bits; by
default the adapters drive it with :func:`secure_generator`, so the random integers it compares come
from ``os.urandom``.
"""

from .secure import (
    FloatingPointWarning,
    OSRandomBits,
    is_count_family,
    secure_generator,
)

__all__ = [
    "FloatingPointWarning",
    "OSRandomBits",
    "is_count_family",
    "secure_generator",
]
