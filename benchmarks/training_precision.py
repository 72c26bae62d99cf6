"""Where a CPU training step of ``train_span`` goes, and what bf16 autocast and the attention-dropout knob
buy: the same windows, the same batches in the same order, from the same starting weights, under four
settings, alternating in one process so that the machine's state is shared:

- ``fp32`` with the model's own attention dropout (0.1): how every model trained before ``precision``;
- ``bf16`` autocast with it;
- ``fp32`` and ``bf16`` with attention dropout off (``attention_dropout: 0.0``, params.yaml's CPU setting).

Each setting trains ``--steps`` steps (AdamW, the section's schedule and clipping, as the loop trains) and
reports real (non-padding) training tokens/s over the steps alone, then its dev figures after those steps,
scored as the stage scores its dev split (``SpanDevEvaluation``), with the time that took. A profile of one
fp32 step (``torch.profiler``, the top operators by self time) says where the time goes.

The committed result is the evidence for params.yaml's ``precision: auto`` and ``attention_dropout: 0.0``;
that the systems trained so still learn at least as well is the pipeline's own before/after comparison at
the full budget (docs/benchmarks.md). Needs the pipeline's split (``dvc repro split``).

    .venv/bin/python -m benchmarks.training_precision [--steps 30]
"""

from __future__ import annotations

import argparse
import functools
import time

import torch

from benchmarks._common import write_result

SETTINGS = (("fp32", None), ("bf16", None), ("fp32", 0.0), ("bf16", 0.0))  # (precision, attention_dropout)


def _step_profile(model, batch) -> list[dict]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(**batch).loss.backward()
    model.zero_grad(set_to_none=True)
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    return [{"op": e.key, "self_share": round(e.self_cpu_time_total / total, 3)} for e in rows[:6]]


class _Captured(Exception):
    """Raised in place of training, carrying the arguments the stage's ``train`` handed the loop."""

    def __init__(self, arguments: dict):
        super().__init__("captured")
        self.arguments = arguments


@functools.lru_cache(maxsize=None)
def _stage_arguments(module: str, variant: str | None) -> dict:
    """The arguments a training stage's ``train(params, variant)`` hands the loop (``train_choice_model`` or
    the span models' ``train``), by name: its own data reading and tokenization, stopped before training
    (tokenized once for both measurements)."""
    import importlib
    import inspect
    from unittest import mock

    from pipeline.params import load_params

    stage = importlib.import_module(f"pipeline.stages.{module}")
    loop_name = "train_windows" if hasattr(stage, "train_windows") else "train_choice_model"
    loop = getattr(stage, loop_name)

    def capture(*args, **kwargs):
        raise _Captured(dict(inspect.signature(loop).bind(*args, **kwargs).arguments))

    with mock.patch.object(stage, loop_name, capture):
        try:
            stage.train(load_params(), variant) if variant is not None else stage.train(load_params())
        except _Captured as captured:
            return captured.arguments
    raise RuntimeError(f"pipeline.stages.{module}.train returned without calling {loop_name}")


def padding_shares() -> dict[str, float]:
    """Of the tokens each training stage's batches hold (every batch padded to its longest input, the loop's
    collation), the share that is padding: where grouping inputs of similar length would save work."""
    from pipeline.params import load_params
    from pipeline.training.finetune import example_order

    params = load_params()
    stages = {"train_span": ("train_span_qa", "span_window", "span_window"),
              "train_longformer": ("train_span_qa", "longformer", "longformer"),
              "train_boolq_aux": ("train_boolq_aux", None, "boolq_aux"),
              **{f"train_strategyqa_qa@{s}": ("train_strategyqa_qa", s, "strategyqa_qa")
                 for s in ("question_only", "ir_q", "ora_p")},
              **{f"train_quail_mc@{v}": ("train_quail_mc", v, "quail_mc") for v in ("full", "question_options")}}
    shares = {}
    for stage, (module, variant, section) in stages.items():
        args = _stage_arguments(module, variant)
        feats, per_row = args["feats"], args.get("choices", 1) if args.get("head") == "multiple_choice" else 1
        p = getattr(params, section)
        n = len(feats) // per_row
        order = example_order(n, p.batch_size, p.max_steps, p.seed)
        real = padded = 0
        for step in range(p.max_steps):
            rows = [i * per_row + c for i in order[step * p.batch_size:(step + 1) * p.batch_size]
                    for c in range(per_row)]
            lengths = [len(feats.input_ids[r]) for r in rows]
            real, padded = real + sum(lengths), padded + max(lengths) * len(lengths)
        shares[stage] = round(1 - real / padded, 4)
        print(stage, shares[stage], flush=True)
    return shares


STEP_STAGES = {"train_span": ("train_span_qa", "span_window"), "train_longformer": ("train_span_qa", "longformer"),
               "train_boolq_aux": ("train_boolq_aux", None),
               "train_strategyqa_qa@ir_q": ("train_strategyqa_qa", "ir_q"),
               "train_strategyqa_qa@question_only": ("train_strategyqa_qa", "question_only"),
               "train_strategyqa_qa@ctl_facts": ("train_strategyqa_qa", "ctl_facts"),
               **{f"train_quail_mc@{v}": ("train_quail_mc", v)
                  for v in ("full", "passage_options", "question_options", "options")}}


def timed_steps(model, opt, amp, batches: list) -> list[float]:
    """Seconds of each training step over ``batches`` as the loop takes it (autocast to ``amp`` where given,
    backward, clipping at 1.0, the optimizer step): the unit every step benchmark here times."""
    model.train()
    took = []
    for batch in batches:
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        took.append(time.perf_counter() - t0)
    return took


STEP_SETTINGS = (("fp32", False), ("bf16", False), ("fp32", True), ("bf16", True))  # (precision, fused AdamW)


def stage_step_seconds(steps: int, repeats: int) -> dict[str, dict]:
    """Seconds per training step of each training stage on its own first batches (its collation, model class,
    length and batch size; the section's attention dropout), fp32 against bf16 autocast, each with AdamW's
    per-parameter loop (PyTorch's default on a CPU) and with the fused AdamW the loop uses, in alternating blocks
    of ``steps`` after one warm-up step each: where bf16 pays on this processor, and what the optimizer's Python
    loop costs at short inputs and small batches."""
    import statistics

    from transformers import (AutoModelForMultipleChoice, AutoModelForQuestionAnswering,
                              AutoModelForSequenceClassification, AutoTokenizer)

    from pipeline.span_qa.train import collate
    from pipeline.training.finetune import example_order
    from pipeline.training.batches import accepts_token_types
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.numerics import pick_device, with_attention_dropout
    from pipeline.training.pair_encoding import collate_pairs

    def name(precision: str, fused: bool) -> str:
        return f"{precision}{' fused' if fused else ''}"

    out = {}
    for stage, (module, variant) in STEP_STAGES.items():
        args = _stage_arguments(module, variant)
        feats, cfg, head = args["feats"], args["cfg"], args.get("head")
        path = resolve_model_path(cfg.model_name_or_path)
        tok = AutoTokenizer.from_pretrained(path)
        per_row = args["choices"] if head == "multiple_choice" else 1
        n = len(feats) // per_row
        order = example_order(n, cfg.batch_size, steps + 1, cfg.seed)
        models, batches = {}, []
        for precision, fused in STEP_SETTINGS:
            c = cfg.model_copy(update={"precision": precision})
            kwargs = with_attention_dropout(c, {"num_labels": 2} if head == "classification" else {})
            auto = {"classification": AutoModelForSequenceClassification,
                    "multiple_choice": AutoModelForMultipleChoice}.get(head, AutoModelForQuestionAnswering)
            torch.manual_seed(cfg.seed)
            model = auto.from_pretrained(path, **kwargs)
            models[name(precision, fused)] = (
                model, torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, fused=fused or None),
                pick_device("cpu", precision)[1])
        types = accepts_token_types(models["fp32"][0])
        for step in range(steps + 1):
            idx = order[step * cfg.batch_size:(step + 1) * cfg.batch_size]
            batches.append(collate_pairs(feats, idx, tok.pad_token_id, types, args["labels"], per_row) if head else
                           collate(feats, idx, tok.pad_token_id, token_types=types, global_question=cfg.global_question))
        times: dict[str, list[float]] = {key: [] for key in models}

        def block(key: str, some: list) -> list[float]:
            return timed_steps(*models[key], some)

        for key in times:
            block(key, batches[:1])  # warm-up: first-call allocations, oneDNN kernels
        for _ in range(repeats):
            for key in times:
                times[key] += block(key, batches[1:])
        medians = {key: statistics.median(v) for key, v in times.items()}
        out[stage] = {"max_seq_len": cfg.max_seq_len, "batch_size": cfg.batch_size,
                      "attention_dropout": cfg.attention_dropout,
                      "s_per_step": {key: round(v, 3) for key, v in medians.items()},
                      "speedup_vs_fp32": {key: round(medians["fp32"] / v, 2) for key, v in medians.items()}}
        print(stage, out[stage], flush=True)
    return out


def main() -> None:
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer, get_linear_schedule_with_warmup

    from pipeline.params import load_params
    from pipeline.span_qa.train import collate
    from pipeline.stages.train_span_qa import dev_set, kind_of, windows
    from pipeline.training.finetune import TrainConfig, example_order
    from pipeline.training.numerics import cpu_has_native_bf16, pick_device, with_attention_dropout

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--stage-steps", type=int, default=4, help="steps per block of the per-stage comparison")
    ap.add_argument("--stage-repeats", type=int, default=2)
    args = ap.parse_args()
    padding = padding_shares()
    per_stage = stage_step_seconds(args.stage_steps, args.stage_repeats)
    params = load_params()
    kind = kind_of(params, "span_window")
    tok = AutoTokenizer.from_pretrained(kind.init)
    feats, _ = windows(tok, kind, "train", labelled=True)
    dev = dev_set(tok, kind)
    p = kind.p
    order = example_order(len(feats), p.batch_size, args.steps, p.seed)
    batches = [collate(feats, order[s * p.batch_size:(s + 1) * p.batch_size], tok.pad_token_id)
               for s in range(args.steps)]
    tokens = sum(int(b["attention_mask"].sum()) for b in batches)
    padded = sum(b["attention_mask"].numel() for b in batches)

    results = {}
    profile = None
    for precision, dropout in SETTINGS:
        cfg = TrainConfig.from_params(p.model_copy(update={"precision": precision, "attention_dropout": dropout,
                                                            "device": "cpu"}), kind.init)
        _, amp = pick_device("cpu", precision)
        torch.manual_seed(p.seed)
        model = AutoModelForQuestionAnswering.from_pretrained(kind.init, **with_attention_dropout(cfg, {}))
        if profile is None:  # one fp32 step with the model's own dropout, before any timing
            model.train()
            profile = _step_profile(model, batches[0])
            torch.manual_seed(p.seed)
            model = AutoModelForQuestionAnswering.from_pretrained(kind.init, **with_attention_dropout(cfg, {}))
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        sched = get_linear_schedule_with_warmup(opt, int(cfg.warmup_ratio * args.steps), args.steps)
        model.train()
        t0 = time.perf_counter()
        for batch in batches:
            with torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
                loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
        train_s = time.perf_counter() - t0
        model.eval()
        t0 = time.perf_counter()
        with torch.no_grad(), torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
            figures = dev.evaluate(model, tok)
        dev_s = time.perf_counter() - t0
        name = f"{precision}, attention dropout {'0.1 (model)' if dropout is None else dropout}"
        results[name] = {"train_tokens_per_s": round(tokens / train_s, 1), "s_per_step": round(train_s / args.steps, 3),
                         "final_loss": round(float(loss), 4), "dev_after_steps": figures, "dev_seconds": round(dev_s, 1)}
        print(name, results[name], flush=True)

    base = results["fp32, attention dropout 0.1 (model)"]["train_tokens_per_s"]
    for r in results.values():
        r["speedup_vs_fp32_model_dropout"] = round(r["train_tokens_per_s"] / base, 2)
    write_result("training_precision_cpu", {
        "stage": "train_span", "model": p.model_name_or_path, "max_seq_len": p.max_seq_len,
        "batch_size": p.batch_size, "steps": args.steps, "dev_questions": dev.size,
        "cpu_native_bf16": cpu_has_native_bf16(), "threads": torch.get_num_threads(),
        "padding_share": round(1 - tokens / padded, 4), "settings": results,
        "padding_share_by_training_stage": padding, "step_seconds_by_training_stage": per_stage,
        "fp32_step_profile_top_ops": profile,
        "note": "same batches, same starting weights, one process; tokens = non-padding tokens; dev figures after "
                f"{args.steps} steps only (the full budget's are in the training reports)",
    })


if __name__ == "__main__":
    main()
