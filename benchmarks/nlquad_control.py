"""The NLQuAD positive control's verdicts: the span model on the section-naming sample against the position prior,
the random window, BM25L and its shuffled-question control, on the test articles, as ``compare`` reads them.

Run in a checkout whose params set ``sample.question_headings: name_section`` (every question names the subject of
the section that answers it, so a reader can find its answer) after ``dvc repro evaluate_span nlquad_baselines
predict_span_shuffled``::

    python -m benchmarks.nlquad_control --out <file>.json

It writes ``compare``'s pairs for the sliding-window model alone (``pipeline.stages.compare.nlquad_pairs`` with
the Holm correction of ``with_verdicts``), the params that differ from the project's defaults, and the digests
of the predictions it read, so the figures can be traced to the runs that made them.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
from pathlib import Path

import yaml

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.params import load_params
from pipeline.stages.compare import nlquad_pairs, with_verdicts

KEPT = ("eval", "system", "baseline", "figure", "system_mean", "baseline_mean", "difference", "ci95", "p_holm",
        "family_size", "seed_t", "verdict", "seeds", "questions", "units", "own_iou", "other_iou")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    params = load_params()
    if params.sample.question_headings != "name_section":
        raise SystemExit(f"sample.question_headings is {params.sample.question_headings!r}: the control needs "
                         "name_section")
    pairs = with_verdicts(nlquad_pairs(params.nlquad_baselines.eval_split, systems=("span_window",)))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(["git", "diff", "--", "params.yaml"], capture_output=True, text=True).stdout
    read = [PATHS.predict_span.predictions, PATHS.predict_span_shuffled.predictions,
            *sorted(PATHS.nlquad_baselines.predictions.glob("*.json"))]
    write_json(args.out, {
        "what": "the NLQuAD positive control: the span model on the section-naming sample, test articles",
        "commit": commit, "params_diff": changed.splitlines(),
        "span_window": {k: v for k, v in params.span_window.model_dump().items()
                        if k in ("max_seq_len", "doc_stride", "batch_size", "learning_rate", "max_steps", "seeds",
                                 "answer_windows", "aggregation", "select_metric", "precision")},
        "predictions_sha256": {str(p): _sha256(p) for p in read},
        "pairs": [{k: p.get(k) for k in KEPT} for p in pairs],
    })
    for p in pairs:
        if p["figure"] in ("IoU", "IoU own-other"):
            print(f"{p['system']} - {p['baseline']} {p['figure']}: {p['difference']:+.2f} "
                  f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['verdict']}")


if __name__ == "__main__":
    main()
