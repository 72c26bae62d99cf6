"""``make serve``: the project's Prefect server on 127.0.0.1 plus the scheduled ``rebuild`` deployment.

Uses the project's shared server (``flows._server``: the one a plain ``dvc repro`` reports to, same database),
starting it on ``--port`` (default 4200) when none is running, unless ``--no-server`` (then
``PREFECT_API_URL`` must point at one). Serves ``rebuild`` on ``schedule.cron`` from params.yaml (or
``--interval`` seconds, for tests and demos), with a deployment concurrency limit of one. While it serves it
holds a lease, so the server stays up. Ctrl-C (or SIGTERM) first stops the runs in progress, every process
of them (the rebuild, its ``dvc repro``, the stage), which record themselves Cancelled, then the runner, and
the server too if this started it. Starting again cancels the runs a ``make serve`` that was killed outright
left Running, so their concurrency slot does not hold up the next rebuild; one ``make serve`` per deployment
and checkout (a lock in ``.prefect/``).

Serve owns only what it started: its deployment carries the tag ``served-by:<host>:<pid>``, and a second
``make serve`` (another checkout, another machine, on one shared server) refuses to start while the first is
alive (same host: its process; another host: the deployment polled within ``LIVE_POLL_S``), so it never takes
the deployment over, and never cancels the first one's runs as orphans.

Its deployment (``rebuild/<schedule.deployment_name>``, default ``rebuild/scheduled``) and prefect.yaml's for
work pools (``rebuild/pool``) have different names: a served deployment re-registers under its name, so one
name for both would hand the pool's deployment to this process. Serving under a name a work pool owns is
refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flows._common import auth_refusal, cancel_its_task_runs
from flows._server import (
    DEFAULT_IDLE_S,
    HOME,
    IDLE_ENV,
    PORT_ENV,
    STATE,
    running_server,
    server_note,
    shared_api_url,
    stage_lease,
    stop_shared_server,
)
from pipeline.params import ParamsError, ScheduleParams, load_params


SERVED_BY = "served-by:"
LIVE_POLL_S = 90.0  # a runner polls its deployments every 10 s (PREFECT_RUNNER_POLL_FREQUENCY)


def served_by_tag() -> str:
    import socket

    return f"{SERVED_BY}{socket.gethostname()}:{os.getpid()}"


def live_server_of(full_name: str) -> str | None:
    """The ``host:pid`` of another ``make serve`` that serves ``flow/name`` now, or None. Same host: its
    process is alive; another host: the deployment was polled within ``LIVE_POLL_S``."""
    import datetime as dt
    import socket

    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    from pipeline.common.files import pid_alive

    with get_client(sync_client=True) as client:
        try:
            found = client.read_deployment_by_name(full_name)
        except ObjectNotFound:
            return None
    owners = [t.removeprefix(SERVED_BY) for t in found.tags if t.startswith(SERVED_BY)]
    if not owners or owners == [served_by_tag().removeprefix(SERVED_BY)]:
        return None
    host, _, pid = owners[0].rpartition(":")
    if host == socket.gethostname():
        return owners[0] if pid.isdigit() and pid_alive(int(pid)) else None
    polled = found.last_polled
    if polled is not None and (dt.datetime.now(dt.timezone.utc) - polled).total_seconds() < LIVE_POLL_S:
        return owners[0]
    return None


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def open_server_refusal(api_url: str, others_reach_it: bool | None = None) -> str | None:
    """Why ``make serve`` will not serve through a server others can reach, or None. A server on another host
    that answers without authentication lets anyone who reaches it deploy code to every worker and run this
    serve's rebuilds: it must run with ``PREFECT_SERVER_API_AUTH_STRING`` (infra/prefect), and this process
    with ``PREFECT_API_AUTH_STRING``. Asked of the server itself: an anonymous request must be refused."""
    from urllib.parse import urlsplit

    import httpx

    if others_reach_it is None:
        others_reach_it = (urlsplit(api_url).hostname or "") not in LOOPBACK
    if not others_reach_it:
        return None
    try:
        anonymous = httpx.get(api_url.rstrip("/") + "/admin/version", timeout=10).status_code
    except httpx.HTTPError as exc:
        return f"cannot reach the Prefect server at {api_url}: {type(exc).__name__}"
    if anonymous != 401:
        return (f"the Prefect server at {api_url} answers without authentication (HTTP {anonymous}): anyone who "
                "reaches it can create deployments that run code on the workers. Start it with "
                "PREFECT_SERVER_API_AUTH_STRING (infra/prefect/docker-compose.yml) and set PREFECT_API_AUTH_STRING here")
    auth = os.environ.get("PREFECT_API_AUTH_STRING")
    if not auth:
        return f"the Prefect server at {api_url} needs authentication: set PREFECT_API_AUTH_STRING"
    import base64

    token = base64.b64encode(auth.encode("utf-8")).decode("ascii")  # as Prefect's client sends it
    try:
        answered = httpx.get(api_url.rstrip("/") + "/admin/version", headers={"Authorization": f"Basic {token}"},
                             timeout=10).status_code
    except httpx.HTTPError as exc:
        return f"cannot reach the Prefect server at {api_url}: {type(exc).__name__}"
    if answered == 401:  # found now, not after the serve has started and its first call crashes
        return f"the Prefect server at {api_url} refuses this PREFECT_API_AUTH_STRING (HTTP 401): check its value"
    return None


def pool_owner(full_name: str) -> str | None:
    """The work pool of an existing deployment ``flow/name``, or None (none, or a served one). ``serve``
    silently re-registers a deployment of the same name as its own: the pool's runs then crash."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            found = client.read_deployment_by_name(full_name)
        except ObjectNotFound:
            return None
    return found.work_pool_name or None


UNFINISHED = ["PENDING", "RUNNING", "CANCELLING"]  # the states that hold a deployment's concurrency slot


def _rebuild_runs(client: Any, deployment_name: str, states: list[str]) -> list[Any]:
    """The runs of the ``rebuild`` flow (not a sweep's) of ``rebuild/<deployment_name>`` in ``states``."""
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterName,
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )

    return client.read_flow_runs(
        flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=states))),
        flow_filter=FlowFilter(name=FlowFilterName(any_=["rebuild"])),
        deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[deployment_name])))


def remove_scheduled_runs(deployment_name: str) -> int:
    """Delete the future runs the server scheduled for ``rebuild/<deployment_name>``: with nothing serving it,
    they would sit in the UI as Scheduled, then Late, for as long as the schedule reaches. ``make serve``
    started again schedules them anew. Returns how many went."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        runs = _rebuild_runs(client, deployment_name, ["SCHEDULED"])
        for run in runs:
            client.delete_flow_run(run.id)
    return len(runs)


def cancel_orphaned_runs(deployment_name: str) -> list[str]:
    """Cancel the runs of ``rebuild/<deployment_name>`` (and their stage runs) that a stopped ``make serve``
    left unfinished. Called while this process holds the deployment's serve lock and before it serves, so no
    live process can own them; cancelling releases the concurrency slot each holds (a slot whose lease died
    with the old server otherwise blocked the next rebuild for minutes, and the schedule with it). Returns
    the cancelled rebuild runs' ids."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.states import Cancelled

    unfinished = FlowRunFilterState(type=FlowRunFilterStateType(any_=UNFINISHED))
    cancelled: list[str] = []
    with get_client(sync_client=True) as client:
        for run in _rebuild_runs(client, deployment_name, UNFINISHED):
            stages = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                state=unfinished, tags=FlowRunFilterTags(all_=[f"rebuild:{run.id}"])))
            for stage in stages:
                client.set_flow_run_state(stage.id, Cancelled(message="its rebuild's make serve stopped"), force=True)
                cancel_its_task_runs(client, stage.id, "its rebuild's make serve stopped")
            client.set_flow_run_state(run.id, Cancelled(message="left running by a make serve that stopped"),
                                      force=True)
            cancel_its_task_runs(client, run.id, "left running by a make serve that stopped")
            cancelled.append(str(run.id))
    return cancelled


def _quiet_on_stop(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The runner's tasks cancelled by a stop (its control channel's reads among them) are a stop, not an
    error: asyncio's default handler printed each as "Exception in callback" with a 27-line traceback."""
    if isinstance(context.get("exception"), (asyncio.CancelledError, KeyboardInterrupt)):
        return
    loop.default_exception_handler(context)


async def _serve_quietly(runner: Any) -> None:
    asyncio.get_running_loop().set_exception_handler(_quiet_on_stop)
    await runner.start()


def _stop_runs_then_serving(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM: stop the runs' processes first, while the runner still has them (on its own way
    out it kills only the run process, and the stage under ``dvc repro`` ran on for minutes), then stop
    serving as Ctrl-C does."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C stops at once
    stopped = stop_children()
    if stopped:
        print(f"Stopped {stopped} process(es) of the runs in progress", flush=True)
    raise KeyboardInterrupt


# Python's own helper processes: multiprocessing's resource tracker ignores SIGINT and SIGTERM and ends when its
# parent does; signalling it made every stop wait out the timeout, and it is no run to report as stopped
HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _helper(process) -> bool:
    import psutil

    try:
        return any(h in " ".join(process.cmdline()) for h in HELPERS)
    except psutil.Error:
        return False


def _dvc(process) -> bool:
    """A ``dvc`` command: stopped with SIGINT, which it handles (it releases its lock on the stage graph), where
    SIGTERM kills it and leaves its PID in ``.dvc/tmp/rwlock`` ("had been killed" on every later command)."""
    import psutil

    try:
        argv = process.cmdline()
    except psutil.Error:
        return False
    return any(Path(arg).name == "dvc" for arg in argv[:2])


def stop_children(timeout_s: float = 60.0) -> int:
    """Stop every process this one started (the runs' processes, their ``dvc repro`` and its stage) with
    SIGTERM, so each run records itself Cancelled while the server still answers; SIGKILL what is left after
    ``timeout_s``. The shared server and its supervisor are left to ``stop_shared_server``. Returns how many
    processes were stopped."""
    import psutil

    keep: set[int] = set()
    with contextlib.suppress(OSError, ValueError):
        state = json.loads(STATE.read_text(encoding="utf-8"))
        for pid in (int(state.get("supervisor_pid", 0)), int(state.get("server_pid", 0))):
            with contextlib.suppress(psutil.Error):
                keep |= {pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))}
    children = [p for p in psutil.Process().children(recursive=True) if p.pid not in keep and not _helper(p)]
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.send_signal(signal.SIGINT if _dvc(child) else signal.SIGTERM)
    _, alive = psutil.wait_procs(children, timeout=timeout_s)
    for child in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    return len(children)


@contextlib.contextmanager
def serve_lock(deployment_name: str) -> Iterator[None]:
    """One ``make serve`` per deployment on this machine: a second would take the deployment over, and its
    clean-up would cancel the first one's runs."""
    from filelock import FileLock, Timeout

    HOME.mkdir(exist_ok=True)
    lock = FileLock(str(HOME / f"serve-{deployment_name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise SystemExit(f"rebuild/{deployment_name} is already served from this checkout (another make serve "
                         f"holds {lock.lock_file})") from None
    try:
        yield
    finally:
        lock.release()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__.split("\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, help="the UI's port (default: this checkout's last one, else 4200, else "
                                             "a port of its own; see flows._server.preferred_port)")
    ap.add_argument("--no-server", action="store_true", help="use the server at PREFECT_API_URL")
    ap.add_argument("--interval", type=float, help="seconds between runs, instead of schedule.cron")
    ap.add_argument("--repo-dir", default=".", help="checkout that rebuild runs dvc repro in (fixed for every run)")
    ap.add_argument("--targets", nargs="*", default=[])
    ap.add_argument("--notify", metavar="URL", default=os.environ.get("NOTIFY_URL") or None,
                    help="a webhook for a message when a rebuild fails or a headline figure moves (flows/notify.py; "
                         "make serve NOTIFY_URL=...)")
    return ap.parse_args(argv)


def argument_refusal(args: argparse.Namespace) -> str | None:
    """Why these arguments cannot be served (a non-loopback host, a server that is not this user's), or None."""
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        return "refusing to bind the Prefect server to a non-loopback address"
    if args.no_server and not os.environ.get("PREFECT_API_URL"):
        return "--no-server needs PREFECT_API_URL"
    if args.no_server:
        return open_server_refusal(os.environ["PREFECT_API_URL"])
    if args.notify:
        from flows.notify import check_url

        try:
            check_url(args.notify)
        except ValueError as exc:
            return f"--notify: {exc}"
    return None


def connect(args: argparse.Namespace) -> bool:
    """Point this process (and so the runs) at the checkout's server, starting it if none runs; say where its UI
    is. Returns whether it was started here (and so is stopped when serving ends). Before anything imports
    prefect (the params check does, for the cron parser): a prefect imported without PREFECT_API_URL starts a
    temporary server of its own for the deployment."""
    if args.no_server:
        return False
    if args.port:
        os.environ[PORT_ENV] = str(args.port)
    started_here = running_server() is None
    os.environ["PREFECT_API_URL"] = shared_api_url(announce=False)
    note = server_note()
    print(f"Prefect UI of {Path.cwd().resolve()}: {os.environ['PREFECT_API_URL'].removesuffix('/api')}"
          f"{f' ({note})' if note else ''} (every run of this checkout: dvc repro, dvc exp run, the schedule; "
          f"up while this serves{', then stopped' if started_here else ''})", flush=True)
    return started_here


def deployment_settings(args: argparse.Namespace, schedule: ScheduleParams) -> dict[str, Any]:
    """The rebuild deployment's name, parameters, schedule and tags (``Runner.add_flow``'s keywords)."""
    from prefect.schedules import Cron, Interval

    repo = Path(args.repo_dir).resolve()
    return dict(
        name=schedule.deployment_name,
        parameters={"targets": args.targets},
        concurrency_limit=1,
        description=f"dvc repro in {repo}, then one artifact per track with the headline figures and their change",
        schedule=Interval(args.interval) if args.interval else Cron(schedule.cron, timezone=schedule.timezone),
        tags=[served_by_tag(), f"checkout:{repo}"],
    )


def takeover_refusal(full_name: str) -> str | None:
    """Why serving ``full_name`` here would take another's deployment (another make serve, a work pool's), or
    None."""
    other, owner = live_server_of(full_name), pool_owner(full_name)
    refusal = (f"{full_name} is served by another make serve ({other}) on this server: serving it here would take "
               "its deployment and cancel its runs. Stop that one first, or" if other else
               f"{full_name} on this server is work pool {owner!r}'s deployment (prefect deploy): serving under the "
               "same name would take it over and crash its runs." if owner else None)
    return f"{refusal} Set schedule.deployment_name in params.yaml to another name." if refusal else None


def serve(args: argparse.Namespace, schedule: ScheduleParams, deployment: dict[str, Any]) -> None:
    """Serve the rebuild flow until a signal; then stop the runs in progress (they record themselves Cancelled)
    before the server goes."""
    from prefect.runner import Runner

    from flows.rebuild import rebuild

    # the command to trigger a run, with the server's address (works in any shell)
    prefect_bin = Path(sys.executable).with_name("prefect")
    print(f"Run one now: PREFECT_API_URL={shlex.quote(os.environ['PREFECT_API_URL'])} {shlex.quote(str(prefect_bin))} "
          f"deployment run {shlex.quote('rebuild/' + schedule.deployment_name)}", flush=True)
    signal.signal(signal.SIGTERM, _stop_runs_then_serving)
    signal.signal(signal.SIGINT, _stop_runs_then_serving)
    with serve_lock(schedule.deployment_name), stage_lease():  # the lease keeps the server up meanwhile
        orphans = cancel_orphaned_runs(schedule.deployment_name)
        if orphans:
            print(f"Cancelled {len(orphans)} rebuild run(s) a stopped make serve left unfinished: "
                  f"{', '.join(orphans)}", flush=True)
        try:
            # Prefect's own banner names `prefect deployment run ...` without the server: in a shell
            # without PREFECT_API_URL that starts a temporary server and finds no deployment
            print(f"Serving rebuild/{schedule.deployment_name} "
                  f"({f'every {args.interval:g} s' if args.interval else f'cron {schedule.cron} {schedule.timezone}'});"
                  f" Ctrl-C stops it and the runs in progress", flush=True)
            # add_flow, not prefect.serve(deployment): the runner then runs this process's rebuild flow
            # itself. A served *deployment* runs `python -m prefect.engine`, which loads the entrypoint and
            # runs the pull steps the server holds, and anyone who reaches the API can PATCH those.
            runner = Runner(pause_on_shutdown=True)
            runner.add_flow(rebuild, **deployment)
            try:
                asyncio.run(_serve_quietly(runner))
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM (_stop_runs_then_serving): a stop, not a crash
                print(f"Stopped serving rebuild/{schedule.deployment_name}", flush=True)
        finally:
            stopped = stop_children()  # before the server goes: the runs record themselves Cancelled
            if stopped:
                print(f"Stopped {stopped} process(es) of the runs in progress", flush=True)
            with contextlib.suppress(Exception):  # a server already gone keeps its runs; the next serve goes on
                removed = remove_scheduled_runs(schedule.deployment_name)
                if removed:
                    print(f"Removed the {removed} future run(s) scheduled for rebuild/{schedule.deployment_name}; "
                          "`make serve` schedules them again", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Check the arguments, connect to (or start) the checkout's server, check params and the deployment's name,
    then serve; a server started here stops with it, whatever ended it."""
    args = parse_args(argv)
    refusal = argument_refusal(args)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    started_here = connect(args)
    try:
        try:
            schedule = load_params(args.params).schedule
        except ParamsError as exc:
            print(exc, file=sys.stderr)
            return 2
        from flows.rebuild import REPO_ENV, check_targets  # after PREFECT_API_URL is set

        os.environ[REPO_ENV] = str(Path(args.repo_dir).resolve())  # inherited by the runs, not a run parameter
        check_targets(args.targets)
        deployment = deployment_settings(args, schedule)
        refusal = takeover_refusal(f"rebuild/{schedule.deployment_name}")
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
        if args.notify:
            from urllib.parse import urlparse

            from flows.notify import set_up

            print(f"Notifications to {urlparse(args.notify).hostname}: {', '.join(set_up(args.notify))}", flush=True)
        serve(args, schedule, deployment)
    except Exception as exc:  # a server that refuses the credentials: one line, as the worker and the stages say
        refusal = auth_refusal(exc, os.environ.get("PREFECT_API_URL"))
        if refusal is None:
            raise
        print(f"make serve: {refusal}", file=sys.stderr)
        return 2
    finally:
        if started_here:
            stop_shared_server()
            print("Stopped the Prefect server this make serve started", flush=True)
        elif not args.no_server:  # a stage's server: it outlives this serve, as its first console line said
            idle = float(os.environ.get(IDLE_ENV, str(DEFAULT_IDLE_S)))
            print(f"The Prefect server at {os.environ['PREFECT_API_URL'].removesuffix('/api')} was running before "
                  f"this make serve and stays up until {idle:.0f} s pass without a stage ({IDLE_ENV})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
