"""Fine-tune and apply a model that picks one of a few labels: yes/no classification (StrategyQA) or one
of four options (QuAIL). Both come out as logits ``(examples, labels)``, so training, prediction and the
argmax are one piece of code over the shared loop in ``pipeline.training.finetune``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import torch

from pipeline.training.finetune import TrainConfig, fine_tune, predict_batches
from pipeline.training.launch import distributable
from pipeline.training.pair_encoding import PairFeatures, collate_pairs

Head = Literal["classification", "multiple_choice"]


def _auto_class(head: Head):
    from transformers import (
        AutoModelForMultipleChoice,
        AutoModelForSequenceClassification,
    )

    return AutoModelForSequenceClassification if head == "classification" else AutoModelForMultipleChoice


@distributable
def train_choice_model(head: Head, feats: PairFeatures, labels: list[int], choices: int, cfg: TrainConfig,
                       out_dir: Path, fingerprint: dict[str, Any],
                       label_names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """``choices``: options per example for multiple choice; the number of classes for classification.
    ``label_names`` go into the saved config (``id2label``), so ``transformers.pipeline("text-classification")``
    answers with them ("yes"/"no") instead of LABEL_0/LABEL_1."""
    per_row = choices if head == "multiple_choice" else 1
    n = len(feats) // per_row
    if n != len(labels):
        raise ValueError(f"{n} encoded examples but {len(labels)} labels")

    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        return collate_pairs(feats, idx, tokenizer.pad_token_id, types, labels, per_row)

    kwargs: dict[str, Any] = {"num_labels": choices} if head == "classification" else {}
    if head == "classification" and label_names:
        if len(label_names) != choices:
            raise ValueError(f"{len(label_names)} label names for {choices} classes")
        kwargs |= {"id2label": dict(enumerate(label_names)), "label2id": {n: i for i, n in enumerate(label_names)}}
    stats = fine_tune(_auto_class(head), n, make_batch, cfg, out_dir, fingerprint, model_kwargs=kwargs)
    return {**stats, "train_examples": n}


def predict_choice_logits(head: Head, model_dir: Path, feats: PairFeatures, choices: int, batch_size: int,
                          device: str = "auto") -> list[list[float]]:
    per_row = choices if head == "multiple_choice" else 1

    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        return collate_pairs(feats, idx, tokenizer.pad_token_id, types, None, per_row)

    out: list[list[float]] = []
    for _, result in predict_batches(_auto_class(head), model_dir, len(feats) // per_row, make_batch, batch_size, device):
        out += result.logits.float().cpu().tolist()
    return out


def argmax(logits: list[list[float]]) -> list[int]:
    return [max(range(len(row)), key=lambda i: (row[i], -i)) for row in logits]
