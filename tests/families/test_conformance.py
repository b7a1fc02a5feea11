"""Every mechanism family against the generic suites, driven by the registry (``tests/registry.py``).

As scipy's ``test_continuous_basic.py`` runs one table of distributions through the same checks, this
module runs every row of the registry through:

* the registry itself: every public family has a row;
* law identities: ``cdf + sf = 1``, ``ppf`` the generalized inverse of ``cdf``, ``mean = q + bias``,
  ``var = mse - bias^2``, ``pmf`` at the atoms equal to the cdf's jumps, ``Law.expect()`` equal to the mean;
* the extremes sweep: the extreme cases of each row (scales ``1e-300 .. 1e300``, true values to ``±1e300``,
  widths to ``1e-300``, ε ``1e-15 .. 1e6``), with every warning an error: no NaN, answers inside the
  support, and the limit the law has reached where the case knows it;
* the auditor: never below the exact loss (closed forms in the registry) or a brute-force lower bound
  over pairs of true values and events, ``exact=True`` only within ``1e-12`` (relative) of the truth,
  and otherwise a certified ``slack``;
* interval coverage: the exact interval covers at least its level (:func:`dpbook.interval_coverage`);
* the sampler: a χ² test of 10^6 seeded draws against the law's cdf, on 64 cells between its quantiles
  (slow; 10^5 draws through scipy's generic inverse; a law narrower than a million doubles, which the draws
  can only show rounded, is checked for draws outside it), and 10^4 draws against the limit of an extreme
  case (fast);
* bad input: strings, bools, object arrays and NaN are ``ValueError`` naming the parameter; a size beyond
  memory is refused naming ``size``; the auditor refuses what is not a mechanism.

Thresholds: a simulated frequency within 5 standard errors; a goodness-of-fit p-value above ``1e-6``
with fixed seeds (a correct sampler fails one of the ~120 tests with probability near ``1e-4``, and a
seeded run is reproducible: a failure is a real discrepancy, never a fluke that goes away).
"""

import math
import pathlib
import sys
import warnings

import numpy as np
import pytest

import dpbook

sys.path.insert(
    0, str(pathlib.Path(__file__).resolve().parents[1])
)  # tests/ holds the registry
from goodness import chi2_pvalue  # noqa: E402
from registry import ROWS, public_families  # noqa: E402

P = np.array([1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-6])
EXACT = 1e-12  # exact=True must mean: within this (relative) of the truth


def _param(row, case, q=None):
    ident = f"{row.name}-{case.id}" + ("" if q is None else f"-q={q!r}")
    return pytest.param(row, case, *(() if q is None else (q,)), id=ident)


TYPICAL = [_param(r, c, q) for r in ROWS for c in r.typical for q in c.qs]
# the law identities of a numerical law (quadrature, scipy's generic inverse) at its first true value only; the
# rest in the slow run
IDENTITIES = [
    p
    if (
        p.values[0].closed_form
        or (p.values[0].sampler_fast and p.values[2] == p.values[1].qs[0])
    )
    else pytest.param(*p.values, marks=pytest.mark.slow, id=p.id)
    for p in TYPICAL
]
EXTREME = [_param(r, c, q) for r in ROWS for c in r.extreme for q in c.qs]
EVERY = TYPICAL + EXTREME
# the audit of every typical case in the README's test command; at the extremes (seconds each: the search
# runs over the whole span of the doubles) in the slow run
AUDITED = [_param(r, c) for r in ROWS for c in r.typical] + [
    pytest.param(r, c, marks=pytest.mark.slow, id=f"{r.name}-{c.id}")
    for r in ROWS
    for c in r.extreme
]


def build(row, case):
    """The case's instance; a family that is not yet a :class:`dpbook.Mechanism` is an expected failure."""
    if not (isinstance(row.family, type) and issubclass(row.family, dpbook.Mechanism)):
        pytest.xfail(
            f"{row.family.__name__} is not a dpbook.Mechanism yet (issue 25, item 3)"
        )
    return case.build()


def silent(fn, *args, **kwargs):
    """Call with every warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def below(x):
    return np.nextafter(x, -np.inf)


def outputs(mech, q):
    """Outputs where the law lives: its quantiles at ``P`` (an atom is the quantile of every ``p`` its jump covers)."""
    x = np.asarray(mech.ppf(P, q), dtype=float)
    return np.unique(x)


# --- the registry ------------------------------------------------------------------------------------


def missing_rows(rows=ROWS, families=None):
    """Public families with no row in ``rows``."""
    families = public_families() if families is None else families
    covered = {row.family for row in rows}
    return sorted(f.__name__ for f in families - covered)


def test_every_public_family_has_a_row():
    assert missing_rows() == [], (
        "add a row to tests/registry.py for each of these families"
    )
    for row in ROWS:
        assert row.family.__name__ in dpbook.__all__, row.name
        assert row.typical, f"{row.name} has no typical case"
    assert len({row.name for row in ROWS}) == len(ROWS)


def test_a_family_without_a_row_is_found():
    class Orphan(dpbook.Laplace):
        pass

    assert missing_rows(families={dpbook.Laplace, dpbook.BIT, Orphan}) == ["Orphan"]
    assert missing_rows(rows=ROWS[1:], families={dpbook.Laplace, dpbook.BIT}) == [
        "Laplace"
    ]


# --- law identities ----------------------------------------------------------------------------------


@pytest.mark.parametrize("row, case, q", IDENTITIES)
def test_law_identities(row, case, q):
    mech = build(row, case)
    x = outputs(mech, q)
    F, S = np.asarray(mech.cdf(x, q)), np.asarray(mech.sf(x, q))
    assert np.all((F >= 0) & (F <= 1) & (S >= 0) & (S <= 1))
    assert np.allclose(F + S, 1.0, rtol=0, atol=1e-13), (x, F + S)
    # ppf is the generalized inverse: cdf(ppf(p)) >= p, and below ppf(p) the cdf is < p
    xp = np.asarray(mech.ppf(P, q))
    tol = 1e-9 * np.minimum(P, 1 - P) + 1e-15
    assert np.all(np.asarray(mech.cdf(xp, q)) >= P - tol), (P, mech.cdf(xp, q))
    assert np.all(np.asarray(mech.cdf(below(xp), q)) <= P + tol), (
        P,
        mech.cdf(below(xp), q),
    )
    # moments
    mean, bias, var, mse = mech.mean(q), mech.bias(q), mech.variance(q), mech.mse(q)
    sd = math.sqrt(var)
    assert math.isclose(mean, q + bias, rel_tol=1e-12, abs_tol=1e-12 * (sd + abs(q))), (
        mean,
        q + bias,
    )
    assert var >= 0 and math.isclose(
        var, mse - bias**2, rel_tol=1e-9, abs_tol=1e-12 * mse
    ), (var, mse, bias)
    lo, hi = mech.support
    assert lo <= mean <= hi
    # point masses: pmf at the atoms is the cdf's jump, and nothing else has mass
    if row.integer_valued:
        ks = np.arange(np.floor(mech.ppf(1e-12, q)), np.ceil(mech.isf(1e-12, q)) + 1)
        pmf = np.asarray(mech.pmf(ks, q))
        jumps = np.asarray(mech.cdf(ks, q)) - np.asarray(mech.cdf(ks - 1, q))
        assert np.allclose(pmf, jumps, rtol=1e-9, atol=1e-15)
        assert math.isclose(pmf.sum(), 1.0, abs_tol=1e-11)
        assert mech.pmf(ks[0] + 0.5, q) == 0.0
    elif row.has_atoms and row.has_density:
        atoms = [(float(t), float(m)) for t, m in mech.atoms(q) if m > 0]
        for t, m in atoms:
            assert math.isclose(mech.pmf(t, q), m, rel_tol=1e-14)
            jump = mech.cdf(t, q) - mech.cdf(below(t), q)
            assert math.isclose(jump, m, rel_tol=1e-9, abs_tol=1e-15), (t, jump, m)
    elif row.has_density:
        assert mech.atoms(q) == [] and np.all(np.asarray(mech.pmf(x, q)) == 0)
    # the law of one release agrees with the family, and its expectation is the mean
    law = mech.at(q)
    assert law.mean() == mean and law.var() == var
    assert math.isclose(
        law.expect(), mean, rel_tol=1e-8, abs_tol=1e-9 * (sd + abs(q)) + 1e-300
    ), (law.expect(), mean)


# --- the extremes sweep ------------------------------------------------------------------------------


@pytest.mark.parametrize("row, case, q", EXTREME)
def test_extremes(row, case, q):
    mech = build(row, case)
    lo, hi = mech.support
    mean, bias, var, mse = (
        silent(getattr(mech, name), q) for name in ("mean", "bias", "variance", "mse")
    )
    for name, v in (("mean", mean), ("bias", bias), ("variance", var), ("mse", mse)):
        assert not math.isnan(v), name
    assert lo <= mean <= hi and var >= 0 and mse >= var * (1 - 1e-12)
    tol = case.rtol * case.scale_of_x
    if case.mean is not None:
        ref = case.mean(q)
        assert abs(mean - ref) <= tol + 4 * math.ulp(ref), (mean, ref)
    x = np.asarray(silent(mech.ppf, P, q), dtype=float)
    assert not np.isnan(x).any() and np.all((x >= lo) & (x <= hi)), x
    assert np.all(np.diff(x) >= 0), x
    F, S = np.asarray(silent(mech.cdf, x, q)), np.asarray(silent(mech.sf, x, q))
    assert not (np.isnan(F).any() or np.isnan(S).any())
    assert (
        np.all((F >= 0) & (F <= 1))
        and np.all(np.diff(F) >= 0)
        and np.allclose(F + S, 1, atol=1e-12)
    )
    if case.ppf is not None:
        ref = case.ppf(P, q)
        assert np.allclose(x, ref, rtol=0, atol=tol), (x, ref)
        y = np.asarray(silent(mech.isf, 1 - P, q))
        assert np.allclose(y, ref, rtol=0, atol=tol + 1e-9 * case.scale_of_x), (y, ref)
    # the law's expectation is its mean, or a refusal: never a wrong number (issue 25)
    try:
        expected = silent(mech.at(q).expect)
    except ValueError:
        pass  # refused, with the reason (a law quadrature cannot resolve, a sum too long)
    else:
        assert math.isclose(
            expected,
            mean,
            rel_tol=1e-8,
            abs_tol=1e-9 * (math.sqrt(var) + abs(q)) + 1e-300,
        ), (expected, mean)
    n = 10_000
    draws = np.asarray(silent(mech.sample, q, n, rng=20261126), dtype=float)
    assert (
        draws.shape == (n,)
        and np.isfinite(draws).all()
        and np.all((draws >= lo) & (draws <= hi))
    )
    if (
        case.ppf is not None and not row.has_atoms
    ):  # the draws follow the limit law: frequencies within 5 SE
        p = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
        emp = np.mean(draws[:, None] <= case.ppf(p, q)[None, :], axis=0)
        assert np.all(np.abs(emp - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1 / n), (emp, p)


# --- the auditor -------------------------------------------------------------------------------------


def _pairs(mech, delta, domain, integer, neighbours="additive"):
    lo, hi = domain
    if neighbours == "log":  # |log q1 - log q2| <= delta: additive pairs in log q
        lo1, hi1 = (
            (math.log(lo) if lo > 0 else -math.inf),
            math.log(hi) if math.isfinite(hi) else math.inf,
        )
        u1, u2 = _pairs(mech, delta, (lo1, hi1), False)
        return np.exp(u1), np.exp(u2)
    lo_f = (
        lo
        if math.isfinite(lo)
        else (hi - 8 * delta if math.isfinite(hi) else -4 * delta)
    )
    hi_f = hi if math.isfinite(hi) else max(lo_f, 0.0) + 8 * delta
    u = np.unique(
        np.r_[
            np.linspace(lo_f, hi_f, 9),
            lo_f + delta * np.arange(3),
            hi_f - delta * np.arange(3),
        ]
    )
    u = u[(u >= lo) & (u <= hi)]
    if integer:
        u = np.unique(np.round(u))
        delta = max(round(delta), 1)
    q1 = np.r_[u, u]
    q2 = np.clip(np.r_[u + delta, u - delta], lo, hi)
    keep = q1 != q2
    return q1[keep], q2[keep]


GRID = np.r_[1e-6, 1e-3, np.linspace(0.02, 0.98, 25), 1 - 1e-3, 1 - 1e-6]


def brute_force_loss(
    mech, delta, domain, window=None, integer=False, neighbours="additive"
):
    """A lower bound of the privacy loss: the largest log-ratio of the probabilities of events (cells between
    quantiles of the laws, and single outputs) over a grid of neighbouring pairs.  Only cells of probability
    above ``1e-6`` count: a cell's probability is a difference of cdf values, whose rounding (``1e-16``) is
    then at most ``1e-10`` of it."""
    q1, q2 = _pairs(mech, delta, domain, integer, neighbours)
    best = -math.inf
    wlo, whi = (-math.inf, math.inf) if window is None else window
    # one grid of outputs for every pair: the quantiles of the laws at the ends and the middle of the pairs
    marks = np.unique(
        np.r_[q1[:1], q1[-1:], q1[q1.size // 2 : q1.size // 2 + 1], q2[:1], q2[-1:]]
    )
    grid = np.unique(
        np.concatenate([np.asarray(mech.ppf(GRID, u), dtype=float) for u in marks])
    )
    grid = grid[(grid >= wlo) & (grid <= whi)]
    if grid.size < 2:
        return best
    for a, b in zip(q1, q2):
        if integer:
            p1, p2 = np.asarray(mech.pmf(grid, a)), np.asarray(mech.pmf(grid, b))
        else:
            p1 = np.diff(np.asarray(mech.cdf(grid, a)))
            p2 = np.diff(np.asarray(mech.cdf(grid, b)))
        ok = (p1 > 1e-6) & (p2 > 1e-6)
        if ok.any():
            best = max(best, float(np.max(np.log(p1[ok]) - np.log(p2[ok]))))
    return best


@pytest.mark.parametrize("row, case", AUDITED)
def test_auditor_is_never_below_the_truth(row, case):
    mech = build(row, case)
    delta = case.sensitivity
    if row.audit == "unsupported":
        with pytest.raises(NotImplementedError):
            dpbook.privacy_report(mech, delta, **case.audit)
        return
    if (
        case.audit_error is not None
    ):  # refused with a ValueError, and no warning before it
        with pytest.raises(ValueError, match=case.audit_error):
            silent(dpbook.privacy_report, mech, delta, **case.audit)
        return
    report = silent(dpbook.privacy_report, mech, delta, **case.audit)
    eps, slack = report.epsilon, report.slack
    assert not math.isnan(eps) and eps >= 0 and slack >= 0
    if row.audit == "exact" and case.exact:
        assert report.exact, report
    if row.audit == "post-processing":
        assert not report.exact, report
    if case.loss is not None:
        truth = case.loss
        assert eps >= truth * (1 - 4 * np.finfo(float).eps), (
            report,
            truth,
        )  # never below the truth
        if report.exact:
            assert eps <= truth * (1 + EXACT), (report, truth)  # exact means exact
        else:
            assert eps - slack <= truth * (1 + 4 * np.finfo(float).eps), (
                report,
                truth,
            )  # the slack is certified
    if report.exact:
        assert slack <= EXACT * eps, report
    if (
        not math.isinf(eps) and eps > 1e-6
    ):  # a brute-force bound resolves losses well above the rounding
        domain = case.audit.get("domain", mech.domain)
        brute = brute_force_loss(
            mech,
            delta,
            domain,
            case.audit.get("window"),
            row.integer_valued,
            row.neighbours,
        )
        assert eps >= brute - 1e-8 * abs(brute) - 1e-9, (report, brute)


# --- interval coverage -------------------------------------------------------------------------------


FAST_COVERAGE = {
    "laplace",
    "bit",
    "truncated",
    "discrete-bit",
}  # a few seconds; every other row in the slow run
COVERAGE = [
    _param(r, c, q)
    if r.name in FAST_COVERAGE
    else pytest.param(r, c, q, marks=pytest.mark.slow, id=f"{r.name}-{c.id}-q={q!r}")
    for r in ROWS
    for c in r.typical
    for q in c.qs[:1]
]


@pytest.mark.parametrize("row, case, q", COVERAGE)
def test_exact_interval_covers_its_level(row, case, q):
    """The exact interval of a stochastically increasing family covers at least its level, at a true value
    of its domain; a family that is not (or not known to be) increasing is refused."""
    mech = build(row, case)
    increasing, why = mech.stochastic_order()
    if not increasing:
        with pytest.raises((ValueError, NotImplementedError)):
            dpbook.confidence_interval(mech, mech.ppf(0.5, q), 0.9)
        return
    cover = dpbook.interval_coverage(
        mech, lambda x: dpbook.confidence_interval(mech, x, 0.9), q
    )
    assert cover >= 0.9 - 1e-9, (cover, why)


# --- the sampler -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("row, case, q", EVERY)
def test_sampler_goodness_of_fit(row, case, q):
    mech = build(row, case)
    n = (
        10**6 if row.sampler_fast else 10**5
    )  # scipy's generic inverse: 10^5 draws take as long as 10^7 of numpy's
    draws = np.asarray(
        silent(mech.sample, q, n, rng=np.random.default_rng([25, 1000003])), dtype=float
    )
    mean, sd = mech.mean(q), math.sqrt(mech.variance(q))
    lo, hi = (
        float(v) for v in mech.ppf(np.array([0.01, 0.99]), q)
    )  # the spread, where sd underflows
    if not (row.integer_valued or max(sd, hi - lo) >= 2**20 * np.spacing(abs(mean))):
        # a law narrower than a million doubles where it lives: the draws are it rounded to the doubles, which
        # its cdf does not describe cell by cell; they must still lie where it lives (a Laplace draw stops 37
        # scales out), to the rounding
        assert np.all(np.abs(draws - mean) <= 64 * sd + 4 * np.spacing(abs(mean))), (
            mean,
            sd,
            draws,
        )
        return
    p, counts, expected = chi2_pvalue(mech, q, draws)
    assert p > 1e-6, (p, counts, expected)


def test_chi2_detects_a_wrong_sampler():
    """The goodness-of-fit check fails for draws of a law 1% wider."""
    mech = dpbook.Laplace(1.0)
    draws = dpbook.Laplace(1.01).sample(0.0, 10**6, rng=1)
    assert chi2_pvalue(mech, 0.0, draws)[0] < 1e-6
    assert chi2_pvalue(mech, 0.0, mech.sample(0.0, 10**6, rng=1))[0] > 1e-6


# --- bad input ---------------------------------------------------------------------------------------

BAD_NUMBERS = ["1", True, np.array([1.0], dtype=object), math.nan]


@pytest.mark.parametrize("row, case", [_param(r, r.typical[0]) for r in ROWS])
def test_bad_input_is_refused_naming_the_parameter(row, case):
    mech = build(row, case)
    q = case.qs[0]
    for bad in BAD_NUMBERS:
        for method in (mech.bias, mech.mean, mech.variance, mech.mse, mech.at):
            with pytest.raises(ValueError, match=r"\bq\b"):
                method(bad)
        with pytest.raises(ValueError, match=r"\bx\b"):
            mech.cdf(bad, q)
        with pytest.raises(ValueError, match=r"\bp\b"):
            mech.ppf(bad, q)
    for size in (10**13, (10**7, 10**7)):
        with pytest.raises(ValueError, match="size"):
            mech.sample(q, size, rng=1)


@pytest.mark.parametrize("thing", [object(), "laplace", dpbook.Laplace, 1.0])
def test_the_auditor_refuses_what_is_not_a_mechanism(thing):
    for audit in (dpbook.privacy_loss, dpbook.privacy_report):
        with pytest.raises(ValueError, match="mechanism"):
            audit(thing, 1.0)
