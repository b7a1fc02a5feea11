"""The student edition (tools/student_edition.py) and the answer checker (dpbook.classroom)."""

import functools
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from dpbook_book import classroom

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "student_edition.py"
BOOK = sorted(p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)

sys.path.insert(0, str(TOOL.parent))
import student_edition  # noqa: E402

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# 99. Test\n\nIntro text KEEP-INTRO."),
        code("x = 1\nprint('KEEP-CODE')", execution_count=3,
             outputs=[nbformat.v4.new_output("stream", name="stdout", text="KEEP-OUTPUT\n")]),
        md("```{exercise}\n:label: ch99-ex-a\n\nStatement KEEP-EX-A.\n```\n\n"
           "````{solution-start} ch99-ex-a\n:class: dropdown\n````\n\nSECRET-A-1 in the same cell."),
        code("print('SECRET-A-2')", outputs=[nbformat.v4.new_output("stream", name="stdout", text="SECRET-A-3\n")]),
        md("SECRET-A-4\n\n$$\nSECRET-A-5\n$$"),
        code("assert 'SECRET-A-6'"),
        md("SECRET-A-7\n````{solution-end}\n````\n\nAfter it KEEP-AFTER-A."),
        md("```{exercise}\n:label: ch99-ex-b\n\nStatement KEEP-EX-B.\n```\n\n"
           ":::::{solution-start} ch99-ex-b\n:class: dropdown\n:::::\nSECRET-B-1\n```{math}\nSECRET-B-2\n```\n"
           ":::::{solution-end}\n:::::\nKEEP-AFTER-B"),
        md("```{exercise}\n:label: ch99-ex-c\n\nStatement KEEP-EX-C.\n```\n\n"
           "````{solution} ch99-ex-c\n:class: dropdown\n\nSECRET-C-1\n```python\nSECRET-C-2\n```\n````\n\nKEEP-AFTER-C"),
        md("```{admonition} Summary\nKEEP-SUMMARY\n```"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _text(nb):
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(str(out))
    return "\n".join(parts)


def test_synthetic_notebook_loses_every_solution_and_keeps_the_rest():
    nb = _synthetic()
    student, labels = student_edition.student_notebook(nb)
    text = _text(student)
    assert labels == ["ch99-ex-a", "ch99-ex-b", "ch99-ex-c"]
    assert "SECRET" not in text
    for keep in ("KEEP-INTRO", "KEEP-CODE", "KEEP-EX-A", "KEEP-AFTER-A", "KEEP-EX-B", "KEEP-AFTER-B",
                 "KEEP-EX-C", "KEEP-AFTER-C", "KEEP-SUMMARY"):
        assert keep in text, keep
    assert "solution" not in text
    answers = [c for c in student.cells if "student-answer" in c.metadata.get("tags", [])]
    assert [c.cell_type for c in answers] == ["code"] * 3
    assert all(f"exercise {lab}" in c.source for c, lab in zip(answers, labels))
    assert all(c.outputs == [] and c.execution_count is None for c in student.cells if c.cell_type == "code")
    assert "KEEP-OUTPUT" in _text(nb) and "SECRET-A-1" in _text(nb)  # the input is untouched
    nbformat.validate(student)
    order = [i for i, c in enumerate(student.cells) if "KEEP-EX-A" in c.source or "ch99-ex-a here" in c.source
             or "KEEP-AFTER-A" in c.source]
    assert order == sorted(order) and len(order) == 3


def test_old_notebook_without_cell_ids():
    nb = _synthetic()
    nb.nbformat_minor = 4
    for cell in nb.cells:
        cell.pop("id", None)
    student, _ = student_edition.student_notebook(nb)
    nbformat.validate(student)
    assert len({c.id for c in student.cells}) == len(student.cells)


def test_unclosed_solution_is_an_error():
    nb = nbformat.v4.new_notebook()
    nb.cells = [md("````{solution-start} ch99-ex-x\n:class: dropdown\n````\n"), code("1")]
    with pytest.raises(ValueError, match="ch99-ex-x"):
        student_edition.student_notebook(nb)


def test_registered_exercise_gets_a_check_hint():
    nb = nbformat.v4.new_notebook()
    label = next(iter(classroom.ANSWERS))
    nb.cells = [md(f"```{{exercise}}\n:label: {label}\n\nQ.\n```\n\n````{{solution-start}} {label}\n:class: dropdown\n````"),
                code("print(42)"), md("````{solution-end}\n````")]
    student, _ = student_edition.student_notebook(nb)
    assert f"check({label!r}, your_answer)" in _text(student)


def _solution_lines(nb):
    """Independently of the tool: the substantive lines between solution-start and solution-end."""
    text = "\n<<cell>>\n".join(c.source for c in nb.cells)
    inside = re.findall(r"\{solution-start\}.*?\{solution-end\}", text, flags=re.S)
    outside = re.sub(r"\{solution-start\}.*?\{solution-end\}", "", text, flags=re.S)
    lines = {ln.strip() for block in inside for ln in block.splitlines()}
    return {ln for ln in lines if len(ln) > 25 and ln not in outside and "<<cell>>" not in ln}


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_command_on_the_real_book(tmp_path):
    run = subprocess.run([sys.executable, str(TOOL), "--out", str(tmp_path)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    for src in BOOK:
        nb = nbformat.read(src, as_version=4)
        dest = tmp_path / src.relative_to(ROOT)
        student = nbformat.read(dest, as_version=4)
        nbformat.validate(student)
        text = _text(student)
        assert "solution-start" not in text and "solution-end" not in text, src.name
        leaked = [ln for ln in _solution_lines(nb) if ln in text]
        assert not leaked, (src.name, leaked[:3])
        exercises = re.findall(r":label: (\S+)", "\n".join(
            c.source for c in nb.cells if c.cell_type == "markdown" and "{exercise}" in c.source))
        starts = sum(c.source.count("{solution-start}") for c in nb.cells)
        answers = [c for c in student.cells if "student-answer" in c.metadata.get("tags", [])]
        assert len(answers) == starts, src.name
        for label in exercises:
            assert f":label: {label}" in text, (src.name, label)
        assert all(not c.outputs and c.execution_count is None for c in student.cells if c.cell_type == "code")
        assert student.metadata.get("kernelspec", {}).get("name") == nb.metadata.get("kernelspec", {}).get("name")


def test_command_on_named_notebooks(tmp_path):
    src = tmp_path / "src" / "ch99.ipynb"
    src.parent.mkdir()
    nbformat.write(_synthetic(), src)
    out = tmp_path / "out"
    assert student_edition.main(["--out", str(out), str(src)]) == 0
    (dest,) = out.rglob("ch99.ipynb")
    assert "SECRET" not in dest.read_text() and "KEEP-EX-B" in dest.read_text()


# --- the checker ----------------------------------------------------------------------------------------


def _formats(x):
    x = float(x)
    return {f"{x:.{k}g}" for k in range(3, 10)} | {f"{x:.{k}f}" for k in range(2, 7)} | {repr(x)}


@pytest.mark.parametrize("label", sorted(classroom.ANSWERS))
def test_checker_accepts_right_rejects_wrong_and_keeps_the_secret(label):
    entry = classroom.ANSWERS[label]
    want = np.atleast_1d(np.asarray(entry.compute(), dtype=float))
    assert np.all(np.isfinite(want))
    right = classroom.check(label, want if want.size > 1 else want[0])
    assert right.correct and bool(right)
    inside = want * (1 + 0.5 * entry.rel_tol) + 0.5 * entry.abs_tol
    assert classroom.check(label, inside).correct
    outside = want * (1 + 3 * entry.rel_tol) + 3 * entry.abs_tol + (want == 0) * 3 * max(entry.abs_tol, 1e-12)
    wrong = classroom.check(label, outside)
    assert not wrong.correct
    assert not classroom.check(label, list(want) + [1.0]).correct
    for verdict in (right, wrong):
        for value in want:
            for s in _formats(value):
                if len(s.strip("0.-")) >= 2:
                    assert s not in verdict.message, (label, s, verdict.message)


# --- every registered answer against the book's own solution ----------------------------------------

#: exercises whose answer is a proof or prose (or has no single number), so not registered
NOT_NUMERIC = {
    "ch06-ex-small-eps": "two limits to prove; the budgets at which to check them are the reader's choice",
    "ch09-ex-sign": "where the proof uses φ ≥ 0, and a post-processing dpbook refuses",
    "ch09-ex-search": "an open-ended search, whose result depends on the optimizer and its budget",
    "ch13-ex-never-2b2": "a numerical demonstration over a grid of true values, no single number",
    "ch16-ex-bits": "which lowest bits occur, and why",
}

#: cheap cells defining notebook-local names that some solutions use, found by a line they contain
SETUP_CELLS = {
    "ch01": ("    brute_force_sensitivity,\n",),
    "ch04": ("EPSILON = 1.0", "lower = tuple("),
    "ch13": ("def show_decisions(",),
    "ch14": ("floor, ramp_star = ",),
}

#: label -> (code run before the solution's code cells, the answer as an expression in the solution's names)
FROM_SOLUTION = {
    "ch01-ex-calibrate": ("", "[b_mean, np.sqrt(dpbook.Laplace(b_mean).variance(0.0)), "
                              "b_var, np.sqrt(dpbook.Laplace(b_var).variance(0.0))]"),
    "ch01-ex-histogram": ("", "[brute_force_sensitivity(f, cells_, n, relation=r) for r in dpbook.RELATIONS "
                              "for f in (lambda d: d.mean(axis=1), lambda d: d.sum(axis=1) / n)]"),
    "ch01-ex-sd": ("", "[brute_force_sensitivity(sd, np.linspace(0, 1, 9), n, relation='add_remove') for n in (3, 4, 6)]"),
    "ch01-ex-tight": ("", "ratio"),
    "ch02-ex-one-sided": ("", "[t0, b0]"),
    "ch02-ex-ratio": ("", "[dpbook.BIT(1.0, lower=0.0, upper=w).bias(0.0) / dpbook.Truncated(1.0, lower=0.0, upper=w).bias(0.0) "
                          "for w in (0.1, 1.0, 10.0, 100.0)]"),
    "ch02-ex-vector": ("", "[b, eps_j, bit.bias(0.005)]"),
    "ch02-ex-scale": ("", "[dpbook.truncated_scale(e, 1.0) for e in (0.1, 1.0, 3.0)]"),
    "ch03-ex-bound": ("", "[m.mse(q) / 2.0 for m, q in ((dpbook.BIT(1.0, lower=0.0, upper=np.inf), 0.0), "
                          "(dpbook.BIT(1.0, lower=0.0, upper=np.inf), 3.0), (dpbook.Truncated(1.0, lower=0.0, upper=np.inf), 0.0))]"),
    "ch03-ex-rate": ("", "[np.log(laplace_mse(s(n2)) / laplace_mse(s(n1))) / np.log(n2 / n1) for s in "
                         "(lambda n: dpbook.variance_sensitivity(0.0, 1.0, n), lambda n: 1 / np.sqrt(n))]"),
    "ch03-ex-crossover": ("theta = 0.05", "[2 / (theta * (1 - theta) * e**2) for e in (1.0, 0.1)]"),
    "ch03-ex-shrinking": ("", "[dpbook.BIT(dpbook.laplace_scale(n**-a, dpbook.mean_sensitivity(0.0, 1.0, int(n))), "
                              "lower=0.0, upper=1.0).mse(0.3) for a in (0.5, 1.0) for n in (1e2, 1e4, 1e6)]"),
    "ch04-ex-maxvar": ("", "max(np.var([1.0] * k + [0.0] * (5 - k), ddof=1) for k in range(6))"),
    "ch04-ex-zero": ("", "[p_zero(100), n_min]"),
    "ch04-ex-psd": ("", "[np.linalg.eigvalsh(A).min(), np.linalg.norm(A - X)]"),
    "ch05-ex-tree": ("", "[leaf / 2, middle / 4]"),
    "ch05-ex-coverage": ("", "[dpbook.wald_coverage(0.05, n, mechanism=m) for m in "
                             "(None, dpbook.BIT(b, lower=0.0, upper=1.0), dpbook.Truncated(b, lower=0.0, upper=1.0))]"),
    "ch05-ex-ms": ("", "p * (1 - p) / n + tau2_avg"),
    "ch06-ex-ramp-decay": ("", "q_star"),
    "ch06-ex-fair": ("", "dpbook.Truncated(dpbook.truncated_scale(1.0, 1.0)).bias(0.0) "
                         "/ dpbook.BIT(dpbook.laplace_scale(1.0, 1.0)).bias(0.0)"),
    "ch07-ex-relbias": ("", "b_max * 1.0"),
    "ch07-ex-log1p": ("", "dpbook.relative_bias(b_sharp)"),
    "ch07-ex-mean-query": ("", "2 * K"),
    "ch08-ex-deriv": ("", "slope"),
    "ch08-ex-far": ("", "q_far"),
    "ch08-ex-mse": ("", "[m.mse(q) for q in (0.0, 5.0) for m in (clamp, shifted)]"),
    "ch09-ex-gauss": ("", "[gauss, lap]"),
    "ch10-ex-large-eps": ("", "[dpbook.privacy_loss(dpbook.Truncated(dpbook.laplace_scale(0.01, 1.0)), 1.0) / 0.01, "
                              "dpbook.privacy_loss(dpbook.Truncated(dpbook.laplace_scale(10.0, 1.0)), 1.0) - 10.0]"),
    "ch10-ex-width": ("", "[dpbook.privacy_report(dpbook.Truncated(1.0, lower=0.0, upper=w), 1.0).epsilon "
                          "for w in (1.0, 2.0, 3.0, 10.0)]"),
    "ch10-ex-cost": ("", "[x for e in (0.1, 0.5, 1.0, 2.0, 3.0) for x in ("
                         "dpbook.croft_uniform_scale(e, 1.0, [(0.0, np.inf)]) / dpbook.truncated_scale(e, 1.0), "
                         "dpbook.Truncated(dpbook.croft_uniform_scale(e, 1.0, [(0.0, np.inf)])).mse(0.0) "
                         "/ dpbook.Truncated(dpbook.truncated_scale(e, 1.0)).mse(0.0))]"),
    "ch11-ex-sigma1": ("", "[x for e in (0.1, 1.0, 3.0) for x in (dpbook.croft_boundary_scale(e, 1.0) * e, "
                           "dpbook.croft_scale(1.0 / e, e, 1.0) * e, "
                           "dpbook.croft_boundary_scale(e, 1.0) / dpbook.truncated_scale(e, 1.0))]"),
    "ch11-ex-crossing": ("", "[crossings[1.0], 1 - mech.cdf(crossings[1.0], 0.5), crossings[2.0]]"),
    "ch11-ex-far": ("", "[x for q in (0.0, 1.0, 3.0, 10.0) for x in (1 / mech.scale_at(q + 1.0) - 1 / mech.scale_at(q), "
                        "optimize.brentq(lambda x: dpbook.pair_loss(mech, q, q + 1.0, window=(0.0, x)) - 2.0, "
                        "q + 1.0, 1e7, xtol=1e-8))]"),
    "ch12-ex-p": ("", "[bound, p_left]"),
    "ch12-ex-exact": ("", "[exact, croft]"),
    "ch12-ex-width": ("", "[x for w in (1.0, 2.0, 5.0, 20.0) for x in "
                          "(dpbook.croft_uniform_scale(1.0, 1.0, [(0.0, w)]), dpbook.truncated_scale(1.0, 1.0, lower=0.0, upper=w))]"),
    "ch13-ex-budget": ("", "[r['truncated']['worst_bias'] / r['optimal']['worst_bias'] "
                           "for r in ({x['key']: x for x in compare_mechanisms(e, domain=HALF)} for e in (0.2, 3.0))]"),
    "ch13-ex-proportion": ("", "[trunc.scale, clamp.mechanism.mse(0.0), trunc.mechanism.mse(0.0), "
                               "clamp.mechanism.mse(0.5), trunc.mechanism.mse(0.5), factor]"),
    "ch14-ex-ramp": ("", "vr.value / b"),
    "ch14-ex-cheat": ("", "[cheat.objective / b, cheat.bias.value / b]"),
    "ch14-ex-floor": ("", "[dpbook.dp_bias_lower_bound(e, 1.0) * e for e in (0.01, 0.5, 2.0, 5.0)]"),
    "ch15-ex-folded": ("", "exact"),
    "ch15-ex-delta": ("", "[b, actual]"),
    "ch15-ex-pole": ("", "q_star"),
    "ch16-ex-split": ("", "totals"),
    "ch16-ex-grid": ("", "m.map(1.0)"),
    "ch17-ex-bit": ("", "[coverage_at_03, coverage_at_05]"),
    "ch17-ex-ramp": ("", "worst"),
    "ch17-ex-plan": ("", "epsilon"),
}


@functools.lru_cache(maxsize=None)
def _exercises():
    """Every exercise label of the book -> its notebook (labels of ``{exercise}`` directives only)."""
    found = {}
    for src in BOOK:
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for block in re.findall(r"\{exercise\}(.*?)\n\s*(?:`{3,}|:{3,})\s*$", cell.source, flags=re.S | re.M):
                    for label in re.findall(r"^:label:\s*(\S+)", block, flags=re.M):
                        assert label not in found, f"exercise label {label} is used twice"
                        found[label] = src
    return found


def _solution_cells(nb, label):
    """The code cells of the solution of exercise ``label`` (between its solution-start and solution-end)."""
    start, cells, inside = f"{{solution-start}} {label}", [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if start in cell.source:
                inside = True
                if "{solution-end}" in cell.source.split(start, 1)[1]:
                    break
            elif inside and "{solution-end}" in cell.source:
                break
        elif inside:
            cells.append(cell.source)
    return cells


def _run(code, ns):
    # IPython magics (%matplotlib, the Colab cell's %pip) become `pass`, keeping the indentation
    lines = [ln[: len(ln) - len(ln.lstrip())] + "pass" if ln.lstrip().startswith("%") else ln
             for ln in code.splitlines()]
    exec("\n".join(lines), ns)


@functools.lru_cache(maxsize=None)
def _from_solution(label):
    """The answer computed the way the book's solution computes it: the chapter's imports, the cheap cells it
    depends on, the solution's own code cells, then the expression of :data:`FROM_SOLUTION`."""
    src = _exercises()[label]
    nb = nbformat.read(src, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    solution = _solution_cells(nb, label)
    assert solution, f"the solution of {label} has no code cell"
    setup, expression = FROM_SOLUTION[label]
    ns = {"__name__": f"solution_{label}"}
    # the install cell (Colab) comes first, then the chapter's set-up cell
    for cell in code[:2] if code[0].startswith("# Colab or a fresh kernel") else code[:1]:
        _run(cell, ns)
    for needle in SETUP_CELLS.get(label[:4], ()):
        (cell,) = [c for c in code if needle in c]
        _run(cell, ns)
    _run(setup, ns)
    for cell in solution:
        _run(cell, ns)
    return np.atleast_1d(np.asarray(eval(expression, ns), dtype=float))


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_every_registered_label_is_an_exercise_of_the_book():
    missing = set(classroom.ANSWERS) - set(_exercises())
    assert not missing, f"registered answers with no {{exercise}} of that label in the book: {sorted(missing)}"


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_check_hints_in_the_book_name_their_own_registered_exercise():
    hinted = set()
    for src in BOOK:
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            for label, block in re.findall(r"\{exercise\}\s*\n:label:\s*(\S+)(.*?)\n\s*`{3,}\s*$", cell.source,
                                           flags=re.S | re.M):
                for named in re.findall(r"classroom\.check\(\s*[\"']([^\"']+)[\"']", block):
                    assert named == label and label in classroom.ANSWERS, (src.name, label, named)
                    hinted.add(label)
    unhinted = set(classroom.ANSWERS) - hinted
    assert not unhinted, f"registered exercises whose statement has no check hint: {sorted(unhinted)}"


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_every_exercise_is_registered_or_known_not_numeric():
    exercises = set(_exercises())
    unclassified = exercises - set(classroom.ANSWERS) - set(NOT_NUMERIC)
    assert not unclassified, (f"exercises neither registered in dpbook.classroom nor listed in NOT_NUMERIC: "
                              f"{sorted(unclassified)}")
    assert not set(NOT_NUMERIC) & set(classroom.ANSWERS)
    assert set(NOT_NUMERIC) <= exercises
    assert set(FROM_SOLUTION) == set(classroom.ANSWERS)


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
@pytest.mark.parametrize("label", sorted(classroom.ANSWERS))
def test_checker_agrees_with_the_books_solution(label):
    want = _from_solution(label)
    assert np.all(np.isfinite(want)), (label, want)
    right = classroom.check(label, want if want.size > 1 else want[0])
    assert right.correct, (label, right.message)
    wrong = classroom.check(label, want * 1.1 + 0.1)
    assert not wrong.correct, label
    other = classroom.check(label, want * 0.5 - 1.0)
    assert not other.correct and other.message == wrong.message  # the verdict does not depend on the value
    for verdict in (right, wrong):
        for value in want:
            for s in _formats(value):
                if len(s.strip("0.-")) >= 2:
                    assert s not in verdict.message, (label, s, verdict.message)


def test_registry_is_extensible_and_validated():
    label = "ch99-ex-test-registry"
    try:
        @classroom.answer(label, rel_tol=0.0, abs_tol=1e-6, expects="zero")
        def _():
            return 0.0

        assert classroom.check(label, 5e-7).correct
        assert not classroom.check(label, 2e-6).correct
        assert "1e-06 (absolute)" in classroom.check(label, 1.0).message
        with pytest.raises(ValueError, match="already registered"):
            classroom.register(label, lambda: 1.0)
    finally:
        classroom.ANSWERS.pop(label, None)
    with pytest.raises(ValueError, match="rel_tol"):
        classroom.register("ch99-x", lambda: 1.0, rel_tol=-1)
    with pytest.raises(ValueError, match="compute"):
        classroom.register("ch99-x", 3.0)
    with pytest.raises(ValueError, match="both be 0"):
        classroom.register("ch99-x", lambda: 1.0, rel_tol=0)
    assert "ch99-x" not in classroom.ANSWERS


def test_bad_input():
    with pytest.raises(ValueError, match="no-such-label"):
        classroom.check("no-such-label", 1.0)
    label = next(iter(classroom.ANSWERS))
    with pytest.raises(ValueError, match="value"):
        classroom.check(label, "abc")
    assert not classroom.check(label, np.nan).correct
