"""Write the book's exercises as otter-grader assignments, one per chapter.

    python tools/assignments.py [--out DIR] [--assign] [chapters ...]

For each chapter with exercises that have a numeric answer, writes ``DIR/chNN/chNN.ipynb`` (``DIR``
is ``_build/assignments`` by default) in otter-grader's assignment format: the assignment's
configuration, the chapter's set-up code (its cells tagged ``exercise-setup``), then one question per
exercise with a numeric answer, holding the exercise's statement, its solution from the chapter (the
student sees only ``chNN_ex_name = ...``), a public test of the answer's form (how many numbers,
all finite) and a hidden test of its value against dpbook's answer within the exercise's tolerance.
The value comes from running the solution (:func:`dpbook_book.exercises.compute`); it is written
into the hidden test only, which otter puts in the autograder, never in the student's notebook.

With ``--assign``, also runs ``otter assign`` on each, writing ``DIR/chNN/dist/student/chNN.ipynb``
(to hand out, with the public tests inside) and ``DIR/chNN/dist/autograder/`` (the solutions and the
autograder zip).  A handed-in notebook is graded on the teacher's machine, without Docker, by::

    otter run -a DIR/chNN/dist/autograder/chNN-autograder_*.zip -o RESULTS_DIR submission.ipynb

(``otter grade`` grades a folder of submissions in Docker).  Chapters are named by number (``2``,
``ch02``) or by path; with none, every chapter is written.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

try:
    import nbformat
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError('tools/assignments.py needs nbformat: pip install -r requirements.txt') from err

from dpbook_book import exercises

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

#: the requirements an autograder (otter's zip, e.g. on Gradescope) installs besides otter's own
AUTOGRADER_REQUIREMENTS = 'dpbook[book] @ git+https://github.com/dpbook/dpbook\n'

md, code, raw = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell, nbformat.v4.new_raw_cell


# --- the book's cross-references as text ----------------------------------------------------------

_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
_DOLLAR_EQ = re.compile(r"\$\$\s*\((?P<label>[A-Za-z0-9_:-]+)\)\s*$", re.M)
_TARGET = re.compile(r"^\((?P<label>[A-Za-z0-9_:-]+)\)=\s*\n#+\s*(?P<title>.+)$", re.M)
_ROLE = re.compile(r"\{(?P<role>cite:t|cite:p|cite|prf:ref|ref|numref|eq|doc)\}`(?P<target>[^`]*)`")


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
                if m and (m["name"].startswith("prf:") or m["name"] in ("exercise", "math")):
                    block = "\n".join(lines[i + 1: exercises.directive_end(lines, i, m["fence"])])
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
    from dpbook_site import author_year  # the lite lab's citations, written the same way

    bib = Path(book).parent / "references.bib"
    return author_year(bib) if bib.is_file() else {}


def plain_references(text, refs, bib, unresolved=None):
    """``text`` with the book's roles written out ("Remark 2.3", "(2.1)", "Liu (2019)")."""

    def one(m):
        role, target = m["role"], m["target"].strip()
        explicit = re.match(r"^(?P<title>.+?)\s*<(?P<label>[^>]+)>$", target, flags=re.S)
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

_CHECK_LINE = re.compile(r"You can check your result with `[^`]*`[^\n]*(?:\n(?!\s*\n)[^\n]*)*", re.S)


def _solution_cell(ex, var):
    """The solution's code with its ``answer(label, value, ...)`` call turned into ``var = value``."""
    import ast

    cells = [exercises._python(c) for c in ex.solution]
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
        after = lines[call.end_lineno:]
        body = "\n\n".join(c.strip("\n") for c in cells[:k]) + ("\n\n" if k else "")
        body += "\n".join(before + after).strip("\n")
        return (f"# BEGIN SOLUTION NO PROMPT\n{body.strip()}\n# END SOLUTION\n"
                f"{var} = {value}  # SOLUTION")
    raise ValueError(f"the solution of {ex.label!r} has no answer({ex.label!r}, ...) call")


def _public_test(var, label, n, describe):
    return (f"def test_form({var}):\n"
            f"    import numpy as np\n"
            f"    assert {var} is not ..., {label + ': replace the ... by your answer'!r}\n"
            f"    value = np.asarray({var}, dtype=float).ravel()\n"
            f"    assert value.size == {n}, f{label + ': expected ' + str(n) + ' number(s) (' + describe + '), got '!r} + str(value.size)\n"
            f"    assert np.all(np.isfinite(value)), {label + ': every entry must be a finite number'!r}\n"
            f"test_form({var})")


def _hidden_test(var, ans):
    values = ", ".join(repr(v) for v in ans.values)
    return ("# HIDDEN\n"
            f"def test_value({var}):\n"
            f"    from dpbook_book.classroom import compare\n"
            f"    from dpbook_book.exercises import make_answer\n"
            f"    answer = make_answer({ans.label!r}, [{values}], rel_tol={ans.rel_tol!r}, abs_tol={ans.abs_tol!r},\n"
            f"                         expects={ans.expects!r})\n"
            f"    verdict = compare(answer, {var})\n"
            f"    assert verdict.correct, verdict.message\n"
            f"test_value({var})")


def assignment_notebook(chapter, book=BOOK, refs=None, bib=None):
    """The otter-grader source notebook of ``chapter`` (a path), or None if it has no numeric exercise.

    Returns ``(notebook, [(label, variable), ...])``.
    """
    chapter = Path(chapter)
    k = chapter_number(chapter)
    refs = reference_texts(book) if refs is None else refs
    bib = _bib(book) if bib is None else bib
    nb_src = nbformat.read(chapter, as_version=4)
    title = chapter_title(nb_src)
    numeric = [ex for ex in exercises.chapter_exercises(chapter) if ex.numeric]
    if not numeric:
        return None, []
    setup = exercises.setup_cells(chapter)
    if not setup:
        raise ValueError(f"{chapter.name} has numeric exercises but no cell tagged {exercises.SETUP_TAG!r}")
    name = f"ch{k:02d}"
    config = {
        "name": name,
        "init_cell": True,
        "check_all_cell": True,
        "export_cell": {"pdf": False, "instructions": "Hand in the zip file this cell writes."},
        "run_tests": True,
        "requirements": "requirements.txt",
        "tests": {"ok_format": False},
    }
    import yaml

    cells = [raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False).strip())]
    cells.append(md(
        f"# Chapter {k} exercises: {title}\n\n"
        f"The exercises of Chapter {k} of *Differential Privacy for Bounded and Nonnegative Statistics* "
        f"whose answer is a number or a few numbers, one question each. Run the set-up cell, then for each "
        f"question write your code and assign your answer to the variable it names, replacing the `...`. "
        f"`grader.check(...)` runs the question's public test, which checks the answer's form (how many "
        f"numbers, all finite); its value is checked when the notebook is graded, within the tolerance "
        f"the question states. Every random draw comes from the generator the set-up cell seeds, so the "
        f"grader draws what you draw."))
    cells.append(code("\n\n".join(c.strip("\n") for c in setup)))
    unresolved, questions = [], []
    for ex in numeric:
        ans = exercises.compute(ex.label, book)
        var = exercises.variable_name(ex.label)
        statement = _CHECK_LINE.sub("", ex.statement).strip()
        statement = plain_references(statement, refs, bib, unresolved)
        heading = refs.get(ex.label, "Exercise")
        if ex.title:
            heading += f" ({plain_references(ex.title, refs, bib, unresolved)})"
        n = len(ans.values)
        what = ans.describe()
        cells += [
            raw(f"# BEGIN QUESTION\nname: {ex.label}\npoints: 1\nall_or_nothing: true"),
            md(f"### {heading}\n\n{statement}\n\n**Your answer:** assign to `{var}` {n} number(s): {what}. "
               f"It counts as right within {ans.tolerance()} of dpbook's answer."),
            raw("# BEGIN SOLUTION"),
            code(_solution_cell(ex, var)),
            raw("# END SOLUTION"),
            raw("# BEGIN TESTS"),
            code(_public_test(var, ex.label, n, what)),
            code(_hidden_test(var, ans)),
            raw("# END TESTS"),
            raw("# END QUESTION"),
        ]
        questions.append((ex.label, var))
    if unresolved:
        raise ValueError(f"{chapter.name}: references the assignment cannot write out: {sorted(set(unresolved))}")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb, questions


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
            raise ValueError(f"chapter {name!r}: not a chapter of the book (give 1-{len(every)}, chNN or a path)")
        out += hit
    return out


def write_assignments(chapter_paths, out_dir, book=BOOK, assign=False, run_tests=True):
    """Write the assignment of each chapter to ``out_dir/chNN/``; returns ``[(folder, questions), ...]``.

    With ``assign``, runs otter assign on each (in this process), which writes ``dist/student`` and
    ``dist/autograder`` and, with ``run_tests``, grades the book's solutions with every test (it raises
    if one fails).
    """
    out_dir = Path(out_dir)
    refs, bib = reference_texts(book), _bib(book)
    written = []
    for path in chapter_paths:
        nb, questions = assignment_notebook(path, book, refs, bib)
        if nb is None:
            continue
        name = f"ch{chapter_number(path):02d}"
        folder = out_dir / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{name}.ipynb")
        (folder / "requirements.txt").write_text(AUTOGRADER_REQUIREMENTS)
        if assign:
            from otter.assign import main as otter_assign

            otter_assign(str(folder / f"{name}.ipynb"), str(folder / "dist"), no_run_tests=not run_tests)
        written.append((folder, questions))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter numbers (2, ch02) or notebook paths (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "assignments",
                        help="output folder (default: _build/assignments)")
    parser.add_argument("--assign", action="store_true", help="also run `otter assign` on each assignment")
    parser.add_argument("--no-run-tests", action="store_true",
                        help="with --assign: do not grade the book's solutions with the tests (faster)")
    args = parser.parse_args(argv)
    try:
        paths = chapters(args.chapters)
    except ValueError as err:
        parser.error(str(err))
    for folder, questions in write_assignments(paths, args.out, assign=args.assign, run_tests=not args.no_run_tests):
        print(f"{folder}: {len(questions)} question(s): {', '.join(q for q, _ in questions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
