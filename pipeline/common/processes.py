"""Process control for what stages and servers start: free ports, waiting for a server to answer, children
that die with their parent, and stopping a process group we started (never anyone else's)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on loopback now (the server started next binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, proc: subprocess.Popen, timeout: float, log_path: Path | str) -> None:
    """Poll ``url`` until it answers 2xx; fail early if ``proc`` dies, and stop it if it never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if 200 <= r.status < 300:
                    return
        except OSError:
            time.sleep(0.3)
    stop_process_group(proc)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s; see {log_path}")


_PR_SET_PDEATHSIG = 1


def dies_with_this_process(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """``preexec_fn`` for a child that must not outlive the stage that starts it (a crawler, a replay
    server, torchrun): Linux sends the child ``sig`` when this process dies, even by ``kill -9``, which no
    ``finally`` or process-group cleanup here can do. Elsewhere a no-op. The kernel watches the thread that
    forks, so call it from the stage's own thread, which lives as long as the child."""
    parent = os.getpid()
    return lambda: die_with_parent(parent, sig)


def die_with_parent(parent: int | None = None, sig: int = signal.SIGTERM) -> None:
    """This process gets ``sig`` when its parent dies (Linux; elsewhere a no-op): for a process another
    tool started (a torchrun worker), so it cannot outlive that tool killed with -9. ``parent``: the pid
    the parent had, to catch a parent that died before the call took effect."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def run_as_group(cmd: list[str], cwd: Path, env: dict[str, str], grace_s: float = 10.0) -> subprocess.CompletedProcess:
    """Run ``cmd`` to its end, output captured, in a process group of its own that goes with it: when this
    process stops waiting (a cancelled Prefect run's SIGTERM raised here, Ctrl-C) and when ``cmd`` has ended,
    every process left in the group gets SIGTERM, and SIGKILL after ``grace_s``. Why: ``dvc exp run`` starts the
    stage processes and ends without them when it is stopped; a stage left behind kept training, re-parented to
    init, in a clone that was then deleted. ``cmd`` itself also dies with this process (``kill -9`` included)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=dies_with_this_process())
    try:
        out, err = proc.communicate()
    finally:
        stop_group(proc, grace_s)
        proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Every process still in the group ``proc`` leads (one this process made): SIGTERM, then SIGKILL after
    ``grace_s`` for any that ignored it. The leader is reaped as it goes, so an ended group is seen ended."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def stop_process_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
    """Stop a server started with ``start_new_session=True``: its own group, so only what we started.

    ``sig`` first (SIGINT for a Prefect runner, so it pauses its deployments), SIGKILL after ``timeout``.
    """
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
