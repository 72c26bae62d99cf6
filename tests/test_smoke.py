"""``make smoke``: every track, crawl to compare, on the tiny profile in a scratch copy, leaving the checkout as
it was (its time is measured by ``benchmarks/smoke.py``, not here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2700)]  # every stage, tiny: 10-17 min alone by instance, 16-27 beside another worker


def _state(repo) -> tuple[str, str]:
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    tracked = subprocess.run(["git", "diff", "--stat"], cwd=repo, capture_output=True, text=True, check=True).stdout
    return status, tracked


def test_smoke_runs_every_track_and_changes_nothing_in_the_checkout(repo, shared, tmp_path):
    before = _state(repo)
    # one torch thread a run: the suite's other worker trains too (benchmarks/results/thread_contention.json)
    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.smoke", "--cpu-threads", "1"], cwd=repo, capture_output=True,
                         text=True, timeout=2600, env={**__import__("os").environ, "TMPDIR": str(tmp_path)})
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    lines = res.stdout.splitlines()
    tracks = [line.split(":")[0] for line in lines if not line.startswith("smoke:")]
    assert tracks == ["nlquad", "quail", "strategyqa"], lines
    assert all(" pairs scored, " in line for line in lines if not line.startswith("smoke:"))
    assert lines[-1].startswith("smoke: passed in ") and "the scratch copy is removed" in lines[-1]
    assert sum(line.startswith("smoke: stage ") for line in lines) >= 50  # one line per stage as it starts
    assert _state(repo) == before  # nothing the checkout holds changed
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())  # the scratch copy is gone
