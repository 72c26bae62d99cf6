"""DVC's own ways to run experiments side by side: ``dvc exp run --temp`` and ``--queue`` + ``dvc queue start
-j 2`` run a copy under ``.dvc/tmp/exps/``, where ``../shared/...`` (the benchmark files) named a folder that
does not exist. ``make setup`` links ``.dvc/tmp/exps/shared`` to the checkout's ``../shared``."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.shell import run, user_env, with_prefect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # runs dvc exp in clones


def test_temp_and_queued_experiments_find_the_benchmark_files(repo, shared, tmp_path):
    with with_prefect(user_env(), tmp_path / "prefect-home") as env:
        (tmp_path / "shared").symlink_to(shared.resolve())  # params name ../shared
        clone = tmp_path / "clone"
        run(["git", "clone", "-q", repo, clone], tmp_path, env)
        before = run(["dvc", "exp", "run", "--temp", "benchmark_sources"], clone, env, check=False)
        assert before.returncode != 0  # without the link: ../shared is not there from the copy
        run(["make", "exp-links"], clone, env)
        run(["dvc", "exp", "run", "--temp", "-n", "temp-one", "-S", "quail.seed=4", "benchmark_sources"], clone, env)
        for seed in (2, 3):
            run(["dvc", "exp", "run", "--queue", "-n", f"queued-{seed}", "-S", f"quail.seed={seed}",
                  "benchmark_sources"], clone, env)
        # The workers' parent process keeps the stdout it was given until the workers exit, so a pipe here
        # would make this call wait for the whole queue: its output goes to a file, and the loop below waits.
        start_log = tmp_path / "queue-start.log"
        with start_log.open("wb") as out:
            started = subprocess.run(["dvc", "queue", "start", "-j", "2"], cwd=clone, env=env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, timeout=120)
        assert started.returncode == 0, start_log.read_text()
        try:
            deadline = time.monotonic() + 600
            while True:
                status = run(["dvc", "queue", "status"], clone, env).stdout
                if "Queued" not in status and "Running" not in status:
                    break
                assert time.monotonic() < deadline, status + run(["dvc", "queue", "logs", "queued-2"], clone, env,
                                                                 check=False).stdout
                time.sleep(3)
        finally:
            run(["dvc", "queue", "stop", "--kill"], clone, env, check=False)
        assert "Failed" not in status, status + run(["dvc", "queue", "logs", "queued-2"], clone, env, check=False).stdout
        shown = json.loads(run(["dvc", "exp", "show", "--json"], clone, env).stdout)
        names = {exp["revs"][0].get("name") for rev in shown for exp in rev.get("experiments") or []}
        assert {"temp-one", "queued-2", "queued-3"} <= names, names
