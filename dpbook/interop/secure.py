"""A numpy ``Generator`` driven by the operating system's secure random source, and what the adapters share.

dpbook's samplers take a ``numpy.random.Generator`` (SPEC 7).  numpy's own bit generators (PCG64 and
the others) are deterministic functions of a seed: seeding one from ``os.urandom`` gives a secret
seed, not a secure source, since every later bit is a function of 128 seed bits and the generator
is not designed to resist an observer who sees its outputs.  :class:`OSRandomBits` is a numpy *bit
generator* whose every 64-bit word is read from ``os.urandom`` (on Linux the kernel's ChaCha20
CSPRNG, through ``getrandom(2)``), in blocks of 4 KiB; each word is used once.  Wrapped in
``numpy.random.Generator`` it gives every method of the generator, and in particular
``integers`` (numpy's unbiased bounded integers, Lemire's rejection method on those words), which
is all the exact count sampler :func:`dpbook.discrete_laplace_noise` calls.

It implements numpy's documented bit-generator interface (a ``bitgen_t`` structure in a capsule
named ``"BitGenerator"``, and a ``lock``) with ``ctypes`` callbacks into Python: about 1 µs per
64-bit word, which is slow for simulation and fine for releases.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

import dpbook

__all__ = [
    "FloatingPointWarning",
    "OSRandomBits",
    "is_count_family",
    "secure_generator",
]

_U64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_U32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
_DOUBLE = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)


class _BitGen(ctypes.Structure):
    """numpy's ``bitgen_t`` (numpy/random/bitgen.h)."""

    _fields_ = [
        ("state", ctypes.c_void_p),
        ("next_uint64", _U64),
        ("next_uint32", _U32),
        ("next_double", _DOUBLE),
        ("next_raw", _U64),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_CAPSULE_NAME = b"BitGenerator"
_WORDS_PER_READ = 512  # 4 KiB of os.urandom per read


class FloatingPointWarning(UserWarning):
    """A release drawn by a floating-point sampler: its low bits can reveal the true value (Chapter 16)."""


class OSRandomBits:
    """A numpy bit generator whose 64-bit words are read from the operating system's secure source.

    Parameters
    ----------
    source : callable, optional
        ``source(n)`` returns ``n`` random bytes; ``os.urandom`` (the default) is the operating
        system's cryptographically secure source.  Another source is for tests only.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.Generator(OSRandomBits())
    >>> int(rng.integers(0, 10)) in range(10)
    True
    """

    def __init__(self, source=os.urandom):
        if not callable(source):
            raise ValueError(
                f"source must be a callable returning random bytes, got {source!r}"
            )
        self.lock = threading.Lock()
        self._source = source
        self._words = np.empty(0, dtype=np.uint64)
        self._next = 0
        self._callbacks = (
            _U64(self._uint64),
            _U32(self._uint32),
            _DOUBLE(self._double),
        )
        u64, u32, double = self._callbacks
        self._bitgen = _BitGen(None, u64, u32, double, u64)
        self.capsule = _capsule_new(ctypes.addressof(self._bitgen), _CAPSULE_NAME, None)

    def _uint64(self, _state=None):
        if self._next == self._words.size:
            data = self._source(8 * _WORDS_PER_READ)
            if len(data) != 8 * _WORDS_PER_READ:
                raise RuntimeError(
                    f"the random source returned {len(data)} bytes, not {8 * _WORDS_PER_READ}"
                )
            self._words = np.frombuffer(data, dtype=np.uint64)
            self._next = 0
        word = int(self._words[self._next])
        self._next += 1
        return word

    def _uint32(self, _state=None):
        return self._uint64() >> 32

    def _double(self, _state=None):
        return (self._uint64() >> 11) * 2.0**-53

    def __repr__(self):
        return (
            "OSRandomBits()"
            if self._source is os.urandom
            else f"OSRandomBits(source={self._source!r})"
        )


def secure_generator():
    """A ``numpy.random.Generator`` whose every random bit comes from ``os.urandom``.

    Pass it as ``rng`` to any dpbook sampler.  With the count families it makes the release exact in
    law *and* drawn from the operating system's secure source; with a continuous family it secures
    the bits but not the floating-point arithmetic that turns them into a double (Chapter 16).  It
    cannot be seeded: use an int seed where a reproducible draw is wanted.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> import dpbook
    >>> from dpbook.interop import secure_generator
    >>> k = dpbook.discrete_laplace_noise(2.0, size=3, rng=secure_generator())
    >>> k.dtype, k.shape
    (dtype('int64'), (3,))
    """
    return np.random.Generator(OSRandomBits())


_COUNT_FAMILIES = (dpbook.DiscreteLaplace, dpbook.DiscreteBIT, dpbook.DiscreteTruncated)


def is_count_family(mechanism):
    """Whether ``mechanism`` is one of dpbook's count families: integer true values, exact integer sampler.

    Raises ``ValueError`` if ``mechanism`` is not a dpbook mechanism.

    >>> import dpbook
    >>> is_count_family(dpbook.DiscreteBIT(2.0, lower=0, upper=10)), is_count_family(dpbook.BIT(1.0))
    (True, False)
    """
    if not isinstance(mechanism, dpbook.Mechanism):
        raise ValueError(
            f"mechanism must be a dpbook mechanism family (a dpbook.Mechanism), got {mechanism!r}"
        )
    return isinstance(mechanism, _COUNT_FAMILIES)


def generator_for(rng, mechanism):
    """The generator a release uses: an int seed or a ``Generator`` as SPEC 7 allows; ``None``: secure."""
    is_count_family(mechanism)
    if rng is None:
        return secure_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(
        f"rng must be an int seed >= 0, a numpy.random.Generator or None, got {rng!r}"
    )


def float_note(mechanism):
    """The sentence a user of a continuous family's adapter must read, or ``''`` for a count family."""
    if is_count_family(mechanism):
        return ""
    if isinstance(mechanism, dpbook.Rounded):
        return (
            "Rounded rounds a floating-point release: the integer has no low bits to leak, but its law "
            "is that of the floating-point sampler, which the audit of the law on the reals does not "
            "cover exactly (dpbook Chapter 16); for counts use a count family's exact sampler."
        )
    return (
        f"{type(mechanism).__name__} samples in floating point: the double it releases, and its low "
        "bits, depend on the true value beyond what the privacy map accounts for (Mironov 2012; "
        "dpbook Chapter 16). The map is exact for the mechanism's law on the reals, not for its "
        "floating-point implementation."
    )
