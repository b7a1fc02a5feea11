"""A checker for the exercises' numeric answers that never shows the answer.

A reader working through a chapter can ask whether a result is right, with the exercise's label and
the values in the order its statement asks for::

    from dpbook_book.classroom import check
    check("chNN-ex-name", [first_value, second_value])

The answer is not stored here: :func:`check` asks :func:`dpbook_book.exercises.compute` for it, which
runs the exercise's solution from the chapter (its one home), so the book's notebooks must be at
hand: a clone of the repository, the site's JupyterLite lab, or a folder named by the environment
variable ``DPBOOK_BOOK_DIR``.  A student given the student edition, without the solutions, is
graded instead by the chapter's otter-grader assignment (``tools/assignments.py``), whose hidden
tests call :func:`compare` with the answer written into the autograder.

The verdict names the tolerance, the expected number of values and, for a wrong answer, which
entries are off and by roughly how many tolerances (a band such as "between 2 and 5 tolerances"),
never the value nor whether it is too high or too low.  An example with a made-up answer (not one
of the book's)::

    >>> from dpbook_book.exercises import make_answer
    >>> demo = make_answer("demo-ex-pair", [2.0, 30.0], rel_tol=1e-2,
    ...                    expects=("the demo's first number", "the demo's second number"))
    >>> compare(demo, [2.001, 30.0]).correct
    True
    >>> print(compare(demo, [2.0, 40.0]).message)  # doctest: +NORMALIZE_WHITESPACE
    demo-ex-pair: not yet; 1 of 2 entries is outside 1% (relative) of dpbook's answer: entry 2 (the
    demo's second number) is off by between 20 and 50 tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpbook_book import exercises

__all__ = ["BANDS", "Verdict", "check", "compare", "form", "watch"]


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


def _values(name, value):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a number or a sequence of numbers, got {value!r}"
        ) from None
    return arr.ravel()


def compare(answer, value):
    """Whether ``value`` is within the tolerance of ``answer`` (an :class:`dpbook_book.exercises.Answer`).

    Returns a :class:`Verdict` whose message says whether the value is right, if the number of values
    is wrong how many are expected, and otherwise which entries are off (by position, and by name
    when the answer names its entries) and by how many tolerances, as a band (:data:`BANDS`): never
    the value, nor whether a value is too high or too low.
    """
    if not isinstance(answer, exercises.Answer):
        raise ValueError(
            f"answer must be a dpbook_book.exercises.Answer, got {type(answer).__name__}"
        )
    label = answer.label
    got = _values("value", value)
    want = np.asarray(answer.values, dtype=float)
    tol = answer.tolerance()
    if got.size != want.size:
        return Verdict(
            label,
            False,
            f"{label}: expected {want.size} number(s) ({answer.describe()}), got {got.size}.",
        )
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # distance in tolerances; the tolerance is > 0 (an answer of 0 has an abs_tol > 0)
        gap = np.abs(got - want)
        off = np.where(
            gap == 0,
            0.0,
            gap / np.maximum(answer.rel_tol * np.abs(want), answer.abs_tol),
        )
        off = np.where(np.isfinite(got), off, np.inf)
    bad = [i for i in range(want.size) if not off[i] <= 1.0]
    if not bad:
        return Verdict(
            label, True, f"{label}: correct, within {tol} of dpbook's answer."
        )
    how = [
        "is not a finite number"
        if not np.isfinite(got[i])
        else f"is off by {_band(off[i])}"
        for i in bad
    ]
    if want.size == 1:
        return Verdict(
            label,
            False,
            f"{label}: not yet; outside {tol} of dpbook's answer ({answer.describe()}): "
            f"it {how[0]}.",
        )
    named = isinstance(answer.expects, tuple) and len(answer.expects) == want.size
    return Verdict(
        label,
        False,
        f"{label}: not yet; {len(bad)} of {want.size} entries "
        f"{'is' if len(bad) == 1 else 'are'} outside {tol} of dpbook's answer"
        + ("" if named else f" ({answer.describe()})")
        + ": "
        + "; ".join(f"{answer.entry(i)} {h}" for i, h in zip(bad, how))
        + ".",
    )


def check(label, value, book=None):
    """Whether ``value`` is the right answer to exercise ``label``, without revealing the answer.

    Parameters
    ----------
    label : str
        The exercise's label, e.g. ``"ch02-ex-scale"``, printed in the exercise's statement.
    value : float or sequence of floats
        The student's answer, in the order the exercise asks for.
    book : path, optional
        The folder of the book's chapter notebooks (default: found by
        :func:`dpbook_book.exercises.find_book`).

    Returns
    -------
    Verdict
        True-ish when right; see :func:`compare` for what its message says.
    """
    return compare(exercises.compute(label, book), value)


# --- the assignments' tests: an answer's form, and the answer cells that crashed ------------------------

#: answer variables whose last assigning cell raised, in this kernel: name -> the error, in one line
_CRASHED: dict = {}


def _assigned_names(source):
    """The names a cell's code assigns at its top level (``x = ...``, ``x += ...``, ``a, b = ...``)."""
    import ast
    import re

    try:
        tree = ast.parse(
            "\n".join(
                "pass" if ln.lstrip().startswith(("%", "!")) else ln
                for ln in source.splitlines()
            )
        )
    except SyntaxError:
        return set(re.findall(r"^([A-Za-z_]\w*)\s*=", source, flags=re.M))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (
                node.targets if isinstance(node, ast.Assign) else [node.target]
            ):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _after_cell(result):
    """IPython's post_run_cell hook: remember the names a crashing cell meant to assign."""
    error = result.error_in_exec or result.error_before_exec
    names = _assigned_names(getattr(result.info, "raw_cell", "") or "")
    for name in names:
        if error is None:
            _CRASHED.pop(name, None)
        else:
            _CRASHED[name] = f"{type(error).__name__}: {error}".strip().splitlines()[0][
                :200
            ]


def watch():
    """Follow the cells run in this IPython kernel, so that :func:`form` reports an answer cell that raised
    as a crash rather than by the value it left behind (does nothing outside IPython; idempotent)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    ip = get_ipython()
    if ip is None:
        return False
    if _after_cell not in ip.events.callbacks.get("post_run_cell", []):
        ip.events.register("post_run_cell", _after_cell)
    return True


def form(label, name, value, n, describe):
    """What is wrong with the form of the answer ``value`` held by the variable ``name`` for exercise
    ``label`` (``n`` numbers: ``describe``), in one sentence, or None if nothing is.

    The assignments' public tests (``tools/assignments.py``) call it: it never looks at the answer's
    value, only at whether the answer cell ran, whether ``...`` was replaced, and how many finite
    numbers it holds.
    """
    if name in _CRASHED:
        return (
            f"{label}: the cell that assigns {name} raised an error ({_CRASHED[name]}); "
            f"fix it and run it again"
        )
    if value is ...:
        return f"{label}: replace the ... of {name} by your answer"
    try:
        arr = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        return f"{label}: {name} must be a number or a list of numbers ({describe}), got {type(value).__name__}"
    if arr.size != n:
        return f"{label}: expected {n} number(s) ({describe}), got {arr.size}"
    if not np.all(np.isfinite(arr)):
        return f"{label}: every entry must be a finite number"
    return None


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
