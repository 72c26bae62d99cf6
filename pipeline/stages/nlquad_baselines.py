"""``nlquad_baselines``: NLQuAD's window baselines on the evaluation split -> predictions, metrics and a plot."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import atomic_output, write_json
from pipeline.params import Params
from pipeline.span_qa.baselines import run_baselines
from pipeline.span_qa.metrics import evaluate


def run(params: Params) -> dict:
    p = params.nlquad_baselines
    dataset = json.loads(Path(f"data/splits/{p.eval_split}.json").read_text(encoding="utf-8"))
    predictions = run_baselines(dataset, p.window_words, p.seed)
    results = {}
    with atomic_output("plots/nlquad_baselines_by_document_words.csv") as plot:
        plot.write("method,document_words,iou,f1\n")
        for method, preds in predictions.items():
            write_json(f"data/predictions/nlquad_baselines/{method}.json", preds, indent=None)
            summary, _ = evaluate(preds, dataset)
            results[method] = summary
            for bin_, s in summary["by_document_words"].items():
                plot.write(f"{method},{bin_},{s['iou']},{s['f1']}\n")
    write_json("metrics/nlquad_baselines.json", {"eval_split": p.eval_split, **results})
    return results
