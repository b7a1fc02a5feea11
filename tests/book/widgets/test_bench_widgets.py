"""benchmarks/bench_widgets.py's exit status: 0 within budget, 1 over budget, 2 when a view cannot be drawn.

``.ci/run`` reads the status, so each one is checked here on a real view (a few redraws, one run each).
"""

import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from dpbook_book import widgets  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import bench_widgets  # noqa: E402

widgets.load_all()  # once, at collection, as the benchmark's own first step does
FAST = ["--view", "draw_true_epsilon", "--runs", "1", "--retime", "0"]


def test_within_budget_exits_0(capsys):
    assert bench_widgets.main([*FAST, "--budget-ratio", "1000"]) == 0
    out = capsys.readouterr().out
    assert "draw_true_epsilon [defaults]" in out and "over budget: none" in out


def test_over_budget_exits_1_and_names_the_view(capsys):
    assert bench_widgets.main([*FAST, "--budget-ratio", "0.001"]) == 1
    out = capsys.readouterr().out
    assert "OVER BUDGET" in out and "over budget: draw_true_epsilon" in out


def test_a_view_that_cannot_be_drawn_exits_2(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_views_for_bench.py").write_text(
        textwrap.dedent(
            """
            from dpbook_book.widgets import view

            @view(a=(0.0, 1.0, 0.5))
            def draw_broken_for_bench(a=0.0):
                raise RuntimeError("cannot draw")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        status = bench_widgets.main(
            [
                *FAST,
                "--view",
                "draw_broken_for_bench",
                "--import",
                "broken_views_for_bench",
                "--budget-ratio",
                "1000",
            ]
        )
    finally:
        widgets.VIEWS.pop("draw_broken_for_bench", None)
        sys.modules.pop("broken_views_for_bench", None)
    assert status == 2
    out = capsys.readouterr().out
    assert "ERROR draw_broken_for_bench [defaults]: RuntimeError" in out
    assert "draw_true_epsilon [defaults]" in out  # the other views are still timed


def test_a_module_that_cannot_be_imported_exits_2(capsys):
    argv = [*FAST, "--import", "no_such_module_for_bench", "--budget-ratio", "1000"]
    assert bench_widgets.main(argv) == 2
    assert "ERROR import no_such_module_for_bench" in capsys.readouterr().out
