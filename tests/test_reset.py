"""``make reset``: the way back after an experiment. An experiment run in the workspace changes params.yaml and
the outputs (and a failed one leaves its bad value in params.yaml); one command restores both, and DVC finds
the stage up to date."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(900)


def _run(cmd: list, cwd: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert res.returncode == 0, f"{cmd}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    return res


def test_one_command_returns_params_and_outputs_after_experiments(repo, tmp_path):
    venv = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{venv}{os.pathsep}{os.environ['PATH']}", DVC_NO_ANALYTICS="1",
               QA_PIPELINE_NO_PROGRESS="1", VENV=str(venv.parent))
    clone = tmp_path / "clone"
    _run(["git", "clone", "-q", repo, clone], tmp_path, env)
    (clone / ".venv").symlink_to(venv.parent)  # the Makefile's venv: already set up
    _run(["dvc", "repro", "sample"], clone, env)
    warc = (clone / "data/sample/bbc.warc.gz").read_bytes()
    params = (clone / "params.yaml").read_text()
    _run(["dvc", "exp", "run", "-S", "sample.n_articles=40", "sample"], clone, env)
    assert (clone / "data/sample/bbc.warc.gz").read_bytes() != warc
    failed = _run(["dvc", "exp", "run", "-S", "quail.pmi_window=ten", "sample"], clone, env, check=False)
    assert failed.returncode != 0 and "ten" in (clone / "params.yaml").read_text()
    _run(["make", "reset"], clone, env)
    assert (clone / "params.yaml").read_text() == params
    assert (clone / "data/sample/bbc.warc.gz").read_bytes() == warc
    assert _run(["dvc", "status", "--json", "sample"], clone, env).stdout.strip() == "{}"
