"""Which budget makes the auxiliary BoolQ model learn: a search read on its selection-dev only.

The StrategyQA paper's auxiliary chain only helps if its BoolQ link learns BoolQ; at the committed budgets it
answers "yes" to every question (the CPU default's 60 steps of 128 tokens, and the GPU profile's 360 x 32 of 512
on an H200). Each run here is the stage's own ``train()`` (same split, same loop, same dev scoring) with some of
``boolq_aux``'s params replaced; it records the dev curve, the mean training loss between evaluations, the dev
majority (the training part's majority answer, scored on dev) and the share of "yes" the kept checkpoint
answers on dev. The held-out articles are not read: they stay the stage's report, for the budget chosen here.

Run it in a scratch clone (it writes ``models/boolq_aux`` and ``dvclive/boolq_aux`` where it runs); each
finished run is appended to the result at once and skipped when the search is started again, so a killed
search resumes at the run it was in (whose checkpoints the loop resumes from):

    python -m benchmarks.boolq_budget --run max_seq_len=256,learning_rate=1e-4,max_steps=600 [--run ...] \
        --out /path/to/benchmarks/results/boolq_budget_cpu.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks._common import dvclive_series, machine
from pipeline.common.layout import PATHS
from pipeline.params import DEFAULT_PARAMS_FILE, validate_params

SEARCHABLE = ("max_seq_len", "batch_size", "learning_rate", "weight_decay", "warmup_ratio", "max_steps",
              "eval_every", "checkpoint_every", "patience", "attention_dropout", "precision")


def _scalar(value: str) -> Any:
    """A number as a number (YAML 1.1 reads ``1e-4`` as a string), anything else as YAML reads it."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return yaml.safe_load(value)


def parse_run(text: str) -> dict[str, Any]:
    """``key=value,...`` -> overrides of the boolq_aux section (numbers, or YAML scalars); only training
    settings may change, so every run trains on the same questions and is scored on the same dev set."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in SEARCHABLE:
            raise SystemExit(f"--run {text!r}: {item!r} is not KEY=VALUE with KEY one of {', '.join(SEARCHABLE)}")
        out[key] = _scalar(value.strip())
    if not out:
        raise SystemExit(f"--run {text!r}: no setting given")
    return out


def one_run(overrides: dict[str, Any]) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from pipeline.stages import train_boolq_aux as stage
    from pipeline.strategyqa.answering import majority_label
    from pipeline.training.choice_model import argmax, predict_choice_logits
    from pipeline.training.pair_encoding import encode_pairs

    raw = yaml.safe_load(DEFAULT_PARAMS_FILE.read_text(encoding="utf-8"))
    raw["boolq_aux"] = {**raw["boolq_aux"], **overrides}
    params = validate_params(raw, f"boolq_budget {overrides}", ("boolq_aux",))
    p = params.boolq_aux
    start = time.monotonic()
    stats = stage.train(params)
    seconds = time.monotonic() - start
    fit, dev, _ = stage.boolq_sets(params)
    gold = [int(q.answer) for q in dev]
    model = PATHS.boolq_aux.model
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), [q.question for q in dev],
                         [q.passage for q in dev], p.max_seq_len)
    answers = argmax(predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                           p.precision))
    majority = majority_label([int(q.answer) for q in fit])
    live = PATHS.boolq_aux.live / "plots" / "metrics"
    dev_curve = dvclive_series((live / "dev" / "accuracy.tsv").read_bytes())
    loss = dvclive_series((live / "train" / "loss.tsv").read_bytes())
    every = p.eval_every
    loss_means = [[step, round(sum(v for s, v in loss if step - every < s <= step)
                               / max(1, sum(1 for s, _ in loss if step - every < s <= step)), 4)]
                  for step, _ in dev_curve]
    return {
        "overrides": overrides,
        "settings": {k: getattr(p, k) for k in SEARCHABLE},
        "steps": stats["steps"], "best_step": stats.get("best_step"), "stopped_early": stats.get("stopped_early"),
        "dev_best": stats.get("dev_best"), "dev_questions": len(dev),
        "dev_majority": round(100.0 * sum(g == majority for g in gold) / len(gold), 2),
        "dev_yes_share_kept": round(sum(answers) / len(answers), 4),
        "dev_truncated_share": round(feats.truncated / len(feats), 4),
        "dev_curve": [[s, round(v, 2)] for s, v in dev_curve], "loss_means": loss_means,
        "precision": stats.get("precision"), "train_seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", required=True, help="KEY=VALUE,... overrides of boolq_aux")
    ap.add_argument("--out", type=Path, required=True, help="the result JSON (appended to, run by run)")
    args = ap.parse_args(argv)
    runs = [parse_run(r) for r in args.run]
    result = json.loads(args.out.read_text()) if args.out.exists() else {"runs": []}
    for overrides in runs:
        if any(r["overrides"] == overrides for r in result["runs"]):
            print(f"done already: {overrides}")
            continue
        row = one_run(overrides)
        result["runs"].append(row)
        result["machine"] = machine()
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        tmp.replace(args.out)
        print(json.dumps({k: row[k] for k in ("overrides", "best_step", "dev_best", "dev_majority",
                                              "dev_yes_share_kept", "train_seconds")}))


if __name__ == "__main__":
    main()
