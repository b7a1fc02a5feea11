"""Grading a class (tools/gradebook.py) and the autograder on its own (the zip of tools/assignments.py).

Both are slow (minutes: every submission is graded by `otter run`, which starts a kernel), so they are
marked ``slow``.  The first grades a small generated class of Chapter 2: the book's solutions, one
wrong answer, an exported zip, and three hostile submissions (a cell that loops forever, one that
exhausts memory, one that deletes files outside its folder), each of which must cost only its own
grade.  The second unpacks the autograder zip into a fresh virtual environment that cannot see this
checkout, installs what the zip asks for (its pinned requirements and its dpbook wheel; otter and
the pins come from PyPI, the one network access of the test suite) and grades a submission there.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import assignments  # noqa: E402
import gradebook  # noqa: E402

# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("gradebook")

pytest.importorskip("otter", reason="otter-grader is pinned in requirements.txt")
CHAPTER = ROOT / "book" / "part1" / "ch02_bounded.ipynb"


# --- fast: the pieces --------------------------------------------------------------------------------


def test_student_ids_and_bad_input(tmp_path):
    assert (
        gradebook.student_id("ada.ipynb") == "ada"
        and gradebook.student_id("ada_ch02.zip") == "ada"
    )
    assert gradebook.student_id("bo-ch12.ipynb") == "bo"
    with pytest.raises(ValueError, match="no submission"):
        gradebook.submissions(tmp_path)
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / "ada_ch02.zip").write_text("")
    with pytest.raises(ValueError, match="two submissions for student 'ada'"):
        gradebook.submissions(tmp_path)
    with pytest.raises(ValueError, match="is not a folder"):
        gradebook.submissions(tmp_path / "nope")
    with pytest.raises(SystemExit):
        gradebook.main([str(tmp_path / "x.zip"), str(tmp_path), "--jobs", "0"])


def test_gradebook_csv_long_and_wide(tmp_path):
    results = {
        "ada": gradebook.Result("ada", {"q1": (1.0, 1.0), "q2": (0.5, 1.0)}),
        "bo": gradebook.Result("bo", {}, status="time limit (10 s) exceeded"),
    }
    questions = {"q1": 1.0, "q2": 1.0}
    rows = list(
        csv_rows(gradebook.write_gradebook(results, questions, tmp_path / "g.csv"))
    )
    assert rows[0] == ["student", "question", "points", "max_points", "status"]
    assert ["ada", "total", "1.5", "2", "graded"] in rows and [
        "bo",
        "q1",
        "0",
        "1",
        "time limit (10 s) exceeded",
    ] in rows
    wide = list(
        csv_rows(
            gradebook.write_gradebook(results, questions, tmp_path / "w.csv", wide=True)
        )
    )
    assert wide[0] == ["student", "q1", "q2", "total", "max_points", "status"]
    assert wide[1] == ["ada", "1", "0.5", "1.5", "2", "graded"]


def csv_rows(path):
    import csv

    with open(path, newline="") as fh:
        yield from csv.reader(fh)


def test_a_cell_limit_is_added_to_notebooks_and_zips(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, tmp_path / "s.ipynb")
    gradebook.limit_cells(tmp_path / "s.ipynb", 7)
    cells = nbformat.read(tmp_path / "s.ipynb", as_version=4).cells
    assert "alarm(7)" in cells[0].source and cells[1].source == "x = 1"
    with zipfile.ZipFile(tmp_path / "s.zip", "w") as zf:
        zf.writestr("ch02.ipynb", nbformat.writes(nb))
        zf.writestr(".OTTER_LOG", b"log")
    gradebook.limit_cells(tmp_path / "s.zip", 9)
    with zipfile.ZipFile(tmp_path / "s.zip") as zf:
        assert (
            "alarm(9)" in zf.read("ch02.ipynb").decode()
            and zf.read(".OTTER_LOG") == b"log"
        )


# --- slow: a class of Chapter 2, and the autograder in a fresh environment ----------------------------


# session-scoped: built once per worker, even where a worker runs other modules' tests between this module's
@pytest.fixture(scope="session")
def chapter2(tmp_path_factory):
    """Chapter 2's assignment through otter assign, with the wheel: (folder, autograder zip, solutions notebook)."""
    out = tmp_path_factory.mktemp("assignments")
    ((folder, _),) = assignments.write_assignments(
        [CHAPTER], out, assign=True, run_tests=False
    )
    (zip_path,) = (folder / "dist" / "autograder").glob("ch02-autograder_*.zip")
    return folder, zip_path, folder / "dist" / "autograder" / "ch02.ipynb"


def _edited(solutions, var, extra):
    nb = nbformat.read(solutions, as_version=4)
    (cell,) = [
        c
        for c in nb.cells
        if c.cell_type == "code"
        and re.search(rf"^{var} = ", c.source, flags=re.M)
        and "grader" not in c.source
    ]
    cell.source += "\n" + extra
    return nb


def _exported_zip(folder, solutions, dest):
    """The handout filled with the book's solutions and run as a student would, through its export cell:
    the zip it writes (its log holds the public tests' results)."""
    from nbconvert.preprocessors import ExecutePreprocessor

    work = dest.parent / "export"
    shutil.copytree(folder / "dist" / "student", work)
    nb = nbformat.read(work / "ch02.ipynb", as_version=4)
    solved = [
        c.source
        for c in nbformat.read(solutions, as_version=4).cells
        if c.cell_type == "code"
    ]
    filled = 0
    for cell in nb.cells:
        m = (
            re.fullmatch(r"(\w+) = \.\.\.", cell.source.strip())
            if cell.cell_type == "code"
            else None
        )
        if m:
            (cell.source,) = [
                s
                for s in solved
                if re.search(rf"^{m.group(1)} = ", s, flags=re.M) and "grader" not in s
            ]
            filled += 1
    assert filled == 4
    nbformat.write(nb, work / "ch02.ipynb")
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(work)}}
    )
    (zip_path,) = work.glob("ch02_*.zip")
    shutil.copy(zip_path, dest)


@pytest.mark.slow
def test_a_class_is_graded_and_hostile_work_costs_only_its_own_grade(
    chapter2, tmp_path
):
    folder, zip_path, solutions = chapter2
    subs = tmp_path / "submissions"
    subs.mkdir()
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("the teacher's file")
    shutil.copy(solutions, subs / "ada.ipynb")
    nbformat.write(
        _edited(
            solutions,
            "ch02_ex_ratio",
            "ch02_ex_ratio = [1.1 * r for r in ch02_ex_ratio]",
        ),
        subs / "bo.ipynb",
    )
    nbformat.write(
        _edited(solutions, "ch02_ex_ratio", "while True:\n    pass"),
        subs / "loopy.ipynb",
    )
    nbformat.write(
        _edited(
            solutions, "ch02_ex_scale", "hog = [bytearray(10**8) for _ in range(10**4)]"
        ),
        subs / "hog.ipynb",
    )
    vandal = (
        "import glob, os, shutil\n"
        f"for p in [{str(sentinel)!r}, {str(subs)!r}, *glob.glob('/tmp/dpbook-grade-*'), *glob.glob({str(tmp_path)!r} + '/*')]:\n"  # noqa: E501
        "    shutil.rmtree(p, ignore_errors=True)\n"
        "    try:\n        os.remove(p)\n    except OSError:\n        pass"
    )
    nbformat.write(_edited(solutions, "ch02_ex_vector", vandal), subs / "vandal.ipynb")
    _exported_zip(folder, solutions, subs / "cy_ch02.zip")
    before = sorted(p.name for p in subs.iterdir())
    logs = tmp_path / "logs"
    out = tmp_path / "gradebook.csv"
    assert gradebook.isolation() is not None, (
        "this Linux cannot confine a grading process (unshare, setpriv)"
    )
    code = gradebook.main(
        [
            str(zip_path),
            str(subs),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--timeout",
            "900",
            "--cell-timeout",
            "30",
            "--memory",
            "3000",
            "--keep",
            str(logs),
        ]
    )
    assert code == 0
    # the vandal deleted nothing outside its own folder
    assert (
        sentinel.read_text() == "the teacher's file"
        and sorted(p.name for p in subs.iterdir()) == before
    )
    rows = list(csv_rows(out))
    points = {(r[0], r[1]): float(r[2]) for r in rows[1:]}
    status = {r[0]: r[4] for r in rows[1:]}
    questions = [
        "ch02-ex-one-sided",
        "ch02-ex-ratio",
        "ch02-ex-scale",
        "ch02-ex-vector",
    ]
    assert {r[1] for r in rows[1:]} == {*questions, "total"}
    full = {q: 1.0 for q in questions}

    def got(student):
        return {q: round(points[student, q], 6) for q in questions}

    # the vandal may have wrecked its own grading (its scratch folder is the one place it can write)
    assert status.pop("vandal") in ("graded", "grading failed (exit 1)")
    assert status == dict.fromkeys(["ada", "bo", "cy", "hog", "loopy"], "graded"), (
        status
    )
    assert got("ada") == full and got("cy") == full, (got("ada"), got("cy"))
    assert got("bo") == {**full, "ch02-ex-ratio": 0.0}
    assert got("loopy") == {**full, "ch02-ex-ratio": 0.0}
    assert got("hog") == {**full, "ch02-ex-scale": 0.0}
    assert (
        got("vandal")["ch02-ex-vector"] == 0.0 or got("vandal") == full
    )  # its own grade only
    assert points["ada", "total"] == 4.0
    # the exported zip was checked against its log, without a discrepancy
    log = (logs / "cy.log").read_text()
    assert "differs from logged score" not in log and "No log found" not in log, log[
        -2000:
    ]
    # the reasons are in the students' results: the loop ran out of time, the hog out of memory
    loopy = json.loads((logs / "loopy.json").read_text())
    assert any(
        "TimeoutError" in t.get("output", "") or "ran longer" in t.get("output", "")
        for t in loopy["tests"]
    ), loopy["tests"]


@pytest.mark.slow
def test_the_autograder_zip_grades_in_a_fresh_environment(chapter2, tmp_path):
    """Unpacked outside the checkout, installed from its own requirements into a new virtual environment."""
    _, zip_path, solutions = chapter2
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        env_yml = zf.read("environment.yml").decode()
        config = json.loads(zf.read("otter_config.json"))
    wheels = [n for n in names if re.fullmatch(r"files/dpbook-[^/]+\.whl", n)]
    assert len(wheels) == 1, names
    assert "python=3.11" in env_yml and "git+" not in env_yml
    assert config["show_hidden"] is True and config["show_stdout"] is True
    import yaml

    pip = next(
        d["pip"] for d in yaml.safe_load(env_yml)["dependencies"] if isinstance(d, dict)
    )
    assert all(
        re.match(r"^[A-Za-z0-9_.\[\],-]+==[\w.]+$", p) or p == f"./{wheels[0]}"
        for p in pip
    ), pip
    source = tmp_path / "autograder" / "source"  # as Gradescope unpacks it
    source.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env)
    python = env / "bin" / "python"
    clean = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "HOME", "LANG", "PIP_INDEX_URL", "PIP_CACHE_DIR")
    }
    run = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *pip],
        cwd=source,
        env=clean,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import dpbook, dpbook_book, sys; print(dpbook.__file__); "
            "print(dpbook_book.__file__); print(sys.version_info[:2])",
        ],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.returncode == 0, where.stderr
    assert (
        str(ROOT) not in where.stdout
        and str(env) in where.stdout
        and "(3, 11)" in where.stdout
    ), where.stdout
    work = tmp_path / "grade"
    (work / "results").mkdir(parents=True)
    shutil.copy(solutions, work / "ch02.ipynb")
    graded = subprocess.run(
        [
            str(python),
            "-m",
            "otter",
            "run",
            "-a",
            str(zip_path),
            "-o",
            "results",
            "ch02.ipynb",
        ],
        cwd=work,
        env=clean,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    results = json.loads((work / "results" / "results.json").read_text())
    scores = {
        t["name"]: (t["score"], t["max_score"])
        for t in results["tests"]
        if t.get("score") is not None
    }
    assert len(scores) == 4 and all(
        abs(s - 1) < 1e-9 and abs(m - 1) < 1e-9 for s, m in scores.values()
    ), scores
    assert all(
        t.get("visibility") == "after_published"
        for t in results["tests"]
        if t.get("score") is not None
    )
