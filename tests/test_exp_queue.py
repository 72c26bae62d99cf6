"""DVC's own ways to run experiments side by side: ``dvc exp run --temp`` and ``--queue`` + ``dvc queue start
-j 2`` run a copy under ``.dvc/tmp/exps/``, where ``../shared/...`` (the benchmark files) named a folder that
does not exist. ``make setup`` links ``.dvc/tmp/exps/shared`` to the checkout's ``../shared``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(900)


def _run(cmd: list, cwd: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert res.returncode == 0, f"{cmd}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    return res


def test_temp_and_queued_experiments_find_the_benchmark_files(repo, shared, tmp_path):
    venv = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{venv}{os.pathsep}{os.environ['PATH']}", DVC_NO_ANALYTICS="1",
               QA_PIPELINE_NO_PROGRESS="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    (tmp_path / "shared").symlink_to(shared.resolve())  # params name ../shared
    clone = tmp_path / "clone"
    _run(["git", "clone", "-q", repo, clone], tmp_path, env)
    before = _run(["dvc", "exp", "run", "--temp", "benchmark_sources"], clone, env, check=False)
    assert before.returncode != 0  # without the link: ../shared is not there from the copy
    _run(["make", "exp-links"], clone, env)
    _run(["dvc", "exp", "run", "--temp", "-n", "temp-one", "-S", "quail.seed=1", "benchmark_sources"], clone, env)
    for seed in (2, 3):
        _run(["dvc", "exp", "run", "--queue", "-n", f"queued-{seed}", "-S", f"quail.seed={seed}",
              "benchmark_sources"], clone, env)
    _run(["dvc", "queue", "start", "-j", "2"], clone, env)
    try:
        deadline = time.monotonic() + 600
        while True:
            status = _run(["dvc", "queue", "status"], clone, env).stdout
            if "Queued" not in status and "Running" not in status:
                break
            assert time.monotonic() < deadline, status
            time.sleep(3)
    finally:
        _run(["dvc", "queue", "stop", "--kill"], clone, env, check=False)
    assert "Failed" not in status, status + _run(["dvc", "queue", "logs", "queued-2"], clone, env, check=False).stdout
    shown = json.loads(_run(["dvc", "exp", "show", "--json"], clone, env).stdout)
    names = {exp["revs"][0].get("name") for rev in shown for exp in rev.get("experiments") or []}
    assert {"temp-one", "queued-2", "queued-3"} <= names, names
