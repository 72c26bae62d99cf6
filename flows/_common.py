"""What every stage flow shares: params validated before the flow starts, the Prefect server it reports to
(``PREFECT_API_URL``, else the project's shared one of ``flows._server``), run names and tags, and a retry
condition.

A stage's flow run is named after the stage and its variant (``quail_mc@options``), as ``dvc repro`` prints
it, and tagged ``dvc-stage``; started by a ``rebuild`` run it also carries ``rebuild:<that run's id>``
(``QA_PIPELINE_PARENT_RUN``), so the UI filters one rebuild's stages with one tag."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from flows._server import reap_killed_runs, record_run, shared_api_url, stage_lease
from pipeline.common.transient import is_transient
from pipeline.params import DEFAULT_PARAMS_FILE, Params, ParamsError, load_params


def retry_if_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry only failures that can succeed on a second try."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the state's own exception, re-raised by result()
        return is_transient(exc)
    return False


PARENT_RUN_ENV = "QA_PIPELINE_PARENT_RUN"


def run_tags() -> list[str]:
    parent = os.environ.get(PARENT_RUN_ENV)
    return ["dvc-stage", *([f"rebuild:{parent}"] if parent else [])]


STOPPED_BY_SIGNAL = ("Execution was aborted by a termination signal.",
                     "Execution was aborted by an interrupt signal.")  # Prefect's crash messages


def cancelled_if_stopped(flow: Any, flow_run: Any, state: Any) -> None:
    """``on_crashed`` hook: a stage stopped by a signal (its rebuild cancelled, ``make serve`` or ``dvc repro``
    stopped with Ctrl-C) was cancelled by someone, not crashed; its run says so. A stage that died of its own
    error keeps its Crashed or Failed state."""
    if state.message not in STOPPED_BY_SIGNAL:
        return
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run.id, Cancelled(message=f"Stopped by a signal: {state.message}"),
                                  force=True)


def stage_main(flow: Callable[..., Any], argv: list[str] | None = None,
               variants: tuple[str, ...] | None = None) -> int:
    """CLI of ``python -m flows.<stage> [VARIANT]``: validate params first, so a bad file writes nothing at
    all. ``variants``: the values a ``foreach`` stage passes as its one positional argument."""
    ap = argparse.ArgumentParser(prog=f"python -m flows.{getattr(flow, 'name', 'stage')}")
    if variants:
        ap.add_argument("variant", choices=variants)
    ap.add_argument("--params", default=str(DEFAULT_PARAMS_FILE), help="params file (default: params.yaml)")
    args = ap.parse_args(argv)
    try:
        load_params(args.params)
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        return 2
    from prefect import tags
    from prefect.settings import PREFECT_API_URL, temporary_settings

    api_url = os.environ.get("PREFECT_API_URL") or shared_api_url()
    name = getattr(flow, "name", "stage") + (f"@{args.variant}" if variants else "")
    def leased(flow: Any, flow_run: Any, state: Any) -> None:
        record_run(str(flow_run.id), api_url)

    named = flow.with_options(flow_run_name=name.replace("{", "{{").replace("}", "}}"),
                              on_crashed=[*flow.on_crashed_hooks, cancelled_if_stopped],
                              on_running=[*flow.on_running_hooks, leased])
    reap_killed_runs()  # an earlier stage of this checkout killed with SIGKILL: its run says Crashed
    with stage_lease(), temporary_settings({PREFECT_API_URL: api_url}), tags(*run_tags()):
        if variants:
            named(args.variant, params_file=args.params)
        else:
            named(params_file=args.params)
    return 0


def params_of(params_file: str) -> Params:
    return load_params(params_file)
