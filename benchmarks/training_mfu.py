"""How near the processor's limit each trained family trains: a training step's achieved FLOP/s against a
matrix-multiply peak measured in the same run, on the processor at hand.

For each training stage's own first batches (``training_precision._stage_arguments``: its data reading,
tokenization and collation, stopped before training) one step is counted with ``torch.utils.flop_counter``
(forward and backward, every matrix product and attention kernel torch reports) and ``--steps`` steps are timed as
the loop takes them (``training_precision.timed_steps``) in the precision ``precision: auto`` gives here (bf16
autocast where the processor computes bfloat16 natively, fp32 elsewhere), with the section's ``cpu_threads``.
The peak is the best of square matrix products (1024, 2048, 4096) in that dtype on the same threads: what
this processor's BLAS reaches on the kernel a training step is made of. The ratio (model FLOP utilisation)
says what is left to gain from the training loop, as against what only fewer steps or a GPU would buy.

    .venv/bin/python -m benchmarks.training_mfu [--steps 4]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from benchmarks._common import write_result
from benchmarks.training_precision import STEP_STAGES, _stage_arguments, timed_steps

SIZES = (1024, 2048, 4096)


def matmul_peak(dtype: torch.dtype, repeats: int = 5) -> dict:
    """The best FLOP/s of ``2 n^3`` over square products in ``dtype``, each size warmed up once."""
    best = {}
    for n in SIZES:
        a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
        torch.matmul(a, b)
        took = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            torch.matmul(a, b)
            took.append(time.perf_counter() - t0)
        best[n] = 2 * n ** 3 / min(took)
    return {"flops_per_s": max(best.values()), "by_size": {str(n): round(v / 1e9, 2) for n, v in best.items()},
            "dtype": str(dtype).removeprefix("torch.")}


def step_flops(model, batch, amp) -> int:
    """FLOPs of one training step's forward and backward, as torch's flop counter reports them."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter, torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
        loss = model(**batch).loss
    with counter:
        loss.backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


def family_steps(steps: int) -> dict[str, dict]:
    from transformers import (AutoModelForMultipleChoice, AutoModelForQuestionAnswering,
                              AutoModelForSequenceClassification, AutoTokenizer)

    from pipeline.span_qa.train import collate
    from pipeline.training.finetune import example_order
    from pipeline.training.batches import accepts_token_types
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.numerics import pick_device, with_attention_dropout
    from pipeline.training.pair_encoding import collate_pairs

    out = {}
    for stage, (module, variant) in STEP_STAGES.items():
        args = _stage_arguments(module, variant)
        feats, cfg, head = args["feats"], args["cfg"], args.get("head")
        _, amp = pick_device("cpu", cfg.precision, cfg.cpu_threads)
        path = resolve_model_path(cfg.model_name_or_path)
        tok = AutoTokenizer.from_pretrained(path)
        auto = {"classification": AutoModelForSequenceClassification,
                "multiple_choice": AutoModelForMultipleChoice}.get(head, AutoModelForQuestionAnswering)
        torch.manual_seed(cfg.seed)
        model = auto.from_pretrained(path, **with_attention_dropout(cfg, {"num_labels": 2} if head == "classification"
                                                                     else {}))
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, fused=True)
        per_row = args["choices"] if head == "multiple_choice" else 1
        order = example_order(len(feats) // per_row, cfg.batch_size, steps + 1, cfg.seed)
        types = accepts_token_types(model)
        batches = []
        for step in range(steps + 1):
            idx = order[step * cfg.batch_size:(step + 1) * cfg.batch_size]
            batches.append(collate_pairs(feats, idx, tok.pad_token_id, types, args["labels"], per_row) if head else
                           collate(feats, idx, tok.pad_token_id, token_types=types,
                                   global_question=cfg.global_question))
        model.train()
        flops = statistics.median(step_flops(model, b, amp) for b in batches[1:])
        timed_steps(model, opt, amp, batches[:1])  # warm-up
        seconds = statistics.median(timed_steps(model, opt, amp, batches[1:]))
        out[stage] = {"precision": "bf16" if amp is not None else "fp32", "batch_size": cfg.batch_size,
                      "max_seq_len": cfg.max_seq_len, "cpu_threads": cfg.cpu_threads,
                      "gflop_per_step": round(flops / 1e9, 2), "s_per_step": round(seconds, 3),
                      "achieved_gflops_per_s": round(flops / seconds / 1e9, 2)}
        print(stage, out[stage], flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    from pipeline.params import load_params
    from pipeline.training.numerics import cpu_has_native_bf16

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4, help="timed steps per stage, after one warm-up step")
    args = ap.parse_args(argv)
    threads = load_params().span_window.cpu_threads
    torch.set_num_threads(threads)
    native = cpu_has_native_bf16()
    per_stage = family_steps(args.steps)
    peaks = {"fp32": matmul_peak(torch.float32)}
    if native:
        peaks["bf16"] = matmul_peak(torch.bfloat16)
    for row in per_stage.values():
        peak = peaks[row["precision"]]["flops_per_s"]
        row["matmul_peak_gflops_per_s"] = round(peak / 1e9, 2)
        row["mfu"] = round(row["achieved_gflops_per_s"] * 1e9 / peak, 3)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo", encoding="utf-8")
                if line.startswith("model name")), None)
    write_result("training_mfu", {
        "what": "one training step per trained family: FLOPs (torch.utils.flop_counter, forward and backward), "
                "seconds (median of the timed steps, fused AdamW, precision as `auto` takes it here) and their "
                "ratio to the best square matrix product in the same dtype on the same threads",
        "cpu": {"model": cpu, "native_bf16": native, "threads": threads},
        "peaks_gflops_per_s": {k: {"best": round(v["flops_per_s"] / 1e9, 2), "by_size": v["by_size"]}
                               for k, v in peaks.items()},
        "stages": per_stage})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
