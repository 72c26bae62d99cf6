"""``rebuild``: run ``dvc repro`` for a repository and publish its metrics as a Prefect artifact.

This is the flow the schedule triggers (``make serve``). DVC decides what is stale and in which order;
this flow adds what DVC lacks: one run at a time (a file lock, on top of the deployment's concurrency
limit), the run's output in Prefect's logs, a markdown artifact with ``dvc metrics show --md``, and a
failed flow run when repro fails. The repro task is never cached or retried: it has side effects, and a
failing stage fails the same way twice.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from filelock import FileLock, Timeout
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.logging import get_run_logger


class RebuildAlreadyRunning(RuntimeError):
    pass


def _dvc() -> str:
    exe = Path(sys.executable).with_name("dvc")
    return str(exe) if exe.exists() else "dvc"


@task(name="dvc-repro", retries=0, cache_policy=None)
def dvc_repro(repo_dir: str, targets: list[str], force: bool) -> None:
    logger = get_run_logger()
    cmd = [_dvc(), "repro", *(["--force"] if force else []), *targets]
    logger.info("running %s in %s", " ".join(cmd), repo_dir)
    proc = subprocess.Popen(cmd, cwd=repo_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        logger.info(line)
        tail = (tail + [line])[-40:]
    if proc.wait() != 0:
        raise RuntimeError(f"dvc repro failed with exit code {proc.returncode}:\n" + "\n".join(tail))


@task(name="publish-metrics", cache_policy=None)
def publish_metrics(repo_dir: str) -> str:
    out = subprocess.run([_dvc(), "metrics", "show", "--md"], cwd=repo_dir, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"dvc metrics show failed: {out.stderr.strip()}")
    markdown = "# Metrics after dvc repro\n\n" + (out.stdout.strip() or "_no metrics declared_")
    create_markdown_artifact(key="dvc-metrics", markdown=markdown, description="dvc metrics show --md")
    return markdown


@flow(name="rebuild", log_prints=True)
def rebuild(repo_dir: str = ".", targets: list[str] | None = None, force: bool = False) -> str:
    """Reproduce the pipeline in ``repo_dir`` (all stages, or ``targets``) and publish its metrics."""
    repo = Path(repo_dir).resolve()
    if not (repo / "dvc.yaml").exists():
        raise FileNotFoundError(f"{repo} has no dvc.yaml: not a qa-pipeline checkout")
    lock_path = repo / ".dvc" / "tmp" / "rebuild.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock_path), timeout=0):
            dvc_repro(str(repo), list(targets or []), force)
            return publish_metrics(str(repo))
    except Timeout:
        raise RebuildAlreadyRunning(f"another rebuild holds {lock_path}; not starting a second one") from None


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m flows.rebuild")
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--repo-dir", default=".")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    rebuild(repo_dir=a.repo_dir, targets=a.targets, force=a.force)
