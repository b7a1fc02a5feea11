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
import pytest

from dpbook_book import exercises

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))
import assignments  # noqa: E402

pytest.importorskip("otter", reason="otter-grader is pinned in requirements.txt")
CHAPTERS = sorted((ROOT / "book").glob("part*/ch*.ipynb"))
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _otter(*args, cwd, timeout=300):
    run = subprocess.run([sys.executable, "-m", "otter", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    return run


# --- the writer, on a synthetic chapter -------------------------------------------------------------


def _synthetic_book(tmp_path):
    book = tmp_path / "book"
    (book / "part1").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# 99. A test chapter\n\n```{prf:remark} R\n:label: ch99-rem-r\n\nA remark.\n```\n\n"
           "$$\nx = 1\n$$ (ch99-eq-x)\n\n(ch99-sec-s)=\n## A *section*"),
        code("import numpy as np\nfrom dpbook_book.exercises import answer\nrng = np.random.default_rng(7)",
             metadata={"tags": ["hide-input", exercises.SETUP_TAG]}),
        md("```{exercise} Two numbers\n:label: ch99-ex-two\n\nBy {prf:ref}`ch99-rem-r` and {eq}`ch99-eq-x`, see "
           "{ref}`ch99-sec-s` and {ref}`that part <ch99-sec-s>`. Compute them.\n\nYou can check your result with "
           "`dpbook_book.classroom.check(\"ch99-ex-two\", [a, b])` (two numbers).\n```\n\n"
           "````{solution-start} ch99-ex-two\n:class: dropdown\n````"),
        code("a = float(rng.uniform())\nb = np.sqrt(2.0)\nprint(a, b)\n"
             "answer(\"ch99-ex-two\", [a, b],  # the answer, for the checker and the autograder\n"
             "       rel_tol=1e-3, expects=(\"a\", \"b\"))"),
        md("````{solution-end}\n````\n\n```{exercise}\n:label: ch99-ex-prose\n\nProve it.\n```\n\n"
           "````{solution-start} ch99-ex-prose\n:class: dropdown\n````\nBecause.\n````{solution-end}\n````"),
    ]
    nbformat.write(nb, book / "part1" / "ch99_test.ipynb")
    return book


def test_writer_on_a_synthetic_chapter(tmp_path):
    book = _synthetic_book(tmp_path)
    refs = assignments.reference_texts(book)
    assert refs["ch99-rem-r"] == "Remark 99.1" and refs["ch99-eq-x"] == "(99.1)"
    assert refs["ch99-ex-two"] == "Exercise 99.1" and refs["ch99-ex-prose"] == "Exercise 99.2"
    assert refs["ch99-sec-s"] == "A section"
    nb, questions = assignments.assignment_notebook(book / "part1" / "ch99_test.ipynb", book, refs, {})
    assert questions == [("ch99-ex-two", "ch99_ex_two")]
    sources = [c.source for c in nb.cells]
    assert sources[0].startswith("# ASSIGNMENT CONFIG\nname: ch99")
    statement = next(s for s in sources if s.startswith("### Exercise 99.1 (Two numbers)"))
    assert "By Remark 99.1 and (99.1), see A section and that part." in statement
    assert "You can check" not in statement and "`ch99_ex_two` 2 number(s): a, then b" in statement
    solution = next(s for s in sources if "# BEGIN SOLUTION NO PROMPT" in s)
    assert solution.endswith("ch99_ex_two = [a, b]  # SOLUTION") and "answer(" not in solution
    assert "print(a, b)" in solution and "for the checker" not in solution
    hidden = next(s for s in sources if s.startswith("# HIDDEN"))
    want = exercises.compute("ch99-ex-two", book)
    assert repr(want.values[1]) in hidden and "rel_tol=0.001" in hidden
    public = next(s for s in sources if s.startswith("def test_form"))
    assert repr(want.values[1]) not in public and "expected 2 number(s)" in public


def test_unresolved_reference_is_an_error(tmp_path):
    book = _synthetic_book(tmp_path)
    path = book / "part1" / "ch99_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace("{prf:ref}`ch99-rem-r`", "{prf:ref}`ch99-rem-missing`")
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="ch99-rem-missing"):
        assignments.assignment_notebook(path, book, None, {})


def test_chapter_names_and_bad_input(tmp_path):
    assert assignments.chapters(["2"]) == assignments.chapters(["ch02"]) == [CHAPTERS[1]]
    with pytest.raises(ValueError, match="chapter 'ch99'"):
        assignments.chapters(["ch99"])
    with pytest.raises(ValueError, match="no such notebook"):
        assignments.chapters([str(tmp_path / "x.ipynb")])
    with pytest.raises(ValueError, match="not a chapter notebook"):
        assignments.chapter_number("intro.md")


# --- the book's assignments, through otter ------------------------------------------------------------


def test_every_chapter_with_an_answer_has_an_assignment(assigned):
    done, _, _ = assigned
    numeric = {}
    for path in CHAPTERS:
        labels = [ex.label for ex in exercises.chapter_exercises(path) if ex.numeric]
        if labels:
            numeric[f"ch{assignments.chapter_number(path):02d}"] = labels
    assert {folder.name: [q for q, _ in questions] for folder, questions in done} == numeric
    assert sum(len(v) for v in numeric.values()) >= 55


@pytest.fixture(scope="module")
def assigned(tmp_path_factory):
    """Every chapter through otter assign (in this process, the tests not run: test_the_books_solutions_pass_every_test
    runs them), and the largest chapter through the `otter assign` command, which grades the solutions."""
    out = tmp_path_factory.mktemp("assigned")
    done = assignments.write_assignments(CHAPTERS, out, assign=True, run_tests=False)
    folder, _ = max(done, key=lambda fq: len(fq[1]))
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
                state = {"# BEGIN SOLUTION": "solution", "# BEGIN TESTS": "tests"}.get(src.strip(), None)
                continue
            if cell.cell_type != "code":
                continue
            if question is None or state == "solution":
                lines = [ln for ln in src.splitlines() if ln.strip() not in ("# BEGIN SOLUTION NO PROMPT", "# END SOLUTION")]
                exec(exercises._python("\n".join(ln.replace("  # SOLUTION", "") for ln in lines)), ns)
            elif state == "tests":
                body = "\n".join(ln for ln in src.splitlines() if ln.strip() != "# HIDDEN")
                try:
                    exec(body, dict(ns))
                except AssertionError as err:
                    results[question] = results[question] or str(err) or "AssertionError"
    return results


def test_the_books_solutions_pass_every_test(assigned):
    done, _, _ = assigned
    for folder, questions in done:
        nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        results = _grade_in_process(nb)
        assert list(results) == [q for q, _ in questions], folder
        failed = {q: err for q, err in results.items() if err}
        assert not failed, (folder.name, failed)
    # and a wrong value fails its hidden test, with the checker's words
    folder, questions = done[0]
    nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
    label, var = questions[0]
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and re.search(rf"^{var} = .*# SOLUTION$", c.source, flags=re.M)]
    cell.source += f"\n{var} = 1.1 * np.asarray({var}, dtype=float)"
    results = _grade_in_process(nb)
    assert "not yet" in results[label] and all(err is None for q, err in results.items() if q != label), results


def test_otter_assign_every_chapter(assigned):
    done, folder, run = assigned
    # the command runs every test against the solutions and exits non-zero if one fails
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for folder, _ in done:
        student = folder / "dist" / "student" / f"{folder.name}.ipynb"
        zips = list((folder / "dist" / "autograder").glob(f"{folder.name}-autograder_*.zip"))
        assert student.is_file() and len(zips) == 1, folder


def test_student_notebooks_hold_no_answer_and_no_solution(assigned):
    done, _, _ = assigned
    for folder, _ in done:
        nb = nbformat.read(folder / "dist" / "student" / f"{folder.name}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells) + json.dumps(nb.metadata)
        assert "# HIDDEN" not in text and "make_answer" not in text and "BEGIN SOLUTION" not in text, folder
        source = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        for label in re.findall(r"^name: (\S+)$", "\n".join(c.source for c in source.cells), flags=re.M)[1:]:
            var = exercises.variable_name(label)
            assert f"{var} = ...\n" in text + "\n", (folder, var)
            for value in exercises.compute(label).values:
                digits = repr(value).lstrip("-").replace(".", "").strip("0")
                if len(digits) >= 4:  # 0.5, 1.0, 0.25 are in every text
                    assert repr(value) not in text, (folder, label, value)


def _results(folder, submission, tmp):
    (zip_path,) = (folder / "dist-cli" / "autograder").glob(f"{folder.name}-autograder_*.zip")
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
    assert len(scores) >= 3 and all(s == m == 1 for s, m in scores.values()), scores


def test_otter_run_takes_the_point_of_exactly_the_wrong_question(assigned, tmp_path):
    _, folder, _ = assigned
    nb = nbformat.read(folder / "dist-cli" / "autograder" / f"{folder.name}.ipynb", as_version=4)
    questions = re.findall(r'grader\.check\("([^"]+)"\)', "\n".join(c.source for c in nb.cells))
    wrong = questions[1]
    var = exercises.variable_name(wrong)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and re.search(rf"^{var} = ", c.source, flags=re.M)]
    cell.source = re.sub(rf"^({var} = .*)$", r"\1\n" + f"{var} = 1.1 * np.asarray({var}, dtype=float)",
                         cell.source, count=1, flags=re.M)
    submission = tmp_path / f"{folder.name}.ipynb"
    nbformat.write(nb, submission)
    scores = _results(folder, submission, tmp_path)
    assert scores[wrong] == (0, 1), scores
    assert all(s == m == 1 for q, (s, m) in scores.items() if q != wrong), scores
    assert set(scores) == set(questions)
