"""Every stage's command: ``python -m flows.stage NAME [VARIANT] [--params FILE]``, the one Prefect flow entry
point of the pipeline (dvc.yaml's ``cmd`` lines).

:data:`STAGES` says, for each DVC stage, which function of ``pipeline.stages`` does its work, with which fixed
arguments, and which stages retry a failure that can pass (a CDX outage, a dropped bulk connection). This
module is the boundary between DVC and the work: it validates the params sections the stage declares in
dvc.yaml, names the flow run after the stage (``quail_mc@options``, as ``dvc repro`` prints it), tags it, and
holds the stage's lease on the shared Prefect server. It writes no artifact and changes no value the work
receives, so it is not among any stage's code deps (``pipeline.experiments.stage_deps`` starts the walk at the
work's module; a test runs a stage both ways and compares the bytes).

A new stage is one row here (and its module under ``pipeline/stages/``).
"""

from __future__ import annotations

import argparse
import functools
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from flows import params_refused_hint
# the table of every stage's work lives below every runner (the offline node and stage_deps read it too)
from pipeline.stage_table import FULL_CHECK, STAGES, run, variant_choices, work

ROOT = Path(__file__).resolve().parents[1]
# dvc.yaml of the checkout that holds this code: the sections a stage declares there are the ones DVC
# tracks for it, so they are the only ones it may read (an undeclared read would go stale in DVC's cache)
DVC_YAML = ROOT / "dvc.yaml"


@functools.lru_cache(maxsize=None)  # main checks the file before the flow, the flow validates what it hands over
def declared_sections(name: str, dvc_yaml: Path = DVC_YAML) -> tuple[str, ...]:
    """The params.yaml sections stage ``name`` declares in dvc.yaml (``quail.seed`` declares ``quail``)."""
    import yaml

    stage = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8"))["stages"][name]
    body = stage.get("do", stage)
    keys = [k for k in body.get("params") or [] if isinstance(k, str)]
    return tuple(dict.fromkeys(k.split(".", 1)[0] for k in keys))


def stage_flow(name: str) -> Any:
    """The Prefect flow of stage ``name``: validated params in, the work's summary out."""
    from prefect import flow, task

    from flows._common import own_results, record_this_run, retry_if_transient
    from pipeline.params import load_params

    stage = STAGES[name]
    sections = None if name == FULL_CHECK else declared_sections(name)
    work(name)  # the stage's module, imported before the flow starts

    def body(params_file: str, variant: str | None) -> dict:
        record_this_run()
        return run(name, load_params(params_file, sections=sections), variant)

    if stage.retry_delays_s:
        body = task(name=f"{name}.run", retries=len(stage.retry_delays_s),
                    retry_delay_seconds=list(stage.retry_delays_s), retry_condition_fn=retry_if_transient,
                    cache_policy=None, **own_results())(body)

    def run_stage(params_file: str = "params.yaml", variant: str | None = None) -> dict:
        return body(params_file, variant)

    # a stage's return value is a summary for its log, never persisted; the server's default storage is not read
    return flow(name=name, log_prints=True, **own_results())(run_stage)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flows.stage", description=__doc__.split("\n")[0])
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("variant", nargs="?", help="the foreach value of the quail_mc and strategyqa_qa stages")
    ap.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    args = ap.parse_args(argv)
    stage = STAGES[args.stage]
    choices = variant_choices(stage)
    if choices and args.variant not in choices:
        ap.error(f"{args.stage} needs one of {', '.join(choices)} (got {args.variant!r})")
    if not choices and args.variant is not None:
        ap.error(f"{args.stage} takes no variant (got {args.variant!r})")
    from flows._common import run_flow
    from pipeline.params import ParamsError, load_params

    try:  # before the flow starts, so a bad file writes nothing at all and the run says why in one line
        load_params(args.params, sections=None if args.stage == FULL_CHECK else declared_sections(args.stage))
    except ParamsError as exc:
        print(f"{exc}{params_refused_hint()}", file=sys.stderr)
        return 2
    name = args.stage + (f"@{args.variant}" if choices else "")
    started = time.monotonic()
    status = run_flow(stage_flow(args.stage), name, params_file=args.params, variant=args.variant)
    if status == 0:
        record_seconds(name, time.monotonic() - started)
    return status


STAGE_SECONDS = Path(".dvc/tmp/stage-seconds.json")  # read by pipeline.experiments.repro for its time left
FINISHED_KEY = "_finished"  # in the same file: {stage: when it last finished here}; not a number, so not a time


def record_seconds(name: str, seconds: float, path: Path = STAGE_SECONDS) -> None:
    """This checkout's last duration of stage ``name`` (a local note beside DVC's own state, no artifact)."""
    if not path.parent.is_dir():  # not run by DVC in a checkout
        return
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        table = {}
    table[name] = round(seconds, 1)
    # when it last finished here: `would_rerun` says "last run" only for stages that ran in this checkout (an
    # output's file time is the clone's checkout time for one that never ran)
    finished = table.get(FINISHED_KEY) if isinstance(table.get(FINISHED_KEY), dict) else {}
    table[FINISHED_KEY] = {**finished, name: dt.datetime.now().isoformat(timespec="seconds")}
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


# A stage's console is its log lines: progress comes as lines with rate and time left every 20 s (also in the
# UI), so the redrawn bars (ours, the hub's "Loading weights") and transformers' per-model load reports go.
QUIET = {"QA_PIPELINE_NO_PROGRESS": "1", "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
         "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}

if __name__ == "__main__":
    for key, value in QUIET.items():
        os.environ.setdefault(key, value)
    sys.exit(main())
