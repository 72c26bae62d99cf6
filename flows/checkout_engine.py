"""``python -m flows.checkout_engine``: the flow-run process :mod:`flows.worker` starts, Prefect's
``prefect.engine`` with one difference: the flow is this checkout's, found by the run's deployment name in
prefect.yaml, and no pull step or server-side entrypoint is ever read (``prefect.engine`` reads both from the
server, again, after the worker has started it), and no state the server answers with is deserialized
(:mod:`flows.engine_guard`)."""

from __future__ import annotations

import os
import sys
from uuid import UUID


def main() -> None:
    from prefect._internal.control_listener import configure_from_env
    from prefect.client.orchestration import get_client
    from prefect.engine import _drive_run_flow_result, engine_logger, handle_engine_signals

    from flows.engine_guard import install
    from flows.worker import RefusedRun, checkout, checkout_flow_for

    install()  # a state the server forces on this run is never deserialized here

    try:
        flow_run_id = UUID(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PREFECT__FLOW_RUN_ID", ""))
    except ValueError:
        engine_logger.error("no valid flow run id (PREFECT__FLOW_RUN_ID)")
        sys.exit(1)
    configure_from_env()
    with handle_engine_signals(flow_run_id):
        from prefect.flow_engine import flow_run_logger, load_flow_run, run_flow

        flow_run = load_flow_run(flow_run_id=flow_run_id)
        run_logger = flow_run_logger(flow_run=flow_run)
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment(flow_run.deployment_id) if flow_run.deployment_id else None
            flow_name = client.read_flow(deployment.flow_id).name if deployment is not None else None
        try:
            flow = checkout_flow_for(deployment.name if deployment else None, flow_name, checkout())
        except RefusedRun:
            run_logger.error("refused: not a deployment of this checkout", exc_info=True)
            raise
        _drive_run_flow_result(flow, run_flow(flow, flow_run=flow_run, error_logger=run_logger))


if __name__ == "__main__":
    main()
