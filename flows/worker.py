"""``python -m flows.worker --pool qa-pipeline --work-queue points``: a Prefect process worker that runs only
what this checkout deployed.

Anyone who can reach the Prefect API can create a deployment, edit one, or edit the work pool's job template:
Prefect's worker then runs whatever the API describes (a ``run_shell_script`` pull step, another entrypoint,
a job template with a free ``command``) with the worker's environment, secrets included. This worker compares
every flow run, before starting anything, with what the worker itself holds:

* the run's deployment must be one of this checkout's ``prefect.yaml`` deployments, with the same entrypoint
  and the same pull steps (the file's, ``{{ $VAR }}`` filled from this worker's environment);
* the pool's base job template must equal ``infra/prefect/process-job-template.json`` of this checkout, and
  the job configuration built from it must run Prefect's own command (no ``command`` of the API's choosing).

A run that differs is marked Crashed with the difference in its message, and nothing of it runs. The
checkout is ``$QA_PIPELINE_CHECKOUT`` (the same variable prefect.yaml's pull step uses), else this one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import yaml
from prefect.workers.process import ProcessWorker

TEMPLATE = Path("infra/prefect/process-job-template.json")
# what Prefect's own job configuration runs: the base command, and the process worker's own interpreter
PREFECT_COMMANDS = ("prefect flow-run execute", f"{sys.executable} -m prefect.engine")
_ENV_VAR = re.compile(r"\{\{\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class RefusedRun(RuntimeError):
    """A flow run whose deployment or job template is not what this worker's checkout deployed."""


def checkout() -> Path:
    return Path(os.environ.get("QA_PIPELINE_CHECKOUT") or Path(__file__).resolve().parents[1]).resolve()


def _fill_env(value: Any) -> Any:
    """``{{ $VAR }}`` from this process's environment, as ``prefect deploy`` fills it."""
    if isinstance(value, str):
        return _ENV_VAR.sub(lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_fill_env(v) for v in value]
    if isinstance(value, dict):
        return {k: _fill_env(v) for k, v in value.items()}
    return value


def expected_deployments(root: Path) -> dict[str, dict[str, Any]]:
    """``{name: {"entrypoint", "pull_steps"}}`` from the checkout's prefect.yaml."""
    spec = yaml.safe_load((root / "prefect.yaml").read_text(encoding="utf-8"))
    default_pull = spec.get("pull") or []
    return {d["name"]: {"entrypoint": d["entrypoint"], "pull_steps": d.get("pull", default_pull)}
            for d in spec.get("deployments") or []}


def expected_template(root: Path) -> dict[str, Any]:
    return json.loads((root / TEMPLATE).read_text(encoding="utf-8"))


def check_run(deployment: Any, base_job_template: dict[str, Any], command: str | None, root: Path) -> None:
    """Raise :class:`RefusedRun` naming what differs from the checkout; return when all is as deployed."""
    if deployment is None:
        raise RefusedRun("the flow run has no deployment: this worker runs only its checkout's deployments")
    wanted = expected_deployments(root).get(deployment.name)
    if wanted is None:
        raise RefusedRun(f"deployment {deployment.name!r} is not in {root / 'prefect.yaml'}")
    if deployment.entrypoint != wanted["entrypoint"]:
        raise RefusedRun(f"deployment {deployment.name!r}: entrypoint {deployment.entrypoint!r} on the server, "
                         f"{wanted['entrypoint']!r} in prefect.yaml")
    pulled = deployment.pull_steps or []
    if pulled not in (wanted["pull_steps"], _fill_env(wanted["pull_steps"])):
        raise RefusedRun(f"deployment {deployment.name!r}: its pull steps on the server differ from prefect.yaml's "
                         f"({json.dumps(pulled)[:300]})")
    if base_job_template != expected_template(root):
        raise RefusedRun(f"the work pool's base job template differs from {TEMPLATE}")
    if command not in (None, "", *PREFECT_COMMANDS):
        raise RefusedRun(f"the job configuration sets a command ({command[:100]!r}); this worker runs Prefect's own")


with warnings.catch_warnings():  # it takes the "process" type's place, which is the point
    warnings.simplefilter("ignore", UserWarning)

    class CheckedProcessWorker(ProcessWorker):
        """Prefect's process worker, checking each run against the checkout first (:func:`check_run`)."""

        async def run(self, flow_run, configuration, task_status=None):
            deployment = (await self.client.read_deployment(flow_run.deployment_id)
                          if flow_run.deployment_id else None)
            pool = await self.client.read_work_pool(self._work_pool_name)  # now, not the worker's cached copy
            check_run(deployment, pool.base_job_template, configuration.command, checkout())
            return await super().run(flow_run, configuration, task_status)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flows.worker", description=__doc__.split("\n")[0])
    ap.add_argument("--pool", required=True)
    ap.add_argument("--work-queue", action="append", dest="queues")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--name")
    args = ap.parse_args(argv)

    async def serve() -> None:
        async with CheckedProcessWorker(work_pool_name=args.pool, work_queues=args.queues, limit=args.limit,
                                        name=args.name, create_pool_if_not_found=False) as worker:
            await worker.start()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
