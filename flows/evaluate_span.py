"""``evaluate_span`` stage: EM/F1/IoU/ROUGE of the model's predictions, with per-example and length plots."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import atomic_output, write_json
from pipeline.span_qa.metrics import evaluate


@flow(name="evaluate_span", log_prints=True)
def evaluate_span_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).train
    dataset = json.loads(Path(f"data/splits/{p.eval_split}.json").read_text(encoding="utf-8"))
    preds = json.loads(Path("data/predictions/span_window.json").read_text(encoding="utf-8"))
    summary, rows = evaluate(preds, dataset)
    write_json("metrics/span_window.json", {"eval_split": p.eval_split, **summary})
    with atomic_output("plots/span_f1_vs_iou.csv") as fh:
        fh.write("id,f1,iou\n")
        for r in rows:
            fh.write(f"{r['id']},{r['f1']:.4f},{r['iou']:.4f}\n")
    with atomic_output("plots/span_by_document_words.csv") as fh:
        fh.write("document_words,em,f1,iou,n\n")
        for bin_, s in summary["by_document_words"].items():
            fh.write(f"{bin_},{s['em']},{s['f1']},{s['iou']},{s['n']}\n")
    return summary


if __name__ == "__main__":
    sys.exit(stage_main(evaluate_span_flow))
