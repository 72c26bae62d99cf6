"""``strategyqa_cv``'s folds in several processes at once, on one offline node (one GPU or the CPU).

A 512-token MiniLM fold leaves most of an H100 idle (one process trains a fold in about 13 s, its kernels too
small to fill the device), and ``strategyqa_cv`` trains its settings' folds one after another. This runs
``--jobs N`` worker processes in the bundle, each taking the next ``<setting>:<fold>`` nobody has claimed and
training it with the stage's own function (:func:`pipeline.stages.strategyqa_cv._run_fold`: the same inputs,
fingerprint and kept answers). Afterwards ``python3 -m pipeline.offline.node --only strategyqa_cv`` finds every
fold answered from the same inputs, reads them back and writes the stage's report and predictions as always: the
figures are the stage's, only the order in which folds trained differs (each fold's training does not depend on
any other's).

Claims are files created with ``O_EXCL`` in a folder of this launch's own, so two workers never train one fold
and a fold a killed launch left half done is taken again by the next launch (it resumes from its checkpoint).
Writes ``--record`` (JSON): wall seconds, jobs and each fold's seconds and worker.

    python3 -m pipeline.offline.cv_folds --jobs 6 [--record cv_folds.json]     # inside the bundle
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pipeline.offline.node import BUNDLE, _prepare_environment, load_node_params, unpack

CLAIMS = ".cv_claims"  # under the bundle: one folder per launch


def pairs(settings: list[str], folds: int) -> list[tuple[str, int]]:
    """Every ``(setting, fold)`` in the stage's own order (settings as params list them, folds ascending)."""
    return [(s, f) for s in settings for f in range(folds)]


def claim(claims: Path, setting: str, fold: int) -> bool:
    """True for the one worker that creates the claim file first."""
    try:
        fd = os.open(claims / f"{setting}.{fold}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


def work(bundle: Path, claims: Path, worker: int) -> list[dict]:
    """One worker: claim and train folds until none is left; returns what it trained, with seconds."""
    _prepare_environment(bundle)
    os.chdir(bundle)
    from pipeline.stages.strategyqa_cv import _run_fold, load_cv_data
    from pipeline.stages.train_strategyqa_qa import _weights_digest, start_weights

    params = load_node_params(bundle / "params.yaml")
    cv = params.strategyqa_cv
    data = load_cv_data(params)
    start_digest = _weights_digest(start_weights(params))
    done = []
    for setting, fold in pairs(list(cv.settings), cv.folds):
        if not claim(claims, setting, fold):
            continue
        t0 = time.time()
        _run_fold(params, data, setting, fold, start_digest)
        seconds = round(time.time() - t0, 1)
        print(f"[cv_folds] worker {worker}: {setting} fold {fold} in {seconds} s", flush=True)
        done.append({"setting": setting, "fold": fold, "worker": worker, "seconds": seconds})
    return done


def launch(bundle: Path, jobs: int, record: Path | None) -> int:
    """``jobs`` workers, each with an equal share of the CPU's threads; waits for all. A worker that fails makes
    the launch fail (its folds are not answered, so the stage would train them itself)."""
    unpack(bundle)
    params = cv_plan(bundle)
    claims = bundle / CLAIMS / f"{int(time.time() * 1000)}-{os.getpid()}"
    claims.mkdir(parents=True)
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    t0 = time.time()
    procs = []
    for worker in range(jobs):
        out = claims / f"worker-{worker}.json"
        procs.append((out, subprocess.Popen(
            [sys.executable, "-m", "pipeline.offline.cv_folds", "--worker", str(worker), "--claims", str(claims),
             "--worker-record", str(out)], cwd=bundle, env=env)))
    codes = [p.wait() for _, p in procs]
    folds = [f for out, _ in procs if out.exists() for f in json.loads(out.read_text(encoding="utf-8"))]
    summary = {"jobs": jobs, "threads_per_job": int(threads), "wall_seconds": round(time.time() - t0, 1),
               "settings": list(params["settings"]), "folds": params["folds"],
               "trained": sorted(folds, key=lambda f: (f["setting"], f["fold"])), "exit_codes": codes}
    if record is not None:
        record.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"[cv_folds] {len(folds)} fold(s) in {summary['wall_seconds']} s with {jobs} workers", flush=True)
    return 0 if all(c == 0 for c in codes) else 1


def cv_plan(bundle: Path) -> dict:
    """``strategyqa_cv``'s settings and folds as the launcher reads them, without importing the stages: the workers
    validate the whole file themselves."""
    import yaml

    data = yaml.safe_load((bundle / "params.yaml").read_text(encoding="utf-8"))
    return {"settings": data["strategyqa_cv"]["settings"], "folds": int(data["strategyqa_cv"]["folds"])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4, help="worker processes (default 4)")
    ap.add_argument("--record", type=Path, help="where the launch's timings go (JSON)")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--claims", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--worker-record", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        done = work(BUNDLE, args.claims, args.worker)
        args.worker_record.write_text(json.dumps(done) + "\n", encoding="utf-8")
        return 0
    if not 1 <= args.jobs <= 64:
        ap.error(f"--jobs {args.jobs}: between 1 and 64")
    return launch(BUNDLE, args.jobs, args.record)


if __name__ == "__main__":
    raise SystemExit(main())
