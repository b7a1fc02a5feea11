"""Any dpbook mechanism family as an OpenDP measurement whose privacy map is dpbook's audited ε.

OpenDP (the OpenDP Library, >= 0.12) lets a user bring a mechanism of their own with
``make_user_measurement``: the user supplies the function that releases and the *privacy map* that
turns an input distance ``d_in`` into the privacy loss, and OpenDP composes it with its own
measurements.  OpenDP cannot check either callback, so the constructor sits behind two feature
flags: ``"contrib"`` (code not yet vetted by OpenDP's proof process) and ``"honest-but-curious"``.
The second is the user's declaration that the callbacks are honest: that the map really bounds the
privacy loss of the function for every pair of ``d_in``-close inputs, and that neither callback has
side effects a caller could exploit.  Here the map is dpbook's exact auditor,
:func:`dpbook.privacy_loss` (a certified upper bound where the auditor reports ``exact=False``), so
the declaration rests on the auditor and its tests, not on a quoted theorem.

Read this before you release with it: the audit is of the mechanism's law on the reals.  A
continuous family's sampler works in floating point, and the low bits of the double it releases can
reveal the true value (Mironov 2012; Chapter 16).  The measurement says so in its ``description``
and warns (:class:`~dpbook.interop.FloatingPointWarning`) the first time it releases.  The count
families release exact integers, drawn by default from the operating system's secure source
(:func:`~dpbook.interop.secure_generator`).

This module imports ``opendp`` only when :func:`make_measurement` is called.
"""

from __future__ import annotations

import functools
import math
import warnings

import dpbook

from .secure import FloatingPointWarning, float_note, generator_for, is_count_family

__all__ = ["make_measurement"]

_INSTALL = 'the OpenDP adapter needs the OpenDP library: pip install "dpbook[peers]"'


def _opendp():
    try:
        import opendp.prelude as dp
    except ImportError as err:
        raise ImportError(_INSTALL) from err
    return dp


def _check_features(dp):
    missing = [
        f for f in ("contrib", "honest-but-curious") if f not in dp.GLOBAL_FEATURES
    ]
    if missing:
        raise RuntimeError(
            f"OpenDP features {missing} are not enabled. make_user_measurement needs "
            'dp.enable_features("contrib", "honest-but-curious"): by enabling "honest-but-curious" '
            "you declare that the measurement's privacy map bounds its privacy loss (here: dpbook's "
            "audit of the mechanism's law) and that its function has no side effects."
        )


def make_measurement(mechanism, *, rng=None):
    """Wrap a dpbook mechanism family as an OpenDP measurement: release ``M(q)``, privacy map = audited ε.

    The measurement is built with OpenDP's ``make_user_measurement`` on OpenDP's own types:

    * input domain ``atom_domain(T="f64", nan=False)`` for a family on the reals, or
      ``atom_domain(T="i64")`` for an integer-valued one (``mechanism.integer_valued``: the count
      families and :class:`dpbook.Rounded`), with ``bounds`` the family's ``domain`` when an
      end is finite (an infinite end of a count domain: the end of the ``i64`` range).  OpenDP does
      not check that an input lies in the domain, so the function refuses a true value outside
      ``mechanism.domain`` with a ``ValueError``: the audit covers only the domain;
    * input metric ``absolute_distance`` of the same type: ``d_in`` is the sensitivity ``Δ``;
    * output measure ``max_divergence()`` (pure ε-DP);
    * privacy map ``d_in -> dpbook.privacy_loss(mechanism, d_in)`` (0 at ``d_in = 0``), memoized;
    * function ``q -> mechanism.sample(q, rng=...)``, a float (``"f64"``) or, for an
      integer-valued family, an int (``"i64"``).

    It composes with OpenDP's measurements in its compositors (``dp.c.make_composition``,
    ``make_adaptive_composition``), which add the ε of their parts.  OpenDP must have the features
    ``"contrib"`` and ``"honest-but-curious"`` enabled (see the module docstring for what the second
    declares); otherwise ``RuntimeError``.

    **Floating point.**  For a continuous family the released double leaks through its low bits
    (Chapter 16): the map is exact for the law on the reals, not for the floating-point sampler.
    The measurement's ``description`` says so, and its first release warns
    (:class:`~dpbook.interop.FloatingPointWarning`).  A count family's release is exact.

    Parameters
    ----------
    mechanism : dpbook.Mechanism
        Any dpbook mechanism family (``dpbook.BIT(...)``, ``dpbook.DiscreteBIT(...)``, ...).
    rng : int, numpy.random.Generator or None, optional
        The generator of the releases.  ``None`` (default): :func:`~dpbook.interop.secure_generator`,
        the operating system's secure source.  An int seed gives reproducible releases, for tests
        and teaching only.

    Returns
    -------
    opendp.mod.Measurement
        With the extra attributes ``description`` (str) and ``dpbook_mechanism``.

    Examples
    --------
    >>> import dpbook, opendp.prelude as dp
    >>> from dpbook.interop.opendp import make_measurement
    >>> dp.enable_features("contrib", "honest-but-curious")
    >>> meas = make_measurement(dpbook.DiscreteBIT(2.0, lower=0, upper=10))
    >>> meas.map(1)                     # ε = Δ/b for clamping a count
    0.5
    >>> meas(3) in range(0, 11)
    True
    """
    is_count_family(mechanism)  # a dpbook mechanism, or ValueError
    integer = bool(mechanism.integer_valued)
    dp = _opendp()
    _check_features(dp)
    gen = generator_for(rng, mechanism)
    lo, hi = (float(v) for v in mechanism.domain)
    kind = "i64" if integer else "f64"
    if math.isinf(lo) and math.isinf(hi):
        domain = (
            dp.atom_domain(T=kind) if integer else dp.atom_domain(T=kind, nan=False)
        )
    elif integer:  # an infinite end of an integer domain: the end of the i64 range
        bounds = (
            int(lo) if math.isfinite(lo) else -(2**63),
            int(hi) if math.isfinite(hi) else 2**63 - 1,
        )
        domain = dp.atom_domain(T=kind, bounds=bounds)
    else:
        domain = dp.atom_domain(T=kind, bounds=(lo, hi), nan=False)
    metric = dp.absolute_distance(T=kind)
    note = float_note(mechanism)
    warned = []

    def function(q):
        if (
            isinstance(q, bool)
            or not isinstance(q, (int, float))
            or not (lo <= q <= hi)
        ):
            raise ValueError(
                f"q must be a number in the mechanism's domain [{lo}, {hi}], got {q!r}"
            )
        if note and not warned:
            warned.append(True)
            warnings.warn(note, FloatingPointWarning, stacklevel=2)
        x = mechanism.sample(q, rng=gen)
        return int(x) if integer else float(x)

    @functools.lru_cache(maxsize=256)
    def privacy_map(d_in):
        if (
            isinstance(d_in, bool)
            or not isinstance(d_in, (int, float))
            or not d_in >= 0
        ):
            raise ValueError(f"d_in must be a distance >= 0, got {d_in!r}")
        if d_in == 0:
            return 0.0
        return float(dpbook.privacy_loss(mechanism, d_in))

    meas = dp.m.make_user_measurement(
        domain,
        metric,
        dp.max_divergence(),
        function=function,
        privacy_map=privacy_map,
        TO=kind,
    )
    source = (
        "the operating system's secure source (os.urandom)"
        if rng is None
        else "a seeded numpy generator (reproducible, not secure)"
    )
    meas.description = (
        f"dpbook {mechanism!r} as an OpenDP measurement: releases M(q) for q in [{lo}, {hi}]; "
        f"privacy map = dpbook.privacy_loss (the exact ε of the mechanism's law); random bits from {source}. "
        + (
            note
            or "Exact integer sampler (Canonne, Kamath & Steinke 2020): no floating point."
        )
    )
    meas.dpbook_mechanism = mechanism
    return meas
