"""Code that teaches (issue 24): a chapter's visible code is short and shows, its checks are folded.

The classification of cells (visible, folded, solution) is ``tools/code_census.py``'s, which also
prints each chapter's counts.
"""

import importlib.util
import json
import pathlib
import re

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("part*/*.ipynb"))
_spec = importlib.util.spec_from_file_location(
    "code_census", ROOT / "tools" / "code_census.py"
)
census = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(census)

MAX_VISIBLE_LINES = 20
ASSERT = re.compile(r"^\s*assert\b", re.M)
SETUP_TAG = "exercise-setup"


def _problems(nb, setup):
    """Visible cells over MAX_VISIBLE_LINES or holding an ``assert``, as ``(cell id, problem)``.

    ``setup`` selects the exercise set-up cells (True) or every other visible cell (False).
    """
    tags = {c.get("id"): c.get("metadata", {}).get("tags", []) for c in nb["cells"]}
    out = []
    for cell_id, lines, source in census.visible_cells(nb):
        if (SETUP_TAG in tags[cell_id]) != setup:
            continue
        if lines > MAX_VISIBLE_LINES:
            out.append((cell_id, f"{lines} visible lines"))
        if ASSERT.search(source):
            out.append(
                (cell_id, "a visible assert (fold it: tag the check's cell hide-cell)")
            )
    return out


def _read(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_visible_code_is_short_and_its_checks_are_folded(path):
    problems = _problems(_read(path), setup=False)
    assert not problems, problems


# The exercise set-up cells belong to the exercises (their code reruns with every solution); two
# still print a hand-made table with its checks inline.  Strict: the test fails once they are fixed,
# so that this marker is removed.
PENDING_SETUP = set()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_visible_exercise_setup_cells_are_short_too(path, request):
    if path.stem in PENDING_SETUP:
        request.applymarker(
            pytest.mark.xfail(strict=True, reason="exercise set-up cell not yet split")
        )
    problems = _problems(_read(path), setup=True)
    assert not problems, problems


def _notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("pass", metadata={"tags": ["remove-cell"]}),
        *cells,
    ]
    return json.loads(nbformat.writes(nb))


def test_the_checks_flag_long_cells_and_visible_asserts_only():
    short = nbformat.v4.new_code_cell("x = 1\nprint(x)")
    folded_check = nbformat.v4.new_code_cell(
        "assert x == 1", metadata={"tags": ["hide-cell"]}
    )
    assert _problems(_notebook(short, folded_check), setup=False) == []

    long = nbformat.v4.new_code_cell("\n".join(f"x{i} = {i}" for i in range(21)))
    visible_check = nbformat.v4.new_code_cell("x = 1\nassert x == 1")
    problems = _problems(_notebook(long, visible_check), setup=False)
    assert [p for _, p in problems] == [
        "21 visible lines",
        "a visible assert (fold it: tag the check's cell hide-cell)",
    ]

    # a solution's code is not the page's visible code
    solution = [
        nbformat.v4.new_markdown_cell(
            "````{solution-start} ex\n:class: dropdown\n````"
        ),
        nbformat.v4.new_code_cell("assert True"),
        nbformat.v4.new_markdown_cell("````{solution-end}\n````"),
    ]
    assert _problems(_notebook(*solution), setup=False) == []


def test_census_counts_each_kind():
    nb = _notebook(
        nbformat.v4.new_code_cell("a = 1\n\nassert a"),
        nbformat.v4.new_code_cell("b = 2", metadata={"tags": ["hide-input"]}),
    )
    assert census.census(nb) == {
        "visible": 2,
        "asserts": 1,
        "longest": 2,
        "folded": 1,
        "solution": 0,
    }
