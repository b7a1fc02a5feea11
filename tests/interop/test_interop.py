"""dpbook.interop: the OpenDP measurement, the diffprivlib mechanism and the secure generator (issue 21)."""

import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook.interop import (
    FloatingPointWarning,
    OSRandomBits,
    is_count_family,
    secure_generator,
)

dp = pytest.importorskip(
    "opendp.prelude", reason="the peers extra (requirements.txt installs it)"
)
dpl = pytest.importorskip(
    "diffprivlib.mechanisms", reason="the peers extra (requirements.txt installs it)"
)
from dpbook.interop.diffprivlib import DpbookMechanism  # noqa: E402
from dpbook.interop.opendp import make_measurement  # noqa: E402

# one of each kind of family: closed-form continuous laws with and without atoms, a varying
# normalizer, the multiplicative one, a rounded release, and the three count families
FAMILIES = [
    dpbook.Laplace(2.0),
    dpbook.BIT(2.0, lower=0.0, upper=1.0),
    dpbook.Truncated(1.0),
    dpbook.Truncated(1.0, lower=0.0, upper=3.0),
    dpbook.Rounded(dpbook.Laplace(1.5)),
    dpbook.DiscreteLaplace(2.0),
    dpbook.DiscreteBIT(2.0, lower=0, upper=10),
    dpbook.DiscreteTruncated(2.0),
]
IDS = [repr(m) for m in FAMILIES]


@pytest.fixture(autouse=True)
def _opendp_features():
    dp.enable_features("contrib", "honest-but-curious")


def _inside(mech):
    lo, hi = mech.domain
    q = 0 if lo <= 0 <= hi else lo
    return int(q) if mech.integer_valued else float(q)


# --- the core stays light; the peers are imported lazily, with the extra named --------------------------


def test_core_and_adapters_import_no_peer():
    code = (
        "import sys, dpbook, dpbook.interop, dpbook.interop.opendp, dpbook.interop.diffprivlib; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'opendp', 'diffprivlib', 'sklearn'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, dpbook; print('dpbook.interop' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "False"


def test_a_missing_peer_names_the_extra(monkeypatch):
    import dpbook.interop.diffprivlib as adapter

    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ImportError, match=r'pip install "dpbook\[peers\]"'):
        make_measurement(dpbook.Laplace(1.0))
    monkeypatch.setitem(sys.modules, "diffprivlib.mechanisms", None)
    monkeypatch.setattr(adapter, "_built", {})
    with pytest.raises(ImportError, match=r'pip install "dpbook\[peers\]"'):
        adapter.DpbookMechanism  # noqa: B018


def test_opendp_needs_the_honest_but_curious_flag():
    dp.disable_features("honest-but-curious")
    try:
        with pytest.raises(RuntimeError, match="honest-but-curious"):
            make_measurement(dpbook.Laplace(1.0))
    finally:
        dp.enable_features("honest-but-curious")


def test_count_families_are_the_exact_integer_samplers():
    assert is_count_family(dpbook.DiscreteBIT(2.0, lower=0, upper=10))
    assert is_count_family(dpbook.DiscreteTruncated(2.0))
    # a rounded release is integer-valued, but drawn in floating point
    assert not is_count_family(
        dpbook.Rounded(dpbook.Laplace(1.0))
    ) and not is_count_family(dpbook.BIT(1.0))


def test_not_a_mechanism_raises():
    with pytest.raises(ValueError, match="mechanism"):
        make_measurement(dpbook.laplace_scale(1.0, 1.0))
    with pytest.raises(ValueError, match="mechanism"):
        DpbookMechanism(mechanism="Laplace", sensitivity=1.0)
    with pytest.raises(ValueError, match="rng"):
        make_measurement(dpbook.Laplace(1.0), rng=-1)


# --- OpenDP: the map is the audit, the draws follow the law, composition adds ------------------------------


@pytest.mark.parametrize("mech", FAMILIES, ids=IDS)
def test_opendp_map_is_the_audit(mech):
    meas = make_measurement(mech, rng=0)
    count = mech.integer_valued
    for d in [1, 2, 3] if count else [0.5, 1.0, 2.0]:
        assert meas.map(d) == dpbook.privacy_loss(mech, d), d
    assert meas.map(0) == 0.0
    assert meas.output_measure == dp.max_divergence()
    assert meas.input_metric == dp.absolute_distance(T="i64" if count else "f64")


def test_opendp_domain_is_the_families():
    assert (
        str(make_measurement(dpbook.BIT(1.0, lower=0.0, upper=1.0)).input_domain)
        == "AtomDomain(bounds=[0.0, 1.0], T=f64)"
    )
    assert (
        str(make_measurement(dpbook.Laplace(1.0)).input_domain) == "AtomDomain(T=f64)"
    )
    assert (
        str(make_measurement(dpbook.DiscreteTruncated(2.0)).input_domain)
        == "AtomDomain(bounds=[0, 9223372036854775807], T=i64)"
    )
    meas = make_measurement(dpbook.BIT(1.0, lower=0.0, upper=1.0))
    with pytest.raises(dp.OpenDPException, match="domain"):
        meas(1.5)
    with pytest.raises(dp.OpenDPException, match="d_in"):
        meas.map(-1.0)


# Two-sample Kolmogorov–Smirnov at level 1e-3: under the null (the measurement's draws have dpbook's law)
# a continuous law fails with probability 1e-3 at most, and a law with atoms less often (the test is
# conservative with ties); the seeds are fixed, so each run is the same.  n = 2000 per sample puts the
# critical distance at about 1.95 sqrt(2/n) = 0.062 in sup-norm, which the broken case below exceeds.
KS_N, KS_LEVEL = 2000, 1e-3


@pytest.mark.parametrize("mech", FAMILIES, ids=IDS)
@pytest.mark.slow
def test_opendp_draws_follow_dpbooks_law(mech):
    q = _inside(mech)
    meas = make_measurement(mech, rng=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FloatingPointWarning)
        ours = np.array([meas(q) for _ in range(KS_N)], dtype=float)
    law = np.asarray(mech.sample(q, size=KS_N, rng=12), dtype=float)
    assert stats.ks_2samp(ours, law).pvalue > KS_LEVEL


def test_the_two_sample_test_rejects_a_wrong_law():
    """The same test, with the measurement's law at scale 2 against dpbook's at scale 4: rejected.

    The two laws' distribution functions are 0.127 apart at most, twice the critical distance 0.062, so
    the test rejects whatever the seeds.  (Scale 2.5, used before, is only 0.041 apart: below the
    critical distance, rejected only by the luck of the seeds, and no longer with the faster sampler.)
    """
    meas = make_measurement(dpbook.DiscreteBIT(2.0, lower=0, upper=10), rng=11)
    ours = np.array([meas(3) for _ in range(KS_N)], dtype=float)
    wrong = (
        dpbook.DiscreteBIT(4.0, lower=0, upper=10)
        .sample(3, size=KS_N, rng=12)
        .astype(float)
    )
    assert stats.ks_2samp(ours, wrong).pvalue < KS_LEVEL


def test_opendp_composition_charges_the_sum():
    a = make_measurement(dpbook.BIT(2.0, lower=0.0, upper=1.0), rng=1)
    b = make_measurement(dpbook.Truncated(1.0, lower=0.0, upper=1.0), rng=2)
    both = dp.c.make_composition([a, b])
    for d in (0.25, 1.0):
        assert math.isclose(both.map(d), a.map(d) + b.map(d), rel_tol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FloatingPointWarning)
        out = both(0.5)
    assert len(out) == 2 and all(0.0 <= x <= 1.0 for x in out)
    # with OpenDP's own Laplace measurement on the same domain and metric
    native = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=4.0
    )
    ours = make_measurement(dpbook.Laplace(2.0), rng=3)
    mixed = dp.c.make_composition([ours, native])
    assert math.isclose(mixed.map(1.0), 0.5 + native.map(1.0), rel_tol=1e-15)
    assert math.isclose(native.map(1.0), 0.25, rel_tol=1e-12)


def test_opendp_says_what_it_carries():
    cont = make_measurement(dpbook.BIT(2.0, lower=0.0, upper=1.0), rng=0)
    assert "floating point" in cont.description and "Chapter 16" in cont.description
    assert "seeded" in cont.description
    with pytest.warns(FloatingPointWarning, match="low bits"):
        cont(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cont(0.5)  # once per measurement
    count = make_measurement(dpbook.DiscreteBIT(2.0, lower=0, upper=10))
    assert (
        "Exact integer sampler" in count.description
        and "os.urandom" in count.description
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(count(4), int)
    assert count.dpbook_mechanism is count.dpbook_mechanism


# --- diffprivlib: the DPMechanism contract -------------------------------------------------------------


def test_diffprivlib_contract():
    assert issubclass(DpbookMechanism, dpl.DPMechanism)
    mech = DpbookMechanism(
        mechanism=dpbook.BIT(2.0, lower=0.0, upper=1.0), sensitivity=1.0, random_state=0
    )
    assert (mech.epsilon, mech.delta) == (dpbook.privacy_loss(mech.mechanism, 1.0), 0.0)
    assert mech._check_all(0.5)
    assert mech._check_epsilon_delta(mech.epsilon, mech.delta) == (0.5, 0.0)
    assert repr(mech).startswith(
        "dpbook.interop.diffprivlib.DpbookMechanism(mechanism=BIT("
    )
    assert "sensitivity=1.0" in repr(mech) and "random_state=0" in repr(mech)
    twin = mech.copy()
    assert type(twin) is DpbookMechanism and twin.epsilon == mech.epsilon
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.utils import BudgetError

    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    acc.spend(mech.epsilon, mech.delta)
    acc.spend(mech.epsilon, mech.delta)
    assert acc.total() == (1.0, 0.0)
    with pytest.raises(BudgetError):
        acc.spend(mech.epsilon, mech.delta)


@pytest.mark.parametrize(
    "bad, err",
    [
        ("Hello", TypeError),
        (1 + 2j, TypeError),
        (None, TypeError),
        (1.5, ValueError),
        (-0.1, ValueError),
    ],
)
def test_diffprivlib_randomise_bad_value(bad, err):
    mech = DpbookMechanism(
        mechanism=dpbook.BIT(2.0, lower=0.0, upper=1.0), sensitivity=1.0
    )
    with pytest.raises(err, match="value"):
        mech.randomise(bad)


@pytest.mark.parametrize(
    "bad, err",
    [
        ("Two", TypeError),
        (1 + 2j, TypeError),
        (0.0, ValueError),
        (-1.0, ValueError),
        (math.inf, ValueError),
    ],
)
def test_diffprivlib_bad_sensitivity(bad, err):
    with pytest.raises(err, match="sensitivity"):
        DpbookMechanism(mechanism=dpbook.Laplace(1.0), sensitivity=bad)


def test_diffprivlib_counts_take_integers():
    mech = DpbookMechanism(
        mechanism=dpbook.DiscreteBIT(2.0, lower=0, upper=10), sensitivity=1
    )
    with pytest.raises(TypeError, match="value"):
        mech.randomise(2.5)
    with pytest.raises(ValueError, match="sensitivity"):
        DpbookMechanism(mechanism=dpbook.DiscreteBIT(2.0), sensitivity=1.5)
    with pytest.raises(ValueError, match="random_state"):
        DpbookMechanism(
            mechanism=dpbook.DiscreteBIT(2.0), sensitivity=1, random_state="seed"
        )


def test_diffprivlib_random_state_reproduces():
    def draws(seed):
        mech = DpbookMechanism(
            mechanism=dpbook.DiscreteBIT(2.0, lower=0, upper=10),
            sensitivity=1,
            random_state=seed,
        )
        return [mech.randomise(5) for _ in range(20)]

    assert draws(7) == draws(7) and draws(7) != draws(8)


def test_diffprivlib_bias_and_variance_are_exact_where_its_own_raise():
    """GeometricTruncated (diffprivlib's clamped count, = DiscreteBIT) raises NotImplementedError;
    the adapter's bias and variance equal sums over the finite support of dpbook's pmf."""
    theirs = dpl.GeometricTruncated(epsilon=0.5, sensitivity=1, lower=0, upper=10)
    with pytest.raises(NotImplementedError):
        theirs.bias(0)
    family = dpbook.DiscreteBIT(2.0, lower=0, upper=10)
    ours = DpbookMechanism(mechanism=family, sensitivity=1)
    assert ours.epsilon == 0.5
    k = np.arange(0, 11)
    for q in (0, 3, 10):
        p = np.asarray(family.pmf(k, q))
        mean = float(np.sum(k * p))
        assert math.isclose(ours.bias(q), mean - q, rel_tol=1e-12, abs_tol=1e-14)
        assert math.isclose(
            ours.variance(q), float(np.sum((k - mean) ** 2 * p)), rel_tol=1e-12
        )
        assert math.isclose(
            ours.mse(q), ours.variance(q) + ours.bias(q) ** 2, rel_tol=1e-12
        )


def test_diffprivlib_matches_its_own_where_both_exist():
    """LaplaceTruncated clamps (it is BIT): the same bias and variance as diffprivlib's own formulas."""
    theirs = dpl.LaplaceTruncated(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)
    ours = DpbookMechanism(
        mechanism=dpbook.BIT(1.0, lower=0.0, upper=1.0), sensitivity=1.0
    )
    assert ours.epsilon == theirs.epsilon
    for q in (0.0, 0.3, 1.0):
        assert math.isclose(ours.bias(q), theirs.bias(q), rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(ours.variance(q), theirs.variance(q), rel_tol=1e-9)


@pytest.mark.slow
def test_diffprivlib_neighbours():
    """diffprivlib's own neighbour check: P(M(0) <= 0) <= e^ε P(M(1) <= 0) (+ 5 Monte Carlo SE)."""
    mech = DpbookMechanism(
        mechanism=dpbook.DiscreteBIT(1.0, lower=0, upper=10),
        sensitivity=1,
        random_state=5,
    )
    runs = 5000
    p0 = np.mean([mech.randomise(0) <= 0 for _ in range(runs)])
    p1 = np.mean([mech.randomise(1) <= 0 for _ in range(runs)])
    se = math.sqrt((p0 * (1 - p0) + math.exp(2 * mech.epsilon) * p1 * (1 - p1)) / runs)
    assert p0 > p1
    assert p0 <= math.exp(mech.epsilon) * p1 + 5 * se


def test_diffprivlib_warns_for_floating_point_once():
    mech = DpbookMechanism(
        mechanism=dpbook.Laplace(1.0), sensitivity=1.0, random_state=0
    )
    with pytest.warns(FloatingPointWarning, match="Chapter 16"):
        assert isinstance(mech.randomise(0.0), float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech.randomise(0.0)
    count = DpbookMechanism(mechanism=dpbook.DiscreteLaplace(2.0), sensitivity=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(count.randomise(3), int)


# --- the operating system's secure source ---------------------------------------------------------------


def test_secure_generator_reads_every_bit_from_its_source():
    """A counted, deterministic byte source in place of os.urandom: the draws are a function of its bytes
    alone (no hidden seed), and the source is read."""
    calls = []

    def source(n):
        calls.append(n)
        return bytes(range(256)) * (n // 256)

    def draw():
        return dpbook.discrete_laplace_noise(
            2.0, size=200, rng=np.random.Generator(OSRandomBits(source))
        )

    assert draw().tolist() == draw().tolist() and calls
    assert secure_generator().bit_generator._source is os.urandom
    with pytest.raises(ValueError, match="source"):
        OSRandomBits(b"not callable")


def _chi2_pvalue(draws, family, q):
    """χ² of int draws against the exact pmf of a count family with a finite support (every cell >= 5 expected)."""
    lo, hi = (int(v) for v in family.support)
    k = np.arange(lo, hi + 1)
    expected = np.asarray(family.pmf(k, q)) * draws.size
    observed = np.bincount(draws - lo, minlength=k.size)
    assert observed.sum() == draws.size and expected.min() >= 5
    return stats.chisquare(observed, expected).pvalue


CHI2_N = 20000


def test_secure_draws_follow_the_law():
    """The same χ² as for the seeded sampler.  The secure source cannot be seeded, so this test is random:
    its threshold 1e-6 is its probability of failing a correct sampler."""
    family = dpbook.DiscreteBIT(2.0, lower=0, upper=10)
    seeded = family.sample(3, size=CHI2_N, rng=21)
    secure = family.sample(3, size=CHI2_N, rng=secure_generator())
    assert _chi2_pvalue(seeded, family, 3) > 1e-6
    assert _chi2_pvalue(secure, family, 3) > 1e-6
    cond = dpbook.DiscreteTruncated(2.0, lower=0, upper=10)
    assert (
        _chi2_pvalue(cond.sample(0, size=CHI2_N, rng=secure_generator()), cond, 0)
        > 1e-6
    )
    # the same test rejects the secure draws against a law 20% off in scale
    assert _chi2_pvalue(secure, dpbook.DiscreteBIT(2.4, lower=0, upper=10), 3) < 1e-6


def test_adapters_default_to_the_secure_source():
    meas = make_measurement(dpbook.DiscreteBIT(2.0, lower=0, upper=10))
    draws = np.array([meas(3) for _ in range(3000)])
    assert _chi2_pvalue(draws, dpbook.DiscreteBIT(2.0, lower=0, upper=10), 3) > 1e-6
    mech = DpbookMechanism(
        mechanism=dpbook.DiscreteBIT(2.0, lower=0, upper=10), sensitivity=1
    )
    assert isinstance(mech._generator.bit_generator, OSRandomBits)
