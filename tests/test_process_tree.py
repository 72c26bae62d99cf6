"""A command the sweep runs (``dvc exp run`` of a point) takes every process it started with it when it is
stopped: a cancelled point left its stage process training, re-parented to init and deaf to SIGTERM, in a
clone that was then deleted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# the command: a parent that starts a grandchild ignoring SIGTERM (as the stuck stage did), then waits
TREE = """
import os, subprocess, sys, time
code = ("import os, pathlib, signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "pathlib.Path('grandchild.pid').write_text(str(os.getpid()))\\ntime.sleep(600)\\n")
subprocess.Popen([sys.executable, "-c", code])
time.sleep(600)
"""

# the flow-run process: runs the command through the sweep's runner; SIGTERM raises here as Prefect's
# TerminationSignal does in a cancelled run
RUNNER = """
import signal, sys
from pathlib import Path
from pipeline.experiments.sweep import run

class Cancelled(BaseException):
    pass

def stop(*_):
    raise Cancelled()

signal.signal(signal.SIGTERM, stop)
try:
    run([sys.executable, "tree.py"], Path("."), lambda line: None, "the tree")
except Cancelled:
    sys.exit(143)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_stopped_command_ends_its_whole_process_tree(tmp_path, repo):
    (tmp_path / "tree.py").write_text(TREE)
    (tmp_path / "runner.py").write_text(RUNNER)
    runner = subprocess.Popen([sys.executable, "runner.py"], cwd=tmp_path,
                              env=dict(os.environ, PYTHONPATH=str(repo)))
    pid_file = tmp_path / "grandchild.pid"
    grandchild = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (pid_file.exists() and pid_file.read_text()):
            time.sleep(0.1)
        grandchild = int(pid_file.read_text())
        assert _running(grandchild)
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=60) == 143
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(grandchild):
            time.sleep(0.1)
        assert not _running(grandchild), "the command's grandchild outlived the stopped run"
    finally:
        if runner.poll() is None:
            runner.kill()
        if grandchild is not None and _running(grandchild):
            os.kill(grandchild, signal.SIGKILL)
