"""A checker for the exercises' numeric answers that never shows the answer.

The student edition of the book (``python tools/student_edition.py``) removes every solution.  For an
exercise whose answer is a number (or a few numbers), a student can still ask whether a result is
right, with the exercise's label and the values in the order its statement asks for::

    from dpbook_book.classroom import check
    check("chNN-ex-name", [first_value, second_value])

The answers are not stored as numbers: each exercise label maps to an :class:`Answer` holding a
function that recomputes the answer with dpbook when asked, and the tolerance within which a
student's value counts as right.  The verdict's message names the tolerance, the expected shape of
the answer and, for a wrong answer, which entries are off and by roughly how many tolerances
(a band such as "between 2 and 5 tolerances", never the value, nor whether it is too high or too
low).  An example with a made-up exercise (not one of the book's)::

    >>> from dpbook_book import classroom
    >>> _ = classroom.register("demo-ex-pair", lambda: [2.0, 30.0], rel_tol=1e-2,
    ...                        expects=("the demo's first number", "the demo's second number"))
    >>> classroom.check("demo-ex-pair", [2.001, 30.0]).correct
    True
    >>> print(classroom.check("demo-ex-pair", [2.0, 40.0]).message)  # doctest: +NORMALIZE_WHITESPACE
    demo-ex-pair: not yet; 1 of 2 entries is outside 1% (relative) of dpbook's answer: entry 2 (the
    demo's second number) is off by between 20 and 50 tolerances.
    >>> del classroom.ANSWERS["demo-ex-pair"]

Registering an exercise (chapter writers)
-----------------------------------------
Every exercise whose answer is a number or a few numbers is registered; one whose answer is a proof
or prose is not.  Add one entry per numeric exercise, in the chapter's section below, with the
decorator :func:`answer`: the label is the exercise's ``:label:``, the function takes no argument and
returns the answer computed with dpbook the way the chapter's solution computes it (a number or a
sequence of numbers, never a typed-in value), and ``expects`` tells the student what to submit and
in which order: one string, or one short name per entry (a tuple), which the verdict then uses to
name an entry that is off.  The shape of an entry (a made-up exercise)::

    @answer("ch99-ex-demo", rel_tol=5e-3, expects=("the variance at b = 2", "the sd at b = 2"))
    def _ch99_ex_demo():
        law = dpbook.Laplace(2.0)
        return [law.variance(0.0), math.sqrt(law.variance(0.0))]

The same can be done without a decorator, ``register("label", function, rel_tol=...)``, which is
what the decorator calls.  Choose the tolerance from what the exercise asks for: the default for the
book is ``rel_tol=5e-3`` (three significant digits), tighter (``1e-3``) where a coarser answer would
be a different answer (an integer, a value next to its limit); an answer that may be zero needs
``abs_tol``.  The function runs at the first check of its label in a session (the values are then
kept); keep it under a second or so.  It calls the library as the chapters do, ``dpbook.NAME``
(never from :mod:`dpbook.widgets`: nothing in the library imports the views).  Never write an
answer's value, nor its formula, in a docstring or in ``expects``: ``tests/test_classroom.py``
searches the installed packages and the student edition for every registered value.

Then end the exercise's statement with one line, ``You can check your result with
`dpbook_book.classroom.check("label", values)` (...)``, naming the values in order, and give
``tests/test_classroom.py`` the expression that reads the answer off the solution's own code
(``FROM_SOLUTION``): the test runs the solution and checks that the registered answer agrees.
Exercises that are not registered are listed there in ``NOT_NUMERIC`` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import dpbook

__all__ = ["ANSWERS", "Answer", "Verdict", "answer", "check", "register"]


@dataclass(frozen=True)
class Answer:
    """A registered numeric answer: how to compute it and how close a student's value must be.

    Attributes
    ----------
    compute : callable
        ``compute() -> float or sequence of floats``, the answer recomputed with dpbook.
    rel_tol, abs_tol : float
        A value ``v`` counts as right for the answer ``a`` when
        ``|v - a| <= max(rel_tol * |a|, abs_tol)``, entry by entry.
    expects : str or tuple of str
        What to submit (in words), shown to the student; never the value.  A tuple gives one short
        name per entry, in order; the verdict names an entry that is off by it.
    """

    compute: Callable
    rel_tol: float = 1e-3
    abs_tol: float = 0.0
    expects: str | tuple = "a number"

    def describe(self):
        """What to submit, as one string."""
        if isinstance(self.expects, tuple):
            return ", then ".join(self.expects)
        return self.expects

    def entry(self, i, n):
        """How the verdict names entry ``i`` (from 0) of an answer of ``n`` numbers."""
        name = f"entry {i + 1}"
        if isinstance(self.expects, tuple) and len(self.expects) == n:
            name += f" ({self.expects[i]})"
        return name

    def tolerance(self):
        """The tolerance in words, e.g. ``'0.1% (relative)'``."""
        parts = []
        if self.rel_tol > 0:
            parts.append(f"{100 * self.rel_tol:g}% (relative)")
        if self.abs_tol > 0:
            parts.append(f"{self.abs_tol:g} (absolute)")
        return " or ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check`: ``correct`` and a message that does not contain the answer."""

    label: str
    correct: bool
    message: str

    def __bool__(self):
        return self.correct

    def __repr__(self):
        return self.message

    def _repr_markdown_(self):
        return ("✅ " if self.correct else "❌ ") + self.message


#: every registered exercise, by label
ANSWERS: dict[str, Answer] = {}
#: answers already computed in this session: label -> (entry, values)
_COMPUTED: dict = {}


def register(label, compute, rel_tol=1e-3, abs_tol=0.0, expects="a number"):
    """Register the numeric answer of exercise ``label`` (see the module docstring); returns ``compute``.

    ``expects`` is a string, or a tuple (or list) of non-empty strings naming the entries in order.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    if not callable(compute):
        raise ValueError(f"compute must be a function of no argument, got {compute!r}")
    for name, tol in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {tol!r}")
    if rel_tol == 0 and abs_tol == 0:
        raise ValueError(f"rel_tol and abs_tol cannot both be 0 for {label!r}")
    if isinstance(expects, (list, tuple)):
        expects = tuple(expects)
        if not expects or not all(isinstance(e, str) and e for e in expects):
            raise ValueError(f"expects must be a string or a sequence of non-empty strings, got {expects!r}")
    elif not isinstance(expects, str) or not expects:
        raise ValueError(f"expects must be a string or a sequence of non-empty strings, got {expects!r}")
    if label in ANSWERS:
        raise ValueError(f"label {label!r} is already registered")
    ANSWERS[label] = Answer(compute, float(rel_tol), float(abs_tol), expects)
    return compute


def answer(label, rel_tol=1e-3, abs_tol=0.0, expects="a number"):
    """Decorator form of :func:`register`: ``@answer("ch99-ex-demo", rel_tol=5e-3)`` on a function."""

    def decorate(compute):
        return register(label, compute, rel_tol=rel_tol, abs_tol=abs_tol, expects=expects)

    return decorate


def _values(name, value):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a sequence of numbers, got {value!r}") from None
    return arr.ravel()


def check(label, value):
    """Whether ``value`` is the right answer to exercise ``label``, without revealing the answer.

    Parameters
    ----------
    label : str
        The exercise's label, e.g. ``"ch02-ex-scale"`` (see :data:`ANSWERS` for the registered ones).
    value : float or sequence of floats
        The student's answer, in the order the exercise asks for.

    Returns
    -------
    Verdict
        True-ish when right; its message says whether the answer is within the tolerance, if the
        number of values is wrong how many are expected, and otherwise which entries are off (by
        position, and by name when ``expects`` names the entries) and by how many tolerances, as a
        band (:data:`BANDS`): never the value, nor whether a value is too high or too low.
    """
    try:
        entry = ANSWERS[label]
    except (KeyError, TypeError):
        raise ValueError(f"label {label!r} has no registered numeric answer; known: {sorted(ANSWERS)}") from None
    got = _values("value", value)
    if label not in _COMPUTED or _COMPUTED[label][0] is not entry:
        _COMPUTED[label] = (entry, _values(f"the registered answer of {label}", entry.compute()))
    want = _COMPUTED[label][1]
    tol = entry.tolerance()
    if got.size != want.size:
        return Verdict(label, False, f"{label}: expected {want.size} number(s) ({entry.describe()}), got {got.size}.")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # distance in tolerances; tol > 0 (abs_tol > 0 is required for an answer that may be 0)
        gap = np.abs(got - want)
        off = np.where(gap == 0, 0.0, gap / np.maximum(entry.rel_tol * np.abs(want), entry.abs_tol))
        off = np.where(np.isfinite(got), off, np.inf)
    bad = [i for i in range(want.size) if not off[i] <= 1.0]
    if not bad:
        return Verdict(label, True, f"{label}: correct, within {tol} of dpbook's answer.")
    how = ["is not a finite number" if not np.isfinite(got[i]) else f"is off by {_band(off[i])}" for i in bad]
    if want.size == 1:
        return Verdict(label, False, f"{label}: not yet; outside {tol} of dpbook's answer ({entry.describe()}): "
                                     f"it {how[0]}.")
    named = isinstance(entry.expects, tuple) and len(entry.expects) == want.size
    return Verdict(label, False, f"{label}: not yet; {len(bad)} of {want.size} entries "
                                 f"{'is' if len(bad) == 1 else 'are'} outside {tol} of dpbook's answer"
                                 + ("" if named else f" ({entry.describe()})") + ": "
                                 + "; ".join(f"{entry.entry(i, want.size)} {h}" for i, h in zip(bad, how)) + ".")


#: the bands in which a verdict places a wrong entry's distance from the answer, in tolerances: a
#: precise distance would give the answer away (two candidates, value ± distance), a band only says
#: whether the slip is in the last digits or in the method (a factor, a unit, a wrong formula)
BANDS = (1, 2, 5, 10, 20, 50, 100, 1000)


def _band(x):
    """``x`` tolerances (x > 1) as a band of :data:`BANDS`, e.g. 'between 2 and 5 tolerances'."""
    for lo, hi in zip(BANDS, BANDS[1:]):
        if x <= hi:
            return f"between {lo} and {hi} tolerances"
    return f"more than {BANDS[-1]} tolerances"


# --- Part I ----------------------------------------------------------------------------------------


@answer("ch01-ex-calibrate", rel_tol=5e-3,
        expects=("the scale b of the mean (n = 1000, [0, 200], ε = 0.5)", "the sd of the released mean", "the scale b of the variance", "the sd of the released variance"))
def _ch01_ex_calibrate():
    n, lo, hi, eps = 1000, 0.0, 200.0, 0.5
    out = []
    for sensitivity in (dpbook.mean_sensitivity(lo, hi, n), dpbook.variance_sensitivity(lo, hi, n)):
        b = dpbook.laplace_scale(eps, sensitivity)
        out += [b, math.sqrt(dpbook.Laplace(b).variance(0.0))]
    return out


@answer("ch01-ex-histogram", rel_tol=1e-3,
        expects=("the ℓ1 sensitivity for n = 4 under substitution with each data set's own size", "under substitution with the public n", "under add/remove with own size", "under add/remove with the public n"))
def _ch01_ex_histogram():
    n, cells = 4, np.eye(3)
    statistics = (lambda d: d.mean(axis=1), lambda d: d.sum(axis=1) / n)
    return [dpbook.brute_force_sensitivity(f, cells, n, relation=relation) for relation in dpbook.RELATIONS
            for f in statistics]


@answer("ch01-ex-sd", rel_tol=1e-3,
        expects=("the sensitivity of the sample sd of records in [0, 1] for n = 3", "for n = 4", "for n = 6"))
def _ch01_ex_sd():
    def sd(d):
        return np.sqrt(dpbook.sample_variance(d))

    return [dpbook.brute_force_sensitivity(sd, np.linspace(0.0, 1.0, 9), n) for n in (3, 4, 6)]


@answer("ch01-ex-tight", rel_tol=1e-3,
        expects="the probability ratio P(q' + L_b ∈ S) / P(q + L_b ∈ S) of a violating event for ε = Δ = 1, b = 0.8")
def _ch01_ex_tight():
    lap, t = dpbook.Laplace(0.8), 3.0
    return (1 - lap.cdf(t, 1.0)) / (1 - lap.cdf(t, 0.0))


@answer("ch02-ex-one-sided", rel_tol=1e-3,
        expects=("the bias of truncation to [l, ∞) at q = l with b = 1", "the bias of BIT on [l, ∞) there"))
def _ch02_ex_one_sided():
    return [dpbook.Truncated(1.0, lower=0.0, upper=np.inf).bias(0.0), dpbook.BIT(1.0, lower=0.0, upper=np.inf).bias(0.0)]


@answer("ch02-ex-ratio", rel_tol=5e-3,
        expects=("the ratio BIT bias / truncated bias at q = l for w/b = 0.1", "for w/b = 1", "for w/b = 10", "for w/b = 100"))
def _ch02_ex_ratio():
    return [dpbook.BIT(1.0, lower=0.0, upper=w).bias(0.0) / dpbook.Truncated(1.0, lower=0.0, upper=w).bias(0.0) for w in (0.1, 1.0, 10.0, 100.0)]


@answer("ch02-ex-vector", rel_tol=5e-3,
        expects=("the common scale b", "the budget each coordinate spends", "the BIT bias at q = 0.005"))
def _ch02_ex_vector():
    n, eps = 400, 1.0
    b = dpbook.laplace_scale(eps, dpbook.histogram_sensitivity(n, relation="substitution"))
    bit = dpbook.BIT(b, lower=0.0, upper=1.0)
    return [b, dpbook.privacy_loss(bit, dpbook.proportion_sensitivity(n)), bit.bias(0.005)]


@answer("ch02-ex-scale", rel_tol=5e-3,
        expects=("the smallest ε-DP scale of one-sided truncation with Δ = 1 for ε = 0.1", "for ε = 1", "for ε = 3"))
def _ch02_ex_scale():
    return [dpbook.truncated_scale(eps, 1.0) for eps in (0.1, 1.0, 3.0)]


@answer("ch03-ex-bound", rel_tol=5e-3,
        expects=("MSE / 2b² for BIT on [l, ∞) at q = l", "for BIT at q = l + 3b", "for truncation at q = l"))
def _ch03_ex_bound():
    bit, trunc = dpbook.BIT(1.0, lower=0.0, upper=np.inf), dpbook.Truncated(1.0, lower=0.0, upper=np.inf)
    return [bit.mse(0.0) / 2.0, bit.mse(3.0) / 2.0, trunc.mse(0.0) / 2.0]


@answer("ch03-ex-rate", rel_tol=5e-3,
        expects=("the slope of log MSE against log n between n = 10³ and 10⁴ (ε = 1) for the variance", "for the standard deviation"))
def _ch03_ex_rate():
    def laplace_mse(sensitivity):
        return dpbook.Laplace(dpbook.laplace_scale(1.0, sensitivity)).mse(0.0)

    def sd_sensitivity(n):
        return math.sqrt(dpbook.variance_sensitivity(0.0, 1.0, n))

    n1, n2 = 1_000, 10_000
    return [math.log(laplace_mse(sens(n2)) / laplace_mse(sens(n1))) / math.log(n2 / n1)
            for sens in (lambda n: dpbook.variance_sensitivity(0.0, 1.0, n), sd_sensitivity)]


@answer("ch03-ex-crossover", rel_tol=5e-3,
        expects=("the crossover n* (not rounded) for θ = 0.05 at ε = 1", "at ε = 0.1"))
def _ch03_ex_crossover():
    theta = 0.05
    # 2b² = 2/(nε)² = mse(n = 1)/n², equal to θ(1-θ)/n at n = mse(n = 1)/(θ(1-θ))
    return [dpbook.Laplace(dpbook.laplace_scale(eps, dpbook.mean_sensitivity(0.0, 1.0, 1))).mse(0.0) / (theta * (1 - theta))
            for eps in (1.0, 0.1)]


@answer("ch03-ex-shrinking", rel_tol=5e-3,
        expects=("the BIT MSE at q = 0.3 for a = 1/2 at n = 10²", "a = 1/2, n = 10⁴", "a = 1/2, n = 10⁶", "a = 1, n = 10²", "a = 1, n = 10⁴", "a = 1, n = 10⁶"))
def _ch03_ex_shrinking():
    return [dpbook.BIT(dpbook.laplace_scale(n**-a, dpbook.mean_sensitivity(0.0, 1.0, n)), lower=0.0, upper=1.0).mse(0.3)
            for a in (0.5, 1.0) for n in (10**2, 10**4, 10**6)]


@answer("ch04-ex-maxvar", rel_tol=1e-3, expects="the largest sample variance of n = 5 records in [0, 1]")
def _ch04_ex_maxvar():
    return dpbook.max_sample_variance(0.0, 1.0, 5)


@answer("ch04-ex-zero", rel_tol=1e-3,
        expects=("the probability that BIT releases s̃₁² = 0 at n = 100", "the smallest n at which it is below 1%"))
def _ch04_ex_zero():
    from .data import COVARIANCE_SETTINGS as settings

    lo, hi = -settings["bound"] * settings["sd"][0], settings["bound"] * settings["sd"][0]
    epsilon = 1.0  # the chapter's budget, a third of it per released entry

    def p_zero(n):
        b = dpbook.variance_sensitivity(lo, hi, n) / (epsilon / 3)
        return dpbook.BIT(b, lower=0.0, upper=dpbook.max_sample_variance(lo, hi, n)).pmf(0.0, 1.0)

    return [p_zero(100), next(n for n in range(2, 5000) if p_zero(n) < 0.01)]


@answer("ch04-ex-psd", rel_tol=5e-3,
        expects=("the smallest eigenvalue of the given matrix", "the Frobenius distance to its nearest correlation matrix"))
def _ch04_ex_psd():
    a = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, -0.9], [0.9, -0.9, 1.0]])
    return [float(np.linalg.eigvalsh(a).min()), float(np.linalg.norm(a - dpbook.nearest_correlation(a)))]


@answer("ch05-ex-tree", rel_tol=5e-3,
        expects=("the factor (tree / direct) for a leaf", "for the middle node π₁ + π₂ against the sum of two cells"))
def _ch05_ex_tree():
    c = dpbook.consistent_tree_covariance(2, 3, root_known=True)
    doubled = dpbook.Laplace(2.0).variance(0.0)  # scale 2b with b = 1
    direct = dpbook.Laplace(1.0).variance(0.0)
    return [c[3, 3] * doubled / direct, c[1, 1] * doubled / (2 * direct)]


@answer("ch05-ex-coverage", rel_tol=5e-3,
        expects=("the coverage of the 95% plug-in interval from the original proportion", "from its BIT release", "from its truncated release"))
def _ch05_ex_coverage():
    n, eps = 100, 0.5
    b = dpbook.histogram_sensitivity(n) / eps
    return [dpbook.wald_coverage(0.05, n, mechanism=m) for m in (None, dpbook.BIT(b, lower=0.0, upper=1.0), dpbook.Truncated(b, lower=0.0, upper=1.0))]


@answer("ch05-ex-ms", rel_tol=5e-3, expects="the combined variance T for π = 0.3, n = 500, ε = 0.5, m = 5")
def _ch05_ex_ms():
    p, n, eps, m = 0.3, 500, 0.5, 5
    bm = dpbook.laplace_scale(eps / m, dpbook.histogram_sensitivity(n))
    return p * (1 - p) / n + dpbook.Laplace(bm).variance(0.0) / m


# --- Part II ---------------------------------------------------------------------------------------


@answer("ch06-ex-ramp-decay", rel_tol=1e-3, expects="the true value q, in units of b, from which the bias is below 0.01 b")
def _ch06_ex_ramp_decay():
    from scipy import optimize

    return optimize.brentq(lambda q: dpbook.BIT(1.0).bias(q) - 0.01, 0.0, 50.0, xtol=1e-14)


@answer("ch06-ex-fair", rel_tol=5e-3,
        expects="the ratio of the restricted bias at the smallest ε-DP scale to the clamping bias at Δ/ε, "
                "both at q = 0, for ε = 1")
def _ch06_ex_fair():
    restricted = dpbook.Truncated(dpbook.truncated_scale(1.0, 1.0)).bias(0.0)
    return restricted / dpbook.BIT(dpbook.laplace_scale(1.0, 1.0)).bias(0.0)


@answer("ch07-ex-relbias", rel_tol=1e-3, expects="the largest K at ε = 1 for a relative bias below 1%")
def _ch07_ex_relbias():
    from scipy import optimize

    eps = 1.0
    return eps * optimize.brentq(lambda b: dpbook.relative_bias(b) - 0.01, 1e-6, 0.99, xtol=1e-15)


@answer("ch07-ex-log1p", rel_tol=5e-3, expects="the relative bias at ε = 1, K = 1.5 with the scale ln(1 + K)/ε")
def _ch07_ex_log1p():
    eps, k = 1.0, 1.5
    return dpbook.relative_bias(math.log1p(k) / eps)


@answer("ch07-ex-mean-query", rel_tol=1e-3,
        expects="the threshold ε₀ for n = 100, γ₀ = 0.01: the variance is finite exactly when ε > ε₀")
def _ch07_ex_mean_query():
    from scipy import optimize

    n, g0 = 100, 0.01
    d, d_adj = np.full(n, g0), np.r_[1.0, np.full(n - 1, g0)]
    k = abs(d.mean() - d_adj.mean()) / min(d.mean(), d_adj.mean())

    def finite(eps):
        return 1.0 if np.isfinite(dpbook.LogLaplace(dpbook.log_laplace_scale(eps, k)).variance(1.0)) else -1.0

    return optimize.brentq(finite, k, 10 * k, xtol=1e-12)


@answer("ch08-ex-deriv", rel_tol=5e-3, expects="G'(α*) at q = 0 for b = 1 (a signed number)")
def _ch08_ex_deriv():
    a, h = dpbook.optimal_ramp_shift(1.0), 1e-6
    return (dpbook.TranslatedRamp(1.0, a + h).mean(0.0) - dpbook.TranslatedRamp(1.0, a - h).mean(0.0)) / (2 * h)


@answer("ch08-ex-far", rel_tol=1e-3,
        expects="the true value q, in units of b, from which the optimal ramp's bias is within 0.01 b of -α*")
def _ch08_ex_far():
    from scipy import optimize

    a = dpbook.optimal_ramp_shift(1.0)
    mech = dpbook.TranslatedRamp(1.0, a)
    return optimize.brentq(lambda q: mech.bias(q) + a - 0.01, a, 50.0, xtol=1e-14)


@answer("ch08-ex-mse", rel_tol=5e-3,
        expects=("clamping's MSE at q = 0, in units of b²", "the optimal translated ramp's MSE at q = 0", "clamping's MSE at q = 5b", "the ramp's MSE at q = 5b"))
def _ch08_ex_mse():
    clamp, shifted = dpbook.BIT(1.0), dpbook.TranslatedRamp(1.0, dpbook.optimal_ramp_shift(1.0))
    return [m.mse(q) for q in (0.0, 5.0) for m in (clamp, shifted)]


@answer("ch09-ex-gauss", rel_tol=5e-3,
        expects=("the bias at q = 0 of the restricted Gaussian, in units of σ", "of the restricted Laplace of equal variance"))
def _ch09_ex_gauss():
    from scipy import stats

    sigma = 1.0
    return [dpbook.Restricted(stats.norm(scale=sigma)).bias(0.0),
            dpbook.Restricted(stats.laplace(scale=sigma / math.sqrt(2))).bias(0.0)]


# --- Part III --------------------------------------------------------------------------------------


@answer("ch10-ex-large-eps", rel_tol=1e-3,
        expects=("the ratio ε'/ε of truncation at b = Δ/ε for ε = 0.01", "the excess ε' - ε for ε = 10"))
def _ch10_ex_large_eps():
    def loss(eps):
        return dpbook.privacy_loss(dpbook.Truncated(dpbook.laplace_scale(eps, 1.0)), 1.0)

    return [loss(0.01) / 0.01, loss(10.0) - 10.0]


@answer("ch10-ex-width", rel_tol=1e-3,
        expects=("the exact loss of truncation to [0, wΔ] at b = Δ/ε = 1 for w = 1", "for w = 2", "for w = 3", "for w = 10"))
def _ch10_ex_width():
    return [dpbook.privacy_loss(dpbook.Truncated(1.0, lower=0.0, upper=w), 1.0) for w in (1.0, 2.0, 3.0, 10.0)]


@answer("ch10-ex-cost", rel_tol=5e-3,
        expects=tuple(f"the {what} at ε = {eps}" for eps in ("0.1", "0.5", "1", "2", "3") for what in ("scale ratio b_Croft/b*", "MSE ratio at q = 0")))
def _ch10_ex_cost():
    out = []
    for eps in (0.1, 0.5, 1.0, 2.0, 3.0):
        b_star = dpbook.truncated_scale(eps, 1.0)
        b_croft = dpbook.croft_uniform_scale(eps, 1.0, [(0.0, np.inf)])
        out += [b_croft / b_star, dpbook.Truncated(b_croft).mse(0.0) / dpbook.Truncated(b_star).mse(0.0)]
    return out


@answer("ch11-ex-sigma1", rel_tol=5e-3,
        expects=tuple(f"{what} for ε = {eps}" for eps in ("0.1", "1", "3") for what in ("σ₁ in units of Δ/ε", "the scale at the branch switch in units of Δ/ε", "the ratio σ₁/b*")))
def _ch11_ex_sigma1():
    out = []
    for eps in (0.1, 1.0, 3.0):
        s1 = dpbook.croft_boundary_scale(eps, 1.0)
        out += [s1 * eps, dpbook.croft_scale(1.0 / eps, eps, 1.0) * eps, s1 / dpbook.truncated_scale(eps, 1.0)]
    return out


@answer("ch11-ex-crossing", rel_tol=5e-3,
        expects=("the output x* where the log-ratio exceeds ε", "P(M(0.5) > x*)", "the output where the log-ratio exceeds 2ε"))
def _ch11_ex_crossing():
    from scipy import optimize

    mech = dpbook.CroftLaplace(1.0, 1.0)
    x1, x2 = (optimize.brentq(lambda x: mech.logpdf(x, 0.5) - mech.logpdf(x, 1.5) - level, 1.5, 200.0, xtol=1e-10)
              for level in (1.0, 2.0))
    return [x1, 1 - mech.cdf(x1, 0.5), x2]


@answer("ch11-ex-far", rel_tol=5e-3,
        expects=tuple(f"{what} for q = {q}" for q in ("0", "1", "3", "10") for what in ("the slope 1/σ(q + Δ) - 1/σ(q)", "the output where the log-ratio reaches 2ε")))
def _ch11_ex_far():
    from scipy import optimize

    mech = dpbook.CroftLaplace(1.0, 1.0)
    out = []
    for q in (0.0, 1.0, 3.0, 10.0):
        out.append(1 / mech.scale_at(q + 1.0) - 1 / mech.scale_at(q))
        out.append(optimize.brentq(lambda x: dpbook.pair_loss(mech, q, q + 1.0, window=(0.0, x)) - 2.0,
                                   q + 1.0, 1e7, xtol=1e-8))
    return out


@answer("ch12-ex-p", rel_tol=5e-3, expects=("Lemma 7's bound at day 195, in days", "P(M(195) ≤ 195)"))
def _ch12_ex_p():
    from .data import CLINIC

    eps, delta = 1.0, 7.0
    bound = next(b for lemma, form, loc, b in dpbook.croft_lower_bounds(eps, delta, CLINIC)
                 if loc == 195.0 and form == "regular")
    return [bound, dpbook.Normalized(bound, CLINIC).cdf(195.0, 195.0)]


@answer("ch12-ex-exact", rel_tol=5e-3,
        expects=("the smallest exactly ε-DP uniform scale of the clinic release, in days", "Croft's uniform scale, in days"))
def _ch12_ex_exact():
    from scipy import optimize

    from .data import CLINIC

    eps, delta = 1.0, 7.0
    unit = delta / eps
    exact = optimize.brentq(lambda s: dpbook.privacy_loss(dpbook.Normalized(s, CLINIC), delta) - eps,
                            unit, 2 * unit, xtol=1e-9)
    return [exact, dpbook.croft_uniform_scale(eps, delta, CLINIC)]


@answer("ch12-ex-width", rel_tol=5e-3,
        expects=tuple(f"{what} for w = {w} (Δ = ε = 1)" for w in ("1", "2", "5", "20") for what in ("Croft's uniform scale", "the smallest exactly ε-DP truncation scale")))
def _ch12_ex_width():
    return [s for w in (1.0, 2.0, 5.0, 20.0)
            for s in (dpbook.croft_uniform_scale(1.0, 1.0, [(0.0, w)]), dpbook.truncated_scale(1.0, 1.0, lower=0.0, upper=w))]


# --- Part IV ---------------------------------------------------------------------------------------


@answer("ch13-ex-budget", rel_tol=5e-3,
        expects=("calibrated truncation's worst-case bias divided by φ*'s on [0, ∞) at ε = 0.2", "at ε = 3"))
def _ch13_ex_budget():
    from .choosing import compare_mechanisms

    out = []
    for eps in (0.2, 3.0):
        rows = {r["key"]: r for r in compare_mechanisms(eps, domain="count")}
        out.append(rows["truncated"]["worst_bias"] / rows["optimal"]["worst_bias"])
    return out


@answer("ch13-ex-proportion", rel_tol=5e-3,
        expects=("the calibrated truncation scale", "clamping's MSE at q = 0", "truncation's MSE at q = 0", "clamping's MSE at q = 0.5", "truncation's MSE at q = 0.5", "the factor in records"))
def _ch13_ex_proportion():
    from .choosing import calibrated_mechanisms

    cands = {c.key: c for c in calibrated_mechanisms(1.0, 0.01, "proportion")}
    clamp, trunc = cands["clamping"].mechanism, cands["truncated"]
    mses = [m.mse(q) for q in (0.0, 0.5) for m in (clamp, trunc.mechanism)]
    return [trunc.scale, *mses, math.sqrt(mses[1] / mses[0])]


@answer("ch14-ex-ramp", rel_tol=1e-3, expects="the verified worst-case bias of the translated ramp at α*, in units of b")
def _ch14_ex_ramp():
    b = 1.0
    a = dpbook.optimal_ramp_shift(b)
    return dpbook.verify_bias(dpbook.StepPostProcessed(b, edges=[a], values=[0.0], shift=a), step=b / 1000).value


@answer("ch14-ex-cheat", rel_tol=5e-3,
        expects=("the program's objective with h = b (tame=None), in units of b", "the verified worst-case bias"))
def _ch14_ex_cheat():
    cheat = dpbook.min_bias_postprocessing(scale=1.0, x_range=(-10.0, 20.0), cell=0.25, q_max=40.0, q_step=1.0, tame=None)
    return [cheat.objective, cheat.bias.value]


@answer("ch14-ex-floor", rel_tol=1e-3, expects=("the floor in units of Δ/ε at ε = 0.01", "at ε = 0.5", "at ε = 2", "at ε = 5"))
def _ch14_ex_floor():
    return [dpbook.dp_bias_lower_bound(eps, 1.0) * eps for eps in (0.01, 0.5, 2.0, 5.0)]


@answer("ch15-ex-folded", rel_tol=5e-3, expects="the bias of folding on [0, ∞) at q = 0.5, b = 1")
def _ch15_ex_folded():
    from dpbook.clamping import BIT

    return 2 * BIT(1.0, lower=0.0, upper=np.inf).bias(0.5)


@answer("ch15-ex-delta", rel_tol=5e-3,
        expects=("the scale LaplaceTruncated's sampler uses", "the actual bias at q = 0"))
def _ch15_ex_delta():
    from diffprivlib.mechanisms import LaplaceTruncated

    from dpbook.clamping import BIT
    from .peers import peer_scale

    b = peer_scale(LaplaceTruncated(epsilon=1.0, delta=0.3, sensitivity=1.0, lower=0.0, upper=10.0))
    return [b, BIT(b, lower=0.0, upper=10.0).bias(0.0)]


@answer("ch15-ex-pole", rel_tol=0.0, abs_tol=2e-3,
        expects="the true value q* < 0 where LaplaceBoundedDomain.bias has its pole, for [0, 4], ε = 1 and Δ = 1")
def _ch15_ex_pole():
    from diffprivlib.mechanisms import LaplaceBoundedDomain
    from scipy import optimize

    from .peers import peer_property, peer_scale

    mech = LaplaceBoundedDomain(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=4.0)
    b = peer_scale(mech)
    grid = np.linspace(-2 * b, -0.1 * b, 4001)
    i = int(np.argmax(np.abs(peer_property(mech, "bias", grid))))
    return optimize.brentq(lambda q: 1 / peer_property(mech, "bias", q), grid[i - 1], grid[i + 1], xtol=1e-14)


@answer("ch16-ex-split", rel_tol=1e-3,
        expects=("the total Laplace variance under the proportional split", "under the 2/3 split"))
def _ch16_ex_split():
    from dpbook import Laplace, laplace_scale
    from dpbook import budget_split

    deltas = [1.0, 8.0]
    return [sum(Laplace(laplace_scale(e, d)).variance(0.0) for e, d in zip(budget_split(1.0, deltas, power=p), deltas))
            for p in (1.0, 2 / 3)]


@answer("ch16-ex-grid", rel_tol=1e-9, expects="the ε OpenDP reports for d_in = 1")
def _ch16_ex_grid():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    m = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=2.0, k=-4)
    return m.map(1.0)


@answer("ch17-ex-bit", rel_tol=1e-3, expects=("the exact coverage at q = 0.3", "at q = 0.5"))
def _ch17_ex_bit():
    from dpbook import BIT, confidence_interval, interval_coverage

    mech = BIT(0.2, lower=0.0, upper=1.0)
    return list(interval_coverage(mech, lambda x: confidence_interval(mech, x, 0.9), [0.3, 0.5]))


@answer("ch17-ex-ramp", rel_tol=1e-3, expects="the worst exact coverage over q in [0, 12]")
def _ch17_ex_ramp():
    import numpy as np

    from dpbook import TranslatedRamp, clipped_laplace_interval, interval_coverage, optimal_ramp_shift

    ramp = TranslatedRamp(1.0, optimal_ramp_shift(1.0))
    q = np.linspace(0.0, 12.0, 241)
    return float(interval_coverage(ramp, lambda x: clipped_laplace_interval(x, 1.0, 0.95, lower=0.0), q).min())


@answer("ch17-ex-plan", rel_tol=1e-3, expects="the smallest ε")
def _ch17_ex_plan():
    import math

    return 2 * math.log(20) / 10


@answer("ch18-ex-var", rel_tol=1e-3, expects="the discrete Laplace variance at b = 1, then at b = 10")
def _ch18_ex_var():
    from dpbook import DiscreteLaplace

    return [DiscreteLaplace(b).variance(0) for b in (1.0, 10.0)]


@answer("ch18-ex-eps", rel_tol=1e-3,
        expects="the exact loss of conditioning a count on {0, 1, ...} at b = 1/ε, for ε = 0.5, 1, 2")
def _ch18_ex_eps():
    from dpbook import discrete_truncated_epsilon

    return [discrete_truncated_epsilon(1 / e, lower=0) for e in (0.5, 1.0, 2.0)]


@answer("ch18-ex-round", rel_tol=1e-3,
        expects="the bias at q = 0 of clamping the discrete release, then of the rounded continuous one")
def _ch18_ex_round():
    import math

    a = math.exp(-1.0)
    return [a / (1 - a**2), math.sinh(0.5) * a / (1 - a) ** 2]


@answer("ch18-ex-folded", rel_tol=1e-3, expects="the exact bias of GeometricFolded at q = 0")
def _ch18_ex_folded():
    import numpy as np

    from .peers import folded_law

    support, pmf, _ = folded_law(1.0, 0, 0, 10)
    return float(np.sum(support * pmf))


@answer("ch20-ex-clamp", rel_tol=1e-3,
        expects="the worst-case bias of clamping at ε = 1, then the least worst-case bias B*")
def _ch20_ex_clamp():
    from dpbook import CountPostProcessed, least_count_bias, verify_count_bias

    return [verify_count_bias(CountPostProcessed(1.0, [0.0], 0.0)).value, least_count_bias(1.0).value]


@answer("ch20-ex-rules", rel_tol=1e-3, abs_tol=1e-4,
        expects="the threshold s, then the shift d, of the optimal plain rule with the smallest |d| at b = 5")
def _ch20_ex_rules():
    from dpbook import optimal_count_threshold_rules

    rule = min(optimal_count_threshold_rules(5.0), key=lambda r: abs(r.shift))
    return [rule.window, rule.shift]


@answer("ch20-ex-total", rel_tol=1e-3, abs_tol=1e-6,
        expects="the bias of the total clamped area by area, then of the clamped sum")
def _ch20_ex_total():
    from dpbook import DiscreteBIT, clamped_sum_bias

    areas = np.repeat(np.arange(5), 50)
    return [float(np.sum(DiscreteBIT(1.0, lower=0).bias(areas))), clamped_sum_bias(1.0, int(areas.sum()), areas.size)]


@answer("ch19-ex-rr", rel_tol=1e-3, expects="the program's optimum for n = 1, uniform prior, 0-1 loss, ε = 1")
def _ch19_ex_rr():
    from dpbook import optimal_count_mechanism, zero_one_loss

    return optimal_count_mechanism(1, 1.0, prior=[0.5, 0.5], loss=zero_one_loss).value


@answer("ch19-ex-remap", rel_tol=1e-3,
        expects="the expected loss of the absolute-error user, then of the squared-error user")
def _ch19_ex_remap():
    from dpbook import absolute_loss, remapped_geometric, squared_loss

    prior = np.full(11, 1 / 11)
    return [remapped_geometric(10, 1.0, prior=prior, loss=loss).value for loss in (absolute_loss, squared_loss)]


@answer("ch19-ex-worst", rel_tol=1e-3,
        expects="the worst risk over the true counts of GRS's mechanism, then of the clamped release")
def _ch19_ex_worst():
    from dpbook import absolute_loss, remapped_geometric

    prior = np.zeros(11)
    prior[3] = 1.0
    grs = remapped_geometric(10, 1.0, prior=prior, loss=absolute_loss)
    losses = absolute_loss(np.arange(11)[:, None], np.arange(11)[None, :])
    return [float(np.sum(m * losses, axis=1).max()) for m in (grs.matrix, grs.geometric)]
