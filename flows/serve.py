"""``make serve``: the project's Prefect server on 127.0.0.1 plus the scheduled ``rebuild`` deployment.

Uses the project's shared server (``flows._server``: the one a plain ``dvc repro`` reports to, same database),
starting it on ``--port`` (default 4200) when none is running, unless ``--no-server`` (then
``PREFECT_API_URL`` must point at one). Serves ``rebuild`` on ``schedule.cron`` from params.yaml (or
``--interval`` seconds, for tests and demos), with a deployment concurrency limit of one. While it serves it
holds a lease, so the server stays up; Ctrl-C stops the runner, and the server too if this started it.

Its deployment (``rebuild/<schedule.deployment_name>``, default ``rebuild/nightly``) and prefect.yaml's for
work pools (``rebuild/pool``) have different names: a served deployment re-registers under its name, so one
name for both would hand the pool's deployment to this process. Serving under a name a work pool owns is
refused.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from flows._server import (
    PORT_ENV,
    running_server,
    shared_api_url,
    stage_lease,
    stop_shared_server,
)
from pipeline.params import ParamsError, load_params


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__.split("\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=4200)
    ap.add_argument("--no-server", action="store_true", help="use the server at PREFECT_API_URL")
    ap.add_argument("--interval", type=float, help="seconds between runs, instead of schedule.cron")
    ap.add_argument("--repo-dir", default=".", help="checkout that rebuild runs dvc repro in (fixed for every run)")
    ap.add_argument("--targets", nargs="*", default=[])
    args = ap.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("refusing to bind the Prefect server to a non-loopback address", file=sys.stderr)
        return 2
    if args.no_server and not os.environ.get("PREFECT_API_URL"):
        print("--no-server needs PREFECT_API_URL", file=sys.stderr)
        return 2
    started_here = False
    if not args.no_server:
        # before anything imports prefect (the params check does, for the cron parser): a prefect imported
        # without PREFECT_API_URL starts a temporary server of its own for the deployment
        os.environ.setdefault(PORT_ENV, str(args.port))
        started_here = running_server() is None
        os.environ["PREFECT_API_URL"] = shared_api_url(announce=False)
        print(f"Prefect UI: {os.environ['PREFECT_API_URL'].removesuffix('/api')} (every run of this project: "
              f"dvc repro, dvc exp run, the schedule; up while this serves"
              f"{', then stopped' if started_here else ''})", flush=True)
    try:
        schedule = load_params(args.params).schedule
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        if started_here:
            stop_shared_server()
        return 2

    from prefect import serve  # after PREFECT_API_URL is set
    from prefect.schedules import Cron, Interval

    from flows.rebuild import REPO_ENV, check_targets, rebuild

    os.environ[REPO_ENV] = str(Path(args.repo_dir).resolve())  # inherited by the runs, not a run parameter
    check_targets(args.targets)
    when = Interval(args.interval) if args.interval else Cron(schedule.cron, timezone=schedule.timezone)
    deployment = rebuild.to_deployment(
        name=schedule.deployment_name,
        parameters={"targets": args.targets},
        concurrency_limit=1,
        description="dvc repro, then one artifact per track with the headline figures and their change",
        schedule=when,
    )
    owner = pool_owner(f"rebuild/{schedule.deployment_name}")
    if owner:
        print(f"rebuild/{schedule.deployment_name} on this server is work pool {owner!r}'s deployment (prefect "
              f"deploy): serving under the same name would take it over and crash its runs. Set "
              f"schedule.deployment_name in params.yaml to another name.", file=sys.stderr)
        if started_here:
            stop_shared_server()
        return 2
    # Prefect's own banner prints `prefect deployment run ...` without the server's address, which in a
    # shell without PREFECT_API_URL starts a temporary server and finds no deployment: print one that works
    prefect_bin = Path(sys.executable).with_name("prefect")
    print(f"Run one now: PREFECT_API_URL={shlex.quote(os.environ['PREFECT_API_URL'])} {shlex.quote(str(prefect_bin))} "
          f"deployment run {shlex.quote('rebuild/' + schedule.deployment_name)}", flush=True)
    try:
        with stage_lease():  # the supervisor keeps the server up while the scheduler runs
            serve(deployment)
    finally:
        if started_here:
            stop_shared_server()
    return 0


if __name__ == "__main__":
    sys.exit(main())
