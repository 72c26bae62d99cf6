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
import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.logging import get_run_logger
from prefect.settings import PREFECT_API_URL

from flows._common import (PARENT_RUN_ENV, STOPPED_BY_SIGNAL, cancelled_if_stopped, own_results,
                           quiet_signal_stops)
from flows._server import reap_killed_runs
from flows.stage import QUIET
from flows.engine_guard import install as _install_engine_guard
from flows.metrics_artifact import markdown_table
from flows.notify import emit_moved, moved_figures
from pipeline.common.headline import read_headlines
from pipeline.common.layout import PATHS
from pipeline.common.processes import dies_with_this_process
from pipeline.experiments.targets import check_targets as check_stage_targets

_install_engine_guard()  # this module's flows run in served and deployed processes: no server state is deserialized


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


# What the stages under `dvc repro` print is for a terminal: a time on every line (Prefect's console format,
# or our logger's), tqdm bars redrawn with carriage returns. In the run's log, which has its own time column,
# a person reads the message: the bars go (their figures are in the stages' progress lines) and so does the
# second time.
QUIET_STAGES = QUIET  # what every stage sets for itself anyway; here also for dvc's own lines
# a stage's line starts with a time and its level (Prefect's console format, or our logger's): the run's log has
# both columns of its own, so the line is logged at its own level with the message alone
_LEADING_TIME_LEVEL = re.compile(
    r"^(?:\d{2}:\d{2}:\d{2}\.\d{3} \| (?P<prefect>DEBUG|INFO|WARNING|ERROR|CRITICAL) *\| "
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} (?P<ours>DEBUG|INFO|WARNING|ERROR|CRITICAL) )")
_BAR = re.compile(r"\d+%\|[^|]*\|")


def readable_line(line: str) -> tuple[int, str] | None:
    """A line of ``dvc repro`` output as the run's log shows it, with the level it was written at (INFO for
    DVC's own lines and tracebacks), or None for a progress bar."""
    redrawn = line.rstrip().split("\r")  # a bar redrawn in place, then cleared for a log line
    line = redrawn[-1].lstrip() if len(redrawn) > 1 else redrawn[0]
    if not line.strip() or _BAR.search(line):
        return None
    stamped = _LEADING_TIME_LEVEL.match(line)
    if stamped is None:
        return logging.INFO, line
    return logging.getLevelName(stamped["prefect"] or stamped["ours"]), line[stamped.end():]


@task(name="dvc-repro", retries=0, cache_policy=None, **own_results())
def dvc_repro(repo_dir: str, targets: list[str], force: bool) -> None:
    logger = get_run_logger()
    cmd = [_dvc(), "repro", *(["--force"] if force else []), *targets]
    logger.info("running %s in %s", " ".join(cmd), repo_dir)
    # the stages report to this run's server and carry its id as a tag (flows._common.run_flow)
    env = dict(os.environ, PREFECT_API_URL=str(PREFECT_API_URL.value() or ""), **{PARENT_RUN_ENV: _run_id()},
               **QUIET_STAGES)
    proc = subprocess.Popen(cmd, cwd=repo_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            preexec_fn=dies_with_this_process())  # a killed run takes its dvc repro along
    tail: list[str] = []
    assert proc.stdout is not None
    for raw in proc.stdout:
        readable = readable_line(raw)
        if readable is None:
            continue
        level, line = readable
        logger.log(level, line)
        tail = (tail + [line])[-40:]
    code = proc.wait()
    with contextlib.chdir(repo_dir):  # a stage killed with SIGKILL under this repro: its run ends Crashed
        crashed = reap_killed_runs()
    if crashed:
        logger.warning("%d stage run(s) whose process was killed marked Crashed: %s", len(crashed), ", ".join(crashed))
    if code != 0:
        raise RuntimeError(f"dvc repro failed with exit code {code}:\n" + "\n".join(tail))


def _run_id() -> str:
    from prefect.runtime import flow_run

    return str(flow_run.id or "")


@task(name="link-stage-runs", cache_policy=None, **own_results())
def link_stage_runs(rebuild_id: str) -> str:
    """A table artifact of the stage runs this rebuild started (their name, state, duration and a link), so
    the rebuild's page leads to each of them; the ``rebuild:<id>`` tag alone is cut short in the UI."""
    from prefect.artifacts import create_table_artifact
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_UI_URL

    ui = str(PREFECT_UI_URL.value() or "").rstrip("/")
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"rebuild:{rebuild_id}"])),
                                     sort=FlowRunSort.START_TIME_ASC)
    rows = [{"stage": r.name, "state": r.state_name or "", "seconds": round(r.total_run_time.total_seconds(), 1),
             "run": f"{ui}/runs/flow-run/{r.id}" if ui else str(r.id)} for r in runs]
    create_table_artifact(key="rebuild-stages", table=rows,
                          description=f"the {len(rows)} stage run(s) this rebuild started, in order (DVC skipped the rest)")
    return f"{len(rows)} stage run(s)"


@task(name="publish-metrics", cache_policy=None, **own_results())
def publish_metrics(repo_dir: str, before: dict) -> str:
    """One artifact per track: the headline figures after this run, with their change against ``before``
    (the figures in the checkout when this run started, i.e. the previous run's)."""
    after = read_headlines(Path(repo_dir) / PATHS.metrics)
    parts = []
    for track, systems in after.items():
        if not systems:
            continue
        markdown = markdown_table(track, systems, before.get(track, {}))
        create_markdown_artifact(key=f"metrics-{track}", markdown=markdown,
                                 description=f"{track}: headline figures and their change since the previous run")
        parts.append(markdown)
    moved = moved_figures(after, before)
    if moved:  # what the "headline moved" automation (flows/notify.py) sends on
        emit_moved(str(Path(repo_dir).resolve()), moved)
    return "\n".join(parts) or "_no headline metrics yet_"


def run_name() -> str:
    """``rebuild all 11-25 03:35`` or ``rebuild quail_mc,compare 11-25 03:35``: a run says what it rebuilds and
    when it started (Prefect's default is two random words)."""
    import datetime as dt

    from prefect.runtime import flow_run

    targets = (flow_run.parameters or {}).get("targets") or []
    what = ",".join(str(t) for t in targets) or "all"
    if len(what) > 60:
        what = what[:57] + "..."
    return f"rebuild {what} {dt.datetime.now().strftime('%m-%d %H:%M')}"


def exit_when_orphaned(every_s: float = 1.0) -> None:
    """SIGTERM to this run's process once the process that started it is gone (``make serve`` or a worker
    killed with -9, a lost terminal), and SIGTERM to its ``dvc repro`` and the stage under it: each records its
    run Cancelled, and the checkout's rebuild lock is free for the next serve (an orphaned rebuild ran on
    for a minute, and the next one failed on that lock). A watching thread, not PR_SET_PDEATHSIG: the runner may start
    this process from a thread that ends before the run does, and the kernel would signal then."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        import psutil

        while os.getppid() == parent:
            time.sleep(every_s)
        # its dvc repro and the stage under it too: dvc does not pass a SIGTERM on to the stage it runs
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.terminate()
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="exit-when-orphaned", daemon=True).start()


def rebuild_cancelled(flow: Any, flow_run: Any, state: Any) -> None:
    """``on_crashed``: a rebuild stopped by a signal (``make serve`` stopped) ends Cancelled and says so in one
    line, where Prefect printed "Crash detected!" and a Crashed state for it and for its dvc-repro task."""
    cancelled_if_stopped(flow, flow_run, state)
    if state.message in STOPPED_BY_SIGNAL:
        print(f"{flow_run.name}: stopped by a signal; its run is Cancelled", flush=True)


quiet_signal_stops()  # in the process that runs a rebuild: its crash lines for a stop by a signal go


# own_results() on every flow and task: nothing is persisted, the server's default storage never read
@flow(name="rebuild", log_prints=True, **own_results(),
      on_crashed=[rebuild_cancelled],  # stopped with make serve: Cancelled
      flow_run_name=run_name)
def rebuild(targets: list[str] | None = None, force: bool = False) -> str:
    """Reproduce the pipeline of the runner's checkout (all stages, or ``targets``) and publish its metrics."""
    exit_when_orphaned()
    targets = check_targets(list(targets or []))
    repo = repo_dir()
    if not (repo / "dvc.yaml").exists():
        raise FileNotFoundError(f"{repo} has no dvc.yaml: not a qa-pipeline checkout")
    lock_path = repo / ".dvc" / "tmp" / "rebuild.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock_path), timeout=0):
            before = read_headlines(repo / PATHS.metrics)
            try:
                dvc_repro(str(repo), targets, force)
            finally:  # a failed rebuild links what it ran too
                link_stage_runs(_run_id())
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
