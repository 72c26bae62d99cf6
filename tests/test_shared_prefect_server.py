"""Plain `dvc repro` without PREFECT_API_URL: the first stage starts one local Prefect server, later stages
reuse it, a running stage keeps it up, and it stops itself (by PID) once idle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

STAGE_LIKE = """
import sys, time
from flows._server import shared_api_url, stage_lease
url = shared_api_url()
print(url, flush=True)
with stage_lease():
    time.sleep(float(sys.argv[1]))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_one_server_is_shared_kept_up_by_a_running_stage_and_stopped_when_idle(repo, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(repo), PREFECT_HOME=str(tmp_path / ".prefect"),
               QA_PIPELINE_PREFECT_IDLE_S="4")
    env.pop("PREFECT_API_URL", None)

    def stage(seconds: float) -> str:
        out = subprocess.run([sys.executable, "-c", STAGE_LIKE, str(seconds)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()

    first = stage(0)
    state = json.loads((tmp_path / ".prefect/shared-server.json").read_text())
    assert first == state["api_url"] and first.startswith("http://127.0.0.1:")
    stage_that_outlives_the_idle_time = stage(8)  # 8 s > 4 s idle: the lease keeps the server up
    assert stage_that_outlives_the_idle_time == first  # the same server, not a second one
    assert _alive(state["supervisor_pid"]) and _alive(state["server_pid"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (_alive(state["server_pid"]) or _alive(state["supervisor_pid"])):
        time.sleep(1)
    assert not _alive(state["server_pid"]) and not _alive(state["supervisor_pid"])  # stopped once idle
    assert not (tmp_path / ".prefect/shared-server.json").exists()
