"""``python -m flows.worker --pool qa-pipeline --work-queue points``: a Prefect process worker that runs only
what this checkout holds.

Anyone who can reach the Prefect API can create a deployment, edit one, or edit the work pool's job template,
at any moment: Prefect's own worker builds each job from the pool's template and the deployment's variables as
the server has them, and its engine process then loads the flow by the deployment's pull steps and entrypoint,
read from the server again. Checking those objects first is a race (a PATCH between the check and the read wins).
So this worker reads nothing from the server that could choose code, a folder or an environment:

* the job is built from this checkout's ``infra/prefect/process-job-template.json`` with no values from the
  server (no pool template, no deployment or run job variables): the worker's own environment, Prefect's run
  variables, the checkout as working folder;
* it runs :mod:`flows.checkout_engine`, which loads the flow from the entrypoint this checkout's
  ``prefect.yaml`` gives the run's deployment name, and never a pull step;
* what the server still decides is which of this checkout's deployments runs, and with which parameters (each
  flow validates its own: science values only). A run whose deployment name or flow is not one of the
  checkout's is marked Crashed with the reason, and nothing of it runs.

The checkout is ``$QA_PIPELINE_CHECKOUT`` (the same variable prefect.yaml's pull step uses), else this one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import yaml
from prefect.utilities.processutils import command_to_string
from prefect.workers.process import ProcessWorker, ProcessWorkerResult

TEMPLATE = Path("infra/prefect/process-job-template.json")
ENGINE_MODULE = "flows.checkout_engine"


class RefusedRun(RuntimeError):
    """A flow run whose deployment is not one of this worker's checkout."""


def checkout() -> Path:
    return Path(os.environ.get("QA_PIPELINE_CHECKOUT") or Path(__file__).resolve().parents[1]).resolve()


def checkout_entrypoints(root: Path) -> dict[str, str]:
    """``{deployment name: entrypoint}`` from the checkout's prefect.yaml."""
    spec = yaml.safe_load((root / "prefect.yaml").read_text(encoding="utf-8"))
    return {d["name"]: d["entrypoint"] for d in spec.get("deployments") or []}


def load_checkout_flow(root: Path, entrypoint: str):
    """The flow object at ``entrypoint`` (``flows/sweep.py:experiment_point``), imported as a module of the
    checkout: the code is the checkout's, whatever the server says."""
    path, _, name = entrypoint.partition(":")
    module = path.removesuffix(".py").replace("/", ".")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return getattr(importlib.import_module(module), name)


def checkout_flow_for(deployment_name: str | None, flow_name: str | None, root: Path):
    """The checkout's flow for a run of deployment ``deployment_name`` of flow ``flow_name``, or
    :class:`RefusedRun`: the name must be in prefect.yaml and the flow must be the one its entrypoint defines
    (a deployment of that name made under another flow is not the checkout's)."""
    if deployment_name is None:
        raise RefusedRun("the flow run has no deployment: this worker runs only its checkout's deployments")
    entrypoint = checkout_entrypoints(root).get(deployment_name)
    if entrypoint is None:
        raise RefusedRun(f"deployment {deployment_name!r} is not in {root / 'prefect.yaml'}")
    flow = load_checkout_flow(root, entrypoint)
    if flow.name != flow_name:
        raise RefusedRun(f"deployment {deployment_name!r} belongs to flow {flow_name!r} on the server; prefect.yaml "
                         f"deploys it for flow {flow.name!r} ({entrypoint})")
    return flow


def engine_command() -> str:
    return command_to_string([sys.executable, "-m", ENGINE_MODULE])


with warnings.catch_warnings():  # it takes the "process" type's place, which is the point
    warnings.simplefilter("ignore", UserWarning)

    class CheckedProcessWorker(ProcessWorker):
        """Prefect's process worker, running each run's flow from the checkout with the checkout's job."""

        async def _checkout_flow(self, flow_run):
            deployment = (await self.client.read_deployment(flow_run.deployment_id)
                          if flow_run.deployment_id else None)
            flow = await self.client.read_flow(deployment.flow_id) if deployment is not None else None
            return checkout_flow_for(deployment.name if deployment else None, flow.name if flow else None, checkout())

        async def checkout_configuration(self, flow_run):
            """The job of a run, from the checkout's template alone (no server values), running the checkout's
            engine in the checkout."""
            import json

            root = checkout()
            template = json.loads((root / TEMPLATE).read_text(encoding="utf-8"))
            configuration = await self.job_configuration.from_template_and_values(
                base_job_template=template, values={}, client=self.client)
            configuration.command = engine_command()
            configuration.working_dir = root
            configuration.prepare_for_flow_run(flow_run=flow_run, worker_name=self.name, worker_id=self.backend_id)
            return configuration

        async def run(self, flow_run, configuration, task_status=None) -> ProcessWorkerResult:
            from prefect.runner._flow_run_executor import FlowRunExecutorContext
            from prefect.runner._starter_engine import EngineCommandStarter

            await self._checkout_flow(flow_run)  # refused here (Crashed, with the reason) unless it is ours
            own = await self.checkout_configuration(flow_run)  # the server's configuration is not used

            async def resolve_flow(run):  # for crash and cancellation hooks: the checkout's flow, never a pull
                return await self._checkout_flow(run)

            if task_status is None:
                task_status = anyio.TASK_STATUS_IGNORED
            execution = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                async with FlowRunExecutorContext() as ctx:
                    starter = EngineCommandStarter(command=own.command, cwd=Path(own.working_dir), env=own.env,
                                                   stream_output=own.stream_output, control_channel=ctx.control_channel)
                    executor = ctx.create_executor(flow_run, starter, resolve_flow=resolve_flow,
                                                   propose_submitting=False)

                    async def execute(*, task_status=anyio.TASK_STATUS_IGNORED) -> None:
                        nonlocal execution
                        execution = await executor.submit(task_status=task_status)

                    async with anyio.create_task_group() as group:
                        handle = await group.start(execute)
                        if handle.pid is None:
                            raise RuntimeError("Flow run process has no PID")
                        task_status.started(handle.pid)
            if execution is None or execution.status_code is None:
                raise RuntimeError("Failed to start flow run process.")
            return ProcessWorkerResult(status_code=execution.status_code, identifier=str(execution.handle.pid))


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

    try:
        asyncio.run(serve())
    except Exception as exc:
        from flows._common import auth_refusal

        refusal = auth_refusal(exc, os.environ.get("PREFECT_API_URL"))
        if refusal is None:
            raise
        print(f"flows.worker: {refusal}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
