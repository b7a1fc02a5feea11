"""_ext/dpbook_site/nbval_cache.py: the chapters the test command runs are kept in the build's cache.

A small book (a table of contents, one chapter) is tested by nbval in a pytest of its own with the
plugin registered; what lands in its execution cache must be what jupyter-cache's own execution
(``tools/execute_book.py``'s, the build's) makes of the same chapter: the same outputs cell by cell,
the same execution counts, the same widgets (their ids aside, which are random) and language_info.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))

from dpbook_site.cache import library_hash  # noqa: E402

CELLS = [
    "import ipywidgets as widgets\nprint('a line on stdout')",
    # a trailing ';' hides the value (IPython reads it from the history: nbval alone shows it)
    "x = [1, 2, 3]\nlen(x);",
    "sum(x)",
    "from IPython.display import display\nh = display('first', display_id=True)\nh.update('updated')",
    "s = widgets.IntSlider(value=3, min=0, max=9, description='n')\nwidgets.VBox([s, widgets.HTML('<b>3</b>')])",
    "",
    "import sys\nprint('to stderr', file=sys.stderr)\n2 ** 10",
]

CONFTEST = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(ROOT / "_ext")!r})
from dpbook_site.nbval_cache import NbvalCache

def pytest_configure(config):
    config.pluginmanager.register(NbvalCache(root=Path(__file__).parent), "dpbook-nbval-cache")
"""


def _book(folder: Path, cells, name="chapter"):
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "_toc.yml").write_text(
        f"format: jb-book\nroot: intro\nchapters:\n- file: {name}\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter")] + [
        nbformat.v4.new_code_cell(c) for c in cells
    ]
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _nbval(folder: Path, *args):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--nbval-lax",
            "-q",
            *args,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
    )


def _cached(folder: Path, path: Path):
    from jupyter_cache import get_cache

    cache = get_cache(str(folder / "_build" / ".jupyter_cache" / library_hash(folder)))
    record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
    return record, cache.get_cache_bundle(record.pk).nb


def _ids_out(obj):
    """JSON of ``obj`` with the widgets' random model ids replaced."""
    text = json.dumps(obj, sort_keys=True)
    return re.sub(r"(IPY_MODEL_)?[0-9a-f]{32}", "ID", text)


def test_the_cached_chapter_is_what_jupyter_cache_executes(tmp_path):
    from jupyter_cache.executors.utils import single_nb_execution

    path = _book(tmp_path, CELLS)
    run = _nbval(tmp_path, path.name)
    assert run.returncode == 0, run.stdout + run.stderr
    record, ours = _cached(tmp_path, path)
    assert record.data["execution_seconds"] > 0

    theirs = nbformat.read(path, as_version=4)
    result = single_nb_execution(
        theirs, cwd=str(tmp_path), timeout=60, allow_errors=False
    )
    assert result.err is None, result.exc_string

    # the cache keeps the code cells (in order)
    ours_code = [c for c in ours.cells if c.cell_type == "code"]
    theirs_code = [c for c in theirs.cells if c.cell_type == "code"]
    assert [c.source for c in ours_code] == CELLS == [c.source for c in theirs_code]
    for k, (a, b) in enumerate(zip(ours_code, theirs_code)):
        assert a.execution_count == b.execution_count, (k, a, b)
        assert _ids_out(a.outputs) == _ids_out(b.outputs), (k, a.outputs, b.outputs)
    # the cells this test is about: ';' hides the value, the display was updated, the widget is a view
    assert ours_code[1].outputs == [] and ours_code[1].execution_count == 2
    assert ours_code[3].outputs[0]["data"]["text/plain"] == "'updated'"
    assert "application/vnd.jupyter.widget-view+json" in ours_code[4].outputs[0]["data"]
    assert ours_code[5].execution_count is None  # an empty cell is not executed
    assert ours.metadata["language_info"] == theirs.metadata["language_info"]
    state = "application/vnd.jupyter.widget-state+json"
    ours_w = ours.metadata["widgets"][state]["state"]
    theirs_w = theirs.metadata["widgets"][state]["state"]
    assert sorted(_ids_out(w) for w in ours_w.values()) == sorted(
        _ids_out(w) for w in theirs_w.values()
    )
    assert any(w["model_name"] == "IntSliderModel" for w in ours_w.values())


@pytest.mark.parametrize(
    "cells, args",
    [
        (CELLS[:2] + ["1 / 0"] + CELLS[2:3], ()),  # a failing cell
        (CELLS[:3], ("--deselect", "chapter.ipynb::Cell 1")),  # a cell not run
    ],
    ids=["failed", "deselected"],
)
def test_a_chapter_not_run_whole_and_green_is_not_cached(tmp_path, cells, args):
    path = _book(tmp_path, cells)
    _nbval(tmp_path, path.name, *args)
    with pytest.raises(KeyError):
        _cached(tmp_path, path)


def test_a_notebook_outside_the_table_of_contents_is_not_cached(tmp_path):
    path = _book(tmp_path, CELLS[:2])
    other = tmp_path / "scratch.ipynb"
    other.write_text(path.read_text())
    run = _nbval(tmp_path, other.name)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / "_build").exists()


def test_the_tests_own_plugin_is_registered(pytestconfig):
    # the README's test command runs with it (the root conftest.py registers it)
    assert pytestconfig.pluginmanager.get_plugin("dpbook-nbval-cache") is not None
