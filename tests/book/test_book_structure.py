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

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
    title = next(c for c in nb.cells if c.cell_type == "markdown")
    assert nb.cells.index(title) <= 1, (
        "the chapter title follows (at most) the install cell"
    )
    assert title.source.startswith("# "), "the first markdown cell is the chapter title"
    assert not re.match(r"# \d", title.source), "the table of contents numbers chapters"
    assert "{admonition} Learning objectives" in title.source
    assert "{admonition} Summary" in text
    assert re.search(
        r"\{prf:(theorem|proposition|lemma|corollary|definition|algorithm|remark)\}",
        text,
    )
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^\s*assert\b", code, re.M), (
        "a simulation or computation checks a result"
    )
    # seeded: numpy generators, or the peer libraries' own random_state
    assert "default_rng(" in code or "random_state=" in code, (
        "random numbers are seeded"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_have_collapsed_solutions(path):
    text = _markdown(_read(path))
    exercises = re.findall(r"```\{exercise\}[^\n]*\n:label:\s*(\S+)", text)
    assert len(exercises) >= 2
    for label in exercises:
        start = re.search(
            r"\{solution-start\}\s*" + re.escape(label) + r"\s*\n:class:\s*dropdown",
            text,
        )
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
            assert fig.get("caption"), (
                f"figure without caption in {path.name}: {cell.source[:60]}"
            )
            figures.append(fig[FIGURE_NAME])
    unreferenced = sorted((labels | set(figures)) - refs)
    assert not unreferenced, f"labels never referenced: {unreferenced}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_widget_cells_are_tagged(path):
    for cell in _read(path).cells:
        if cell.cell_type == "code" and re.search(r"^\s*show\(", cell.source, re.M):
            assert "nbval-ignore-output" in cell.metadata.get("tags", []), cell.source[
                :80
            ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_notebooks_do_not_redefine_the_library(path):
    public = _public_names()
    for cell in _read(path).cells:
        if cell.cell_type != "code":
            continue
        # an IPython magic or shell line becomes ``pass`` (keeping its indentation, so that a guarded
        # ``%pip install`` still parses)
        source = re.sub(r"^(\s*)[%!].*$", r"\1pass", cell.source, flags=re.M)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert node.name not in public, (
                    f"{path.name} redefines dpbook's {node.name}"
                )


def _deprecated_names(text):
    """The names ``dpbook.X`` in ``text`` that the library answers with a ``DeprecationWarning`` (a
    name that moved out of the core, keeping its old name for one release)."""
    import warnings

    found = set()
    for name in sorted(set(re.findall(r"(?<![\w.])dpbook\.([A-Za-z_]\w*)", text))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(dpbook, name, None)
        if any(issubclass(w.category, DeprecationWarning) for w in caught):
            found.add(name)
    return found


@pytest.mark.parametrize(
    "path",
    CHAPTERS + sorted((ROOT / "book").glob("*.md")),
    ids=lambda p: p.stem,
)
def test_the_book_uses_no_deprecated_name(path):
    """A chapter teaches the library's current names: none it keeps only for one release."""
    text = (
        "\n".join(c.source for c in _read(path).cells)
        if path.suffix == ".ipynb"
        else path.read_text()
    )
    if path.name == "api.md":  # the reference says which old names still work, and until when
        text = "\n".join(ln for ln in text.splitlines() if "DeprecationWarning" not in ln)
    assert not _deprecated_names(text), path.name


def test_deprecated_name_check_can_fail():
    """The check above finds an old name (it moved to the book's package) and passes current ones."""
    assert _deprecated_names("dpbook.max_sample_variance(0, 1, 5); dpbook.BIT") == {
        "max_sample_variance"
    }


# --- The page a reader sees (issue 14) --------------------------------------------------------------
#
# Each check is a function returning the list of its problems in one notebook, so that the tests
# below can run it on every chapter and, once, on a deliberately broken notebook to show it fails.

#: the first cell of every chapter (hidden on the site): installs the library on Colab or in a
#: fresh kernel.  Its first line is the only code line allowed over the width limit.
INSTALL_CELL = (
    "# Colab or a fresh kernel: install the book's library if it is missing (hidden on the site).\n"
    "import importlib.util\n"
    'if importlib.util.find_spec("dpbook") is None:\n'
    '    %pip install --quiet "dpbook[book] @ git+https://github.com/dpbook/dpbook"'
)
MAX_CODE_WIDTH = 88
SHOW_CALL = re.compile(r"^\s*show\(\s*(\w+)", re.M)


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _is_install_cell(cell):
    return cell.cell_type == "code" and cell.source.rstrip("\n") == INSTALL_CELL


def _long_code_lines(nb):
    """Code lines wider than MAX_CODE_WIDTH (the install cell excepted), as ``(cell, line, width)``."""
    return [
        (i, k + 1, len(line))
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and not _is_install_cell(cell)
        for k, line in enumerate(cell.source.splitlines())
        if len(line) > MAX_CODE_WIDTH
    ]


def _install_cell_problems(nb):
    if not nb.cells:
        return ["the notebook has no cells"]
    first = nb.cells[0]
    problems = []
    if not _is_install_cell(first):
        problems.append(
            f"the first cell is not exactly the install cell: {first.source[:80]!r}"
        )
    if "remove-cell" not in _tags(first):
        problems.append(f"the first cell is not tagged remove-cell: {_tags(first)}")
    return problems


def _hidden_cells(nb):
    """Cells other than the install cell that are removed from the page (``remove-cell``)."""
    return [
        (i, cell.source[:60])
        for i, cell in enumerate(nb.cells)
        if "remove-cell" in _tags(cell) and not _is_install_cell(cell)
    ]


def _figure_problems(nb):
    """Each ``show(draw)`` cell is the figure: captioned and named, and drawn nowhere else."""
    problems = []
    cells = [c for c in nb.cells if c.cell_type == "code"]
    for cell in cells:
        for draw in SHOW_CALL.findall(cell.source):
            fig = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            if not (fig.get("caption") and fig.get("name")):
                problems.append(f"show({draw}) has no mystnb figure caption and name")
            # the same view drawn again at its defaults duplicates the figure; drawn at other
            # parameters it is another figure, and must be captioned as one
            again = re.compile(r"(?<![\w.])" + re.escape(draw) + r"\(\s*\)")
            static = re.compile(r"(?<![\w.])" + re.escape(draw) + r"\(")
            for other in cells:
                if other is cell or not static.search(other.source):
                    continue
                if again.search(other.source):
                    problems.append(
                        f"a separate cell also draws {draw}: {other.source[:60]!r}"
                    )
                elif (
                    not other.get("metadata", {})
                    .get("mystnb", {})
                    .get("figure", {})
                    .get("caption")
                ):
                    problems.append(
                        f"an uncaptioned cell draws {draw}: {other.source[:60]!r}"
                    )
    return problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_code_lines_fit_the_column(path):
    long = _long_code_lines(_read(path))
    assert not long, (
        f"{len(long)} code lines over {MAX_CODE_WIDTH} characters (cell, line, width): {long}"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_cell_is_the_install_cell(path):
    problems = _install_cell_problems(_read(path))
    assert not problems, problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_only_the_install_cell_is_removed(path):
    """The set-up cell is folded (``hide-input``), not removed: the reader can see what it defines."""
    hidden = _hidden_cells(_read(path))
    assert not hidden, f"cells tagged remove-cell besides the install cell: {hidden}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_view_is_one_captioned_figure(path):
    problems = _figure_problems(_read(path))
    assert not problems, problems


def _good_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(INSTALL_CELL, metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_markdown_cell("# A chapter"),
        nbformat.v4.new_code_cell("use_style()", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell(
            "show(draw_thing)",
            metadata={
                "mystnb": {"figure": {"caption": "A thing.", "name": "fig-thing"}},
                "tags": ["hide-input", "nbval-ignore-output"],
            },
        ),
    ]
    return nb


def test_page_checks_pass_a_good_notebook_and_flag_broken_ones():
    checks = (_long_code_lines, _install_cell_problems, _hidden_cells, _figure_problems)
    assert not any(check(_good_notebook()) for check in checks)

    broken = _good_notebook()
    broken.cells[2].source = "x = " + "1 + " * 30 + "1"
    assert _long_code_lines(broken) == [(2, 1, len(broken.cells[2].source))]

    for breakage in ("source", "tags", "order"):
        broken = _good_notebook()
        if breakage == "source":
            broken.cells[0].source = INSTALL_CELL.replace("--quiet ", "")
        elif breakage == "tags":
            broken.cells[0].metadata["tags"] = ["hide-cell"]
        else:
            broken.cells[:2] = broken.cells[1::-1]
        assert _install_cell_problems(broken), breakage

    broken = _good_notebook()
    broken.cells[2].metadata["tags"] = ["remove-cell"]
    assert _hidden_cells(broken) == [(2, "use_style()")]

    broken = _good_notebook()
    del broken.cells[3].metadata["mystnb"]
    assert _figure_problems(broken) == [
        "show(draw_thing) has no mystnb figure caption and name"
    ]
    broken = _good_notebook()
    broken.cells.insert(3, nbformat.v4.new_code_cell("draw_thing();"))
    assert len(_figure_problems(broken)) == 1


def test_notation_page_is_in_the_book_and_linked_from_the_intro():
    toc = (ROOT / "_toc.yml").read_text()
    assert re.search(r"^\s*- file: book/notation\s*$", toc, re.M), (
        "book/notation is not in _toc.yml"
    )
    assert re.search(
        r"\{doc\}`(?:[^`<]*<)?notation>?`", (ROOT / "book" / "intro.md").read_text()
    ), "the intro does not link the notation page"
