"""No wrong answer at the extremes (issue 15, item 5).

A hypothesis sweep over every mechanism family with scales in ``[1e-300, 1e300]``, true values up to
``±1e300`` (also far outside the domain, where the law is still defined), bounds at ``±inf`` and ε in
``[1e-15, 1e6]``.  Every answer is compared with an exact reference computed here in decimal
arithmetic with as many digits as the inputs need (:class:`ExactLaw`): the law of a release built from
one Laplace draw, as pieces of its density (possibly shifted) and point masses.  The reference uses
elementary antiderivatives and power series, not the library's incomplete-gamma formulas, and keeps
masses in log space, so it is exact where doubles underflow.  The assertions: finite where the truth
is finite (and ``inf``, silently, only where it overflows), no warning, the mean inside the support,
variance >= 0, ``mse = variance + bias²``, the cdf monotone in ``[0, 1]``, samples finite and inside the
support.  Resource requests that would need more than about a GiB or a minute must raise ``ValueError``.
"""

import decimal
import functools
import math
import warnings
from decimal import Decimal as D

import numpy as np
import pytest
from audit_only import AuditOnly
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import dpbook

# the extremes sweep of every family (hypothesis, thousands of cases): minutes, so the README's test command
# skips it and .ci/run runs it (-m slow)
pytestmark = pytest.mark.slow

SWEEP = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
FEW = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
BIG = 1.7e308  # beyond this a double is inf


# ------------------------------------------------------------------------------------------------
# the exact reference


def _digits(scale, *values):
    """Decimal digits that resolve every finite value, and every gap between them, to well below both."""
    finite = [v for v in values if math.isfinite(v)]
    sizes = [abs(v) for v in finite] + [abs(v - w) for v in finite for w in finite]
    sizes = [v for v in sizes if 0 < v < math.inf]
    top, bottom = max(sizes + [scale]), min(sizes + [scale])
    return 40 + math.ceil(math.log10(top) - math.log10(bottom))


def _context(digits):
    return decimal.Context(prec=digits, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _exp_moments(w):
    """``J_k = (1/2) ∫_0^w v^k e^{-v} dv`` for ``k = 0, 1, 2`` (``w`` a Decimal or None for ∞)."""
    if w is None:
        return D(1) / 2, D(1) / 2, D(1)
    if w < 1:  # power series: no cancellation for tiny w
        out = []
        eps = D(10) ** -(decimal.getcontext().prec + 5)
        for k in range(3):
            total, term, n = D(0), w ** (k + 1), 0
            while True:
                piece = term / (n + k + 1)
                total += piece if n % 2 == 0 else -piece
                if abs(piece) <= eps * abs(total):
                    break
                n += 1
                term = term * w / n
            out.append(total / 2)
        return tuple(out)
    e = (-w).exp()
    return (1 - e) / 2, (1 - (1 + w) * e) / 2, (2 - (w * w + 2 * w + 2) * e) / 2


class ExactLaw:
    """The law of a release made from ``X = centre + L_b``: a list of parts, each one of

    * ``("piece", lo, hi, shift)``: ``X`` restricted to ``[lo, hi]``, released as ``X - shift``;
    * ``("atom", lo, hi, at)``: the Laplace mass of ``[lo, hi]``, released as the point ``at``.

    ``normalize`` is implied: moments are divided by the total mass of the parts.
    """

    def __init__(self, centre, scale, parts):
        numbers = [centre] + [v for p in parts for v in p[1:]]
        self.ctx = _context(_digits(scale, *numbers))
        self.centre, self.scale, self.parts = (
            centre,
            scale,
            [p for p in parts if p[1] < p[2]],
        )
        with decimal.localcontext(self.ctx):
            self.c, self.b = D(centre), D(scale)

    def _t(self, x):
        return None if math.isinf(x) else (D(x) - self.c) / self.b

    def _split(self, lo, hi):
        """``[lo, hi]`` as parts ``(d, x0, sign, w)``: ``x = x0 + b sign v``,
        ``v in [0, w]`` (``w`` None for ∞), density ``e^{-d} e^{-v}/2``."""
        t1, t2 = self._t(lo), self._t(hi)
        if t1 is not None and t1 >= 0:
            return [(t1, D(lo), 1, None if t2 is None else t2 - t1)]
        if t2 is not None and t2 <= 0:
            return [(-t2, D(hi), -1, None if t1 is None else t2 - t1)]
        return [(D(0), self.c, 1, t2), (D(0), self.c, -1, None if t1 is None else -t1)]

    def _terms(self, parts):
        """Per part: ``(log mass, x0, sign, kind, at, J1/J0, J2/J0)`` (independent of any anchor)."""
        out = []
        for kind, lo, hi, at in parts:
            for d, x0, sign, w in self._split(lo, hi):
                if w is not None and w <= 0:
                    continue
                J0, J1, J2 = _exp_moments(w)
                out.append((J0.ln() - d, x0, sign, kind, D(at), J1 / J0, J2 / J0))
        return out

    def _sums(self, terms, anchor):
        """``(log M0, M1/M0, M2/M0)`` of ``(Y - anchor)/b`` over the parts (``log M0`` None if empty)."""
        if not terms:
            return None, D(0), D(0)
        top = max(t[0] for t in terms)
        total = first = second = D(0)
        for log_mass, x0, sign, kind, at, j1, j2 in terms:
            w = (log_mass - top).exp()
            if kind == "atom":
                a = (at - anchor) / self.b
                m1, m2 = a, a * a
            else:
                a = (x0 - at - anchor) / self.b
                m1, m2 = a + sign * j1, a * a + 2 * a * sign * j1 + j2
            total += w
            first += w * m1
            second += w * m2
        return top + total.ln(), first / total, second / total

    def moments(self):
        """``(mean, variance)`` as Decimals (variance computed about the mean: nothing cancels)."""
        with decimal.localcontext(self.ctx):
            terms = self._terms(self.parts)
            mean = self.c
            for _ in range(
                60
            ):  # re-anchor at the mean until it is exact to far below the spread
                _, n1, n2 = self._sums(terms, mean)
                mean += self.b * n1
                if n1 * n1 <= n2 * D(10) ** (10 - self.ctx.prec):
                    break
            # the variance about whichever anchor (the mean, an atom, an end) leaves the least to cancel
            best = None
            for anchor in [mean] + [
                t[4] if t[3] == "atom" else t[1] - t[4] for t in terms
            ]:
                _, n1, n2 = self._sums(terms, anchor)
                if n2 == 0:  # all the mass sits on this anchor, to every digit carried
                    return mean, D(0)
                if best is None or n1 * n1 / n2 < best[0]:
                    best = (n1 * n1 / n2, n2 - n1 * n1)
            return mean, self.b * self.b * (max(best[1], D(0)) if best else D(0))

    def cdf(self, y):
        """``P(Y <= y)``."""
        below = []
        for kind, lo, hi, at in self.parts:
            if kind == "atom":
                if at <= y:
                    below.append((kind, lo, hi, at))
            elif min(hi, y + at) > lo:
                below.append((kind, lo, min(hi, y + at), at))
        with decimal.localcontext(self.ctx):
            log_all = self._sums(self._terms(self.parts), self.c)[0]
            log_below = self._sums(self._terms(below), self.c)[0]
            return (
                0.0
                if log_below is None
                else float(min((log_below - log_all).exp(), D(1)))
            )


# ------------------------------------------------------------------------------------------------
# the generic check


TINY = 1e-300  # an answer this small may underflow (the last factors of a product lose their digits there)


def _silent(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def _close(value, ref, rel, what):
    ref = float(ref) if abs(ref) < D(BIG) else (math.inf if ref > 0 else -math.inf)
    if math.isinf(ref):
        assert value == ref or abs(value) >= 1e308, (
            f"{what}: {value!r}, truth overflows to {ref}"
        )
        return
    assert math.isfinite(value), f"{what}: {value!r}, truth {ref!r}"
    assert abs(value - ref) <= rel + TINY, f"{what}: {value!r}, truth {ref!r}"


def check_law(mech, q, law, lo, hi, points=()):
    """Every statistic of ``mech`` at ``q`` against the exact ``law``, support ``[lo, hi]``."""
    mean, bias, var, mse = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance", "mse")
    )
    with decimal.localcontext(law.ctx):
        m_ref, v_ref = law.moments()
        b_ref = m_ref - D(q)
        sd = v_ref.sqrt()
        mse_ref = v_ref + b_ref * b_ref
        tol_m = D("1e-9") * (abs(m_ref) + sd)
        tol_b = D("1e-9") * (abs(b_ref) + sd) + D(4 * math.ulp(q))
        tol_v = D("1e-8") * v_ref
        tol_mse = D("1e-8") * mse_ref + 2 * abs(b_ref) * tol_b
        _close(mean, m_ref, float(tol_m), f"mean({q!r})")
        _close(bias, b_ref, float(tol_b), f"bias({q!r})")
        _close(var, v_ref, float(tol_v), f"variance({q!r})")
        _close(mse, mse_ref, float(min(tol_mse, D(BIG))), f"mse({q!r})")
        ys = [
            lo,
            hi,
            float(m_ref),
            float(m_ref - 3 * sd),
            float(m_ref + 3 * sd),
            q,
            *points,
        ]
    assert lo <= mean <= hi and var >= 0
    ys = sorted(
        {min(max(y, -BIG), BIG) for y in ys if not math.isnan(y)}
        | {-math.inf, math.inf}
    )
    F = np.asarray(_silent(mech.cdf, np.array(ys), q))
    assert np.all((F >= 0) & (F <= 1)) and np.all(np.diff(F) >= 0), (ys, F)
    for y, f in zip(ys, F):
        if math.isfinite(y):
            assert abs(f - law.cdf(y)) <= 1e-9, (y, f, law.cdf(y))
    x = _silent(lambda: mech.sample(q, size=64, rng=np.random.default_rng(0)))
    assert np.all(np.isfinite(x)) and np.all((x >= lo) & (x <= hi)), x[
        ~((x >= lo) & (x <= hi))
    ][:3]


# ------------------------------------------------------------------------------------------------
# parameters


def _pow10(draw, lo=-300, hi=300):
    return 10.0 ** draw(st.floats(lo, hi))


def _signed(draw):
    return draw(st.sampled_from([-1.0, 1.0])) * _pow10(draw)


@st.composite
def interval_setups(draw, kinds=("both", "lower", "upper")):
    """``(b, lo, hi, q)``: scales 1e-300..1e300, bounds anywhere in ±1e300 or infinite, q near a bound,
    inside, or anywhere up to ±1e300."""
    b = _pow10(draw)
    kind = draw(st.sampled_from(kinds))
    anchor = 0.0 if draw(st.booleans()) else _signed(draw)
    width = b * _pow10(draw, -3, 3) if draw(st.booleans()) else _pow10(draw)
    lo, hi = {
        "both": (anchor, anchor + width),
        "lower": (anchor, math.inf),
        "upper": (-math.inf, anchor),
        "none": (-math.inf, math.inf),
    }[kind]
    assume(lo < hi and abs(anchor + width) < 1e305)
    where = draw(st.sampled_from(["near", "anywhere", "inside"]))
    if where == "anywhere":
        q = (
            draw(st.sampled_from([0.0, 1e300, -1e300]))
            if draw(st.booleans())
            else _signed(draw)
        )
    else:
        edge = draw(st.sampled_from([e for e in (lo, hi) if math.isfinite(e)] or [0.0]))
        span = 1.0 if where == "inside" else 1e3
        q = edge + b * draw(st.floats(-span, span))
    assume(math.isfinite(q))
    return b, lo, hi, q


def bit_parts(lo, hi, shift=0.0):
    return [
        ("atom", -math.inf, lo, lo - shift),
        ("piece", lo, hi, shift),
        ("atom", hi, math.inf, hi - shift),
    ]


# ------------------------------------------------------------------------------------------------
# the interval families


@SWEEP
@given(interval_setups(kinds=("both", "lower", "upper", "none")))
def test_bit_extremes(setup):
    b, lo, hi, q = setup
    check_law(
        dpbook.BIT(b, lower=lo, upper=hi), q, ExactLaw(q, b, bit_parts(lo, hi)), lo, hi
    )


@SWEEP
@given(interval_setups(kinds=("both", "lower", "upper", "none")))
def test_truncated_extremes(setup):
    b, lo, hi, q = setup
    check_law(
        dpbook.Truncated(b, lower=lo, upper=hi),
        q,
        ExactLaw(q, b, [("piece", lo, hi, 0.0)]),
        lo,
        hi,
    )


@FEW
@given(interval_setups(kinds=("none",)))
def test_laplace_extremes(setup):
    b, _, _, q = setup
    check_law(
        dpbook.Laplace(b),
        q,
        ExactLaw(q, b, [("piece", -math.inf, math.inf, 0.0)]),
        -math.inf,
        math.inf,
    )


@st.composite
def union_setups(draw):
    """``(b, allowed, q)``: two or three pieces with gaps and widths from 1e-3 b to 1e300, q anywhere."""
    b = _pow10(draw)
    m = draw(st.integers(2, 3))
    start = 0.0 if draw(st.booleans()) else _signed(draw)
    lengths = [
        b * _pow10(draw, -3, 3) if draw(st.booleans()) else _pow10(draw)
        for _ in range(2 * m - 1)
    ]
    ends = [start]
    for length in lengths:
        ends.append(ends[-1] + length)
    assume(all(x < y for x, y in zip(ends, ends[1:])) and abs(ends[-1]) < 1e305)
    lo, hi = ends[0::2], ends[1::2]
    if draw(st.booleans()):
        lo[0] = -math.inf
    if draw(st.booleans()):
        hi[-1] = math.inf
    where = draw(st.sampled_from(["near", "anywhere"]))
    if where == "anywhere":
        q = (
            draw(st.sampled_from([0.0, 1e300, -1e300]))
            if draw(st.booleans())
            else _signed(draw)
        )
    else:
        q = draw(st.sampled_from(ends)) + b * draw(st.floats(-1e3, 1e3))
    assume(math.isfinite(q))
    return b, list(zip(lo, hi)), q


@SWEEP
@given(union_setups())
def test_normalized_extremes(setup):
    b, allowed, q = setup
    mech = dpbook.Normalized(b, allowed=allowed)
    law = ExactLaw(q, b, [("piece", lo, hi, 0.0) for lo, hi in allowed])
    check_law(
        mech,
        q,
        law,
        allowed[0][0],
        allowed[-1][1],
        points=[v for piece in allowed for v in piece],
    )


@FEW
@given(interval_setups(kinds=("both", "lower", "upper")))
def test_normalized_one_piece_is_truncated(setup):
    b, lo, hi, q = setup
    law = ExactLaw(q, b, [("piece", lo, hi, 0.0)])
    check_law(dpbook.Normalized(b, allowed=[(lo, hi)]), q, law, lo, hi)


@SWEEP
@given(st.floats(-15, 6), st.floats(-300, 300), interval_setups(kinds=("lower",)))
def test_croft_laplace_extremes(log_eps, log_delta, setup):
    _, lower, _, q = setup
    eps, delta = 10.0**log_eps, 10.0**log_delta
    assume(delta / eps < 1e300)
    mech = dpbook.CroftLaplace(eps, delta, lower=lower)
    b = _silent(mech.scale_at, q)
    assert math.isfinite(b) and b > 0
    check_law(
        mech, q, ExactLaw(q, b, [("piece", lower, math.inf, 0.0)]), lower, math.inf
    )


@SWEEP
@given(interval_setups(kinds=("lower",)), st.floats(0, 1e3), st.booleans())
def test_translated_ramp_extremes(setup, shift_in_scales, absolute):
    b, _, _, q = setup
    shift = _pow10_of(shift_in_scales) if absolute else b * shift_in_scales
    assume(math.isfinite(shift) and abs(q) < 1e300)
    mech = dpbook.TranslatedRamp(b, shift=shift)
    law = ExactLaw(
        q, b, [("atom", -math.inf, shift, 0.0), ("piece", shift, math.inf, shift)]
    )
    check_law(mech, q, law, 0.0, math.inf)


def _pow10_of(t):
    """A value spread over 1e-300..1e300 from ``t`` in ``[0, 1e3]``."""
    return 10.0 ** (0.6 * t - 300)


# ------------------------------------------------------------------------------------------------
# restriction, the multiplicative mechanism


@SWEEP
@given(interval_setups(kinds=("lower",)), st.floats(-3, 3))
def test_restricted_laplace_extremes(setup, loc_in_scales):
    b, _, _, q = setup
    loc = b * loc_in_scales
    assume(
        abs(q + loc) < 1e300 and (q + loc) - q == loc
    )  # the reference's centre must be exact
    mech = dpbook.Restricted(stats.laplace(loc=loc, scale=b))
    check_law(
        mech, q, ExactLaw(q + loc, b, [("piece", 0.0, math.inf, 0.0)]), 0.0, math.inf
    )


@FEW
@given(
    st.floats(-300, 300),
    st.one_of(
        st.floats(-30, 30), st.floats(-1e3, 1e3), st.sampled_from([-1e300, 1e300])
    ),
)
def test_restricted_normal_extremes(log_scale, t):
    """Moments against quadrature for cuts within 30 scales, against the Mills-ratio series beyond."""
    s = 10.0**log_scale
    q = t * s if abs(t) < 1e4 else t
    mech = dpbook.Restricted(stats.norm(scale=s))
    mean, bias, var = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance")
    )
    c = -q / s
    assert math.isfinite(mean) and mean >= 0 and var >= 0 and math.isfinite(bias)
    if c < -30:  # almost nothing is cut off
        assert bias == pytest.approx(0.0, abs=1e-12 * s) and var == pytest.approx(
            min(s * s, math.inf), rel=1e-12
        )
    elif c < 30:
        from scipy import integrate

        mass = integrate.quad(stats.norm.pdf, c, np.inf, epsabs=0, epsrel=1e-13)[0]
        m1 = (
            integrate.quad(
                lambda z: (z - c) * stats.norm.pdf(z), c, np.inf, epsabs=0, epsrel=1e-13
            )[0]
            / mass
        )
        m2 = (
            integrate.quad(
                lambda z: (z - c - m1) ** 2 * stats.norm.pdf(z),
                c,
                np.inf,
                epsabs=0,
                epsrel=1e-13,
            )[0]
            / mass
        )
        assert mean == pytest.approx(s * m1, rel=1e-9)
        assert var == pytest.approx(min(s * (s * m2), math.inf), rel=1e-9)
    else:  # E[N - c | N >= c] = 1/c - 2/c^3 + ..., Var = 1/c^2 - 6/c^4 + ...
        k = (1 / c) ** 2
        assert mean == pytest.approx(
            s / c * (1 - 2 * k + 10 * k * k - 74 * k**3), rel=1e-8
        )
        assert var == pytest.approx(
            s / c * (s / c) * (1 - 6 * k + 50 * k * k), rel=2e-6, abs=TINY
        )
    x = _silent(lambda: mech.sample(q, size=64, rng=np.random.default_rng(1)))
    assert np.all(np.isfinite(x)) and np.all(x >= 0)


@SWEEP
@given(st.floats(-300, math.log10(0.999)), st.floats(-300, 300))
def test_log_laplace_extremes(log_scale, log_q):
    """Mean q/(1 - b²), relative variance b²(2 + b²)/((1 - 4b²)(1 - b²)²): finite or (silently) inf."""
    b, q = 10.0**log_scale, 10.0**log_q
    mech = dpbook.LogLaplace(b)
    mean, bias, var, mse = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance", "mse")
    )
    with decimal.localcontext(_context(60)):
        B, Q = D(b), D(q)
        m_ref = Q / (1 - B * B)
        rel_var = (
            B * B * (2 + B * B) / ((1 - 4 * B * B) * (1 - B * B) ** 2)
            if b < 0.5
            else D("Infinity")
        )
        _close(mean, m_ref, float(D("1e-12") * m_ref), "mean")
        _close(bias, m_ref - Q, float(D("1e-12") * m_ref), "bias")
        if b < 0.5:
            _close(
                var, Q * Q * rel_var, float(D("1e-12") * Q * Q * rel_var), "variance"
            )
        else:
            assert var == math.inf and mse == math.inf
    F = _silent(mech.cdf, np.array([0.0, q * 0.5, q, q * 2, math.inf]), q)
    assert np.all(np.diff(F) >= 0) and F[2] == pytest.approx(0.5)
    x = _silent(lambda: mech.sample(q, size=64, rng=np.random.default_rng(2)))
    assert np.all(x > 0)


# ------------------------------------------------------------------------------------------------
# post-processings


@SWEEP
@given(
    interval_setups(kinds=("both",)), st.floats(0, 3), st.floats(0, 3), st.floats(0, 1)
)
def test_step_postprocessed_extremes(setup, v0, v1, shift_frac):
    """A two-cell step function with a linear tail: atoms at its values plus the shifted density beyond."""
    b, e0, e1, q = setup
    values = [v0 * b, v1 * b]
    shift = e1 - shift_frac * (e1 - e0)  # <= the last edge, so phi >= 0 on the tail
    assume(min(values) >= 0 and e1 - shift >= 0)
    mech = dpbook.StepPostProcessed(b, edges=[e0, e1], values=values, shift=shift)
    parts = [
        ("atom", -math.inf, e0, values[0]),
        ("atom", e0, e1, values[1]),
        ("piece", e1, math.inf, shift),
    ]
    law = ExactLaw(q, b, parts)
    top = math.inf
    low = min(values + [e1 - shift])
    mean, bias, var, mse = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance", "mse")
    )
    with decimal.localcontext(law.ctx):
        m_ref, v_ref = law.moments()
        b_ref = m_ref - D(q)
        sd = v_ref.sqrt()
        _close(
            mean,
            m_ref,
            float(
                D("1e-9") * (abs(m_ref) + sd) + D(4 * math.ulp(max(abs(q), abs(e1))))
            ),
            "mean",
        )
        _close(
            bias,
            b_ref,
            float(
                D("1e-9") * (abs(b_ref) + sd) + D(8 * math.ulp(max(abs(q), abs(e1))))
            ),
            "bias",
        )
        # the variance is about the mean: it cannot resolve below the rounding of a mean of size |q|
        _close(
            var,
            v_ref,
            float(
                D("1e-8") * v_ref
                + D(4 * math.ulp(max(abs(q), abs(e1)))) ** 2 * 4
                + D(1e-12) * (abs(m_ref) * sd)
            ),
            "variance",
        )
    assert low <= mean <= top and var >= 0 and mse >= var * (1 - 1e-12)


# ------------------------------------------------------------------------------------------------
# resource requests refuse up front, with the size in the message


@pytest.mark.parametrize(
    "request_",
    [
        lambda: dpbook.PostProcessed(
            1.0, lambda x: np.maximum(x, 0.0), breakpoints=[0.0]
        ).certify_max_abs_bias(step=1e-9),
        lambda: dpbook.verify_bias(dpbook.optimal_postprocessing(1.0), step=1e-9),
        lambda: dpbook.verify_mse(dpbook.optimal_postprocessing(1.0), step=1e-9),
        lambda: dpbook.min_bias_postprocessing(cell=1e-4),
    ],
)
def test_resource_guards(request_):
    with pytest.raises(ValueError, match=r"would need ~[0-9.e+]+ GiB.*choose a larger"):
        request_()


def test_neighbour_codes_stay_exact_for_many_records():
    """Multisets are coded by rank, not by ``sum a_i r^i`` (which overflows int64 when ``r^n >= 2^63``)."""
    values = np.array([0.0, 1.0])
    for n in (40, 70):
        assert dpbook.brute_force_sensitivity(
            lambda d: d.mean(axis=1), values, n=n
        ) == pytest.approx(1 / n, rel=1e-12)
        assert (
            dpbook.brute_force_sensitivity(
                lambda d: d.mean(axis=1), values, n=n, relation="add_remove"
            )
            > 0
        )


# ------------------------------------------------------------------------------------------------
# restriction with other bases than Laplace and normal, a general post-processing, the base mse


def _logistic_excess(c):
    """``(E[W - c | W >= c], E[(W - c)^2 | W >= c])`` for the standard logistic ``W``, in closed form:
    ``∫_c^∞ S = log(1 + e^{-c})`` and ``∫_0^∞ u S(c + u) du = -Li2(-e^{-c})`` with ``S(c) = 1/(1 + e^c)``."""
    y = math.exp(-c) if c > -700 else math.inf
    if c >= 0:  # y <= 1: everything as a function of y, no cancellation
        first = (1 + y) * math.log1p(y) / y if y > 0 else 1.0
        if y < 0.01:  # -Li2(-y) = y - y^2/4 + y^3/9 - ...
            li = sum((-1) ** (k + 1) * y**k / k**2 for k in range(1, 40))
        else:
            li = -float(special.spence(1 + y))
        second = 2 * (1 + y) * li / y if y > 0 else 2.0
    else:
        first = (1 + math.exp(c)) * (-c + math.log1p(math.exp(c)))
        second = 2 * (1 + math.exp(c)) * -float(special.spence(1 + y))
    return first, second


@FEW
@given(
    st.floats(-300, 300),
    st.one_of(
        st.floats(-50, 50), st.floats(-1e6, 1e6), st.sampled_from([-1e300, 1e300, 0.0])
    ),
)
def test_restricted_logistic_extremes(log_scale, t):
    """Restricted(logistic): the mean is ``s E[W - c | W >= c]`` (c = -q/s), exact in closed form; no warning,
    never NaN, never an infinite draw (which the old code gave below q = -745 s)."""
    s = 10.0**log_scale
    q = t * s if abs(t) < 1e7 else t
    assume(math.isfinite(q))
    mech = dpbook.Restricted(stats.logistic(scale=s))
    mean, bias, var = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance")
    )
    c = -q / s if math.isfinite(-q / s) else math.copysign(math.inf, -q)
    assert (
        math.isfinite(mean)
        and mean >= 0
        and math.isfinite(bias)
        and var >= 0
        and not math.isnan(var)
    )
    if abs(c) < 1e6:
        first, second = _logistic_excess(c)
        assert mean == pytest.approx(s * first, rel=1e-9, abs=TINY)
        if c > -5:
            assert var == pytest.approx(
                min(s * (s * (second - first**2)), math.inf), rel=1e-7, abs=TINY
            )
    elif (
        c > 0
    ):  # the excess beyond a far cut is exponential with mean 1 (in units of s)
        assert mean == pytest.approx(s, rel=1e-9, abs=TINY) and var == pytest.approx(
            min(s * s, math.inf), rel=1e-8, abs=TINY
        )
    else:  # nothing is cut off
        assert bias == pytest.approx(0.0, abs=1e-12 * s) and var == pytest.approx(
            min(s * (s * np.pi**2 / 3), math.inf), rel=1e-12
        )


@FEW
@given(st.floats(-300, 300), st.one_of(st.floats(-30, 30), st.floats(1e8, 1e300)))
def test_restricted_student_t_extremes(log_scale, t):
    """Restricted(t(5)): against adaptive quadrature of scipy's density near the middle; far to the left the
    mean excess is ``c/(ν - 1)`` to ``O(c^-2)`` relative.  Scipy's own t tail overflows there."""
    from scipy import integrate

    s, nu = 10.0**log_scale, 5
    q = -t * s if abs(t) <= 30 else -t
    c = (
        t if abs(t) <= 30 else t / s
    )  # the cut in units of s (may overflow: the check uses logs)
    mech = dpbook.Restricted(stats.t(nu, scale=s))
    mean, bias, var = (
        _silent(getattr(mech, name), q) for name in ("mean", "bias", "variance")
    )
    assert math.isfinite(mean) and mean >= 0 and math.isfinite(bias) and var >= 0
    if abs(t) <= 30:
        f = stats.t(nu).pdf
        quad = lambda g: sum(
            integrate.quad(g, a, z, epsabs=0, epsrel=1e-13, limit=200)[0]
            for a, z in ((c, c + 1), (c + 1, np.inf))
        )
        mass = quad(f)
        m1 = quad(lambda w: (w - c) * f(w)) / mass
        m2 = quad(lambda w: (w - c - m1) ** 2 * f(w)) / mass
        assert mean == pytest.approx(min(s * float(m1), math.inf), rel=1e-9, abs=TINY)
        assert var == pytest.approx(
            min(s * (s * float(m2)), math.inf), rel=1e-8, abs=TINY
        )
    else:
        # the cut in units of s is t/s; beyond 1e8 the O(1/c) correction is below 1e-16 relative
        if math.log(t) - math.log(s) > math.log(1e8):
            assert mean == pytest.approx(t / (nu - 1), rel=1e-8)


@SWEEP
@given(interval_setups(kinds=("lower",)), st.floats(0, 10))
def test_postprocessed_ramp_extremes(setup, shift_in_scales):
    """A general ``PostProcessed`` with the translated ramp's φ against :class:`TranslatedRamp`'s closed forms.

    The old integration returned NaN at scale 1e300 (``b²`` overflowed) and 0 at 1e-300 (the whole law fell
    between two quadrature nodes).  A black-box φ is only known at doubles: where ``b`` is below the rounding
    step of ``q`` the law is resolved to that step (the tolerances carry ``ulp(q)``).
    """
    b, _, _, q = setup
    shift = b * shift_in_scales
    assume(abs(q) < 1e300 and math.isfinite(shift))
    kw = dpbook.translated_ramp_phi(shift)
    mech, exact = dpbook.PostProcessed(b, **kw), dpbook.TranslatedRamp(b, shift)
    step = 8 * math.ulp(max(abs(q), shift))
    for name in ("mean", "bias", "variance", "mse"):
        value, ref = _silent(getattr(mech, name), q), _silent(getattr(exact, name), q)
        assert not math.isnan(value), name
        if math.isinf(ref):
            # (unless b is below the rounding step of q: then only the quantized law is seen)
            assert value == ref or step > 1e-2 * b, (name, value, ref)
            continue
        spread = math.sqrt(_silent(exact.variance, q))
        slack = {
            "mean": 1e-9 * (abs(ref) + spread) + step,
            "bias": 1e-9 * (abs(ref) + spread) + step,
            "variance": 1e-8 * ref + 4 * step * step + 2 * step * spread,
            "mse": 1e-8 * ref
            + 4 * step * step
            + 2 * step * (spread + abs(_silent(exact.bias, q))),
        }[name]
        assert abs(value - ref) <= slack + TINY, (name, value, ref)


def test_base_mse_never_raises_for_a_huge_bias():
    """``Mechanism.mse`` squares in numpy: a bias beyond 1.3e154 gives ``inf`` (the truth), never OverflowError."""

    class Shifted(AuditOnly):  # M(q) = q + 1e200 + L_1: only its moments are needed
        privacy_description = AuditOnly._not_needed

        def _bias(self, q):
            return np.full(np.shape(q), 1e200)

        def _variance(self, q):
            return np.full(np.shape(q), 2.0)

    assert _silent(Shifted().mse, 0.0) == math.inf
    assert np.all(_silent(Shifted().mse, np.zeros(3)) == math.inf)
    with pytest.raises(OverflowError):  # what the old code did with Python floats
        float(1e200) ** 2


@pytest.mark.parametrize(
    "base, q",
    [
        (stats.logistic(), -800.0),
        (stats.logistic(scale=1e-300), -1e300),
        (stats.t(5), -1e300),
        (stats.gumbel_r(), -800.0),
    ],
)
def test_restricted_far_cut_draws_are_finite_with_the_right_mean(base, q):
    """Far beyond the cut the kept mass underflows (scipy's ``isf`` gave ``inf`` draws at q = -745 for the
    logistic): draws come from the excess over the cut, in log space."""
    mech = dpbook.Restricted(base)
    x = _silent(lambda: mech.sample(q, size=20_000, rng=np.random.default_rng(3)))
    assert np.all(np.isfinite(x)) and np.all(x >= 0)
    r = x / mech.mean(
        q
    )  # in units of the mean (at scale 1e-300 the variance underflows)
    assert abs(r.mean() - 1) < 5 * r.std(ddof=1) / math.sqrt(r.size), r.mean()


# ------------------------------------------------------------------------------------------------
# restriction's law with normal, logistic and Student t(5) bases, against exact decimal references


@functools.lru_cache(maxsize=None)
def _pi_to(prec):
    with decimal.localcontext(_context(prec + 10)):
        return 16 * _atan_series(D(1) / 5) - 4 * _atan_series(D(1) / 239)


def _pi():
    """π to the context's precision (Machin's formula, computed once to enough digits)."""
    prec = decimal.getcontext().prec
    return +_pi_to(max(prec, 4000) if prec <= 4000 else prec)


def _atan_series(y):
    eps = D(10) ** -(decimal.getcontext().prec + 5)
    total, term, n, y2 = D(0), y, 0, y * y
    while abs(term) > eps * abs(total) or n == 0:
        total += term / (2 * n + 1) if n % 2 == 0 else -term / (2 * n + 1)
        term *= y2
        n += 1
    return total


def _atan(y):
    """atan(y) for 0 <= y, halving the argument until the series converges fast."""
    if y > 1:
        return _pi() / 2 - _atan(1 / y)
    k = 0
    while y > D("1e-12"):  # (then the series needs prec/24 terms)
        y = y / (1 + (1 + y * y).sqrt())
        k += 1
    return _atan_series(y) * 2**k


def _sin_cos(t):
    eps = D(10) ** -(decimal.getcontext().prec + 5) * min(
        D(1), abs(t)
    )  # (sin t to relative precision)
    s = c = D(0)
    term, n = D(1), 0  # t^n / n!
    while True:
        if n % 2 == 0:
            c += term if n % 4 == 0 else -term
        else:
            s += term if n % 4 == 1 else -term
        n += 1
        term = term * t / n
        if abs(term) <= eps and n > 2:
            return s, c


class ExactBase:
    """``log S``, ``log f`` of a standardized normal, logistic or t(5) law at a Decimal ``w``, exactly
    (to the context's precision): the normal by its Taylor series (``|w| < 10``) or the continued fraction
    of its Mills ratio; the logistic in closed form; t(5) by its elementary cdf
    ``S(w) = (φ - sin φ cos φ (1 + (2/3) sin² φ))/π``, ``φ = atan(√5/w)`` (Student's formula for odd ν)."""

    def __init__(self, name, extra=0):
        self.name = name
        self.extra = extra  # t(5): digits its cancellation needs beyond the context's

    def lS(self, w):
        if self.name == "logistic":
            return -(w + (1 + (-w).exp()).ln()) if w > 0 else -((1 + w.exp()).ln())
        if w < 0:
            return (1 - self.lS(-w).exp()).ln()
        if self.name == "norm":
            half_log_2pi = (2 * _pi()).ln() / 2
            if w < 10:
                total, term, n = D(0), w, 0
                eps = D(10) ** -(decimal.getcontext().prec + 5)
                while term > eps * total or n == 0:
                    total += term
                    n += 1
                    term = term * w * w / (2 * n + 1)
                return (D("0.5") - (-w * w / 2 - half_log_2pi).exp() * total).ln()
            r = D(0)  # (the fraction's n-th term shrinks like n/w²)
            terms = (
                2000
                if w < 1000
                else 20 + int(2.4 * decimal.getcontext().prec / float((w * w).ln()))
            )
            for n in range(terms, 0, -1):
                r = n / (w + r)
            return -w * w / 2 - half_log_2pi - (w + r).ln()
        with decimal.localcontext(
            _context(decimal.getcontext().prec + self.extra)
        ):  # t(5)
            pi = _pi()
            phi = pi / 2 if w == 0 else _atan(D(5).sqrt() / w)
            s, c = _sin_cos(phi)
            tail = (phi - s * c * (1 + D(2) / 3 * s * s)) / pi
        return (+tail).ln()

    def lF(self, w):
        return self.lS(-w)

    def lpdf(self, w):
        if self.name == "norm":
            return -w * w / 2 - (2 * _pi()).ln() / 2
        if self.name == "logistic":
            a = abs(w)
            return -a - 2 * (1 + (-a).exp()).ln()
        return (D(8) / (3 * _pi() * D(5).sqrt())).ln() - 3 * (1 + w * w / 5).ln()


def exact_restricted_law(name, s, q, x):
    """``logcdf, logsf, logpdf`` of ``Restricted(base(scale=s))`` at ``q``, ``x > 0``, as Decimals."""
    # digits: z = c + u resolved to well below u (c = -q/s, u = x/s), and t(5)'s cancellation (φ^4 relative
    # to φ ~ 1/|w|) at the largest of |c|, |z| <= |c| + u
    log_c = math.log10(abs(q)) - math.log10(s) if q != 0 else -math.inf
    log_u = math.log10(x) - math.log10(s)
    digits = 60 + int(max(0.0, log_c - log_u, -log_u))
    with decimal.localcontext(_context(digits)):
        base = ExactBase(
            name, int(4 * max(0.0, log_c, log_u)) + 10 if name == "t" else 0
        )
        S, Q, X = D(s), D(q), D(x)
        c, z = -Q / S, (X - Q) / S
        lSc, lSz = base.lS(c), base.lS(z)
        logsf = lSz - lSc
        if c >= 0:
            logcdf = (1 - logsf.exp()).ln()
        else:
            lFc, lFz = base.lF(c), base.lF(z)
            if z <= 0:
                d = lFz - lFc
                logcdf = (
                    lFz + (1 - (-d).exp()).ln() if d > 1 else lFc + (d.exp() - 1).ln()
                ) - lSc
            else:
                logcdf = (1 - lSz.exp() - lFc.exp()).ln() - lSc
        logpdf = base.lpdf(z) - lSc - S.ln()
        return logcdf, logsf, logpdf


def _close_log(value, ref, what):
    """A log-probability against the exact one: relative 1e-9 (absolute below 1), or both below the doubles."""
    if ref < -D(BIG):
        assert value == -math.inf or value < -1e307, f"{what}: {value!r}, truth {ref}"
        return
    r = float(ref)
    assert math.isfinite(value), f"{what}: {value!r}, truth {r!r}"
    assert abs(value - r) <= 1e-9 * max(1.0, abs(r)), f"{what}: {value!r}, truth {r!r}"


def _close_prob(value, log_ref, what):
    r = float(log_ref.exp()) if log_ref > -800 else 0.0
    assert abs(value - r) <= 1e-9 * r + TINY, f"{what}: {value!r}, truth {r!r}"


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.sampled_from(["norm", "logistic", "t"]),
    st.floats(-300, 300),
    st.one_of(
        st.sampled_from([-1e300, -800.0, 0.0, 3.0, 800.0, 1e300]),
        st.builds(
            lambda s, e: s * 10.0**e, st.sampled_from([-1.0, 1.0]), st.floats(-300, 300)
        ),
    ),
    st.one_of(
        st.sampled_from([0.25, 1.0, 5.0, 1e300]),
        st.builds(lambda e: 10.0**e, st.floats(-300, 300)),
    ),
)
def test_restricted_law_with_other_bases_at_the_extremes(name, log_scale, q, x):
    """Restricted(normal / logistic / t(5)): ``logcdf``, ``logsf``, ``logpdf``, ``cdf`` and ``sf`` against the exact
    decimal laws (:class:`ExactBase`) for scales 1e-300..1e300, true values and outputs up to 1e300.  The old
    code gave NaN or a warning in 443 of 2625 such evaluations on a grid (q/s overflowing; the square in the
    normal's logpdf; t's logsf, -inf beyond 1e62); the cut is now handled in log space around it."""
    s = 10.0**log_scale
    base = (
        {"norm": stats.norm, "logistic": stats.logistic}[name](scale=s)
        if name != "t"
        else stats.t(5, scale=s)
    )
    mech = dpbook.Restricted(base)
    ref = exact_restricted_law(name, s, q, x)
    for k, fn in enumerate(("logcdf", "logsf", "logpdf")):
        _close_log(
            float(_silent(getattr(mech, fn), x, q)), ref[k], f"{fn}({x!r}, {q!r})"
        )
    for k, fn in ((0, "cdf"), (1, "sf")):
        _close_prob(
            float(_silent(getattr(mech, fn), x, q)), ref[k], f"{fn}({x!r}, {q!r})"
        )
    # the ends of the support
    ends = _silent(
        lambda: [
            mech.cdf(0.0, q),
            mech.sf(0.0, q),
            mech.logsf(0.0, q),
            mech.cdf(-1.0, q),
            mech.cdf(np.inf, q),
            mech.logsf(np.inf, q),
            mech.logpdf(-1.0, q),
        ]
    )
    assert ends == [0.0, 1.0, 0.0, 0.0, 1.0, -np.inf, -np.inf]


# ------------------------------------------------------------------------------------------------
# the one home of a Laplace piece's log-mass


@st.composite
def piece_setups(draw):
    """``(q, b, lower, upper)``: short (down to 1e-20 b), long, far (q up to ±1e300 away) and infinite pieces."""
    b = _pow10(draw)
    anchor = 0.0 if draw(st.booleans()) else _signed(draw)
    width = b * _pow10(draw, -20, 3) if draw(st.booleans()) else _pow10(draw)
    lo, hi = anchor, anchor + width
    assume(lo < hi)
    kind = draw(st.sampled_from(["both", "lower", "upper"]))
    lo, hi = {"both": (lo, hi), "lower": (lo, math.inf), "upper": (-math.inf, hi)}[kind]
    where = draw(st.sampled_from(["near", "end", "anywhere"]))
    edge = lo if math.isfinite(lo) else hi
    q = {
        "near": edge + b * draw(st.floats(-5, 5)),
        "end": edge,
        "anywhere": _signed(draw),
    }[where]
    assume(math.isfinite(q))
    return q, b, lo, hi


def exact_piece_log_mass(q, b, lo, hi):
    """``log P(lo <= q + L_b <= hi)`` in decimal arithmetic (the elementary antiderivatives of the density)."""
    law = ExactLaw(q, b, [("piece", lo, hi, 0.0)])
    with decimal.localcontext(law.ctx):
        return law._sums(law._terms(law.parts), law.c)[0]


@SWEEP
@given(piece_setups())
def test_piece_log_mass_is_exact_on_short_long_far_and_infinite_pieces(setup):
    """Truncation, normalization and the auditor share one piece log-mass (``_privacy_interface._piece_log_mass``):
    within 1e-13 relative of the exact decimal value everywhere (the auditor's former copy, ``log`` of an
    ``expm1`` of ``(upper - q)/s`` and ``(lower - q)/s``, was -inf or off by more than 1e-9 on 261 of 1988 random
    pieces: widths that underflow in units of b, pieces whose ends round against q)."""
    from dpbook._kernels.laplace import _piece_log_mass, laplace_log_mass

    q, b, lo, hi = setup
    ref = exact_piece_log_mass(q, b, lo, hi)
    got = float(_silent(_piece_log_mass, q, b, lo, hi))
    if ref < -D(BIG):
        assert got == -math.inf or got < -1e307
    else:
        assert abs(got - float(ref)) <= 1e-13 * max(1.0, abs(float(ref))), (got, ref)
    # the three callers agree with it
    union = float(_silent(laplace_log_mass, q, b, [lo], [hi]))
    assert union == got
    if math.isfinite(q) and not (math.isinf(lo) and math.isinf(hi)):
        kept = float(_silent(dpbook.Truncated(b, lower=lo, upper=hi).log_mass_kept, q))
        normalized = float(_silent(dpbook.Normalized(b, [(lo, hi)]).log_normalizer, q))
        assert kept == got and normalized == pytest.approx(got, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize(
    "q, lo, hi",
    [
        (0.0, 0.0, 1e-8),
        (0.3, 0.0, 1.0),
        (-2.0, 0.0, 3.0),
        (5.0, -1.0, 4.9),
        (0.5, 0.5, 0.5 + 1e-12),
        (1.0, -np.inf, 0.0),
        (-3.0, 0.0, np.inf),
        (40.0, 0.0, 1.0),
    ],
)
def test_piece_log_mass_against_quadrature(q, lo, hi):
    """Brute force: adaptive quadrature of the Laplace density over the piece (scale 1)."""
    from scipy import integrate

    from dpbook._kernels.laplace import _piece_log_mass

    f = lambda x: 0.5 * math.exp(-abs(x - q))
    pts = [q] if lo < q < hi else None
    if math.isinf(lo) or math.isinf(hi):
        mass = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13)[0]
    else:
        mass = integrate.quad(f, lo, hi, points=pts, epsabs=0, epsrel=1e-13)[0]
    assert float(_piece_log_mass(q, 1.0, lo, hi)) == pytest.approx(
        math.log(mass), rel=1e-11, abs=1e-12
    )


# ------------------------------------------------------------------------------------------------
# the law functions of every family at the extremes (cdf, sf, logcdf, logsf, logpdf, pmf)

#: families whose logcdf/logsf are still log(cdf)/log(sf) and so -inf where the probability underflows
#: (see test_log_tails_stay_finite_inside_the_support, strict xfail until their modules compute them in logs);
#: none left: every family computes its log tails in log space
_LOG_TAILS_UNDERFLOW = ()


@st.composite
def family_setups(draw):
    """``(name, mechanism, q, scale)`` for any family, scales 1e-300..1e300, bounds anywhere or infinite, q
    to ±1e300."""
    b, lo, hi, q = draw(interval_setups(kinds=("both", "lower", "upper")))
    name = draw(
        st.sampled_from(
            [
                "Laplace",
                "BIT",
                "Truncated",
                "Normalized",
                "TranslatedRamp",
                "CroftLaplace",
                "RestrictedLaplace",
                "RestrictedNormal",
                "RestrictedLogistic",
                "RestrictedT",
                "LogLaplace",
                "StepPostProcessed",
                "DiscreteLaplace",
                "DiscreteBIT",
                "DiscreteTruncated",
            ]
        )
    )
    lower = lo if math.isfinite(lo) else 0.0
    if name == "Normalized":
        ends = [lower, lower + 2 * b, lower + 5 * b]
        assume(ends[0] < ends[1] < ends[2] < 1e305)
        return (
            name,
            dpbook.Normalized(b, [(-math.inf, ends[0]), (ends[1], ends[2])]),
            q,
            b,
        )
    if name == "CroftLaplace":
        eps = 10.0 ** draw(st.floats(-15, 6))
        assume(b / eps < 1e300)
        mech = dpbook.CroftLaplace(eps, b, lower=lower)
        return name, mech, q, float(_silent(mech.scale_at, q))
    if name.startswith("Restricted"):
        assume(
            b < 1e300
        )  # (scipy's frozen law computes its own moments, which overflow beyond)
        base = {
            "RestrictedLaplace": stats.laplace,
            "RestrictedNormal": stats.norm,
            "RestrictedLogistic": stats.logistic,
        }.get(name)
        return (
            name,
            dpbook.Restricted(base(scale=b) if base else stats.t(5, scale=b)),
            q,
            b,
        )
    if name == "LogLaplace":
        b = min(b, 0.999)
        return name, dpbook.LogLaplace(b), abs(q) if q != 0 else 1.0, b
    if name.startswith("Discrete"):
        assume(b < 1e15)  # (alpha = e^{-1/b} is 1 in doubles beyond)
        qi = float(np.clip(np.round(q), -(2.0**52), 2.0**52))
        if name == "DiscreteLaplace":
            return name, dpbook.DiscreteLaplace(b), qi, b
        cls = dpbook.DiscreteBIT if name == "DiscreteBIT" else dpbook.DiscreteTruncated
        return (
            name,
            cls(b, lower=0, upper=draw(st.sampled_from([1, 10, 10**6, np.inf]))),
            qi,
            b,
        )
    mech = {
        "Laplace": lambda: dpbook.Laplace(b),
        "BIT": lambda: dpbook.BIT(b, lower=lo, upper=hi),
        "Truncated": lambda: dpbook.Truncated(b, lower=lo, upper=hi),
        "TranslatedRamp": lambda: dpbook.TranslatedRamp(b, shift=abs(lower)),
        "StepPostProcessed": lambda: dpbook.StepPostProcessed(
            b, edges=[lower, lower + b], values=[0.0, b], shift=lower + b
        ),
    }[name]
    assume(name != "StepPostProcessed" or lower < lower + b)
    return name, mech(), q, b


def _log_truth_is_finite(name, x, q, b):
    """Whether ``log P`` of an event holding ``x`` can be a double: the log-density's exponent at ``x`` is
    ``-|x - q|/b`` (Laplace kernels), ``-((x - q)/b)²/2`` (normal), ``-|log(x/q)|/b`` (log-Laplace), polynomial (t)."""
    with np.errstate(all="ignore"):
        d = np.abs(x - q) / b
        size = {
            "RestrictedNormal": d * d / 2,
            "RestrictedT": 0 * d,
            "LogLaplace": np.abs(np.log(x / q)) / b,
        }.get(name, d)
    return size < 1e307


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(family_setups())
def test_law_functions_of_every_family_at_the_extremes(setup):
    """cdf, sf, logcdf, logsf, logpdf, pmf of every family: no warning, never NaN, probabilities in [0, 1],
    ``cdf + sf = 1``, the cdf nondecreasing, logs consistent with the probabilities, the mean inside the
    support, and ``logcdf``/``logsf`` finite inside the support wherever the truth is a double (``-inf``
    there is an underflow passed off as the answer)."""
    name, mech, q, b = setup
    lo, hi = mech.support
    mean = float(_silent(mech.mean, q))
    assert lo <= mean <= hi and not math.isnan(float(_silent(mech.variance, q)))
    xs = {lo, hi, q, mean, -BIG, BIG, 0.0, mean * (1 + 1e-9), mean * 2}
    xs |= {q + s * 10.0**k for k in (-300, -5, 0, 5, 300) for s in (-1.0, 1.0)}
    xs = np.array(sorted(x for x in xs if math.isfinite(x)))
    got = {
        fn: np.asarray(_silent(getattr(mech, fn), xs, q), dtype=float)
        for fn in ("cdf", "sf", "logcdf", "logsf", "logpdf", "pmf")
    }
    for fn, v in got.items():
        assert not np.isnan(v).any(), (fn, xs[np.isnan(v)])
    cdf, sf = got["cdf"], got["sf"]
    assert np.all((cdf >= 0) & (cdf <= 1) & (sf >= 0) & (sf <= 1)) and np.all(
        np.diff(cdf) >= 0
    ), (cdf, sf)
    assert np.all(np.abs(cdf + sf - 1) <= 1e-9), (xs, cdf, sf)
    assert np.all(got["logpdf"] < np.inf) and np.all(
        (got["pmf"] >= 0) & (got["pmf"] <= 1)
    )
    for p, logp in ((cdf, got["logcdf"]), (sf, got["logsf"])):
        assert np.all(logp <= 0)
        shown = p > 1e-290
        assert np.allclose(np.exp(logp[shown]), p[shown], rtol=1e-9, atol=0), (
            xs[shown],
            p[shown],
            logp[shown],
        )
    if name not in _LOG_TAILS_UNDERFLOW:
        inside = (xs > lo) & (xs < hi) & _log_truth_is_finite(name, xs, q, b)
        for fn in ("logcdf", "logsf"):
            assert np.all(np.isfinite(got[fn][inside])), (
                fn,
                xs[inside],
                got[fn][inside],
            )


@pytest.mark.parametrize(
    "name",
    [
        "Truncated",
        "Normalized",
        "RestrictedLaplace",
        "RestrictedNormal",
        "Laplace",
        "DiscreteLaplace",
        "BIT",
        "TranslatedRamp",
        "LogLaplace",
        "StepPostProcessed",
        *[
            pytest.param(
                n, marks=pytest.mark.xfail(strict=True, reason="log(cdf) underflows")
            )
            for n in _LOG_TAILS_UNDERFLOW
        ],
    ],
)
def test_log_tails_stay_finite_inside_the_support(name):
    """``logcdf``/``logsf`` 1e5 scales into a tail: about ``-1e5``, not ``-inf``."""
    b, q = 1e-5, 3.0
    mech = {
        "Truncated": dpbook.Truncated(b, lower=0.0),
        "Normalized": dpbook.Normalized(b, [(0.0, np.inf)]),
        "RestrictedLaplace": dpbook.Restricted(stats.laplace(scale=b)),
        "RestrictedNormal": dpbook.Restricted(stats.norm(scale=0.01)),
        "Laplace": dpbook.Laplace(b),
        "DiscreteLaplace": dpbook.DiscreteLaplace(1e-3),
        "BIT": dpbook.BIT(b, lower=0.0),
        "TranslatedRamp": dpbook.TranslatedRamp(b, 0.5),
        "LogLaplace": dpbook.LogLaplace(b),
        "StepPostProcessed": dpbook.StepPostProcessed(
            b, edges=[0.0, 1.0], values=[0.0, 1.0], shift=0.5
        ),
    }[name]
    x = np.array([2.0, 4.0])
    out = np.concatenate(
        [_silent(mech.logcdf, x[:1], q), _silent(mech.logsf, x[1:], q)]
    )
    assert np.all(np.isfinite(out)) and np.all(out < -100), out


# ------------------------------------------------------------------------------------------------
# the auditor at extreme ε: never below the truth (closed forms in decimal arithmetic)


def _exact_truncated_loss(b, lo, hi, delta):
    """Δ/b + log N(lo + Δ) - log N(lo): the worst pair of a truncation to ``[lo, hi]`` over the domain ``[lo, hi]``
    (``log N`` is concave, so ``log N(q + Δ) - log N(q)`` is largest at ``q = lo``; by symmetry the same at ``hi``)."""
    if math.isinf(lo):
        lo, hi = -hi, math.inf  # reflect
    law0 = ExactLaw(lo, b, [("piece", lo, hi, 0.0)])
    law1 = ExactLaw(lo + delta, b, [("piece", lo, hi, 0.0)])
    with decimal.localcontext(_context(max(law0.ctx.prec, law1.ctx.prec) + 20)):
        n0 = law0._sums(law0._terms(law0.parts), law0.c)[0]
        n1 = law1._sums(law1._terms(law1.parts), law1.c)[0]
        return D(delta) / D(b) + n1 - n0


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(
    st.sampled_from(
        [
            "Laplace",
            "BIT",
            "Truncated",
            "Normalized",
            "RestrictedLaplace",
            "TranslatedRamp",
        ]
    ),
    st.floats(-15, 6),
    st.floats(-3, 3),
    st.sampled_from([math.inf, 1.0, 1e3]),
    st.floats(-100, 100),
)
@example(
    "TranslatedRamp", -15.0, 0.0, math.inf, 0.0
)  # the old atom ratio: 1.9e-15 for 1e-15, said exact
@example("RestrictedLaplace", -15.0, 0.0, math.inf, 0.0)
@example("Truncated", 6.0, -3.0, 1e3, 100.0)
def test_auditor_is_never_below_the_truth_at_extreme_epsilon(
    name, log_eps, log_delta, width_in_deltas, log_shift
):
    """``privacy_loss`` for ε = Δ/b in [1e-15, 1e6] against the exact loss: never below it, and exact (to 1e-12
    relative, its stated accuracy) where it says so.  The old auditor gave Truncated(1, [0, inf)) at ε = 1e-16
    half the truth (``log(2 - e^{-t})`` cancelled)."""
    eps, delta = 10.0**log_eps, 10.0**log_delta
    b = delta / eps
    lo = 0.0 if name in ("RestrictedLaplace", "TranslatedRamp") else 10.0**log_shift
    width = width_in_deltas * delta
    hi = lo + width
    assume(hi > lo)
    mech = {
        "Laplace": lambda: dpbook.Laplace(b),
        "BIT": lambda: dpbook.BIT(b, lower=lo, upper=hi),
        "Truncated": lambda: dpbook.Truncated(b, lower=lo, upper=hi),
        "Normalized": lambda: dpbook.Normalized(b, [(lo, hi)]),
        "RestrictedLaplace": lambda: dpbook.Restricted(stats.laplace(scale=b)),
        "TranslatedRamp": lambda: dpbook.TranslatedRamp(b, 10.0**log_shift),
    }[name]()
    try:
        report = _silent(dpbook.privacy_report, mech, delta)
    except ValueError as err:  # Δ below the spacing of floats at the bounds (lower = 1e16, Δ = 1): refused
        assume("below the float resolution" not in str(err))
        raise
    if name in ("Truncated", "Normalized", "RestrictedLaplace"):
        truth = _exact_truncated_loss(
            b, lo, hi if name != "RestrictedLaplace" else math.inf, delta
        )
    else:  # the Laplace ratio Δ/b, kept by the clamp (Δ <= the width) and by the ramp's post-processing
        truth = D(min(delta, width)) / D(b)
    assert D(report.epsilon) >= truth * (1 - D("1e-15")), (report, truth)
    if report.exact:
        assert D(report.epsilon) <= truth * (1 + D("1e-12")) + D("1e-300"), (
            report,
            truth,
        )
