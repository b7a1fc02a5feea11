"""Count each chapter's code as a reader meets it: visible lines, folded lines, solution lines.

    python tools/code_census.py                  # the chapters in the working tree
    python tools/code_census.py --before HEAD    # and, beside them, the chapters at a git revision

A chapter's code cells fall in four kinds (blank lines are not counted):

=========  ==================================================================================
install    the first cell, removed from the page (``remove-cell``)
folded     a cell whose code the page folds: tagged ``hide-cell``, ``hide-input``,
           ``remove-cell`` or ``remove-input``
solution   a code cell inside an exercise's collapsed solution (``{solution-start}`` ...
           ``{solution-end}``): shown only when the reader opens the solution
visible    every other code cell: what the reader reads on the page
=========  ==================================================================================

The table gives, per chapter, the visible lines, the visible ``assert`` statements, the longest
visible cell, the folded lines and the solution lines.  ``visible_cells`` is the one home of the
classification: the book's structure test reads it too.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDING_TAGS = {"hide-cell", "hide-input", "remove-cell", "remove-input"}
_DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\{(solution-start|solution-end)\}", re.M)
_ASSERT = re.compile(r"^\s*assert\b", re.M)


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _lines(source):
    return [line for line in source.splitlines() if line.strip()]


def classify(nb):
    """Yield ``(kind, cell)`` for each code cell of the notebook ``nb`` (a dict read from JSON)."""
    in_solution = False
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            for m in _DIRECTIVE.finditer(_source(cell)):
                in_solution = m.group(2) == "solution-start"
            continue
        if cell["cell_type"] != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if i == 0 and "remove-cell" in tags:
            yield "install", cell
        elif tags & FOLDING_TAGS:
            yield "folded", cell
        elif in_solution:
            yield "solution", cell
        else:
            yield "visible", cell


def visible_cells(nb):
    """The visible code cells of ``nb``, as ``(cell id, number of non-blank lines, source)``."""
    return [
        (cell.get("id"), len(_lines(_source(cell))), _source(cell))
        for kind, cell in classify(nb)
        if kind == "visible"
    ]


def census(nb):
    """The counts of one notebook: a dict of visible, asserts, longest, folded and solution lines."""
    out = {"visible": 0, "asserts": 0, "longest": 0, "folded": 0, "solution": 0}
    for kind, cell in classify(nb):
        n = len(_lines(_source(cell)))
        if kind in out:
            out[kind] += n
        if kind == "visible":
            out["asserts"] += len(_ASSERT.findall(_source(cell)))
            out["longest"] = max(out["longest"], n)
    return out


def _chapters():
    return sorted((ROOT / "book").glob("part*/*.ipynb"))


def _read_at(revision, path):
    rel = path.relative_to(ROOT).as_posix()
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:{rel}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(text)


COLUMNS = ("visible", "asserts", "longest", "folded", "solution")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", metavar="REV", help="also count the chapters at this git revision"
    )
    args = parser.parse_args(argv)
    rows, totals = [], {}
    for path in _chapters():
        now = census(json.loads(path.read_text()))
        cells = [str(now[c]) for c in COLUMNS]
        if args.before:
            then = census(_read_at(args.before, path))
            cells = [f"{then[c]} -> {now[c]}" for c in COLUMNS]
            for c in COLUMNS:
                totals.setdefault(c, [0, 0])
                totals[c][0] += then[c] if c != "longest" else 0
                totals[c][1] += now[c] if c != "longest" else 0
        else:
            for c in COLUMNS:
                totals.setdefault(c, [0, 0])[1] += now[c] if c != "longest" else 0
        rows.append([path.stem] + cells)
    if args.before:
        total = ["total"] + [
            f"{a} -> {b}" if c != "longest" else "" for c, (a, b) in totals.items()
        ]
    else:
        total = ["total"] + [
            str(b) if c != "longest" else "" for c, (a, b) in totals.items()
        ]
    header = [
        "chapter",
        "visible lines",
        "visible asserts",
        "longest visible cell",
        "folded lines",
        "solution lines",
    ]
    table = [header] + rows + [total]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for k, r in enumerate(table):
        print(
            " | ".join(
                v.ljust(w) if i == 0 else v.rjust(w)
                for i, (v, w) in enumerate(zip(r, widths))
            )
        )
        if k == 0:
            print("-+-".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
