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


def test_student_edition_dependency_is_declared():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(r"nbformat\b", dep) for dep in extras["book"]), extras["book"]
    pins = (ROOT / "requirements.txt").read_text().splitlines()
    assert any(re.match(r"nbformat==[\d.]+(\s|$)", line) for line in pins)


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
    "ch03-ex-crossover": ("", "[2 / (theta * (1 - theta) * e**2) for e in (1.0, 0.1)]"),
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
    "ch19-ex-rr": ("", "value"),
    "ch19-ex-remap": ("", "[value_abs, value_sq]"),
    "ch19-ex-worst": ("", "[worst_grs, worst_clamped]"),
    "ch18-ex-var": ("", "[var_at_1, var_at_10]"),
    "ch18-ex-eps": ("", "[eps_05, eps_1, eps_2]"),
    "ch18-ex-round": ("", "[discrete_bias, rounded_bias]"),
    "ch18-ex-folded": ("", "bias"),
    "ch20-ex-clamp": ("", "[clamp_worst, least]"),
    "ch20-ex-rules": ("", "[s, d]"),
    "ch20-ex-total": ("", "[per_area, summed_first]"),
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
    # the same distance above and below the answer (not at a band's edge): the same verdict, which never says
    # too high or too low
    d = 0.0731 * np.abs(want) + 0.0173
    above, below = classroom.check(label, want + d), classroom.check(label, want - d)
    assert not above.correct and above.message == below.message, (above.message, below.message)
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


# --- a wrong answer: which entry is off, and by how many tolerances (never the value) -----------------


@pytest.fixture
def demo_label():
    label = "ch99-ex-test-entries"
    classroom.register(label, lambda: [2.0, -30.0, 0.0], rel_tol=1e-2, abs_tol=1e-3,
                       expects=("the first", "the MSE", "the zero"))
    yield label
    classroom.ANSWERS.pop(label, None)


def test_verdict_names_the_entry_off_and_its_band(demo_label):
    assert classroom.check(demo_label, [2.01, -30.2, 5e-4]).correct
    # entry 2 off by 3.4 tolerances (tolerance 0.3): named by position and name, in the 2-5 band
    msg = classroom.check(demo_label, [2.0, -30.0 + 3.4 * 0.3, 0.0]).message
    assert "1 of 3 entries is outside 1% (relative) or 0.001 (absolute)" in msg, msg
    assert "entry 2 (the MSE) is off by between 2 and 5 tolerances" in msg, msg
    assert "entry 1" not in msg and "entry 3" not in msg, msg
    # each band edge: 1.5 -> 1-2, 7 -> 5-10, 150 -> 100-1000, 5000 -> more than 1000; the abs_tol of a zero
    msg = classroom.check(demo_label, [2.0 + 1.5 * 0.02, -30.0 - 7 * 0.3, 150 * 1e-3]).message
    assert "3 of 3 entries are" in msg
    for part in ("entry 1 (the first) is off by between 1 and 2 tolerances",
                 "entry 2 (the MSE) is off by between 5 and 10 tolerances",
                 "entry 3 (the zero) is off by between 100 and 1000 tolerances"):
        assert part in msg, (part, msg)
    assert "more than 1000 tolerances" in classroom.check(demo_label, [2.0, 1e6, 0.0]).message
    assert "entry 3 (the zero) is not a finite number" in classroom.check(demo_label, [2.0, -30.0, np.nan]).message
    # the same distance above and below gives the same words: no sign, no value
    up, down = (classroom.check(demo_label, [2.0, -30.0 + d, 0.0]).message for d in (1.2, -1.2))
    assert up == down
    for s in ("30", "-30", "2.0", "1.2", "31.2", "28.8"):
        assert s not in up, (s, up)


def test_verdict_names_entries_by_position_without_names():
    label = "ch99-ex-test-positions"
    classroom.register(label, lambda: [1.0, 10.0], rel_tol=1e-3, expects="two numbers")
    try:
        msg = classroom.check(label, [1.0, 10.1]).message
        assert "1 of 2 entries is outside 0.1% (relative) of dpbook's answer (two numbers)" in msg, msg
        assert "entry 2 is off by between 5 and 10 tolerances" in msg, msg
        msg = classroom.check(label, [1.007, 10.0]).message
        assert "entry 1 is off by between 5 and 10 tolerances" in msg, msg
        # a single number: "it is off by"
        classroom.ANSWERS.pop(label)
        classroom.register(label, lambda: 4.0, rel_tol=1e-2, expects="one number")
        assert classroom.check(label, 4.5).message.endswith("(one number): it is off by between 10 and 20 tolerances.")
    finally:
        classroom.ANSWERS.pop(label, None)
    with pytest.raises(ValueError, match="expects"):
        classroom.register("ch99-x", lambda: 1.0, expects=("a", ""))
    with pytest.raises(ValueError, match="expects"):
        classroom.register("ch99-x", lambda: 1.0, expects=3)
    assert "ch99-x" not in classroom.ANSWERS


def test_module_docstring_example_runs_and_cleans_up():
    import doctest

    before = set(classroom.ANSWERS)
    result = doctest.testmod(classroom, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0, result
    assert set(classroom.ANSWERS) == before


# --- no answer is written anywhere a student can read it -----------------------------------------------

def _written_forms(x, digits=4):
    """The ways a value is written (3, 4 and 6 significant digits, repr, 2-4 fixed decimals), keeping the forms
    with at least ``digits`` significant digits: shorter ones are in every text (0.5, 2, 0.01, and at 3
    digits 1.05, 1.25 and 12.9 as axis limits, slider steps and unrelated results of other chapters)."""
    x = float(x)
    forms = {f"{x:.3g}", f"{x:.4g}", f"{x:.6g}", repr(x), f"{x:.2f}", f"{x:.3f}", f"{x:.4f}"}
    forms |= {f.lstrip("-") for f in forms}
    return {f for f in forms if "e" not in f and len(f.replace("-", "").replace(".", "").strip("0")) >= digits}


#: values the book states on purpose, which the exercise asks to recompute or verify: label -> {index: why}
STATED = {
    "ch08-ex-deriv": {0: "-α*/b = -W(1/2): α* is documented by dpbook.optimal_ramp_shift and the ramp's doctest"},
    "ch14-ex-ramp": {0: "α*/b = W(1/2), the known worst-case bias that the exercise verifies (Theorem 4.1)"},
    "ch11-ex-sigma1": {i: "σ₁ε/Δ and σ(Δ/ε)ε/Δ are the constants of Croft's calibration, documented by dpbook"
                       for i in (0, 1, 3, 4, 6, 7)},
    "ch02-ex-scale": {1: "b* = 1.6126 Δ at ε = 1, which Chapters 10, 11 and 15 state"},
    "ch12-ex-width": {7: "at w = 20 the scale is b* = 1.6126 Δ of one-sided truncation (Chapters 10, 11, 15)"},
    "ch14-ex-floor": {0: "at ε = 0.01 the floor is W(1/e) = 0.2785 to 4 digits, the limit the book states"},
}

@functools.lru_cache(maxsize=None)
def _registered_values():
    """label -> the registered answer's values (those the book does not state on purpose), computed once."""
    out = {}
    for label, entry in classroom.ANSWERS.items():
        if not label.startswith("ch99-"):
            values = np.atleast_1d(np.asarray(entry.compute(), dtype=float))
            out[label] = [v for i, v in enumerate(values) if i not in STATED.get(label, {})]
    return out


def _searchable(values, digits=4):
    return {f for v in values for f in _written_forms(v, digits)}


def _find(forms, text):
    """The forms written in ``text`` as a whole number (not inside a longer one)."""
    return sorted(f for f in forms if re.search(r"(?<![\d.])" + re.escape(f) + r"(?![\d])", text))


def _package_texts():
    """Every module of dpbook and dpbook_book: (name, what, text) for its source file and its help() text."""
    import importlib
    import pkgutil
    import pydoc

    import dpbook
    import dpbook_book

    texts = []
    for pkg in (dpbook, dpbook_book):
        names = [pkg.__name__] + [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
        for name in names:
            module = importlib.import_module(name)
            texts.append((name, "source", Path(module.__file__).read_text(encoding="utf-8")))
            texts.append((name, "help", pydoc.render_doc(module, renderer=pydoc.plaintext)))
    return texts


def _leaks(texts):
    """``texts``: (name, what, text) -> where each registered answer is written."""
    found = []
    for label, values in _registered_values().items():
        for name, what, text in texts:
            hits = _find(_searchable(values), text)
            if hits:
                found.append(f"{label}: {hits} in {name} ({what})")
    return found


#: registered answers none of whose values has a written form of 4 or more significant digits (0.5, 0.25, 1,
#: 0.3): the leak test cannot tell them from the other numbers of the text, so it does not search for them
UNSEARCHABLE = {"ch01-ex-histogram", "ch02-ex-one-sided", "ch04-ex-maxvar", "ch05-ex-ms"}


def test_leak_search_skips_only_the_known_generic_answers():
    generic = {label for label, values in _registered_values().items() if not _searchable(values)}
    stated = {label for label, values in _registered_values().items() if not values}  # every value stated
    assert stated == {"ch08-ex-deriv", "ch14-ex-ramp"}
    assert generic == UNSEARCHABLE | stated


def test_written_forms_and_search():
    assert {"19.51", "19.510", "19.5100"} <= _written_forms(19.51) and "19.5" not in _written_forms(19.51)
    assert not _written_forms(0.5) and not _written_forms(12.0) and "0.1235" in _written_forms(0.123456)
    assert "19.5" in _written_forms(19.51, 3) and "-0.3517" in _written_forms(-0.351734)
    assert _find({"19.51"}, "b = 19.51 here") == ["19.51"]
    assert _find({"19.51"}, "b = 119.51, 19.512 and 19.5100") == []
    assert _leaks([("planted", "help", "see 19.51 here")]) == ["ch02-ex-scale: ['19.51'] in planted (help)"]


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_no_answer_in_the_student_edition(tmp_path):
    run = subprocess.run([sys.executable, str(TOOL), "--out", str(tmp_path)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    texts = [(str(p.relative_to(tmp_path)), "notebook", _text(nbformat.read(p, as_version=4)))
             for p in tmp_path.rglob("*.ipynb")]
    assert len(texts) == len(BOOK)
    leaks = _leaks(texts)
    assert not leaks, leaks


def test_no_answer_in_the_installed_packages_source_docstrings_or_help():
    texts = _package_texts()
    names = {(name, what) for name, what, _ in texts}
    assert {("dpbook_book.classroom", "help"), ("dpbook.clamping", "source")} <= names
    leaks = _leaks(texts)
    assert not leaks, leaks
