"""The book's budget of issue 26 (3 minutes on two cores, 20 s a chapter), reported by ``tools/execute_book.py``.

These tests stand here, not in ``tests/tools/``: pytest's ``norecursedirs`` skips every folder named ``tools``, so
the suite never collects that one.
"""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "execute_book", ROOT / "tools" / "execute_book.py"
)
execute_book = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_book)


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
    """The book's wall time on two cores, chapters handed out largest first (what CI compares with 180 s)."""
    assert execute_book.two_core_wall(seconds, 2) == wall


def test_a_book_budget_must_be_positive():
    with pytest.raises(ValueError, match="--book-budget must be positive"):
        execute_book.main(["--book-budget", "0"])
