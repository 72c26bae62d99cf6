"""Where a stage's time goes outside its own work: the seconds between stages of a full ``dvc repro`` (about 8 s
a stage, 59 stages) split into what DVC does and what the stage's process does before and after its flow.

On the cheapest stage (``split``, about 1 s of work), median of ``--runs`` each, alone on the machine:

- ``dvc repro -f -s split``: the whole cost of one stage as ``make repro`` pays it;
- its flow run's own span (Prefect's "Beginning flow run" to "Finished" lines): the stage's work;
- ``python -m flows.stage split`` without DVC: the stage's process (imports, Prefect flow and API calls);
- ``python -c "import prefect"``: the import floor of every stage's process;
- DVC's lock file: ``dvc.lock`` read as DVC reads it to update it (ruamel round-trip) and as a plain YAML
  load, both in this process; DVC rewrites the whole file after every stage, so its size (one entry per
  code file a stage imports, about 1,500) is paid 59 times;
- ``dvc --version``: DVC's own start.

The differences are the reference in the same run: DVC's share is the repro minus the bare stage process.

    .venv/bin/python -m benchmarks.stage_overhead [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import write_result
from benchmarks.dvc_noop import activated_env

REPO = Path(__file__).resolve().parents[1]
_FLOW = re.compile(r"(?m)^(\d\d):(\d\d):(\d\d\.\d{3}) \| \w+ +\| Flow run 'split' - (Beginning flow run|Finished in state)")


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return took, done.stdout + done.stderr


def _flow_span(log: str) -> float | None:
    marks = [int(h) * 3600 + int(m) * 60 + float(s) for h, m, s, _ in _FLOW.findall(log)]
    return round(marks[-1] - marks[0], 3) if len(marks) >= 2 else None


def _lock_loads(runs: int) -> dict[str, float]:
    import yaml
    from ruamel.yaml import YAML

    text = (REPO / "dvc.lock").read_text(encoding="utf-8")
    round_trip, plain = [], []
    for _ in range(runs):
        t = time.perf_counter()
        YAML().load(text)
        round_trip.append(time.perf_counter() - t)
        t = time.perf_counter()
        yaml.safe_load(text)
        plain.append(time.perf_counter() - t)
    return {"round_trip_s": round(statistics.median(round_trip), 3), "safe_load_s": round(statistics.median(plain), 3),
            "lines": text.count("\n"), "deps": text.count("\n    - path: ") + text.count("\n  - path: ")}


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.stage_overhead", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    env = dict(activated_env(), QA_PIPELINE_NO_PROGRESS="1")
    python, dvc = sys.executable, str(Path(sys.executable).with_name("dvc"))
    status = subprocess.run([dvc, "status", "split"], cwd=REPO, env=env, capture_output=True, text=True)
    if "up to date" not in status.stdout:
        raise SystemExit("split is not up to date: run `dvc repro split` first (this measures a rerun of it)")
    _timed([python, "-m", "flows.stage", "split"], env)  # the shared Prefect server up before any timing
    repro, flow, stage, prefect, version = [], [], [], [], []
    for _ in range(args.runs):
        took, log = _timed([dvc, "repro", "-f", "-s", "split"], env)
        repro.append(took)
        span = _flow_span(log)
        if span is not None:
            flow.append(span)
        stage.append(_timed([python, "-m", "flows.stage", "split"], env)[0])
        prefect.append(_timed([python, "-c", "import prefect"], env)[0])
        version.append(_timed([dvc, "--version"], env)[0])
    lock = _lock_loads(args.runs)
    result = {
        "runs": args.runs,
        "dvc_repro_one_stage_s": _median(repro),
        "flow_run_s": _median(flow) if flow else None,
        "stage_process_s": _median(stage),
        "import_prefect_s": _median(prefect),
        "dvc_start_s": _median(version),
        "dvc_lock": lock,
    }
    result["dvc_share_s"] = round(result["dvc_repro_one_stage_s"] - result["stage_process_s"], 3)
    result["stage_process_outside_flow_s"] = (round(result["stage_process_s"] - result["flow_run_s"], 3)
                                              if flow else None)
    result["note"] = ("One stage's cost outside its work, on split. DVC's share is the repro minus the bare stage "
                      "process; the stage process's share outside its flow is Python start, imports (Prefect's "
                      "among them) and the flow's API calls to the shared server. The lock-file figures are "
                      "in-process loads of the same dvc.lock DVC rewrites after each stage.")
    write_result("stage_overhead", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
