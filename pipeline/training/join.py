"""``python -m pipeline.training.join``: lend this machine to the multi-node training of another one.

Run it in the same checkout (shared storage) on every node but the one running ``dvc repro``, with the same
``distributed`` params (``nnodes`` > 1, ``rdzv_endpoint``). Each time a training stage there starts
``torchrun`` it writes ``.training-launch.json``; this process then starts this node's ``torchrun`` into the
same rendezvous, waits for it, and waits for the next stage (``--once``: one training, then exit)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pipeline.common.runtime import get_logger
from pipeline.params import ParamsError, load_params
from pipeline.training.launch import POINTER, run_torchrun, torchrun_command


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.training.join", description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--once", action="store_true", help="join one training run, then exit")
    ap.add_argument("--timeout", type=float, default=None, help="give up after this many seconds without a run")
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
        launch = _read_pointer()
        if launch and launch["rdzv_id"] not in joined:
            joined.add(launch["rdzv_id"])
            if launch["rdzv_endpoint"] != dist.rdzv_endpoint or launch["nnodes"] != dist.nnodes:
                log.error("launch %s uses %s x %d nodes, this node's params %s x %d: not joining",
                          launch["rdzv_id"], launch["rdzv_endpoint"], launch["nnodes"], dist.rdzv_endpoint, dist.nnodes)
                return 1
            run_torchrun(torchrun_command(dist.nproc_per_node, dist.nnodes, dist.rdzv_endpoint, launch["rdzv_id"],
                                          Path(launch["call"])), f"joined training {launch['rdzv_id']}")
            if args.once:
                return 0
            since = time.monotonic()
        if args.timeout is not None and time.monotonic() - since > args.timeout:
            log.error("no training run to join within %.0f s", args.timeout)
            return 1
        time.sleep(0.5)


def _read_pointer() -> dict | None:
    try:
        return json.loads(POINTER.read_text())
    except (FileNotFoundError, json.JSONDecodeError):  # not there yet, or being replaced
        return None


if __name__ == "__main__":
    sys.exit(main())
