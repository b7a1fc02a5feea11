"""General consistency algorithms for many releases: the nearest positive semi-definite and correlation
matrices (Higham 2002), and least-squares consistency over a tree of sums (Hay et al. 2010) with
Liu's nonnegative variant."""

from __future__ import annotations

import numpy as np

from ._kernels import validation as check

__all__ = [
    "nearest_psd",
    "nearest_correlation",
    "tree_levels",
    "consistent_tree",
    "nonnegative_tree",
    "consistent_tree_covariance",
]


# --- Study 1: positive semi-definite repair ---------------------------------------------------


def _symmetric_matrix(name, A):
    A = check.finite_array(name, A)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty square matrix, got shape {A.shape}"
        )
    if not np.allclose(A, A.T, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(A).max())):
        raise ValueError(f"{name} must be symmetric, got {A!r}")
    return (A + A.T) / 2


def _psd_projection(A):
    w, V = np.linalg.eigh(A)
    return (V * np.maximum(w, 0.0)) @ V.T


def nearest_psd(A):
    """The positive semi-definite matrix nearest to a symmetric ``A`` in the Frobenius norm.

    Higham (2002), eq. (3.2) (the projection ``P_S``): keep the eigenvectors, set negative
    eigenvalues to zero.

    Parameters
    ----------
    A : (p, p) array_like, symmetric

    Returns
    -------
    (p, p) ndarray

    Examples
    --------
    >>> nearest_psd([[1.0, 2.0], [2.0, 1.0]]).round(3).tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    return _psd_projection(_symmetric_matrix("A", A))


def nearest_correlation(A, *, tol=1e-12, max_iter=10_000):
    """The correlation matrix nearest to a symmetric ``A`` in the Frobenius norm.

    Higham (2002), Algorithm 3.3 with ``W = I``: alternating projections onto the unit-diagonal
    matrices and the positive semi-definite cone, with Dykstra's correction applied to the
    (non-affine) cone step.  Stops when successive iterates and the two projections agree to
    ``tol`` (relative to the size of the iterate).

    Parameters
    ----------
    A : (p, p) array_like, symmetric
    tol : float
        Convergence tolerance.
    max_iter : int
        Raise ``RuntimeError`` if not converged after this many sweeps.

    Returns
    -------
    (p, p) ndarray
        Symmetric, unit diagonal, smallest eigenvalue >= ``-tol`` (up to rounding).

    Examples
    --------
    >>> nearest_correlation([[2, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]]).round(4)[0]
    array([ 1.    , -0.8084,  0.1916,  0.1068])
    """
    A = _symmetric_matrix("A", A)
    tol = check.positive("tol", tol)
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive int, got {max_iter!r}")
    Y = A.copy()
    dS = np.zeros_like(A)
    for _ in range(int(max_iter)):
        R = Y - dS
        X = _psd_projection(R)
        dS = X - R
        Y_old = Y
        Y = X.copy()
        np.fill_diagonal(Y, 1.0)
        scale = max(1.0, np.linalg.norm(Y))
        if (
            np.linalg.norm(Y - Y_old) <= tol * scale
            and np.linalg.norm(Y - X) <= tol * scale
        ):
            return (Y + Y.T) / 2
    raise RuntimeError(f"nearest_correlation did not converge in {max_iter} iterations")


# --- Study 2: the universal-histogram tree ------------------------------------------------------


def _branching(branching):
    if (
        not isinstance(branching, (int, np.integer))
        or isinstance(branching, bool)
        or branching < 2
    ):
        raise ValueError(f"branching must be an int >= 2, got {branching!r}")
    return int(branching)


def _height(width, k):
    h, size = 1, 1
    while size < width:
        size *= k
        h += 1
    if size != width:
        raise ValueError(
            f"the number of leaves must be a power of branching={k}, got {width}"
        )
    return h


def tree_levels(leaves, *, branching=2):
    """The node values of the complete ``branching``-ary tree over ``leaves``, root first.

    Hay et al. (2010), §4 (the hierarchical query sequence): each node holds the sum of the
    leaves below it.

    Parameters
    ----------
    leaves : array_like, shape (..., k**(h-1))
        Leaf values along the last axis (leading axes are independent trees).
    branching : int
        ``k >= 2``.

    Returns
    -------
    list of ndarray
        ``h`` arrays, level ``d`` of shape ``(..., k**d)``.

    Examples
    --------
    >>> [lv.round(2).tolist() for lv in tree_levels([0.1, 0.2, 0.3, 0.4])]
    [[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]]
    """
    k = _branching(branching)
    leaves = check.finite_array("leaves", leaves)
    if leaves.ndim == 0:
        raise ValueError("leaves must have at least one axis")
    h = _height(leaves.shape[-1], k)
    levels = [leaves]
    for _ in range(h - 1):
        levels.insert(0, levels[0].reshape(*levels[0].shape[:-1], -1, k).sum(axis=-1))
    return levels


def _levels(name, levels, k):
    levels = [check.finite_array(f"{name}[{d}]", lv) for d, lv in enumerate(levels)]
    if not levels:
        raise ValueError(f"{name} must hold at least one level")
    for d, lv in enumerate(levels):
        if lv.ndim == 0 or lv.shape[-1] != k**d:
            raise ValueError(
                f"{name}[{d}] must have k**{d} = {k**d} nodes on its last axis, got shape {lv.shape}"
            )
    shape = np.broadcast_shapes(*(lv.shape[:-1] for lv in levels))
    return [np.broadcast_to(lv, shape + lv.shape[-1:]) for lv in levels]


def consistent_tree(levels, *, branching=2, root=None):
    """Constrained inference on a tree of noisy node values: the least-squares consistent tree.

    Hay et al. (2010), Theorem 3: a bottom-up pass of weighted averages
    ``z[v] = (k^l - k^{l-1}) / (k^l - 1) ỹ[v] + (k^{l-1} - 1) / (k^l - 1) Σ_children z`` (``l`` the
    height of ``v``, leaves ``l = 1``, ``z = ỹ`` there), then a top-down pass
    ``ȳ[v] = z[v] + (ȳ[parent] - Σ_siblings z) / k``.  The result is the orthogonal projection of
    the noisy tree onto consistent trees (every node equals the sum of its children).  With
    ``root`` given, the root is known exactly (Liu 2019, §4.2, steps 3–4, where the root is 1):
    the top-down pass starts from it and the noisy root value is ignored; the result is then the
    least-squares consistent tree among those with that root.

    Parameters
    ----------
    levels : list of array_like
        Noisy node values, root first, level ``d`` of shape ``(..., k**d)``.
    branching : int
    root : float or array_like, optional

    Returns
    -------
    list of ndarray
        The consistent tree, same shapes as ``levels``.
    """
    k = _branching(branching)
    y = _levels("levels", levels, k)
    h = len(y)
    z = [None] * h
    z[-1] = y[-1]
    for d in range(h - 2, -1, -1):
        l = h - d
        child_sum = z[d + 1].reshape(*z[d + 1].shape[:-1], -1, k).sum(axis=-1)
        z[d] = ((k**l - k ** (l - 1)) * y[d] + (k ** (l - 1) - 1) * child_sum) / (
            k**l - 1
        )
    out = [None] * h
    if root is None:
        out[0] = z[0]
    else:
        root = check.finite_array("root", root)
        out[0] = np.broadcast_to(
            root[..., None] if root.ndim else root, z[0].shape
        ).astype(float)
    for d in range(1, h):
        sib = z[d].reshape(*z[d].shape[:-1], -1, k)
        adjust = (out[d - 1] - sib.sum(axis=-1)) / k
        out[d] = (sib + adjust[..., None]).reshape(z[d].shape)
    return out


def consistent_tree_covariance(branching, height, *, root_known=False):
    """Covariance of the consistent tree when every noisy node carries independent unit-variance noise.

    :func:`consistent_tree` is linear in the noisy values, so the noise of its output is
    ``P P^T σ²`` for the matrix ``P`` of that map (computed here by pushing unit vectors through it)
    and noise variance ``σ²`` per node.  With ``root_known`` the root carries no noise (Liu 2019,
    §4.2).  For ``k = 2``, three levels and a known root it gives ``σ²/3`` for each middle node
    and ``7σ²/12`` for each leaf, against ``σ²`` for a node released on its own.

    Parameters
    ----------
    branching : int
    height : int
        Number of levels, root included (``>= 2``).
    root_known : bool

    Returns
    -------
    (N, N) ndarray
        Nodes in level order, root first; multiply by ``σ²`` (``2 b²`` for Laplace noise of scale ``b``).

    Examples
    --------
    >>> C = consistent_tree_covariance(2, 3, root_known=True)
    >>> np.round([C[1, 1] * 3, C[3, 3] * 12], 12).tolist()
    [1.0, 7.0]
    """
    k = _branching(branching)
    if (
        not isinstance(height, (int, np.integer))
        or isinstance(height, bool)
        or height < 2
    ):
        raise ValueError(f"height must be an int >= 2, got {height!r}")
    sizes = [k**d for d in range(height)]
    total = sum(sizes)
    first = 1 if root_known else 0
    basis = np.eye(total)[first:]
    levels = np.split(basis, np.cumsum(sizes)[:-1], axis=-1)
    out = consistent_tree(levels, branching=k, root=0.0 if root_known else None)
    P = np.concatenate(out, axis=-1)
    return P.T @ P


def nonnegative_tree(levels, *, branching=2):
    """Liu's repair of negative nodes in a consistent tree (Liu 2019, §4.2, footnote 4).

    Top-down, every group of siblings has its negative members set to 0 and is re-normalized to
    sum to its parent's (already repaired) value.  Groups with no negative member whose parent
    is unchanged are left as they are; a group whose members are all <= 0 under a positive
    parent is split equally.  The root is kept.

    Parameters
    ----------
    levels : list of array_like
        A consistent tree, root first (as returned by :func:`consistent_tree`).
    branching : int

    Returns
    -------
    list of ndarray
        A consistent tree with every node >= 0 (if the root is >= 0).
    """
    k = _branching(branching)
    t = _levels("levels", levels, k)
    out = [np.array(t[0], dtype=float)]
    for d in range(1, len(t)):
        sib = np.maximum(t[d].reshape(*t[d].shape[:-1], -1, k), 0.0)
        total = sib.sum(axis=-1, keepdims=True)
        parent = out[d - 1][..., None]
        ratio = np.divide(parent, total, out=np.zeros_like(total), where=total > 0)
        fixed = np.where(total > 0, sib * ratio, np.broadcast_to(parent / k, sib.shape))
        out.append(fixed.reshape(t[d].shape))
    return out
