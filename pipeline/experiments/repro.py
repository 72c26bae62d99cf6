"""``dvc repro`` with one overall progress line: ``python -m pipeline.experiments.repro [TARGETS...]`` (what
``make repro`` and the per-track targets run).

DVC says which stage starts, never how far the run is. This asks DVC first (its stage graph and ``dvc status``:
the stages that changed and those downstream of them, upstream first), then runs ``dvc repro`` and, as each
stage starts, prints
``[repro] stage 12/31 train_quail_mc@full, about 20 min left``. The time left is the sum of the remaining stages'
durations: those this checkout measured last time (``.dvc/tmp/stage-seconds.json``, written by every stage as
it ends, see ``flows.stage``), else the reference run on two CPU cores committed in
``benchmarks/results/stage_seconds.json``. It is a reading of DVC's plan, not a second graph: DVC alone decides
what runs. Exit status and output are DVC's.

``--dry`` prints that plan, one stage a line with its time, and runs nothing: what ``dvc repro --dry`` cannot
do on a fresh clone, where it stops at the first stage whose input is not built yet.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEASURED = Path(".dvc/tmp/stage-seconds.json")
REFERENCE = ROOT / "benchmarks/results/stage_seconds.json"
OVERHEAD = ROOT / "benchmarks/results/stage_overhead.json"
_RUNNING = re.compile(r"^Running stage '([^']+)':")


def _dvc() -> str:
    exe = Path(sys.executable).with_name("dvc")
    return str(exe) if exe.exists() else "dvc"


def planned_stages(targets: list[str], root: str | None = None) -> list[str]:
    """The stages ``dvc repro TARGETS`` can run now, in the order DVC runs them: those ``dvc status`` reports
    changed, and every stage downstream of one (DVC reruns it when its input changes; when an upstream stage
    writes the same bytes again DVC skips it, so this is the most it will run). The order is DVC's own
    (``dvc.repo.reproduce.plan_repro`` on the graph ``dvc repro`` builds), so the plan reads as the run will.
    ``dvc repro --dry`` cannot say it: on a fresh checkout it stops at the first stage whose input does not exist
    yet."""
    import networkx as nx
    from dvc.dvcfile import PROJECT_FILE
    from dvc.repo import Repo
    from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro

    with Repo(root) as repo:
        graph = get_active_graph(repo.index.graph)  # an edge runs from a stage to a stage it depends on
        order = plan_repro(graph, collect_stages(repo, targets or [PROJECT_FILE]))
        # with_deps: a target's upstream stages too (`make quail` on a fresh clone builds the whole QuAIL track;
        # asked about the targets alone, DVC said 6 stages where it ran 14)
        changed = {name.split(":")[-1] for name in repo.status(targets=targets or None, with_deps=bool(targets))}
        plan: list[str] = []
        for stage in order:  # upstream first: a stage's dependencies come before it in DVC's post-order
            upstream = {s.addressing for s in nx.descendants(graph, stage)}
            if stage.addressing in changed or upstream & set(plan):
                plan.append(stage.addressing)
    return plan


def overhead_seconds(reference: Path = OVERHEAD) -> float:
    """DVC's and the stage process's own seconds a stage, outside its work (``benchmarks/stage_overhead.py``:
    hashing, the lock file, Python start, Prefect's import and API calls), which stage times leave out."""
    try:
        raw = json.loads(reference.read_text(encoding="utf-8"))
        return float(raw["dvc_repro_one_stage_s"]) - float(raw["stage_process_s"]) + float(
            raw["stage_process_outside_flow_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def plan_total(plan: list[str], seconds: dict[str, float]) -> str:
    """One line of what a plan costs, and what that figure is: stage work on the last measured times plus the
    per-stage overhead, an upper bound (DVC skips a stage whose inputs come out unchanged), set-up not included."""
    work = sum(seconds.get(s, 0.0) for s in plan)
    per_stage = overhead_seconds()
    never = sum(s not in seconds for s in plan)
    line = (f"{_minutes(work + per_stage * len(plan))} on the last measured times ({_minutes(work)} of stage work "
            f"+ about {per_stage:.0f} s a stage of DVC and process start), at most: DVC skips a stage whose inputs "
            "come out unchanged; `make setup` not included")
    return line + (f"; {never} stage(s) never timed" if never else "")


def stage_seconds(measured: Path = MEASURED, reference: Path = REFERENCE) -> dict[str, float]:
    """Seconds per stage: this checkout's last measurements over the committed reference run's."""
    table: dict[str, float] = {}
    for path in (reference, measured):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        stages = raw.get("stages", raw) if isinstance(raw, dict) else {}
        table.update({str(k): float(v) for k, v in stages.items() if isinstance(v, (int, float))})
    return table


def _minutes(seconds: float) -> str:
    return "under a minute" if seconds < 60 else f"about {round(seconds / 60)} min"


def progress_line(stage: str, plan: list[str], seconds: dict[str, float], started: set[str] | None = None) -> str:
    """``[repro] stage 3/25 crawl, about 40 min left``: the stage's place among those started so far (DVC runs
    independent stages in an order of its own, not the plan's), and the time of this stage and every planned
    one not started yet. ``started``: the stages started before this one (default: those before it in the
    plan)."""
    if stage not in plan:
        return f"[repro] stage {stage}"
    before = set(plan[:plan.index(stage)]) if started is None else started - {stage}
    left_stages = [s for s in plan if s not in before]
    known = [seconds[s] for s in left_stages if s in seconds]
    left = f", {_minutes(sum(known))} left" if known else ""
    unknown = len(left_stages) - len(known)
    if known and unknown:
        left += f" (+{unknown} stage{'s' if unknown > 1 else ''} never timed)"
    return f"[repro] stage {len(before) + 1}/{len(plan)} {stage}{left}"


def main(argv: list[str] | None = None) -> int:
    targets = list(sys.argv[1:] if argv is None else argv)
    if any(t in ("-h", "--help") for t in targets):  # not a stage name
        print(__doc__.strip())
        return 0
    dry = "--dry" in targets
    targets = [t for t in targets if t != "--dry"]
    bad = [t for t in targets if t.startswith("-")]
    if bad:
        print(f"python -m pipeline.experiments.repro [--dry] [STAGE ...]: {' '.join(bad)} is not a stage name "
              "(for dvc's own options run dvc repro)", file=sys.stderr)
        return 2
    if dry:
        plan = planned_stages(targets)  # errors as DVC raises them: nothing runs after
        seconds = stage_seconds()
        for stage in plan:
            print(f"{stage}\t{_minutes(seconds[stage]) if stage in seconds else 'never timed'}")
        print(f"[repro] {len(plan)} stage(s) would run" + (f", {plan_total(plan, seconds)}"
                                                          if plan else ": everything is up to date"))
        return 0
    try:
        plan = planned_stages(targets)
    except Exception as exc:  # noqa: BLE001 - the real run below says what is wrong, in DVC's words
        print(f"[repro] no plan ({type(exc).__name__}); running without progress lines", file=sys.stderr)
        plan = []
    seconds = stage_seconds()
    if plan:
        print(f"[repro] up to {len(plan)} stage(s) to run, {plan_total(plan, seconds)}", flush=True)
    proc = subprocess.Popen([_dvc(), "repro", *targets], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1)
    assert proc.stdout is not None
    started: set[str] = set()
    try:
        for line in proc.stdout:
            m = _RUNNING.match(line)
            if m:
                print(progress_line(m.group(1), plan, seconds, started), flush=True)
                started.add(m.group(1))
            sys.stdout.write(line)
            sys.stdout.flush()
        return proc.wait()
    except KeyboardInterrupt:  # the terminal sent Ctrl-C to dvc too: wait for it to stop its stage
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
