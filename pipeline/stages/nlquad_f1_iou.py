"""``nlquad_f1_iou``: the NLQuAD paper's metric finding as a result of its own, for the span models and the
null systems (the window baselines and the position prior) on the eval split: per question F1 against IoU (a
plot), the share at IoU 0 with its F1 range, and the F1-IoU gap by answer length
(``pipeline.nlquad.f1_against_iou``). A seeded model's figures are the mean over its runs; the plot shows its
reference run (the first seed)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.safe_text import write_plot_csv
from pipeline.common.seed_runs import mean_over_runs, runs_of
from pipeline.nlquad.f1_against_iou import finding
from pipeline.nlquad.metrics import evaluate

if TYPE_CHECKING:
    from pipeline.params import Params

MODELS = ("span_window", "longformer")
NULLS = ("first_window", "last_window", "random_window", "position_prior", "bm25l", "bm25l_oracle")


def run(params: Params) -> dict:
    split = params.nlquad_baselines.eval_split
    dataset = json.loads((PATHS.split.dir / f"{split}.json").read_text(encoding="utf-8"))
    files = {"span_window": PATHS.predict_span.predictions, "longformer": PATHS.predict_longformer.predictions}
    per_run = {m: list(runs_of(json.loads(files[m].read_text(encoding="utf-8"))).values()) for m in MODELS}
    per_run |= {b: [json.loads((PATHS.nlquad_baselines.predictions / f"{b}.json").read_text(encoding="utf-8"))]
                for b in NULLS}
    systems, plotted = {}, []
    for name, runs in per_run.items():
        rows = [evaluate(preds, dataset)[1] for preds in runs]
        findings = [finding(r) for r in rows]
        # the by-length list averaged bin by bin (mean_over_runs keeps a list as the first run's); every run
        # answers the same questions, so the bins are the same
        by_length = [mean_over_runs(list(group)) for group in zip(*(f["f1_minus_iou_by_answer_words"]
                                                                     for f in findings), strict=True)]
        systems[name] = {**mean_over_runs(findings), "f1_minus_iou_by_answer_words": by_length, "runs": len(rows)}
        plotted += [[name, r["id"], f"{100 * r['f1']:.2f}", f"{100 * r['iou']:.2f}", r["answer_words"]]
                    for r in rows[0]]
    write_plot_csv(PATHS.nlquad_f1_iou.plot, ("system", "id", "f1", "iou", "answer_words"), plotted)
    report = {"eval_split": split, "paper": "Soleimani et al. 2021, sec. 4 and Fig. 4: F1 overstates long answers; "
                                            "IoU is the primary measure", "systems": systems}
    write_json(PATHS.nlquad_f1_iou.report, report)
    return {name: s["f1_at_least_iou_percent"] for name, s in systems.items()}
