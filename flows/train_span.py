"""``train_span`` stage: fine-tune the sliding-window QA model on the train split (resumable)."""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import write_json
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import build_windows
from pipeline.span_qa.train import TrainConfig, resolve_model_path, train

OUT = Path("models/span_window")


@flow(name="train_span", log_prints=True)
def train_span_flow(params_file: str = "params.yaml") -> dict:
    from transformers import AutoTokenizer

    p = params_of(params_file).train
    examples, _ = load_examples("data/splits/train.json")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))
    feats = build_windows(tokenizer, examples.questions, examples.contexts, examples.answers,
                          p.max_seq_len, p.doc_stride, p.max_question_len)
    cfg = TrainConfig(p.model_name_or_path, p.learning_rate, p.batch_size, p.max_steps, p.warmup_ratio,
                      p.weight_decay, p.seed, p.checkpoint_every, p.device)
    fingerprint = {**p.model_dump(), "train_windows": len(feats), "train_questions": len(examples.ids)}
    stats = train(feats, cfg, OUT, fingerprint)
    # timings and resume points vary run to run: kept out of the metrics, logged instead
    print({k: stats[k] for k in ("tokens_per_s_this_run", "resumed_from_step", "device", "precision")})
    metrics = {k: v for k, v in stats.items() if k not in ("tokens_per_s_this_run", "resumed_from_step")}
    write_json("metrics/train_span.json", metrics)
    return stats


if __name__ == "__main__":
    sys.exit(stage_main(train_span_flow))
