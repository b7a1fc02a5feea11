"""Tests of dpbook/design/private_bounds.py: laws against brute force, samplers against laws, exact audits."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpbook import (
    BIT,
    Laplace,
    approx_bounds,
    approx_bounds_law,
    approx_bounds_privacy_loss,
    best_budget_split,
    bounds_privacy_loss,
    coinpress_mean,
    coinpress_privacy_loss,
    minmax_privacy_loss,
    private_mean_mse,
    private_quantile,
    quantile_law,
    quantile_privacy_loss,
)
from dpbook.design import private_bounds as pb

MAX = np.finfo(float).max


# --- the exponential-mechanism quantile ----------------------------------------------------------


def brute_quantile_masses(x, p, epsilon, lower, upper):
    """Each interval's mass from the utility counted directly on the raw records at its midpoint."""
    x = np.asarray(x, float)
    edges = np.concatenate([[lower], np.sort(np.clip(x, lower, upper)), [upper]])
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b == a:
            out.append(0.0)
            continue
        t = 0.5 * (a + b)
        u = -abs(np.sum(x < t) - p * x.size)
        out.append((b - a) * math.exp(0.5 * epsilon * u))
    out = np.array(out)
    return out / out.sum()


def random_cases(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 8))
        x = np.round(
            rng.normal(0.0, 3.0, n), int(rng.integers(0, 2))
        )  # ties, some outside
        p = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0, rng.uniform()]))
        eps = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
        yield x, p, eps, -4.0, 5.0


def test_quantile_law_matches_brute_force_enumeration():
    for x, p, eps, lo, hi in random_cases(1, 60):
        law = quantile_law(x, p, eps, lo, hi)
        np.testing.assert_allclose(
            law.masses,
            brute_quantile_masses(x, p, eps, lo, hi),
            rtol=1e-12,
            atol=1e-300,
        )
        # the density, counted directly, integrates to the cdf
        t = np.sort(np.random.default_rng(2).uniform(lo, hi, 5))
        for a, b in zip(t[:-1], t[1:]):
            pieces = np.unique(np.concatenate([[a, b], np.clip(x, a, b)]))
            mass = sum(
                integrate.quad(lambda s: math.exp(law.logpdf(s)), c, d)[0]
                for c, d in zip(pieces[:-1], pieces[1:])
            )
            assert law.cdf(b) - law.cdf(a) == pytest.approx(mass, rel=1e-9, abs=1e-14)
        assert law.cdf(lo - 1) == 0.0 and law.cdf(hi) == 1.0
        assert law.logpdf(hi + 1) == -np.inf


def test_quantile_law_ties_have_no_mass_and_extremes_stay_finite():
    law = quantile_law([1.0, 1.0, 1.0, 3.0], 0.5, 2.0, 0.0, 4.0)
    assert law.masses[1] == 0.0 and law.masses[2] == 0.0
    for x in ([MAX], [-MAX, MAX], [1e300, -1e300, 5.0]):
        law = quantile_law(x, 0.5, 1e6, -MAX, MAX)
        assert np.isfinite(law.log_normalizer) and law.masses.sum() == pytest.approx(
            1.0
        )
        draws = private_quantile(x, 0.5, 1e6, -MAX, MAX, size=50, rng=0)
        assert np.isfinite(draws).all() and (np.abs(draws) <= MAX).all()
    tiny = quantile_law([1.0, 2.0], 0.5, 1e-300, 0.0, 4.0)  # no preference: uniform
    np.testing.assert_allclose(tiny.masses, [0.25, 0.25, 0.5])
    huge = quantile_law(
        [1.0, 2.0, 3.0], 0.5, 1e300, 0.0, 4.0
    )  # all mass on the median gap
    np.testing.assert_allclose(huge.masses, [0.0, 0.5, 0.5, 0.0])


def test_quantile_sampler_matches_the_law_chi_square():
    x = np.array([0.3, 0.3, 1.0, 1.7, 2.0, 2.2, 4.5])
    law = quantile_law(x, 0.4, 1.5, -1.0, 5.0)
    draws = private_quantile(x, 0.4, 1.5, -1.0, 5.0, size=40_000, rng=11)
    k = np.clip(np.searchsorted(law.edges, draws, side="right") - 1, 0, x.size)
    keep = law.masses > 0
    observed = np.bincount(k, minlength=x.size + 1)
    assert observed[~keep].sum() == 0  # never inside a tie
    expected = law.masses[keep] * draws.size
    assert stats.chisquare(observed[keep], expected).pvalue > 1e-4
    # uniform within each interval
    frac = (draws - law.edges[k]) / (law.edges[k + 1] - law.edges[k])
    assert stats.kstest(frac, "uniform").pvalue > 1e-4


def brute_quantile_loss(x, p, eps, lo, hi):
    """sup over a grid of inserted values ``y`` (and points next to every record) and of outputs
    (a grid, and points next to every record and next to ``y``)."""
    x = np.asarray(x, float)
    law = quantile_law(x, p, eps, lo, hi)
    near = np.clip(np.concatenate([x - 1e-9, x + 1e-9, [lo + 1e-9, hi - 1e-9]]), lo, hi)
    ts = np.unique(
        np.concatenate([np.linspace(lo, hi, 401), near, x - 5e-10, x + 5e-10])
    )
    ys = np.unique(np.concatenate([np.linspace(lo, hi, 61), near]))
    best = 0.0
    for i in range(x.size):
        for y in ys:
            z = x.copy()
            z[i] = y
            t = np.clip(np.concatenate([ts, [y - 5e-10, y + 5e-10]]), lo, hi)
            other = quantile_law(z, p, eps, lo, hi).logpdf(t)
            best = max(best, float(np.max(np.abs(law.logpdf(t) - other))))
    return best


def test_quantile_audit_is_the_supremum_over_neighbours():
    for x, p, eps, lo, hi in itertools.islice(random_cases(3, 40), 6):
        x = x[:4]
        audit = quantile_privacy_loss(x, p, eps, lo, hi)
        brute = brute_quantile_loss(x, p, eps, lo, hi)
        assert brute <= audit.epsilon + 1e-9  # the enumeration misses no neighbour
        assert (
            audit.epsilon <= brute + 1e-6
        )  # and finds nothing a neighbour does not approach
        assert audit.epsilon <= audit.claimed + 1e-12
        assert audit.exact
        # the witness: the neighbour's law at the output is that far away (up to the limit)
        got = abs(
            quantile_law(x, p, eps, lo, hi).logpdf(audit.output)
            - quantile_law(audit.neighbour, p, eps, lo, hi).logpdf(audit.output)
        )
        assert got <= audit.epsilon + 1e-9


def test_quantile_audit_at_the_extreme_levels_is_half_the_claim():
    # p = 0 or 1: the utility is monotone in t; the loss is exactly ε/2 here (see the report)
    for x in ([1.0, 2.0, 3.0], [0.5, 0.5, 4.0, 4.5]):
        for p in (0.0, 1.0):
            assert quantile_privacy_loss(x, p, 1.3, 0.0, 5.0).epsilon == pytest.approx(
                0.65
            )
    # SmartNoise's quantile weights exp(-ε|k - p n|): ours at 2ε; its loss can exceed its ε
    smartnoise = quantile_privacy_loss([1.0, 2.0, 3.0, 4.0], 0.5, 2 * 1.0, 0.0, 5.0)
    assert smartnoise.epsilon > 1.0


def test_quantile_audit_refuses_large_inputs():
    with pytest.raises(ValueError, match="x: the exact audit"):
        quantile_privacy_loss(np.arange(501.0), 0.5, 1.0, 0.0, 600.0)


# --- SmartNoise's log-binned histogram -----------------------------------------------------------


def brute_approx_law(counts, scale, thresholds):
    """Enumerate the regions of every noisy count between SmartNoise's thresholds; apply the selection."""
    levels = np.concatenate(
        [[np.inf], thresholds, [-np.inf]]
    )  # region r is (levels[r+1], levels[r]]
    inner = 0.5 * (levels[1:-2] + levels[2:-1])
    reps = np.concatenate([[levels[1] + 1], inner, [levels[-2] - 1]])
    cdf = stats.laplace(counts[:, None], scale).cdf
    region_prob = cdf(levels[None, :-1]) - cdf(levels[None, 1:])  # (bins, regions)
    out = {}
    for regions in itertools.product(range(reps.size), repeat=counts.size):
        prob = np.prod(region_prob[np.arange(counts.size), regions])
        key = pb._select(reps[list(regions)], thresholds)
        out[key] = out.get(key, 0.0) + prob
    return out


def test_approx_bounds_law_matches_enumeration_of_regions():
    x = [-1.5, 0.2, 0.7, 3.0, 3.0]  # bins of [-4, -2, -1, 0, 1, 2, 4]: two per side
    law = approx_bounds_law(x, 0.7, base=2.0, bins=2)
    brute = brute_approx_law(law.counts, law.scale, law.thresholds)
    assert law.thresholds.size == 8  # f = 1e-8 .. 1e-1 <= 1/(2N) = 1/8
    for (a, b), prob in ((k, v) for k, v in brute.items() if k is not None):
        assert math.exp(law.log_pmf[a, b]) == pytest.approx(prob, rel=1e-9, abs=1e-15)
    assert math.exp(law.log_none) == pytest.approx(brute[None], rel=1e-9)
    total = np.exp(law.log_pmf[np.isfinite(law.log_pmf)]).sum() + math.exp(law.log_none)
    assert total == pytest.approx(1.0, abs=1e-12)
    assert law.lower_pmf.sum() == pytest.approx(1 - math.exp(law.log_none))
    # the marginals: P(lowest bin over the first threshold passed = k), and from the top
    for k in range(law.counts.size):
        low = sum(v for key, v in brute.items() if key is not None and key[0] == k)
        high = sum(v for key, v in brute.items() if key is not None and key[1] == k)
        assert law.lower_pmf[k] == pytest.approx(low, rel=1e-9, abs=1e-15)
        assert law.upper_pmf[k] == pytest.approx(high, rel=1e-9, abs=1e-15)


def test_approx_bounds_sampler_matches_the_law():
    x = [-1.5, 0.2, 0.7, 3.0, 3.0, 3.5]
    law = approx_bounds_law(x, 2.0, base=2.0, bins=2)
    gen = np.random.default_rng(5)
    draws = [approx_bounds(x, 2.0, base=2.0, bins=2, rng=gen) for _ in range(6000)]
    outcomes = {}
    for d in draws:
        outcomes[d] = outcomes.get(d, 0) + 1
    keys = [(a, b) for a in law.edges[:-1] for b in law.edges[1:] if a < b] + [
        (None, None)
    ]
    probs = np.array(
        [math.exp(law.log_none) if k[0] is None else law.pmf(*k) for k in keys]
    )
    assert probs.sum() == pytest.approx(1.0)
    big = probs * len(draws) >= 5
    observed = np.array([outcomes.get(k, 0) for k in keys])
    pooled_obs = np.append(observed[big], observed[~big].sum())
    pooled_exp = np.append(probs[big], probs[~big].sum()) * len(draws)
    assert observed[~big].sum() <= 10  # rare outcomes stay rare
    pooled_obs, pooled_exp = pooled_obs[pooled_exp > 0], pooled_exp[pooled_exp > 0]
    assert stats.chisquare(pooled_obs, pooled_exp).pvalue > 1e-4


def test_approx_bounds_bins_are_smartnoise_bins():
    edges = pb._approx_bins(2.0, 64)
    assert edges.size == 129 and edges[0] == -(2.0**63) and edges[-1] == 2.0**63
    counts = pb._bin_counts(
        np.array([-(2.0**70), -1.0, -0.0, 0.5, 1.0, 3.0, 2.0**70]), edges
    )
    got = {int(i): int(c) for i, c in enumerate(counts) if c}
    assert got == {0: 1, 63: 1, 64: 2, 65: 1, 66: 1, 127: 1}
    # SmartNoise's first threshold for ε = 1 (scale 1, add/remove): -log(2 - 2 (1 - 1e-8)^(1/127))
    k = pb._thresholds(128, 1.0)
    assert k[0] == pytest.approx(-math.log(2 - 2 * (1 - 1e-8) ** (1 / 127)))
    assert k.size == 6


@pytest.mark.parametrize(
    "x, eps",
    [([-1.5, 0.2, 0.7, 3.0], 1.0), ([1.5, -0.5, -0.5, -0.5, 0.5, -1.5], 3.0)],
)
def test_approx_audit_matches_data_level_neighbours(x, eps):
    x = np.array(x)
    audit = approx_bounds_privacy_loss(x, eps, bins=2)
    law = approx_bounds_law(x, eps, bins=2)
    fin = np.isfinite(law.log_pmf)
    best = 0.0
    for i in range(x.size):  # replace each record by a value in each bin
        for y in (-3.0, -1.5, -0.5, 0.5, 1.5, 3.0):
            z = x.copy()
            z[i] = y
            other = approx_bounds_law(z, eps, bins=2)
            best = max(
                best,
                np.abs(law.log_pmf[fin] - other.log_pmf[fin]).max(),
                abs(law.log_none - other.log_none),
            )
    assert audit.epsilon == pytest.approx(best, rel=1e-12)
    assert audit.epsilon <= audit.claimed * (1 + 1e-12)
    add = approx_bounds_privacy_loss(x, eps, bins=2, relation="add_remove")
    assert add.epsilon <= add.claimed * (1 + 1e-12)


def test_audits_attain_or_approach_the_claim():
    # the histogram: a unit moved between two bins far in the tails of the noise, ratio e^{2/s} = e^ε
    audit = approx_bounds_privacy_loss([3.0, 5.0, 6.0, 7.0] * 25, 1.0, bins=8)
    assert audit.epsilon == pytest.approx(1.0, rel=1e-12)
    # the quantile: the density ratio and the normalizers' ratio are never both extreme, but the
    # loss approaches ε as ε grows (0.84 ε at ε = 1, 0.9985 ε at ε = 17.9 on this data set)
    x = [0.8, 5.65, 3.93, 1.19, 0.81, 4.7, 1.36, 2.67]
    ratios = [
        quantile_privacy_loss(x, 0.25, e, 0.0, 10.0).epsilon / e for e in (1.0, 17.9)
    ]
    assert 0.84 < ratios[0] < 0.85 and 0.998 < ratios[1] < 1.0


def test_smartnoise_scale_exceeds_its_claim_under_replace_one():
    x = [0.5] * 30  # every record in [0, 1): moving one changes two counts by 1
    ours = approx_bounds_privacy_loss(x, 1.0, bins=4)
    theirs = approx_bounds_privacy_loss(x, 1.0, bins=4, calibration="add_remove")
    assert ours.epsilon <= 1.0 + 1e-12 < theirs.epsilon <= 2.0 + 1e-12


# --- CoinPress -----------------------------------------------------------------------------------


def test_coinpress_scales_and_intervals():
    x = np.random.default_rng(0).normal(3.0, 2.0, 500)
    out = coinpress_mean(x, 1e9, -1000.0, 1000.0, sigma=2.0, steps=3, rng=1)
    assert out.estimate == pytest.approx(np.clip(x, *out.intervals[2]).mean(), abs=1e-4)
    assert out.intervals.shape == (4, 2) and out.epsilon == pytest.approx(1e9)
    # the final interval is the release ± (noise quantile + sampling term + spread)
    b = (out.intervals[2, 1] - out.intervals[2, 0]) / x.size / out.epsilons[2]
    radius = b * math.log(2 * 3 / 0.01) + 2 * math.sqrt(
        2 * math.log(4 * 3 / 0.01) / 500
    )
    radius += 2 * math.sqrt(2 * math.log(2 * 500 / 0.01))
    assert out.upper - out.estimate == pytest.approx(radius)


def test_coinpress_noise_has_the_laplace_scale():
    x = np.random.default_rng(0).normal(0.0, 1.0, 200)
    draws = np.array(
        [
            coinpress_mean(x, 0.5, -8.0, 8.0, sigma=1.0, steps=1, rng=s).estimate
            for s in range(4000)
        ]
    )
    b = 16.0 / 200 / 0.5
    noise = draws - np.clip(x, -8, 8).mean()
    assert stats.kstest(noise, stats.laplace(0, b).cdf).pvalue > 1e-4


def test_coinpress_covers_normal_data():
    hits = 0
    for seed in range(200):
        x = np.random.default_rng(seed).normal(10.0, 1.0, 300)
        out = coinpress_mean(x, 1.0, -50.0, 50.0, sigma=1.0, rng=seed + 1000)
        hits += out.lower <= x.min() and x.max() <= out.upper
    assert hits >= 200 * 0.99 - 5 * math.sqrt(200 * 0.99 * 0.01)


def test_coinpress_privacy_is_a_composition_bound():
    audit = coinpress_privacy_loss(1.2, steps=4, split=[1, 1, 2, 4])
    assert audit.epsilon == pytest.approx(1.2) and not audit.exact
    assert bounds_privacy_loss(
        "coinpress", None, 1.2, steps=4
    ).epsilon == pytest.approx(1.2)


# --- the peers' practice -------------------------------------------------------------------------


def test_minmax_bounds_have_infinite_loss():
    x = np.array([1.0, 2.0, 5.0, 3.0])
    audit = minmax_privacy_loss(x, 1.0)
    assert audit.epsilon == math.inf and np.sum(audit.neighbour != x) == 1
    a, b = audit.output
    n = x.size
    law_x = BIT(1.0 * (5 - 1) / n, lower=1.0, upper=5.0)
    p_x = law_x.cdf(b, x.mean()) - law_x.cdf(a, x.mean())
    assert p_x > 0 and law_x.pmf(5.0, x.mean()) > 0  # BIT's atom at max(x)
    z = audit.neighbour
    law_z = BIT((z.max() - z.min()) / n, lower=z.min(), upper=z.max())
    assert law_z.cdf(b, z.mean()) - law_z.cdf(a, z.mean()) == 0.0
    tied = minmax_privacy_loss([1.0, 5.0, 5.0], 1.0)
    assert tied.epsilon == math.inf and tied.output == (5.0, 9.0)
    assert bounds_privacy_loss("minmax", x, 1.0).epsilon == math.inf
    # a far tail: the event's mass under x is e^-130, not rounded to 0
    far = minmax_privacy_loss(np.random.default_rng(1).lognormal(0.0, 1.0, 200), 1.0)
    assert far.epsilon == math.inf and "= -129.59" in far.note


# --- end to end ----------------------------------------------------------------------------------


def independent_pipeline(data, n, epsilon, share, reps, seed, p_hi, family=None):
    """Draw records, a private upper quantile, clip, mean, a real release: squared errors."""
    gen = np.random.default_rng(seed)
    mu = data.mean()
    out = np.empty(reps)
    for r in range(reps):
        x = data.rvs(size=n, random_state=gen)
        hi = private_quantile(x, p_hi, share * epsilon, 0.0, 50.0, rng=gen)
        b = hi / n / ((1 - share) * epsilon)
        m = np.clip(x, 0.0, hi).mean()
        if family is None:
            release = m + gen.laplace(0, b)
        else:
            release = family(b, lower=0.0, upper=hi).sample(m, rng=gen)
        out[r] = (release - mu) ** 2
    return out


@pytest.mark.parametrize("family", [Laplace, BIT])
def test_private_mean_mse_matches_an_independent_simulation(family):
    data = stats.expon()
    ours = private_mean_mse(
        data,
        100,
        2.0,
        bounds_share=0.3,
        lower=0.0,
        upper=50.0,
        quantiles=(None, 0.9),
        oracle_lower=0.0,
        family=family,
        reps=400,
        rng=3,
    )
    other = independent_pipeline(
        data, 100, 2.0, 0.3, 400, 99, 0.9, None if family is Laplace else family
    )
    se = math.hypot(ours.se, other.std(ddof=1) / math.sqrt(other.size))
    assert abs(ours.mse - other.mean()) < 5 * se
    assert ours.simulated and ours.oracle_mse > 0 and ours.oracle_lower == 0.0
    assert ours.oracle_lower < ours.oracle_upper


def test_end_to_end_is_exact_when_the_bounds_are_certain():
    # 400 records in the bin [4, 8) (N(6, 0.3²) leaves it with probability 3e-11): at ε₁ = 0.18
    # (noise scale 11) the histogram returns (4, 8) except with probability < 1e-8, and clipping to
    # [4, 8] changes nothing: the MSE is then exactly Var X/n + 2 b² with b = (8 - 4)/(n ε₂)
    data = stats.norm(6.0, 0.3)
    r = private_mean_mse(
        data,
        400,
        0.3,
        method="approx_bounds",
        bounds_share=0.6,
        lower=-100.0,
        upper=100.0,
        reps=400,
        rng=0,
    )
    b = 4.0 / (400 * 0.3 * 0.4)
    assert abs(r.mse - (data.var() / 400 + 2 * b * b)) < 5 * r.se


def test_private_mean_mse_other_methods():
    data = stats.lognorm(0.5)
    for method, extra in (
        ("approx_bounds", {}),
        ("coinpress", {"sigma": 1.0, "steps": 2}),
    ):
        r = private_mean_mse(
            data,
            200,
            1.0,
            method=method,
            lower=0.0,
            upper=50.0,
            oracle_lower=0.0,
            reps=200,
            rng=1,
            **extra,
        )
        assert np.isfinite(r.mse) and r.se > 0
        assert (
            r.mse > r.oracle_mse - 5 * r.se
        )  # a fixed oracle clip with the whole ε is hard to beat


def test_best_budget_split_holds_on_fresh_random_numbers():
    kw = dict(lower=0.0, upper=50.0, quantiles=(None, 0.9), oracle_lower=0.0, reps=200)
    shares = [0.02, 0.2, 0.9]
    split = best_budget_split(stats.expon(), 100, 1.0, shares=shares, rng=0, **kw)
    fresh = best_budget_split(stats.expon(), 100, 1.0, shares=shares, rng=1, **kw)
    best = shares.index(split.best_share)
    for k in range(
        len(shares)
    ):  # the choice is no worse than any other, at 5 SE of a difference
        assert fresh.mse[best] <= fresh.mse[k] + 5 * fresh.se_difference[best] + 1e-15
    assert split.se_difference[best] == 0.0
    assert (split.se_difference <= split.se + 1e-12).any()


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: quantile_law([], 0.5, 1.0, 0.0, 1.0), "x"),
        (lambda: quantile_law([np.nan], 0.5, 1.0, 0.0, 1.0), "x"),
        (lambda: quantile_law([1.0], 1.5, 1.0, 0.0, 1.0), "p"),
        (lambda: quantile_law([1.0], 0.5, 0.0, 0.0, 1.0), "epsilon"),
        (lambda: quantile_law([1.0], 0.5, 1.0, -np.inf, 1.0), "lower"),
        (lambda: quantile_law([1.0], 0.5, 1.0, 2.0, 1.0), "lower"),
        (lambda: private_quantile([1.0], 0.5, 1.0, 0.0, 2.0, size=-1), "size"),
        (lambda: approx_bounds([1.0], 1.0, base=1.0), "base"),
        (lambda: approx_bounds([1.0], 1.0, bins=1), "bins"),
        (lambda: approx_bounds([1.0], 1.0, base=10.0, bins=400), "base"),
        (lambda: approx_bounds([1.0], 1.0, relation="additive"), "relation"),
        (
            lambda: approx_bounds_privacy_loss([1.0], 1.0, calibration="log"),
            "calibration",
        ),
        (
            lambda: private_mean_mse(stats.expon(), 10, 1.0, lower=0, upper=1, rng=-1),
            "rng",
        ),
        (lambda: coinpress_mean([1.0], 1.0, 0.0, 2.0, sigma=0.0), "sigma"),
        (lambda: coinpress_mean([1.0], 1.0, 0.0, 2.0, sigma=1.0, steps=0), "steps"),
        (lambda: coinpress_mean([1.0], 1.0, 0.0, 2.0, sigma=1.0, beta=1.0), "beta"),
        (
            lambda: coinpress_mean([1.0], 1.0, 0.0, 2.0, sigma=1.0, split=[1, 2]),
            "split",
        ),
        (lambda: minmax_privacy_loss([2.0, 2.0], 1.0), "x"),
        (lambda: minmax_privacy_loss([1.0, 2.0], 1.0, family="BIT"), "family"),
        (lambda: bounds_privacy_loss("max", [1.0], 1.0), "method"),
        (
            lambda: private_mean_mse(
                stats.expon(), 10, 1.0, method="x", lower=0, upper=1
            ),
            "method",
        ),
        (
            lambda: private_mean_mse(
                stats.expon(), 10, 1.0, bounds_share=1.0, lower=0, upper=1, reps=2
            ),
            "bounds_share",
        ),
        (
            lambda: private_mean_mse(
                stats.expon(), 10, 1.0, family=Laplace(1.0), lower=0, upper=1, reps=2
            ),
            "family",
        ),
        (
            lambda: private_mean_mse(
                stats.expon(), 10, 1.0, lower=0, upper=1, quantiles=(None, None), reps=2
            ),
            "quantiles",
        ),
        (
            lambda: best_budget_split(
                stats.expon(), 10, 1.0, shares=[0.0], lower=0, upper=1
            ),
            "shares",
        ),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
