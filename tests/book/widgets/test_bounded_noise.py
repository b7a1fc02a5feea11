"""Chapter 26's view (dpbook_book.widgets.bounded_noise): Geng's truncated Laplacian against the Gaussian."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import widgets  # noqa: E402
from dpbook_book.widgets import bounded_noise as bn  # noqa: E402


def test_ratios_are_the_library_numbers():
    c = bn.comparison(1.0)
    assert c["delta"].size >= 20
    for i in (0, c["delta"].size // 2, c["delta"].size - 1):
        delta, sigma = c["delta"][i], c["sigma"][i]
        assert delta == dpbook.gaussian_delta(float(sigma), 1.0, 1.0)
        geng = dpbook.geng_truncated_laplace(1.0, float(delta), 1.0)
        amp = geng.mean_absolute_noise() / (sigma * math.sqrt(2 / math.pi))
        assert c["amplitude"][i] == pytest.approx(amp, rel=1e-12)
        assert c["power"][i] == pytest.approx(geng.variance(0.0) / sigma**2, rel=1e-12)


def test_each_sigma_is_the_analytic_gaussian_scale_at_its_delta():
    """The curve is traced along σ: each σ is the smallest (ε, δ)-DP scale at its own δ."""
    c = bn.comparison(2.0)
    for i in (1, c["delta"].size // 3, c["delta"].size - 2):
        want = dpbook.analytic_gaussian_scale(2.0, float(c["delta"][i]), 1.0)
        assert c["sigma"][i] == pytest.approx(want, rel=1e-9)


def test_curve_covers_the_delta_range_and_falls_along_sigma():
    lo, hi = bn.DELTA_RANGE
    for eps in bn.EPSILONS:
        c = bn.comparison(eps)
        d = c["delta"]
        assert np.all((d >= lo) & (d <= hi)) and np.all(np.diff(d) < 0), eps
        assert d[0] > 0.2 and d[-1] < 1e-9, (
            eps
        )  # the drawn range is reached at both ends


def test_where_geng_beats_the_gaussian_and_where_not():
    """Below δ = 1e-2 both ratios are under 1 at every budget of the page; near δ = 1/2 at ε = 2 the
    Gaussian has the smaller noise power and amplitude."""
    for eps in bn.EPSILONS:
        c = bn.comparison(eps)
        small = c["delta"] <= 1e-2
        assert np.all(c["amplitude"][small] < 1) and np.all(c["power"][small] < 1), eps
    c = bn.comparison(2.0)
    assert c["amplitude"].max() > 1 and c["power"].max() > 1.05


def test_lines_draw_the_comparison():
    fig = bn.draw_noise_vs_gaussian(epsilon=0.5)
    (ax,) = fig.axes
    c = bn.comparison(0.5)
    amp, power = ax.get_lines()[:2]
    assert np.array_equal(amp.get_xdata(), c["delta"])
    assert np.array_equal(amp.get_ydata(), c["amplitude"])
    assert np.array_equal(power.get_ydata(), c["power"])
    plt.close(fig)


def test_the_view_is_registered_with_a_small_grid():
    v = widgets.VIEWS["draw_noise_vs_gaussian"]
    frames = np.prod([len(values) for values in v.frame_grid().values()])
    assert v.draw is bn.draw_noise_vs_gaussian and frames <= widgets.MAX_FRAMES


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), True, "1"])
def test_bad_epsilon_names_the_parameter(bad):
    with pytest.raises(ValueError, match="epsilon"):
        bn.comparison(bad)
    with pytest.raises(ValueError, match="epsilon"):
        bn.sigma_grid(bad)
