"""dpbook.design.universal_optimality: the program over all ε-DP count mechanisms, and GRS's theorem checked with it."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook.design import universal_optimality as oc

LOSSES = {
    "absolute": dpbook.absolute_loss,
    "squared": dpbook.squared_loss,
    "zero-one": dpbook.zero_one_loss,
}


def _priors(n):
    k = np.arange(n + 1)
    spike = np.zeros(n + 1)
    spike[n // 3] = 1.0
    return {
        "uniform": np.full(n + 1, 1 / (n + 1)),
        "binomial": stats.binom.pmf(k, n, 0.3),
        "spike": spike,
    }


def _geometric(n, epsilon):
    """GRS's truncated geometric in closed form, written out independently of the library."""
    a = math.exp(-epsilon)
    i, k = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    out = (1 - a) / (1 + a) * a ** np.abs(k - i)
    out[:, 0] = a ** np.arange(n + 1) / (1 + a)
    out[:, n] = a ** (n - np.arange(n + 1)) / (1 + a)
    return out


def test_named_losses():
    i, r = np.arange(4)[:, None], np.arange(4)[None, :]
    assert np.array_equal(dpbook.absolute_loss(i, r), np.abs(i - r))
    assert np.array_equal(dpbook.squared_loss(i, r), (i - r) ** 2)
    assert np.array_equal(dpbook.zero_one_loss(i, r), 1 - np.eye(4))


@pytest.mark.parametrize("n, epsilon", [(1, 0.3), (5, 1.0), (20, 2.0)])
def test_truncated_geometric_is_grs_and_exactly_epsilon_dp(n, epsilon):
    prior = np.full(n + 1, 1 / (n + 1))
    grs = dpbook.remapped_geometric(n, epsilon, prior=prior, loss=dpbook.absolute_loss)
    assert np.allclose(grs.geometric, _geometric(n, epsilon), rtol=1e-13, atol=0)
    assert np.allclose(grs.geometric.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    # the exact ε by brute force over every output and neighbouring pair: ε, and no more
    assert abs(dpbook.matrix_epsilon(grs.geometric) - epsilon) < 1e-12
    # a remap is post-processing: it merges columns and can only lower ε
    assert dpbook.matrix_epsilon(grs.matrix) <= epsilon + 1e-12
    assert np.allclose(grs.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-14)


#: (n, ε) where double precision certifies the optimum to 1e-9: the optimal mechanism's smallest entries,
#: about e^(-εn), stay above the solver's tolerances (see the docstring of optimal_count_mechanism)
GRID = [
    (1, 1.0),
    (5, 0.5),
    (5, 2.0),
    (5, 4.0),
    (10, 0.25),
    (10, 1.0),
    (10, 2.0),
    (20, 0.5),
    (20, 1.0),
]


@pytest.mark.parametrize("n, epsilon", GRID)
def test_grs_theorem_lp_optimum_equals_the_remapped_geometric(n, epsilon):
    for (prior_name, prior), (loss_name, loss) in itertools.product(
        _priors(n).items(), LOSSES.items()
    ):
        case = (n, epsilon, prior_name, loss_name)
        lp = dpbook.optimal_count_mechanism(n, epsilon, prior=prior, loss=loss)
        grs = dpbook.remapped_geometric(n, epsilon, prior=prior, loss=loss)
        assert abs(lp.value - grs.value) <= 1e-9, case
        # the certificate: every ε-DP mechanism has loss >= lower_bound, and GRS's mechanism reaches it
        assert lp.lower_bound <= lp.value + 1e-12, case
        assert grs.value - lp.lower_bound <= 1e-8, case
        assert lp.violation <= 1e-9, case
        # GRS's mechanism is a feasible point: its value recomputed from its matrix
        assert (
            abs(dpbook.expected_loss(grs.matrix, prior=prior, loss=loss) - grs.value)
            < 1e-12
        ), case


def test_grs_holds_for_an_asymmetric_monotone_loss():
    def loss(
        i, r
    ):  # under-reporting costs three times as much, over-reporting grows like |r - i|^1.5
        d = np.abs(np.subtract(i, r, dtype=float))
        return np.where(np.less(r, i), 3 * d, d**1.5)

    for n, epsilon in [(8, 0.5), (15, 1.0)]:
        prior = stats.binom.pmf(np.arange(n + 1), n, 0.6)
        lp = dpbook.optimal_count_mechanism(n, epsilon, prior=prior, loss=loss)
        grs = dpbook.remapped_geometric(n, epsilon, prior=prior, loss=loss)
        assert abs(lp.value - grs.value) <= 1e-9


def test_randomized_response_is_the_optimum_for_one_bit():
    # n = 1, uniform prior, 0-1 loss: the best ε-DP mechanism reports the truth with e^ε/(1+e^ε)
    for epsilon in (0.1, 1.0, 3.0):
        lp = dpbook.optimal_count_mechanism(
            1, epsilon, prior=[0.5, 0.5], loss=dpbook.zero_one_loss
        )
        p = math.exp(epsilon) / (1 + math.exp(epsilon))
        assert abs(lp.value - (1 - p)) < 1e-12
        assert np.allclose(lp.matrix, [[p, 1 - p], [1 - p, p]], atol=1e-10)


def test_the_check_fails_where_the_theorem_does_not_apply():
    n, epsilon = 10, 1.0
    prior = np.full(n + 1, 1 / (n + 1))
    # a loss that is not monotone in |i - r|: the user wants the parity of the count
    parity = (np.arange(n + 1)[:, None] % 2 != np.arange(n + 1)[None, :] % 2).astype(
        float
    )
    lp = dpbook.optimal_count_mechanism(n, epsilon, prior=prior, loss=parity)
    grs = dpbook.remapped_geometric(n, epsilon, prior=prior, loss=parity)
    assert grs.value - lp.value > 0.05
    # neighbours two apart (a sum of values in {0, 1, 2}): the geometric at scale 2/ε is beaten
    lp2 = dpbook.optimal_count_mechanism(
        n, epsilon, prior=prior, loss=dpbook.absolute_loss, sensitivity=2
    )
    grs2 = dpbook.remapped_geometric(
        n, epsilon, prior=prior, loss=dpbook.absolute_loss, sensitivity=2
    )
    assert dpbook.matrix_epsilon(grs2.geometric, sensitivity=2) == pytest.approx(
        epsilon, abs=1e-12
    )
    assert grs2.value - lp2.value > 0.01
    assert lp2.violation < 1e-9 and grs2.value >= lp2.lower_bound


def test_the_lower_bound_catches_a_mechanism_that_is_not_epsilon_dp():
    n, epsilon = 10, 1.0
    prior = stats.binom.pmf(np.arange(n + 1), n, 0.5)
    lp = dpbook.optimal_count_mechanism(
        n, epsilon, prior=prior, loss=dpbook.absolute_loss
    )
    cheat = dpbook.remapped_geometric(
        n, 2 * epsilon, prior=prior, loss=dpbook.absolute_loss
    )
    assert dpbook.matrix_epsilon(cheat.matrix) > epsilon + 0.5
    assert cheat.value < lp.lower_bound - 0.05


def test_the_lower_bound_holds_for_random_epsilon_dp_mechanisms():
    # random remaps of geometric mechanisms at budgets <= ε are ε-DP; none beats the dual bound
    n, epsilon = 12, 1.0
    rng = np.random.default_rng(12)
    prior = rng.dirichlet(np.ones(n + 1))
    for loss in LOSSES.values():
        lp = dpbook.optimal_count_mechanism(n, epsilon, prior=prior, loss=loss)
        for _ in range(50):
            y = rng.dirichlet(np.full(n + 1, 0.3), size=n + 1)
            x = _geometric(n, epsilon * rng.uniform(0.2, 1.0)) @ y
            assert dpbook.matrix_epsilon(x) <= epsilon + 1e-12
            assert (
                dpbook.expected_loss(x, prior=prior, loss=loss)
                >= lp.lower_bound - 1e-12
            )


def test_best_remap_is_the_best_of_all_deterministic_remaps():
    n, epsilon = 3, 0.7
    rng = np.random.default_rng(7)
    prior = rng.dirichlet(np.ones(n + 1))
    geometric = _geometric(n, epsilon)
    for loss in LOSSES.values():
        remap, value = dpbook.best_remap(geometric, prior=prior, loss=loss)
        values = []
        for r in itertools.product(range(n + 1), repeat=n + 1):
            merged = np.zeros_like(geometric)
            for k, j in enumerate(r):
                merged[:, j] += geometric[:, k]
            values.append(dpbook.expected_loss(merged, prior=prior, loss=loss))
        assert value == pytest.approx(min(values), abs=1e-14)
        assert values[
            int(np.ravel_multi_index(remap, (n + 1,) * (n + 1)))
        ] == pytest.approx(value, abs=1e-14)


def test_remap_moves_reports_towards_the_prior_and_biases_them():
    n, epsilon = 20, 0.5
    prior = stats.binom.pmf(np.arange(n + 1), n, 0.3)
    grs = dpbook.remapped_geometric(n, epsilon, prior=prior, loss=dpbook.squared_loss)
    assert (
        grs.remap[0] > 0 and grs.remap[n] < n
    )  # the extreme outputs are pulled inwards
    mean = grs.matrix @ np.arange(n + 1)
    assert mean[n] < n - 3 and mean[0] > 2  # biased at both ends


def test_loss_as_matrix_or_scalar_callable_gives_the_same_answer():
    n = 6
    prior = np.full(n + 1, 1 / (n + 1))

    def scalar_loss(i, r):
        if i == r:
            return 0.0
        return 1.0

    as_matrix = 1.0 - np.eye(n + 1)
    values = [
        dpbook.remapped_geometric(n, 1.0, prior=prior, loss=loss).value
        for loss in (dpbook.zero_one_loss, scalar_loss, as_matrix)
    ]
    assert values[0] == values[1] == values[2]


def test_bad_inputs_name_the_parameter():
    prior = np.full(4, 0.25)
    loss = dpbook.absolute_loss
    with pytest.raises(ValueError, match="n"):
        dpbook.optimal_count_mechanism(0, 1.0, prior=[1.0], loss=loss)
    with pytest.raises(ValueError, match="n = 1000 .* unknowns"):
        dpbook.optimal_count_mechanism(
            1000, 1.0, prior=np.full(1001, 1 / 1001), loss=loss
        )
    with pytest.raises(ValueError, match="epsilon"):
        dpbook.optimal_count_mechanism(3, 0.0, prior=prior, loss=loss)
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.remapped_geometric(3, 1.0, prior=prior, loss=loss, sensitivity=0)
    with pytest.raises(ValueError, match="prior"):
        dpbook.remapped_geometric(3, 1.0, prior=np.full(5, 0.2), loss=loss)
    with pytest.raises(ValueError, match="prior"):
        dpbook.remapped_geometric(3, 1.0, prior=[0.5, 0.5, 0.5, -0.5], loss=loss)
    with pytest.raises(ValueError, match="prior"):
        dpbook.remapped_geometric(3, 1.0, prior=[0.3, 0.3, 0.3, 0.3], loss=loss)
    with pytest.raises(ValueError, match="loss"):
        dpbook.remapped_geometric(3, 1.0, prior=prior, loss=np.ones((3, 3)))
    with pytest.raises(ValueError, match="loss"):
        dpbook.remapped_geometric(3, 1.0, prior=prior, loss=np.full((4, 4), np.inf))
    with pytest.raises(ValueError, match="matrix"):
        dpbook.matrix_epsilon([[0.5, 0.6], [0.5, 0.5]])
    with pytest.raises(ValueError, match="matrix"):
        dpbook.expected_loss(np.ones((2, 3)) / 3, prior=[0.5, 0.5], loss=loss)


def test_matrix_epsilon_is_infinite_when_a_neighbour_excludes_an_output():
    assert dpbook.matrix_epsilon(np.eye(3)) == math.inf
    assert dpbook.matrix_epsilon(np.full((3, 3), 1 / 3)) == 0.0


def test_size_limit_is_the_documented_one():
    assert oc.MAX_UNKNOWNS == 101**2
    with pytest.raises(ValueError, match="n <= 100"):
        dpbook.optimal_count_mechanism(
            101, 1.0, prior=np.full(102, 1 / 102), loss=dpbook.absolute_loss
        )


# HiGHS's interior-point method stalls on these programs (status 4 or "Not Set"), even at εn = 3.75; the dual
# simplex solves them (found by sweeping Ch. 19's view over its controls)
@pytest.mark.parametrize(
    "prior, loss, epsilon, n",
    [
        ("binomial", "absolute", 0.25, 15),
        ("binomial", "zero_one", 0.25, 14),
        ("spike", "absolute", 2.0, 16),
        ("spike", "squared", 3.0, 12),
        ("spike", "squared", 3.0, 17),
        ("spike", "squared", 3.0, 20),
    ],
)
def test_programs_the_interior_point_method_cannot_solve(prior, loss, epsilon, n):
    from dpbook_book.widgets.counts_optimal import count_loss, count_prior

    p, ell = count_prior(prior, n), count_loss(loss)
    lp = dpbook.optimal_count_mechanism(n, epsilon, prior=p, loss=ell)
    grs = dpbook.remapped_geometric(n, epsilon, prior=p, loss=ell)
    assert lp.value == pytest.approx(grs.value, abs=1e-7)
    assert (
        lp.lower_bound <= grs.value + 1e-12
        and lp.value - lp.lower_bound < 1e-6
        and lp.violation < 1e-8
    )
