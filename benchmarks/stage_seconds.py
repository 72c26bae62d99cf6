"""Seconds per stage of a full ``dvc repro`` on this machine, read from its console log: the reference that
``make repro`` uses for its "about N min left" until a checkout has timed its own stages
(``pipeline/experiments/repro.py``). Each stage's time runs from its flow run's "Beginning flow run" line to
its "Finished in state Completed()" line (Prefect's own timestamps), so DVC's hashing between stages is not
in it; the total of the log is reported beside, as the reference in the same run.

    dvc repro 2>&1 | tee repro.log          # a full run, every stage
    .venv/bin/python -m benchmarks.stage_seconds repro.log [--make-repro-s SECONDS --fresh-clone]

``--make-repro-s``: the wall-clock seconds of the whole ``make repro`` the log is of (set-up included), as the
README's cost paragraph states it (generated from this file: ``pipeline.experiments.results_table``);
``--package-cache warm|cold``: whether uv's cache already held the locked wheels, so the paragraph can say which
it was (with a local registry the two differ little; with a slow one, set-up is mostly downloads).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path

from benchmarks._common import RESULTS, write_result

_LINE = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3}) \| \w+ +\| Flow run '([^']+)' - (Beginning flow run|Finished in state \w+)")


def _timed(log: str, pattern: re.Pattern[str]) -> Iterator[tuple[dt.datetime, re.Match[str]]]:
    """Each line ``pattern`` matches, with its clock time (group 1) as a datetime that keeps rising past midnight:
    the console prints the time of day only."""
    day, previous = dt.date(2000, 1, 1), None
    for line in log.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        clock = dt.datetime.combine(day, dt.time.fromisoformat(m.group(1)))
        if previous is not None and clock < previous:  # past midnight
            day += dt.timedelta(days=1)
            clock += dt.timedelta(days=1)
        previous = clock
        yield clock, m


def stage_seconds(log: str) -> tuple[dict[str, float], float]:
    """(seconds per completed stage, seconds from the first stage's start to the last one's end)."""
    begun: dict[str, dt.datetime] = {}
    seconds: dict[str, float] = {}
    first = last = None
    for clock, m in _timed(log, _LINE):
        first = first or clock
        name, event = m.group(2), m.group(3)
        if event == "Beginning flow run":
            begun[name] = clock
        elif event == "Finished in state Completed" and name in begun:
            seconds[name] = round((clock - begun.pop(name)).total_seconds(), 1)
            last = clock
    total = (last - first).total_seconds() if first and last else 0.0
    return seconds, round(total, 1)


_STEP = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3}) \| \w+ +\| Flow run '([^']+)' - (?:\[seed (\d+)\] )?(?:INFO )?"
                   r"step (\d+)(/\d+ loss| dev )")


def dev_eval_seconds(log: str) -> tuple[dict[str, float], list[str]]:
    """(seconds per stage spent scoring selection-dev and keeping the best weights, the stages whose seeds
    trained side by side): each evaluation runs from its step's loss line to that step's dev line, summed over a
    stage's evaluations and runs. Side by side, the runs' evaluations overlap, so the sum is process-seconds."""
    seconds: dict[str, float] = {}
    side_by_side: set[str] = set()
    step_at: dict[tuple[str, str], tuple[int, dt.datetime]] = {}
    for clock, m in _timed(log, _STEP):
        stage, seed, step = m.group(2), m.group(3) or "", int(m.group(4))
        if seed:
            side_by_side.add(stage)
        if m.group(5) != " dev ":
            step_at[(stage, seed)] = (step, clock)
        elif step_at.get((stage, seed), (None,))[0] == step:
            gap = (clock - step_at.pop((stage, seed))[1]).total_seconds()
            seconds[stage] = round(seconds.get(stage, 0.0) + gap, 1)
    return seconds, sorted(side_by_side & set(seconds))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.stage_seconds", description=__doc__.split("\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--note", default="", help="what run the log is of (machine load, fresh clone or not)")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--make-repro-s", type=float, default=None,
                    help="wall-clock seconds of the whole make repro the log is of, set-up included")
    ap.add_argument("--fresh-clone", action="store_true", help="the run was a fresh clone's first make repro")
    ap.add_argument("--alone", action="store_true", help="nothing else ran on the machine meanwhile")
    ap.add_argument("--package-cache", choices=("warm", "cold"), default=None,
                    help="whether uv's package cache already held the locked wheels (set-up then only links them)")
    ap.add_argument("--commit", default=None,
                    help="the commit the run was of (default: this checkout's HEAD); the README names it")
    args = ap.parse_args(argv)
    text = args.log.read_text(encoding="utf-8", errors="replace")
    seconds, total = stage_seconds(text)
    dev_eval, side_by_side = dev_eval_seconds(text)
    if not seconds:
        raise SystemExit(f"{args.log}: no completed stage flow runs in it")
    # a stage DVC skipped (its deps unchanged) has no time in this log: keep the earlier reference's, named
    earlier = _earlier_stages(args.out_dir / "stage_seconds.json")
    carried = {k: v for k, v in earlier.items() if k not in seconds}
    write_result("stage_seconds", {
        "stages": {**seconds, **carried}, "stage_total_s": round(sum(seconds.values()), 1), "log_span_s": total,
        "carried_over": sorted(carried), "dev_eval_s": dev_eval, "dev_eval_side_by_side": side_by_side,
        "make_repro_s": args.make_repro_s, "fresh_clone": args.fresh_clone,
        "alone": args.alone, "package_cache": args.package_cache, "cpu": _cpu(), "commit": args.commit or _head(),
        "note": " ".join(filter(None, [args.note, "From a full dvc repro's console on this machine; stages in "
                                       "carried_over did not run in it (their time is the earlier reference's, "
                                       "not in stage_total_s); the reference for make repro's time left"]))},
        out_dir=args.out_dir)
    return 0


def _cpu() -> dict:
    """The processor, and whether it computes bfloat16 natively (what ``precision: auto`` trains in)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "")
    return {"model": model, "native_bf16": " avx512_bf16" in info or " amx_bf16" in info}


def _head() -> str | None:
    import subprocess

    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True)
    return (run.stdout.strip() or None) if run.returncode == 0 else None


def _earlier_stages(path: Path) -> dict[str, float]:
    try:
        stages = json.loads(path.read_text(encoding="utf-8")).get("stages", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {str(k): float(v) for k, v in stages.items() if isinstance(v, (int, float))}


if __name__ == "__main__":
    raise SystemExit(main())
