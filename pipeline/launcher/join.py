"""``python -m pipeline.launcher.join``: lend this machine to the multi-node training of another one.

Run it in the same checkout (shared storage) on every node but the one running ``dvc repro``, with the same
``distributed`` params (``nnodes`` > 1, ``rdzv_endpoint``). Each time a training stage there starts
``torchrun`` it writes ``.training-launch.json``; this process then starts this node's ``torchrun`` into the
same rendezvous, waits for it, and waits for the next stage (``--once``: one training, then exit). A failed
training leaves it waiting for the next; a pointer older than ``--max-age`` (left by a killed stage), dated in
the future, not this user's private file, or naming a run that the rendezvous store at ``rdzv_endpoint`` is
not hosting now (the stage that wrote it is gone, or a newer one replaced it) is ignored."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pipeline.common.logs import get_logger
from pipeline.params import ParamsError, load_params
from pipeline.launcher.torchrun import POINTER, RUN_ID, hosted_run, run_torchrun, torchrun_command, trusted_file

DEFAULT_MAX_AGE_S = 120.0  # node 0 writes the pointer right before its torchrun, which waits for the others


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.launcher.join", description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--once", action="store_true", help="join one training run, then exit")
    ap.add_argument("--timeout", type=float, default=None, help="give up after this many seconds without a run")
    ap.add_argument("--max-age", type=float, default=DEFAULT_MAX_AGE_S,
                    help="ignore a launch announced longer ago than this (seconds): a stale one from a killed stage")
    args = ap.parse_args(argv)
    try:
        dist = load_params(args.params).distributed
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        return 2
    if dist.nnodes < 2:
        print(f"{args.params}: distributed.nnodes is {dist.nnodes}; joining needs nnodes > 1", file=sys.stderr)
        return 2
    log = get_logger()
    joined: set[str] = set()
    log.info("waiting for a training run to join (%s)", POINTER.resolve())
    since = time.monotonic()
    while True:
        launch = _read_pointer(args.max_age)
        hosted = hosted_run(dist.rdzv_endpoint) if launch and launch["rdzv_id"] not in joined else None
        if launch and hosted and hosted != launch["rdzv_id"]:
            log.info("launch %s is not the run hosted at %s (a newer one is): not joining it",
                     launch["rdzv_id"], dist.rdzv_endpoint)
            joined.add(launch["rdzv_id"])
        elif launch and hosted == launch["rdzv_id"]:  # the run its stage hosts now (None: ended or not yet up)
            joined.add(launch["rdzv_id"])
            if launch["rdzv_endpoint"] != dist.rdzv_endpoint or launch["nnodes"] != dist.nnodes:
                log.error("launch %s uses %s x %d nodes, this node's params %s x %d: not joining",
                          launch["rdzv_id"], launch["rdzv_endpoint"], launch["nnodes"], dist.rdzv_endpoint, dist.nnodes)
                return 1
            try:
                run_torchrun(torchrun_command(dist.nproc_per_node, dist.nnodes, dist.rdzv_endpoint,
                                              launch["rdzv_id"], Path(launch["spec"])),
                             f"joined training {launch['rdzv_id']}")
            except RuntimeError as exc:  # that run failed (on any node): this node waits for the next one
                log.error("training %s failed: %s", launch["rdzv_id"], str(exc).splitlines()[0])
                if args.once:
                    return 1
            else:
                if args.once:
                    return 0
            since = time.monotonic()
        if args.timeout is not None and time.monotonic() - since > args.timeout:
            log.error("no training run to join within %.0f s", args.timeout)
            return 1
        time.sleep(0.5)


def _read_pointer(max_age: float = DEFAULT_MAX_AGE_S) -> dict | None:
    """The launch node 0 announced, if it can be trusted now: this user's private file, written less than
    ``max_age`` seconds ago (a pointer left by a killed stage names a rendezvous nobody will join), naming a
    launch spec that is this user's too (each worker checks the spec again, and that it names this run)."""
    if not trusted_file(POINTER, private_folder=False):
        return None
    try:
        launch = json.loads(POINTER.read_text())
        fresh = 0 <= time.time() - float(launch["written"]) <= max_age  # a future date is no fresher
        spec_ok = bool(RUN_ID.fullmatch(str(launch["rdzv_id"]))) and trusted_file(Path(launch["spec"]))
    except (FileNotFoundError, json.JSONDecodeError, KeyError, TypeError, ValueError):  # being replaced
        return None
    return launch if fresh and spec_ok else None


if __name__ == "__main__":
    sys.exit(main())
