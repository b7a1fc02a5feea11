"""Write the book's exercises as otter-grader assignments, one per chapter.

    python tools/assignments.py [--out DIR] [--assign] [chapters ...]

    python tools/assignments.py CH --variant SEED [--assign]
    python tools/assignments.py CH --roster roster.csv --variant TERM_SEED [--assign]

For each chapter with exercises, writes ``DIR/chNN/chNN.ipynb`` (``DIR`` is ``_build/assignments``
by default) in otter-grader's assignment format: the assignment's configuration, an install cell
(``dpbook[book,teach]`` when it is missing, as on Colab), the chapter's set-up code (its cells tagged
``exercise-setup``), a table of what the assignment covers (every exercise of the chapter, none
dropped), then per exercise:

* if it has a numeric answer, an autograded question holding its statement, its solution from the
  chapter (the student sees only ``chNN_ex_name = ...``), a public test of the answer's form (it
  ran, how many numbers, all finite) and one hidden test per entry of its value against dpbook's
  answer within the exercise's tolerance (partial credit per entry);
* if its statement asks for a derivation, an explanation, a comparison or a proof (or it has no
  numeric answer), a manually graded written question ``LABEL-written`` whose rubric is the prose of
  the chapter's solution.

Every answer comes from running the solution (:func:`dpbook_book.exercises.compute`); it is written
into the hidden tests only, which otter puts in the autograder, never in the student's notebook.
With ``--variant SEED`` the exercises' declared parameters (:func:`dpbook_book.exercises.variant`)
are drawn for that seed: the statements carry the drawn values, and the answers are those the
solutions compute with them.  With ``--roster FILE`` (a CSV with a ``student`` column, or one id a
line) each student gets their own variant, seeded by the term's seed and their id, in
``DIR/students/ID/chNN/``.

``DIR/chNN/points.yml`` sets each question's points (``LABEL: 2``, or ``LABEL: {points: 2, partial:
false}`` for all-or-nothing); it is written with the defaults the first time and read afterwards.
Questions a teacher adds to ``chNN.ipynb`` (any ``# BEGIN QUESTION`` block whose name is not one this
tool writes) are kept when the assignment is written again.  ``DIR/chNN/solutions-manual.ipynb`` is
the instructor's solutions manual: every exercise with its full solution, prose and code, and the
answers of this variant.

With ``--assign``, also builds the dpbook wheel of this checkout (``pip wheel --no-deps .``) and runs
``otter assign`` on each, writing ``DIR/chNN/dist/student/chNN.ipynb`` (to hand out) and
``DIR/chNN/dist/autograder/`` (the autograder zip: the tests, the wheel, the pinned requirements, the
documented Python, feedback shown once grades are published).  See the README's "Teaching with
Gradescope" and "Grading locally" (``tools/gradebook.py``).  Chapters are named by number (``2``,
``ch02``) or by path; with none, every chapter is written.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import nbformat
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError(
        "tools/assignments.py needs nbformat: pip install -r requirements.txt"
    ) from err

from dpbook_book import exercises

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

#: the Python the project documents (README), which the autograder's environment is created with
PYTHON_VERSION = "3.11"
#: the packages the assignments import besides dpbook itself, pinned in the autograder's requirements
#: as requirements.txt pins them (or, if it does not, as this environment has them)
AUTOGRADER_PACKAGES = (
    "numpy",
    "scipy",
    "matplotlib",
    "ipywidgets",
    "ipython",
    "pillow",
    "nbformat",
)
#: where the autograder zip keeps the dpbook wheel (otter puts a question's ``files`` under ``files/``;
#: Gradescope's set-up installs the requirements from the folder the zip is unpacked in)
WHEEL_DIR = "files"

md, code, raw = (
    nbformat.v4.new_markdown_cell,
    nbformat.v4.new_code_cell,
    nbformat.v4.new_raw_cell,
)


# --- the book's cross-references as text ----------------------------------------------------------

_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
_DOLLAR_EQ = re.compile(r"\$\$\s*\((?P<label>[A-Za-z0-9_:-]+)\)\s*$", re.M)
_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_:-]+)\)=\s*\n#+\s*(?P<title>.+)$", re.M)
_ROLE = re.compile(
    r"\{(?P<role>cite:t|cite:p|cite|prf:ref|ref|numref|eq|doc)\}`(?P<target>[^`]*)`"
)


def chapter_number(path):
    """The chapter's number, from its file name (``ch02_bounded.ipynb`` -> 2)."""
    m = re.match(r"ch(\d+)", Path(path).name)
    if not m:
        raise ValueError(f"path {str(path)!r} is not a chapter notebook (chNN_*.ipynb)")
    return int(m.group(1))


def chapter_title(nb):
    """The first ``# `` heading of a notebook."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if m:
                return m.group(1).strip()
    return ""


def reference_texts(book=BOOK):
    """``{label: text}`` for the book's numbered targets, numbered as the built book numbers them.

    Theorem-like boxes (``{prf:KIND}``) and exercises are numbered per kind within a chapter
    ("Remark 2.3", "Exercise 2.4"), labelled equations per chapter ("(2.1)"); a section target
    ``(label)=`` gives its heading.
    """
    out = {}
    for path in exercises.chapter_notebooks(book):
        k = chapter_number(path)
        nb = nbformat.read(path, as_version=4)
        out[f"doc:{path.stem}"] = f"Chapter {k}"
        counts, eqs = {}, 0
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            lines = cell.source.splitlines()
            events = []  # (line index, kind, label) in order of appearance
            for i, line in enumerate(lines):
                m = exercises.OPEN.match(line)
                if m and (
                    m["name"].startswith("prf:") or m["name"] in ("exercise", "math")
                ):
                    block = "\n".join(
                        lines[i + 1 : exercises.directive_end(lines, i, m["fence"])]
                    )
                    lab = _LABEL.search(block)
                    if lab:
                        events.append((i, m["name"], lab.group(1)))
                e = _DOLLAR_EQ.search(line)
                if e:
                    events.append((i, "math", e["label"]))
            for _, kind, label in events:
                if kind == "math":
                    eqs += 1
                    out[label] = f"({k}.{eqs})"
                else:
                    name = kind.split(":")[-1].capitalize()
                    counts[name] = counts.get(name, 0) + 1
                    out[label] = f"{name} {k}.{counts[name]}"
            for t in _TARGET.finditer(cell.source):
                out[t["label"]] = re.sub(r"[*_`]", "", t["title"]).strip()
    return out


def _bib(book=BOOK):
    """``{key: (authors, year)}`` from the book's references.bib (as the site's author-year style)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from dpbook_site import (
        author_year,
    )  # the lite lab's citations, written the same way

    bib = Path(book).parent / "references.bib"
    return author_year(bib) if bib.is_file() else {}


def plain_references(text, refs, bib, unresolved=None):
    """``text`` with the book's roles written out ("Remark 2.3", "(2.1)", "Liu (2019)")."""

    def one(m):
        role, target = m["role"], m["target"].strip()
        explicit = re.match(
            r"^(?P<title>.+?)\s*<(?P<label>[^>]+)>$", target, flags=re.S
        )
        if explicit:
            return explicit["title"].strip()
        if role.startswith("cite"):
            found = [bib.get(k.strip()) for k in target.split(",")]
            if all(found):
                if role == "cite:t":
                    return "; ".join(f"{a} ({y})" for a, y in found)
                return "(" + "; ".join(f"{a}, {y}" for a, y in found) + ")"
        else:
            key = target if role != "doc" else f"doc:{Path(target).stem}"
            if key in refs:
                return refs[key]
        if unresolved is not None:
            unresolved.append(m.group(0))
        return target

    return _ROLE.sub(one, text)


# --- one assignment --------------------------------------------------------------------------------

_CHECK_LINE = re.compile(
    r"You can check your result with\s+`[^`]*`[^\n]*(?:\n(?!\s*\n)[^\n]*)*", re.S
)

#: the words with which a statement asks for more than a number: such a part becomes a written question
WRITTEN = re.compile(
    r"\b(derive|explain|compare|prove|show that|why|discuss|interpret|justify|argue|comment|"
    r"describe|what happens|which is|where does|closed form|does any|for which|give an? |"
    r"is it|does it|in words)\b",
    re.I,
)

#: default points: an autograded question, and a written one
DEFAULT_POINTS = {"auto": 1, "written": 1}


def written_label(label):
    """The name of the written question of exercise ``label``."""
    return f"{label}-written"


def _variant_call(node):
    """Whether the statement ``node`` is ``targets = variant(...)``."""
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "variant"
    )


def _fix_parameters(code_text, values):
    """The code with each ``targets = variant(...)`` statement replaced by ``targets = values``."""
    tree = ast.parse(code_text)
    lines = code_text.splitlines()
    for node in sorted(
        (n for n in ast.walk(tree) if _variant_call(n)), key=lambda n: -n.lineno
    ):
        label = (
            node.value.args[0].value
            if node.value.args and isinstance(node.value.args[0], ast.Constant)
            else None
        )
        names = [k.arg for k in node.value.keywords]
        drawn = [values[label][n] for n in names] if label in values else None
        if drawn is None:
            raise ValueError(
                f"variant({label!r}, ...) declares parameters that did not run"
            )
        value = repr(drawn[0]) if len(drawn) == 1 else ", ".join(repr(v) for v in drawn)
        targets = " = ".join(ast.unparse(t) for t in node.targets)
        indent = lines[node.lineno - 1][: node.col_offset]
        lines[node.lineno - 1 : node.end_lineno] = [f"{indent}{targets} = {value}"]
    return "\n".join(lines)


def _solution_cell(ex, var, values=None):
    """The solution's code with its ``answer(label, value, ...)`` call turned into ``var = value`` and its
    ``variant(...)`` declaration into the values of this variant (``values``: label -> {name: value})."""
    cells = [exercises._python(c) for c in ex.solution]
    if values:
        cells = [_fix_parameters(c, values) for c in cells]
    for k in range(len(cells) - 1, -1, -1):
        tree = ast.parse(cells[k])
        call = exercises._answer_call(tree, ex.label)
        if call is None:
            continue
        lines = cells[k].splitlines()
        # the value on one line whatever its layout in the call, and the call gone with the comment
        # lines just above it (they speak of the call)
        value = ast.unparse(call.value.args[1])
        before = lines[: call.lineno - 1]
        while before and before[-1].lstrip().startswith("#"):
            before.pop()
        after = lines[call.end_lineno :]
        body = "\n\n".join(c.strip("\n") for c in cells[:k]) + ("\n\n" if k else "")
        body += "\n".join(before + after).strip("\n")
        return (
            f"# BEGIN SOLUTION NO PROMPT\n{body.strip()}\n# END SOLUTION\n"
            f"{var} = {value}  # SOLUTION"
        )
    raise ValueError(
        f"the solution of {ex.label!r} has no answer({ex.label!r}, ...) call"
    )


def _public_test(var, label, n, describe):
    return (
        f"def test_form({var}):\n"
        f"    from dpbook_book.classroom import form\n"
        f"    problem = form({label!r}, {var!r}, {var}, {n}, {describe!r})\n"
        f"    assert problem is None, problem\n"
        f"test_form({var})"
    )


def _hidden_test(var, ans, entry=None):
    """The hidden test of ``ans``: every entry (``entry`` None) or entry ``entry`` alone (partial credit)."""
    values = ", ".join(repr(v) for v in ans.values)
    name = "test_value" if entry is None else f"test_entry_{entry + 1}"
    n = len(ans.values)
    lines = [
        "# HIDDEN",
        f"def {name}({var}):",
        "    from dpbook_book.classroom import compare, form",
        "    from dpbook_book.exercises import make_answer",
        f"    problem = form({ans.label!r}, {var!r}, {var}, {n}, {ans.describe()!r})",
        "    assert problem is None, problem",
        f"    answer = make_answer({ans.label!r}, [{values}], rel_tol={ans.rel_tol!r}, abs_tol={ans.abs_tol!r},",
        f"                         expects={ans.expects!r})",
        f"    verdict = compare(answer, {var})",
    ]
    if entry is None:
        lines.append("    assert verdict.correct, verdict.message")
    else:
        lines += [
            "    import numpy as np",
            f"    entry = {entry}",
            f"    ok = compare(make_answer({ans.label!r}, [{ans.values[entry]!r}], rel_tol={ans.rel_tol!r}, "
            f"abs_tol={ans.abs_tol!r}), np.asarray({var}, dtype=float).ravel()[entry]).correct",
            "    assert ok, verdict.message",
        ]
    lines.append(f"{name}({var})")
    return "\n".join(lines)


def read_points(folder):
    """``{question: (points, partial)}`` from ``folder/points.yml`` (empty if there is none)."""
    import yaml

    path = Path(folder) / "points.yml"
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(
            f"{path}: expected a mapping of question -> points, got {type(data).__name__}"
        )
    out = {}
    for q, v in data.items():
        partial = True
        if isinstance(v, dict):
            partial = v.get("partial", True)
            v = v.get("points")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ValueError(f"{path}: points of {q} must be a number >= 0, got {v!r}")
        if not isinstance(partial, bool):
            raise ValueError(
                f"{path}: partial of {q} must be true or false, got {partial!r}"
            )
        out[str(q)] = (v, partial)
    return out


def _write_points(folder, rows):
    """Write ``folder/points.yml`` with ``rows`` = [(question, points, partial, what)], if it is not there."""
    path = Path(folder) / "points.yml"
    if path.is_file():
        return
    lines = [
        "# Points of each question of this assignment: `question: points`, or `question: {points: 2, partial: false}`",
        "# (an autograded question then gets its points only when every entry is right; by default each",
        "# entry earns its share). Read by tools/assignments.py each time the assignment is written.",
    ]
    for q, pts, partial, what in rows:
        lines.append(
            f"{q}: {pts}  # {what}"
            if partial
            else f"{q}: {{points: {pts}, partial: false}}  # {what}"
        )
    path.write_text("\n".join(lines) + "\n")


def _statement(ex, params, refs, bib, unresolved):
    """The exercise's statement for the assignment: the check hint gone, references written out, and the
    canonical values of its parameters replaced by this variant's."""
    statement = _CHECK_LINE.sub("", ex.statement).strip()
    for name, (p, value) in params.items():
        for canon, drawn in zip(p.canonical_text(), p.drawn_text(value)):
            if canon not in statement:
                raise ValueError(
                    f"{ex.label}: the statement does not write parameter {name} as {canon!r}"
                )
            statement = statement.replace(canon, drawn)
    return plain_references(statement, refs, bib, unresolved)


def _teacher_questions(path, ours):
    """The cells of the ``# BEGIN QUESTION`` blocks of the notebook at ``path`` not named in ``ours``."""
    if not Path(path).is_file():
        return []
    nb = nbformat.read(path, as_version=4)
    kept, block, name = [], None, None
    for cell in nb.cells:
        src = cell.source.strip()
        if cell.cell_type == "raw" and src.startswith("# BEGIN QUESTION"):
            m = re.search(r"^name:\s*(\S+)", src, flags=re.M)
            name, block = (m.group(1) if m else None), [cell]
            continue
        if block is not None:
            block.append(cell)
            if cell.cell_type == "raw" and src.startswith("# END QUESTION"):
                if name not in ours:
                    kept += block
                block = None
    return kept


def install_cell(k):
    """The handout's first cell: installs dpbook and otter where they are missing (Colab), nothing otherwise."""
    commit = _commit()
    ref = f"@{commit}" if commit else ""
    return code(
        "# Colab or a fresh environment: install the book's library and the grader if they are missing\n"
        "# (with the book's requirements installed, this does nothing).\n"
        "import importlib.util\n"
        'if importlib.util.find_spec("dpbook_book") is None or importlib.util.find_spec("otter") is None:\n'
        f'    %pip install --quiet "dpbook[book,teach] @ git+https://github.com/dpbook/dpbook{ref}"',
        metadata={"tags": ["otter_ignore"]},
    )


def _commit():
    try:
        run = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (
        run.stdout.strip()
        if run.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", run.stdout.strip())
        else None
    )


def assignment_notebook(
    chapter, book=BOOK, refs=None, bib=None, variant=None, points=None, extra=()
):
    """The otter-grader source notebook of ``chapter`` (a path), or None if it has no exercise.

    ``variant``: None (the book's values) or a seed; ``points``: ``{question: (points, partial)}``
    (:func:`read_points`); ``extra``: cells of the teacher's own questions, appended.

    Returns ``(notebook, questions)``, ``questions`` being ``[(name, variable or None, points, what), ...]``.
    """
    chapter = Path(chapter)
    k = chapter_number(chapter)
    refs = reference_texts(book) if refs is None else refs
    bib = _bib(book) if bib is None else bib
    points = {} if points is None else points
    nb_src = nbformat.read(chapter, as_version=4)
    title = chapter_title(nb_src)
    every = exercises.chapter_exercises(chapter)
    if not every:
        return None, []
    setup = exercises.setup_cells(chapter)
    if not setup:
        raise ValueError(
            f"{chapter.name} has exercises but no cell tagged {exercises.SETUP_TAG!r}"
        )
    name = f"ch{k:02d}"
    config = {
        "name": name,
        "init_cell": False,  # written below, after the install cell
        "check_all_cell": True,
        "export_cell": {
            "pdf": False,
            "instructions": "Hand in the zip file this cell writes.",
        },
        "run_tests": True,
        "requirements": "requirements.txt",
        "autograder_files": [],  # the dpbook wheel, in the zip's files/ (not in the student's folder)
        "python_version": PYTHON_VERSION,
        "generate": {"show_hidden": True, "show_stdout": True, "pdf": False},
        "tests": {"ok_format": False},
    }
    import yaml

    cells = [
        raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False).strip()),
        install_cell(k),
    ]
    cells.append(
        md(
            f"# Chapter {k} exercises: {title}\n\n"
            f"The exercises of Chapter {k} of *Differential Privacy for Bounded and Nonnegative Statistics*. "
            f"Run the install cell above and the set-up cells below, then for each question with a "
            f"numeric answer write your code and assign your answer to the variable it names, replacing the `...`; "
            f"answer each written question in the text cell below it. `grader.check(...)` runs the question's "
            f"public test, which checks that your answer cell ran and the answer's form (how many numbers, all "
            f"finite); its value is checked when the notebook is graded, within the tolerance the question "
            f"states. Every random draw comes from the generator the set-up cell seeds, so the grader draws "
            f"what you draw."
        )
    )
    cells.append(
        code(
            f'# Initialize Otter\nimport otter\ngrader = otter.Notebook("{name}.ipynb")'
        )
    )
    setup_code = "\n\n".join(c.strip("\n") for c in setup)
    cells.append(
        code(
            setup_code
            + "\n\n# an answer cell that raises is reported as such by the checks\n"
            "from dpbook_book.classroom import watch\n_ = watch()"
        )
    )
    unresolved, questions, body, values, covered = [], [], [], {}, []
    for ex in every:
        heading = refs.get(ex.label, "Exercise")
        if ex.title:
            heading += f" ({plain_references(ex.title, refs, bib, unresolved)})"
        params = exercises.parameters(ex.label, book, variant) if ex.numeric else {}
        values[ex.label] = {n: v for n, (_, v) in params.items()}
        statement = _statement(ex, params, refs, bib, unresolved)
        parts = []
        if ex.numeric:
            ans = exercises.compute(ex.label, book, variant)
            var = exercises.variable_name(ex.label)
            n = len(ans.values)
            what = ans.describe()
            pts, partial = points.get(ex.label, (DEFAULT_POINTS["auto"], True))
            partial = partial and n > 1
            tests = [code(_public_test(var, ex.label, n, what))]
            if partial:
                tests += [code(_hidden_test(var, ans, i)) for i in range(n)]
                share = round(pts / n, 6)
                per = (
                    [0] + [share] * (n - 1) + [round(pts - share * (n - 1), 6)]
                )  # the shares add up to pts
                credit = f"each of its {n} numbers earns {pts / n:.3g} point(s)"
            else:
                tests.append(code(_hidden_test(var, ans)))
                per = [0, pts]
                credit = f"{pts:g} point(s), all or nothing"
            body += [
                raw(f"# BEGIN QUESTION\nname: {ex.label}\npoints: {per}"),
                md(
                    f"### {heading}\n\n{statement}\n\n**Your answer:** assign to `{var}` {n} number(s): {what}. "
                    f"It counts as right within {ans.tolerance()} of dpbook's answer ({credit})."
                ),
                raw("# BEGIN SOLUTION"),
                code(_solution_cell(ex, var, values)),
                raw("# END SOLUTION"),
                raw("# BEGIN TESTS"),
                *tests,
                raw("# END TESTS"),
                raw("# END QUESTION"),
            ]
            questions.append((ex.label, var, pts, "autograded"))
            parts.append(f"`{ex.label}`: autograded, {credit}")
        if not ex.numeric or WRITTEN.search(_CHECK_LINE.sub("", ex.statement)):
            wl = written_label(ex.label)
            pts, _ = points.get(wl, (DEFAULT_POINTS["written"], True))
            ask = (
                "the derivation, explanation or comparison the exercise asks for"
                if ex.numeric
                else "your answer to the exercise"
            )
            rubric = (
                plain_references(ex.prose, refs, bib, unresolved).strip()
                or "(the solution is code only)"
            )
            if params and variant is not None:
                # the prose was written for the book's values: say which numbers it quotes
                fmt = exercises.format_value
                book_values = ", ".join(
                    f"`{k}` = {fmt(p.value)}" for k, (p, _) in params.items()
                )
                drawn = ", ".join(f"`{k}` = {fmt(v)}" for k, (_, v) in params.items())
                rubric = (
                    f"*The book's solution was written for its own values ({book_values}); this variant "
                    f"draws {drawn}: where the rubric quotes a number, expect the one for this variant's "
                    f"values (the solution cell of the question above computes them).*\n\n{rubric}"
                )
            intro = f"### {heading}, written part\n\nWrite {ask}" + (
                " (the numbers go in the question above)."
                if ex.numeric
                else f".\n\n{statement}"
            )
            body += [
                raw(f"# BEGIN QUESTION\nname: {wl}\nmanual: true\npoints: {pts}"),
                md(intro),
                raw("# BEGIN SOLUTION"),
                md(
                    f"**Rubric** (from the book's solution; full marks for an answer that makes these points):\n\n"
                    f"{rubric}"
                ),
                raw("# END SOLUTION"),
                raw("# END QUESTION"),
            ]
            questions.append((wl, None, pts, "written, graded by hand"))
            parts.append(f"`{wl}`: written, graded by hand, {pts:g} point(s)")
        covered.append(f"| {heading} | {'; '.join(parts)} |")
    if unresolved:
        raise ValueError(
            f"{chapter.name}: references the assignment cannot write out: {sorted(set(unresolved))}"
        )
    ours = {q for q, *_ in questions}
    extra = list(extra)
    teacher = sorted(
        {
            m.group(1)
            for c in extra
            if c.cell_type == "raw"
            for m in [re.search(r"^name:\s*(\S+)", c.source, flags=re.M)]
            if m
        }
        - ours
    )
    table = (
        "## What this assignment covers\n\nEvery exercise of the chapter, each as the questions below"
        + (f" (variant {variant})" if variant is not None else "")
        + ":\n\n| Exercise | Questions |\n|---|---|\n"
        + "\n".join(covered)
    )
    if teacher:
        table += (
            "\n\nand the instructor's own question(s): "
            + ", ".join(f"`{t}`" for t in teacher)
            + "."
        )
    cells.append(md(table))
    cells += body + extra
    questions += [(t, None, None, "the instructor's") for t in teacher]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["dpbook"] = {"chapter": k, "variant": variant, "parameters": values}
    return nb, questions


def solutions_manual(chapter, book=BOOK, refs=None, bib=None, variant=None):
    """The instructor's solutions manual of ``chapter``: each exercise's statement (this variant's), its
    full solution (prose and code, the code set to this variant's parameters) and its answer."""
    chapter = Path(chapter)
    k = chapter_number(chapter)
    refs = reference_texts(book) if refs is None else refs
    bib = _bib(book) if bib is None else bib
    title = chapter_title(nbformat.read(chapter, as_version=4))
    unresolved = []
    cells = [
        md(
            f"# Chapter {k}: {title} — solutions manual\n\nFor instructors only: every exercise of the chapter "
            f"with the book's solution"
            + (
                f", for variant {variant} (the prose was written for the book's "
                f"values; the code and the answers are this variant's)"
                if variant is not None
                else ""
            )
            + "."
        ),
        code("\n\n".join(c.strip("\n") for c in exercises.setup_cells(chapter))),
    ]
    for ex in exercises.chapter_exercises(chapter):
        params = exercises.parameters(ex.label, book, variant) if ex.numeric else {}
        values = {ex.label: {n: v for n, (_, v) in params.items()}}
        heading = refs.get(ex.label, "Exercise") + (
            f" ({plain_references(ex.title, refs, bib, unresolved)})"
            if ex.title
            else ""
        )
        cells.append(
            md(
                f"## {heading}\n\n`{ex.label}`\n\n{_statement(ex, params, refs, bib, unresolved)}"
            )
        )
        if ex.prose:
            cells.append(
                md("**Solution.** " + plain_references(ex.prose, refs, bib, unresolved))
            )
        for c in ex.solution:
            cells.append(
                code(_fix_parameters(exercises._python(c), values) if params else c)
            )
        if ex.numeric:
            ans = exercises.compute(ex.label, book, variant)
            got = ", ".join(f"{v:.6g}" for v in ans.values)
            cells.append(
                md(
                    f"**Answer** ({ans.describe()}): {got}; right within {ans.tolerance()}."
                )
            )
    if unresolved:
        raise ValueError(
            f"{chapter.name}: references the manual cannot write out: {sorted(set(unresolved))}"
        )
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def chapters(names=(), book=BOOK):
    """The chapter notebooks named by number (``2``, ``ch02``) or path; all of them with no name."""
    every = exercises.chapter_notebooks(book)
    if not names:
        return every
    out = []
    for name in names:
        p = Path(name)
        if p.suffix == ".ipynb":
            if not p.is_file():
                raise ValueError(f"chapter {name!r}: no such notebook")
            out.append(p)
            continue
        m = re.fullmatch(r"(?:ch)?0*(\d+)", str(name))
        hit = [c for c in every if m and chapter_number(c) == int(m.group(1))]
        if not hit:
            raise ValueError(
                f"chapter {name!r}: not a chapter of the book (give 1-{len(every)}, chNN or a path)"
            )
        out += hit
    return out


def build_wheel(dest):
    """Build the dpbook wheel of this checkout into ``dest``; returns its path."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("dpbook-*.whl"):
        old.unlink()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            str(ROOT),
            "-w",
            str(dest),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wheels = list(dest.glob("dpbook-*.whl"))
    if run.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(
            f"building the dpbook wheel failed:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
        )
    return wheels[0]


def pinned(names=AUTOGRADER_PACKAGES, requirements=ROOT / "requirements.txt"):
    """``name==version`` for each package: as requirements.txt (or the constraints file beside it) pins it,
    else as installed here."""
    from importlib.metadata import PackageNotFoundError, version

    pins = {}
    for path in (Path(requirements), Path(requirements).with_name("constraints.txt")):
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            m = re.match(r"^\s*([A-Za-z0-9_.-]+)==([^\s#;]+)", line)
            if m:
                pins.setdefault(m.group(1).lower().replace("_", "-"), m.group(2))
    out = []
    for name in names:
        v = pins.get(name.lower().replace("_", "-"))
        if v is None:
            try:
                v = version(name)
            except PackageNotFoundError:
                raise ValueError(
                    f"package {name!r} is neither pinned in requirements.txt nor installed"
                ) from None
        out.append(f"{name}=={v}")
    return out


def autograder_requirements(wheel_name):
    """The autograder's requirements.txt: the packages pinned, and dpbook from the wheel in the zip."""
    commit = _commit() or "unknown"
    return (
        "# pinned as the book's requirements.txt pins them; dpbook from the wheel built from commit "
        f"{commit},\n# which the zip carries under {WHEEL_DIR}/ (installed from the folder the zip is unpacked in)\n"
        + "\n".join(pinned())
        + f"\n./{WHEEL_DIR}/{wheel_name}\n"
    )


def student_seed(term_seed, student):
    """The variant seed of ``student`` (an id) in the term seeded ``term_seed``."""
    digest = hashlib.sha256(f"{int(term_seed)}:{student}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def read_roster(path):
    """The student ids of a roster: a CSV with a ``student`` column (or ``id``, ``sid``, ``email``), or one
    id a line."""
    text = Path(path).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise ValueError(f"roster {path}: empty")
    header = [h.strip().lower() for h in rows[0]]
    col = next(
        (header.index(h) for h in ("student", "id", "sid", "email") if h in header),
        None,
    )
    ids = (
        [r[col].strip() for r in rows[1:] if len(r) > col and r[col].strip()]
        if col is not None
        else [r[0].strip() for r in rows if r and r[0].strip()]
    )
    bad = [s for s in ids if not re.fullmatch(r"[A-Za-z0-9_.@+-]+", s)]
    if bad:
        raise ValueError(
            f"roster {path}: ids must be letters, digits and _.@+-, got {bad[:3]}"
        )
    if len(set(ids)) != len(ids):
        raise ValueError(f"roster {path}: an id appears twice")
    if not ids:
        raise ValueError(f"roster {path}: no student ids")
    return ids


def write_assignments(
    chapter_paths,
    out_dir,
    book=BOOK,
    assign=False,
    run_tests=True,
    variant=None,
    wheel=None,
):
    """Write the assignment of each chapter to ``out_dir/chNN/``; returns ``[(folder, questions), ...]``.

    With ``assign``, builds the dpbook wheel (unless ``wheel`` gives one, or is False: an autograder
    for local grading only, which has no dpbook to install) and runs otter assign on each (in this
    process), which writes ``dist/student`` and ``dist/autograder`` and, with ``run_tests``, grades the
    book's solutions with every test (it raises if one fails).
    """
    out_dir = Path(out_dir)
    refs, bib = reference_texts(book), _bib(book)
    written = []
    if assign and wheel is None:
        wheel = build_wheel(out_dir / ".wheel")
    for path in chapter_paths:
        name = f"ch{chapter_number(path):02d}"
        folder = out_dir / name
        source = folder / f"{name}.ipynb"
        points = read_points(folder)
        generated = {ex.label for ex in exercises.chapter_exercises(path)}
        generated |= {written_label(lab) for lab in generated}
        extra = _teacher_questions(source, generated)
        nb, questions = assignment_notebook(
            path, book, refs, bib, variant=variant, points=points, extra=extra
        )
        if nb is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        if (folder / "dist").exists():
            shutil.rmtree(folder / "dist")
        _write_points(
            folder,
            [
                (q, p, points.get(q, (p, True))[1], what)
                for q, _, p, what in questions
                if p is not None
            ],
        )
        nbformat.write(
            solutions_manual(path, book, refs, bib, variant),
            folder / "solutions-manual.ipynb",
        )
        if wheel:
            for old in folder.glob("dpbook-*.whl"):
                old.unlink()
            shutil.copy(wheel, folder / wheel.name)
            nb.cells[0].source = nb.cells[0].source.replace(
                "autograder_files: []", f"autograder_files:\n- {wheel.name}"
            )
            (folder / "requirements.txt").write_text(
                autograder_requirements(wheel.name)
            )
        else:  # no wheel: an autograder for otter run in this environment only
            (folder / "requirements.txt").write_text(
                "# no dpbook wheel: for local grading only\n"
                + "\n".join(pinned())
                + "\n"
            )
        nbformat.write(nb, source)
        if assign:
            from otter.assign import main as otter_assign

            otter_assign(str(source), str(folder / "dist"), no_run_tests=not run_tests)
        written.append((folder, questions))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "chapters",
        nargs="*",
        help="chapter numbers (2, ch02) or notebook paths (default: all)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "_build" / "assignments",
        help="output folder (default: _build/assignments)",
    )
    parser.add_argument(
        "--assign",
        action="store_true",
        help="also run `otter assign` on each assignment",
    )
    parser.add_argument(
        "--no-run-tests",
        action="store_true",
        help="with --assign: do not grade the book's solutions with the tests (faster)",
    )
    parser.add_argument(
        "--variant",
        type=int,
        default=None,
        metavar="SEED",
        help="draw the exercises' parameters for this seed (an integer >= 0) instead of the book's",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="one variant per student of this roster (CSV), seeded by --variant and the id",
    )
    args = parser.parse_args(argv)
    if args.variant is not None and args.variant < 0:
        parser.error(f"--variant must be an integer >= 0, got {args.variant}")
    try:
        paths = chapters(args.chapters)
        students = read_roster(args.roster) if args.roster else None
    except (ValueError, OSError) as err:
        parser.error(str(err))
    if students is not None and args.variant is None:
        parser.error(
            "--roster needs --variant TERM_SEED (the term's seed, kept private)"
        )
    jobs = (
        [(args.out, args.variant)]
        if students is None
        else [
            (args.out / "students" / s, student_seed(args.variant, s)) for s in students
        ]
    )
    wheel = build_wheel(args.out / ".wheel") if args.assign else None
    for out, seed in jobs:
        for folder, questions in write_assignments(
            paths,
            out,
            assign=args.assign,
            run_tests=not args.no_run_tests,
            variant=seed,
            wheel=wheel,
        ):
            print(
                f"{folder}: {len(questions)} question(s): {', '.join(q for q, *_ in questions)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
