"""``rebuild``: run ``dvc repro`` for a repository and publish its metrics as a Prefect artifact.

This is the flow the schedule triggers (``make serve``). DVC decides what is stale and in which order;
this flow adds what DVC lacks: one run at a time (a file lock, on top of the deployment's concurrency
limit), the run's output in Prefect's logs, one small markdown artifact per track (``metrics-nlquad``, ...:
systems by headline figures, each with its change against the previous run), and a failed flow run when
repro fails. The stage runs DVC starts are tagged ``rebuild:<this run's id>`` so the UI shows what one
rebuild did. The repro task is never cached or retried: it has side effects, and a
failing stage fails the same way twice.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock, Timeout
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.logging import get_run_logger
from prefect.settings import PREFECT_API_URL

from flows._common import PARENT_RUN_ENV, cancelled_if_stopped
from pipeline.common.headline import markdown_table, read_headlines
from pipeline.common.runtime import dies_with_this_process
from pipeline.experiments.targets import check_targets as check_stage_targets


class RebuildAlreadyRunning(RuntimeError):
    pass


# Where rebuild runs `dvc repro`: fixed by whoever starts the runner (flows.serve --repo-dir, or this
# checkout), never by a run's parameters: anyone who can reach the Prefect API can start a run, and a run
# that chose the folder would choose which dvc.yaml commands execute.
REPO_ENV = "QA_PIPELINE_REBUILD_DIR"


def repo_dir() -> Path:
    return Path(os.environ.get(REPO_ENV) or Path(__file__).resolve().parents[1]).resolve()


def check_targets(targets: list[str]) -> list[str]:
    return check_stage_targets(targets, "rebuild targets")


def _dvc() -> str:
    exe = Path(sys.executable).with_name("dvc")
    return str(exe) if exe.exists() else "dvc"


@task(name="dvc-repro", retries=0, cache_policy=None)
def dvc_repro(repo_dir: str, targets: list[str], force: bool) -> None:
    logger = get_run_logger()
    cmd = [_dvc(), "repro", *(["--force"] if force else []), *targets]
    logger.info("running %s in %s", " ".join(cmd), repo_dir)
    # the stages report to this run's server and carry its id as a tag (flows._common.stage_main)
    env = dict(os.environ, PREFECT_API_URL=str(PREFECT_API_URL.value() or ""), **{PARENT_RUN_ENV: _run_id()})
    proc = subprocess.Popen(cmd, cwd=repo_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            preexec_fn=dies_with_this_process())  # a killed run takes its dvc repro along
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        logger.info(line)
        tail = (tail + [line])[-40:]
    if proc.wait() != 0:
        raise RuntimeError(f"dvc repro failed with exit code {proc.returncode}:\n" + "\n".join(tail))


def _run_id() -> str:
    from prefect.runtime import flow_run

    return str(flow_run.id or "")


@task(name="publish-metrics", cache_policy=None)
def publish_metrics(repo_dir: str, before: dict) -> str:
    """One artifact per track: the headline figures after this run, with their change against ``before``
    (the figures in the checkout when this run started, i.e. the previous run's)."""
    after = read_headlines(Path(repo_dir) / "metrics")
    parts = []
    for track, systems in after.items():
        if not systems:
            continue
        markdown = markdown_table(track, systems, before.get(track, {}))
        create_markdown_artifact(key=f"metrics-{track}", markdown=markdown,
                                 description=f"{track}: headline figures and their change since the previous run")
        parts.append(markdown)
    return "\n".join(parts) or "_no headline metrics yet_"


@flow(name="rebuild", log_prints=True, on_crashed=[cancelled_if_stopped])  # stopped with make serve: Cancelled
def rebuild(targets: list[str] | None = None, force: bool = False) -> str:
    """Reproduce the pipeline of the runner's checkout (all stages, or ``targets``) and publish its metrics."""
    targets = check_targets(list(targets or []))
    repo = repo_dir()
    if not (repo / "dvc.yaml").exists():
        raise FileNotFoundError(f"{repo} has no dvc.yaml: not a qa-pipeline checkout")
    lock_path = repo / ".dvc" / "tmp" / "rebuild.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock_path), timeout=0):
            before = read_headlines(repo / "metrics")
            dvc_repro(str(repo), targets, force)
            return publish_metrics(str(repo), before)
    except Timeout:
        raise RebuildAlreadyRunning(f"another rebuild holds {lock_path}; not starting a second one") from None


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m flows.rebuild")
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--repo-dir", help="checkout to rebuild (default: this one)")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    if a.repo_dir:
        os.environ[REPO_ENV] = str(Path(a.repo_dir).resolve())
    rebuild(targets=a.targets, force=a.force)
