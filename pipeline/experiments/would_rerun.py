"""``python -m pipeline.experiments.would_rerun -S section.key=value ...``: which stages an experiment with
these params would rerun, and when each last ran, before it starts.

Why not ``dvc exp run --dry``: DVC 3.67 runs ``--dry`` in a temporary copy without the outputs, where every
stage looks new. Here the overrides are checked against the params schema (as a sweep checks them), then read
against dvc.yaml: a stage that declares a changed key (or its section) reruns for certain; the stages
downstream of it rerun if its outputs come out different, which only running tells. Stages that are already
out of date in this workspace (``dvc status``) are listed too: ``dvc exp run`` reruns them whatever the
overrides."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from pipeline.experiments.sweep import SweepError, check_point

# The stamp of check_params does not change with valid values: it reruns and affects nothing downstream.
_ORDERING_ONLY = {"check_params"}


def parse_overrides(items: list[str]) -> dict[str, Any]:
    point: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SweepError(f"-S {item!r}: expected section.key=value")
        point[key.strip()] = yaml.safe_load(value)
    return point


def _declares(stage_params: list[str], key: str) -> bool:
    return any(key == p or key.startswith(p + ".") or p.startswith(key + ".") for p in stage_params)


def plan(repo: Path, point: dict[str, Any], with_status: bool = True) -> dict[str, Any]:
    """``{"direct": [...], "downstream": [...], "out_of_date": [...], "last_run": {stage: iso time}}``."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    check_point(point, repo / "params.yaml")
    dvc = Repo(str(repo))
    stages = {s.addressing: s for s in dvc.index.stages}
    direct = []
    for name, stage in stages.items():
        declared = [k for d in stage.deps if isinstance(d, ParamsDependency) for k in (d.params or [d.def_path])]
        if name not in _ORDERING_ONLY and any(_declares(declared, key) for key in point):
            direct.append(name)
    producers = {str(o.fs_path): name for name, st in stages.items() for o in st.outs}
    consumers: dict[str, set[str]] = {}
    for name, stage in stages.items():
        for dep in stage.deps:
            if isinstance(dep, ParamsDependency):
                continue
            path = str(dep.fs_path)
            for out_path, producer in producers.items():
                if producer != name and producer not in _ORDERING_ONLY and (
                        path == out_path or path.startswith(out_path.rstrip("/") + "/")):
                    consumers.setdefault(producer, set()).add(name)
    downstream: set[str] = set()
    todo = list(direct)
    while todo:
        for nxt in consumers.get(todo.pop(), ()):
            if nxt not in downstream and nxt not in direct:
                downstream.add(nxt)
                todo.append(nxt)
    order = list(stages)
    finished = finished_here(repo)
    last_run = {name: finished.get(name) for name in direct + sorted(downstream, key=order.index)}
    out_of_date = sorted(dvc.status(), key=lambda s: order.index(s) if s in order else len(order)) if with_status \
        else []
    return {"direct": direct, "downstream": sorted(downstream, key=order.index), "out_of_date": out_of_date,
            "last_run": last_run}


def finished_here(repo: Path) -> dict[str, str]:
    """When each stage last finished in this checkout (``flows.stage`` notes it beside its seconds); a stage
    that never ran here is absent, however old its outputs' files are."""
    try:
        table = json.loads((repo / ".dvc" / "tmp" / "stage-seconds.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    finished = table.get("_finished") if isinstance(table, dict) else None
    return {str(k): str(v) for k, v in finished.items()} if isinstance(finished, dict) else {}


def cost(names: list[str]) -> str:
    """``3 stages, about 12 min`` from the measured stage times (this checkout's, else the reference run's);
    an upper bound, as DVC skips a stage whose inputs come out the same; per-stage overhead and set-up apart."""
    from pipeline.experiments.repro import _minutes, stage_seconds

    seconds = stage_seconds()
    known = [seconds[n] for n in names if n in seconds]
    timed = f", {_minutes(sum(known))}" if known else ""
    untimed = len(names) - len(known)
    return (f"{len(names)} stage(s){timed}" + (f" ({untimed} never timed)" if untimed else "")
            + " at most, on the measured stage times")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.would_rerun", description=__doc__.split("\n")[0])
    ap.add_argument("-S", "--set-param", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="as dvc exp run -S (repeatable)")
    ap.add_argument("--no-status", action="store_true", help="skip dvc status (faster)")
    args = ap.parse_args(argv)
    if not args.overrides:
        ap.error("give at least one -S section.key=value")
    root = next((d for d in (Path.cwd(), *Path.cwd().parents) if (d / "dvc.yaml").is_file()), None)
    if root is None:
        print(f"{Path.cwd()}: not inside a qa-pipeline checkout (no dvc.yaml here or above)", file=sys.stderr)
        return 2
    os.chdir(root)  # DVC's paths and the stages' outputs are relative to the checkout
    try:
        result = plan(root, parse_overrides(args.overrides), with_status=not args.no_status)
    except SweepError as exc:
        print(exc, file=sys.stderr)
        return 2
    def last(name: str) -> str:
        return f"last run here {result['last_run'][name]}" if result["last_run"][name] else "not run in this checkout"

    print(f"dvc exp run {' '.join('-S ' + o for o in args.overrides)} would rerun "
          f"{cost(result['direct'] + result['downstream'])}:")
    for name in result["direct"]:
        print(f"  {name:32s} certainly (reads {', '.join(k for k in parse_overrides(args.overrides))})   {last(name)}")
    for name in result["downstream"]:
        print(f"  {name:32s} if its inputs come out different   {last(name)}")
    if not result["direct"]:
        print("  nothing: no stage reads these keys")
    stale = [s for s in result["out_of_date"] if s not in result["direct"] + result["downstream"]]
    if stale:
        print(f"and, already out of date here, {cost(stale)} (any dvc exp run without a target reruns them; "
              f"name a target, `dvc exp run -S ... {result['direct'][0] if result['direct'] else '<stage>'}`, to run "
              f"only what it needs):")
        for i in range(0, len(stale), 4):
            print("  " + ", ".join(stale[i:i + 4]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
