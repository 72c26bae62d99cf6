"""Why the span model ignores its question: one change at a time, on a sample whose questions name their sections.

On the section-naming sample (``sample.question_headings: name_section``) every question names the subject of
the section that answers it, so a reader can find its answer; a span model that is level there with a
question-blind position window has not learnt to read, and something between the data and the score stops it.
This study trains the span model (the stage's own windows, loop and post-processing) under one change at a time
against the params.yaml settings and reads, at each dev evaluation, for each way of turning window logits into
one answer:

- IoU (NLQuAD's primary measure) on the dev split (selection-dev: the test split is never read here);
- own-vs-other overlap (``pipeline.nlquad.own_vs_other``): IoU with the question's own answer minus the mean IoU
  with the other answers of its article, 0 for a system that ignores the question;
- the share of windows without an answer among the training windows.

Aggregations: every one of ``pipeline.span_qa.postprocess.AGGREGATIONS`` (``union``, the NLQuAD paper's;
``margin``; ``best``), from the same logits.

Run: ``python -m benchmarks.span_control_study --split-dir <a clone's data/nlquad/split> --out
benchmarks/results/span_control_study.json --variants base lr_5e-5 ...``; each variant is one run of seed 42.
A variant already in ``--out`` is not trained again (the study resumes after a kill).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.common.files import write_json
from pipeline.nlquad.metrics import evaluate as score
from pipeline.nlquad.own_vs_other import own_and_other
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import WindowFeatures, build_windows
from pipeline.span_qa.postprocess import AGGREGATIONS, predict_from_logits
from pipeline.span_qa.train import logits_of, train
from pipeline.training.finetune import DevSet, TrainConfig
from pipeline.training.model_names import resolve_model_path

# one change against the params.yaml settings each (params: span_window's fields; keep_empty: the share of
# training windows without an answer that are kept)
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    "lr_5e-5": {"learning_rate": 5e-5},
    "lr_3e-4": {"learning_rate": 3e-4},
    "keep_empty_0.3": {"keep_empty": 0.3},
    "keep_empty_0": {"keep_empty": 0.0},
    "steps_400": {"max_steps": 400},
    "len_256": {"max_seq_len": 256, "doc_stride": 96},
    "keep_empty_0.3_lr_3e-4": {"keep_empty": 0.3, "learning_rate": 3e-4},
    # a window holding part of its answer is labelled "no answer" (not clipped to its edges)
    "whole_answer": {"whole_answer": True, "eval_every": 200},
    "whole_answer_keep_empty_0.3": {"whole_answer": True, "keep_empty": 0.3, "eval_every": 200},
    "whole_answer_lr_3e-4": {"whole_answer": True, "learning_rate": 3e-4, "eval_every": 200},
    "whole_answer_steps_400": {"whole_answer": True, "max_steps": 400, "eval_every": 200},
}
STUDY_KEYS = ("keep_empty", "whole_answer")  # the study's own changes; the rest are span_window fields


@dataclass
class StudyDev:
    """Dev figures of every aggregation; ``iou`` (the one the loop selects by) is the stage's own."""

    feats: WindowFeatures
    ids: list[str]
    contexts: list[str]
    dataset: dict
    n_best: int
    max_answer_tokens: int
    batch_size: int
    log: list[dict]

    def __call__(self, model, tokenizer) -> dict[str, float]:
        starts, ends = logits_of(model, tokenizer, self.feats, self.batch_size)
        row: dict[str, float] = {}
        for how in AGGREGATIONS:
            preds = dict(zip(self.ids, predict_from_logits(
                self.feats.example_index, self.feats.offset_mapping, starts, ends, self.contexts, self.n_best,
                self.max_answer_tokens, how), strict=True))
            summary, _ = score(preds, self.dataset)
            pairs = own_and_other(preds, self.dataset)
            diff = [own - other for own, other in pairs.values()]
            row |= {f"{how}_iou": summary["iou"], f"{how}_f1": summary["f1"],
                    f"{how}_own_minus_other": 100.0 * float(np.mean(diff)),
                    f"{how}_pred_words": float(np.mean([len(p["text"].split()) for p in preds.values()]))}
        self.log.append(row)
        return {"iou": row["union_iou"], **row}


def whole_answer_labels(feats: WindowFeatures, answers: list[tuple[int, int]]) -> WindowFeatures:
    """Per question, only the windows that hold the most of its answer keep their (clipped) labels: the windows
    holding all of it where one does, else the ones holding the largest part; every other window is labelled "no
    answer" (CLS). Clipping every window to its edges teaches "the whole window" wherever an answer runs past one."""
    cover: dict[int, list[tuple[int, int]]] = {}
    for i, ex in enumerate(feats.example_index):
        ctx = [o for o in feats.offset_mapping[i] if o is not None]
        start, end = answers[ex]
        held = max(0, min(end, ctx[-1][1]) - max(start, ctx[0][0]))
        cover.setdefault(ex, []).append((held, i))
    for windows in cover.values():
        most = max(h for h, _ in windows)
        for held, i in windows:
            if held < most or most == 0:
                feats.start_positions[i] = feats.end_positions[i] = 0
    return feats


def keep_windows(feats: WindowFeatures, share: float, seed: int) -> WindowFeatures:
    """Every window holding part of its answer, and ``share`` of the others (drawn with ``seed``)."""
    rng = random.Random(seed)
    kept = WindowFeatures()
    for i in range(len(feats)):
        empty = feats.start_positions[i] == 0 and feats.end_positions[i] == 0
        if empty and rng.random() >= share:
            continue
        for name in ("input_ids", "attention_mask", "token_type_ids", "offset_mapping", "example_index",
                     "start_positions", "end_positions"):
            getattr(kept, name).append(getattr(feats, name)[i])
    return kept


def run_variant(name: str, split_dir: Path, base: dict[str, Any], seed: int) -> dict[str, Any]:
    from transformers import AutoTokenizer

    change = VARIANTS[name]
    p = {**base, **{k: v for k, v in change.items() if k not in STUDY_KEYS}}
    model = resolve_model_path(p["model_name_or_path"])
    tokenizer = AutoTokenizer.from_pretrained(model)
    train_ex, _ = load_examples(split_dir / "train.json")
    dev_ex, dev_data = load_examples(split_dir / "dev.json")
    feats = build_windows(tokenizer, train_ex.questions, train_ex.contexts, train_ex.answers, p["max_seq_len"],
                          p["doc_stride"], p["max_question_len"])
    empty_share = sum(s == 0 and e == 0 for s, e in zip(feats.start_positions, feats.end_positions)) / len(feats)
    if change.get("whole_answer"):
        feats = whole_answer_labels(feats, train_ex.answers)
    if "keep_empty" in change:
        feats = keep_windows(feats, change["keep_empty"], seed)
    dev_feats = build_windows(tokenizer, dev_ex.questions, dev_ex.contexts, None, p["max_seq_len"],
                              p["doc_stride"], p["max_question_len"])
    log: list[dict] = []
    dev = DevSet(StudyDev(dev_feats, dev_ex.ids, dev_ex.contexts, dev_data, p["n_best"], p["max_answer_tokens"],
                          p["eval_batch_size"], log), len(dev_ex.ids))
    fields = set(TrainConfig.model_fields) - {"seed", "model_name_or_path", "global_question"}
    cfg = TrainConfig(**{k: p[k] for k in fields if k in p}, seed=seed, model_name_or_path=model)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        stats = train(feats, cfg, Path(tmp), {"study": name}, dev=dev)
    steps = list(range(cfg.eval_every, cfg.max_steps, cfg.eval_every)) + [cfg.max_steps]
    return {"change": change, "seed": seed, "seconds": round(time.monotonic() - started, 1),
            "train_windows": len(feats), "empty_window_share_before": round(100 * empty_share, 1),
            "empty_window_share_trained": round(100 * sum(s == 0 and e == 0 for s, e in zip(
                feats.start_positions, feats.end_positions)) / len(feats), 1),
            "final_loss": stats.get("final_loss"),
            "dev": {str(step): {k: round(v, 2) for k, v in row.items()} for step, row in zip(steps, log)}}


def main(argv: list[str] | None = None) -> None:
    from pipeline.params import load_params

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split-dir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)
    base = load_params().span_window.model_dump()
    done = json.loads(args.out.read_text()) if args.out.exists() else {"variants": {}}
    for name in args.variants:
        if name in done["variants"]:
            continue
        done["variants"][name] = run_variant(name, args.split_dir, base, args.seed)
        done |= {"split_dir": str(args.split_dir), "split": "dev (selection-dev)", "note": args.note,
                 "base": {k: base[k] for k in ("max_seq_len", "doc_stride", "batch_size", "learning_rate",
                                               "max_steps", "eval_every", "precision")}}
        write_json(args.out, done)
        print(name, json.dumps(done["variants"][name]["dev"]), flush=True)


if __name__ == "__main__":
    main()
