"""General consistency algorithms for many releases: the nearest positive semi-definite and correlation
matrices (Higham 2002), and least-squares consistency over a hierarchy of sums (Hay et al. 2010; any
fanout, a noise variance per level, a known root: :class:`Hierarchy`, :func:`consistent_hierarchy`)
with Chapter 5's complete tree as its special case and Liu's nonnegative variant."""

from __future__ import annotations

import numpy as np

from ._kernels import validation as check

__all__ = [
    "nearest_psd",
    "nearest_correlation",
    "Hierarchy",
    "consistent_hierarchy",
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


# --- Study 2: the universal-histogram tree, and any hierarchy of sums ---------------------------


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


class Hierarchy:
    """A hierarchy of sums: a root, levels of nodes below it, each node the sum of its children.

    Level ``0`` is the root; ``fanout[d][j]`` is the number of children of node ``j`` of level
    ``d``, and the children of a level's nodes are consecutive, in order, on the next level (the
    nodes of level ``d + 1`` under node ``j`` come right after those under node ``j - 1``).
    Every node above the last level has at least one child; the last level holds the leaves.
    Hay et al. (2010) use the complete ``k``-ary tree (:meth:`uniform`); the US Census's
    geography (nation, states, counties) is irregular.

    Parameters
    ----------
    fanout : list of array_like of int
        One entry per level above the leaves, root first: ``fanout[0]`` has one entry (the
        root's children), ``fanout[d]`` has ``sizes[d]`` entries, each ``>= 1``.  An empty list
        is a root alone.

    Attributes
    ----------
    fanout : tuple of numpy.ndarray
        The children counts of each level above the leaves (integer arrays, ``int64``).
    sizes : tuple of int
        Nodes per level, root first (``sizes[0] = 1``).
    height : int
        Number of levels, root and leaves included (``len(sizes)``).

    Examples
    --------
    >>> H = Hierarchy([[3], [4, 2, 6]])         # a total, 3 regions, 12 areas
    >>> H.sizes, H.height
    ((1, 3, 12), 3)
    >>> H.parent_index(2).tolist()
    [0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 2]
    >>> [lv.tolist() for lv in H.levels(np.arange(12))]
    [[66], [6, 9, 51], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]
    """

    def __init__(self, fanout):
        if not isinstance(fanout, (list, tuple)):
            raise ValueError(f"fanout must be a list of int arrays, got {fanout!r}")
        sizes = [1]
        levels = []
        for d, f in enumerate(fanout):
            f = check.integer_array(f"fanout[{d}]", f, limit=2.0**40)
            if f.ndim != 1 or f.shape[0] != sizes[-1] or (f < 1).any():
                raise ValueError(
                    f"fanout[{d}] must be {sizes[-1]} int(s) >= 1 (one per node of level "
                    f"{d}), got {fanout[d]!r}"
                )
            f = f.astype(np.int64)
            f.flags.writeable = False
            levels.append(f)
            sizes.append(int(f.sum()))
        self.fanout = tuple(levels)
        self.sizes = tuple(sizes)
        self.height = len(sizes)
        self._starts = tuple(np.cumsum(f) - f for f in self.fanout)

    @classmethod
    def uniform(cls, branching, height):
        """The complete ``branching``-ary hierarchy with ``height`` levels (root included).

        Parameters
        ----------
        branching : int
            ``>= 2`` children per node.
        height : int
            ``>= 1`` levels; the leaves number ``branching**(height - 1)``.

        Returns
        -------
        Hierarchy

        Examples
        --------
        >>> Hierarchy.uniform(2, 3).sizes
        (1, 2, 4)
        """
        k = _branching(branching)
        h = check.count("height", height, 1)
        if k ** (h - 1) > 2**40:
            raise ValueError(
                f"height={height!r} with branching={branching!r} gives "
                f"{k ** (h - 1)} leaves, more than 2**40"
            )
        return cls([np.full(k**d, k) for d in range(h - 1)])

    def __repr__(self):
        return f"Hierarchy({[f.tolist() for f in self.fanout]!r})"

    def __eq__(self, other):
        return (
            isinstance(other, Hierarchy)
            and self.sizes == other.sizes
            and all(np.array_equal(a, b) for a, b in zip(self.fanout, other.fanout))
        )

    __hash__ = None

    def parent_index(self, d):
        """The index, on level ``d - 1``, of the parent of each node of level ``d``.

        Parameters
        ----------
        d : int
            A level, ``1 <= d < height``.

        Returns
        -------
        ndarray of intp, shape (sizes[d],)

        Examples
        --------
        >>> Hierarchy([[2], [1, 3]]).parent_index(2).tolist()
        [0, 1, 1, 1]
        """
        if (
            isinstance(d, bool)
            or not isinstance(d, (int, np.integer))
            or not 1 <= d < self.height
        ):
            raise ValueError(f"d must be an int in [1, {self.height - 1}], got {d!r}")
        return np.repeat(np.arange(self.sizes[d - 1]), self.fanout[d - 1])

    def _sum_children(self, d, values):
        """Sum level ``d + 1``'s ``(..., sizes[d + 1])`` values into their parents on level ``d``."""
        return np.add.reduceat(values, self._starts[d], axis=-1)

    def _spread(self, d, values):
        """Each parent's ``(..., sizes[d])`` value repeated for each of its children."""
        return np.repeat(values, self.fanout[d], axis=-1)

    def levels(self, leaves):
        """The value of every node, root first: each node the sum of the leaves below it.

        Generalizes :func:`tree_levels` (Hay et al. 2010, §4) to any hierarchy.

        Parameters
        ----------
        leaves : array_like, shape (..., sizes[-1])
            Leaf values on the last axis (leading axes are independent hierarchies).

        Returns
        -------
        list of ndarray
            ``height`` arrays, level ``d`` of shape ``(..., sizes[d])``; integer leaves give
            integer sums (exactly, while they fit in 64 bits).

        Examples
        --------
        >>> [lv.tolist() for lv in Hierarchy([[2], [1, 2]]).levels([0.5, 0.25, 0.25])]
        [[1.0], [0.5, 0.5], [0.5, 0.25, 0.25]]
        """
        x = check.finite_array("leaves", leaves)
        if x.ndim == 0 or x.shape[-1] != self.sizes[-1]:
            raise ValueError(
                f"leaves must have {self.sizes[-1]} leaves on its last axis (the hierarchy's "
                f"last level), got shape {x.shape}"
            )
        if np.issubdtype(np.asarray(leaves).dtype, np.integer):
            x = np.asarray(leaves, dtype=np.int64)
        out = [x]
        for d in range(self.height - 2, -1, -1):
            out.insert(0, self._sum_children(d, out[0]))
        return out

    def _check_levels(self, name, levels):
        """Validated float levels, broadcast to one shape of leading axes."""
        if not isinstance(levels, (list, tuple)):
            raise ValueError(
                f"{name} must be a list of arrays, one per level, got {levels!r}"
            )
        if len(levels) != self.height:
            raise ValueError(
                f"{name} must hold {self.height} levels (the hierarchy's height), "
                f"got {len(levels)}"
            )
        out = [check.finite_array(f"{name}[{d}]", lv) for d, lv in enumerate(levels)]
        for d, lv in enumerate(out):
            if lv.ndim == 0 or lv.shape[-1] != self.sizes[d]:
                raise ValueError(
                    f"{name}[{d}] must have {self.sizes[d]} nodes on its last axis, "
                    f"got shape {lv.shape}"
                )
        try:
            shape = np.broadcast_shapes(*(lv.shape[:-1] for lv in out))
        except ValueError:
            raise ValueError(
                f"the leading axes of {name} must broadcast, got shapes "
                f"{[lv.shape for lv in out]}"
            ) from None
        return [np.broadcast_to(lv, shape + lv.shape[-1:]) for lv in out]


def _hierarchy(hierarchy):
    if not isinstance(hierarchy, Hierarchy):
        raise ValueError(f"hierarchy must be a Hierarchy, got {hierarchy!r}")
    return hierarchy


def _level_variances(variances, height):
    if variances is None:
        return [1.0] * height
    v = check.real_array("variances", variances)
    if v.shape != (height,) or not (v > 0).all() or not np.isfinite(v[-1]):
        raise ValueError(
            f"variances must be {height} numbers > 0, one per level (inf for a level not "
            f"measured, but a finite one for the leaves), got {variances!r}"
        )
    return [float(s) for s in v]


def _known_root(root, shape):
    root = check.finite_array("root", root)
    try:
        return np.broadcast_to(root[..., None], shape).astype(float)
    except ValueError:
        raise ValueError(
            f"root must broadcast with the hierarchies' shape {shape[:-1]}, got shape "
            f"{root.shape}"
        ) from None


def consistent_hierarchy(levels, hierarchy, *, variances=None, root=None):
    """The weighted least-squares consistent hierarchy: constrained inference on noisy node values.

    Minimizes ``Σ_d Σ_{v on level d} (x_v - y_v)^2 / σ_d^2`` over hierarchies ``x`` in which
    every node equals the sum of its children: Hay et al. (2010), Theorem 3, generalized to any
    fanout and a noise variance ``σ_d^2`` per level.  Bottom-up, each node's estimate from its
    own subtree is the inverse-variance combination
    ``z_v = (y_v/σ_d^2 + Σ_c z_c / V_v) / (1/σ_d^2 + 1/V_v)`` of its noisy value and the sum of
    its children's estimates (``V_v = Σ_c v_c`` the variance of that sum, ``v_v`` the variance of
    ``z_v``, ``z = y`` and ``v = σ^2`` on the leaves); top-down, each group of siblings shares its
    parent's discrepancy in proportion to their variances:
    ``x_c = z_c + v_c / Σ_sib v (x_parent - Σ_sib z)``.  (With independent noise this is the
    Gaussian-posterior mean under a flat prior, hence the weighted least squares; for the
    complete ``k``-ary tree with equal variances it is Hay et al.'s formula, see
    :func:`consistent_tree`.)  With ``root`` given the root is known exactly (a public total;
    Liu 2019, §4.2): the top-down pass starts from it and the noisy root is ignored.

    Parameters
    ----------
    levels : list of array_like
        Noisy node values, root first, level ``d`` of shape ``(..., sizes[d])`` (leading axes
        broadcast: independent hierarchies).
    hierarchy : Hierarchy
    variances : array_like, shape (height,), optional
        The noise variance of each level (only their ratios matter); ``inf`` for a level that
        was not measured (its values are ignored; the leaves must be measured).  Default:
        equal.
    root : float or array_like, optional
        The known root value of each hierarchy.

    Returns
    -------
    list of ndarray of float
        The consistent hierarchy, level ``d`` of shape ``(..., sizes[d])``.

    Examples
    --------
    >>> H = Hierarchy([[2], [1, 2]])
    >>> out = consistent_hierarchy([[10.0], [4.0, 5.0], [4.0, 2.0, 2.0]], H, root=10.0)
    >>> [lv.round(4).tolist() for lv in out]
    [[10.0], [4.5714, 5.4286], [4.5714, 2.7143, 2.7143]]
    """
    H = _hierarchy(hierarchy)
    y = H._check_levels("levels", levels)
    var = _level_variances(variances, H.height)
    z, v = [None] * H.height, [None] * H.height
    z[-1], v[-1] = y[-1], np.full(H.sizes[-1], var[-1])
    for d in range(H.height - 2, -1, -1):
        s, V = H._sum_children(d, z[d + 1]), H._sum_children(d, v[d + 1])
        if np.isinf(var[d]):
            z[d], v[d] = s, V
        else:
            w = V / (var[d] + V)  # the weight of the node's own noisy value
            z[d] = w * y[d] + (1 - w) * s
            v[d] = var[d] * w
    out = [_known_root(root, z[0].shape) if root is not None else z[0]]
    for d in range(1, H.height):
        gap = out[d - 1] - H._sum_children(d - 1, z[d])
        share = v[d] / H._spread(d - 1, H._sum_children(d - 1, v[d]))
        out.append(z[d] + share * H._spread(d - 1, gap))
    return out


def tree_levels(leaves, *, branching=2):
    """The node values of the complete ``branching``-ary tree over ``leaves``, root first.

    Hay et al. (2010), §4 (the hierarchical query sequence): each node holds the sum of the
    leaves below it.  The complete tree's case of :meth:`Hierarchy.levels`.

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
    return Hierarchy.uniform(k, _height(leaves.shape[-1], k)).levels(leaves)


def _levels(name, levels, k):
    if not isinstance(levels, (list, tuple)) or not levels:
        raise ValueError(f"{name} must hold at least one level, got {levels!r}")
    return Hierarchy.uniform(k, len(levels))._check_levels(name, levels)


def consistent_tree(levels, *, branching=2, root=None):
    """Constrained inference on a tree of noisy node values: the least-squares consistent tree.

    Hay et al. (2010), Theorem 3: a bottom-up pass of weighted averages
    ``z[v] = (k^l - k^{l-1}) / (k^l - 1) ỹ[v] + (k^{l-1} - 1) / (k^l - 1) Σ_children z`` (``l`` the
    height of ``v``, leaves ``l = 1``, ``z = ỹ`` there), then a top-down pass
    ``ȳ[v] = z[v] + (ȳ[parent] - Σ_siblings z) / k``.  The result is the orthogonal projection of
    the noisy tree onto consistent trees (every node equals the sum of its children).  With
    ``root`` given, the root is known exactly (Liu 2019, §4.2, steps 3–4, where the root is 1):
    the top-down pass starts from it and the noisy root value is ignored; the result is then the
    least-squares consistent tree among those with that root.  The complete tree with equal
    variances is the case of :func:`consistent_hierarchy`, which computes it: there a node of
    height ``l`` gets variance ``v_l = (k^l - k^{l-1}) / (k^l - 1)`` (noise variance 1) from its
    subtree, and ``v_l`` is the weight above (induction: ``v_{l+1} = k v_l / (1 + k v_l)``).

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

    Examples
    --------
    >>> [lv.round(3).tolist() for lv in consistent_tree([[1.0], [0.2, 0.6]])]
    [[0.933], [0.267, 0.667]]
    """
    k = _branching(branching)
    _levels("levels", levels, k)
    return consistent_hierarchy(levels, Hierarchy.uniform(k, len(levels)), root=root)


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
