"""Part IV views and comparison helpers (dpbook_book.widgets.choosing)."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpbook  # noqa: E402
from dpbook_book import choosing as core  # noqa: E402
from dpbook_book.widgets import choosing as ch  # noqa: E402


@pytest.mark.parametrize("domain", core.DOMAINS)
def test_calibrated_mechanisms_spend_exactly_epsilon(domain):
    for eps in (0.3, 1.0, 2.5):
        cands = core.calibrated_mechanisms(eps, domain=domain)
        assert cands[0].key == "laplace"
        for c in cands:
            assert abs(c.loss - eps) < 1e-6, c.name
            lo, hi = (0.0, math.inf) if domain == "count" else (0.0, 1.0)
            if c.key != "laplace":
                x = c.mechanism.sample(
                    np.linspace(lo, min(hi, 5.0), 50), rng=np.random.default_rng(1)
                )
                assert np.all((x >= lo) & (x <= hi))


def test_worst_cases_match_closed_forms_on_the_half_line():
    rows = {r["key"]: r for r in core.compare_mechanisms(1.0, 2.0, "count")}
    b = 2.0
    w = dpbook.bias_lower_bound(1.0)
    a = dpbook.optimal_ramp_shift(b)
    bt = dpbook.truncated_scale(1.0, 2.0)
    assert abs(rows["clamping"]["worst_bias"] - b / 2) < 1e-12
    assert abs(rows["ramp"]["worst_bias"] - a) < 1e-9
    assert abs(rows["optimal"]["worst_bias"] - w * b) < 1e-9
    assert abs(rows["truncated"]["worst_bias"] - bt) < 1e-9
    assert abs(rows["optimal"]["worst_mse"] - (2 + w**2) * b * b) < 1e-9
    assert abs(rows["truncated"]["worst_mse"] - 2 * bt * bt) < 1e-9


def test_decision_table_follows_the_numbers():
    table = core.decision_table(1.0, domain="count")
    assert table[0]["best"] == ["optimal"]
    assert table[1]["best"] == ["clamping"]
    rows = core.compare_mechanisms(1.0, domain="count")
    candidates = [r for r in rows if r["key"] != "laplace"]
    for entry, key in zip(table, ("worst_bias", "worst_mse", "mse_at_0", "mse_far")):
        assert entry["value"] == min(r[key] for r in candidates)
        assert entry["runner_up_value"] > entry["value"]


def test_draw_program_marks_the_grid():
    res = dpbook.min_bias_postprocessing(
        scale=1.0, x_range=(-4.0, 8.0), cell=0.5, q_max=16.0, q_step=1.0, tame=None
    )
    fig = ch.draw_program(res, q_step=1.0)
    fig.canvas.draw()
    plt.close(fig)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="domain"):
        core.calibrated_mechanisms(1.0, domain="[0, 2]")
    with pytest.raises(ValueError, match="epsilon"):
        core.calibrated_mechanisms(-1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        core.compare_mechanisms(1.0, 0.0)
    with pytest.raises(ValueError, match="metric"):
        ch.draw_choosing(metric="median")
