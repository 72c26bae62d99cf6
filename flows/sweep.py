"""``sweep`` and ``experiment-point``: a params grid as Prefect runs on a work pool's workers.

``sweep`` checks the grid against the params schema, starts one ``experiment-point`` deployment run per point
(they queue on the pool, so each free worker takes one and the points run at the same time), waits for all
and fails if any did. ``experiment-point`` is ``pipeline.experiments.sweep.run_point`` on the worker:
clone, ``dvc pull``, ``dvc exp run``, ``dvc exp push``. Deployments: ``prefect.yaml``. The point's work is one
task without retries or caching: it has side effects (pushes) and a failed experiment fails the same way twice;
the network steps inside are DVC's and git's own."""

from __future__ import annotations

import time
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment
from prefect.logging import get_run_logger

from flows._common import own_results
from flows.engine_guard import install as _install_engine_guard
from pipeline.common.safe_text import markdown_cell
from pipeline.experiments.sweep import check_poll, grid_points, point_name, run_point
from pipeline.experiments.targets import check_targets

_install_engine_guard()  # this module's flows run in served and deployed processes: no server state is deserialized

POINT_DEPLOYMENT = "experiment-point/point"


@task(name="dvc-exp-run", retries=0, cache_policy=None, **own_results())
def _point(point: dict[str, Any], name: str, targets: list[str]) -> dict[str, Any]:
    log = get_run_logger()
    return run_point(point, name, targets, log.info)


@flow(name="experiment-point", log_prints=True, **own_results())
def experiment_point(point: dict[str, Any], name: str, targets: list[str] | None = None) -> dict[str, Any]:
    result = _point(point, name, list(targets or []))
    create_markdown_artifact(key="experiment-point", description=name, markdown=(
        f"**{markdown_cell(name)}** on {markdown_cell(result['host'])} (worker pid {result['worker_pid']}): "
        + ", ".join(f"`{markdown_cell(k)}={markdown_cell(v)}`" for k, v in point.items())))
    return result


def _wait(run_ids: list, poll_s: float) -> list:
    with get_client(sync_client=True) as client:
        while True:
            runs = [client.read_flow_run(i) for i in run_ids]
            if all(r.state is not None and r.state.is_final() for r in runs):
                return runs
            time.sleep(poll_s)


@flow(name="sweep", log_prints=True, **own_results())
def sweep(grid: dict[str, list[Any]], name: str = "sweep", targets: list[str] | None = None,
          poll_s: float = 2.0) -> list[dict[str, Any]]:
    log = get_run_logger()
    targets = check_targets(list(targets or []))
    poll_s = check_poll(poll_s)
    points = grid_points(grid)
    log.info("%d point(s): %s", len(points), points)
    submitted = []
    for point in points:
        exp = point_name(name, point)
        fr = run_deployment(POINT_DEPLOYMENT, timeout=0, parameters={
            "point": point, "name": exp, "targets": targets}, flow_run_name=exp)
        submitted.append((exp, fr.id))
    t0 = time.monotonic()
    runs = _wait([i for _, i in submitted], poll_s)
    summary = [{"name": exp, "state": r.state.type.value, "flow_run": str(r.id)}
               for (exp, _), r in zip(submitted, runs, strict=True)]
    log.info("sweep finished in %.0f s: %s", time.monotonic() - t0, summary)
    failed = [s for s in summary if s["state"] != "COMPLETED"]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(summary)} point(s) did not complete: {failed}")
    create_markdown_artifact(key="sweep", description=name, markdown="\n".join(
        ["| experiment | state |", "|---|---|"]
        + [f"| {markdown_cell(s['name'])} | {markdown_cell(s['state'])} |" for s in summary]
        + ["", "Compare: `dvc exp pull origin <name>` then `make exps` or `dvc metrics diff <a> <b>`."]))
    return summary
