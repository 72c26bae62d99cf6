"""A system trained under several seeds: where each run's model goes, how its predictions are filed, and how
its figures are summarised.

One training run is one draw of the training's randomness (the head's initial weights, the batch order, the
texts held out to choose the checkpoint); a figure read off one run can move on a rebuild, on another
processor's bf16 kernels as much as on another seed. So a system is trained under the seeds its params section
lists (``<section>.seeds``), its figures are reported as the mean and SD over runs beside each run's own, and
``compare`` gives it a verdict ("above", "level", "below") only with ``MIN_SEEDS`` runs or more, from an
interval that resamples both the seeds and the data's units (:mod:`pipeline.common.paired_seeds`). A system
trained once is shown as one run, with no verdict. The StrategyQA paper reports every accuracy as a mean and SD
over 7 runs; three is the fewest that give an SD a reader can weigh.

Layout: the first listed seed is the reference run, its model at ``<model_dir>/final`` (the path every reader
of a single model uses: the model card, the GPU bundle, ``from_pretrained``); every other seed's at
``<model_dir>/seeds/<seed>/final``. Predictions of every run are in one file: ``{"seeds": [...], "runs":
{"<seed>": <that run's predictions>}}``, the runs in the params' order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MIN_SEEDS = 3
SEEDS_DIR = "seeds"


def run_dir(model_dir: Path, seeds: Sequence[int], seed: int) -> Path:
    """Where the run of ``seed`` trains (its checkpoints, then ``final/``): ``model_dir`` for the reference
    run, ``model_dir/seeds/<seed>`` for the others."""
    if seed not in seeds:
        raise ValueError(f"seed {seed} is not one of {list(seeds)}")
    return Path(model_dir) if seed == seeds[0] else Path(model_dir) / SEEDS_DIR / str(seed)


def seeded_predictions(seeds: Sequence[int], runs: Mapping[int, Any]) -> dict[str, Any]:
    """The predictions file of a seeded system (every run, in the params' order)."""
    if list(runs) != list(seeds):
        raise ValueError(f"predictions for seeds {list(runs)}, expected {list(seeds)}")
    return {"seeds": list(seeds), "runs": {str(s): runs[s] for s in seeds}}


def runs_of(predictions: Mapping[str, Any]) -> dict[int, Any]:
    """Each run's predictions from a seeded predictions file, by seed in the file's order; a clear error for a
    file of another shape (one written before seeds, or by hand)."""
    if not isinstance(predictions, Mapping) or set(predictions) != {"seeds", "runs"}:
        keys = sorted(predictions)[:5] if isinstance(predictions, Mapping) else type(predictions).__name__
        raise ValueError(f"not a seeded predictions file (keys 'seeds' and 'runs'), got {keys}")
    seeds, runs = predictions["seeds"], predictions["runs"]
    if [str(s) for s in seeds] != list(runs):
        raise ValueError(f"the runs {list(runs)} are not the seeds {seeds}")
    return {int(s): runs[str(s)] for s in seeds}


def spread(values: Sequence[float], digits: int = 2) -> dict[str, Any]:
    """Mean, SD (sample, n - 1; null for one run) and the per-run values of one figure over seeds."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("no runs to summarise")
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
    return {"mean": round(mean, digits), "sd": None if sd is None else round(sd, digits),
            "per_seed": [round(x, digits) for x in xs], "seeds": len(xs)}


def verdict(low: float, high: float, seeds: int, baseline_seeds: int | None = None) -> str:
    """"above" / "below" when the interval (over seeds and units) excludes 0, "level" when it spans it, and
    "one run" when the system, or a trained baseline (``baseline_seeds``; None for a baseline that trains
    nothing: one deterministic run needs no more), has fewer than ``MIN_SEEDS`` runs."""
    if seeds < MIN_SEEDS or (baseline_seeds is not None and baseline_seeds < MIN_SEEDS):
        return "one run"
    return "above" if low > 0 else "below" if high < 0 else "level"


def mean_over_runs(reports: Sequence[Any], digits: int = 2) -> Any:
    """The runs' reports of one shape, averaged leaf by leaf: a number becomes the mean over runs (an integer
    that is the same in every run, a count, stays as it is), a mapping is averaged key by key, anything else
    (a name, a list) is the first run's. For the breakdown tables (by type, by length) of a seeded system."""
    first = reports[0]
    if isinstance(first, bool) or not isinstance(first, (int, float, Mapping)):
        return first
    if isinstance(first, Mapping):
        return {k: mean_over_runs([r[k] for r in reports], digits) if all(k in r for r in reports) else first[k]
                for k in first}
    if isinstance(first, int) and all(r == first for r in reports):
        return first
    return round(sum(float(r) for r in reports) / len(reports), digits)


def prune_runs(folder: Path, seeds: Sequence[int]) -> None:
    """Remove ``folder/seeds/<name>`` of every seed not trained there now (the first seed's run is ``folder``
    itself): a run's curves replace only their own entries (``pipeline.training.curves``), and a model's
    ``seeds/`` is kept while its stage reruns, so a seed dropped from the list, or moved to the front, would
    otherwise keep its old curves or model."""
    import shutil

    keep = {str(s) for s in seeds[1:]}
    runs = Path(folder) / SEEDS_DIR
    if runs.is_dir():
        for entry in runs.iterdir():
            if entry.name not in keep and not entry.name.startswith(".") and entry.is_dir():
                shutil.rmtree(entry)


def prepare_runs(model_dir: Path, live: Path, seeds: Sequence[int]) -> None:
    """Before a training stage's runs: ``model_dir/seeds`` exists (a DVC out, even with one seed), and neither
    it nor the curves under ``live`` hold a run of a seed not listed now. DVC keeps ``seeds/`` while the stage
    reruns (``persist``), so an unfinished seed resumes from its checkpoints there; a finished one has only its
    ``final/`` left (``pipeline.training.finetune``) and trains again."""
    (Path(model_dir) / SEEDS_DIR).mkdir(parents=True, exist_ok=True)
    prune_runs(model_dir, seeds)
    prune_runs(live, seeds)
