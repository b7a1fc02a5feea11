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
        nn._family_phi("cubic", 0.3, 0.5, 3.0, 0.1)
    with pytest.raises(ValueError, match="family"):  # a label is not a key
        nn.draw_postprocessing_bias(family="piecewise linear")


def test_family_options_are_keys_with_separate_labels():
    spec = VIEWS["draw_postprocessing_bias"].controls["family"]
    assert [v for _, v in spec] == list(nn.FAMILIES) and [
        lab for lab, _ in spec
    ] == list(nn.FAMILIES.values())
    fig = nn.draw_postprocessing_bias(family="translated_ramp")
    assert fig.axes[0].get_title() == "translated ramp"
    plt.close(fig)


@pytest.mark.parametrize(
    "family, shift, slope, offset, scale",
    [
        ("ramp", 0.0, 3.0, 0.0, 1.0),
        ("translated_ramp", 0.35, 3.0, 0.0, 1.0),
        ("translated_ramp", 1.7, 3.0, 0.0, 2.5),
        ("piecewise_linear", 1.2353, 3.3426, 0.074, 1.0),
        ("piecewise_linear", 0.5, 1.5, 0.5, 0.7),
        ("piecewise_linear", 2.0, 6.0, 0.0, 3.0),
    ],
)
def test_closed_form_bias_curves_match_the_integrated_ones(
    family, shift, slope, offset, scale
):
    """The view's bias curve for the ramp-built families (by linearity, from TranslatedRamp) is PostProcessed's."""
    q_max = 6.0
    bias, worst = nn._family_bias(family, shift, 0.5, slope, offset, scale, q_max)
    mech = dpbook.PostProcessed(
        scale,
        **nn._family_phi(family, shift * scale, 0.5 * scale, slope, offset * scale),
    )
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
