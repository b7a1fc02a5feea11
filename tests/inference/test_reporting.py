"""The release card: audited ε, the exact interval, worst bias and MSE over it that never under-report."""

import dataclasses
import math
import re

import numpy as np
import pytest
from scipy import optimize, stats

import dpbook


def dense_worst(mech, lo, hi, n=20001):
    q = np.linspace(lo, hi, n)
    return float(np.max(np.abs(mech.bias(q)))), float(np.max(mech.mse(q)))


@pytest.mark.parametrize(
    "mech,x",
    [
        (dpbook.BIT(0.2, lower=0.0, upper=1.0), 0.0),
        (dpbook.BIT(0.2, lower=0.0, upper=1.0), 0.6),
        (dpbook.Truncated(0.2, lower=0.0, upper=1.0), 0.3),
        (dpbook.Truncated(3.0, lower=0.0, upper=1.0), 0.9),
        (dpbook.TranslatedRamp(0.5, 0.1), 0.3),
        (dpbook.Normalized(0.3, [(0.0, 1.0), (2.0, 3.0)]), 0.5),
        (dpbook.LogLaplace(0.3), 2.0),
        (dpbook.Laplace(1.0), 0.5),
    ],
)
def test_worst_cases_never_under_report(mech, x):
    card = dpbook.release_card(mech, x, sensitivity=0.1, level=0.9)
    bias, mse = dense_worst(mech, card.interval.low, card.interval.high)
    assert card.certified
    assert card.worst_abs_bias >= bias * (1 - 1e-12) - 1e-15
    assert card.worst_mse >= mse * (1 - 1e-12)
    assert card.worst_mse <= mse * 1.02 + 1e-12  # and the bound is close
    assert card.worst_abs_bias <= bias * 1.05 + 1e-3 * mse**0.5 + 1e-12


def test_audited_epsilon_not_the_nominal_one():
    mech = dpbook.Truncated(0.2, lower=0.0, upper=1.0)
    card = dpbook.release_card(mech, 0.3, sensitivity=0.1)
    assert card.epsilon == pytest.approx(
        dpbook.privacy_loss(mech, 0.1, domain=(0.0, 1.0)), rel=1e-12
    )
    assert card.epsilon > 0.1 / 0.2 and card.epsilon_exact
    bit = dpbook.release_card(
        dpbook.BIT(0.2, lower=0.0, upper=1.0), 0.3, sensitivity=0.1
    )
    assert bit.epsilon == pytest.approx(0.5, rel=1e-12)


def test_card_holds_the_interval_and_the_release():
    mech = dpbook.BIT(0.2, lower=0.0, upper=1.0)
    card = dpbook.release_card(mech, 0.6, sensitivity=0.1, level=0.9)
    ci = dpbook.confidence_interval(mech, 0.6, 0.9)
    assert (card.interval.low, card.interval.high) == (ci.low, ci.high)
    assert card.release == 0.6 and (card.lower, card.upper) == (0.0, 1.0)
    assert card.parameters == {"scale": 0.2, "lower": 0.0, "upper": 1.0}
    with pytest.raises(dataclasses.FrozenInstanceError):
        card.epsilon = 0.0


def test_text_and_html():
    card = dpbook.release_card(
        dpbook.Truncated(0.2, lower=0.0, upper=1.0), 0.3, sensitivity=0.1, level=0.9
    )
    text = str(card)
    for word in (
        "Truncated(scale=0.2",
        "Bounds",
        "epsilon = 0.830553 (exact)",
        "90% interval",
        "Worst MSE",
        "NIST SP 800-226",
    ):
        assert word in text, word
    page = card._repr_html_()
    assert page.startswith("<table") and page.count("<tr>") == len(card.rows())
    assert '<th scope="row"' in page and "width:" not in re.sub(
        r"max-width:100%", "", page
    )
    assert len(card.nist_items) == 5


def test_uncertified_figures_say_so():
    mech = dpbook.Restricted(stats.norm(scale=0.3))
    card = dpbook.release_card(mech, 0.2, sensitivity=0.1)
    assert not card.certified and "not certified" in str(card)
    assert math.isinf(card.epsilon)  # the Gaussian restriction is not pure DP


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(x=[0.1, 0.2], sensitivity=0.1), "x"),
        (dict(x=2.0, sensitivity=0.1), "x"),
        (dict(x=math.nan, sensitivity=0.1), "x"),
        (dict(x=0.5, sensitivity=0.0), "sensitivity"),
        (dict(x=0.5, sensitivity=0.1, level=1.0), "level"),
    ],
)
def test_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dpbook.release_card(dpbook.BIT(0.2, lower=0.0, upper=1.0), **kwargs)


# --- counts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mech,x",
    [
        (dpbook.DiscreteLaplace(2.0), 1234567),
        (dpbook.DiscreteBIT(1.5, lower=0, upper=50), 0),
        (dpbook.DiscreteBIT(1.5, lower=0, upper=50), 48),
        (dpbook.DiscreteTruncated(3.0, lower=0, upper=10**6), 2),
    ],
)
def test_count_card_worst_cases_are_exact_over_the_integers(mech, x):
    card = dpbook.release_card(mech, x, sensitivity=1, level=0.9)
    ci = dpbook.confidence_interval(mech, x, 0.9)
    assert (card.interval.low, card.interval.high) == (
        ci.low,
        ci.high,
    ) and not card.interval.exact
    q = np.arange(ci.low, ci.high + 1.0)
    assert card.worst_abs_bias == float(np.max(np.abs(mech.bias(q))))
    assert card.worst_mse == float(np.max(mech.mse(q)))
    assert (
        card.certified and card.integer and "integer true values" in card.worst_method
    )
    assert (
        card.epsilon == dpbook.privacy_loss(mech, 1, domain=mech.domain)
        and card.epsilon_exact
    )
    text = str(card)
    assert (
        f"Released value            {x}\n" in text
        and "e+" not in text.split("Worst cases")[0]
    )


def test_count_card_charges_conditioning_and_refuses_bad_input():
    mech = dpbook.DiscreteTruncated(2.0, lower=0, upper=100)
    card = dpbook.release_card(mech, 3, sensitivity=1)
    assert card.epsilon == pytest.approx(
        dpbook.discrete_truncated_epsilon(2.0, upper=100), rel=1e-14
    )
    assert card.epsilon > 0.5
    assert "[0, 100]" in str(card) and "upper=100)" in str(card)
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.release_card(mech, 3, sensitivity=0.5)
    with pytest.raises(ValueError, match="x"):
        dpbook.release_card(mech, 3.5, sensitivity=1)
    with pytest.raises(ValueError, match="integer true values"):
        dpbook.release_card(dpbook.DiscreteLaplace(1e6), 0, sensitivity=1)


def test_count_card_with_an_empty_randomized_set():
    """A small scale on a short range: the randomized set is sometimes empty (exact coverage needs it)."""
    mech = dpbook.DiscreteBIT(0.5, lower=0, upper=2)
    cards = [
        dpbook.release_card(mech, 0, sensitivity=1, level=0.5, randomize=True, rng=s)
        for s in range(40)
    ]
    empty = [c for c in cards if c.interval.low > c.interval.high]
    assert empty and len(empty) < len(cards)
    assert "50% interval              empty (exact coverage)" in str(empty[0])
    assert math.isnan(empty[0].worst_mse) and "empty" in empty[0].worst_method


# --- (ε, δ): the card with a delta ---------------------------------------------------------------------


def test_card_with_delta_states_epsilon_and_delta():
    """The Gaussian: ε is epsilon_for_delta (on its upper side: Balle–Wang's δ(ε) at it is at most δ, and
    within 1e-8 of the exact root), the card shows (ε, δ) and never prints ε below its value."""
    mech = dpbook.Gaussian(2.0)
    card = dpbook.release_card(mech, 0.3, sensitivity=1.0, level=0.9, delta=1e-5)
    assert card.delta == 1e-5 and not card.epsilon_exact
    assert card.epsilon == dpbook.epsilon_for_delta(mech, 1.0, 1e-5)
    root = optimize.brentq(
        lambda e: dpbook.gaussian_delta(2.0, e) - 1e-5, 0.1, 10.0, xtol=1e-14
    )
    assert dpbook.gaussian_delta(2.0, card.epsilon) <= 1e-5
    assert card.epsilon == pytest.approx(root, rel=1e-8)
    text, page = str(card), card._repr_html_()
    assert "Privacy (ε, δ)" in text and "delta = 1e-05" in text
    assert "Privacy (ε, δ)" in page and "delta = 1e-05" in page
    printed = float(re.search(r"epsilon = ([0-9.e+-]+),", text).group(1))
    assert card.epsilon <= printed <= card.epsilon * (1 + 1e-5)
    # a finite pure loss: δ lowers ε
    clamped = dpbook.GaussianBIT(0.5, lower=0.0, upper=1.0)
    card = dpbook.release_card(clamped, 0.3, sensitivity=1.0, delta=1e-5)
    assert card.epsilon < dpbook.privacy_loss(clamped, 1.0)
    assert dpbook.privacy_profile(clamped, 1.0, card.epsilon) <= 1e-5


def test_card_without_delta_for_an_infinite_pure_loss_points_to_delta():
    for mech in (
        dpbook.Gaussian(1.0),
        dpbook.GaussianBIT(1.0, lower=0.0, upper=math.inf),
        dpbook.GaussianTruncated(1.0, lower=0.0, upper=math.inf),
    ):
        card = dpbook.release_card(mech, 0.5, sensitivity=1.0)
        assert math.isinf(card.epsilon) and card.delta == 0.0
        assert "no finite pure epsilon; pass delta=" in str(card)
        assert "pass delta=" in card._repr_html_()


def test_delta_zero_is_the_pure_card():
    mech = dpbook.Truncated(0.2, lower=0.0, upper=1.0)
    pure = dpbook.release_card(mech, 0.3, sensitivity=0.1)
    zero = dpbook.release_card(mech, 0.3, sensitivity=0.1, delta=0.0)
    assert zero == pure and zero.delta == 0.0 and "(ε, δ)" not in str(zero)


@pytest.mark.parametrize("delta", [-1e-5, 1.0, math.nan, "0.1"])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        dpbook.release_card(dpbook.Gaussian(1.0), 0.5, sensitivity=1.0, delta=delta)


def test_privacy_numbers_are_printed_upwards():
    from dpbook.inference.reporting import _fmt_up

    rng = np.random.default_rng(20)
    for v in np.exp(rng.uniform(-20, 20, 2000)):
        assert float(_fmt_up(v)) >= v
        assert float(_fmt_up(v)) <= v * (1 + 1e-5)
    assert _fmt_up(0.1) == "0.1" and _fmt_up(math.inf) == "inf"
