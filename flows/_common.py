"""What the stage flows (``flows.stage``) share: the Prefect server a stage reports to
(``PREFECT_API_URL``, else the project's shared one of ``flows._server``), run names and tags, and a retry
condition.

A stage's flow run is named after the stage and its variant (``train_quail_mc@options``), as ``dvc repro`` prints
it, and tagged ``dvc-stage`` and ``stage-process:<host>:<pid>``; started by a ``rebuild`` run it also carries
``rebuild:<that run's id>``
(``QA_PIPELINE_PARENT_RUN``), so the UI filters one rebuild's stages with one tag, and is that run's subflow, so
the rebuild's page shows its stages inside it."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flows._server import reap_killed_runs, record_run, shared_api_url, stage_lease
from pipeline.common.transient import is_transient


RESULTS_PATH = Path(__file__).resolve().parents[1] / ".prefect" / "results"


def own_results() -> dict[str, Any]:
    """What every flow and task of the project says about its return value: not persisted, and stored (were it
    ever) in the checkout's own ``.prefect/results``. Prefect otherwise reads the server's default result storage
    (``PUT /api/admin/storage``, which any API caller may set) and persists a top-level flow's result there; a
    storage named on the flow is used as given, so the server's is never read, constructed or contacted."""
    return {"persist_result": False, "result_storage": RESULTS_PATH}


def retry_if_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry only failures that can succeed on a second try."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the state's own exception, re-raised by result()
        return is_transient(exc)
    return False


PARENT_RUN_ENV = "QA_PIPELINE_PARENT_RUN"


def process_tag() -> str:
    """Names the process that created a stage's run: what finds a run it created but never started."""
    import socket

    return f"stage-process:{socket.gethostname()}:{os.getpid()}"


def run_tags() -> list[str]:
    parent = os.environ.get(PARENT_RUN_ENV)
    return ["dvc-stage", *([f"rebuild:{parent}"] if parent else []), process_tag()]


def cancel_unstarted_runs() -> list[str]:
    """Runs this process created that are still Scheduled or Pending, marked Cancelled; their ids. Ctrl-C in the
    second between Prefect creating a stage's run and starting it left the run Pending for good."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Cancelled

    found = FlowRunFilter(tags=FlowRunFilterTags(all_=[process_tag()]),
                          state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED,
                                                                                     StateType.PENDING])))
    cancelled = []
    with get_client(sync_client=True) as client:
        for run in client.read_flow_runs(flow_run_filter=found):
            client.set_flow_run_state(run.id, Cancelled(message="Stopped before it started"), force=True)
            cancelled.append(str(run.id))
    return cancelled


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
        cancel_its_task_runs(client, flow_run.id, state.message)


def cancel_its_task_runs(client: Any, flow_run_id: Any, why: str) -> list[str]:
    """The task runs of a run stopped by a signal: Prefect's engine marks those it was running Crashed with
    the run, so the UI showed a Cancelled run full of Crashed tasks. Each task run not already Completed or
    Failed by its own doing ends Cancelled, with the signal named."""
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
        TaskRunFilterState,
        TaskRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Cancelled

    unfinished = TaskRunFilterState(type=TaskRunFilterStateType(any_=[
        StateType.CRASHED, StateType.RUNNING, StateType.PENDING, StateType.SCHEDULED]))
    done = []
    for task_run in client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
                                          task_run_filter=TaskRunFilter(state=unfinished)):
        client.set_task_run_state(task_run.id, Cancelled(message=f"Stopped by a signal: {why}"), force=True)
        done.append(str(task_run.id))
    return done


def record_this_run() -> None:
    """Called first in a stage's flow run: its lease names the run and server, so a stage killed with -9 is
    marked Crashed by whoever finds the lease next. (An ``on_running`` hook did this, and Prefect logged two
    "Running hook" lines per stage for it.)"""
    from prefect.runtime import flow_run

    record_run(str(flow_run.id), os.environ.get("PREFECT_API_URL") or "")


def subflow_run_of_rebuild(flow: Any, run_name: str, parameters: dict[str, Any]) -> Any | None:
    """The stage's flow run, created as a subflow of the rebuild that started it (``QA_PIPELINE_PARENT_RUN``),
    or None outside a rebuild. ``dvc repro`` runs each stage in a process of its own, so Prefect cannot see the
    rebuild as the stage's parent; this does what its engine does for an in-process subflow: a tracking task run
    in the rebuild's run, and the stage's run pointing at it. The UI then shows the stages inside their
    rebuild's run, and the server mirrors each stage's state onto its tracking task."""
    import uuid

    from prefect import Task
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.states import Pending

    try:
        parent = uuid.UUID(os.environ.get(PARENT_RUN_ENV) or "")
    except ValueError:
        return None
    with get_client(sync_client=True) as client:
        try:
            client.read_flow_run(parent)
        except ObjectNotFound:
            return None
        tracker = client.create_task_run(task=Task(name=run_name, fn=flow.fn), flow_run_id=parent,
                                         dynamic_key=f"{run_name}-{uuid.uuid4().hex[:8]}", name=run_name,
                                         state=Pending())
        return client.create_flow_run(flow, name=run_name, parameters=flow.serialize_parameters(parameters),
                                      tags=run_tags(), parent_task_run_id=tracker.id, state=Pending())


def auth_refusal(exc: BaseException, api_url: str | None) -> str | None:
    """A one-line message for a server that refused this process's credentials (HTTP 401 or 403), else None:
    a wrong ``PREFECT_API_AUTH_STRING`` is the user's to fix, not a traceback to read. The refusal is looked for in
    ``exc``, what it was raised from and, for an exception group (an asyncio task group's), its members."""
    import httpx

    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        response = getattr(current, "response", None)
        if isinstance(current, httpx.HTTPStatusError) and response is not None and \
                response.status_code in (401, 403):
            given = "PREFECT_API_AUTH_STRING is set" if os.environ.get("PREFECT_API_AUTH_STRING") else \
                "PREFECT_API_AUTH_STRING is not set"
            return (f"the Prefect server at {api_url or 'PREFECT_API_URL'} refused this process's credentials (HTTP "
                    f"{response.status_code}; {given}): set it to the server's PREFECT_SERVER_API_AUTH_STRING")
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            todo += list(current.exceptions)
    return None


def run_flow(flow: Callable[..., Any], run_name: str, **parameters: Any) -> int:
    """Run a stage's flow under the shared Prefect server (``PREFECT_API_URL``, else the project's own),
    named ``run_name`` and tagged, with the stage's lease held."""
    from prefect import tags
    from prefect.exceptions import TerminationSignal
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.engine_guard import install

    install()  # no state the server answers with is deserialized in this process

    api_url = os.environ.get("PREFECT_API_URL") or shared_api_url()
    os.environ["PREFECT_API_URL"] = api_url  # what record_this_run names
    named = flow.with_options(flow_run_name=run_name.replace("{", "{{").replace("}", "}}"),
                              on_crashed=[*flow.on_crashed_hooks, cancelled_if_stopped])
    reap_killed_runs()  # an earlier stage of this checkout killed with SIGKILL: its run says Crashed
    quiet_signal_stops()
    try:
        with stage_lease(), temporary_settings({PREFECT_API_URL: api_url}), tags(*run_tags()):
            created = subflow_run_of_rebuild(named, run_name, parameters)
            if created is None:
                named(**parameters)
            else:
                from prefect.flow_engine import run_flow as run_created

                run_created(named, flow_run=created, parameters=parameters)
    except (KeyboardInterrupt, TerminationSignal) as exc:
        how = "Ctrl-C" if isinstance(exc, KeyboardInterrupt) else "a termination signal"
        with contextlib.suppress(Exception), temporary_settings({PREFECT_API_URL: api_url}):
            cancel_unstarted_runs()  # stopped as Prefect created the run: not Pending for ever
        from flows import outputs_removed_hint

        print(f"{run_name}: stopped by {how}; its run is Cancelled"
              f"{outputs_removed_hint('(a training stage from its last checkpoint)')}", file=sys.stderr, flush=True)
        return 130 if isinstance(exc, KeyboardInterrupt) else 143
    except Exception as exc:
        refusal = auth_refusal(exc, api_url)
        if refusal is None:
            raise
        print(f"{run_name}: {refusal}", file=sys.stderr, flush=True)
        return 2
    return 0


_SIGNAL_STOP_LINES = tuple(f"Crash detected! {m}" for m in STOPPED_BY_SIGNAL) + tuple(
    f"Finished in state Crashed('{m}')" for m in STOPPED_BY_SIGNAL) + (
    *(f"Running hook '{hook}'" for hook in ("cancelled_if_stopped", "rebuild_cancelled")),
    *(f"Hook '{hook}' finished" for hook in ("cancelled_if_stopped", "rebuild_cancelled")))


def quiet_signal_stops() -> None:
    """In this process, a flow or task run stopped by a signal logs no crash report (see below)."""
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if _quiet_signal_stop not in logger.filters:
            logger.addFilter(_quiet_signal_stop)


def _quiet_signal_stop(record: logging.LogRecord) -> bool:
    """A stage stopped by a signal ends Cancelled (:func:`cancelled_if_stopped`) and says so in one line; Prefect's
    "Crash detected!", its Crashed state line and the hook's two lines said the opposite, in the console and
    in the run's log."""
    return not record.getMessage().startswith(_SIGNAL_STOP_LINES)
