"""benchmarks/bench_profiles.py's exit status: 0 within the bound, 1 over it, 2 when a case cannot run or its check
fails.

``.ci/run`` reads the status, so each one is checked here on a real case (the Laplace row, whose profile is one
pair: fast), on a short ε grid.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_profiles  # noqa: E402

FAST = ["--family", "laplace", "--points", "50", "--repeat", "1"]


def test_help(capsys):
    with pytest.raises(SystemExit) as stop:
        bench_profiles.main(["--help"])
    assert stop.value.code == 0
    assert "--points" in capsys.readouterr().out


def test_within_the_bound_exits_0(capsys):
    assert bench_profiles.main(FAST) == 0
    out = capsys.readouterr().out
    assert "laplace b=1.3" in out and "over the bound of 1 s: none" in out


def test_over_the_bound_exits_1_and_names_the_case(capsys):
    assert bench_profiles.main([*FAST, "--limit", "1e-9"]) == 1
    out = capsys.readouterr().out
    assert "OVER" in out and "over the bound of 1e-09 s: laplace b=1.3" in out


def test_an_unknown_row_exits_2(capsys):
    assert bench_profiles.main(["--family", "no-such-row"]) == 2
    assert "could not run" in capsys.readouterr().out


def test_a_case_that_cannot_run_exits_2(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("no peer")

    monkeypatch.setattr(bench_profiles.peers, "pld_bracket", broken)
    assert bench_profiles.main(FAST) == 2
    assert "laplace b=1.3: RuntimeError: no peer" in capsys.readouterr().out


def test_a_profile_below_the_peer_exits_2(monkeypatch, capsys):
    """The check of both: a profile 1% low is below dp_accounting's optimistic δ of the worst pair."""
    exact = bench_profiles.dpbook.privacy_profile

    def low(mech, delta, eps):
        return 0.99 * np.asarray(exact(mech, delta, eps))

    monkeypatch.setattr(bench_profiles.dpbook, "privacy_profile", low)
    assert bench_profiles.main(FAST) == 2
    assert "below the optimistic δ" in capsys.readouterr().out
