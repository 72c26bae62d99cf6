"""`make serve`'s stop: the run processes it started get SIGTERM and are counted; Python's own helpers
(multiprocessing's resource tracker, which ignores SIGTERM and ends with its parent) are neither signalled,
waited for, nor reported as runs it stopped.

``stop_children`` stops every child of the process that calls it, so the test calls it in a process of its
own: called in pytest's process it would also stop the servers other tests started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SERVE_LIKE = r"""
import json, subprocess, sys, time
from flows.serve import stop_children

TRACKER_LIKE = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(300)  "
                "# from multiprocessing.resource_tracker import main")
tracker = subprocess.Popen([sys.executable, "-c", TRACKER_LIKE])
run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
try:
    time.sleep(0.5)
    started = time.monotonic()
    stopped = stop_children(timeout_s=30)
    took = time.monotonic() - started
    run_code = run.wait(timeout=5)
    print(json.dumps({"stopped": stopped, "seconds": took, "run_code": run_code,
                      "tracker_alive": tracker.poll() is None}))
finally:
    for proc in (tracker, run):
        proc.kill()
        proc.wait()
"""


def test_stop_children_stops_runs_and_leaves_the_resource_tracker_alone():
    done = subprocess.run([sys.executable, "-c", SERVE_LIKE], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["stopped"] == 1  # the run, not the tracker
    assert result["seconds"] < 30, "waited out the timeout on a process that ignores SIGTERM"
    assert result["run_code"] is not None  # ended (psutil reaped it, so its code reads 0)
    assert result["tracker_alive"]  # left to end with its parent
