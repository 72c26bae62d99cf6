"""One seed's training process of :mod:`pipeline.launcher.parallel_seeds`:
``python -m pipeline.launcher.seed_process SPEC`` (started by a training stage, never by hand). It reads the
spec the way a torchrun worker does (this user's private file, written for the run named in its environment,
a stage module by name, params that pass the schema, an integer seed), calls that stage's
``train(params, variant, seed=)`` and writes what it returns beside the spec. It dies with the stage."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

from pipeline.common.processes import die_with_parent
from pipeline.launcher.parallel_seeds import RUN_ID_ENV
from pipeline.launcher.torchrun import STAGES_PACKAGE, TRAIN_NAME, SpecError, _write_atomic, read_spec


def main(spec_path: Path) -> None:
    die_with_parent(os.getppid())
    try:
        stage, variant, params, seed = read_spec(spec_path, os.environ.get(RUN_ID_ENV, ""))
        if seed is None:
            raise SpecError(f"{spec_path}: a seed process trains one seed; the spec names none")
        module = importlib.import_module(f"{STAGES_PACKAGE}.{stage}")
    except (SpecError, ModuleNotFoundError) as exc:
        raise SystemExit(f"SpecError: {exc}") from None
    train = getattr(module, TRAIN_NAME, None)
    if not callable(train):
        raise SystemExit(f"SpecError: {STAGES_PACKAGE}.{stage} has no {TRAIN_NAME}(params, variant, seed=)")
    result = train(params, variant, seed=seed)
    _write_atomic(spec_path.with_name("stats.json"), json.dumps(result).encode())


if __name__ == "__main__":
    if len(sys.argv) != 2 or RUN_ID_ENV not in os.environ:
        sys.exit("usage: python -m pipeline.launcher.seed_process SPEC.json (started by a training stage)")
    main(Path(sys.argv[1]))
