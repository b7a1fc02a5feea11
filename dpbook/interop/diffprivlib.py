"""Any dpbook mechanism family as a diffprivlib ``DPMechanism``, with its exact ``bias`` and ``variance``.

IBM's diffprivlib (Holohan et al. 2019) states its mechanism contract in the abstract class
``diffprivlib.mechanisms.DPMechanism``: keyword-only parameters, ``epsilon`` and ``delta`` checked by
``_check_epsilon_delta``, ``randomise(value)``, and ``bias``, ``variance`` and ``mse`` beside it (its own
``GeometricTruncated`` and ``GeometricFolded`` raise ``NotImplementedError`` for ``bias`` and
``variance``).  :class:`DpbookMechanism` fills that contract with a dpbook family: ``epsilon`` is the
family's audited loss :func:`dpbook.privacy_loss` at the given sensitivity (``delta = 0``), ``bias`` and
``variance`` are the family's exact closed forms, and ``randomise`` is its sampler.

Floating point: a continuous family's ``randomise`` returns a double whose low bits can reveal the
true value (Mironov 2012; Chapter 16); the first release warns
(:class:`~dpbook.interop.FloatingPointWarning`).  A count family's release is an exact integer, drawn
by default from the operating system's secure source (:func:`~dpbook.interop.secure_generator`), as
diffprivlib itself draws from ``secrets`` when ``random_state`` is ``None``.

The class is built, and diffprivlib imported, when ``DpbookMechanism`` is first looked up in this
module (``from dpbook.interop.diffprivlib import DpbookMechanism``).
"""

from __future__ import annotations

import numbers
import secrets
import warnings

import numpy as np

import dpbook

from .secure import FloatingPointWarning, float_note, is_count_family, secure_generator

__all__ = ["DpbookMechanism"]  # noqa: F822  (built on first look-up, by __getattr__ below)

_INSTALL = 'the diffprivlib adapter needs diffprivlib: pip install "dpbook[peers]"'


def _numpy_generator(random_state):
    """diffprivlib's ``random_state`` as the ``numpy.random.Generator`` dpbook's samplers take."""
    if random_state is None or isinstance(random_state, secrets.SystemRandom):
        return secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    raise ValueError(
        f"random_state must be None, an int seed >= 0, a numpy RandomState or Generator, "
        f"or secrets.SystemRandom, got {random_state!r}"
    )


def _build():
    try:
        from diffprivlib.mechanisms import DPMechanism
    except ImportError as err:
        raise ImportError(_INSTALL) from err

    class DpbookMechanism(DPMechanism):
        """A dpbook mechanism family as a diffprivlib mechanism: ε audited, bias and variance exact.

        Parameters
        ----------
        mechanism : dpbook.Mechanism
            Any dpbook mechanism family.
        sensitivity : float
            The query's sensitivity ``Δ > 0`` (an int for an integer-valued family).  ``epsilon`` is
            ``dpbook.privacy_loss(mechanism, sensitivity)``; ``delta`` is 0.
        random_state : int, numpy.random.Generator, numpy.random.RandomState, secrets.SystemRandom or None
            ``None`` (default) or ``secrets.SystemRandom()``: every random bit from ``os.urandom``
            (:func:`~dpbook.interop.secure_generator`).  An int seed: reproducible, not secure.

        Notes
        -----
        A continuous family samples in floating point and leaks through the low bits of its
        output (Chapter 16); the first ``randomise`` warns.  A count family's ``randomise`` is exact
        (Canonne, Kamath & Steinke 2020); an integer-valued family (``mechanism.integer_valued``)
        takes and returns integers.

        Examples
        --------
        >>> import dpbook
        >>> from dpbook.interop.diffprivlib import DpbookMechanism
        >>> mech = DpbookMechanism(mechanism=dpbook.DiscreteBIT(2.0, lower=0, upper=10), sensitivity=1)
        >>> mech.epsilon, mech.delta
        (0.5, 0.0)
        >>> round(mech.bias(0), 6)        # diffprivlib's GeometricTruncated raises NotImplementedError
        0.953052
        """

        def __init__(self, *, mechanism, sensitivity, random_state=None):
            is_count_family(mechanism)  # a dpbook mechanism, or ValueError
            self._integer = bool(mechanism.integer_valued)
            self.mechanism = mechanism
            self.sensitivity = self._check_sensitivity(sensitivity)
            self._generator = _numpy_generator(random_state)
            epsilon = float(dpbook.privacy_loss(mechanism, self.sensitivity))
            super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
            self._note = float_note(mechanism)
            self._warned = False

        def _check_sensitivity(self, sensitivity):
            if isinstance(sensitivity, bool) or not isinstance(
                sensitivity, numbers.Real
            ):
                raise TypeError(
                    f"sensitivity must be a real number, got {sensitivity!r}"
                )
            if not (sensitivity > 0 and np.isfinite(sensitivity)):
                raise ValueError(
                    f"sensitivity must be a finite number > 0, got {sensitivity!r}"
                )
            if self._integer and sensitivity != int(sensitivity):
                raise ValueError(
                    f"sensitivity must be an integer for an integer-valued family, got {sensitivity!r}"
                )
            return int(sensitivity) if self._integer else float(sensitivity)

        def _check_value(self, value):
            if self._integer:
                if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                    raise TypeError(
                        f"value must be an integer for an integer-valued family, got {value!r}"
                    )
            elif isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"value must be a real number, got {value!r}")
            lo, hi = self.mechanism.domain
            if not lo <= value <= hi:
                raise ValueError(
                    f"value must lie in the mechanism's domain [{lo}, {hi}], got {value!r}"
                )

        def _check_all(self, value):
            super()._check_all(value)
            is_count_family(self.mechanism)
            self._check_sensitivity(self.sensitivity)
            self._check_value(value)
            return True

        def randomise(self, value):
            """One release of ``value``: a float, or an int for an integer-valued family."""
            self._check_all(value)
            if self._note and not self._warned:
                self._warned = True
                warnings.warn(self._note, FloatingPointWarning, stacklevel=2)
            x = self.mechanism.sample(value, rng=self._generator)
            return int(x) if self._integer else float(x)

        def bias(self, value):
            """The exact bias ``E[M(value)] - value`` of the dpbook family."""
            self._check_all(value)
            return float(self.mechanism.bias(value))

        def variance(self, value):
            """The exact variance of the release at ``value``, from the dpbook family."""
            self._check_all(value)
            return float(self.mechanism.variance(value))

        def mse(self, value):
            """The exact mean squared error at ``value``, from the dpbook family."""
            self._check_all(value)
            return float(self.mechanism.mse(value))

    DpbookMechanism.__module__ = __name__
    return DpbookMechanism


_built = {}


def __dir__():
    return sorted([*globals(), "DpbookMechanism"])


def __getattr__(name):
    if name == "DpbookMechanism":
        if name not in _built:
            _built[name] = _build()
        return _built[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
