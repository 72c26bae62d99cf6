"""Span-QA fine-tuning on window features: the shared loop (``pipeline.training.finetune``) with a QA head.

Labels are the window's start/end token positions (CLS where the answer is outside the window); for the
Longformer the question and its special tokens get global attention.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import torch

from pipeline.span_qa.features import WindowFeatures
from pipeline.training.finetune import DevSet, TrainConfig, data_digest, fine_tune
from pipeline.training.batches import model_outputs, pad, predict_batches


def collate(feats: WindowFeatures, idx: list[int], pad_id: int, with_labels: bool = True,
            token_types: bool = True, global_question: bool = False) -> dict[str, torch.Tensor]:
    batch = {
        "input_ids": pad([feats.input_ids[i] for i in idx], pad_id),
        "attention_mask": pad([feats.attention_mask[i] for i in idx], 0),
    }
    if global_question:  # every token before the first context token: [CLS] question [SEP]
        first_ctx = [next(j for j, o in enumerate(feats.offset_mapping[i]) if o is not None) for i in idx]
        batch["global_attention_mask"] = pad([[1] * f for f in first_ctx], 0)
        width = batch["input_ids"].shape[1]
        if batch["global_attention_mask"].shape[1] < width:
            extra = torch.zeros(len(idx), width - batch["global_attention_mask"].shape[1], dtype=torch.long)
            batch["global_attention_mask"] = torch.cat([batch["global_attention_mask"], extra], dim=1)
    if token_types:
        batch["token_type_ids"] = pad([feats.token_type_ids[i] for i in idx], 0)
    if with_labels:
        batch["start_positions"] = torch.tensor([feats.start_positions[i] for i in idx])
        batch["end_positions"] = torch.tensor([feats.end_positions[i] for i in idx])
    return batch


def train(feats: WindowFeatures, cfg: TrainConfig, out_dir: Path, fingerprint: dict[str, Any],
          dev: DevSet | None = None, log_dir: Path | None = None) -> dict[str, Any]:
    """Train, checkpointing into ``out_dir``; resume when a checkpoint of the same ``fingerprint`` exists."""
    from transformers import AutoModelForQuestionAnswering

    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        # looked up at call time, so a test can make a batch fail mid-run
        return collate(feats, idx, tokenizer.pad_token_id, token_types=types, global_question=cfg.global_question)

    fingerprint = {**fingerprint, "training_data": data_digest(feats.input_ids, feats.start_positions,
                                                               feats.end_positions)}
    stats = fine_tune(AutoModelForQuestionAnswering, len(feats), make_batch, cfg, out_dir, fingerprint, dev=dev,
                      log_dir=log_dir)
    return {**stats, "train_windows": len(feats)}


def window_logits(outputs, feats: WindowFeatures) -> tuple[list[list[float]], list[list[float]]]:
    """Start and end logits per window, cut to the window's own length (padding dropped)."""
    starts, ends = [], []
    for idx, out in outputs:
        for j, k in enumerate(idx):
            n = len(feats.input_ids[k])
            starts.append(out.start_logits[j, :n].float().cpu().tolist())
            ends.append(out.end_logits[j, :n].float().cpu().tolist())
    return starts, ends


def _unlabelled_batches(feats: WindowFeatures, global_question: bool):
    return functools.partial(_unlabelled_batch, feats, global_question)


def _unlabelled_batch(feats: WindowFeatures, global_question: bool, idx: list[int], tokenizer,
                      types: bool) -> dict[str, torch.Tensor]:
    return collate(feats, idx, tokenizer.pad_token_id, with_labels=False, token_types=types,
                   global_question=global_question)


def predict_logits(model_dir: Path, feats: WindowFeatures, batch_size: int, device_name: str = "auto",
                   global_question: bool = False, precision: str = "auto",
                   cpu_threads: int | None = None) -> tuple[list[list[float]], list[list[float]]]:
    from transformers import AutoModelForQuestionAnswering

    return window_logits(predict_batches(AutoModelForQuestionAnswering, model_dir, len(feats),
                                         _unlabelled_batches(feats, global_question), batch_size, device_name,
                                         precision, cpu_threads), feats)


def logits_of(model, tokenizer, feats: WindowFeatures, batch_size: int,
              global_question: bool = False) -> tuple[list[list[float]], list[list[float]]]:
    """The same logits from a model in memory (dev evaluation during training)."""
    return window_logits(model_outputs(model, tokenizer, len(feats), _unlabelled_batches(feats, global_question),
                                       batch_size), feats)
