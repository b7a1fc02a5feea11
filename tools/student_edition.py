"""Write the student edition of the book's notebooks: exercises kept, solutions removed, outputs cleared.

    python tools/student_edition.py [--out DIR] [notebooks ...]

With no notebook given, every notebook under ``book/`` is converted; the copies keep their path
relative to the repository (``book/part1/ch02_bounded.ipynb`` -> ``DIR/book/part1/ch02_bounded.ipynb``),
``DIR`` being ``_build/student`` by default.

A solution is everything from a ``{solution-start}`` directive to the matching ``{solution-end}``
directive (both removed, with every cell and every line between them; text before the start and
after the end in the same markdown cells is kept), and any self-contained ``{solution}`` directive.
Each removed solution is replaced by one code cell that invites the student's answer.  For an
exercise with a numeric answer (its solution records it with :func:`dpbook_book.exercises.answer`)
the cell assigns it to the variable that the chapter's otter-grader assignment
(``tools/assignments.py``) grades, ``chNN_ex_name = ...``: the student edition and the assignments
are read from the same chapters by the same parser (:mod:`dpbook_book.exercises`).  Every output and
execution count is cleared.  Each copy is marked as a student edition in its metadata, so that
:func:`dpbook_book.classroom.check`, run in the edition's folder, looks past it for the book's
notebooks (the repository around it, or ``DPBOOK_BOOK_DIR``) instead of finding no solution there.

It needs nbformat, declared in the ``book`` extra (``pip install "dpbook[book]"``) and pinned in
``requirements.txt``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

try:
    import nbformat
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError(
        'tools/student_edition.py needs nbformat: pip install "dpbook[book]" '
        "(or pip install -r requirements.txt)"
    ) from err

ROOT = Path(__file__).resolve().parents[1]

from dpbook_book.exercises import (  # noqa: E402 - after the nbformat check
    OPEN as _OPEN,
)
from dpbook_book.exercises import (  # noqa: E402
    STUDENT_EDITION,
    chapter_exercises,
    solution_step,
    variable_name,
)
from dpbook_book.exercises import (  # noqa: E402
    directive_end as _directive_end,
)


def _answer_cell(label, numeric=False):
    """The cell that replaces a solution."""
    text = f"# Your answer to exercise {label} here."
    if numeric:
        text += (
            f"\n# It has a numeric answer, in the order the exercise asks for; the chapter's assignment\n"
            f"# (tools/assignments.py) grades it as question {label}:\n{variable_name(label)} = ..."
        )
    return nbformat.v4.new_code_cell(
        text, metadata={"tags": ["student-answer"]}, id=f"answer-{label}"[:64]
    )


def _fresh(cell, lines):
    """A copy of the markdown ``cell`` holding ``lines``, or None if they are blank."""
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        return None
    new = nbformat.v4.new_markdown_cell(
        text, metadata=nbformat.from_dict(dict(cell.metadata))
    )
    if cell.get("id"):
        new.id = cell.id
    return new


def student_notebook(nb, numeric=()):
    """The student version of the notebook ``nb`` (a new object; ``nb`` is not changed).

    ``numeric`` holds the labels of the exercises with a numeric answer.

    Returns
    -------
    (NotebookNode, list of str)
        The notebook and the labels of the exercises whose solutions were removed.
    """
    out = nbformat.from_dict(dict(nb))
    cells, labels = [], []
    inside = None  # label of the open gated solution
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if inside is None:
                cells.append(nbformat.from_dict(dict(cell)))
            continue
        lines = cell.source.splitlines()
        kept, i = [], 0
        while i < len(lines):
            if inside is not None:
                still, i = solution_step(lines, i)
                inside = inside if still else None
                continue
            m = _OPEN.match(lines[i])
            if m and m["name"] in ("solution-start", "solution"):
                label = (
                    m["arg"].split()[0] if m["arg"] else f"solution-{len(labels) + 1}"
                )
                before = _fresh(cell, kept)
                if before is not None:
                    cells.append(before)
                kept = []
                labels.append(label)
                cells.append(_answer_cell(label, label in numeric))
                end = _directive_end(lines, i, m["fence"])
                if m["name"] == "solution-start":
                    inside = label
                i = end
                continue
            kept.append(lines[i])
            i += 1
        rest = _fresh(cell, kept)
        if rest is not None:
            cells.append(rest)
    if inside is not None:
        raise ValueError(
            f"solution {inside!r} has a {{solution-start}} but no {{solution-end}}"
        )
    seen = set()
    for k, cell in enumerate(cells):
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if not cell.get("id") or cell.id in seen:
            cell.id = f"student-{k}"
        seen.add(cell.id)
    out.cells = cells
    # marked, so the checker looks past this folder for the book's solutions (dpbook_book.exercises.find_book)
    out.metadata.setdefault("dpbook", {})[STUDENT_EDITION] = True
    out.nbformat, out.nbformat_minor = (
        4,
        max(out.get("nbformat_minor", 5), 5),
    )  # cell ids need 4.5
    return out, labels


def book_notebooks(root=ROOT):
    """Every notebook of the book, sorted."""
    return sorted(
        p
        for p in (Path(root) / "book").rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    )


def write_student_edition(notebooks, out_dir, root=ROOT):
    """Convert ``notebooks`` into ``out_dir``; returns ``[(destination, labels), ...]``."""
    out_dir, root = Path(out_dir), Path(root).resolve()
    written = []
    for src in notebooks:
        src = Path(src).resolve()
        try:
            rel = src.relative_to(root)
        except ValueError:
            rel = Path(src.name)
        nb = nbformat.read(src, as_version=4)
        numeric = {ex.label for ex in chapter_exercises(src) if ex.numeric}
        student, labels = student_notebook(nb, numeric)
        dest = out_dir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student, dest)
        written.append((dest, labels))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="notebooks to convert (default: every notebook under book/)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "_build" / "student",
        help="output directory (default: _build/student)",
    )
    args = parser.parse_args(argv)
    notebooks = args.notebooks or book_notebooks()
    if not notebooks:
        parser.error("no notebooks found")
    missing = [str(p) for p in notebooks if not Path(p).is_file()]
    if missing:
        parser.error(f"not found: {', '.join(missing)}")
    for dest, labels in write_student_edition(notebooks, args.out):
        print(f"{dest}: {len(labels)} solution(s) removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
