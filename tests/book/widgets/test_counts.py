"""Chapter 19's view (dpbook_book.widgets.counts): four ε-DP releases of a count, bias and RMSE exactly."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book.widgets import counts  # noqa: E402


@pytest.mark.parametrize("epsilon, n", [(0.5, 5), (1.0, 10), (2.0, 30)])
def test_every_mechanism_is_epsilon_dp(epsilon, n):
    mechs = counts.count_mechanisms(epsilon, n)
    assert set(mechs) == set(counts.LABELS)
    for key in ("discrete_bit", "discrete_truncated", "rounded_bit"):
        assert abs(dpbook.privacy_loss(mechs[key], 1) - epsilon) < 1e-6 * epsilon, key
    # rounding is post-processing: the continuous truncation is audited at epsilon before it, and the
    # exact loss of its rounding over integer counts is no larger
    rounded = mechs["rounded_truncated"]
    assert abs(dpbook.privacy_loss(rounded.mechanism, 1.0) - epsilon) < 1e-6 * epsilon
    assert dpbook.privacy_loss(rounded, 1) <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("b, n", [(1.0, 10), (0.4, 3), (3.0, 7)])
def test_rounded_clamping_matches_a_direct_sum(b, n):
    """round(clip(q + L, 0, n)) = clip(q + round(L), 0, n) for integer q: sum the law of round(L)."""
    q = np.arange(n + 1)
    mech = dpbook.Rounded(dpbook.BIT(b, lower=0.0, upper=float(n)))
    bias, mse = mech.bias(q), mech.mse(q)
    j = np.arange(-n - 60 * int(b + 1), n + 60 * int(b + 1) + 1)
    p = np.where(
        j == 0, -math.expm1(-0.5 / b), np.exp(-np.abs(j) / b) * math.sinh(0.5 / b)
    )
    assert abs(p.sum() - 1) < 1e-12
    for qi in q:
        out = np.clip(qi + j, 0, n)
        assert math.isclose(
            bias[qi], float(np.sum(p * out)) - qi, rel_tol=1e-9, abs_tol=1e-12
        )
        assert math.isclose(
            mse[qi], float(np.sum(p * (out - qi) ** 2)), rel_tol=1e-9, abs_tol=1e-12
        )


def test_rounded_truncation_matches_simulation():
    """The rounded continuous truncation's bias at 5 Monte Carlo standard errors."""
    mech = counts.count_mechanisms(1.0, 10)["rounded_truncated"]
    rng = np.random.default_rng(18)
    for q in (0, 1, 5):
        x = mech.sample(float(q), 100_000, rng=rng)
        assert x.dtype == np.int64
        bias, sd = mech.bias(q), math.sqrt(mech.variance(q))
        assert abs((x.mean() - q) - bias) < 5 * sd / math.sqrt(x.size)


def test_view_draws_both_panels():
    fig = counts.draw_count_boundary(epsilon=1.0, n=10)
    ax, ax2 = fig.axes[:2]
    assert (
        len(ax.get_lines()) == 5 and len(ax2.get_lines()) == 5
    )  # four curves and a line
    q, curves = counts._curves(1.0, 10)
    bias = ax.get_lines()[0].get_ydata()
    assert np.allclose(bias, curves["discrete_bit"][0])
    assert np.allclose(bias, dpbook.DiscreteBIT(1.0, lower=0, upper=10).bias(q))
    plt.close(fig)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        counts.count_mechanisms(0.0, 10)
    with pytest.raises(ValueError, match="n"):
        counts.count_mechanisms(1.0, 0)
