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

import torch

from pipeline.common.files import give_umask_modes
from pipeline.common.logs import ProgressReport, get_logger
from pipeline.training.config import BudgetFields, TrainBudget
from pipeline.training.curves import TrainingCurves, TrainingHistory
from pipeline.training import numerics
from pipeline.training.batches import BatchMaker, accepts_token_types
from pipeline.training.model_names import resolve_model_path
from pipeline.training.numerics import (MIXED_PRECISION, pick_device, training_attention,
                                        with_attention_dropout)

FINAL_DIR = "final"  # the chosen model, under out_dir (paths.yaml names it as <stage>.model)
FINGERPRINT = "fingerprint.json"  # what a run trains on and with which code: a checkpoint of other inputs is not resumed


def reinit_head(model) -> None:
    """Draw new weights (the model's own initialisation, from the seeded RNG) for every module outside the
    encoder: starting from a fine-tuned model, the encoder is carried over and its task head's learnt label prior
    (an auxiliary BoolQ model's "yes") is not. Transformers marks every loaded tensor initialised and its
    initialisers then leave it as loaded: the mark is taken off the head's tensors first."""
    for name, child in model.named_children():
        if name != model.base_model_prefix:
            for tensor in child.parameters():
                if hasattr(tensor, "_is_hf_initialized"):
                    del tensor._is_hf_initialized
            for module in child.modules():
                model._init_weights(module)


class TrainConfig(BudgetFields):
    """What the loop needs: one run of a training budget section of params.yaml (``BudgetFields``' fields,
    validated there, not restated here) with its seed, the model to start from, and whether the question gets
    global attention (Longformer: on the question and its special tokens)."""

    seed: int
    model_name_or_path: str
    global_question: bool = False

    @classmethod
    def from_params(cls, budget: TrainBudget, model_name_or_path: str, global_question: bool = False,
                    seed: int | None = None) -> "TrainConfig":
        """The budget fields of a stage's section (which has more: decoding, lengths, its model), by name, for
        the run of ``seed`` (one of the section's seeds; default the first, the reference run)."""
        if seed is None:
            seed = budget.seed
        elif seed not in budget.seeds:
            raise ValueError(f"seed {seed} is not one of the section's seeds {budget.seeds}")
        return cls(**budget.model_dump(include=set(BudgetFields.model_fields)), seed=seed,
                   model_name_or_path=model_name_or_path, global_question=global_question)


@dataclass(frozen=True)
class DevSet:
    """How the loop scores the current weights on a dev set: ``evaluate(model, tokenizer)`` returns dev figures
    (percentages, higher is better) through the stage's own predict, post-processing and metric code, so the
    checkpoint kept is the one that is best by the figure the stage reports, not by loss."""

    evaluate: Callable[[Any, Any], dict[str, float]]
    size: int  # questions, for the log


def data_digest(*parts: Any) -> str:
    """sha256 of the training examples as the loop will see them (token ids, labels): part of a run's
    fingerprint, so a checkpoint left by a run on other data of the same size (NLQuAD with other question
    headings: the same windows, the same counts) is not resumed as if it were this run's."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, separators=(",", ":")).encode())
    return h.hexdigest()


def _code_hash(make_batch: BatchMaker) -> str:
    """This loop's source, its numerics policy's and the batch maker's module: a checkpoint from other code is not
    resumed."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(Path(numerics.__file__).read_bytes())
    source = inspect.getsourcefile(make_batch)
    if source:
        h.update(Path(source).read_bytes())
    return h.hexdigest()[:16]


def _checkpoint_agrees(ckpt: Path, max_steps: int) -> bool:
    """A checkpoint a run of ``max_steps`` may resume: named ``checkpoint-<step>``, its ``progress.json`` (if
    written: one killed while saving is skipped later) recording that step, and the step below the budget (a
    finished run keeps no checkpoint, so one at the last step was not left by this loop)."""
    _, _, name_step = ckpt.name.partition("-")
    if not name_step.isdigit():
        return False
    progress = ckpt / "progress.json"
    if not progress.exists():
        return True
    try:
        step = json.loads(progress.read_text())["step"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return type(step) is int and step == int(name_step) and 0 < step < max_steps


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

    device, amp_dtype = pick_device(cfg.device, cfg.precision, cfg.cpu_threads)
    # the precision is a per-run choice: forget the previous run's in this process (tests, notebooks);
    # the process group of a torchrun launch (PartialState) is kept
    AcceleratorState._reset_state(reset_partial_state=False)
    return Accelerator(cpu=device.type == "cpu", mixed_precision=MIXED_PRECISION[amp_dtype],
                       dataloader_config=DataLoaderConfiguration(split_batches=True)), amp_dtype


def _save_checkpoint(accelerator, out_dir: Path, step: int, history: TrainingHistory) -> None:
    ckpt = out_dir / f"checkpoint-{step}"
    accelerator.save_state(str(ckpt))  # every process writes its RNG state; rank 0 the rest
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        # written last: a checkpoint counts only once complete (JSON, so resuming unpickles nothing of ours)
        tmp = ckpt / "progress.json.tmp"
        tmp.write_text(json.dumps({"step": step, **history.to_json()}))
        tmp.replace(ckpt / "progress.json")
        for old in out_dir.glob("checkpoint-*"):
            if old != ckpt:
                shutil.rmtree(old)
        _prune_best(out_dir, history.best_step)
    accelerator.wait_for_everyone()


def _best_dir(out_dir: Path, step: int) -> Path:
    return out_dir / f"best-{step}"


def _prune_best(out_dir: Path, keep: int | None) -> None:
    """Only the best weights the newest checkpoint records are kept. A run killed after saving a newer best
    but before its next checkpoint leaves that one behind; resuming replays those steps and makes it again."""
    for d in out_dir.glob("best-*"):
        if keep is None or d != _best_dir(out_dir, keep):
            shutil.rmtree(d)


def _save_best(model, tokenizer, out_dir: Path, step: int) -> None:
    target, partial = _best_dir(out_dir, step), out_dir / ".best.partial"
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def _save_final(write: Callable[[Path], None], out_dir: Path) -> None:
    """The new model is written whole under a temporary name before the old one goes: a kill at any point
    leaves a complete model in final/ (old or new) or, between the two renames, in .final.old/, which the
    next run puts back first. ``write(folder)`` puts the model and tokenizer there."""
    final, partial, old = out_dir / FINAL_DIR, out_dir / f".{FINAL_DIR}.partial", out_dir / f".{FINAL_DIR}.old"
    if old.exists() and not final.exists():
        old.rename(final)
    shutil.rmtree(partial, ignore_errors=True)
    write(partial)
    give_umask_modes(partial)
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    partial.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    for ckpt in [*out_dir.glob("checkpoint-*"), *out_dir.glob("best-*")]:  # finished: nothing left to resume
        shutil.rmtree(ckpt)
    # ... nor to check a resume against: a finished seed's folder is a DVC output (seeds/<seed>), and the
    # fingerprint holds the training code's hash, so it would tie the output's bytes to the code's text
    (out_dir / FINGERPRINT).unlink(missing_ok=True)


@torch.no_grad()
def _evaluate_dev(accelerator, model, tokenizer, dev: DevSet) -> dict[str, float]:
    """Dev figures of the current weights, on the main process (the others wait for its decision)."""
    inner = accelerator.unwrap_model(model)
    inner.eval()
    try:
        with accelerator.autocast():
            return {k: float(v) for k, v in dev.evaluate(inner, tokenizer).items()}
    finally:
        inner.train()


def fine_tune(auto_class: Any, n_examples: int, make_batch: BatchMaker, cfg: TrainConfig, out_dir: Path,
              fingerprint: dict[str, Any], model_kwargs: dict[str, Any] | None = None, dev: DevSet | None = None,
              log_dir: Path | None = None, fresh_head: bool = False) -> dict[str, Any]:
    """Train ``auto_class.from_pretrained(cfg.model_name_or_path)`` on ``n_examples`` examples, batches made
    by ``make_batch``; checkpoint into ``out_dir`` and resume when a checkpoint of the same ``fingerprint``
    (and the same training code) exists. ``final/`` holds the model and tokenizer. Under ``torchrun`` every
    process calls this; rank 0 alone writes files other than its own RNG state.

    With ``dev``, the weights are scored on it every ``cfg.eval_every`` steps and at the last step; ``final/``
    then holds the best by ``cfg.select_metric`` (ties: the earlier step), as Hugging Face's Trainer does with
    ``load_best_model_at_end``, and training stops after ``cfg.patience`` evaluations without improvement.
    ``log_dir``: a DVCLive log of the run (loss and learning rate per step, dev figures per evaluation), the
    same after a resume as after an uninterrupted run.

    Checkpoints (and the fingerprint they are resumed by) exist only while a run is unfinished: a completed run
    removes them, so running again (DVC reruns a stage whose code or inputs changed) always trains from the
    start, and what a finished run leaves is ``final/`` alone."""
    run = FineTuning(auto_class, n_examples, make_batch, cfg, out_dir, fingerprint, model_kwargs, dev, log_dir,
                     fresh_head)
    run.train()
    return run.finish()


class FineTuning:
    """One run of the loop, in the phases Hugging Face's ``Trainer`` names: set up (here: the model, optimizer,
    schedule and data, resumed from the last checkpoint), :meth:`train` (the steps), :meth:`evaluate` (the dev
    set every ``eval_every`` steps and at the last), :meth:`save_checkpoint` (every ``checkpoint_every``), and
    :meth:`finish` (``final/`` and the statistics). Each phase does what its name says and nothing else, so a
    reader finds "evaluate every N steps" under :meth:`should_evaluate`."""

    def __init__(self, auto_class: Any, n_examples: int, make_batch: BatchMaker, cfg: TrainConfig, out_dir: Path,
                 fingerprint: dict[str, Any], model_kwargs: dict[str, Any] | None = None,
                 dev: DevSet | None = None, log_dir: Path | None = None, fresh_head: bool = False):
        from accelerate.utils import set_seed
        from transformers import AutoTokenizer, get_linear_schedule_with_warmup

        if n_examples == 0:
            raise ValueError("nothing to train on: 0 training examples")
        self.cfg, self.out_dir, self.dev, self.log = cfg, out_dir, dev, get_logger()
        self.accelerator, self.amp_dtype = _accelerator(cfg)
        if cfg.batch_size % self.accelerator.num_processes:
            raise ValueError(f"batch_size {cfg.batch_size} is the global batch and must divide evenly among "
                             f"{self.accelerator.num_processes} processes")
        self.main = self.accelerator.is_main_process
        self._start_afresh_unless(fingerprint, make_batch)

        set_seed(cfg.seed)  # python, numpy, torch and every CUDA device
        self.tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(cfg.model_name_or_path))
        self.resume = _latest_checkpoint(out_dir)
        model = auto_class.from_pretrained(resolve_model_path(cfg.model_name_or_path),
                                           **with_attention_dropout(cfg, model_kwargs or {}),
                                           **training_attention(cfg))
        if fresh_head:
            reinit_head(model)
        no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
        groups = [
            {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
             "weight_decay": cfg.weight_decay},
            {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
        ]
        # fused: one kernel over every parameter instead of a Python loop of small tensor ops per parameter; on two
        # CPU cores the per-parameter loop was 6-44% of a 128-token fp32 step (benchmarks/results/
        # training_precision_cpu.json), and on a GPU it is what Trainer's default (adamw_torch_fused) runs
        optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate, fused=True)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * cfg.max_steps), cfg.max_steps)
        self.step, self.history = 0, TrainingHistory()  # saved in checkpoints: a resumed run reports and logs the same
        if self.resume is not None:
            progress_state = json.loads((self.resume / "progress.json").read_text())
            self.step, self.history = int(progress_state["step"]), TrainingHistory.from_json(progress_state)
        if self.main:
            _prune_best(out_dir, self.history.best_step)
        if dev is not None and dev.size == 0:
            raise ValueError("the dev set for checkpoint selection is empty")
        self.curves = (TrainingCurves(log_dir, self.history, cfg.select_metric)
                       if self.main and log_dir is not None else None)
        types = accepts_token_types(model)
        order = example_order(n_examples, cfg.batch_size, cfg.max_steps, cfg.seed)
        # a generator of its own: starting an iterator would otherwise draw from the global RNG, and the dropout
        # masks after a resume would differ from an uninterrupted run's
        tokenizer = self.tokenizer
        loader = torch.utils.data.DataLoader(
            range(n_examples), collate_fn=lambda idx: make_batch(idx, tokenizer, types),
            batch_sampler=FixedOrderBatches(order, cfg.batch_size, self.step, cfg.max_steps),
            generator=torch.Generator().manual_seed(cfg.seed))
        self.model, self.optimizer, self.scheduler, self.loader = self.accelerator.prepare(
            model, optimizer, scheduler, loader)
        if self.resume is not None:
            # weights, optimizer, scheduler, scaler and RNG states; tensors and plain values only (no pickled code)
            self.accelerator.load_state(str(self.resume))
            self.log.info("resumed from %s (step %d of %d)", self.resume, self.step, cfg.max_steps)
        self.tokens, self.elapsed = 0, 0.0
        self.stopped_early = self.history.stopped_early(cfg.patience)

    def _start_afresh_unless(self, fingerprint: dict[str, Any], make_batch: BatchMaker) -> None:
        """Only this run's own checkpoints are resumed: every checkpoint goes when no fingerprint stands beside
        them (one copied in, pulled or pushed by someone else) or when it is of other inputs or training code,
        and so does each whose recorded step is not below the budget or disagrees with its name."""
        fingerprint = {**fingerprint, "training_code": _code_hash(make_batch)}
        fp_path = self.out_dir / FINGERPRINT
        if self.main:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            try:
                recorded = json.loads(fp_path.read_text()) if fp_path.is_file() else None
            except (OSError, ValueError):
                recorded = None
            checkpoints = list(self.out_dir.glob("checkpoint-*"))
            if recorded != fingerprint and checkpoints:
                self.log.info("checkpoints without this run's fingerprint (%s): starting afresh",
                              "none beside them" if recorded is None else "other inputs or code")
                for c in checkpoints:
                    shutil.rmtree(c, ignore_errors=True)
            for c in self.out_dir.glob("checkpoint-*"):
                if not _checkpoint_agrees(c, self.cfg.max_steps):
                    self.log.info("%s: its recorded step is not its name's or not below %d: removed", c.name,
                                  self.cfg.max_steps)
                    shutil.rmtree(c, ignore_errors=True)
            fp_path.write_text(json.dumps(fingerprint, sort_keys=True, indent=1))
        self.accelerator.wait_for_everyone()

    def train(self) -> None:
        """The steps from the resumed one to ``max_steps`` (or an early stop), each followed by its log line,
        a dev evaluation and a checkpoint where they fall due."""
        cfg = self.cfg
        self.model.train()
        t0 = time.perf_counter()
        report = ProgressReport("train", total=cfg.max_steps, unit="steps") if self.main else None
        if report is not None:
            report.n = self.step
        if self.dev is not None and self.main and self.step == 0:
            self.log.info("dev set: %d questions, scored every %d steps by %s", self.dev.size, cfg.eval_every,
                          cfg.select_metric)
        for batch in ([] if self.stopped_early else self.loader):
            lr = self.training_step(batch)
            if self.curves is not None:
                self.curves.log_step(self.step, self.history)
            if self.main and (self.step % 10 == 0 or self.step == cfg.max_steps):
                self.log.info("step %d/%d loss %.4f lr %.2e", self.step, cfg.max_steps, self.history.recent_loss(), lr)
            if report is not None:
                report.set(self.step)  # a line with rate and time left every QA_PIPELINE_PROGRESS_EVERY_S seconds
            if self.should_evaluate():
                self.evaluate()
            if self.should_checkpoint():
                self.save_checkpoint()
            if self.stopped_early:
                if self.main:
                    self.log.info("stopping early at step %d: %d dev evaluations without improvement on %s",
                                  self.step, cfg.patience, cfg.select_metric)
                break
        self.elapsed = time.perf_counter() - t0

    def training_step(self, batch: dict[str, torch.Tensor]) -> float:
        """Forward, backward, clip, optimizer and schedule; the loss and real tokens recorded. Returns the
        learning rate the step was taken with."""
        accelerator = self.accelerator
        loss = self.model(**batch).loss  # autocast, when mixed precision is on, is part of the prepared model
        accelerator.backward(loss)  # scaled under fp16; DDP averages gradients across processes
        accelerator.clip_grad_norm_(self.model.parameters(), 1.0)  # on the unscaled gradients
        lr = float(self.scheduler.get_last_lr()[0])  # the rate this step was taken with
        self.optimizer.step()  # skipped when fp16 gradients overflowed (the scheduler then waits too)
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        self.tokens += int(accelerator.reduce(batch["attention_mask"].sum(), "sum"))
        self.history.add_step(float(accelerator.reduce(loss.detach().float(), "mean")), lr)
        return lr

    def should_evaluate(self) -> bool:
        """Every ``eval_every`` steps and at the last, when there is a dev set."""
        return self.dev is not None and (self.step % self.cfg.eval_every == 0 or self.step == self.cfg.max_steps)

    def evaluate(self) -> None:
        """Score the weights on the dev set (main process), keep them if best so far, and decide (for every
        process) whether ``patience`` evaluations without improvement end the run."""
        from accelerate.utils import broadcast_object_list

        assert self.dev is not None
        cfg, history = self.cfg, self.history
        decision = [False]
        if self.main:
            figures = _evaluate_dev(self.accelerator, self.model, self.tokenizer, self.dev)
            improved = history.add_eval(self.step, figures, cfg.select_metric)
            if improved:
                _save_best(self.accelerator.unwrap_model(self.model), self.tokenizer, self.out_dir, self.step)
            if self.curves is not None:
                self.curves.log_eval(self.step, history)
            self.log.info("step %d dev %s%s", self.step, " ".join(f"{k} {v:.2f}" for k, v in figures.items()),
                          " (best so far)" if improved
                          else f" (best {history.best_value:.2f} at step {history.best_step})")
            decision = [history.stopped_early(cfg.patience)]
        self.stopped_early = bool(broadcast_object_list(decision)[0])

    def should_checkpoint(self) -> bool:
        """Every ``checkpoint_every`` steps, at the last, and when stopping early."""
        return self.step % self.cfg.checkpoint_every == 0 or self.step == self.cfg.max_steps or self.stopped_early

    def save_checkpoint(self) -> None:
        _save_checkpoint(self.accelerator, self.out_dir, self.step, self.history)

    def finish(self) -> dict[str, Any]:
        """``final/``: the best dev checkpoint (or the last weights without a dev set); the run's statistics."""
        accelerator, cfg, history = self.accelerator, self.cfg, self.history
        if self.main:
            if self.dev is not None and history.best_step is not None:
                best = _best_dir(self.out_dir, history.best_step)
                _save_final(lambda target: shutil.copytree(best, target), self.out_dir)
            else:
                unwrapped, tokenizer = accelerator.unwrap_model(self.model), self.tokenizer
                _save_final(lambda target: (unwrapped.save_pretrained(target), tokenizer.save_pretrained(target)),
                            self.out_dir)
            if self.curves is not None:
                self.curves.close(history)
        accelerator.wait_for_everyone()
        device = accelerator.device
        return {
            "steps": self.step, "max_steps": cfg.max_steps,
            "resumed_from_step": int(self.resume.name.split("-")[1]) if self.resume else 0,
            "final_loss": round(history.recent_loss(), 4) if history.losses else None,
            **history.selection_summary(cfg.select_metric, cfg.patience),
            "device": "cpu" if device.type == "cpu" else torch.cuda.get_device_name(0),
            "precision": "fp32" if self.amp_dtype is None else str(self.amp_dtype).removeprefix("torch."),
            "attention_dropout": "model's own" if cfg.attention_dropout is None else cfg.attention_dropout,
            "attention_kernel": cfg.attention_kernel,
            "cpu_threads": torch.get_num_threads() if device.type == "cpu" else None,
            "processes": accelerator.num_processes,
            "tokens_per_s_this_run": round(self.tokens / self.elapsed, 1) if self.elapsed > 0 and self.tokens else None,
        }
