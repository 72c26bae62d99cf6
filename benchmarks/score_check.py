"""Does ``python -m pipeline.experiments.score`` give each shown system its own figures from the file its stage
wrote? Every system ``compare`` scores, on every eval set, is scored again by the command from its predictions
file alone (the span, multiple-choice and yes/no stages' seeded files, the baselines' files), and set beside the
figure compare wrote for it: the two must agree (compare's per-question means are rounded to 0.01 points, so
the set's mean may differ by that), and the pair of the system with itself must be a difference of 0. A system
whose file is not a file of the eval set (the QuAIL heuristics' file holds all of dev, of which compare shows the
held-out part) is listed with the command's refusal: the command scores a file against its own set only, so a
wrong file is an error, not a figure.

    .venv/bin/python -m benchmarks.score_check      # after `dvc repro compare`; writes results/score_check.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from pipeline.common.layout import PATHS
from pipeline.experiments.score import ScoreError, figures_of, read_runs, score
from pipeline.quail.systems import HEURISTIC_BASELINES, MC_VARIANTS, mc_system
from pipeline.stages.compare import BOW, SHUFFLED, SPAN_BASELINES, SPAN_SYSTEMS
from pipeline.strategyqa.answering import SETTINGS

TOLERANCE = 0.01  # points: compare rounds each question's mean over runs to 0.01


def sources(eval_name: str) -> dict[str, tuple[Path, list[str]]]:
    """``{system: (its predictions file, the keys to descend by)}`` for the systems compare shows on the set."""
    track, _, part = eval_name.partition("/")
    if track == "nlquad":
        out = {s: (PATHS[f"predict_{'span' if s == 'span_window' else s}"].predictions, []) for s in SPAN_SYSTEMS}
        out[SHUFFLED] = (PATHS.predict_span_shuffled.predictions, [])
        return out | {b: (PATHS.nlquad_baselines.predictions / f"{b}.json", []) for b in SPAN_BASELINES}
    if track == "quail":
        base_set = "dev" if part == "dev_heldout" else part
        out = {b: (PATHS.quail_baselines.predictions, [base_set, b]) for b in HEURISTIC_BASELINES}
        return out | {mc_system(v): (PATHS.quail_mc[v].predictions, [part]) for v in MC_VARIANTS}
    out = {f"qa_{s}": (PATHS.strategyqa_qa[s].predictions, []) for s in SETTINGS}
    return out | {BOW: (PATHS.strategyqa_bow.predictions, ["eval"])}


def check(per_question: dict[str, dict]) -> list[dict[str, Any]]:
    rows = []
    for eval_name, questions in per_question.items():
        dataset = None
        if eval_name.startswith("nlquad/"):
            dataset = json.loads((PATHS.split.dir / f"{eval_name.partition('/')[2]}.json").read_text(encoding="utf-8"))
        for system, (path, keys) in sources(eval_name).items():
            row: dict[str, Any] = {"eval": eval_name, "system": system, "file": str(path), "keys": keys}
            try:
                runs = read_runs(json.loads(Path(path).read_text(encoding="utf-8")), keys)
                report = score(eval_name, runs, per_question, dataset)
            except ScoreError as exc:
                rows.append({**row, "scored": False, "why": str(exc)})
                continue
            shown = {}
            for figure in figures_of(eval_name):
                values = [rec["systems"][system][figure] for rec in questions.values()
                          if figure in rec["systems"].get(system, {})]
                if len(values) == len(questions):
                    shown[figure] = round(sum(values) / len(values), 2)
            self_pairs = [p["difference"] for p in report["pairs"] if p["against"] == system]
            agree = bool(shown) and all(abs(report["figures"][f] - v) <= TOLERANCE for f, v in shown.items())
            rows.append({**row, "scored": True, "runs": report["runs"], "questions": report["questions"],
                         "score_figures": report["figures"], "compare_figures": shown,
                         "self_differences": self_pairs, "agree": agree and all(d == 0 for d in self_pairs)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-question", type=Path, default=PATHS.compare.per_question)
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: benchmarks/results)")
    args = ap.parse_args(argv)
    rows = check(json.loads(args.per_question.read_text(encoding="utf-8")))
    scored = [r for r in rows if r["scored"]]
    summary = {"systems": len(rows), "scored": len(scored), "agree": sum(r["agree"] for r in scored),
               "not_whole_set": [f"{r['eval']} {r['system']}: {r['why']}" for r in rows if not r["scored"]],
               "tolerance_points": TOLERANCE, "rows": rows}
    write_result("score_check", summary, args.out)
    return 0 if all(r["agree"] for r in scored) else 1


if __name__ == "__main__":
    raise SystemExit(main())
