"""The block-by-block sampling helper (``dpbook/_kernels/sampling.py``): blocks never change the draws."""

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook._kernels import sampling

MECHANISMS = [
    dpbook.BIT(1.0, lower=0.0, upper=2.0),
    dpbook.TranslatedRamp(1.0, 0.6),
    dpbook.StepPostProcessed(1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5),
    dpbook.FoldedLaplace(1.0, lower=0.0, upper=1.0),
    dpbook.FoldedLaplace(0.8, lower=0.0, upper=np.inf),
    dpbook.FoldedLaplace(1.0, lower=-np.inf, upper=2.0),
    dpbook.Restricted(stats.logistic(scale=0.7)),
    dpbook.Restricted(stats.norm(loc=0.3, scale=2.0)),
    dpbook.Normalized(0.8, [(-np.inf, -2.0), (0.0, 1.0), (3.0, 7.5)]),
    dpbook.Normalized(1e300, [(0.0, 1.0), (2.0, 4.0)]),
    dpbook.CroftLaplace(1.0, 1.0),
]


def _name(mech):
    """A test id the same in every worker (a scipy base's repr holds its address)."""
    if isinstance(mech, dpbook.Restricted):
        return f"Restricted({mech.base.dist.name}, {mech.base.kwds})"
    return repr(mech)


@pytest.mark.parametrize("mech", MECHANISMS, ids=_name)
@pytest.mark.parametrize("q", [0.4, [[0.2, 1.7, -0.3]]])
def test_blocks_do_not_change_the_draws(monkeypatch, mech, q):
    """Blocks of any size give the very same draws, for one true value and for a true value per column."""
    whole = mech.sample(q, size=(3001, 3), rng=np.random.default_rng(4))
    monkeypatch.setattr(sampling, "_BLOCK", 1000)
    assert np.array_equal(
        mech.sample(q, size=(3001, 3), rng=np.random.default_rng(4)), whole
    )
    monkeypatch.setattr(sampling, "_BLOCK", 7)
    assert np.array_equal(
        mech.sample(q, size=(3001, 3), rng=np.random.default_rng(4)), whole
    )


def test_blocks_do_not_change_log_laplace_draws(monkeypatch):
    """The multiplicative mechanism's draws, one true value and one per column, with blocks of any size."""
    mech = dpbook.LogLaplace(0.3)
    for q in (0.4, [[0.2, 1.7, 30.0]]):
        whole = mech.sample(q, size=(3001, 3), rng=np.random.default_rng(4))
        monkeypatch.setattr(sampling, "_BLOCK", 7)
        assert np.array_equal(
            mech.sample(q, size=(3001, 3), rng=np.random.default_rng(4)), whole
        )
        monkeypatch.undo()


def test_blocks_pass_each_block_its_true_values():
    """A true value per draw reaches the draws of its own block (the map here returns the true value)."""
    q = np.arange(40_000, dtype=float).reshape(200, 200)
    out = sampling._uniform_blocks(
        np.random.default_rng(0), q.shape, q, lambda u, v: v + 0 * u
    )
    assert np.array_equal(out, q)
    one = sampling._uniform_blocks(
        np.random.default_rng(0), (), np.float64(2.5), lambda u, v: u * 0 + v
    )
    assert one.shape == () and one == 2.5
