"""The student edition (tools/student_edition.py) and the answer checker (dpbook.classroom)."""

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from dpbook_book import classroom, exercises

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "student_edition.py"
BOOK = sorted(
    p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
)

sys.path.insert(0, str(TOOL.parent))
import student_edition  # noqa: E402

# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("classroom")

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# 99. Test\n\nIntro text KEEP-INTRO."),
        code(
            "x = 1\nprint('KEEP-CODE')",
            execution_count=3,
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text="KEEP-OUTPUT\n")
            ],
        ),
        md(
            "```{exercise}\n:label: ch99-ex-a\n\nStatement KEEP-EX-A.\n```\n\n"
            "````{solution-start} ch99-ex-a\n:class: dropdown\n````\n\nSECRET-A-1 in the same cell."
        ),
        code(
            "print('SECRET-A-2')",
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text="SECRET-A-3\n")
            ],
        ),
        md("SECRET-A-4\n\n$$\nSECRET-A-5\n$$"),
        code("assert 'SECRET-A-6'"),
        md("SECRET-A-7\n````{solution-end}\n````\n\nAfter it KEEP-AFTER-A."),
        md(
            "```{exercise}\n:label: ch99-ex-b\n\nStatement KEEP-EX-B.\n```\n\n"
            ":::::{solution-start} ch99-ex-b\n:class: dropdown\n:::::\nSECRET-B-1\n```{math}\nSECRET-B-2\n```\n"
            ":::::{solution-end}\n:::::\nKEEP-AFTER-B"
        ),
        md(
            "```{exercise}\n:label: ch99-ex-c\n\nStatement KEEP-EX-C.\n```\n\n"
            "````{solution} ch99-ex-c\n:class: dropdown\n\nSECRET-C-1\n```python\nSECRET-C-2\n```\n````\n\nKEEP-AFTER-C"
        ),
        md("```{admonition} Summary\nKEEP-SUMMARY\n```"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
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
    for keep in (
        "KEEP-INTRO",
        "KEEP-CODE",
        "KEEP-EX-A",
        "KEEP-AFTER-A",
        "KEEP-EX-B",
        "KEEP-AFTER-B",
        "KEEP-EX-C",
        "KEEP-AFTER-C",
        "KEEP-SUMMARY",
    ):
        assert keep in text, keep
    assert "solution" not in text
    answers = [
        c for c in student.cells if "student-answer" in c.metadata.get("tags", [])
    ]
    assert [c.cell_type for c in answers] == ["code"] * 3
    assert all(f"exercise {lab}" in c.source for c, lab in zip(answers, labels))
    assert all(
        c.outputs == [] and c.execution_count is None
        for c in student.cells
        if c.cell_type == "code"
    )
    assert "KEEP-OUTPUT" in _text(nb) and "SECRET-A-1" in _text(
        nb
    )  # the input is untouched
    nbformat.validate(student)
    order = [
        i
        for i, c in enumerate(student.cells)
        if "KEEP-EX-A" in c.source
        or "ch99-ex-a here" in c.source
        or "KEEP-AFTER-A" in c.source
    ]
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
    nb.cells = [
        md("````{solution-start} ch99-ex-x\n:class: dropdown\n````\n"),
        code("1"),
    ]
    with pytest.raises(ValueError, match="ch99-ex-x"):
        student_edition.student_notebook(nb)


def test_numeric_exercise_gets_the_assignments_variable():
    nb = nbformat.v4.new_notebook()
    label = "ch99-ex-num"
    nb.cells = [
        md(
            f"```{{exercise}}\n:label: {label}\n\nQ.\n```\n\n````{{solution-start}} {label}\n:class: dropdown\n````"
        ),
        code("answer('ch99-ex-num', 42.0)"),
        md("````{solution-end}\n````"),
    ]
    student, _ = student_edition.student_notebook(nb, numeric={label})
    assert "ch99_ex_num = ..." in _text(student) and "question ch99-ex-num" in _text(
        student
    )
    assert "42" not in _text(student)
    student, _ = student_edition.student_notebook(nb)
    assert "ch99_ex_num" not in _text(student)


def _solution_lines(nb):
    """Independently of the tool: the substantive lines between solution-start and solution-end."""
    text = "\n<<cell>>\n".join(c.source for c in nb.cells)
    inside = re.findall(r"\{solution-start\}.*?\{solution-end\}", text, flags=re.S)
    outside = re.sub(r"\{solution-start\}.*?\{solution-end\}", "", text, flags=re.S)
    lines = {ln.strip() for block in inside for ln in block.splitlines()}
    return {
        ln
        for ln in lines
        if len(ln) > 25 and ln not in outside and "<<cell>>" not in ln
    }


@pytest.fixture(scope="module")
def written_edition(tmp_path_factory):
    """The student edition of the whole book, written once by the command (``tools/student_edition.py``)."""
    out = tmp_path_factory.mktemp("student")
    run = subprocess.run(
        [sys.executable, str(TOOL), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_command_on_the_real_book(written_edition):
    tmp_path = written_edition
    for src in BOOK:
        nb = nbformat.read(src, as_version=4)
        dest = tmp_path / src.relative_to(ROOT)
        student = nbformat.read(dest, as_version=4)
        nbformat.validate(student)
        text = _text(student)
        assert "solution-start" not in text and "solution-end" not in text, src.name
        leaked = [ln for ln in _solution_lines(nb) if ln in text]
        assert not leaked, (src.name, leaked[:3])
        exercises = re.findall(
            r":label: (\S+)",
            "\n".join(
                c.source
                for c in nb.cells
                if c.cell_type == "markdown" and "{exercise}" in c.source
            ),
        )
        starts = sum(c.source.count("{solution-start}") for c in nb.cells)
        answers = [
            c for c in student.cells if "student-answer" in c.metadata.get("tags", [])
        ]
        assert len(answers) == starts, src.name
        for label in exercises:
            assert f":label: {label}" in text, (src.name, label)
        assert all(
            not c.outputs and c.execution_count is None
            for c in student.cells
            if c.cell_type == "code"
        )
        assert student.metadata.get("kernelspec", {}).get("name") == nb.metadata.get(
            "kernelspec", {}
        ).get("name")


def test_student_edition_dependency_is_declared():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
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


# --- the answers, read from the chapters' solutions (dpbook_book.exercises) -----------------------------


def _chapter(tmp_path, cells, name="ch99_test.ipynb"):
    """A one-chapter book in ``tmp_path/book`` holding ``cells``; returns the book folder."""
    book = tmp_path / "book"
    (book / "part1").mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nbformat.write(nb, book / "part1" / name)
    return book


def _setup(source="import numpy as np\nfrom dpbook_book.exercises import answer"):
    return code(source, metadata={"tags": ["hide-input", exercises.SETUP_TAG]})


def _exercise(label, solution, statement="Compute it."):
    return [
        md(
            f"```{{exercise}} A title\n:label: {label}\n\n{statement}\n```\n\n"
            f"````{{solution-start}} {label}\n:class: dropdown\n````"
        ),
        code(solution),
        md("````{solution-end}\n````"),
    ]


def test_every_numeric_exercise_declares_its_parameters():
    """Every exercise with a numeric answer declares the parameters a variant draws (``variant(label,
    ...)``), so an assignment can give each term, or each student, answers of its own."""
    found = exercises.book_exercises()
    numeric = {k for k, e in found.items() if e.numeric}
    assert len(numeric) >= 59
    assert not sorted(k for k in numeric if not found[k].varies)


def test_an_exercise_without_declared_parameters_is_found(tmp_path):
    """The check above can fail: a numeric solution that fixes its numbers does not vary; one whose
    ``variant`` call names another exercise does not count."""
    book = _chapter(
        tmp_path,
        [
            md("# 99. Test"),
            _setup("from dpbook_book.exercises import answer, variant, vary"),
            *_exercise("ch99-ex-fixed", "answer('ch99-ex-fixed', 2.0)"),
            *_exercise(
                "ch99-ex-other",
                "k = variant('ch99-ex-fixed', k=vary(2.0, among=(3.0,)))\n"
                "answer('ch99-ex-other', k)",
            ),
            *_exercise(
                "ch99-ex-varied",
                "k = variant('ch99-ex-varied', k=vary(2.0, among=(3.0,)))\n"
                "answer('ch99-ex-varied', k)",
            ),
        ],
    )
    found = exercises.book_exercises(book)
    assert [k for k, e in found.items() if e.varies] == ["ch99-ex-varied"]
    assert all(e.numeric for e in found.values())


def test_compute_runs_setup_and_solution_quietly(tmp_path, capsys):
    book = _chapter(
        tmp_path,
        [
            md("# 99. Test"),
            code("SHOULD_NOT_RUN = 1 / 0"),
            _setup(),
            code(
                "import matplotlib\nmatplotlib.rcParams['lines.linewidth'] = 7.5\nk = 3",
                metadata={"tags": [exercises.SETUP_TAG]},
            ),
            *_exercise(
                "ch99-ex-a",
                "v = [np.sqrt(k), 2.0 * k]\nprint('PRINTED', v)\n"
                "answer('ch99-ex-a', v, rel_tol=1e-3, expects=('root', 'double'))",
            ),
            *_exercise("ch99-ex-prose", "print('no number here')"),
        ],
    )
    found = exercises.book_exercises(book)
    assert list(found) == ["ch99-ex-a", "ch99-ex-prose"]
    assert found["ch99-ex-a"].numeric and not found["ch99-ex-prose"].numeric
    assert (
        found["ch99-ex-a"].title == "A title"
        and found["ch99-ex-a"].statement == "Compute it."
    )
    import matplotlib

    before = matplotlib.rcParams["lines.linewidth"]
    ans = exercises.compute("ch99-ex-a", book)
    assert (
        matplotlib.rcParams["lines.linewidth"] == before
    )  # the set-up cell's style did not leak out
    assert (
        ans.values == (np.sqrt(3.0), 6.0)
        and ans.rel_tol == 1e-3
        and ans.expects == ("root", "double")
    )
    assert "PRINTED" not in capsys.readouterr().out
    assert "1.73" not in repr(ans) and "6.0" not in repr(
        ans
    )  # the value stays out of reprs
    assert classroom.check("ch99-ex-a", [1.7325, 6.0], book=book).correct
    assert not classroom.check("ch99-ex-a", [1.74, 6.0], book=book).correct
    with pytest.raises(ValueError, match="no numeric answer.*ch99-ex-a"):
        exercises.compute("ch99-ex-prose", book)
    with pytest.raises(ValueError, match="ch99-ex-nope.*ch99-ex-a"):
        classroom.check("ch99-ex-nope", 1.0, book=book)


def test_compute_refuses_a_solution_that_records_nothing_or_another_label(tmp_path):
    book = _chapter(
        tmp_path,
        [
            _setup(),
            *_exercise("ch99-ex-b", "x = 1\nif False:\n    answer('ch99-ex-b', x)"),
        ],
    )
    assert exercises.book_exercises(book)[
        "ch99-ex-b"
    ].numeric  # the call is there, but never runs
    with pytest.raises(ValueError, match="without recording"):
        exercises.compute("ch99-ex-b", book)


def test_find_book(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="book="):
        exercises.find_book(tmp_path)
    book = _chapter(tmp_path, [_setup()])
    assert exercises.find_book(book) == book
    monkeypatch.setenv("DPBOOK_BOOK_DIR", str(book))
    assert exercises.find_book() == book
    monkeypatch.setenv("DPBOOK_BOOK_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(LookupError, match="DPBOOK_BOOK_DIR"):
        exercises.find_book()
    monkeypatch.delenv("DPBOOK_BOOK_DIR")
    assert (
        exercises.find_book() == ROOT / "book"
    )  # this repository's, next to the package


def test_make_answer_validates():
    assert exercises.make_answer("x", 2.0).values == (2.0,)
    for kwargs, match in (
        ({"rel_tol": -1}, "rel_tol"),
        ({"rel_tol": 0}, "both be 0"),
        ({"expects": ("a", "")}, "expects"),
        ({"expects": 3}, "expects"),
        ({"expects": ("a", "b", "c")}, "3 entries"),
    ):
        with pytest.raises(ValueError, match=match):
            exercises.make_answer("x", [1.0, 2.0], **kwargs)
    with pytest.raises(ValueError, match="abs_tol"):
        exercises.make_answer("x", [1.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        exercises.make_answer("x", [1.0, np.nan])
    with pytest.raises(ValueError, match="value of x"):
        exercises.make_answer("x", "abc")
    with pytest.raises(ValueError, match="label"):
        exercises.make_answer("", 1.0)
    assert (
        exercises.variable_name("ch02-ex-scale") == "ch02_ex_scale"
        and exercises.variable_name("2-a") == "ex_2_a"
    )


def _formats(x):
    x = float(x)
    return (
        {f"{x:.{k}g}" for k in range(3, 10)}
        | {f"{x:.{k}f}" for k in range(2, 7)}
        | {repr(x)}
    )


#: exercises whose answer is a proof or prose (or no single number): their solutions record no answer
NOT_NUMERIC = {
    "ch06-ex-small-eps": "two limits to prove; the budgets at which to check them are the reader's choice",
    "ch09-ex-sign": "where the proof uses φ ≥ 0, and a post-processing dpbook refuses",
    "ch09-ex-search": "an open-ended search, whose result depends on the optimizer and its budget",
    "ch13-ex-never-2b2": "a numerical demonstration over a grid of true values, no single number",
    "ch16-ex-bits": "which lowest bits occur, and why",
}


@functools.lru_cache(maxsize=None)
def _book():
    return exercises.book_exercises(ROOT / "book") if BOOK else {}


NUMERIC = sorted(label for label, ex in _book().items() if ex.numeric)


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_every_exercise_has_an_answer_or_is_known_not_numeric():
    labels = set(_book())
    assert len(labels) >= 60
    unclassified = labels - set(NUMERIC) - set(NOT_NUMERIC)
    assert not unclassified, (
        f"exercises with no answer(...) in their solution and not in NOT_NUMERIC: {sorted(unclassified)}"
    )
    assert not set(NOT_NUMERIC) & set(NUMERIC)
    assert set(NOT_NUMERIC) <= labels
    chapters = {_book()[label].notebook for label in NUMERIC}
    assert all(exercises.setup_cells(path) for path in chapters)


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_check_hints_in_the_book_name_their_own_exercise():
    hinted = set()
    for label, ex in _book().items():
        for named in re.findall(
            r"classroom\.check\(\s*[\"']([^\"']+)[\"']", ex.statement
        ):
            assert named == label and label in NUMERIC, (ex.notebook.name, label, named)
            hinted.add(label)
    assert hinted == set(NUMERIC), (
        f"exercises with an answer but no check hint: {sorted(set(NUMERIC) - hinted)}"
    )


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
@pytest.mark.parametrize("label", NUMERIC)
def test_checker_on_the_books_answer(label):
    entry = exercises.compute(label)
    want = np.asarray(entry.values)
    assert want.size >= 1 and np.all(np.isfinite(want))
    # recomputed from scratch, the solution gives the same answer (no hidden state, seeded draws)
    exercises._CACHE.clear()
    assert exercises.compute(label).values == entry.values
    right = classroom.check(label, want if want.size > 1 else want[0])
    assert right.correct and bool(right), right.message
    inside = want * (1 + 0.5 * entry.rel_tol) + 0.5 * entry.abs_tol
    assert classroom.check(label, inside).correct
    outside = want * (1 + 3 * entry.rel_tol) + 3 * entry.abs_tol
    wrong = classroom.check(label, outside)
    assert not wrong.correct
    assert not classroom.check(label, list(want) + [1.0]).correct
    # the same distance above and below the answer (not at a band's edge): the same verdict, which never says
    # too high or too low
    d = 0.0731 * np.abs(want) + 0.0173
    above, below = classroom.check(label, want + d), classroom.check(label, want - d)
    assert not above.correct and above.message == below.message, (
        above.message,
        below.message,
    )
    for verdict in (right, wrong, above):
        for value in want:
            for s in _formats(value):
                if len(s.strip("0.-")) >= 2:
                    assert s not in verdict.message, (label, s, verdict.message)


def test_bad_input():
    with pytest.raises(ValueError, match="no-such-label"):
        classroom.check("no-such-label", 1.0)
    demo = exercises.make_answer("ch99-demo", [1.0, 2.0])
    with pytest.raises(ValueError, match="value"):
        classroom.compare(demo, "abc")
    with pytest.raises(ValueError, match="answer must be"):
        classroom.compare([1.0, 2.0], [1.0, 2.0])
    assert not classroom.compare(demo, [np.nan, 2.0]).correct


# --- a wrong answer: which entry is off, and by how many tolerances (never the value) -----------------

DEMO = exercises.make_answer(
    "ch99-ex-test-entries",
    [2.0, -30.0, 0.0],
    rel_tol=1e-2,
    abs_tol=1e-3,
    expects=("the first", "the MSE", "the zero"),
)


def test_verdict_names_the_entry_off_and_its_band():
    compare = classroom.compare
    assert compare(DEMO, [2.01, -30.2, 5e-4]).correct
    # entry 2 off by 3.4 tolerances (tolerance 0.3): named by position and name, in the 2-5 band
    msg = compare(DEMO, [2.0, -30.0 + 3.4 * 0.3, 0.0]).message
    assert "1 of 3 entries is outside 1% (relative) or 0.001 (absolute)" in msg, msg
    assert "entry 2 (the MSE) is off by between 2 and 5 tolerances" in msg, msg
    assert "entry 1" not in msg and "entry 3" not in msg, msg
    # each band edge: 1.5 -> 1-2, 7 -> 5-10, 150 -> 100-1000, 5000 -> more than 1000; the abs_tol of a zero
    msg = compare(DEMO, [2.0 + 1.5 * 0.02, -30.0 - 7 * 0.3, 150 * 1e-3]).message
    assert "3 of 3 entries are" in msg
    for part in (
        "entry 1 (the first) is off by between 1 and 2 tolerances",
        "entry 2 (the MSE) is off by between 5 and 10 tolerances",
        "entry 3 (the zero) is off by between 100 and 1000 tolerances",
    ):
        assert part in msg, (part, msg)
    assert "more than 1000 tolerances" in compare(DEMO, [2.0, 1e6, 0.0]).message
    assert (
        "entry 3 (the zero) is not a finite number"
        in compare(DEMO, [2.0, -30.0, np.nan]).message
    )
    # the same distance above and below gives the same words: no sign, no value
    up, down = (compare(DEMO, [2.0, -30.0 + d, 0.0]).message for d in (1.2, -1.2))
    assert up == down
    for s in ("30", "-30", "2.0", "1.2", "31.2", "28.8"):
        assert s not in up, (s, up)


def test_verdict_names_entries_by_position_without_names():
    two = exercises.make_answer(
        "ch99-ex-test-positions", [1.0, 10.0], rel_tol=1e-3, expects="two numbers"
    )
    msg = classroom.compare(two, [1.0, 10.1]).message
    assert (
        "1 of 2 entries is outside 0.1% (relative) of dpbook's answer (two numbers)"
        in msg
    ), msg
    assert "entry 2 is off by between 5 and 10 tolerances" in msg, msg
    assert (
        "entry 1 is off by between 5 and 10 tolerances"
        in classroom.compare(two, [1.007, 10.0]).message
    )
    one = exercises.make_answer("ch99-ex-one", 4.0, rel_tol=1e-2, expects="one number")
    assert classroom.compare(one, 4.5).message.endswith(
        "(one number): it is off by between 10 and 20 tolerances."
    )
    assert (
        "expected 1 number(s) (one number), got 2"
        in classroom.compare(one, [4.0, 4.0]).message
    )


def test_module_docstring_example_runs():
    import doctest

    result = doctest.testmod(classroom, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0, result


# --- no answer is written anywhere a student can read it -----------------------------------------------


def _written_forms(x, digits=4):
    """The ways a value is written (3, 4 and 6 significant digits, repr, 2-4 fixed decimals), keeping the forms
    with at least ``digits`` significant digits: shorter ones are in every text (0.5, 2, 0.01, and at 3
    digits 1.05, 1.25 and 12.9 as axis limits, slider steps and unrelated results of other chapters)."""
    x = float(x)
    forms = {
        f"{x:.3g}",
        f"{x:.4g}",
        f"{x:.6g}",
        repr(x),
        f"{x:.2f}",
        f"{x:.3f}",
        f"{x:.4f}",
    }
    forms |= {f.lstrip("-") for f in forms}
    return {
        f
        for f in forms
        if "e" not in f
        and len(f.replace("-", "").replace(".", "").strip("0")) >= digits
    }


#: values the book states on purpose, which the exercise asks to recompute or verify: label -> {index: why}
STATED = {
    "ch08-ex-deriv": {
        0: "-α*/b = -W(1/2): α* is documented by dpbook.optimal_ramp_shift and the ramp's doctest"
    },
    "ch14-ex-ramp": {
        0: "b W(1/2) at the book's b = 1, the known worst-case bias that the exercise verifies (Theorem 4.1)"
    },
    "ch11-ex-sigma1": {
        i: "σ₁ε/Δ and σ(Δ/ε)ε/Δ are the constants of Croft's calibration, documented by dpbook"
        for i in (0, 1, 3, 4, 6, 7)
    },
    "ch02-ex-scale": {1: "b* = 1.6126 Δ at ε = 1, which Chapters 10, 11 and 15 state"},
    "ch12-ex-width": {
        7: "at w = 20 the scale is b* = 1.6126 Δ of one-sided truncation (Chapters 10, 11, 15)"
    },
    "ch14-ex-floor": {
        0: "at ε = 0.01 the floor is W(1/e) = 0.2785 to 4 digits, the limit the book states"
    },
}


@functools.lru_cache(maxsize=None)
def _registered_values():
    """label -> the answer's values (those the book does not state on purpose), computed once."""
    out = {}
    for label in NUMERIC:
        values = exercises.compute(label).values
        out[label] = [v for i, v in enumerate(values) if i not in STATED.get(label, {})]
    return out


def _searchable(values, digits=4):
    return {f for v in values for f in _written_forms(v, digits)}


def _find(forms, text):
    """The forms written in ``text`` as a whole number (not inside a longer one)."""
    return sorted(
        f for f in forms if re.search(r"(?<![\d.])" + re.escape(f) + r"(?![\d])", text)
    )


def _package_texts():
    """Every module of dpbook and dpbook_book: (name, what, text) for its source file and its help() text."""
    import importlib
    import pkgutil
    import pydoc

    import dpbook
    import dpbook_book

    texts = []
    for pkg in (dpbook, dpbook_book):
        names = [pkg.__name__] + [
            m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
        ]
        for name in names:
            module = importlib.import_module(name)
            texts.append(
                (name, "source", Path(module.__file__).read_text(encoding="utf-8"))
            )
            texts.append(
                (name, "help", pydoc.render_doc(module, renderer=pydoc.plaintext))
            )
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
UNSEARCHABLE = {
    "ch01-ex-histogram",
    "ch02-ex-one-sided",
    "ch04-ex-maxvar",
    "ch05-ex-ms",
}


@pytest.mark.slow
def test_leak_search_skips_only_the_known_generic_answers():
    generic = {
        label
        for label, values in _registered_values().items()
        if not _searchable(values)
    }
    stated = {
        label for label, values in _registered_values().items() if not values
    }  # every value stated
    assert stated == {"ch08-ex-deriv", "ch14-ex-ramp"}
    assert generic == UNSEARCHABLE | stated


def test_written_forms_and_search():
    assert {"19.51", "19.510", "19.5100"} <= _written_forms(
        19.51
    ) and "19.5" not in _written_forms(19.51)
    assert (
        not _written_forms(0.5)
        and not _written_forms(12.0)
        and "0.1235" in _written_forms(0.123456)
    )
    assert "19.5" in _written_forms(19.51, 3) and "-0.3517" in _written_forms(-0.351734)
    assert _find({"19.51"}, "b = 19.51 here") == ["19.51"]
    assert _find({"19.51"}, "b = 119.51, 19.512 and 19.5100") == []
    assert _leaks([("planted", "help", "see 19.51 here")]) == [
        "ch02-ex-scale: ['19.51'] in planted (help)"
    ]


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
@pytest.mark.slow
def test_no_answer_in_the_student_edition(written_edition):
    tmp_path = written_edition
    texts = [
        (
            str(p.relative_to(tmp_path)),
            "notebook",
            _text(nbformat.read(p, as_version=4)),
        )
        for p in tmp_path.rglob("*.ipynb")
    ]
    assert len(texts) == len(BOOK)
    leaks = _leaks(texts)
    assert not leaks, leaks


@pytest.mark.slow
def test_no_answer_in_the_installed_packages_source_docstrings_or_help():
    texts = _package_texts()
    names = {(name, what) for name, what, _ in texts}
    assert {
        ("dpbook_book.classroom", "help"),
        ("dpbook.families.clamping", "source"),
    } <= names
    leaks = _leaks(texts)
    assert not leaks, leaks


# --- the JupyterLite copies: the solutions' boundaries are words there, and events in the metadata ----------


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_lite_copies_keep_every_solution_for_the_checker(tmp_path):
    sys.path.insert(0, str(ROOT / "_ext"))
    import dpbook_site

    for src in BOOK:
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                events = exercises.solution_events(cell.source)
                if events:
                    cell.metadata.setdefault("dpbook", {})["solutions"] = events
                cell.source = dpbook_site.lite_markdown(
                    cell.source, lambda m, where: m.group(2)
                )
        lite = tmp_path / src.name
        nbformat.write(nb, lite)
        assert "{solution-start}" not in lite.read_text()
        original, copy = (
            exercises.chapter_exercises(src),
            exercises.chapter_exercises(lite),
        )
        assert [(e.label, e.solution, e.numeric) for e in copy] == [
            (e.label, e.solution, e.numeric) for e in original
        ]
        # without the metadata the copy's solutions are lost: the events are what the checker reads
        for cell in nb.cells:
            cell.metadata.pop("dpbook", None)
        nbformat.write(nb, lite)
        assert not any(e.numeric for e in exercises.chapter_exercises(lite)) or not any(
            e.numeric for e in original
        )


# --- the student edition's folder, the lite copies and the assignments' form test ---------------------------


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_check_works_from_the_student_editions_folder(tmp_path, monkeypatch):
    import tempfile

    out = Path(
        tempfile.mkdtemp(prefix=".student-edition-", dir=ROOT)
    )  # inside the repository, as _build/student is
    try:
        assert (
            student_edition.main(
                ["--out", str(out), str(ROOT / "book" / "part1" / "ch02_bounded.ipynb")]
            )
            == 0
        )
        student = out / "book" / "part1"
        assert exercises._student_edition(out / "book")
        monkeypatch.chdir(student)
        # as from an installed (not editable) dpbook_book: the folders around the current one are searched
        monkeypatch.setattr(
            exercises,
            "__file__",
            str(tmp_path / "site-packages" / "dpbook_book" / "exercises.py"),
        )
        monkeypatch.delenv("DPBOOK_BOOK_DIR", raising=False)
        assert (
            exercises.find_book() == ROOT / "book"
        )  # past the student edition, to the repository's book
        assert classroom.check("ch02-ex-vector", [1.0, 1.0, 1.0]).message.startswith(
            "ch02-ex-vector: not yet"
        )
        # a student edition alone: the error says why, instead of "no numeric answer"
        alone = tmp_path / "alone"
        shutil.copytree(out, alone)
        monkeypatch.chdir(alone / "book" / "part1")
        with pytest.raises(
            LookupError, match="student edition, which holds no solutions"
        ):
            exercises.find_book()
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.mark.skipif(not BOOK, reason="no book notebooks")
def test_check_works_in_a_lite_copy_of_the_book(tmp_path, monkeypatch):
    """The lite lab's contents keep the repository's layout (book/partN/...) with the solutions' boundaries in
    the metadata; from a chapter's folder there, check() finds that copy and answers."""
    sys.path.insert(0, str(ROOT / "_ext"))
    import dpbook_site

    for src in BOOK:
        if src.parent.name != "part1":
            continue
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                events = exercises.solution_events(cell.source)
                if events:
                    cell.metadata.setdefault("dpbook", {})["solutions"] = events
                cell.source = dpbook_site.lite_markdown(
                    cell.source, lambda m, where: m.group(2)
                )
        dest = tmp_path / "drive" / "book" / "part1" / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dest)
    monkeypatch.chdir(tmp_path / "drive" / "book" / "part1")
    monkeypatch.setattr(
        exercises,
        "__file__",
        str(tmp_path / "site-packages" / "dpbook_book" / "exercises.py"),
    )
    monkeypatch.delenv("DPBOOK_BOOK_DIR", raising=False)
    assert exercises.find_book() == tmp_path / "drive" / "book"
    want = exercises.compute("ch02-ex-vector", tmp_path / "drive" / "book")
    assert classroom.check("ch02-ex-vector", list(want.values)).correct


def test_form_reports_a_crashed_cell_before_the_form():
    from types import SimpleNamespace

    def ran(source, error=None):
        classroom._after_cell(
            SimpleNamespace(
                error_in_exec=error,
                error_before_exec=None,
                info=SimpleNamespace(raw_cell=source),
            )
        )

    classroom._CRASHED.clear()
    assert (
        classroom.form("ch99-ex-a", "ch99_ex_a", ..., 2, "two numbers")
        == "ch99-ex-a: replace the ... of ch99_ex_a by your answer"
    )
    ran("x = 1\nch99_ex_a = [x, 1 / 0]", ZeroDivisionError("division by zero"))
    msg = classroom.form("ch99-ex-a", "ch99_ex_a", ..., 2, "two numbers")
    assert msg == (
        "ch99-ex-a: the cell that assigns ch99_ex_a raised an error (ZeroDivisionError: division by zero); "
        "fix it and run it again"
    ), msg
    assert "expected" not in msg
    ran("ch99_ex_a = [1.0, 2.0]")  # run again, without error: the crash is forgotten
    assert (
        classroom.form("ch99-ex-a", "ch99_ex_a", [1.0, 2.0], 2, "two numbers") is None
    )
    assert "expected 2 number(s) (two numbers), got 1" in classroom.form(
        "ch99-ex-a", "ch99_ex_a", 1.0, 2, "two numbers"
    )
    assert "finite" in classroom.form(
        "ch99-ex-a", "ch99_ex_a", [1.0, np.inf], 2, "two numbers"
    )
    assert "got str" in classroom.form(
        "ch99-ex-a", "ch99_ex_a", "abc", 2, "two numbers"
    )
    ran(
        "other = 1 / 0", ZeroDivisionError("division by zero")
    )  # another cell's crash is not this answer's
    assert (
        classroom.form("ch99-ex-a", "ch99_ex_a", [1.0, 2.0], 2, "two numbers") is None
    )
    classroom._CRASHED.clear()
    assert classroom.watch() is False  # no IPython kernel here: nothing to follow


def test_watch_follows_the_cells_of_an_ipython_shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        classroom._CRASHED.clear()
        assert shell.run_cell(
            "from dpbook_book.classroom import watch\nwatch()"
        ).success
        shell.run_cell("ch99_ex_b = ...")
        assert not shell.run_cell("ch99_ex_b = [1.0, undefined_name]").success
        assert "NameError" in classroom.form(
            "ch99-ex-b", "ch99_ex_b", shell.user_ns["ch99_ex_b"], 2, "two"
        )
        assert shell.run_cell("ch99_ex_b = [1.0, 2.0]").success
        assert (
            classroom.form(
                "ch99-ex-b", "ch99_ex_b", shell.user_ns["ch99_ex_b"], 2, "two"
            )
            is None
        )
    finally:
        classroom._CRASHED.clear()
        InteractiveShell.clear_instance()
