"""Running a model over examples by index, in batches a caller makes: prediction from a saved model, and dev
evaluation of the weights in training (the loop calls it); the padding every batch maker uses.

Apart from the loop because prediction stages load a saved model and run nothing else of training.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from pipeline.common.logs import progress
from pipeline.training.numerics import pick_device

BatchMaker = Callable[[list[int], Any, bool], dict[str, torch.Tensor]]  # (indices, tokenizer, token_types)


def accepts_token_types(model) -> bool:
    """DistilBERT-style models take no token_type_ids; BERT and RoBERTa do."""
    return "token_type_ids" in inspect.signature(model.forward).parameters


def pad(batch: list[list[int]], value: int) -> torch.Tensor:
    width = max(len(x) for x in batch)
    return torch.tensor([x + [value] * (width - len(x)) for x in batch])


@torch.no_grad()
def predict_batches(auto_class: Any, model_dir: Path, n_examples: int, make_batch: BatchMaker, batch_size: int,
                    device_name: str = "auto", precision: str = "auto", cpu_threads: int | None = None) -> Any:
    """Yield ``(indices, model output)`` over ``n_examples`` in order; batches made by ``make_batch``, under
    the precision the model trained with (the section's ``precision``) and its CPU thread count."""
    from transformers import AutoTokenizer

    device, amp_dtype = pick_device(device_name, precision, cpu_threads)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = auto_class.from_pretrained(str(model_dir)).to(device).eval()
    with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        yield from model_outputs(model, tokenizer, n_examples, make_batch, batch_size, "predict", artifact=True)


@torch.no_grad()
def model_outputs(model, tokenizer, n_examples: int, make_batch: BatchMaker, batch_size: int,
                  desc: str = "dev evaluation", artifact: bool = False) -> Any:
    """Yield ``(indices, model output)`` of a model already in memory (prediction, or dev evaluation inside
    the training loop, where autocast is the caller's), with progress lines: a dev evaluation of long windows
    takes minutes on a CPU. A dev evaluation makes no Prefect progress card (a run has one per evaluation)."""
    device = next(model.parameters()).device
    types = accepts_token_types(model)
    starts = range(0, n_examples, batch_size)
    for i in progress(starts, desc, total=len(starts), unit="batch", artifact=artifact):
        idx = list(range(i, min(i + batch_size, n_examples)))
        batch = {k: v.to(device) for k, v in make_batch(idx, tokenizer, types).items()}
        yield idx, model(**batch)
