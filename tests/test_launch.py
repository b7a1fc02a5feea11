"""Launching a chapter: on Colab (each notebook installs the library itself), on Binder (binder/).

Offline, these check what can be checked without Colab's or Binder's servers:

- every chapter notebook starts (its first code cell) with the guarded install cell, tagged
  ``remove-cell``, and that cell does not reach the built site;
- ``binder/`` holds a light environment: exact pins agreeing with ``requirements.txt``, no package of
  the book's build toolchain, every third-party module the chapters and the library import, and
  a ``postBuild`` installing the repository's own packages.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
BINDER = ROOT / "binder"
SITE = Path(os.environ.get("DPBOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()
REQUIRED = os.environ.get("DPBOOK_SITE_TEST", "").lower() == "required"

INSTALL_CELL = (
    "# Colab or a fresh kernel: install the book's library if it is missing (hidden on the site).\n"
    "import importlib.util\n"
    'if importlib.util.find_spec("dpbook") is None:\n'
    '    %pip install --quiet "dpbook[book] @ git+https://github.com/dpbook/dpbook"'
)
#: strings of the install cell that must not appear in a built page
INSTALL_MARKERS = (
    "find_spec",
    "git+https://github.com/dpbook/dpbook",
    "install the book&#39;s library",
    "install the book's library",
)
#: the repository's own packages (installed on Binder by binder/postBuild)
OWN_PACKAGES = {"dpbook", "dpbook_book"}
#: what Binder's base image (repo2docker) provides: Jupyter and the IPython kernel
BINDER_BASE = {"ipython", "ipykernel", "jupyterlab", "notebook", "jupyter-server"}
#: the book's build and test toolchain: none of it belongs in the Binder environment
TOOLCHAIN = re.compile(
    r"^(jupyter-book|sphinx.*|myst-.*|jupyterlite.*|jupyterlab-myst|selenium|pytest.*|"
    r"nbval|hypothesis|jupyter-cache|pydata-sphinx-theme|docutils)$"
)

NOTEBOOKS = sorted(BOOK.rglob("*.ipynb"))


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path):
    """``{normalized name: version}`` of a requirements file and of the constraints files it names
    (``-c constraints.txt``; its own pins win); a line that is not ``name==version`` (comments and
    ``-e .`` aside) is an error."""
    pins, bad = {}, []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-c "):
            pins = {**_pins(path.parent / line[3:].strip()), **pins}
            continue
        if not line or line.startswith("-e") or line == ".":
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s;]*)", line)
        if m is None:
            bad.append(line)
        else:
            pins[_norm(m.group(1))] = m.group(2)
    assert not bad, f"{path}: not pinned exactly (name==version): {bad}"
    return pins


def _code_cells(nb_path):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _imports(source):
    """Top-level module names imported by Python ``source`` (IPython magics and shell lines dropped)."""
    # a magic or shell line becomes `pass` (it may be the body of an `if`)
    source = "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass"
        if line.lstrip().startswith(("%", "!"))
        else line
        for line in source.splitlines()
    )
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    "notebook", NOTEBOOKS, ids=[p.relative_to(BOOK).as_posix() for p in NOTEBOOKS]
)
def test_chapter_starts_with_the_guarded_install_cell(notebook):
    cells = _code_cells(notebook)
    assert cells, f"{notebook.name} has no code cell"
    first = cells[0]
    source = "".join(first["source"]).rstrip("\n")
    assert source == INSTALL_CELL, (
        f"{notebook.relative_to(ROOT)}: the first code cell must be exactly\n{INSTALL_CELL}\n"
        f"--- it is:\n{source}"
    )
    tags = first.get("metadata", {}).get("tags", [])
    assert "remove-cell" in tags, (
        f"{notebook.relative_to(ROOT)}: the install cell is not tagged remove-cell: {tags}"
    )


def test_install_cell_is_not_on_the_site():
    if not (SITE / "index.html").is_file():
        if REQUIRED:
            pytest.fail(f"no built site at {SITE} (DPBOOK_SITE_TEST=required)")
        pytest.skip(f"no built site at {SITE}")
    pages = [p for p in (SITE / "book").rglob("*.html")]
    assert pages, f"no chapter pages in {SITE / 'book'}"
    shown = {
        p.relative_to(SITE).as_posix(): [
            m for m in INSTALL_MARKERS if m in p.read_text(encoding="utf-8")
        ]
        for p in pages
    }
    shown = {page: markers for page, markers in shown.items() if markers}
    assert not shown, f"the install cell shows on the site: {shown}"


def test_binder_environment_is_light_and_pinned_like_the_repository():
    binder = _pins(BINDER / "requirements.txt")
    repo = _pins(ROOT / "requirements.txt")
    toolchain = sorted(name for name in binder if TOOLCHAIN.match(name))
    assert not toolchain, (
        f"binder/requirements.txt holds build toolchain packages: {toolchain}"
    )
    differ = {
        name: (version, repo.get(name))
        for name, version in binder.items()
        if repo.get(name) != version
    }
    assert not differ, (
        f"binder/requirements.txt pins differ from requirements.txt and its constraints "
        f"(binder, repo): {differ}"
    )
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.1[1-9]", runtime), (
        f"binder/runtime.txt: {runtime!r}"
    )
    post = (BINDER / "postBuild").read_text()
    assert re.search(r"pip install [^\n]*--no-deps[^\n]* \.\s*$", post, re.M), (
        "binder/postBuild does not install the repository (`pip install --no-deps .`)"
    )
    assert os.access(BINDER / "postBuild", os.X_OK), (
        "binder/postBuild is not executable"
    )


def test_binder_environment_covers_every_import():
    """Every third-party module the chapters, ``dpbook`` and ``dpbook_book`` import is installed on Binder."""
    binder = set(_pins(BINDER / "requirements.txt")) | BINDER_BASE
    imported = {}
    for nb in NOTEBOOKS:
        for cell in _code_cells(nb):
            for name in _imports("".join(cell["source"])):
                imported.setdefault(name, nb.relative_to(ROOT).as_posix())
    for package in OWN_PACKAGES:
        for py in sorted((ROOT / package).rglob("*.py")):
            for name in _imports(py.read_text(encoding="utf-8")):
                imported.setdefault(name, py.relative_to(ROOT).as_posix())
    distributions = importlib.metadata.packages_distributions()
    # what pip installs on Binder: the pinned packages and, as installed here, their dependencies
    installed, todo = set(binder), list(binder)
    while todo:
        try:
            requires = importlib.metadata.requires(todo.pop()) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            name = _norm(re.match(r"[A-Za-z0-9._-]+", req).group(0))
            if name not in installed:
                installed.add(name)
                todo.append(name)
    missing = {}
    for name, where in sorted(imported.items()):
        if (
            name in sys.stdlib_module_names
            or name in OWN_PACKAGES
            or name == "__future__"
        ):
            continue
        dists = {_norm(d) for d in distributions.get(name, [name])}
        if not dists & installed:
            missing[name] = (sorted(dists), where)
    assert not missing, (
        f"imported but not installed on Binder (module: distributions, first importer): {missing}"
    )


def test_binder_installs_what_dpbook_declares():
    """The dependencies of dpbook and its ``book``/``peers`` extras are all in the Binder environment."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project.get("dependencies", []))
    for extra in ("book", "peers"):
        declared += project.get("optional-dependencies", {}).get(extra, [])
    binder = set(_pins(BINDER / "requirements.txt")) | BINDER_BASE
    names = {_norm(re.match(r"[A-Za-z0-9._-]+", d).group(0)) for d in declared}
    assert names <= binder, (
        f"dpbook declares {sorted(names - binder)}, missing from binder/requirements.txt"
    )


# --- the JupyterLite copies: made by the site extension, which never imports the book's packages ----------

EXT = ROOT / "_ext" / "dpbook_site"


def book_imports(source: str) -> list[str]:
    """The imports of ``dpbook`` or ``dpbook_book`` (or their modules) in a module's ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level == 0
            else []
        )
        found.extend(n for n in names if n.split(".")[0] in OWN_PACKAGES)
    return found


def test_book_import_check_flags_an_import():
    assert book_imports(
        "import os\nfrom dpbook_book.widgets import X\nimport dpbook.mechanism\n"
    ) == ["dpbook_book.widgets", "dpbook.mechanism"]
    assert book_imports("from .lite import LITE_DIR\nimport sphinx\n") == []


def test_site_extension_imports_no_book_package():
    """``_ext/dpbook_site`` builds the wheel and hashes the library from their files; it imports neither package."""
    modules = sorted(EXT.glob("*.py"))
    assert modules, f"no site extension package at {EXT}"
    found = {p.name: book_imports(p.read_text(encoding="utf-8")) for p in modules}
    assert not any(found.values()), (
        f"the site extension imports the book's packages: {found}"
    )


def test_lite_copies_mark_the_solutions_the_checker_reads():
    """The lite copies' solution boundaries (the site extension's) are the ones the book's checker parses."""
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import dpbook_site
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    from dpbook_book.exercises import solution_events

    n = 0
    for path in sorted(BOOK.rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                assert dpbook_site.solution_boundaries(text) == solution_events(text), (
                    path.name
                )
                n += len(solution_events(text))
    assert n > 0, "no solution in the book"
