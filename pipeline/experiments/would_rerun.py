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
import datetime as dt
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
    last_run = {}
    for name in direct + sorted(downstream, key=order.index):
        times = [Path(o.fs_path).stat().st_mtime for o in stages[name].outs if Path(o.fs_path).exists()]
        last_run[name] = (dt.datetime.fromtimestamp(max(times)).isoformat(timespec="seconds") if times else None)
    out_of_date = sorted(dvc.status()) if with_status else []
    return {"direct": direct, "downstream": sorted(downstream, key=order.index), "out_of_date": out_of_date,
            "last_run": last_run}


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
    print(f"dvc exp run {' '.join('-S ' + o for o in args.overrides)} would rerun:")
    for name in result["direct"]:
        print(f"  {name:32s} certainly (reads {', '.join(k for k in parse_overrides(args.overrides))})"
              f"   last run {result['last_run'][name] or 'never'}")
    for name in result["downstream"]:
        print(f"  {name:32s} if its inputs come out different   last run {result['last_run'][name] or 'never'}")
    if not result["direct"]:
        print("  nothing: no stage reads these keys")
    stale = [s for s in result["out_of_date"] if s not in result["direct"]]
    if stale:
        print(f"already out of date here (rerun by any dvc exp run): {', '.join(stale)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
