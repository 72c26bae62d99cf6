"""Which attention kernel a CPU training step should use: PyTorch's fused ``scaled_dot_product_attention``
(``sdpa``, transformers' default) against the plain matrix products of ``eager``, on each training stage's own
first batches (its collation, model class, length, batch size, attention dropout and ``cpu_threads``), under
the loop's settings (bf16 autocast where this processor has native bf16, the fused AdamW, clipping).

Both kernels compute the same attention; only the rounding differs. What differs is speed, and not the same
way for every shape: the committed result is the evidence for params.yaml's ``attention_kernel`` per training
section (``pipeline.training.finetune.training_attention``; the GPU profile keeps the model's default). A
training step and a no-gradient pass are timed apart, since a kernel can win one and lose the other (QuAIL's
128-token inputs here). Each setting trains in alternating blocks of
``--steps`` after one warm-up step, in one process, so the machine's state is shared; the prediction figure is
one no-gradient pass over the stage's ``eval_batch_size`` inputs, the median of ``--repeats``.

Seeds trained side by side (``parallel_runs`` > 1) share the cores with each other; this measures one run
alone at its thread count. The stages' real wall time under either kernel is ``benchmarks/stage_seconds.py``'s.
Needs the pipeline's built inputs (``dvc repro`` up to the training stages).

    .venv/bin/python -m benchmarks.attention_cpu [--steps 4 --repeats 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from benchmarks._common import write_result
from benchmarks.training_precision import STEP_STAGES, _stage_arguments, timed_steps

KERNELS = ("sdpa", "eager")


def stage_kernels(stage: str, module: str, variant: str | None, steps: int, repeats: int) -> dict:
    """Seconds per training step and per prediction batch of one stage under each kernel."""
    from transformers import (AutoModelForMultipleChoice, AutoModelForQuestionAnswering,
                              AutoModelForSequenceClassification, AutoTokenizer)

    from pipeline.span_qa.train import collate
    from pipeline.training.batches import accepts_token_types
    from pipeline.training.finetune import example_order
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.numerics import pick_device, with_attention_dropout
    from pipeline.training.pair_encoding import collate_pairs

    args = _stage_arguments(module, variant)
    feats, cfg, head = args["feats"], args["cfg"], args.get("head")
    _, amp = pick_device("cpu", cfg.precision, cfg.cpu_threads)
    path = resolve_model_path(cfg.model_name_or_path)
    tok = AutoTokenizer.from_pretrained(path)
    per_row = args["choices"] if head == "multiple_choice" else 1
    auto = {"classification": AutoModelForSequenceClassification,
            "multiple_choice": AutoModelForMultipleChoice}.get(head, AutoModelForQuestionAnswering)
    models = {}
    for kernel in KERNELS:
        torch.manual_seed(cfg.seed)
        model = auto.from_pretrained(path, attn_implementation=kernel,
                                     **with_attention_dropout(cfg, {"num_labels": 2} if head == "classification" else {}))
        models[kernel] = (model, torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, fused=True))
    types = accepts_token_types(models["sdpa"][0])
    n = len(feats) // per_row

    def make(idx: list[int]) -> dict:
        return (collate_pairs(feats, idx, tok.pad_token_id, types, args["labels"], per_row) if head else
                collate(feats, idx, tok.pad_token_id, token_types=types, global_question=cfg.global_question))

    order = example_order(n, cfg.batch_size, steps + 1, cfg.seed)
    batches = [make(order[s * cfg.batch_size:(s + 1) * cfg.batch_size]) for s in range(steps + 1)]
    eval_batch = make(list(range(min(cfg.eval_batch_size, n))))
    eval_batch = {k: v for k, v in eval_batch.items() if k != "labels" and "positions" not in k}

    def train_block(kernel: str, some: list) -> list[float]:
        return timed_steps(*models[kernel], amp, some)

    @torch.no_grad()
    def predict_once(kernel: str) -> float:
        model = models[kernel][0]
        model.eval()
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
            model(**eval_batch)
        return time.perf_counter() - t0

    train_s: dict[str, list[float]] = {k: [] for k in KERNELS}
    predict_s: dict[str, list[float]] = {k: [] for k in KERNELS}
    for kernel in KERNELS:  # warm-up: first-call allocations, oneDNN kernels
        train_block(kernel, batches[:1])
        predict_once(kernel)
    for _ in range(repeats):
        for kernel in KERNELS:
            train_s[kernel] += train_block(kernel, batches[1:])
            predict_s[kernel].append(predict_once(kernel))
    step = {k: statistics.median(v) for k, v in train_s.items()}
    pred = {k: statistics.median(v) for k, v in predict_s.items()}
    return {"max_seq_len": cfg.max_seq_len, "batch_size": cfg.batch_size, "eval_batch_size": cfg.eval_batch_size,
            "cpu_threads": cfg.cpu_threads, "precision": "bf16" if amp is not None else "fp32",
            "train_s_per_step": {k: round(v, 3) for k, v in step.items()},
            "eager_train_speedup": round(step["sdpa"] / step["eager"], 2),
            "predict_s_per_batch": {k: round(v, 3) for k, v in pred.items()},
            "eager_predict_speedup": round(pred["sdpa"] / pred["eager"], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=4, help="training steps per block")
    ap.add_argument("--repeats", type=int, default=2, help="alternating blocks per kernel")
    args = ap.parse_args()
    from pipeline.training.numerics import cpu_has_native_bf16

    out = {}
    for stage, (module, variant) in STEP_STAGES.items():
        if stage == "train_longformer":
            continue  # Longformer's sliding-window attention has one implementation
        threads = torch.get_num_threads()
        out[stage] = stage_kernels(stage, module, variant, args.steps, args.repeats)
        torch.set_num_threads(threads)
        print(stage, out[stage], flush=True)
    write_result("attention_cpu", {
        "native_bf16": cpu_has_native_bf16(), "steps": args.steps, "repeats": args.repeats, "stages": out,
        "reference": "sdpa (transformers' default attention) on the same batches, in the same process",
        "note": "seconds per training step (median over alternating blocks, after a warm-up step) and per "
                "no-gradient prediction batch, each stage's own batches and cpu_threads, bf16 autocast where native"})


if __name__ == "__main__":
    main()
