"""What every fine-tuning section of params.yaml shares (``TrainBudget``), each model's section adding its own,
and how training runs: in the stage's process or under ``torchrun`` (``DistributedParams``)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science


Pooling = Literal["pooler", "mean"]  # what a classification or multiple-choice head reads from its encoder
POOLING_DESCRIPTION = ("what the head reads from the encoder: pooler (BERT's dense layer over [CLS], transformers' "
                       "default) or mean (the token states' mean under the attention mask, as the shipped MiniLM "
                       "was trained); chosen on selection-dev (docs/training.md)")

ClassBalance = Literal["none", "oversample"]  # how a yes/no model's training examples are drawn
CLASS_BALANCE_DESCRIPTION = ("how a yes/no model's training examples are drawn: none (each once an epoch) or oversample "
                             "(the rarer answer's examples repeated until both answers are as many, so the label "
                             "prior lowers no loss); chosen on selection-dev (docs/training.md)")

MAX_SEEDS = 20  # training runs of one system: each is a whole training, so a run may not ask for a thousand
SEED_MAX = 2**32 - 1


class BudgetFields(StrictModel):
    """What every fine-tuned model shares: length, budget, optimiser and device (one run's seed is the loop's,
    ``TrainConfig.seed``; a params section lists its seeds, ``TrainBudget.seeds``)."""

    max_seq_len: Science[int] = Field(ge=32)
    batch_size: Science[int] = Field(ge=1)
    learning_rate: Science[float] = Field(gt=0)
    weight_decay: Science[float] = Field(ge=0)
    warmup_ratio: Science[float] = Field(ge=0, lt=1)
    max_steps: Science[int] = Field(ge=1, description="small on CPU; raise on a GPU")
    checkpoint_every: Science[int] = Field(ge=1)
    device: Infrastructure[Literal["auto", "cpu", "cuda"]]
    precision: Science[Literal["auto", "fp32", "bf16", "fp16"]] = Field(
        description="auto: bf16 autocast where the processor or GPU computes bfloat16 natively (CPU: avx512_bf16 "
                    "or amx_bf16), fp16 on a GPU without it, else fp32; fp16 needs a GPU")
    attention_dropout: Science[float | None] = Field(
        ge=0, lt=1, description="dropout on attention probabilities while training; null keeps the model's own "
                                "(BERT, RoBERTa: 0.1)")
    attention_kernel: Science[Literal["auto", "sdpa", "eager"]] = Field(
        description="the attention kernel the training loop runs (its dev scoring too); auto: the model's default "
                    "(PyTorch's fused sdpa where the architecture has it). eager (plain matrix products) computes the "
                    "same attention and trained 128-token batches 1.03-1.38x faster on a CPU with bf16 autocast, "
                    "384-token windows slower (benchmarks/results/attention_cpu.json). Prediction stages keep auto")
    cpu_threads: Infrastructure[int] = Field(
        ge=1, le=1024, description="torch's threads on a CPU, for training and prediction: a sum split over threads "
                                   "rounds by their number, so weights and curves repeat on another machine only "
                                   "with the number fixed here (not the machine's core count)")
    eval_every: Science[int] = Field(ge=1, description="steps between dev evaluations (and one at the last step)")
    select_metric: str = Field(description="the dev figure the kept checkpoint is chosen by (higher is better)")
    patience: Science[int] = Field(
        ge=0, description="dev evaluations without improvement before training stops; 0 = never")
    eval_batch_size: Science[int] = Field(ge=1, description="batch size of dev evaluation and prediction")


class TrainBudget(BudgetFields):
    """A params.yaml training section: the budget and the seeds it is trained under. One training run is one
    draw of the training's randomness (initial head weights, batch order, the share held out to choose the
    checkpoint); a system trained under several seeds is reported as their mean and SD beside each run, and
    ``compare`` gives it a verdict only with at least ``pipeline.common.seed_runs.MIN_SEEDS`` of them (the
    StrategyQA paper reports every accuracy over several runs). The first seed is the reference run: its model is
    ``final/``, the one the model card describes and a user loads; the others are under ``seeds/<seed>/final``."""

    seeds: Science[list[int]] = Field(
        min_length=1, max_length=MAX_SEEDS,
        description="training seeds, each a whole training run; the first one's model is final/")

    parallel_runs: Infrastructure[int] = Field(
        ge=1, le=MAX_SEEDS,
        description="seeds trained at once on a CPU, each in a process of its own with cpu_threads threads "
                    "(pipeline.launcher.parallel_seeds); a run's weights depend on its cpu_threads, never on what "
                    "trains beside it; a GPU or torchrun trains them one after another")

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int]) -> list[int]:
        bad = [s for s in seeds if not 0 <= s <= SEED_MAX]
        if bad:
            raise ValueError(f"seeds {bad} outside 0..{SEED_MAX}")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds {seeds} repeat a seed: a run twice is not two draws")
        return seeds

    @property
    def seed(self) -> int:
        """The reference run's seed (the first listed)."""
        return self.seeds[0]


class DistributedParams(StrictModel):
    """How the training stages run: in the stage's own process (``nproc_per_node: 1``, ``nnodes: 1``), or
    through ``torchrun`` on several processes/GPUs and nodes (``pipeline.launcher.torchrun``)."""

    nproc_per_node: Infrastructure[int] = Field(ge=1, le=64, description="processes on this machine: one per GPU")
    nnodes: Infrastructure[int] = Field(
        ge=1, le=1024, description="machines; the others run `python -m pipeline.launcher.join`")
    rdzv_endpoint: Infrastructure[str | None] = Field(
        description="host:port of the rendezvous (node 0) when nnodes > 1")

    @model_validator(mode="after")
    def _check_rendezvous(self) -> "DistributedParams":
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise ValueError("rdzv_endpoint: several nodes (nnodes > 1) need the host:port all of them meet at")
        if self.rdzv_endpoint and not re.fullmatch(r"[A-Za-z0-9.\-\[\]:]+:\d{1,5}", self.rdzv_endpoint):
            raise ValueError(f"rdzv_endpoint: expected host:port, got {self.rdzv_endpoint!r}")
        return self

    @property
    def launches(self) -> bool:
        """True when training leaves the stage's process for ``torchrun``."""
        return self.nproc_per_node > 1 or self.nnodes > 1
