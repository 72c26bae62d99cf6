"""What a classification or multiple-choice head reads from the encoder: BERT's pooler over [CLS]
(``pooler``, what transformers' ``AutoModelFor{SequenceClassification,MultipleChoice}`` do) or the mean of the
token states under the attention mask (``mean``).

Why both: the shipped MiniLM (all-MiniLM-L6-v2) was trained as a mean-pooled sentence encoder, so its pooler
dense layer over [CLS] is a path its sentence training never used, while the mean of its token states is what
that training shaped (``pipeline/nlquad/signal.py`` pools the same way). Which one a task learns better from is
a selection-dev question; the params choose, per section.

A mean-pooled model's config says so (``qa_pipeline_pooling: mean``) and :class:`PooledModel` reads a saved
model the way it was trained, so prediction and a resumed run need no parameter; a model without the mark is
read through its pooler. Plain transformers reads every model through the pooler: a mean-pooled one must be
loaded through :class:`PooledModel`. The pooler's weights stay in the checkpoint unused under ``mean``, so the
files keep transformers' layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

import torch

from pipeline.training.config import Pooling

CONFIG_KEY = "qa_pipeline_pooling"
POOLINGS: tuple[str, ...] = get_args(Pooling)


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The mean of ``hidden`` ``(batch, length, width)`` over the positions ``mask`` marks, in fp32 (a bf16 sum
    of hundreds of states loses digits), returned in ``hidden``'s dtype; no mask: every position."""
    states = hidden.float()
    if mask is None:
        pooled = states.mean(dim=1)
    else:
        weights = mask.to(states.dtype).unsqueeze(-1)
        pooled = (states * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
    return pooled.to(hidden.dtype)


def _mean_pooled(module: torch.nn.Module, args: tuple, kwargs: dict[str, Any], output: Any) -> Any:
    """Forward hook on the encoder: its ``pooler_output`` becomes the masked mean of its last hidden states,
    which the task head (dropout, linear) then reads as it would read the pooler's."""
    mask = kwargs.get("attention_mask")
    if mask is None and len(args) > 1:
        mask = args[1]
    output.pooler_output = masked_mean(output.last_hidden_state, mask)
    return output


def apply_pooling(model: Any, pooling: str) -> Any:
    """Set how ``model``'s head reads its encoder and record it in its config; returns the model."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling {pooling!r}: one of {', '.join(POOLINGS)}")
    encoder = model.base_model
    if pooling == "mean":
        if getattr(encoder, "pooler", None) is None:
            raise ValueError(f"{type(encoder).__name__} has no pooler output for a mean to stand in for")
        encoder.register_forward_hook(_mean_pooled, with_kwargs=True)
        setattr(model.config, CONFIG_KEY, pooling)
    elif hasattr(model.config, CONFIG_KEY):  # a mean-pooled start model trained on with the pooler
        delattr(model.config, CONFIG_KEY)
    return model


def saved_pooling(config: Any) -> str:
    """The pooling a saved model was trained with (``pooler`` for a model saved without the mark)."""
    return getattr(config, CONFIG_KEY, None) or "pooler"


@dataclass(frozen=True)
class PooledModel:
    """A stand-in for a transformers auto class whose ``from_pretrained`` also sets the pooling: ``pooling``
    for a model about to be trained, or (``None``) the one its saved config records."""

    auto_class: Any
    pooling: Pooling | None = None

    def from_pretrained(self, path: str, **kwargs: Any) -> Any:
        model = self.auto_class.from_pretrained(path, **kwargs)
        return apply_pooling(model, self.pooling or saved_pooling(model.config))
