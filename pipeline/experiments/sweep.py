"""An experiment sweep across machines: a grid of params values, each point one ``dvc exp run`` in a fresh
clone on whichever Prefect worker picks it up, its experiment and artifacts pushed back for everyone.

A point is self-contained, so any worker can run it: clone the group's git repository, pull the artifacts the
point does not change from the DVC remote (so only what the new values touch is recomputed), run the
experiment, push its git ref (``refs/exps/...``) to the git remote and its outputs to the DVC remote. Then
``dvc exp pull origin <name>`` / ``dvc exp show`` / ``dvc metrics diff`` see it on any machine.

Which repository a worker clones is the worker's setting (``QA_PIPELINE_SWEEP_REPO``), never a run's
parameter: whoever can start a run must not choose whose ``dvc.yaml`` commands a worker executes.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipeline.common.layout import PATHS
from pipeline.common.processes import run_as_group
from pipeline.experiments.overrides import override
from pipeline.experiments.targets import check_targets
from pipeline.params import PROJECT_PARAMS_FILE, Params, format_validation_error
from pipeline.params_trust import INFRASTRUCTURE, NotRunSettable, check_run_settable

REPO_ENV = "QA_PIPELINE_SWEEP_REPO"  # the git URL (or path) workers clone
REV_ENV = "QA_PIPELINE_SWEEP_REV"  # optional branch/tag; default: the remote's default branch
WORKDIR_ENV = "QA_PIPELINE_SWEEP_WORKDIR"  # where clones go (next to the data that params name as ../shared)
DVC_REMOTE_ENV = "QA_PIPELINE_SWEEP_DVC_REMOTE"  # optional DVC remote name; default: the repository's default
_KEY = re.compile(r"[a-z_]+(?:\.[a-z_0-9]+)+")
MAX_GRID_POINTS = 64  # one sweep queues at most this many points (each a full `dvc exp run` on a worker)


class SweepError(RuntimeError):
    """A sweep or a point cannot run; the message says which value or command and why."""


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_INTERPOLATION = ("${", "$(")  # OmegaConf/Hydra resolvers (${oc.env:...} reads the worker's environment)


def check_name(name: Any, what: str = "experiment name") -> str:
    """A name that is one safe path component and a valid git ref part; refused before any file operation."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name or name.endswith((".", ".lock")):
        raise SweepError(f"{what} {name!r}: letters, digits, '_', '-' and '.' only (up to 100, no '..'), "
                         "starting with a letter or digit")
    return name


POLL_S_RANGE = (0.5, 300.0)  # a sweep's wait between looks at its points' runs


def check_poll(poll_s: Any) -> float:
    """A sweep's polling interval, bounded: 1e9 s would leave the sweep waiting for ever after its points end."""
    low, high = POLL_S_RANGE
    if isinstance(poll_s, bool) or not isinstance(poll_s, (int, float)) or not low <= poll_s <= high:
        raise SweepError(f"poll_s {poll_s!r}: a number of seconds from {low:g} to {high:g}")
    return float(poll_s)


def check_value(key: str, value: Any) -> None:
    """Plain values only: a string with resolver syntax would be filled in by Hydra on the worker (its
    secrets included) and written into the experiment's params.yaml."""
    if isinstance(value, str):
        if any(m in value for m in _INTERPOLATION) or "\n" in value:
            raise SweepError(f"{key}: interpolation or multi-line values are not allowed, got {value!r}")
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (list, dict)):
                raise SweepError(f"{key}: lists of plain values only, got {value!r}")
            check_value(key, v)
    elif isinstance(value, dict):
        raise SweepError(f"{key}: a mapping is not a params value here, got {value!r}")
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise SweepError(f"{key}: unsupported value type {type(value).__name__}")


def _did_you_mean(key: str, raw: dict) -> str:
    """The closest key params.yaml has (``quail.pmi_windw``: ``quail.pmi_window``), as the params check says it."""
    import difflib

    def leaves(node: Any, prefix: str) -> list[str]:
        if not isinstance(node, dict):
            return [prefix]
        return [k for name, value in node.items() for k in leaves(value, f"{prefix}.{name}" if prefix else str(name))]

    hint = difflib.get_close_matches(key, leaves(raw, ""), n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def check_point(point: Any, params_file: Path = PROJECT_PARAMS_FILE) -> dict[str, Any]:
    """One experiment point, whoever sent it: every key a section.key of params.yaml (no ``FILE:`` prefix, no
    path), every value plain and valid for its key by the params schema. Called on every path into
    ``dvc exp run``, before anything runs."""
    if not isinstance(point, dict) or not point:
        raise SweepError("point: a non-empty mapping of params keys (section.key) to values")
    grid_points({k: [v] for k, v in point.items()}, params_file)
    return point


def grid_points(grid: dict[str, list[Any]], params_file: Path = PROJECT_PARAMS_FILE) -> list[dict[str, Any]]:
    """Every combination of the grid, in a fixed order, each checked against the params schema before any
    worker starts: a misspelt key or a value out of range fails the sweep, not N workers later."""
    if not isinstance(grid, dict) or not grid or any(not isinstance(v, list) or not v for v in grid.values()):
        raise SweepError("grid: a mapping of params keys (section.key) to non-empty lists of values")
    bad = [k for k in grid if not isinstance(k, str) or not _KEY.fullmatch(k)]
    if bad:
        raise SweepError(f"grid keys must be section.key of params.yaml, got {bad}")
    size = 1
    for values in grid.values():
        size *= len(values)
    if size > MAX_GRID_POINTS:
        raise SweepError(f"grid: {size} points, more than {MAX_GRID_POINTS}; split the sweep")
    for key, values in grid.items():
        for value in values:
            check_value(key, value)
    infrastructure = sorted(k for k in grid if k in INFRASTRUCTURE)
    if infrastructure:  # science only: a run never chooses paths, hosts, ports, devices or modules
        try:
            check_run_settable(dict.fromkeys(infrastructure))
        except NotRunSettable as exc:
            raise SweepError(str(exc)) from None
    raw = yaml.safe_load(Path(params_file).read_text(encoding="utf-8"))
    keys = sorted(grid)
    points = [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]
    for point in points:
        trial = copy.deepcopy(raw)
        for key, value in point.items():
            section, *path = key.split(".")
            node = trial.get(section)
            for part in path[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
            if not isinstance(node, dict) or path[-1] not in node:
                raise SweepError(f"grid key {key!r} is not in params.yaml{_did_you_mean(key, raw)}")
            node[path[-1]] = value
        try:
            Params.model_validate(trial)
            check_run_settable(point)  # a key no one has classified yet is refused too
        except ValidationError as exc:
            raise SweepError(format_validation_error(exc, f"grid point {point}")) from None
        except NotRunSettable as exc:
            raise SweepError(str(exc)) from None
    return points


def point_name(sweep: str, point: dict[str, Any]) -> str:
    """A git-ref-safe experiment name that says what the point is: ``<sweep>-pmi_window-5-<hash>``."""
    check_name(sweep, "sweep name")
    readable = "-".join(f"{k.split('.')[-1]}-{v}" for k, v in sorted(point.items()))
    readable = re.sub(r"[^A-Za-z0-9_-]+", "_", readable)[:60]
    digest = hashlib.sha256(json.dumps(point, sort_keys=True).encode()).hexdigest()[:6]
    return f"{sweep}-{readable}-{digest}"


def _env() -> dict[str, str]:
    """dvc, git and the stages' ``python`` from this interpreter's environment."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "DVC_NO_ANALYTICS": "1"}


def run(cmd: list[str], cwd: Path, log: Callable[[str], None], what: str) -> str:
    """Run one command, its output to ``log``; a failure names the command and ends with its last lines."""
    log(f"$ {' '.join(cmd)}")
    proc = run_as_group(cmd, cwd, _env())  # a cancelled point ends every process dvc started
    out = (proc.stdout + proc.stderr).strip()
    for line in out.splitlines()[-200:]:
        log(line)
    if proc.returncode != 0:
        raise SweepError(f"{what} failed ({' '.join(cmd[:3])} ... exit {proc.returncode}):\n"
                         + "\n".join(out.splitlines()[-15:]))
    return out


def run_point(point: dict[str, Any], name: str, targets: list[str], log: Callable[[str], None],
              workdir: Path | None = None) -> dict[str, Any]:
    """Clone, pull, ``dvc exp run``, push. Returns the point, its headline metrics and where it ran. The point
    and name come from a run's parameters: both are checked before any file is touched."""
    check_point(point)
    check_name(name)
    repo = os.environ.get(REPO_ENV)
    if not repo:
        raise SweepError(f"${REPO_ENV} is not set on this worker: the git repository to clone")
    check_targets(targets)
    started = time.time()
    workdir = workdir or (Path(os.environ[WORKDIR_ENV]) if os.environ.get(WORKDIR_ENV) else None)
    base = Path(workdir or tempfile.mkdtemp(prefix="qa-sweep-"))
    # The clone goes into a folder this run creates (mkdtemp: new, this user's alone) directly under the work
    # folder, so the params' ../shared is the work folder's shared data; only that folder is ever removed. A
    # point named after a folder already there (`shared`, another point's clone in progress) touches nothing.
    clone = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=base))
    if clone.resolve().parent != base.resolve():
        shutil.rmtree(clone, ignore_errors=True)
        raise SweepError(f"experiment name {name!r} leaves the work folder {base}")
    try:
        rev = os.environ.get(REV_ENV)
        run(["git", "clone", "-q", *(["--branch", rev] if rev else []), repo, str(clone)], base, log,
            "git clone")  # into the empty folder made above
        dvc_remote = os.environ.get(DVC_REMOTE_ENV)  # the worker's, like the repository: never a run's choice
        remote = ["-r", dvc_remote] if dvc_remote else []
        # what the point does not change comes from the remote; a missing output is recomputed by exp run
        run(["dvc", "pull", "--allow-missing", *remote, *(["--with-deps", *targets] if targets else [])], clone,
            log, "dvc pull")
        sets = [arg for k, v in sorted(point.items()) for arg in ("-S", override(k, v))]
        run(["dvc", "exp", "run", "-n", name, *sets, *targets], clone, log, "dvc exp run")
        pushed = run(["dvc", "exp", "push", *remote, "origin", name], clone, log, "dvc exp push")
        if "diverged" in pushed:  # DVC exits 0 and pushes nothing when origin holds another experiment of this name
            raise SweepError(f"dvc exp push: origin already holds an experiment named {name!r} with other results; "
                             "nothing was pushed (choose another name)")
        from pipeline.common.headline import read_headlines

        metrics = read_headlines(clone / PATHS.metrics)
        return {"name": name, "params": point, "metrics": metrics, "host": os.uname().nodename,
                "pid": os.getpid(), "worker_pid": os.getppid(), "started": started, "finished": time.time()}
    finally:
        shutil.rmtree(clone, ignore_errors=True)
        if workdir is None:
            shutil.rmtree(base, ignore_errors=True)
