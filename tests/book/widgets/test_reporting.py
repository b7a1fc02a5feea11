"""Chapter 17's view (dpbook_book.widgets.reporting): it draws the library's interval and coverage."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book.widgets import reporting as rep  # noqa: E402


@pytest.mark.parametrize("mechanism", sorted(rep.MECHANISMS))
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_mechanisms_are_audited_at_epsilon(mechanism, epsilon):
    mech = rep.reporting_mechanism(mechanism, epsilon)
    assert mech.domain == (0.0, 1.0)
    loss = dpbook.privacy_loss(mech, rep.SENSITIVITY)
    assert abs(loss - epsilon) < 1e-6


def test_left_panel_shades_the_library_interval():
    fig = rep.draw_release_interval(mechanism="clamping", epsilon=1.0, release=0.05)
    mech = rep.reporting_mechanism("clamping", 1.0)
    ci = dpbook.confidence_interval(mech, 0.05, 0.95)
    span = fig.axes[0].patches[0].get_bbox()  # x in data coordinates
    assert np.isclose(span.x0, ci.low) and np.isclose(span.x1, ci.high)
    # for clamping the interval is the Laplace interval x ± b ln(1/α) cut to the bounds
    t = mech.scale * np.log(1 / 0.05)
    assert np.isclose(ci.low, 0.0) and np.isclose(ci.high, 0.05 + t)
    plt.close(fig)


@pytest.mark.parametrize("mechanism", sorted(rep.MECHANISMS))
def test_coverage_curves_hold_the_level_and_the_plugin_does_not(mechanism):
    q, exact, plugin = rep._coverage_curves(mechanism, 1.0, 1.0, 0.95)
    assert q.size == rep.COVERAGE_POINTS
    assert exact.min() >= 0.95 - 1e-9
    assert (
        plugin.min() < 0.93
    )  # the check on ``exact`` can fail: the plug-in curve fails it


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="mechanism"):
        rep.reporting_mechanism("bit")
    with pytest.raises(ValueError, match="upper"):
        rep.reporting_mechanism("clamping", upper=np.inf)
