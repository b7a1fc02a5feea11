"""CI's slow stage hands tests out one at a time with ``--dist loadgroup`` (``.ci/run``), and the modules whose
fixtures are costly (the wheel in a fresh environment, every chapter's assignment, the gradebook's class) mark
themselves ``xdist_group`` so that one worker builds those fixtures once.  pytest 9.2's structured node ids broke
that silently for pytest-xdist 3.8.0 (pytest-xdist#1386: the mark was ignored, each fixture built on both workers),
which is why ``requirements.txt`` pins pytest 9.1.1.  This test fails if the grouping is lost again."""

import subprocess
import sys
import textwrap


def test_loadgroup_keeps_a_marked_module_on_one_worker(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_grouped.py").write_text(
        textwrap.dedent(
            """
            import os
            import pathlib

            import pytest

            pytestmark = pytest.mark.xdist_group("costly")


            @pytest.mark.parametrize("i", range(6))
            def test_grouped(i):
                here = pathlib.Path(__file__).parent / f"worker-{i}.txt"
                here.write_text(os.environ["PYTEST_XDIST_WORKER"])
            """
        )
    )
    (tmp_path / "test_other.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(6))\ndef test_other(i):\n    pass\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
        + ["--dist", "loadgroup", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers = {(tmp_path / f"worker-{i}.txt").read_text() for i in range(6)}
    assert len(workers) == 1, f"the group ran on {sorted(workers)}"
