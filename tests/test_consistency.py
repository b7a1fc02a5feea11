import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbook import (
    Hierarchy,
    consistent_hierarchy,
    consistent_tree,
    nearest_correlation,
    nearest_psd,
    nonnegative_tree,
    tree_levels,
)

SETTINGS = settings(max_examples=60, deadline=None)


def random_symmetric(seed, p):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(p, p)) * rng.uniform(0.1, 3)
    return (M + M.T) / 2


def random_correlation(rng, p):
    G = rng.normal(size=(p, p + rng.integers(0, 3)))
    C = G @ G.T
    d = np.sqrt(np.diag(C))
    return C / np.outer(d, d)


# --- nearest PSD / correlation ----------------------------------------------------------------


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 6))
def test_nearest_psd_is_the_projection(seed, p):
    A = random_symmetric(seed, p)
    X = nearest_psd(A)
    assert np.allclose(X, X.T)
    assert np.linalg.eigvalsh(X).min() >= -1e-10
    assert np.allclose(nearest_psd(X), X, atol=1e-10)
    # variational inequality of a projection onto a convex set: <A - X, Z - X> <= 0 for every PSD Z
    rng = np.random.default_rng(seed + 1)
    for _ in range(20):
        G = rng.normal(size=(p, p))
        Z = G @ G.T * rng.uniform(0, 3)
        assert np.sum((A - X) * (Z - X)) <= 1e-9 * max(1, np.abs(A).max()) ** 2


def test_higham_published_example():
    # Higham (2002), §4: the nearest correlation matrix to tridiag(-1, 2, -1), W = I
    A = np.array(
        [[2, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]], dtype=float
    )
    published = np.array(
        [
            [1.0000, -0.8084, 0.1916, 0.1068],
            [-0.8084, 1.0000, -0.6562, 0.1916],
            [0.1916, -0.6562, 1.0000, -0.8084],
            [0.1068, 0.1916, -0.8084, 1.0000],
        ]
    )
    X = nearest_correlation(A)
    assert np.abs(X - published).max() < 5e-5


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 6))
def test_nearest_correlation_first_order_optimality(seed, p):
    A = random_symmetric(seed, p)
    X = nearest_correlation(A)
    assert np.allclose(np.diag(X), 1.0)
    assert np.allclose(X, X.T)
    assert np.linalg.eigvalsh(X).min() >= -1e-9
    rng = np.random.default_rng(seed + 7)
    scale = max(1.0, np.abs(A).max())
    for _ in range(30):
        Z = random_correlation(rng, p)
        assert np.sum((A - X) * (Z - X)) <= 1e-7 * scale**2
        assert np.linalg.norm(A - X) <= np.linalg.norm(A - Z) + 1e-9 * scale


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 6))
def test_nearest_correlation_fixed_point(seed, p):
    C = random_correlation(np.random.default_rng(seed), p)
    assert np.allclose(nearest_correlation(C), C, atol=1e-9)


@SETTINGS
@given(st.floats(0.01, 10), st.floats(0.01, 10), st.floats(-20, 20))
def test_nearest_correlation_2x2_closed_form(a, d, c):
    # unit diagonal is forced; the off-diagonal is free in [-1, 1]: the answer clips c
    X = nearest_correlation([[a, c], [c, d]])
    assert np.isclose(X[0, 1], np.clip(c, -1, 1), atol=1e-9)


def test_nearest_correlation_bad_input():
    with pytest.raises(ValueError, match="A"):
        nearest_correlation([[1, 2], [0, 1]])
    with pytest.raises(ValueError, match="A"):
        nearest_correlation([1, 2, 3])
    with pytest.raises(ValueError, match="A"):
        nearest_psd([[1, np.nan], [np.nan, 1]])
    with pytest.raises(ValueError, match="tol"):
        nearest_correlation(np.eye(2), tol=0)
    with pytest.raises(ValueError, match="max_iter"):
        nearest_correlation(np.eye(2), max_iter=0)


# --- the universal-histogram tree ---------------------------------------------------------------


def design(k, h):
    """Rows: the nodes of the tree (root first, level by level); columns: the leaves."""
    leaves = k ** (h - 1)
    rows = []
    for d in range(h):
        width = k ** (h - 1 - d)
        for j in range(k**d):
            r = np.zeros(leaves)
            r[j * width : (j + 1) * width] = 1
            rows.append(r)
    return np.array(rows)


@SETTINGS
@given(
    st.integers(0, 10**6),
    st.sampled_from([(2, 2), (2, 3), (2, 4), (3, 2), (3, 3), (4, 3)]),
)
def test_consistent_tree_is_least_squares(seed, kh):
    k, h = kh
    rng = np.random.default_rng(seed)
    H = design(k, h)
    y = rng.normal(size=H.shape[0]) * rng.uniform(0.1, 5)
    levels = np.split(y, np.cumsum([k**d for d in range(h)])[:-1])
    out = consistent_tree(levels, branching=k)
    fitted = H @ np.linalg.lstsq(H, y, rcond=None)[0]
    assert np.allclose(np.concatenate(out), fitted, atol=1e-10)
    for d in range(h - 1):
        assert np.allclose(out[d], out[d + 1].reshape(-1, k).sum(-1), atol=1e-12)


@SETTINGS
@given(
    st.integers(0, 10**6),
    st.sampled_from([(2, 2), (2, 3), (2, 4), (3, 3)]),
    st.floats(-3, 3),
)
def test_consistent_tree_with_known_root_is_constrained_least_squares(seed, kh, root):
    k, h = kh
    rng = np.random.default_rng(seed)
    H = design(k, h)
    y = rng.normal(size=H.shape[0])
    levels = np.split(y, np.cumsum([k**d for d in range(h)])[:-1])
    out = consistent_tree(levels, branching=k, root=root)
    # leaves x = x0 + N t with 1'x = root; least squares over the non-root nodes
    L = H.shape[1]
    x0 = np.full(L, root / L)
    N = np.linalg.svd(np.ones((1, L)))[2][1:].T
    t = np.linalg.lstsq(H[1:] @ N, y[1:] - H[1:] @ x0, rcond=None)[0]
    fitted = H @ (x0 + N @ t)
    assert np.isclose(out[0][0], root)
    assert np.allclose(np.concatenate(out), fitted, atol=1e-10)


def test_consistent_tree_fixed_point_and_batches():
    rng = np.random.default_rng(3)
    leaves = rng.dirichlet(np.ones(8), size=(5, 2))
    true = tree_levels(leaves, branching=2)
    assert [lv.shape for lv in true] == [(5, 2, 1), (5, 2, 2), (5, 2, 4), (5, 2, 8)]
    for a, b in zip(consistent_tree(true, branching=2), true):
        assert np.allclose(a, b, atol=1e-14)
    for a, b in zip(consistent_tree(true, branching=2, root=1.0), true):
        assert np.allclose(a, b, atol=1e-14)
    # batches agree with one tree at a time
    noisy = [lv + rng.normal(size=lv.shape) for lv in true]
    batch = consistent_tree(noisy, branching=2)
    one = consistent_tree([lv[3, 1] for lv in noisy], branching=2)
    for a, b in zip(batch, one):
        assert np.allclose(a[3, 1], b)


def test_tree_bad_input():
    with pytest.raises(ValueError, match="branching"):
        tree_levels([0.5, 0.5], branching=1)
    with pytest.raises(ValueError, match="power"):
        tree_levels([0.2, 0.3, 0.5], branching=2)
    with pytest.raises(ValueError, match="levels"):
        consistent_tree([[1.0], [0.5, 0.5, 0.0]], branching=2)


def test_nonnegative_tree_footnote():
    # root 1; children (1.2, -0.2) -> (1, 0); leaves under the first child (0.7, 0.5) rescaled to 1
    tree = [np.array([1.0]), np.array([1.2, -0.2]), np.array([0.7, 0.5, -0.3, 0.1])]
    out = nonnegative_tree(tree, branching=2)
    assert np.allclose(out[1], [1.0, 0.0])
    assert np.allclose(out[2], [0.7 / 1.2, 0.5 / 1.2, 0.0, 0.0])
    # a group under a positive parent with all members <= 0 is split equally
    out = nonnegative_tree(
        [np.array([1.0]), np.array([1.0, 0.0]), np.array([-0.1, 1.1, 0.1, -0.1])],
        branching=2,
    )
    assert np.allclose(out[2], [0.0, 1.0, 0.0, 0.0])
    out = nonnegative_tree(
        [np.array([1.0]), np.array([1.2, -0.2]), np.array([-0.1, -0.1, 0.1, -0.3])],
        branching=2,
    )
    assert np.allclose(out[2], [0.5, 0.5, 0.0, 0.0])


@SETTINGS
@given(st.integers(0, 10**6))
def test_nonnegative_tree_keeps_nonnegative_trees_and_is_consistent(seed):
    rng = np.random.default_rng(seed)
    true = tree_levels(rng.dirichlet(np.ones(8)), branching=2)
    for a, b in zip(nonnegative_tree(true, branching=2), true):
        assert np.allclose(a, b)
    noisy = consistent_tree(
        [true[0]] + [lv + rng.normal(scale=0.3, size=lv.shape) for lv in true[1:]],
        branching=2,
        root=1.0,
    )
    out = nonnegative_tree(noisy, branching=2)
    assert all((lv >= 0).all() for lv in out)
    for d in range(len(out) - 1):
        assert np.allclose(out[d], out[d + 1].reshape(-1, 2).sum(-1))


def test_consistent_tree_covariance_closed_forms_and_simulation():
    from dpbook import consistent_tree_covariance

    C = consistent_tree_covariance(2, 3, root_known=True)
    assert np.allclose(np.diag(C), [0, 1 / 3, 1 / 3, 7 / 12, 7 / 12, 7 / 12, 7 / 12])
    assert np.allclose(C[0], 0)
    # unknown root (Hay et al.): every node's variance is below the noise variance 1
    U = consistent_tree_covariance(2, 3)
    assert (np.diag(U) < 1).all()
    rng = np.random.default_rng(8)
    reps, b = 100_000, 0.7
    levels = [np.zeros((reps, 1))] + [
        rng.laplace(0, b, size=(reps, 2**d)) for d in (1, 2)
    ]
    out = np.concatenate(consistent_tree(levels, branching=2, root=0.0), axis=-1)
    emp = np.cov(out[:, 1:], rowvar=False)
    se = np.sqrt((np.mean(out[:, 1:] ** 4, 0) - np.var(out[:, 1:], 0) ** 2) / reps)
    assert (np.abs(np.diag(emp) - 2 * b**2 * np.diag(C)[1:]) < 5 * se).all()
    with pytest.raises(ValueError, match="height"):
        consistent_tree_covariance(2, 1)


# --- any hierarchy of sums, per-level variances ----------------------------------------------


def random_hierarchy(rng, height):
    fanout, size = [], 1
    for _ in range(height - 1):
        f = rng.integers(1, 5, size=size)
        fanout.append(f)
        size = int(f.sum())
    return Hierarchy(fanout)


def hierarchy_design(H):
    """Rows: every node (root first, level by level); columns: the leaves below it."""
    rows = [np.eye(H.sizes[-1])]
    for d in range(H.height - 2, -1, -1):
        parent = H.parent_index(d + 1)
        rows.insert(
            0, np.stack([rows[0][parent == j].sum(0) for j in range(H.sizes[d])])
        )
    return np.concatenate(rows)


def test_hierarchy_structure():
    H = Hierarchy([[3], [4, 2, 6]])
    assert H.sizes == (1, 3, 12) and H.height == 3
    assert H.parent_index(1).tolist() == [0, 0, 0]
    assert H.parent_index(2).tolist() == [0] * 4 + [1] * 2 + [2] * 6
    assert repr(H) == "Hierarchy([[3], [4, 2, 6]])"
    assert H == Hierarchy([np.array([3]), (4, 2, 6)]) and H != Hierarchy(
        [[3], [4, 3, 5]]
    )
    U = Hierarchy.uniform(3, 3)
    assert U == Hierarchy([[3], [3, 3, 3]]) and U.sizes == (1, 3, 9)
    assert Hierarchy([]).sizes == (1,) and Hierarchy.uniform(2, 1).height == 1
    # levels: sums of the leaves, batches on the leading axes, integers kept
    leaves = np.arange(24).reshape(2, 12)
    lv = H.levels(leaves)
    assert [a.shape for a in lv] == [(2, 1), (2, 3), (2, 12)]
    assert lv[1].tolist() == [[6, 9, 51], [54, 33, 123]] and lv[0].dtype == np.int64
    assert lv[0][:, 0].tolist() == leaves.sum(-1).tolist()
    x = np.random.default_rng(0).normal(size=(4, 9))
    for a, b in zip(U.levels(x), tree_levels(x, branching=3)):
        assert np.allclose(a, b)


def test_hierarchy_bad_input():
    with pytest.raises(ValueError, match=r"fanout\[0\] must be 1 int"):
        Hierarchy([[2, 3]])
    with pytest.raises(ValueError, match=r"fanout\[1\] must be 3 int.*\[4, 2\]"):
        Hierarchy([[3], [4, 2]])
    with pytest.raises(ValueError, match=r"fanout\[1\] must be 2 int.*>= 1"):
        Hierarchy([[2], [0, 2]])
    with pytest.raises(ValueError, match=r"fanout\[0\] must be integers"):
        Hierarchy([[2.5]])
    with pytest.raises(ValueError, match="fanout must be a list"):
        Hierarchy(3)
    with pytest.raises(ValueError, match="height must be an integer >= 1"):
        Hierarchy.uniform(2, 0)
    with pytest.raises(ValueError, match="branching"):
        Hierarchy.uniform(1, 3)
    H = Hierarchy([[2], [1, 2]])
    with pytest.raises(ValueError, match=r"d must be an int in \[1, 2\], got 0"):
        H.parent_index(0)
    with pytest.raises(ValueError, match=r"leaves must have 3 leaves.*\(4,\)"):
        H.levels([1, 2, 3, 4])
    good = [[3.0], [1.0, 2.0], [1.0, 1.0, 1.0]]
    with pytest.raises(ValueError, match="levels must hold 3 levels"):
        consistent_hierarchy(good[:2], H)
    with pytest.raises(ValueError, match=r"levels\[2\] must have 3 nodes"):
        consistent_hierarchy([[3.0], [1.0, 2.0], [1.0, 1.0]], H)
    with pytest.raises(ValueError, match=r"levels\[1\] must be finite"):
        consistent_hierarchy([[3.0], [1.0, np.inf], [1.0, 1.0, 1.0]], H)
    with pytest.raises(ValueError, match="variances must be 3 numbers > 0"):
        consistent_hierarchy(good, H, variances=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="variances must be 3 numbers > 0"):
        consistent_hierarchy(good, H, variances=[1.0, 1.0, np.inf])
    with pytest.raises(ValueError, match="variances must be 3 numbers > 0"):
        consistent_hierarchy(good, H, variances=[1.0, 1.0])
    with pytest.raises(ValueError, match="hierarchy must be a Hierarchy"):
        consistent_hierarchy(good, [[2], [1, 2]])
    with pytest.raises(ValueError, match="root must be finite"):
        consistent_hierarchy(good, H, root=np.inf)


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4), st.booleans())
def test_consistent_hierarchy_is_weighted_least_squares(seed, height, known_root):
    rng = np.random.default_rng(seed)
    H = random_hierarchy(rng, height)
    A = hierarchy_design(H)
    var = rng.uniform(0.1, 10, size=height)
    sig2 = np.repeat(var, H.sizes)
    y = rng.normal(size=A.shape[0]) * rng.uniform(0.1, 5)
    levels = np.split(y, np.cumsum(H.sizes)[:-1])
    if known_root:
        root = float(rng.normal() * 5)
        out = consistent_hierarchy(levels, H, variances=var, root=root)
        # leaves x = x0 + N t with Σx = root; weighted least squares over the other nodes
        L = A.shape[1]
        x0 = np.full(L, root / L)
        N = np.linalg.svd(np.ones((1, L)))[2][1:].T
        W = 1 / np.sqrt(sig2[1:])
        t = np.linalg.lstsq(
            (A[1:] @ N) * W[:, None], (y[1:] - A[1:] @ x0) * W, rcond=None
        )[0]
        fitted = A @ (x0 + N @ t)
        assert np.isclose(out[0][0], root)
    else:
        out = consistent_hierarchy(levels, H, variances=var)
        # the weighted normal equations A' Σ^-1 A x = A' Σ^-1 y over the leaves
        Ai = A / sig2[:, None]
        fitted = A @ np.linalg.solve(A.T @ Ai, Ai.T @ y)
    assert np.allclose(np.concatenate(out), fitted, atol=1e-10 * max(1, abs(y).max()))
    for d in range(height - 1):
        assert np.allclose(out[d], H.levels(out[-1])[d], atol=1e-12)


def test_consistent_hierarchy_unmeasured_levels_batches_and_equal_variances():
    rng = np.random.default_rng(9)
    H = Hierarchy([[3], [2, 1, 3]])
    y = [rng.normal(size=(4, s)) for s in H.sizes]
    # a level not measured is ignored: same as leaving it out of the least squares
    out = consistent_hierarchy(y, H, variances=[1.0, np.inf, 2.0])
    A = hierarchy_design(H)
    keep = np.r_[True, np.zeros(3, bool), np.ones(6, bool)]
    sig2 = np.repeat([1.0, 1.0, 2.0], H.sizes)[keep]
    for b in range(4):
        yb = np.concatenate([lv[b] for lv in y])[keep]
        Ai = A[keep] / sig2[:, None]
        fitted = A @ np.linalg.solve(A[keep].T @ Ai, Ai.T @ yb)
        assert np.allclose(np.concatenate([o[b] for o in out]), fitted, atol=1e-12)
    # only the leaves measured: the leaves come back unchanged
    out = consistent_hierarchy(y, H, variances=[np.inf, np.inf, 1.0])
    assert np.allclose(out[-1], y[-1]) and np.allclose(out[0][:, 0], y[-1].sum(-1))
    # only ratios matter; default = equal
    a = consistent_hierarchy(y, H, variances=[3.0, 3.0, 3.0])
    for u, v in zip(a, consistent_hierarchy(y, H)):
        assert np.allclose(u, v, atol=1e-14)
    # the complete tree is Hay et al.'s formula (consistent_tree is the same call)
    lv = [rng.normal(size=2**d) for d in range(4)]
    hay = consistent_hierarchy(lv, Hierarchy.uniform(2, 4), root=0.5)
    for u, v in zip(hay, consistent_tree(lv, branching=2, root=0.5)):
        assert np.allclose(u, v, atol=1e-15)
    # a known root per hierarchy
    roots = np.array([1.0, 2.0, 3.0, 4.0])
    out = consistent_hierarchy(y, H, root=roots)
    assert np.allclose(out[0][:, 0], roots) and np.allclose(out[-1].sum(-1), roots)
