"""``make serve``: a local Prefect server on 127.0.0.1 plus the scheduled ``rebuild`` deployment.

Starts ``prefect server start`` unless ``--no-server`` (then ``PREFECT_API_URL`` must point at one), and
serves ``rebuild`` on ``schedule.cron`` from params.yaml (or ``--interval`` seconds, for tests and demos),
with a deployment concurrency limit of one. Ctrl-C stops the runner and the server this started (by PID).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from flows._server import start_server
from pipeline.common.runtime import stop_process_group
from pipeline.params import ParamsError, load_params


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
    if not args.no_server:
        # before anything imports prefect (the params check does, for the cron parser): a prefect imported
        # without PREFECT_API_URL starts a temporary server of its own for the deployment
        os.environ["PREFECT_API_URL"] = f"http://{args.host}:{args.port}/api"
    try:
        schedule = load_params(args.params).schedule
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        return 2

    server = None
    if not args.no_server:
        Path(".prefect").mkdir(exist_ok=True)
        server = start_server(args.host, args.port, Path(".prefect/server.log"))
        print(f"Prefect UI: http://{args.host}:{args.port}", flush=True)
    elif not os.environ.get("PREFECT_API_URL"):
        print("--no-server needs PREFECT_API_URL", file=sys.stderr)
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
        description="dvc repro, then dvc metrics show as an artifact",
        schedule=when,
    )
    try:
        serve(deployment)
    finally:
        if server is not None:
            stop_process_group(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
