"""One seed's training process of :mod:`pipeline.launcher.parallel_seeds`:
``python -m pipeline.launcher.seed_process SPEC`` (started by a training stage, never by hand). It reads the
spec the way a torchrun worker does (this user's private file, written for the run named in its environment,
a stage module by name, params that pass the schema, an integer seed), calls that stage's
``train(params, variant, seed=)`` or ``predict(params, variant, seed=)`` (the only two names a spec may carry)
and writes what it returns beside the spec. It dies with the stage."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

from pipeline.common.processes import die_with_parent
from pipeline.launcher.parallel_seeds import RUN_ID_ENV, SEED_FUNCTIONS
from pipeline.launcher.torchrun import _write_atomic, spec_function


def main(spec_path: Path) -> None:
    die_with_parent(os.getppid())
    # the training loop's progress lines, to the stage that forwards them (prefixed with the seed) to its log:
    # an import on the way installs a root handler at WARNING, which would drop them
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(levelname)s %(message)s", force=True)
    run_seed, variant, params, seed = spec_function(spec_path, os.environ.get(RUN_ID_ENV, ""), SEED_FUNCTIONS)
    if seed is None:
        raise SystemExit(f"SpecError: {spec_path}: a seed process runs one seed; the spec names none")
    result = run_seed(params, variant, seed=seed)
    _write_atomic(spec_path.with_name("stats.json"), json.dumps(result).encode())


if __name__ == "__main__":
    if len(sys.argv) != 2 or RUN_ID_ENV not in os.environ:
        sys.exit("usage: python -m pipeline.launcher.seed_process SPEC.json (started by a training stage)")
    main(Path(sys.argv[1]))
