"""A no-op ``dvc repro`` as a user runs it: plain ``dvc repro`` in an activated venv, on an up-to-date
workspace (target: under 3 s), with no stale entries in DVC's lock table (a killed ``dvc repro`` leaves
its read locks in .dvc/tmp/rwlock, and every later repro carries them: 0.15 s here). Reference in the same run: ``dvc status``, the check any ``dvc repro`` must
make (DVC's own floor for this graph). Median of ``--runs`` runs each; fails if the workspace is not up to date,
because then it would measure stages running, not a no-op.

    .venv/bin/python -m benchmarks.dvc_noop [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import write_result

REPO = Path(__file__).resolve().parents[1]


def activated_env() -> dict[str, str]:
    """What ``source .venv/bin/activate`` sets, with no Prefect server configured (plain ``dvc repro``)."""
    venv = Path(sys.executable).parent.parent
    env = dict(os.environ, VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PREFECT_API_URL", None)
    return env


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return elapsed, proc.stdout + proc.stderr


def stale_rwlock_entries() -> int:
    """Entries in DVC's stage lock table (.dvc/tmp/rwlock) held by processes that are gone."""
    import json

    import psutil

    path = REPO / ".dvc" / "tmp" / "rwlock"
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return 0
    holders = [info for infos in table.get("read", {}).values() for info in infos] + list(table.get("write", {}).values())
    return sum(1 for info in holders if not psutil.pid_exists(int(info.get("pid", 0))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    env = activated_env()
    stale = stale_rwlock_entries()
    if stale:  # a killed dvc leaves its read locks; every later repro reads, validates and rewrites them per stage
        raise SystemExit(f".dvc/tmp/rwlock holds {stale} entries of dvc processes no longer running (a killed "
                         f"`dvc repro`); with no dvc running, delete the file and rerun: a fresh clone has none")
    _, status = timed(["dvc", "status"], env)
    if "Data and pipelines are up to date" not in status:
        raise SystemExit(f"the workspace is not up to date; run `dvc repro` first:\n{status[:2000]}")
    repro, reference = [], []
    for _ in range(args.runs):
        seconds, out = timed(["dvc", "repro"], env)
        if "Running stage" in out:
            raise SystemExit(f"`dvc repro` ran a stage, so this is not a no-op:\n{out[:2000]}")
        repro.append(seconds)
        reference.append(timed(["dvc", "status"], env)[0])
    result = {
        "what": "no-op `dvc repro` in an activated venv, no PREFECT_API_URL, all stages up to date",
        "runs": args.runs,
        "dvc_repro_s": {"median": round(statistics.median(repro), 3), "all": [round(s, 3) for s in repro]},
        "reference_dvc_status_s": {"median": round(statistics.median(reference), 3),
                                   "all": [round(s, 3) for s in reference]},
        "target_s": 3.0,
        "meets_target": statistics.median(repro) < 3.0,
        "ratio_to_reference": round(statistics.median(repro) / statistics.median(reference), 3),
    }
    write_result("dvc_noop", result)
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
