"""tools/execute_book.py: the chapters executed in parallel into the cache the build reads."""

import pathlib
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
# imported by name, as tests/tools/test_gradebook.py imports its tools: its worker processes receive
# ``_execute`` by reference, which needs the module in sys.modules under its name
sys.path.insert(0, str(ROOT / "tools"))
import execute_book  # noqa: E402
from dpbook_site import cache as site_cache  # noqa: E402


def test_the_chapters_are_the_tables_notebooks_in_order():
    chapters = execute_book.chapters()
    names = [p.relative_to(ROOT).as_posix() for p in chapters]
    assert names == sorted(names, key=lambda n: (n.split("/")[1], n.split("/")[2]))
    assert "book/part4/ch18_bounds.ipynb" in names
    assert len(names) == len(list((ROOT / "book").glob("part*/*.ipynb")))


def test_the_cache_is_the_one_the_build_reads(tmp_path):
    """The build keys its cache on the library (``_ext/dpbook_site/cache.py``): the same folder."""
    assert execute_book.cache_path(tmp_path) == (
        tmp_path.resolve() / "_build" / ".jupyter_cache" / site_cache.library_hash(ROOT)
    )
    settings = execute_book.execution_settings()
    assert settings["allow_errors"] is False and settings["timeout"] > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--jobs", "0"], "--jobs must be at least 1"), (["--budget", "-1"], "--budget")],
)
def test_bad_input(argv, message):
    with pytest.raises(ValueError, match=message):
        execute_book.main(argv)


@pytest.mark.slow
def test_an_executed_chapter_is_found_in_the_cache(tmp_path, capsys):
    """Executed by the tool, a chapter is what the build's cache lookup (myst-nb's) then matches."""
    from jupyter_cache import get_cache

    chapter = ROOT / "book" / "part2" / "ch08_translated_ramps.ipynb"
    assert execute_book.main(["--path-output", str(tmp_path), str(chapter)]) == 0
    assert "ch08_translated_ramps" in capsys.readouterr().out
    cache = get_cache(str(execute_book.cache_path(tmp_path)))
    record = cache.match_cache_notebook(nbformat.read(chapter, as_version=4))
    assert record.data["execution_seconds"] > 0
    other = ROOT / "book" / "part2" / "ch07_log_laplace.ipynb"
    with pytest.raises(KeyError):  # not executed: not in the cache
        cache.match_cache_notebook(nbformat.read(other, as_version=4))


@pytest.mark.parametrize(
    "seconds, wall",
    [
        ([10.0] * 4, 20.0),
        ([30.0, 10.0, 10.0, 10.0], 30.0),
        ([5.0, 4.0, 3.0], 7.0),
        ([], 0.0),
    ],
)
def test_two_core_wall(seconds, wall):
    """The book's wall time on two cores, chapters handed out largest first (what CI compares with the book's
    budget of issue 26, 180 s)."""
    assert execute_book.two_core_wall(seconds, 2) == wall


def test_a_book_budget_must_be_positive():
    with pytest.raises(ValueError, match="--book-budget must be positive"):
        execute_book.main(["--book-budget", "0"])
