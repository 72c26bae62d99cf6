"""A section's seeds trained side by side on a CPU: ``parallel_runs`` processes at a time, each with the
section's ``cpu_threads``.

Why: on two cores a multiple-choice step of 4 x 4 x 128 tokens took 0.70 s with two threads and 0.99 s with
one; two one-thread runs side by side took 1.01 s a step each and three 1.57 s: three seeds at once train
about 1.3x as many of those steps an hour as one seed at a time on both cores (``benchmarks/parallel_seeds.py``,
``benchmarks/results/parallel_seeds.json``); in the QuAIL stages, whose batches are padded to their longest,
about 1.1x (docs/training.md). A run's weights depend on its own thread
count (a sum split over threads rounds by their number), never on what runs beside it, so a seed trained here
is the same run, to the bit, as the seed trained alone with the same ``cpu_threads`` (tested).

Each run is a process of its own, started from a launch spec (the stage module's name, the variant, the
validated params, the seed: data only, no pickle; :func:`pipeline.launcher.torchrun.read_spec` checks it the
way a torchrun worker does), ``python -m pipeline.launcher.seed_process SPEC``. It calls the stage's own
``train(params, variant, seed=)`` and writes what it returns; its lines reach the stage's log prefixed with the
seed. It dies with the stage, so a killed stage leaves no run training behind, and the rerun resumes every
unfinished seed from its last checkpoint (the loop's own resume). On a GPU, under ``torchrun`` and with
``parallel_runs: 1`` the seeds train one after another in the stage's process (:func:`pipeline.launcher.torchrun.launch`).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.logs import get_logger
from pipeline.common.processes import dies_with_this_process, stop_process_group
from pipeline.launcher.torchrun import (ERROR_LINE, LAUNCH_DIR, STAGE_MODULE, STAGES_PACKAGE, Train, _write_atomic,
                                       launch)

if TYPE_CHECKING:
    from pipeline.params import Params
    from pipeline.training.config import TrainBudget

WORKER = "pipeline.launcher.seed_process"
SEED_FUNCTIONS = ("train", "predict")  # what a stage module offers to run one seed
RUN_ID_ENV = "QA_PIPELINE_SEED_RUN_ID"  # the run a seed process's spec must carry


def side_by_side(section: TrainBudget, params: Params | None) -> int:
    """How many of the section's seeds train at once: ``parallel_runs`` on a CPU run in the stage's own process,
    else 1 (a GPU trains one run at full width; ``torchrun`` ranks already share the machine). More runs than
    cores is allowed on purpose: three one-thread runs on two cores train 3 steps in 1.57 s, where two then one
    take 1.01 s + 0.99 s for the same three steps."""
    if section.parallel_runs <= 1 or len(section.seeds) <= 1 or (params is not None and params.distributed.launches):
        return 1
    if section.device == "cuda":
        return 1
    if section.device == "auto":
        import torch

        if torch.cuda.is_available():
            return 1
    return min(section.parallel_runs, len(section.seeds))


def train_each_seed(train: Train, params: Params, variant: str, section: TrainBudget,
                    run_dir: Callable[[int], Path]) -> list[dict[str, Any]]:
    """What ``train`` returned for every seed of ``section``, in the section's order: one after another
    (:func:`launch`), or ``side_by_side`` runs at a time, each in a process of its own (its launch spec in the
    run's own folder)."""
    width = side_by_side(section, params)
    if width == 1:
        return [launch(train, params, variant, run_dir(seed), seed=seed) for seed in section.seeds]
    return _run_side_by_side(stage_function(train), variant, params, section, run_dir, width)


def predict_each_seed(predict: Callable[..., dict[str, Any]], params: Params, variant: str,
                      section: TrainBudget) -> list[dict[str, Any]]:
    """What ``predict(params, variant, seed=)`` returned for every seed, in the section's order: one after another
    in this process, or ``side_by_side`` at a time, each in a process of its own with ``cpu_threads`` threads,
    as the runs trained (a prediction's logits depend on the thread count, never on what runs beside it). The
    launch specs go to a private temporary folder: the models are another stage's outputs."""
    width = side_by_side(section, None)  # a prediction never runs under torchrun (its stage reads no `distributed`)
    if width == 1:
        return [predict(params, variant, seed=seed) for seed in section.seeds]
    with tempfile.TemporaryDirectory(prefix="qa-predict-") as tmp:
        return _run_side_by_side(stage_function(predict), variant, params, section,
                                 lambda seed: Path(tmp) / str(seed), width)


def stage_function(fn: Callable[..., Any]) -> tuple[str, str]:
    """(stage module, function) of a stage's ``train`` or ``predict``: the only names a seed's spec may carry."""
    module, name = fn.__module__, fn.__name__
    stage = module.removeprefix(STAGES_PACKAGE + ".")
    if module == stage or name not in SEED_FUNCTIONS or not STAGE_MODULE.fullmatch(stage):
        raise TypeError(f"{module}.{name}: what a seed process runs is {STAGES_PACKAGE}.<stage>.<one of "
                        f"{', '.join(SEED_FUNCTIONS)}>")
    return stage, name


class _SeedRun:
    """One seed's process: its spec, its output pumped to the stage's log, its statistics when it ends."""

    def __init__(self, stage: tuple[str, str], variant: str, params: Params, seed: int, out_dir: Path,
                 lines: queue.Queue) -> None:
        self.seed = seed
        self.dir = out_dir / LAUNCH_DIR / f"seed-{seed}"
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        self.spec, self.stats = self.dir / "spec.json", self.dir / "stats.json"
        self.stats.unlink(missing_ok=True)
        run_id = f"qa-{uuid.uuid4().hex[:12]}"
        _write_atomic(self.spec, json.dumps({"stage": stage[0], "function": stage[1], "variant": variant,
                                             "run_id": run_id, "seed": seed,
                                             "params": params.model_dump(mode="json")}).encode())
        env = dict(os.environ, PYTHONUNBUFFERED="1", **{RUN_ID_ENV: run_id})
        # started from the stage's own thread (the kernel ties the child's death signal to the forking thread)
        self.proc = subprocess.Popen([sys.executable, "-m", WORKER, str(self.spec)], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
                                     preexec_fn=dies_with_this_process())
        self.tail: list[str] = []
        self.errors: list[str] = []
        self.reader = threading.Thread(target=self._pump, args=(lines,), daemon=True)
        self.reader.start()

    def _pump(self, lines: queue.Queue) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.tail = (self.tail + [line])[-20:]
            if ERROR_LINE.match(line) and line not in self.errors:
                self.errors.append(line)
            lines.put(f"[seed {self.seed}] {line}")

    def result(self) -> dict[str, Any]:
        self.reader.join()
        try:
            if self.proc.returncode != 0:
                cause = "; ".join(self.errors[:3]) or "see the lines above"
                raise RuntimeError(f"seed {self.seed}: its training process exited with {self.proc.returncode}: "
                                   f"{cause}\nLast lines:\n" + "\n".join(self.tail))
            if not self.stats.exists():
                raise RuntimeError(f"seed {self.seed}: its training process exited 0 but wrote no statistics")
            return json.loads(self.stats.read_text(encoding="utf-8"))
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        for f in (self.spec, self.stats):
            f.unlink(missing_ok=True)
        for d in (self.dir, self.dir.parent):
            try:
                d.rmdir()  # never part of the model DVC caches
            except OSError:
                pass


def _run_side_by_side(stage: tuple[str, str], variant: str, params: Params, section: TrainBudget,
                      run_dir: Callable[[int], Path], width: int) -> list[dict[str, Any]]:
    log = get_logger()
    seeds = list(section.seeds)
    log.info("%s.%s@%s: %d seeds, %d at a time (parallel_runs), %d thread(s) each", *stage, variant, len(seeds),
             width, section.cpu_threads)
    lines: queue.Queue = queue.Queue()
    waiting, running, done = list(seeds), [], {}
    try:
        while waiting or running:
            while waiting and len(running) < width:
                seed = waiting.pop(0)
                running.append(_SeedRun(stage, variant, params, seed, run_dir(seed), lines))
            try:
                log.info("%s", lines.get(timeout=0.5))
            except queue.Empty:
                pass
            for run in [r for r in running if r.proc.poll() is not None]:
                running.remove(run)
                while not lines.empty():
                    log.info("%s", lines.get_nowait())
                done[run.seed] = run.result()  # a failed seed stops the others (finally) and fails the stage
        while not lines.empty():
            log.info("%s", lines.get_nowait())
        return [done[s] for s in seeds]
    finally:
        for run in running:
            stop_process_group(run.proc)
            run.reader.join(timeout=5)
            run.cleanup()
