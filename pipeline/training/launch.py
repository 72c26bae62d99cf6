"""Training on several processes, GPUs or machines without changing a stage: ``distributed`` in params.yaml.

A training function marked :func:`distributable` (span QA, yes/no, multiple choice) runs in the stage's own
process when ``distributed.nproc_per_node`` and ``nnodes`` are 1. Otherwise the stage writes the call (the
function and its already-tokenized arguments) next to the model and runs ``torchrun`` on it: every process
unpickles the call and runs the same function, which ``fine_tune`` then trains under DDP through Accelerate;
rank 0 alone writes the model, the checkpoints' shared files and the statistics the stage reads back. The stage
goes on (prediction, scoring) in its own process, exactly as after a one-process run. Checkpoints and resume
are the loop's own, so a killed multi-process run resumes from its last checkpoint like a single one.

Several machines: node 0 (where ``dvc repro`` runs) also writes ``.training-launch.json`` in the checkout,
which must be on storage every node sees (the models are written there too); on each other node
``python -m pipeline.training.join`` waits for it and starts its own ``torchrun`` into the same rendezvous.

Why a pickle: the features were tokenized once by the stage; the call file is written by this process into
the model folder and read only by the processes it starts (or the join of a machine sharing that storage).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import pickle
import re
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.common.runtime import die_with_parent, dies_with_this_process, free_port, get_logger, stop_process_group

POINTER = Path(".training-launch.json")  # for `python -m pipeline.training.join` on the other nodes
LAUNCH_DIR = ".launch"
ERROR_LINE = re.compile(r"^(?:\[rank\d+\]: )?[A-Za-z_][\w.]*(?:Error|Exception|Interrupt)\b: ")


def under_torchrun() -> bool:
    """Inside a process ``torchrun`` started (it sets these for every worker)."""
    return "TORCHELASTIC_RUN_ID" in os.environ or ("LOCAL_RANK" in os.environ and "WORLD_SIZE" in os.environ)


def torchrun_command(nproc_per_node: int, nnodes: int, rdzv_endpoint: str | None, rdzv_id: str,
                     call: Path) -> list[str]:
    """``torchrun`` (as ``python -m torch.distributed.run``, the interpreter this stage runs on) for one call.
    One node: its own store on a free loopback port. Several: the c10d rendezvous at ``rdzv_endpoint``."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc_per_node)]
    if nnodes > 1:
        cmd += ["--nnodes", str(nnodes), "--rdzv-backend", "c10d", "--rdzv-endpoint", str(rdzv_endpoint),
                "--rdzv-id", rdzv_id]
    else:
        cmd += ["--nnodes", "1", "--master_addr", "127.0.0.1", "--master_port", str(free_port())]
    return cmd + ["-m", "pipeline.training.launch", str(call)]


def run_torchrun(cmd: list[str], what: str) -> None:
    """Run ``cmd``, forwarding its lines to the stage's log (and so to Prefect); stop its whole process
    group if this process is interrupted, so no worker outlives the stage."""
    log = get_logger()
    log.info("%s: %s", what, " ".join(cmd[1:]))
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True, preexec_fn=dies_with_this_process())
    tail: list[str] = []
    errors: list[str] = []  # a worker's exception line: torchrun's own traceback follows and hides it
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail = (tail + [line])[-20:]
            if ERROR_LINE.match(line) and "ChildFailedError" not in line and line not in errors:
                errors.append(line)
            log.info("%s", line)
        proc.wait()
    finally:
        stop_process_group(proc)
    if proc.returncode != 0:
        cause = "; ".join(errors[:3]) or "see the lines above"
        raise RuntimeError(f"{what} failed: torchrun exited with {proc.returncode}: {cause}\nLast lines:\n"
                           + "\n".join(tail))


def _bound(fn: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    if "cfg" not in bound.arguments or "out_dir" not in bound.arguments:
        raise TypeError(f"{fn.__qualname__}: a distributable function takes cfg and out_dir")
    return bound


def distributable(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Run ``fn`` here, or under ``torchrun`` when its ``cfg.distributed`` asks for more than one process."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        bound = _bound(fn, args, kwargs)
        dist = getattr(bound.arguments["cfg"], "distributed", None)
        if dist is None or not dist.launches or under_torchrun():
            return fn(*args, **kwargs)
        return _launch(fn, args, kwargs, dist, Path(bound.arguments["out_dir"]))

    return wrapper


def _write_atomic(path: Path, data: bytes) -> None:
    """Written whole under a temporary name, mode 0600 from the start: the call and the pointer are this
    user's alone (another user who could swap them would run code on every rank)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    tmp.replace(path)


def trusted_file(path: Path) -> bool:
    """A launch file another process may act on: a regular file owned by this user, writable by nobody else."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _launch(fn: Callable[..., Any], args: tuple, kwargs: dict, dist: Any, out_dir: Path) -> dict[str, Any]:
    launch_dir = out_dir / LAUNCH_DIR
    launch_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    launch_dir.chmod(0o700)
    call, stats = launch_dir / "call.pkl", launch_dir / "stats.json"
    stats.unlink(missing_ok=True)
    _write_atomic(call, pickle.dumps((fn.__module__, fn.__qualname__, args, kwargs), protocol=5))
    rdzv_id = f"qa-{uuid.uuid4().hex[:12]}"
    if dist.nnodes > 1:  # the other nodes' join processes start their torchrun from this
        _write_atomic(POINTER, json.dumps({"rdzv_id": rdzv_id, "call": str(call.resolve()), "nnodes": dist.nnodes,
                                           "rdzv_endpoint": dist.rdzv_endpoint, "written": time.time()}).encode())
    try:
        what = (f"{fn.__qualname__} on {dist.nproc_per_node} process(es) x {dist.nnodes} node(s)")
        run_torchrun(torchrun_command(dist.nproc_per_node, dist.nnodes, dist.rdzv_endpoint, rdzv_id, call), what)
        if not stats.exists():
            raise RuntimeError(f"{what}: torchrun exited 0 but rank 0 wrote no statistics ({stats})")
        return json.loads(stats.read_text())
    finally:
        if dist.nnodes > 1:
            POINTER.unlink(missing_ok=True)
        for f in (call, stats):
            f.unlink(missing_ok=True)
        try:
            launch_dir.rmdir()  # never part of the model DVC caches
        except OSError:
            pass


def _worker(call: Path) -> None:
    """One torchrun process: run the pickled call; rank 0 writes what it returns. It dies with its
    torchrun agent (which dies with the stage): no worker outlives a killed stage. A call file that is not
    this user's private file is refused before it is read."""
    die_with_parent(os.getppid())
    if not trusted_file(call):
        raise SystemExit(f"{call}: not a regular file owned by this user and writable only by it; refusing to load it")
    module, qualname, args, kwargs = pickle.loads(call.read_bytes())
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    result = target(*args, **kwargs)
    if os.environ.get("RANK", "0") == "0":
        _write_atomic(call.with_name("stats.json"), json.dumps(result).encode())


if __name__ == "__main__":
    if len(sys.argv) != 2 or not under_torchrun():
        sys.exit("usage: torchrun ... -m pipeline.training.launch CALL.pkl (started by a training stage)")
    _worker(Path(sys.argv[1]))
