"""Where a seeded system's selection-dev curve stops rising: the record a training budget is chosen from.

A trained system evaluates on its selection-dev split every ``eval_every`` steps (DVCLive writes each seed's curve
under ``dvclive/<system>/``: the reference seed at the top, the others in ``seeds/<seed>/``). This reads those
curves from the checkout, one metric, and writes each seed's figure per step and their mean, with the step where
the mean is highest. A flat curve inside one schedule does not show that a shorter schedule does as well (its
learning rate decays sooner): train the shorter budget too, record its curves the same way under another name, and
compare the two records on selection-dev, never on a test figure. Run it before the next run replaces the curves.

    .venv/bin/python -m benchmarks.budget_selection span_window --metric f1 --name span_budget_selection
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks._common import dvclive_series, write_result
from pipeline.common.seed_runs import SEEDS_DIR

REPO = Path(__file__).resolve().parents[1]


def read_curve(path: Path) -> dict[int, float]:
    """One DVCLive curve: step -> value."""
    curve = dict(dvclive_series(path.read_bytes()))
    if not curve:
        raise SystemExit(f"{path}: no evaluation in it")
    return curve


def seed_curves(live: Path, metric: str, reference_seed: int) -> dict[int, dict[int, float]]:
    """Every seed's selection-dev curve under one system's DVCLive folder."""
    top = live / "plots" / "metrics" / "dev" / f"{metric}.tsv"
    if not top.is_file():
        raise SystemExit(f"{top}: no selection-dev curve (has the system been trained in this checkout?)")
    curves = {reference_seed: read_curve(top)}
    for seed_dir in sorted((live / SEEDS_DIR).glob("*"), key=lambda p: p.name):
        path = seed_dir / "plots" / "metrics" / "dev" / f"{metric}.tsv"
        if path.is_file() and seed_dir.name.isdigit():
            curves[int(seed_dir.name)] = read_curve(path)
    return curves


def summarise(curves: dict[int, dict[int, float]]) -> dict:
    """Per step: each seed's figure and their mean (steps every seed evaluated at), and the best mean's step."""
    steps = sorted(set.intersection(*(set(c) for c in curves.values())))
    if not steps:
        raise SystemExit("the seeds' curves share no evaluation step")
    by_step = {str(s): {"per_seed": {str(seed): c[s] for seed, c in sorted(curves.items())},
                        "mean": round(sum(c[s] for c in curves.values()) / len(curves), 2)} for s in steps}
    best = max(steps, key=lambda s: (by_step[str(s)]["mean"], -s))  # a tie goes to the shorter budget
    return {"seeds": sorted(curves), "steps": steps, "by_step": by_step, "best_mean_step": best,
            "best_mean": by_step[str(best)]["mean"], "last_step_mean": by_step[str(steps[-1])]["mean"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.budget_selection", description=__doc__.split("\n")[0])
    ap.add_argument("system", help="the DVCLive folder under dvclive/ (span_window, quail_mc_full, ...)")
    ap.add_argument("--metric", default="f1")
    ap.add_argument("--reference-seed", type=int, default=42, help="the seed of the top-level curve (the first)")
    ap.add_argument("--name", default=None, help="result file name (default: <system>_budget_selection)")
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)
    if not args.system.replace("_", "").isalnum():
        raise SystemExit(f"system {args.system!r}: a folder name under dvclive/, letters, digits and '_' only")
    curves = seed_curves(REPO / "dvclive" / args.system, args.metric, args.reference_seed)
    write_result(args.name or f"{args.system}_budget_selection",
                 {"system": args.system, "metric": args.metric, "split": "selection-dev", "note": args.note,
                  **summarise(curves)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
