"""A StrategyQA learning-rate search run on an offline GPU node, read back: one row per run, with paired intervals.

The node side is ``infra/training/node-strategyqa-search.sh`` (one node run of a setting's train -> predict ->
evaluate chain per learning rate, each packed as ``<setting>_lr<LR>.tar.gz``). This reads those archives, takes
the trained section's settings from each run's own params.yaml, scores its predictions against the majority
answer on the same questions (the ``compare`` stage's paired bootstrap), and keeps the dev curve and the loss
(mean per evaluation interval), so the search's result is a committed figure, not a remembered one:

    python -m benchmarks.gpu_strategyqa_search OUT/*.tar.gz [--name gpu_strategyqa_search]
"""

from __future__ import annotations

import argparse
import json
import tarfile
from pathlib import Path

import yaml

from benchmarks._common import dvclive_series, write_result
from pipeline.common.seed_runs import runs_of
from pipeline.common.manifest import source_path
from pipeline.common.paired import paired_difference
from pipeline.strategyqa.data import load_questions

SEARCHED = ("learning_rate", "max_steps", "patience", "max_seq_len", "batch_size", "warmup_ratio", "weight_decay")


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def summarise(archive: Path, gold: dict[str, bool]) -> dict:
    """One node run's archive -> its settings, training, eval figure and paired difference from majority."""
    files = _members(archive)
    reports = [n for n in files if n.startswith("reports/strategyqa_qa_") and n.endswith(".json")]
    if len(reports) != 1:
        raise ValueError(f"{archive}: expected one StrategyQA setting's report, found {reports}")
    setting = reports[0].removeprefix("reports/strategyqa_qa_").removesuffix(".json")
    report = json.loads(files[reports[0]])
    train = json.loads(files[f"reports/train_strategyqa_qa_{setting}.json"])
    section = yaml.safe_load(files["params.yaml"])["strategyqa_qa"]
    raw = json.loads(files[f"data/predictions/strategyqa_{setting}.json"])
    # the reference run's answers (a search runs one seed); an archive from before seeds holds them flat
    predictions = next(iter(runs_of(raw).values())) if set(raw) == {"seeds", "runs"} else raw
    ids = sorted(predictions)
    majority = report["majority_answer"] == "yes"
    paired = paired_difference([float(bool(predictions[i]["answer"]) == gold[i]) for i in ids],
                               [float(majority == gold[i]) for i in ids])
    live = f"dvclive/strategyqa_{setting}/plots/metrics"
    dev = dvclive_series(files[f"{live}/dev/accuracy.tsv"])
    loss = dvclive_series(files[f"{live}/train/loss.tsv"])
    every = section["eval_every"]
    loss_means = [(step, round(sum(v for s, v in loss if step - every < s <= step) / every, 4)) for step, _ in dev]
    return {"archive": archive.name, "setting": setting, "params": {k: section[k] for k in SEARCHED},
            "device": train["device"], "precision": train["precision"], "steps": train["steps"],
            "stopped_early": train["stopped_early"], "best_step": train["best_step"],
            "dev_best": train["dev_best"]["accuracy"], "eval_accuracy": report["accuracy"],
            "eval_truncated_share": report["eval_truncated_share"],
            "predicted_yes_share": report["predicted_yes_share"], "final_loss": train["final_loss"],
            "vs_majority": paired, "dev_curve": dev, "loss_per_interval": loss_means}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archives", nargs="+", type=Path)
    ap.add_argument("--name", default="gpu_strategyqa_search")
    args = ap.parse_args(argv)
    gold = {q.qid: bool(q.answer) for q in load_questions(source_path("strategyqa_eval"))}
    runs = [summarise(a, gold) for a in sorted(args.archives)]
    devices = sorted({r["device"] for r in runs})
    write_result(args.name, {"device": devices[0] if len(devices) == 1 else devices,
                             "node_command": "bash node-strategyqa-search.sh OUT SETTING MAX_STEPS PATIENCE LR...",
                             "runs": runs,
                             "any_above_majority": any(r["vs_majority"]["above"] for r in runs)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
