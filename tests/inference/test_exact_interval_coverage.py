"""The coverage of the exact interval from the family's quantiles (:class:`dpbook.ExactInterval`, issue 26).

:func:`dpbook.interval_coverage` finds the releases whose interval holds ``q`` by a search over the
doubles.  Given an :class:`~dpbook.ExactInterval` it starts that search at the family's quantiles
``ppf(α/2, q)`` and ``isf(α/2, q)``.  These tests show that the coverage is the same as the search from
nothing gives, for every continuous family of the registry at its typical and extreme cases, plain and
randomized: the same double, or (where the procedure's computed end lies within rounding of ``q``, so
that the two searches may stop at different doubles of the same switch) within ``ROUNDING``; and they
count the calls of the procedure that it saves at the typical cases.
"""

import numpy as np
import pytest
from registry import ROWS

import dpbook
from dpbook.inference import intervals


def _monotone(case):
    return dpbook.is_stochastically_increasing(case.build())[0]


#: families whose own interval is quick (a closed-form start, or a cheap law): the search from nothing
#: that the tests compare with costs seconds for the others, which run in the slow stage
QUICK = ("laplace", "bit", "truncated", "translated-ramp", "log-laplace")

#: families whose search from nothing costs over a minute a case (a law of ~2 µs a point, as the normal
#: law in log space): their typical cases only here; their extremes are swept by tests/families/ (law,
#: extremes) and their intervals' coverage by the conformance suite
TYPICAL_ONLY = ("gaussian-truncated",)

#: the continuous families' cases with an exact interval (stochastically increasing in q); the extreme
#: cases and the slow families run in the slow stage
CASES = [
    pytest.param(
        row,
        case,
        id=f"{row.name}-{case.id}",
        marks=[] if case in row.typical and row.name in QUICK else [pytest.mark.slow],
    )
    for row in ROWS
    if not row.integer_valued
    for case in (row.typical if row.name in TYPICAL_ONLY else row.cases())
    if _monotone(case)
]


def test_the_cases_cover_the_families_with_closed_forms_and_without():
    names = {p.values[0].name for p in CASES}
    assert {"laplace", "bit", "truncated", "translated-ramp", "normalized"} <= names, (
        names
    )


def _true_values(mech, case, rng, drawn=3):
    """The case's true values, the domain's finite ends, and ``drawn`` more between its values."""
    lo, hi = (float(t) for t in mech.domain)
    known = np.array([q for q in case.qs if mech.accepts(q)], dtype=float)
    ends = [t for t in (lo, hi) if np.isfinite(t) and mech.accepts(t)]
    a, b = known.min(), known.max()
    more = a + (b - a) * rng.uniform(0.0, 1.0, drawn) if b > a else np.array([])
    return np.concatenate([known, ends, more])


#: how far the two coverages may differ where the two searches stop at different doubles of the same
#: switch (the law's mass over a few doubles; 2.2e-16 seen for Normalized on two pieces at level 0.5)
ROUNDING = 1e-13


class Calls:
    """A procedure, counting the releases it is called at."""

    def __init__(self, procedure):
        self.procedure, self.points = procedure, 0

    def __call__(self, x, *v):
        self.points += np.size(x)
        return self.procedure(x, *v)


class CountedExact(dpbook.ExactInterval):
    """The exact procedure, counting the releases it is called at."""

    points = 0

    def __call__(self, x, v=None):
        self.points += np.size(x)
        return super().__call__(x, v)


@pytest.mark.parametrize(("row", "case"), CASES)
def test_same_coverage_as_the_search_from_nothing(row, case):
    mech = case.build()
    rng = np.random.default_rng([ord(c) for c in case.id])
    q = _true_values(mech, case, rng)
    # the slow families (their own intervals search, ~64 law evaluations a call): one level, the case's
    # own true values, to keep the slow stage's time
    quick = row.name in QUICK
    if not quick:
        q = _true_values(mech, case, rng, drawn=0)
    for level in (0.5, 0.99) if quick else (0.9,):
        opaque = Calls(lambda x, m=mech, lv=level: dpbook.confidence_interval(m, x, lv))
        counted = CountedExact(mech, level)
        slow = dpbook.interval_coverage(mech, opaque, q)
        fast = dpbook.interval_coverage(mech, counted, q)
        assert np.all(np.abs(slow - fast) <= ROUNDING), (level, q[slow != fast])
        if case in row.typical:
            # the quantiles place the search: fewer than half the calls of the 2 x 64 halvings (at
            # the extreme cases, a law narrower than its rounding, the quantiles say little)
            assert counted.points <= opaque.points / 2, (counted.points, opaque.points)


#: the families with point masses (randomized coverage): clamping in the quick suite, the rest slow
ATOMS = [
    pytest.param(
        *c.values, id=c.id, marks=[] if c.id == "bit-b=1,[0,2]" else [pytest.mark.slow]
    )
    for c in CASES
    if c.values[0].has_atoms
]


@pytest.mark.parametrize(("row", "case"), ATOMS)
def test_randomized_coverage_is_the_same_and_exact(row, case):
    mech = case.build()
    rng = np.random.default_rng(7)
    q = _true_values(mech, case, rng, drawn=3 if row.name in QUICK else 0)
    # the search from nothing costs ~7 s a true value for the slow families: their case's first two true
    # values (or its first and a bound), to keep the slow stage's time
    if row.name not in QUICK:
        q = q[:2]
    level = 0.9
    exact = dpbook.ExactInterval(mech, level, randomized=True)
    slow = dpbook.interval_coverage(
        mech,
        lambda x, v: dpbook.randomized_interval(mech, x, v, level),
        q,
        randomized=True,
    )
    fast = dpbook.interval_coverage(mech, exact, q, randomized=True)
    assert np.all(np.abs(slow - fast) <= ROUNDING)
    if (
        case in row.extreme
    ):  # a law narrower than the doubles: the same answer, not necessarily exact
        return
    # exact inside the domain (on a bound, where no true value passes both tests for some releases and
    # the interval is that bound alone, it covers 1 - α/2)
    lo, hi = mech.domain
    inside = (q > lo) & (q < hi)
    assert np.allclose(fast[inside], level, rtol=0, atol=1e-9)


def test_a_wrong_start_changes_the_cost_not_the_answer(monkeypatch):
    """The quantiles only place the search: started a long way off, it finds the same doubles."""
    mech = dpbook.Truncated(0.3, lower=0.0, upper=1.0)
    q = np.linspace(0.0, 1.0, 11)
    right = dpbook.interval_coverage(mech, dpbook.ExactInterval(mech, 0.9), q)
    monkeypatch.setattr(
        dpbook.ExactInterval,
        "_region",
        lambda self, q: (np.full(np.shape(q), -5.0), np.full(np.shape(q), 7.0)),
    )
    assert np.array_equal(
        dpbook.interval_coverage(mech, dpbook.ExactInterval(mech, 0.9), q), right
    )


def test_the_procedure_is_the_function_it_stands_for():
    mech = dpbook.BIT(0.2, lower=0.0, upper=1.0)
    x = np.array([0.0, 0.3, 1.0])
    a, b = dpbook.ExactInterval(mech, 0.9)(x), dpbook.confidence_interval(mech, x, 0.9)
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    r = dpbook.ExactInterval(mech, 0.9, randomized=True)(x, 0.25)
    s = dpbook.randomized_interval(mech, x, 0.25, 0.9)
    assert np.array_equal(r.low, s.low) and np.array_equal(r.high, s.high)
    assert "randomized=True" in repr(dpbook.ExactInterval(mech, 0.9, randomized=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(mechanism=1.0, level=0.9), "mechanism must be"),
        (dict(level=1.5), "level must lie in"),
        (dict(level=float("nan")), "level"),
        (dict(level=0.9, increasing="yes"), "increasing must be"),
    ],
)
def test_bad_input(kwargs, message):
    kwargs.setdefault("mechanism", dpbook.Laplace(1.0))
    with pytest.raises(ValueError, match=message):
        dpbook.ExactInterval(**kwargs)
    with pytest.raises(ValueError, match="v must be given"):
        dpbook.ExactInterval(dpbook.Laplace(1.0), 0.9, randomized=True)(0.0)
    with pytest.raises(ValueError, match="v must not be given"):
        dpbook.ExactInterval(dpbook.Laplace(1.0), 0.9)(0.0, 0.5)


def test_no_guess_for_an_opaque_procedure():
    """Any other callable is searched from nothing (the guess is the procedure's own knowledge)."""
    assert not isinstance(lambda x: x, intervals.ExactInterval)
