import importlib
import itertools

import numpy as np
import pytest

from dpbook import (
    DiscreteLaplace,
    Hierarchy,
    Laplace,
    TopDownBias,
    optimal_count_postprocessing,
    topdown,
    topdown_bias,
)


def nearest_integer_vectors(y, total):
    """Every nonnegative integer vector with the sum, nearest to y (brute force), and the largest
    of them in lexicographic order (the documented tie rule)."""
    cand = np.array(
        [
            c
            for c in itertools.product(range(total + 1), repeat=len(y))
            if sum(c) == total
        ]
    )
    d = ((cand - np.asarray(y, dtype=float)) ** 2).sum(axis=1)
    best = cand[d <= d.min() + 1e-9]
    return best, max(map(tuple, best))


def random_hierarchy(rng, height, most=4):
    fanout, size = [], 1
    for _ in range(height - 1):
        f = rng.integers(1, most + 1, size=size)
        fanout.append(f)
        size = int(f.sum())
    return Hierarchy(fanout)


def test_topdown_invariants_on_random_inputs():
    rng = np.random.default_rng(10)
    for trial in range(60):
        H = random_hierarchy(rng, int(rng.integers(2, 5)))
        batch = (int(rng.integers(1, 4)),)
        total = rng.integers(0, 80, size=batch)
        noisy = [rng.normal(3, 8, size=batch + (s,)) for s in H.sizes[1:]]
        if trial % 2:  # geometric noise: integer noisy counts
            noisy = [np.rint(lv).astype(np.int64) for lv in noisy]
        out = topdown(noisy, H, total=total)
        assert len(out) == H.height
        assert out[0][:, 0].tolist() == total.tolist()
        for d, lv in enumerate(out):
            assert lv.dtype == np.int64 and lv.shape == batch + (H.sizes[d],)
            assert (lv >= 0).all()
        # consistent: every level is the sums of the leaves
        for a, b in zip(out, H.levels(out[-1])):
            assert (a == b).all()
        # batches agree with one hierarchy at a time
        one = topdown([lv[0] for lv in noisy], H, total=int(total[0]))
        assert all((a[0] == b).all() for a, b in zip(out, one))


def test_topdown_is_the_nearest_fit_level_by_level():
    rng = np.random.default_rng(11)
    H = Hierarchy([[2], [3, 2]])
    for _ in range(40):
        total = int(rng.integers(0, 9))
        noisy = [rng.uniform(-2, total + 2, size=s) for s in H.sizes[1:]]
        out = topdown(noisy, H, total=total)
        best, _ = nearest_integer_vectors(noisy[0], total)
        assert len(best) == 1 and out[1].tolist() == best[0].tolist()
        parent = H.parent_index(2)
        for j in range(2):
            best, _ = nearest_integer_vectors(noisy[1][parent == j], int(out[1][j]))
            assert len(best) == 1 and out[2][parent == j].tolist() == best[0].tolist()


def test_topdown_ties_and_greediness():
    H = Hierarchy([[2], [1, 1]])
    # ties go to the lower index, at every level
    assert [lv.tolist() for lv in topdown([[0.5, 0.5], [7.0, 7.0]], H, total=1)] == [
        [1],
        [1, 0],
        [1, 0],
    ]
    # greedy: the leaves' noisy counts never move the level above; a joint fit does better
    noisy = [[3.0, 0.0], [0.0, 3.0]]
    out = topdown(noisy, H, total=3)
    assert [lv.tolist() for lv in out] == [[3], [3, 0], [3, 0]]
    cost = sum(np.sum((np.asarray(o) - n) ** 2) for o, n in zip(out[1:], noisy))
    joint = min(
        sum((x - n[0]) ** 2 + (3 - x - n[1]) ** 2 for n in noisy) for x in range(4)
    )
    assert (cost, joint) == (18.0, 10.0)


def test_topdown_bad_input():
    H = Hierarchy([[2], [1, 2]])
    good = [[1.0, 2.0], [1.0, 1.0, 1.0]]
    with pytest.raises(ValueError, match="noisy_levels must hold 2 levels"):
        topdown([[3.0], *good], H, total=3)
    with pytest.raises(
        ValueError, match=r"noisy_levels\[1\] \(level 2\) must have 3 nodes"
    ):
        topdown([[1.0, 2.0], [1.0, 1.0]], H, total=3)
    with pytest.raises(ValueError, match=r"noisy_levels\[0\] must be finite"):
        topdown([[1.0, np.inf], [1.0, 1.0, 1.0]], H, total=3)
    with pytest.raises(ValueError, match="total must be >= 0, got -1"):
        topdown(good, H, total=-1)
    with pytest.raises(ValueError, match=r"total must be integers.*2\.5"):
        topdown(good, H, total=2.5)
    with pytest.raises(
        ValueError, match="hierarchy must be a Hierarchy with at least one"
    ):
        topdown(good, Hierarchy([]), total=3)
    with pytest.raises(ValueError, match=r"total must broadcast.*\(3,\)"):
        topdown([np.ones((2, 2)), np.ones((2, 3))], H, total=[1, 2, 3])
    m = DiscreteLaplace(1.0)
    with pytest.raises(ValueError, match="mechanism must be a dpbook.DiscreteLaplace"):
        topdown_bias([1, 2, 3], H, Laplace(1.0), n_sims=10, rng=0)
    with pytest.raises(ValueError, match="or a list of 2 of them"):
        topdown_bias([1, 2, 3], H, [m], n_sims=10, rng=0)
    with pytest.raises(ValueError, match="leaves must be 3 integer counts >= 0"):
        topdown_bias([1, -2, 3], H, m, n_sims=10, rng=0)
    with pytest.raises(ValueError, match="leaves must be 3 integer counts >= 0"):
        topdown_bias([1, 2], H, m, n_sims=10, rng=0)
    with pytest.raises(ValueError, match=r"leaves must be integers.*1\.5"):
        topdown_bias([1.5, 2, 3], H, m, n_sims=10, rng=0)
    with pytest.raises(ValueError, match="n_sims must be an integer >= 2"):
        topdown_bias([1, 2, 3], H, m, n_sims=1, rng=0)


def exact_split_moments(a, b, scale, reach=60, ties="random"):
    """E and E[·²] of the TopDown error on a known total a + b split into 2 cells, by brute force
    over the geometric noise |K| <= reach, and a bound on what the cut-off tails can add.  On a tie
    the first cell gets the unit (``ties="first"``) or each of the two nearest splits has
    probability 1/2 (``ties="random"``)."""
    T = a + b
    alpha = np.exp(-1 / scale)
    k = np.arange(-reach, reach + 1)
    p = (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)
    x1 = np.arange(T + 1)
    y1 = a + k[:, None, None]
    y2 = b + k[None, :, None]
    cost = (x1 - y1) ** 2 + (T - x1 - y2) ** 2
    nearest = cost == cost.min(axis=-1, keepdims=True)
    high = np.where(nearest, x1, -1).max(
        axis=-1
    )  # the first cell's largest nearest value
    low = np.where(nearest, x1, T + 1).min(axis=-1)
    picks = [(high, 1.0)] if ties == "first" else [(high, 0.5), (low, 0.5)]
    w = p[:, None] * p[None, :]
    mean, sq = np.zeros(2), np.zeros(2)
    for best, share in picks:
        e1 = best - a
        e2 = (T - best) - b
        mean += share * np.array([np.sum(w * e1), np.sum(w * e2)])
        sq += share * np.array([np.sum(w * e1**2), np.sum(w * e2**2)])
    tail = 2 * alpha ** (reach + 1) / (1 + alpha)  # P(|K| > reach)
    return mean, sq, 2 * tail * T**2


@pytest.mark.parametrize("a, b, scale", [(0, 6, 1.0), (2, 3, 2.0), (1, 40, 1.5)])
def test_topdown_bias_against_the_exact_two_cell_split(a, b, scale):
    n = 40_000
    res = topdown_bias(
        [a, b], Hierarchy([[2]]), DiscreteLaplace(scale), n_sims=n, rng=a + b
    )
    assert isinstance(res, TopDownBias) and res.exact is False and res.n_sims == n
    assert res.releases == ("raw", "topdown", "least_bias")
    mean, sq, tail = exact_split_moments(a, b, scale)
    assert tail < 1e-9
    assert (np.abs(res.bias["topdown"][1] - mean) <= 5 * res.se["topdown"][1]).all()
    assert (np.abs(res.mse["topdown"][1] - sq) <= 5 * res.mse_se["topdown"][1]).all()
    # the first-listed cell's favour with ties="first", which the random order removes
    first = topdown_bias(
        [a, b],
        Hierarchy([[2]]),
        DiscreteLaplace(scale),
        n_sims=n,
        rng=a + b,
        ties="first",
    )
    mean_first, _, _ = exact_split_moments(a, b, scale, ties="first")
    assert (
        np.abs(first.bias["topdown"][1] - mean_first) <= 5 * first.se["topdown"][1]
    ).all()
    # the two cells' errors cancel: the total is kept
    assert np.isclose(res.bias["topdown"][1].sum(), 0.0, atol=1e-12)
    # the raw counts: unbiased, MSE = the noise variance
    m = DiscreteLaplace(scale)
    assert (np.abs(res.bias["raw"][1]) <= 5 * res.se["raw"][1]).all()
    var = m.variance(0)
    assert (np.abs(res.mse["raw"][1] - var) <= 5 * res.mse_se["raw"][1]).all()
    # the standard errors are those of a mean of n draws
    assert np.allclose(res.se["raw"][1], np.sqrt(var / n), rtol=0.05)
    # the least-bias map per cell: its exact bias (Chapter 21)
    exact = optimal_count_postprocessing(scale).bias(np.array([a, b], dtype=float))
    assert (
        np.abs(res.bias["least_bias"][1] - exact) <= 5 * res.se["least_bias"][1]
    ).all()
    # the known root: no error for anyone
    for r in res.releases:
        assert res.bias[r][0].tolist() == [0.0] and res.mse[r][0].tolist() == [0.0]


def test_topdown_bias_levels_and_budget_split():
    H = Hierarchy([[3], [2, 1, 2]])
    leaves = [0, 4, 30, 1, 2]
    mechs = [DiscreteLaplace(1.0), DiscreteLaplace(3.0)]
    res = topdown_bias(leaves, H, mechs, n_sims=5000, rng=3)
    for r in res.releases:
        assert [lv.shape for lv in res.bias[r]] == [(1,), (3,), (5,)]
        assert all((s > 0).all() for s in res.se[r][1:])
    # every level of TopDown keeps the total: the biases of a level sum to 0
    for lv in res.bias["topdown"]:
        assert abs(lv.sum()) < 1e-9
    # an empty leaf can only gain
    assert res.bias["topdown"][2][0] > 5 * res.se["topdown"][2][0]
    # the seed fixes the numbers; the raw level 2 has the noise of its own (larger) scale
    again = topdown_bias(leaves, H, mechs, n_sims=5000, rng=3)
    assert all(
        (u == v).all() for u, v in zip(res.bias["topdown"], again.bias["topdown"])
    )
    var = DiscreteLaplace(3.0).variance(0)
    assert (np.abs(res.mse["raw"][2] - var) <= 5 * res.mse_se["raw"][2]).all()


def test_running_moments_over_blocks():
    from dpbook.histograms.topdown import _Moments

    rng = np.random.default_rng(12)
    x = rng.normal(3, 2, size=(1000, 4)) + rng.integers(0, 5, size=(1000, 1))
    acc = _Moments()
    for block in np.split(x, [1, 7, 300, 301, 950]):
        acc.add(block)
    assert acc.n == 1000
    assert np.allclose(acc.mean, x.mean(axis=0), rtol=1e-13)
    assert np.allclose(acc.se(), x.std(axis=0, ddof=1) / np.sqrt(1000), rtol=1e-12)


def test_topdown_bias_in_many_blocks(monkeypatch):
    # the module (the package's name ``topdown`` is the function)
    module = importlib.import_module("dpbook.histograms.topdown")
    monkeypatch.setattr(module, "_BLOCK_NODES", 3 * 97)  # 97 simulations per block
    n = 20_000
    res = topdown_bias([0, 6], Hierarchy([[2]]), DiscreteLaplace(1.0), n_sims=n, rng=5)
    assert res.n_sims == n
    mean, _, _ = exact_split_moments(0, 6, 1.0)
    assert (np.abs(res.bias["topdown"][1] - mean) <= 5 * res.se["topdown"][1]).all()
    var = DiscreteLaplace(1.0).variance(0)
    assert np.allclose(res.se["raw"][1], np.sqrt(var / n), rtol=0.05)
