"""The shape every chapter must have (STYLE.md), checked on the committed notebooks.

These are static checks of the notebooks' text: nbval executes them, the strict build renders them.
"""

import ast
import pathlib
import re

import nbformat
import pytest

import dpbook
from dpbook_book import widgets

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("part*/*.ipynb"))
LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
FIGURE_NAME = "name"
REF = re.compile(r"\{(?:prf:ref|ref|numref|eq)\}`(?:[^`<]*<)?([^`>]+)>?`")


def _read(path):
    return nbformat.read(path, as_version=4)


def _markdown(nb):
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _all_references():
    refs = set()
    for path in CHAPTERS + sorted((ROOT / "book").glob("*.md")):
        text = _markdown(_read(path)) if path.suffix == ".ipynb" else path.read_text()
        refs |= set(REF.findall(text))
    return refs


def _public_names():
    names = set(dpbook.__all__)
    for view in widgets.load_all().values():
        names.add(view.draw.__name__)
    return names


def test_there_are_chapters():
    assert len(CHAPTERS) >= 16


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = _read(path)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:80]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_shape(path):
    nb = _read(path)
    text = _markdown(nb)
    assert nb.cells[0].source.startswith("# "), "the first cell is the chapter title"
    assert not re.match(r"# \d", nb.cells[0].source), "the table of contents numbers chapters"
    assert "{admonition} Learning objectives" in nb.cells[0].source
    assert "{admonition} Summary" in text
    assert re.search(r"\{prf:(theorem|proposition|lemma|corollary|definition|algorithm|remark)\}", text)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^\s*assert\b", code, re.M), "a simulation or computation checks a result"
    assert "default_rng(" in code, "random numbers are seeded"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_have_collapsed_solutions(path):
    text = _markdown(_read(path))
    exercises = re.findall(r"```\{exercise\}[^\n]*\n:label:\s*(\S+)", text)
    assert len(exercises) >= 2
    for label in exercises:
        start = re.search(r"\{solution-start\}\s*" + re.escape(label) + r"\s*\n:class:\s*dropdown", text)
        assert start, f"exercise {label} has no collapsed solution"
    assert text.count("{solution-start}") == text.count("{solution-end}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_label_and_figure_is_referenced(path):
    nb = _read(path)
    refs = _all_references()
    labels = set(LABEL.findall(_markdown(nb)))
    figures = []
    for cell in nb.cells:
        fig = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if fig:
            assert fig.get("caption"), f"figure without caption in {path.name}: {cell.source[:60]}"
            figures.append(fig[FIGURE_NAME])
    unreferenced = sorted((labels | set(figures)) - refs)
    assert not unreferenced, f"labels never referenced: {unreferenced}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_widget_cells_are_tagged(path):
    for cell in _read(path).cells:
        if cell.cell_type == "code" and re.search(r"^\s*show\(", cell.source, re.M):
            assert "nbval-ignore-output" in cell.metadata.get("tags", []), cell.source[:80]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_notebooks_do_not_redefine_the_library(path):
    public = _public_names()
    for cell in _read(path).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert node.name not in public, f"{path.name} redefines dpbook's {node.name}"
