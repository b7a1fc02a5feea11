"""Part II views (dpbook_book.widgets.nonnegative): every view draws, the φ families are what they claim."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book.widgets import VIEWS  # noqa: E402
from dpbook_book.widgets import nonnegative as nn  # noqa: E402


@pytest.mark.parametrize("base", ["laplace", "gaussian"])
def test_coupling_view_both_bases(base):
    plt.close(nn.draw_quantile_coupling(q=1.0, base=base))


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="base"):
        nn.draw_quantile_coupling(base="cauchy")
    with pytest.raises(ValueError, match="family"):
        nn.postprocessing_family("cubic")
    with pytest.raises(ValueError, match="shift"):
        nn.postprocessing_family("translated ramp", shift=-1.0)
    with pytest.raises(ValueError, match="width"):
        nn.postprocessing_family("softplus", width=0.0)
    with pytest.raises(ValueError, match="slope"):
        nn.postprocessing_family("piecewise linear", shift=1.0, slope=1.0)
    with pytest.raises(ValueError, match="offset"):
        nn.postprocessing_family("piecewise linear", shift=0.1, offset=0.2)


@pytest.mark.parametrize(
    "family, params",
    [
        ("ramp", {}),
        ("translated ramp", {"shift": 0.7}),
        ("softplus", {"shift": 0.3, "width": 0.2}),
        ("piecewise linear", {"shift": 1.2, "slope": 3.0, "offset": 0.1}),
        ("piecewise linear", {"shift": 0.5, "slope": 1.5, "offset": 0.5}),
    ],
)
def test_families_are_nonnegative_with_their_declared_tail_and_kinks(family, params):
    kw = nn.postprocessing_family(family, **params)
    x = np.linspace(-50.0, 50.0, 20001)
    y = kw["phi"](x)
    assert y.shape == x.shape and np.all(np.isfinite(y)) and np.all(y >= 0)
    if kw["tail"] is not None:
        x0, c = kw["tail"]
        right = x >= x0
        assert np.allclose(y[right], x[right] - c, rtol=0, atol=1e-12)
    if family == "piecewise linear":
        a, x1 = kw["breakpoints"]
        assert np.all(y[x <= a] == 0)
        assert abs(kw["phi"](x1) - (x1 - params["offset"])) < 1e-12  # continuous where the pieces meet
        middle = (x > a) & (x < x1)
        assert np.allclose(np.diff(y[middle]) / np.diff(x[middle]), params["slope"])


def test_softplus_tends_to_the_translated_ramp():
    x = np.linspace(-5.0, 5.0, 1001)
    ramp = nn.postprocessing_family("translated ramp", shift=0.4)["phi"](x)
    for w, tol in [(0.1, 0.1 * np.log(2) + 1e-12), (0.01, 0.01 * np.log(2) + 1e-12)]:
        soft = nn.postprocessing_family("softplus", shift=0.4, width=w)["phi"](x)
        assert np.all(soft >= ramp - 1e-12) and np.max(soft - ramp) <= tol


def test_every_family_respects_the_prop5_constant():
    bound = dpbook.bias_lower_bound(1.0)
    settings = [
        ("ramp", {}),
        ("translated ramp", {"shift": dpbook.optimal_ramp_shift(1.0)}),
        ("piecewise linear", {"shift": 1.0, "slope": 2.0, "offset": 0.2}),
        ("piecewise linear", {"shift": 1.3, "slope": 4.0, "offset": 0.05}),
    ]
    for family, params in settings:
        mech = dpbook.PostProcessed(1.0, **nn.postprocessing_family(family, **params))
        assert mech.certify_max_abs_bias().lower >= bound
    ramp = dpbook.PostProcessed(1.0, **nn.postprocessing_family("ramp"))
    assert abs(ramp.max_abs_bias() - 0.5) < 1e-9


def test_near_optimal_piecewise_linear_claim_of_chapter_9():
    """Chapter 9: this φ has B(φ) < 0.27848 b, within 1.2e-5 b of b W(1/e)."""
    for b in (1.0, 2.5):
        kw = nn.postprocessing_family("piecewise linear", shift=1.23533731 * b, slope=3.34256629, offset=0.07404727 * b)
        cert = dpbook.PostProcessed(b, **kw).certify_max_abs_bias(q_max=60.0 * b, step=0.002 * b)
        assert dpbook.bias_lower_bound(b) <= cert.lower <= cert.upper < 0.27848 * b


@pytest.mark.parametrize(
    "family, shift, slope, offset, scale",
    [
        ("ramp", 0.0, 3.0, 0.0, 1.0),
        ("translated ramp", 0.35, 3.0, 0.0, 1.0),
        ("translated ramp", 1.7, 3.0, 0.0, 2.5),
        ("piecewise linear", 1.2353, 3.3426, 0.074, 1.0),
        ("piecewise linear", 0.5, 1.5, 0.5, 0.7),
        ("piecewise linear", 2.0, 6.0, 0.0, 3.0),
    ],
)
def test_closed_form_bias_curves_match_the_integrated_ones(family, shift, slope, offset, scale):
    """The view's bias curve for the ramp-built families (by linearity, from TranslatedRamp) is PostProcessed's."""
    q_max = 6.0
    bias, worst = nn._family_bias(family, shift, 0.5, slope, offset, scale, q_max)
    mech = dpbook.PostProcessed(scale, **nn.postprocessing_family(family, shift * scale, 0.5 * scale, slope, offset * scale))
    expected = mech.bias(np.linspace(0.0, q_max * scale, 13))
    assert np.allclose(bias, expected, rtol=1e-10, atol=1e-12 * scale)
    assert abs(worst - mech.max_abs_bias()) <= 1e-10 * scale
    assert not bias.flags.writeable


def test_log_axes_carry_no_minor_ticks():
    for name in ("draw_nonnegative_bias", "draw_log_laplace"):
        fig = VIEWS[name].draw()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if axis.get_scale() == "log":
                    assert len(axis.get_minorticklocs()) == 0
        plt.close(fig)
