"""The book's exercises as otter-grader assignments (tools/assignments.py), assigned and graded by otter.

`otter assign` is run on every chapter's assignment: it writes the student and the autograder versions
and runs every test, public and hidden, against the book's own solutions (it fails if one fails). Then
`otter run` (local, no Docker) grades one chapter's notebook filled with the book's solutions (full
marks) and the same notebook with one value wrong (exactly that question loses its point).
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from dpbook_book import exercises

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))
import assignments  # noqa: E402

# otter assign on every chapter, and otter run: minutes, so the README's test command
# skips it and .ci/run runs it (-m slow)
# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("assignments")]

pytest.importorskip("otter", reason="otter-grader is pinned in requirements.txt")
CHAPTERS = sorted((ROOT / "book").glob("part*/ch*.ipynb"))
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _otter(*args, cwd, timeout=300):
    run = subprocess.run(
        [sys.executable, "-m", "otter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return run


# --- the writer, on a synthetic chapter -------------------------------------------------------------


def _synthetic_book(tmp_path):
    book = tmp_path / "book"
    (book / "part1").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md(
            "# 99. A test chapter\n\n```{prf:remark} R\n:label: ch99-rem-r\n\nA remark.\n```\n\n"
            "$$\nx = 1\n$$ (ch99-eq-x)\n\n(ch99-sec-s)=\n## A *section*"
        ),
        code(
            "import numpy as np\nfrom dpbook_book.exercises import answer, variant, vary\nrng = np.random.default_rng(7)",  # noqa: E501
            metadata={"tags": ["hide-input", exercises.SETUP_TAG]},
        ),
        md(
            "```{exercise} Two numbers\n:label: ch99-ex-two\n\nBy {prf:ref}`ch99-rem-r` and {eq}`ch99-eq-x`, see "
            "{ref}`ch99-sec-s` and {ref}`that part <ch99-sec-s>`. Compute them for $k = 2$ and explain.\n\nYou can check your result with "  # noqa: E501
            '`dpbook_book.classroom.check("ch99-ex-two", [a, b])` (two numbers).\n```\n\n'
            "````{solution-start} ch99-ex-two\n:class: dropdown\n````"
        ),
        code(
            'k = variant("ch99-ex-two", k=vary(2.0, among=(3.0, 5.0), text="$k = {}$"))\n'
            "a = float(rng.uniform())\nb = np.sqrt(k)\nprint(a, b)\n"
            'answer("ch99-ex-two", [a, b],  # the answer, for the checker and the autograder\n'
            '       rel_tol=1e-3, expects=("a", f"the root of {k:g}"))'
        ),
        md("The root of $k$ is the number whose square is $k$."),
        md(
            "````{solution-end}\n````\n\n```{exercise}\n:label: ch99-ex-prose\n\nProve it.\n```\n\n"
            "````{solution-start} ch99-ex-prose\n:class: dropdown\n````\nBecause.\n````{solution-end}\n````"
        ),
    ]
    nbformat.write(nb, book / "part1" / "ch99_test.ipynb")
    return book


def test_writer_on_a_synthetic_chapter(tmp_path):
    book = _synthetic_book(tmp_path)
    refs = assignments.reference_texts(book)
    assert refs["ch99-rem-r"] == "Remark 99.1" and refs["ch99-eq-x"] == "(99.1)"
    assert (
        refs["ch99-ex-two"] == "Exercise 99.1"
        and refs["ch99-ex-prose"] == "Exercise 99.2"
    )
    assert refs["ch99-sec-s"] == "A section"
    nb, questions = assignments.assignment_notebook(
        book / "part1" / "ch99_test.ipynb", book, refs, {}
    )
    assert [q[:2] for q in questions] == [
        ("ch99-ex-two", "ch99_ex_two"),
        ("ch99-ex-two-written", None),
        ("ch99-ex-prose-written", None),
    ]
    sources = [c.source for c in nb.cells]
    assert sources[0].startswith("# ASSIGNMENT CONFIG\nname: ch99")
    assert "python_version: '3.11'" in sources[0] and "show_hidden: true" in sources[0]
    assert (
        'find_spec("dpbook_book") is None' in sources[1]
        and "%pip install" in sources[1]
    )
    assert nb.cells[1].metadata["tags"] == [
        "otter_ignore"
    ]  # the install cell is not run when graded
    statement = next(
        s for s in sources if s.startswith("### Exercise 99.1 (Two numbers)")
    )
    assert "By Remark 99.1 and (99.1), see A section and that part." in statement
    assert (
        "You can check" not in statement
        and "`ch99_ex_two` 2 number(s): a, then the root of 2" in statement
    )
    solution = next(s for s in sources if "# BEGIN SOLUTION NO PROMPT" in s)
    assert (
        solution.endswith("ch99_ex_two = [a, b]  # SOLUTION")
        and "answer(" not in solution
    )
    assert (
        "print(a, b)" in solution
        and "for the checker" not in solution
        and "k = 2.0\n" in solution
    )
    hidden = [s for s in sources if s.startswith("# HIDDEN")]
    want = exercises.compute("ch99-ex-two", book)
    assert len(hidden) == 2 and all(
        repr(want.values[1]) in h and "rel_tol=0.001" in h for h in hidden
    )
    public = next(s for s in sources if s.startswith("def test_form"))
    assert (
        repr(want.values[1]) not in public
        and "form('ch99-ex-two', 'ch99_ex_two', ch99_ex_two, 2" in public
    )
    # the written parts: the rubric is the solution's prose; the prose-only exercise is not dropped
    rubric = [s for s in sources if s.startswith("**Rubric**")]
    assert (
        len(rubric) == 2
        and "whose square is $k$" in rubric[0]
        and "Because." in rubric[1]
    )
    covers = next(s for s in sources if s.startswith("## What this assignment covers"))
    assert (
        "`ch99-ex-prose-written`: written" in covers
        and "`ch99-ex-two`: autograded" in covers
    )


def test_a_variant_draws_the_declared_parameters(tmp_path):
    book = _synthetic_book(tmp_path)
    path = book / "part1" / "ch99_test.ipynb"
    refs = assignments.reference_texts(book)
    canon = exercises.compute("ch99-ex-two", book)
    seen = set()
    for seed in range(6):
        ans = exercises.compute("ch99-ex-two", book, variant=seed)
        (k,) = [
            v
            for _, v in exercises.parameters("ch99-ex-two", book, variant=seed).values()
        ]
        assert (
            k in (3.0, 5.0)
            and ans.values[1] == pytest.approx(np.sqrt(k))
            and ans.values[0] == canon.values[0]
        )
        assert ans.expects[1] == f"the root of {k:g}"
        seen.add(k)
        nb, _ = assignments.assignment_notebook(path, book, refs, {}, variant=seed)
        text = "\n".join(c.source for c in nb.cells)
        assert f"for $k = {k:g}$ and explain" in text and "$k = 2$" not in text
        assert (
            f"k = {k!r}\n" in text
            and repr(ans.values[1]) in text
            and repr(canon.values[1]) not in text
        )
    assert seen == {3.0, 5.0}  # both drawn, never the book's
    assert (
        exercises.compute("ch99-ex-two", book, variant=2).values
        == exercises.compute("ch99-ex-two", book, variant=2).values
    )
    # a parameter the statement does not write as declared is an error, not a silently unchanged statement
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace("$k = 2$", "$k=2$")
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="parameter k as '\\$k = 2\\$'"):
        assignments.assignment_notebook(path, book, refs, {}, variant=1)


def test_vary_and_draw_validate():
    from dpbook_book.exercises import draw, vary

    with pytest.raises(ValueError, match="among"):
        vary(1.0, among=())
    with pytest.raises(ValueError, match="other than the canonical"):
        vary(1.0, among=(1.0,))
    with pytest.raises(ValueError, match="shape"):
        vary((1.0, 2.0), among=(3.0,))
    with pytest.raises(ValueError, match="text"):
        vary(1.0, among=(2.0,), text="no placeholder")
    with pytest.raises(ValueError, match="value"):
        vary(float("nan"), among=(2.0,))
    with pytest.raises(ValueError, match="seed"):
        draw("x", {"a": vary(1.0, among=(2.0,))}, -1)
    p = {
        "a": vary(1.0, among=(2.0, 3.0, 4.0)),
        "b": vary((1, 2), among=((3, 4), (5, 6))),
    }
    assert draw("x", p, 5) == draw("x", p, 5)
    assert len({draw("x", p, s)["a"] for s in range(40)}) == 3


def test_points_roster_teacher_questions_and_manual(tmp_path, capsys):
    book = _synthetic_book(tmp_path)
    path = book / "part1" / "ch99_test.ipynb"
    out = tmp_path / "out"
    ((folder, questions),) = assignments.write_assignments([path], out, book=book)
    points = (folder / "points.yml").read_text()
    assert "ch99-ex-two: 1" in points and "ch99-ex-prose-written: 1" in points
    # the teacher sets points, all-or-nothing for one question, and adds a question of their own
    (folder / "points.yml").write_text(
        "ch99-ex-two: {points: 4, partial: false}\nch99-ex-prose-written: 3\n"
    )
    nb = nbformat.read(folder / "ch99.ipynb", as_version=4)
    raw = nbformat.v4.new_raw_cell
    nb.cells += [
        raw("# BEGIN QUESTION\nname: my-own\nmanual: true\npoints: 2"),
        md("Discuss TEACHER-TEXT."),
        raw("# END QUESTION"),
    ]
    nbformat.write(nb, folder / "ch99.ipynb")
    ((folder, questions),) = assignments.write_assignments([path], out, book=book)
    text = "\n".join(
        c.source for c in nbformat.read(folder / "ch99.ipynb", as_version=4).cells
    )
    assert (
        "TEACHER-TEXT" in text
        and "name: my-own" in text
        and "instructor's own question(s): `my-own`" in text
    )
    assert (
        "name: ch99-ex-two\npoints: [0, 4]" in text
        and "name: ch99-ex-prose-written\nmanual: true\npoints: 3" in text
    )
    assert [q for q, *_ in questions][-1] == "my-own"
    with pytest.raises(ValueError, match="points of ch99-ex-two"):
        (folder / "points.yml").write_text("ch99-ex-two: -1\n")
        assignments.read_points(folder)
    # the solutions manual: every exercise, its prose, its code and its answer
    manual = "\n".join(
        c.source
        for c in nbformat.read(folder / "solutions-manual.ipynb", as_version=4).cells
    )
    assert (
        "whose square is $k$" in manual
        and "Because." in manual
        and "np.sqrt(k)" in manual
    )
    assert f"{exercises.compute('ch99-ex-two', book).values[1]:.6g}" in manual
    # a roster: one variant per student
    roster = tmp_path / "roster.csv"
    roster.write_text("name,student\nAda,ada\nBo,bo\n")
    assert assignments.read_roster(roster) == ["ada", "bo"]
    assert (
        assignments.student_seed(1, "ada")
        != assignments.student_seed(1, "bo")
        != assignments.student_seed(2, "bo")
    )
    (tmp_path / "bad.csv").write_text("student\nada\nada\n")
    with pytest.raises(ValueError, match="twice"):
        assignments.read_roster(tmp_path / "bad.csv")


def test_unresolved_reference_is_an_error(tmp_path):
    book = _synthetic_book(tmp_path)
    path = book / "part1" / "ch99_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace(
        "{prf:ref}`ch99-rem-r`", "{prf:ref}`ch99-rem-missing`"
    )
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="ch99-rem-missing"):
        assignments.assignment_notebook(path, book, None, {})


def test_chapter_names_and_bad_input(tmp_path):
    assert (
        assignments.chapters(["2"]) == assignments.chapters(["ch02"]) == [CHAPTERS[1]]
    )
    with pytest.raises(ValueError, match="chapter 'ch99'"):
        assignments.chapters(["ch99"])
    with pytest.raises(ValueError, match="no such notebook"):
        assignments.chapters([str(tmp_path / "x.ipynb")])
    with pytest.raises(ValueError, match="not a chapter notebook"):
        assignments.chapter_number("intro.md")


# --- the book's assignments, through otter ------------------------------------------------------------


def test_every_exercise_of_every_chapter_is_covered(assigned):
    done, _, _ = assigned
    assert len(done) == len(CHAPTERS)
    for folder, questions in done:
        path = next(
            p
            for p in CHAPTERS
            if f"ch{assignments.chapter_number(p):02d}" == folder.name
        )
        names = {q for q, *_ in questions}
        for ex in exercises.chapter_exercises(path):
            # a numeric answer is autograded; a part in words (or an exercise without a number) is written
            assert (ex.label in names) == ex.numeric, (folder.name, ex.label)
            assert ex.numeric or assignments.written_label(ex.label) in names, (
                folder.name,
                ex.label,
            )
        source = "\n".join(
            c.source
            for c in nbformat.read(folder / f"{folder.name}.ipynb", as_version=4).cells
        )
        for q in names:
            assert (
                f"`{q}`"
                in source.split("## What this assignment covers", 1)[1].split(
                    "# BEGIN QUESTION"
                )[0]
            ), q
    numeric = sum(1 for _, qs in done for q, var, *_ in qs if var is not None)
    written = sum(1 for _, qs in done for q, var, *_ in qs if var is None)
    assert numeric >= 55 and written >= 20, (numeric, written)


# session-scoped: built once per worker, even where a worker runs other modules' tests between this module's
@pytest.fixture(scope="session")
def assigned(tmp_path_factory):
    """Every chapter through otter assign (in this process, the tests not run: test_the_books_solutions_pass_every_test
    runs them), and the largest chapter through the `otter assign` command, which grades the solutions."""
    out = tmp_path_factory.mktemp("assigned")
    # no wheel (building one needs setuptools from PyPI): these autograders grade locally; the wheel and a
    # fresh environment are tested in tests/tools/test_gradebook.py (slow)
    done = assignments.write_assignments(
        CHAPTERS, out, assign=True, run_tests=False, wheel=False
    )
    folder, _ = max(done, key=lambda fq: sum(1 for q in fq[1] if q[1] is not None))
    run = _otter("assign", f"{folder.name}.ipynb", "dist-cli", cwd=folder)
    return done, folder, run


def _grade_in_process(nb):
    """Run the source notebook as the autograder does: set-up, each solution, then each test of it.

    Returns ``{question: None or the first failing test's error}``.
    """
    ns, results, question = {"__name__": "assignment"}, {}, None
    state = None
    with exercises._quiet():
        for cell in nb.cells:
            src = cell.source
            if cell.cell_type == "raw":
                m = re.search(r"^name: (\S+)$", src, flags=re.M)
                if src.startswith("# BEGIN QUESTION"):
                    question = m.group(1)
                    results[question] = None
                state = {"# BEGIN SOLUTION": "solution", "# BEGIN TESTS": "tests"}.get(
                    src.strip(), None
                )
                continue
            if cell.cell_type != "code":
                continue
            if "import otter" in src or "%pip install" in src:
                continue  # the grader's own set-up and the install cell: otter runs neither in-process
            if question is None or state == "solution":
                lines = [
                    ln
                    for ln in src.splitlines()
                    if ln.strip()
                    not in ("# BEGIN SOLUTION NO PROMPT", "# END SOLUTION")
                ]
                exec(
                    exercises._python(
                        "\n".join(ln.replace("  # SOLUTION", "") for ln in lines)
                    ),
                    ns,
                )
            elif state == "tests":
                body = "\n".join(
                    ln for ln in src.splitlines() if ln.strip() != "# HIDDEN"
                )
                try:
                    exec(body, dict(ns))
                except AssertionError as err:
                    results[question] = (
                        results[question] or str(err) or "AssertionError"
                    )
    return results


def test_the_books_solutions_pass_every_test(assigned):
    done, _, _ = assigned
    for folder, questions in done:
        nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        results = _grade_in_process(nb)
        assert list(results) == [q for q, *_ in questions], folder
        failed = {q: err for q, err in results.items() if err}
        assert not failed, (folder.name, failed)
    # and a wrong value fails its hidden test, with the checker's words
    folder, questions = done[0]
    nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
    label, var, *_ = questions[0]
    (cell,) = [
        c
        for c in nb.cells
        if c.cell_type == "code"
        and re.search(rf"^{var} = .*# SOLUTION$", c.source, flags=re.M)
    ]
    cell.source += f"\n{var} = 1.1 * np.asarray({var}, dtype=float)"
    results = _grade_in_process(nb)
    assert "not yet" in results[label] and all(
        err is None for q, err in results.items() if q != label
    ), results


#: the seed of the variants the test draws (any seed: the test checks what a variant must be)
VARIANT = 2027


def test_a_variant_of_every_chapter_grades_its_own_solutions(tmp_path):
    """Every chapter's assignment, drawn for one seed: its own solutions pass every test, a perturbed
    answer fails its question, and each declared parameter is drawn, written into the statement and
    changes the hidden answer."""
    varied = 0
    for folder, questions in assignments.write_assignments(
        CHAPTERS, tmp_path, variant=VARIANT
    ):
        nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        # one answer perturbed: that question fails, every other passes with the solution's own code
        label, var = next((q, v) for q, v, *_ in questions if v is not None)
        (cell,) = [
            c
            for c in nb.cells
            if c.cell_type == "code"
            and re.search(rf"^{var} = .*# SOLUTION$", c.source, flags=re.M)
        ]
        cell.source += f"\n{var} = 1.1 * np.asarray({var}, dtype=float) + 0.01"
        results = _grade_in_process(nb)
        assert "not yet" in (results[label] or ""), (folder.name, label, results[label])
        assert not {q: e for q, e in results.items() if e and q != label}, (
            folder.name,
            results,
        )
        for label, var, *_ in questions:
            if var is None:
                continue
            params = exercises.parameters(label, variant=VARIANT)
            if params:
                varied += 1
                book, drawn = (
                    exercises.compute(label),
                    exercises.compute(label, variant=VARIANT),
                )
                assert book.values != drawn.values, label
                assert repr(drawn.values[-1]) in text, label
                book_forms = [
                    repr(v)
                    for v in book.values
                    if len(repr(v).lstrip("-").replace(".", "").strip("0")) >= 4
                    and v not in drawn.values
                ]  # 0.9 or 1.0 are in every text
                # another question's hidden answer may be the same number (ch03-ex-shrinking's 2e-06 is
                # ch03-ex-rate's book answer): its test cells are left out
                own = "\n".join(
                    c.source
                    for c in nb.cells
                    if not re.search(rf"make_answer\('(?!{label}')", c.source)
                )
                assert not [f for f in book_forms if f in own], (label, book_forms)
                for name, (p, value) in params.items():
                    assert value != p.value and value in p.among, (label, name)
                    assert all(t in text for t in p.drawn_text(value)), (label, name)
    # every numeric exercise of the book was drawn (tests/book/test_classroom.py holds that each declares)
    assert varied == sum(e.numeric for e in exercises.book_exercises().values())


def test_otter_assign_every_chapter(assigned):
    done, folder, run = assigned
    # the command runs every test against the solutions and exits non-zero if one fails
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for folder, _ in done:
        student = folder / "dist" / "student" / f"{folder.name}.ipynb"
        zips = list(
            (folder / "dist" / "autograder").glob(f"{folder.name}-autograder_*.zip")
        )
        assert student.is_file() and len(zips) == 1, folder


def test_student_notebooks_hold_no_answer_and_no_solution(assigned):
    done, _, _ = assigned
    for folder, _ in done:
        nb = nbformat.read(
            folder / "dist" / "student" / f"{folder.name}.ipynb", as_version=4
        )
        text = "\n".join(c.source for c in nb.cells) + json.dumps(nb.metadata)
        assert (
            "# HIDDEN" not in text
            and "make_answer" not in text
            and "BEGIN SOLUTION" not in text
        ), folder
        source = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        for label in re.findall(
            r"^name: (\S+)$", "\n".join(c.source for c in source.cells), flags=re.M
        )[1:]:
            if label.endswith("-written"):
                continue
            var = exercises.variable_name(label)
            assert f"{var} = ...\n" in text + "\n", (folder, var)
            for value in exercises.compute(label).values:
                digits = repr(value).lstrip("-").replace(".", "").strip("0")
                if len(digits) >= 4:  # 0.5, 1.0, 0.25 are in every text
                    assert repr(value) not in text, (folder, label, value)


def _results(folder, submission, tmp):
    (zip_path,) = (folder / "dist-cli" / "autograder").glob(
        f"{folder.name}-autograder_*.zip"
    )
    out = tmp / "results"
    out.mkdir()
    run = _otter("run", "-a", str(zip_path), "-o", str(out), str(submission), cwd=tmp)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tests = json.loads((out / "results.json").read_text())["tests"]
    return {t["name"]: (t["score"], t["max_score"]) for t in tests if "score" in t}


def test_otter_run_gives_the_books_solutions_full_marks(assigned, tmp_path):
    _, folder, _ = assigned
    submission = tmp_path / f"{folder.name}.ipynb"
    shutil.copy(folder / "dist-cli" / "autograder" / f"{folder.name}.ipynb", submission)
    scores = _results(folder, submission, tmp_path)
    assert len(scores) >= 3 and all(
        s == pytest.approx(1) and m == pytest.approx(1) for s, m in scores.values()
    ), scores


def test_otter_run_takes_the_point_of_exactly_the_wrong_question(assigned, tmp_path):
    _, folder, _ = assigned
    nb = nbformat.read(
        folder / "dist-cli" / "autograder" / f"{folder.name}.ipynb", as_version=4
    )
    questions = re.findall(
        r'grader\.check\("([^"]+)"\)', "\n".join(c.source for c in nb.cells)
    )
    wrong = questions[1]
    var = exercises.variable_name(wrong)
    (cell,) = [
        c
        for c in nb.cells
        if c.cell_type == "code" and re.search(rf"^{var} = ", c.source, flags=re.M)
    ]
    cell.source = re.sub(
        rf"^({var} = .*)$",
        r"\1\n" + f"{var} = 1.1 * np.asarray({var}, dtype=float)",
        cell.source,
        count=1,
        flags=re.M,
    )
    submission = tmp_path / f"{folder.name}.ipynb"
    nbformat.write(nb, submission)
    scores = _results(folder, submission, tmp_path)
    assert scores[wrong][0] == 0 and scores[wrong][1] == pytest.approx(1), scores
    assert all(
        s == pytest.approx(1) and m == pytest.approx(1)
        for q, (s, m) in scores.items()
        if q != wrong
    ), scores
    assert set(scores) == set(questions)
