"""What every fine-tuning section of params.yaml shares (``TrainBudget``); each model's section adds its own."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science


class TrainBudget(StrictModel):
    """What every fine-tuned model shares: length, budget, optimiser, seed and device."""

    max_seq_len: Science[int] = Field(ge=32)
    batch_size: Science[int] = Field(ge=1)
    learning_rate: Science[float] = Field(gt=0)
    weight_decay: Science[float] = Field(ge=0)
    warmup_ratio: Science[float] = Field(ge=0, lt=1)
    max_steps: Science[int] = Field(ge=1, description="small on CPU; raise on a GPU")
    checkpoint_every: Science[int] = Field(ge=1)
    seed: Science[int]
    device: Infrastructure[Literal["auto", "cpu", "cuda"]]
    precision: Science[Literal["auto", "fp32", "bf16", "fp16"]] = Field(
        description="auto: bf16 autocast where the processor or GPU computes bfloat16 natively (CPU: avx512_bf16 "
                    "or amx_bf16), fp16 on a GPU without it, else fp32; fp16 needs a GPU")
    attention_dropout: Science[float | None] = Field(
        ge=0, lt=1, description="dropout on attention probabilities while training; null keeps the model's own "
                                "(BERT, RoBERTa: 0.1)")
    cpu_threads: Infrastructure[int] = Field(
        ge=1, le=1024, description="torch's threads on a CPU, for training and prediction: a sum split over threads "
                                   "rounds by their number, so weights and curves repeat on another machine only "
                                   "with the number fixed here (not the machine's core count)")
    eval_every: Science[int] = Field(ge=1, description="steps between dev evaluations (and one at the last step)")
    select_metric: str = Field(description="the dev figure the kept checkpoint is chosen by (higher is better)")
    patience: Science[int] = Field(
        ge=0, description="dev evaluations without improvement before training stops; 0 = never")
    eval_batch_size: Science[int] = Field(ge=1, description="batch size of dev evaluation and prediction")
