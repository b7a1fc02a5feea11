"""dpbook._kernels.exact_sampling: the exact discrete Laplace sampler.

Piece by piece, each building block's law is computed EXACTLY (as a ``Fraction``) by enumerating
every outcome of its random integers with a fake generator (depth-first over all values of every
``integers`` call, each path replayed from the start), and compared with its target: exactly with
the finite partial sum the enumeration covers where that sum is known (Algorithm 1), otherwise within
the enumeration's truncation bound (the total probability of the pruned paths, stated in each test).
As a whole, χ² goodness of fit against the pmf on 10^6 draws over a grid of scales from 0.08 to
2·10^4, and a sampler with its scale off by 1% fails that same test.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook import discrete_laplace_noise
from dpbook._kernels import exact_sampling as es

# --- exhaustive enumeration of a sampler's random integers ---------------------------------------


class _NeedDraw(Exception):
    """The replayed path is exhausted: the sampler asks for one more integer in [0, high)."""

    def __init__(self, high):
        self.high = high


class _ReplayGenerator:
    """Answers ``integers(low, high, size)`` from a fixed path of values; has no other method."""

    def __init__(self, path):
        self.path = path
        self.pos = 0

    def integers(self, low, high, size=None):
        assert np.ndim(low) == 0 and np.ndim(high) == 0, (
            "the samplers draw with scalar bounds"
        )
        low, high = int(low), int(high)
        count = 1 if size is None else int(np.prod(size))
        values = []
        for _ in range(count):
            if self.pos == len(self.path):
                raise _NeedDraw(high - low)
            value, width = self.path[self.pos]
            assert width == high - low, (
                "the sampler is not deterministic given its draws"
            )
            values.append(low + value)
            self.pos += 1
        return np.array(values, dtype=np.int64).reshape(() if size is None else size)


def enumerate_law(sampler, *, max_draws=None, min_prob=Fraction(0), cuts=None):
    """Exact law of ``sampler(rng)`` over all its random integers, as ``({outcome: P}, pruned)``.

    With ``cuts=None`` every value of every draw is its own branch.  With a set of integers
    ``cuts``, the values of a draw from ``[0, high)`` are grouped into the runs between the cuts,
    each run explored once through its first value with the run's probability: exact when the
    sampler only ever compares that draw with numbers in ``cuts`` (a claim the ungrouped
    building-block tests support: their draws are only compared with ``a``).

    Every path of values is explored; a path that needs one more integer is pruned (its
    probability added to ``pruned``) when it has ``max_draws`` already or its probability is below
    ``min_prob``.
    The law of the sampler is therefore ``P(outcome) ∈ [law[outcome], law[outcome] + pruned]``.
    """
    law, pruned = {}, Fraction(0)
    stack = [((), Fraction(1))]
    while stack:
        path, prob = stack.pop()
        try:
            outcome = sampler(_ReplayGenerator(path))
        except _NeedDraw as need:
            if (max_draws is not None and len(path) >= max_draws) or prob < min_prob:
                pruned += prob
                continue
            high = need.high
            starts = sorted({0} | {t for t in (cuts or range(high)) if 0 < t < high})
            for lo, hi in zip(starts, starts[1:] + [high]):
                stack.append((path + ((lo, high),), prob * Fraction(hi - lo, high)))
            continue
        key = tuple(np.asarray(outcome).ravel().tolist())
        law[key] = law.get(key, Fraction(0)) + prob
    assert sum(law.values()) + pruned == 1
    return law, pruned


def _alternating_exp(gamma, rounds):
    """P(Algorithm 1 returns 1 within its first ``rounds`` rounds), exactly.

    Round k ends with probability γ^{k-1}/(k-1)! − γ^k/k! and returns 1 iff k is odd, so the
    sum over odd k <= rounds telescopes to Σ_{j <= J} (-γ)^j / j! with J the largest odd number
    <= rounds.
    """
    last = rounds if rounds % 2 else rounds - 1
    return sum(
        ((-gamma) ** j / math.factorial(j) for j in range(last + 1)), Fraction(0)
    )


# --- Algorithm 1: Bernoulli(exp(-γ)) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "a, c, max_draws",
    [(0, 1, 6), (1, 1, 7), (1, 2, 6), (2, 3, 5), (3, 3, 6), (1, 5, 4)],
)
def test_bernoulli_exp_fraction_is_exact(a, c, max_draws):
    """P(1) is exactly the partial sum of exp(-γ) = Σ (-γ)^j/j! that the unpruned paths cover.

    The paths that end by round J carry exactly :func:`_alternating_exp` (γ, J) of P(1), and the
    pruned paths carry γ^J/J!: the truncation bound.  (With a = c round 1 needs no draw.)
    """
    gamma = Fraction(a, c)
    law, pruned = enumerate_law(
        lambda rng: es._bernoulli_exp_fraction(rng, 1, a, c), max_draws=max_draws
    )
    rounds = max_draws + 1 if a == c else max_draws
    if a == 0:
        rounds = 1  # the first draw always ends it
    assert law.get((True,), 0) == _alternating_exp(gamma, rounds)
    assert pruned == gamma**rounds / math.factorial(rounds)
    assert (
        abs(float(law.get((True,), 0)) - math.exp(-float(gamma)))
        <= float(pruned) + 1e-15
    )


@pytest.mark.parametrize("a, c", [(1, 2), (2, 2), (2, 3)])
def test_bernoulli_exp_fraction_split_draws_are_exact(monkeypatch, a, c):
    """Where c·k would pass the int64 range the draw is split into Bernoulli(a/c)·Bernoulli(1/k).

    The int64 limit is lowered to 7 so the split happens from a small round on, and the split
    rounds are enumerated exactly: the law is the same partial sum as without the split.
    """
    monkeypatch.setattr(es, "_INT64_MAX", 7)
    highs = []

    def sampler(rng):
        real = rng.integers

        def recording(low, high, size=None):
            highs.append(int(high))
            return real(low, high, size)

        rng.integers = recording
        return es._bernoulli_exp_fraction(rng, 1, a, c)

    law, pruned = enumerate_law(sampler, max_draws=8)
    assert max(highs) <= 7  # no draw asked for c·k above the (lowered) limit
    gamma = Fraction(a, c)
    rounds = {(1, 2): 5, (2, 2): 6, (2, 3): 5}[(a, c)]  # the rounds that fit in 8 draws
    assert law.get((True,), 0) == _alternating_exp(gamma, rounds)
    assert pruned == gamma**rounds / math.factorial(rounds)


@pytest.mark.parametrize(
    "m, num, den, min_prob",
    [
        (2, 5, 2, Fraction(1, 10**5)),
        (3, 3, 1, Fraction(1, 20000)),
        (2, 7, 3, Fraction(1, 10**5)),
    ],
)
def test_truncated_geometric_is_exact_within_truncation(m, num, den, min_prob):
    """R on {0..m-1} with P(R=r) ∝ exp(-r·den/num): every enumerated P(r) within the pruned mass.

    The pruned mass (the bound) is 1.1e-3, 1.8e-2 and 1.3e-3 for the three cases.
    """
    cuts = set(range(1, m)) | {
        u * den for u in range(m)
    }  # every U; each U·den threshold
    law, pruned = enumerate_law(
        lambda rng: es._truncated_geometric(rng, 1, m, num, den),
        min_prob=min_prob,
        cuts=cuts,
    )
    weights = [math.exp(-r * den / num) for r in range(m)]
    for r in range(m):
        target = weights[r] / sum(weights)
        p = law.get((r,), Fraction(0))
        assert float(p) <= target + 1e-15 and target <= float(p + pruned) + 1e-15
    assert set(law) <= {(r,) for r in range(m)}
    assert pruned < Fraction(1, 50)


# --- exact thresholds: brackets of exp(-p/q) and the floors ⌊2^w s_g⌋ --------------------------------


def _decimal_s(g, num, den, m, digits=80):
    """s_g = 2α/(1 + α) · α^(m·g), α = exp(-den/num), by the decimal module (an independent method)."""
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        alpha = (-decimal.Decimal(den) / decimal.Decimal(num)).exp()
        power = (-decimal.Decimal((1 + m * g) * den) / decimal.Decimal(num)).exp()
        return 2 * power / (1 + alpha)


def _decimal_floor(g, bits, num, den, m):
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        x = _decimal_s(g, num, den, m, digits=100) * (decimal.Decimal(2) ** bits)
        floor = int(x)
        # well determined: 100 significant digits, and no integer within 10^-80 relative of x
        assert min(x - floor, floor + 1 - x) > x * decimal.Decimal(10) ** -80
        return floor


@pytest.mark.parametrize(
    "p, q, prec",
    [
        (1, 1, 64),
        (1, 3, 100),
        (7, 2, 90),
        (0, 5, 20),
        (10**6, 3, 200),
        (5, 2**61 + 1, 70),
    ]
    + [
        (int(p), int(q), 80)
        for p, q in np.random.default_rng(3).integers(1, 10**9, (6, 2))
    ],
)
def test_exp_bracket_holds_the_value_and_is_tight(p, q, prec):
    """lo <= 2^prec e^{-p/q} <= hi with hi - lo <= 2, against the decimal module at 100 digits."""
    lo, hi = es._exp_neg(p, q, prec)
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        x = (-decimal.Decimal(p) / decimal.Decimal(q)).exp() * decimal.Decimal(
            2
        ) ** prec
    assert lo <= x <= hi and 0 <= hi - lo <= 2, (lo, x, hi)


@pytest.mark.parametrize(
    "scale", [Fraction(1), Fraction(7, 3), 0.3, 17.3, Fraction(10**4), 2.0**52, 1e-3]
)
def test_thresholds_are_the_exact_floors(scale):
    """Every table entry is ⌊2^63 s_g⌋ computed independently (decimal, 100 digits), and the table
    ends where the floors reach 0; the exact fallback agrees too."""
    num, den = es._exact_ratio(scale)
    m = max(1, num // (den * es._BLOCK))
    table = es._Table(num, den, m, 63, 12)
    expected = []
    while (t := _decimal_floor(len(expected), 63, num, den, m)) > 0:
        expected.append(t)
    assert table.thresholds.tolist() == expected
    for g in (0, len(expected) // 2, len(expected)):
        assert es._threshold_floor(g, 63, num, den, m) == _decimal_floor(
            g, 63, num, den, m
        )
        assert es._threshold_floor(g, 126, num, den, m) == _decimal_floor(
            g, 126, num, den, m
        )


class _FixedWords:
    """A generator whose ``integers(-2**63, 2**63, size)`` returns given words (and nothing else)."""

    def __init__(self, words):
        self.words = np.asarray(words, dtype=np.int64)

    def integers(self, low, high, size=None):
        assert (low, high, size) == (-(2**63), 2**63, self.words.size)
        return self.words


@pytest.mark.parametrize("scale", [Fraction(1), 0.3, 17.3, Fraction(10**4)])
def test_guide_table_count_is_the_count_of_thresholds_above(scale):
    """The two-lookup count equals #{g : T_g > U} at every threshold, its neighbours, every bucket
    edge and random words, for both signs (ties excluded: they read more words)."""
    num, den = es._exact_ratio(scale)
    m = max(1, num // (den * es._BLOCK))
    table = es._table(num, den, m, 63, 12)
    t = table.thresholds
    edges = np.arange(1, 1 << 12, dtype=np.int64) << np.int64(51)
    u = np.concatenate(
        [
            t - 1,
            t + 1,
            edges,
            edges - 1,
            np.random.default_rng(0).integers(1, 2**63, 10**5),
        ]
    )
    u = u[(u > 0) & ~np.isin(u, t)]
    words = np.concatenate([u, u + np.iinfo(np.int64).min])  # sign bit clear, then set
    g, sign = es._block_count(_FixedWords(words), words.size, table)
    expected = (t[None, :] > u[:, None]).sum(axis=1)
    assert np.array_equal(g, np.concatenate([expected, expected]))
    assert np.array_equal(sign, np.repeat([0, -1], u.size))


def _pmf(k, scale):
    alpha = math.exp(-1.0 / scale)
    return (1 - alpha) / (1 + alpha) * alpha ** abs(k)


def _exact_pmf(k, scale):
    """The pmf at an exact rational scale, by the decimal module."""
    scale = Fraction(scale)
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        alpha = (
            -decimal.Decimal(scale.denominator) / decimal.Decimal(scale.numerator)
        ).exp()
        return (1 - alpha) / (1 + alpha) * alpha ** abs(k)


def _assert_law(law, pruned, scale, *, present):
    for (k,), p in law.items():
        target = _exact_pmf(k, scale)
        assert decimal.Decimal(p.numerator) / p.denominator <= target + decimal.Decimal(
            "1e-30"
        ), (k, p, target)
        assert target <= decimal.Decimal((p + pruned).numerator) / (
            p + pruned
        ).denominator + decimal.Decimal("1e-30"), (k, p, target)
    for k in present:
        assert (k,) in law


@pytest.mark.parametrize(
    "scale, word, guide, block, min_prob",
    [
        (Fraction(1), 3, 3, 8, Fraction(1, 10**7)),
        (Fraction(1, 2), 3, 2, 8, Fraction(1, 10**7)),
        (Fraction(5, 2), 4, 2, 8, Fraction(1, 10**6)),
        (Fraction(3, 2), 3, 1, 8, Fraction(1, 10**7)),
    ],
)
def test_whole_sampler_with_short_words_is_exact(
    monkeypatch, scale, word, guide, block, min_prob
):
    """The whole sampler with words of 3 or 4 bits, every path enumerated: ties with a threshold
    happen at every other draw, so the exact count (further words compared with further bits of
    s_g), the dense buckets and the guide table are all taken; every P(K = k) is within the
    pruned mass (stated by the assertion) of the exact pmf."""
    monkeypatch.setattr(es, "_WORD_BITS", word)
    monkeypatch.setattr(es, "_GUIDE_BITS", guide)
    monkeypatch.setattr(es, "_BLOCK", block)
    num, den = scale.numerator, scale.denominator
    law, pruned = enumerate_law(
        lambda rng: es._discrete_laplace(rng, 1, num, den), min_prob=min_prob
    )
    assert pruned < Fraction(1, 1000)
    _assert_law(law, pruned, scale, present=range(-2, 3))


@pytest.mark.parametrize(
    "scale, block, min_prob",
    [(Fraction(1), 8, Fraction(1, 10**7)), (Fraction(2), 1, Fraction(1, 10**5))],
)
def test_whole_sampler_is_exact_within_truncation(monkeypatch, scale, block, min_prob):
    """The whole sampler at its real word size (63 bits), each run of first words between two
    thresholds enumerated once (a tie has probability 2^-64 and is pruned): every P(K = k) is within
    the pruned mass of the pmf (asserted: under 10^-3 at scale 1, 10^-2 at scale 2); at scale 2 with
    blocks of m = 2, so with the remainder L (its draws compared with 1 only)."""
    monkeypatch.setattr(es, "_BLOCK", block)
    num, den = scale.numerator, scale.denominator
    m = max(1, num // (den * es._BLOCK))
    table = es._table(num, den, m, 63, 12)
    half = 2**63
    cuts = {half}
    for t in table.thresholds.tolist():
        cuts |= {t, t + 1, half + t, half + t + 1}
    cuts |= {1} | {u * den for u in range(m)}  # the remainder and its Bernoulli draws
    law, pruned = enumerate_law(
        lambda rng: es._discrete_laplace(rng, 1, num, den), min_prob=min_prob, cuts=cuts
    )
    assert pruned < (Fraction(1, 1000) if m == 1 else Fraction(1, 100))
    _assert_law(law, pruned, scale, present=range(-2, 3))


def test_enumeration_catches_a_wrong_building_block(monkeypatch):
    """The same check fails for Algorithm 1 with the parity flipped (so it can fail)."""
    real = es._bernoulli_exp_fraction

    def flipped(rng, n, a, c):
        return ~real(rng, n, a, c)

    law, pruned = enumerate_law(lambda rng: flipped(rng, 1, 1, 2), max_draws=6)
    assert law.get((True,), 0) != _alternating_exp(Fraction(1, 2), 6)
    assert abs(float(law.get((True,), 0)) - math.exp(-0.5)) > float(pruned)


# --- the whole law: χ² on 10^6 draws --------------------------------------------------------------


def _chi2_pvalue(draws, scale, *, min_expected=20.0):
    """χ² goodness of fit of int draws to the discrete Laplace(scale) pmf; tail bins pooled.

    Bins are single integers up to scale 8 and runs of ⌊scale/4⌋ integers above (a few dozen bins
    keep the power against a scale off by 1%); bins whose expected count is below
    ``min_expected`` are pooled into the two tails.
    """
    n = draws.size
    alpha = math.exp(-1.0 / scale)
    width = max(1, int(scale // 4))

    def tail(k):  # P(K >= k) for k >= 1, exactly α^k/(1+α)
        return alpha**k / (1 + alpha)

    edges = [0]  # bins [lo, hi) on the nonnegative side, mirrored
    probs = [(1 - alpha) / (1 + alpha)]  # {0}
    lo = 1
    while n * (tail(lo) - tail(lo + width)) >= min_expected:
        probs.append(tail(lo) - tail(lo + width))
        edges.append(lo)
        lo += width
    last = lo  # |K| >= last pooled
    rest = tail(last)
    observed, expected = [], []
    observed.append(np.count_nonzero(draws <= -last))
    expected.append(rest)
    for i in range(len(probs) - 1, 0, -1):
        observed.append(
            np.count_nonzero((draws <= -edges[i]) & (draws > -edges[i] - width))
        )
        expected.append(probs[i])
    observed.append(np.count_nonzero(draws == 0))
    expected.append(probs[0])
    for i in range(1, len(probs)):
        observed.append(
            np.count_nonzero((draws >= edges[i]) & (draws < edges[i] + width))
        )
        expected.append(probs[i])
    observed.append(np.count_nonzero(draws >= last))
    expected.append(rest)
    observed = np.array(observed, dtype=float)
    expected = np.array(expected) * n
    assert observed.sum() == n
    assert abs(expected.sum() - n) < 1e-6 * n
    keep = expected > 0
    stat = float(np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep]))
    dof = int(keep.sum()) - 1
    return stats.chi2.sf(stat, dof), dof


GRID = [0.08, 0.3, 1.0, 2.5, 7.0 / 3.0, 17.3, 1000.0, 20000.0]


@pytest.mark.parametrize("seed, scale", list(enumerate(GRID)))
def test_chi_square_goodness_of_fit(seed, scale):
    draws = discrete_laplace_noise(scale, 10**6, rng=1000 + seed)
    pvalue, dof = _chi2_pvalue(draws, scale)
    assert dof >= 1
    assert pvalue > 1e-4, (scale, pvalue, dof)


@pytest.mark.parametrize("scale", [1.0, 17.3, 1000.0])
def test_chi_square_rejects_a_sampler_one_percent_off(scale):
    """The same test rejects exact draws at scale 1.01·b when checked against scale b."""
    draws = discrete_laplace_noise(1.01 * scale, 10**6, rng=7)
    pvalue, _ = _chi2_pvalue(draws, scale)
    assert pvalue < 1e-4, (scale, pvalue)


# --- interface ------------------------------------------------------------------------------------


def test_seeded_reproducibility_and_dtype():
    x = discrete_laplace_noise(3.5, (4, 5), rng=11)
    assert x.dtype == np.int64 and x.shape == (4, 5)
    assert np.array_equal(
        x, discrete_laplace_noise(3.5, (4, 5), rng=np.random.default_rng(11))
    )
    assert not np.array_equal(x, discrete_laplace_noise(3.5, (4, 5), rng=12))
    one = discrete_laplace_noise(3.5, rng=11)
    assert type(one) is int
    assert discrete_laplace_noise(3.5, 0, rng=1).shape == (0,)
    assert discrete_laplace_noise(3.5, (2, 0), rng=1).shape == (2, 0)
    assert discrete_laplace_noise(3.5, 3, rng=np.random.SeedSequence(4)).shape == (3,)


def test_exact_rational_scales():
    """Ints, Fractions and floats are used at their exact value: 7/3 as a Fraction differs from 7/3.0."""
    assert es._exact_ratio(Fraction(7, 3)) == (7, 3)
    assert es._exact_ratio(7.0 / 3.0) == (7.0 / 3.0).as_integer_ratio()
    assert es._exact_ratio(np.int64(5)) == (5, 1)
    assert es._exact_ratio(0.1) == (3602879701896397, 36028797018963968)
    x = discrete_laplace_noise(Fraction(7, 3), 1000, rng=3)
    assert x.dtype == np.int64


def test_extreme_scales():
    """Tiny scales give 0 (the probability of anything else is below exp(-10^300)); 2**52 works."""
    assert discrete_laplace_noise(5e-324, 1000, rng=0).tolist() == [0] * 1000
    assert discrete_laplace_noise(1e-300, 1000, rng=0).tolist() == [0] * 1000
    x = discrete_laplace_noise(2.0**52, 10_000, rng=0)
    assert x.dtype == np.int64
    # mean |K| = 2α/(1-α²) ≈ b for large b; 5 standard errors (sd of |K| ≈ b)
    assert abs(np.abs(x).mean() / 2.0**52 - 1) < 5 / math.sqrt(x.size)
    # a scale just under 1 and just over: both branches of the magnitude
    for scale in (np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0)):
        y = discrete_laplace_noise(scale, 100_000, rng=5)
        p0 = _pmf(0, scale)
        assert abs((y == 0).mean() - p0) < 5 * math.sqrt(p0 * (1 - p0) / y.size)


def test_a_draw_beyond_int64_raises_instead_of_wrapping(monkeypatch):
    """With the int64 limit lowered to 40, scale 10 overflows often: OverflowError, never a wrap."""
    monkeypatch.setattr(es, "_INT64_MAX", 40)
    with pytest.raises(OverflowError, match="int64"):
        discrete_laplace_noise(10.0, 1000, rng=0)


@pytest.mark.parametrize(
    "bad",
    [
        0,
        0.0,
        -1.0,
        float("nan"),
        float("inf"),
        "2",
        True,
        None,
        [1.0],
        2.0**52 * 2,
        10**20,
        Fraction(-1, 2),
        Fraction(2**70 + 1, 2**20),
    ],
)
def test_bad_scale_raises(bad):
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace_noise(bad, 3, rng=0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"size": -1}, "size"),
        ({"size": 1.5}, "size"),
        ({"size": (2, -1)}, "size"),
        ({"rng": -1}, "rng"),
        ({"rng": "x"}, "rng"),
        ({"rng": np.random.RandomState(0)}, "rng"),
    ],
)
def test_bad_size_and_rng_raise(kwargs, name):
    with pytest.raises(ValueError, match=name):
        discrete_laplace_noise(1.0, **kwargs)


def test_public_name():
    assert "discrete_laplace_noise" in dpbook.__all__
    assert dpbook.discrete_laplace_noise is discrete_laplace_noise
