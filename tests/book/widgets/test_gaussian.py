"""Chapter 25's view (dpbook_book.widgets.gaussian): it draws the library's exact MSEs at composed scales."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import gaussian as g  # noqa: E402


@pytest.mark.parametrize("epsilon, k", [(1.0, 1), (0.5, 7), (3.0, 20)])
def test_scales_give_the_budget_after_k_releases(epsilon, k):
    b, sigma = g.release_scales(epsilon, k)
    assert b == pytest.approx(k * g.SENSITIVITY / epsilon, rel=1e-15)
    # k Laplace releases at b: each spends Δ/b = ε/k
    assert dpbook.privacy_loss(dpbook.Laplace(b), g.SENSITIVITY) * k == pytest.approx(
        epsilon, rel=1e-12
    )
    # the scaled unit calibration is the library's calibration at √k Δ, and its δ is within the target
    direct = dpbook.analytic_gaussian_scale(
        epsilon, g.DELTA, math.sqrt(k) * g.SENSITIVITY
    )
    assert sigma == pytest.approx(direct, rel=1e-12)
    sens_k = math.sqrt(k) * g.SENSITIVITY
    assert dpbook.gaussian_delta(sigma, epsilon, sens_k) <= g.DELTA * (1 + 1e-12)
    assert dpbook.gaussian_delta(sigma * (1 - 1e-6), epsilon, sens_k) > g.DELTA


def test_clamped_mse_is_the_families_exact_mse():
    q = np.array([0.0, 0.003, 0.2, 0.5, 1.0])
    laplace, gaussian = g.clamped_mse(2.0, 3, q)
    b, sigma = g.release_scales(2.0, 3)
    assert np.array_equal(laplace, dpbook.BIT(b, lower=0.0, upper=1.0).mse(q))
    assert np.array_equal(
        gaussian, dpbook.GaussianBIT(sigma, lower=0.0, upper=1.0).mse(q)
    )
    # clamping never adds error to an unbiased release of a value inside the range
    assert np.all(laplace <= 2 * b**2 * (1 + 1e-12))
    assert np.all(gaussian <= sigma**2 * (1 + 1e-12))


def test_crossing_is_the_first_k_where_the_gaussian_wins():
    for epsilon, q in ((1.0, 0.5), (0.5, 0.0), (4.0, 0.3)):
        k = g.crossing_k(epsilon, q)
        assert k is not None and k > 1
        before, after = g.clamped_mse(epsilon, k - 1, q), g.clamped_mse(epsilon, k, q)
        assert before[1] >= before[0] and after[1] < after[0]
    # without clamping the crossing is where k σ₁² = 2 k² b₁² (σ and b per unit of budget)
    b1, s1 = g.release_scales(1.0, 1)
    assert g.crossing_k(1.0, 0.5) >= math.ceil(s1**2 / (2 * b1**2))
    assert g.crossing_k(1.0, 0.5, k_max=3) is None


def test_curves_draw_the_exact_mse():
    fig = g.draw_laplace_or_gaussian(epsilon=2.0, k=4)
    (ax,) = fig.axes
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 2]
    assert len(lines) == 2
    laplace, gaussian = g.clamped_mse(2.0, 4, lines[0].get_xdata())
    assert np.allclose(lines[0].get_ydata(), laplace, rtol=1e-14, atol=0)
    assert np.allclose(lines[1].get_ydata(), gaussian, rtol=1e-14, atol=0)
    assert "Gaussian better" in ax.get_title() or "Laplace better" in ax.get_title()
    plt.close(fig)


def test_the_view_is_registered_with_a_small_grid():
    v = widgets.VIEWS["draw_laplace_or_gaussian"]
    frames = np.prod([len(values) for values in v.frame_grid().values()])
    assert v.draw is g.draw_laplace_or_gaussian and frames <= widgets.MAX_FRAMES


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        g.release_scales(0.0, 1)
    with pytest.raises(ValueError, match="epsilon"):
        g.release_scales(float("nan"), 1)
    with pytest.raises(ValueError, match="k"):
        g.release_scales(1.0, 0)
    with pytest.raises(ValueError, match="k"):
        g.release_scales(1.0, 2.5)
    with pytest.raises(ValueError, match="k_max"):
        g.crossing_k(1.0, 0.5, k_max=0)


def test_crossing_is_vectorized_over_the_true_value():
    q = np.array([0.0, 0.01, 0.1, 0.5])
    many = g.crossing_k(2.0, q)
    assert many.shape == q.shape
    assert many.tolist() == [g.crossing_k(2.0, float(v)) for v in q]
    assert np.isnan(g.crossing_k(2.0, q, k_max=2)).all()
