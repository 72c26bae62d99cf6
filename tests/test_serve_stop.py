"""`make serve`'s stop: the run processes it started get SIGTERM and are counted; Python's own helpers
(multiprocessing's resource tracker, which ignores SIGTERM and ends with its parent) are neither signalled,
waited for, nor reported as runs it stopped."""

from __future__ import annotations

import subprocess
import sys
import time

from flows.serve import stop_children

TRACKER_LIKE = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(300)  "
                "# from multiprocessing.resource_tracker import main")


def test_stop_children_stops_runs_and_leaves_the_resource_tracker_alone():
    tracker = subprocess.Popen([sys.executable, "-c", TRACKER_LIKE])
    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        time.sleep(0.5)
        started = time.monotonic()
        assert stop_children(timeout_s=30) == 1  # the run, not the tracker
        assert time.monotonic() - started < 30, "waited out the timeout on a process that ignores SIGTERM"
        assert run.wait(timeout=5) is not None
        assert tracker.poll() is None  # left to end with its parent
    finally:
        for proc in (tracker, run):
            proc.kill()
            proc.wait()
