"""Every trained system before and after a change of how the models train (precision, attention dropout), on the
same sample and the same budgets: its dev figure (the checkpoint selection set), its eval figure and where it
stands against each of its baselines (the paired difference and its interval, ``reports/compare.json``).

"Before" is a git revision's committed reports (``--before``, the last commit trained in fp32 with the model's own
attention dropout); "after" is the workspace's. A system stands where it stood when every pair that was above its
baseline (whole interval above zero) still is, and no pair that was not has fallen below it.

    .venv/bin/python -m benchmarks.precision_before_after --before <rev>
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from benchmarks._common import write_result

ROOT = Path(__file__).resolve().parents[1]
TRAINING_REPORTS = {"span_window": "reports/span_window.json", "longformer": "reports/longformer.json",
                    "boolq_aux": "reports/boolq_aux.json",
                    **{f"qa_{s}": f"reports/strategyqa_qa_{s}.json" for s in
                       ("question_only", "ir_q", "ir_d", "ir_ora_d", "ora_p", "ctl_facts", "ctl_ora_p1")},
                    **{f"mc_{v}": f"reports/quail_mc_{v}.json" for v in
                       ("full", "passage_options", "question_options", "options")}}


def _read(path: str, rev: str | None) -> dict:
    if rev is None:
        return json.loads((ROOT / path).read_text(encoding="utf-8"))
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(shown.stdout)


def _training(report: dict) -> dict:
    training = report.get("training", report)
    return {k: training.get(k) for k in ("dev_best", "precision", "attention_dropout", "final_loss", "best_step")}


def _pairs(rev: str | None) -> dict[tuple, dict]:
    return {(p["track"], p["system"], p["baseline"], p["figure"]): p for p in _read("reports/compare.json", rev)["pairs"]}


def _state(pair: dict) -> str:
    low, high = pair["ci95"]
    return "above" if low > 0 else "below" if high < 0 else "level"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the git revision trained the old way")
    args = ap.parse_args()
    before, after = _pairs(args.before), _pairs(None)
    rows, worse = [], []
    for key in sorted(before.keys() & after.keys()):
        b, a = before[key], after[key]
        row = {"track": key[0], "system": key[1], "baseline": key[2], "figure": key[3],
               "before": {"system": b["system_mean"], "difference": b["difference"], "ci95": b["ci95"],
                          "state": _state(b)},
               "after": {"system": a["system_mean"], "difference": a["difference"], "ci95": a["ci95"],
                         "state": _state(a)}}
        rows.append(row)
        if (_state(b) == "above" and _state(a) != "above") or (_state(b) != "below" and _state(a) == "below"):
            worse.append(f"{key[1]} vs {key[2]} ({key[3]}): {_state(b)} -> {_state(a)}")
    training = {}
    for system, path in TRAINING_REPORTS.items():
        try:
            training[system] = {"before": _training(_read(path, args.before)), "after": _training(_read(path, None))}
        except (subprocess.CalledProcessError, FileNotFoundError):
            continue
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    write_result("precision_before_after", {
        "before": args.before, "after": f"workspace at {head.strip()}", "pairs": rows, "training": training,
        "stands_where_it_stood": not worse, "changed_standing": worse,
    })


if __name__ == "__main__":
    main()
