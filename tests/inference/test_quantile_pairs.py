"""Both ends of an interval at once (issue 26, point 1): a family's ``_quantiles_in_q(x, p, v_top, v_bottom)``
is its two ``_quantile_in_q`` calls (the lower tail with ``v_top``, the upper with ``v_bottom``), bit for bit.

The families that share work between the two ends (:class:`dpbook.TranslatedRamp`: the width off the atom, the
atom's positions and uniforms; :class:`dpbook.BIT`, :class:`dpbook.GaussianBIT` and :class:`dpbook.DiscreteBIT`:
the positions of the releases on the bounds and their uniforms) are compared with their own single ends over
every case of the family registry, typical and extreme, with releases on the bounds and drawn, one array of
uniforms for both ends (the randomized interval), two arrays, scalars (the plain interval), an array ``p`` and
shapes that broadcast (where the shared path steps aside).  A class that overrides one hook must override the
other, or the pair would skip its own ends.
"""

import numpy as np
import pytest
from registry import ROWS

import dpbook
from dpbook.mechanism import Mechanism


def _subclasses(cls):
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def _provider(cls, name):
    return next(k for k in cls.__mro__ if name in k.__dict__)


def test_a_class_that_pairs_the_ends_also_defines_each_end():
    classes = _subclasses(Mechanism)
    assert len(classes) >= 20
    wrong = [
        cls.__name__
        for cls in classes
        if _provider(cls, "_quantiles_in_q") is not Mechanism
        and _provider(cls, "_quantiles_in_q") is not _provider(cls, "_quantile_in_q")
    ]
    assert not wrong, (
        f"_quantile_in_q overridden below the class that pairs the ends: {wrong}"
    )


def _closed_form_cases():
    for row in ROWS:
        for case in (*row.typical, *row.extreme):
            yield pytest.param(case.build, case.qs, id=f"{row.name}-{case.id}")


def _same(a, b):
    """Bit for bit: the same doubles (NaN where NaN), the same signs of zero, the same shape."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return (
        a.shape == b.shape
        and np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a), np.signbit(b))
    )


def _releases(mech, qs, rng):
    lo, hi = mech.domain
    inside = [q for q in qs if lo <= q <= hi] or [float(np.clip(0.0, lo, hi))]
    x = np.concatenate([np.atleast_1d(mech.sample(q, 24, rng=rng)) for q in inside])
    bounds = [t for t in mech.support if np.isfinite(t)]
    return np.concatenate([x, np.repeat(bounds, 6)]) if bounds else x


def _mismatches(mech, qs):
    """The ways of calling (below) where the pair differs from the two single ends."""
    rng = np.random.default_rng(26)
    x = _releases(mech, qs, rng)
    v = rng.random(x.shape)
    v[:4] = [0.0, 1.0, 0.025, 1e-12][: v.size]
    w = rng.random(x.shape)
    x2 = x[: (x.size // 2) * 2].reshape(2, -1)
    ways = {
        "randomized: one array for both ends": (x, 0.025, v, v),
        "two arrays": (x, 0.025, v, w),
        "plain: scalars": (x, 0.025, 1.0, 0.0),
        "p = 0.3": (x, 0.3, v, v),
        "an array p": (x, np.full(x.shape, 0.025), v, v),
        "2-d releases": (x2, 0.025, x2 * 0.0 + 0.5, 0.5),
        "v broadcast": (x2, 0.025, np.full((2, 1), 0.7), np.full((2, 1), 0.7)),
        "0-d": (np.asarray(x[0]), 0.025, np.asarray(0.4), np.asarray(0.4)),
    }
    wrong = []
    for name, (xs, p, vt, vb) in ways.items():
        with np.errstate(all="ignore"):
            pair = mech._quantiles_in_q(xs, p, vt, vb)
            top = mech._quantile_in_q(xs, p, vt, False)
            bottom = None if top is None else mech._quantile_in_q(xs, p, vb, True)
        if top is None:
            if pair is not None:
                wrong.append(name)
            continue
        if pair is None or not all(
            len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))
            for got, want in zip(pair, (top, bottom))
        ):
            wrong.append(name)
    return wrong


@pytest.mark.parametrize("build, qs", list(_closed_form_cases()))
def test_both_ends_at_once_are_each_end(build, qs):
    mech = build()
    assert not _mismatches(mech, qs)


@pytest.mark.parametrize(
    "module, name, mech",
    [
        (
            "dpbook.families.postprocessing",
            "_ramp_ends",
            dpbook.TranslatedRamp(1.0, 0.5),
        ),
        (
            "dpbook._kernels.inversion",
            "_shared_positions",
            dpbook.BIT(1.0, lower=0.0, upper=2.0),
        ),
    ],
)
def test_the_comparison_sees_a_broken_pair(module, name, mech, monkeypatch):
    """A shared path that hands the lower tail's uniforms to both ends, or that misses the releases on the
    upper bound, is caught."""
    import importlib

    mod = importlib.import_module(module)
    real = getattr(mod, name)
    if name == "_ramp_ends":
        monkeypatch.setattr(
            mod, name, lambda x, p, vt, vb, *rest: real(x, p, vt, vt, *rest)
        )
    else:
        monkeypatch.setattr(
            mod, name, lambda x, p, vs, lower, top: real(x, p, vs, lower, np.inf)
        )
    assert _mismatches(mech, (0.0, 1.0))
