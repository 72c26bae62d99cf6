"""Training on several processes, GPUs or machines without changing a stage: ``distributed`` in params.yaml.

A training stage's module under ``pipeline.stages`` has a plain ``train(params, variant)``: it reads the
stage's inputs, tokenizes them, trains (``pipeline.training``'s loop) and returns the training statistics with
whatever the stage reports of its data (question counts). :func:`launch` calls it in the stage's own process
when ``distributed.nproc_per_node`` and ``nnodes`` are 1. Otherwise it writes a *launch spec* next to the model
(the stage's module name, the variant, the validated params and the run id, as JSON) and runs ``torchrun`` on
it: every process validates those params again and calls the same ``train(params, variant)`` (deterministic
from params and data), which trains under DDP through Accelerate; rank 0 alone writes the model, the
checkpoints' shared files and what ``train`` returned, which the stage reads back. The stage goes on (its
report, prediction, scoring) in its own process, exactly as after a one-process run. Checkpoints and resume
are the loop's own, so a killed multi-process run resumes from its last checkpoint like a single one.

Why no pickle: a pickle is code. What crosses processes here is data only: a stage name that must name a
module of ``pipeline.stages`` with a ``train``, a variant ``train`` checks, and params that pass the schema;
the files are the user's own (0600 in a 0700 folder, refused otherwise) and carry the run id of the
``torchrun`` that reads them. The price is that every rank tokenizes its own copy (as Hugging Face's
``run_qa.py`` does on every process), which is small next to training; the stage's own process, which only
waits for ``torchrun``, tokenizes nothing.

Several machines: node 0 (where ``dvc repro`` runs) also writes ``.training-launch.json`` in the checkout,
which must be on storage every node sees (the models are written there too); on each other node
``python -m pipeline.launcher.join`` waits for it and starts its own ``torchrun`` into the same rendezvous.

Where the stores listen: torch's own rendezvous and worker stores listen on every interface, whatever host is
configured, and a store is pickled state a peer can write. So the stage hosts the rendezvous store itself, on
a socket bound to ``rdzv_endpoint``'s host only (loopback for one node), and starts ``torchrun`` as a client of
it (``is_host=false``); the workers' store is made the same way by rank 0's worker, on the address its agent
announced (node 0: ``rdzv_endpoint``'s host), and handed to ``init_process_group``. The store also holds the
run id, so a ``join`` reading a stale pointer sees that the run it names is not the one being hosted.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.logs import get_logger
from pipeline.common.processes import die_with_parent, dies_with_this_process, stop_process_group

if TYPE_CHECKING:
    from pipeline.params import Params
    from pipeline.training.config import DistributedParams

POINTER = Path(".training-launch.json")  # for `python -m pipeline.launcher.join` on the other nodes
LAUNCH_DIR = ".launch"
SPEC_NAME = "spec.json"
STAGES_PACKAGE = "pipeline.stages"
TRAIN_NAME = "train"
STAGE_MODULE = re.compile(r"[a-z][a-z0-9_]*")
RUN_ID = re.compile(r"qa-[0-9a-f]{12}")
RUN_KEY = "qa-pipeline/run-id"  # in the hosted rendezvous store: the run it is hosting
SHARED_STORE_OFF = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}  # no agent store on every interface
ERROR_LINE = re.compile(r"^(?:\[rank\d+\]: )?[A-Za-z_][\w.]*(?:Error|Exception|Interrupt)\b: ")


Train = Callable[["Params", str], dict[str, Any]]  # a stage module's train(params, variant)


def under_torchrun() -> bool:
    """Inside a process ``torchrun`` started (it sets these for every worker)."""
    return "TORCHELASTIC_RUN_ID" in os.environ or ("LOCAL_RANK" in os.environ and "WORLD_SIZE" in os.environ)


def split_endpoint(endpoint: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` as (host, port)."""
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


def bound_store(host: str, port: int, world_size: int | None = None):
    """A TCPStore server listening on ``host`` only: a socket bound there, handed over to the store (which
    closes it when it goes)."""
    import datetime as dt

    from torch.distributed import TCPStore

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    store = TCPStore(host, sock.getsockname()[1], world_size, is_master=True, multi_tenant=True,
                     master_listen_fd=sock.fileno(), wait_for_workers=False, timeout=dt.timedelta(seconds=300))
    sock.detach()  # the store owns the descriptor now
    return store


def hosted_run(endpoint: str) -> str | None:
    """The run id node 0's store is hosting at ``endpoint`` now, or None when nothing answers there."""
    import datetime as dt

    from torch.distributed import TCPStore

    host, port = split_endpoint(endpoint)
    try:
        with socket.create_connection((host, port), timeout=3):
            pass
        store = TCPStore(host, port, is_master=False, timeout=dt.timedelta(seconds=5))
        return store.get(RUN_KEY).decode()
    except (OSError, RuntimeError, ValueError):
        return None


def torchrun_command(nproc_per_node: int, nnodes: int, rdzv_endpoint: str, rdzv_id: str, spec: Path,
                     local_addr: str | None = None) -> list[str]:
    """``torchrun`` (as ``python -m torch.distributed.run``, the interpreter this stage runs on) for one spec,
    as a client of the rendezvous store the stage hosts at ``rdzv_endpoint`` (:func:`bound_store`). Node 0
    announces ``local_addr`` (the endpoint's host) to the workers of every node. The run id reaches every
    worker (``TORCHELASTIC_RUN_ID``), which reads only a spec carrying the same one."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc_per_node),
           "--rdzv-id", rdzv_id, "--nnodes", str(nnodes), "--rdzv-backend", "c10d", "--rdzv-endpoint",
           rdzv_endpoint, "--rdzv-conf", "is_host=false"]
    if local_addr:
        cmd += ["--local-addr", local_addr]
    return cmd + ["-m", "pipeline.launcher.torchrun", str(spec)]


def run_torchrun(cmd: list[str], what: str) -> None:
    """Run ``cmd``, forwarding its lines to the stage's log (and so to Prefect); stop its whole process
    group if this process is interrupted, so no worker outlives the stage."""
    log = get_logger()
    log.info("%s: %s", what, " ".join(cmd[1:]))
    env = dict(os.environ, PYTHONUNBUFFERED="1", **SHARED_STORE_OFF)
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


def train_stage(train: Train) -> str:
    """The stage module a ``train`` lives in (``train_quail_mc`` for ``pipeline.stages.train_quail_mc.train``):
    the one name a launch spec may carry to say what to run."""
    module, name = train.__module__, train.__name__
    stage = module.removeprefix(STAGES_PACKAGE + ".")
    if module == stage or name != TRAIN_NAME or not STAGE_MODULE.fullmatch(stage):
        raise TypeError(f"{module}.{name}: what a launch runs is {STAGES_PACKAGE}.<stage>.{TRAIN_NAME}")
    return stage


def launch(train: Train, params: Params, variant: str, out_dir: Path, seed: int | None = None) -> dict[str, Any]:
    """``train(params, variant)`` (with ``seed=``, one run of a section's seeds, when given) here, or in every
    process of a ``torchrun`` launch as ``params.distributed`` says (its spec and rendezvous files under
    ``out_dir``, the run's folder); what rank 0's ``train`` returned either way."""
    stage = train_stage(train)
    if not params.distributed.launches or under_torchrun():
        return train(params, variant) if seed is None else train(params, variant, seed=seed)
    return _launch(stage, variant, params, out_dir, seed)


def _write_atomic(path: Path, data: bytes) -> None:
    """Written whole under a temporary name, mode 0600 from the start: the spec and the pointer are this
    user's alone."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    tmp.replace(path)


def trusted_file(path: Path, private_folder: bool = True) -> bool:
    """A launch file another process may act on: a regular file owned by this user that nobody else may read or
    write (0600 or stricter), and with ``private_folder`` in a folder of this user's that nobody else may enter
    (0700 or stricter: in a shared folder another user could swap the file between the check and the read).
    The join pointer lives in the checkout, a folder the user chose, so it is checked without its folder."""
    try:
        st = path.lstat()
    except OSError:
        return False
    private = stat.S_IRWXG | stat.S_IRWXO
    if not (stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & private):
        return False
    if not private_folder:
        return True
    try:
        folder = path.parent.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(folder.st_mode) and folder.st_uid == os.getuid() and not folder.st_mode & private


def _launch(stage: str, variant: str, params: Params, out_dir: Path, seed: int | None = None) -> dict[str, Any]:
    dist: DistributedParams = params.distributed
    launch_dir = out_dir / LAUNCH_DIR
    launch_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    launch_dir.chmod(0o700)
    spec, stats = launch_dir / SPEC_NAME, launch_dir / "stats.json"
    stats.unlink(missing_ok=True)
    rdzv_id = f"qa-{uuid.uuid4().hex[:12]}"
    _write_atomic(spec, json.dumps({"stage": stage, "variant": variant, "run_id": rdzv_id, "seed": seed,
                                    "params": params.model_dump(mode="json")}).encode())
    host, port = split_endpoint(dist.rdzv_endpoint) if dist.nnodes > 1 else ("127.0.0.1", 0)
    store = bound_store(host, port)  # the configured interface only, hosted for as long as this stage runs
    store.set(RUN_KEY, rdzv_id)
    endpoint = f"[{host}]:{store.port}" if ":" in host else f"{host}:{store.port}"
    if dist.nnodes > 1:  # the other nodes' join processes start their torchrun from this
        _write_atomic(POINTER, json.dumps({"rdzv_id": rdzv_id, "spec": str(spec.resolve()), "nnodes": dist.nnodes,
                                           "rdzv_endpoint": dist.rdzv_endpoint, "written": time.time()}).encode())
    try:
        what = f"{stage}@{variant} training on {dist.nproc_per_node} process(es) x {dist.nnodes} node(s)"
        run_torchrun(torchrun_command(dist.nproc_per_node, dist.nnodes, endpoint, rdzv_id, spec, local_addr=host),
                     what)
        if not stats.exists():
            raise RuntimeError(f"{what}: torchrun exited 0 but rank 0 wrote no statistics ({stats})")
        return json.loads(stats.read_text())
    finally:
        del store  # stops listening
        if dist.nnodes > 1:
            POINTER.unlink(missing_ok=True)
        for f in (spec, stats):
            f.unlink(missing_ok=True)
        try:
            launch_dir.rmdir()  # never part of the model DVC caches
        except OSError:
            pass


class SpecError(ValueError):
    """A launch spec this worker will not act on."""


def read_spec(path: Path, run_id: str, functions: tuple[str, ...] = (TRAIN_NAME,)
              ) -> tuple[str, str, Params, int | None, str]:
    """The stage, variant, params, seed (None: the section's reference run) and function of a launch spec,
    checked: this user's private file, written for the run ``run_id``, naming a stage module by name only and
    one of ``functions`` (absent: the first), with params that pass the schema and a seed that is an integer."""
    from pipeline.params import ParamsError, validate_params  # the boundary's check; it changes no value

    if not trusted_file(path):
        raise SpecError(f"{path}: not this user's private file (a regular file of mode 0600 in a folder of mode "
                        "0700, both owned by this user); refusing it")
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
        stage, variant, spec_run, raw = spec["stage"], spec["variant"], spec["run_id"], spec["params"]
        seed, function = spec.get("seed"), spec.get("function", functions[0])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SpecError(f"{path}: not a launch spec ({exc})") from None
    if spec_run != run_id:
        raise SpecError(f"{path}: written for run {spec_run!r}, not this run {run_id!r}")
    if not isinstance(stage, str) or not STAGE_MODULE.fullmatch(stage) or not isinstance(variant, str):
        raise SpecError(f"{path}: stage must be a module name of {STAGES_PACKAGE}, variant a string")
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: params must be a mapping of params sections")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise SpecError(f"{path}: seed must be a non-negative integer or null, got {seed!r}")
    if function not in functions:
        raise SpecError(f"{path}: function must be one of {', '.join(functions)}, got {function!r}")
    try:  # the sections the stage declared, as its own process validated them
        params = validate_params(raw, f"{path} params", tuple(raw))
    except ParamsError as exc:
        raise SpecError(str(exc)) from None
    return stage, variant, params, seed, function


def spec_function(spec_path: Path, run_id: str, functions: tuple[str, ...] = (TRAIN_NAME,)
                  ) -> tuple[Callable[..., dict], str, Params, int | None]:
    """The stage function a launch spec names, imported, with its variant, params and seed: what a torchrun
    worker and a seed process run. A spec that fails :func:`read_spec`, or names a stage module without that
    function, ends the process with a one-line ``SpecError``."""
    try:
        stage, variant, params, seed, function = read_spec(spec_path, run_id, functions)
        module = importlib.import_module(f"{STAGES_PACKAGE}.{stage}")
    except (SpecError, ModuleNotFoundError) as exc:
        raise SystemExit(f"SpecError: {exc}") from None
    found = getattr(module, function, None)
    if not callable(found):
        raise SystemExit(f"SpecError: {STAGES_PACKAGE}.{stage} has no {function}(params, variant)")
    return found, variant, params, seed


def _worker(spec_path: Path) -> None:
    """One torchrun process: the spec's stage's ``train(params, variant)``; rank 0 writes what it returns. It dies with its torchrun agent (which dies with the stage): no worker outlives a killed
    stage."""
    die_with_parent(os.getppid())
    train, variant, params, seed = spec_function(spec_path, os.environ.get("TORCHELASTIC_RUN_ID", ""))
    keep = _init_process_group()  # before Accelerate, which uses the group it finds
    result = train(params, variant) if seed is None else train(params, variant, seed=seed)
    del keep
    if os.environ.get("RANK", "0") == "0":
        _write_atomic(spec_path.with_name("stats.json"), json.dumps(result).encode())


def _init_process_group():
    """The workers' process group on a store that rank 0 serves on the address its agent announced
    (``MASTER_ADDR``) only, not on every interface as ``init_process_group``'s own env:// store would."""
    import datetime as dt

    import torch.distributed as torch_dist
    from torch.distributed import TCPStore

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    store = (bound_store(host, port, world) if rank == 0
             else TCPStore(host, port, world, is_master=False, timeout=dt.timedelta(seconds=300)))
    torch_dist.init_process_group(store=store, rank=rank, world_size=world)
    return store


if __name__ == "__main__":
    if len(sys.argv) != 2 or not under_torchrun():
        sys.exit("usage: torchrun ... -m pipeline.launcher.torchrun SPEC.json (started by a training stage)")
    _worker(Path(sys.argv[1]))
