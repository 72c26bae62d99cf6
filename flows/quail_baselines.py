"""``quail_baselines`` stage: random, LongChoice, PMI and IR solver on QuAIL dev and the challenge set,
accuracy per question type and domain with the paper's figures beside (reports/quail_baselines.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from flows._quail import quail_sets, skip_outputs
from pipeline.quail.heuristics import (predict_ir, predict_longchoice, predict_pmi, predict_random,
                                       unanswerable_share)
from pipeline.quail.report import accuracy_table, load_reference, markdown_tables
from pipeline.runtime import atomic_output, write_json
from pipeline.search.tantivy_backend import TantivyBackend

METRICS = "metrics/quail_baselines.json"
PREDICTIONS = "data/predictions/quail/baselines.json"
REPORT = "reports/quail_baselines.md"


def _sentence_index(path: Path) -> TantivyBackend:
    # a throwaway index per passage: the embedded backend whatever search.backend says (same analysis, BM25)
    return TantivyBackend(path, heap_bytes=15_000_000)


@flow(name="quail_baselines", log_prints=True)
def quail_baselines_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).quail
    sets, train, reason = quail_sets(p)
    if reason:
        return skip_outputs(reason, [METRICS, PREDICTIONS], [REPORT])
    share = unanswerable_share(train)
    results, predictions = {}, {}
    for name, questions in sets.items():
        preds = {
            "random": predict_random(questions, p.seed),
            "longchoice": predict_longchoice(questions, share, p.seed),
            "pmi": predict_pmi(questions, p.pmi_window, p.pmi_max_ngram),
            "ir": predict_ir(questions, _sentence_index),
        }
        predictions[name] = preds
        results[name] = {system: accuracy_table(questions, pr) for system, pr in preds.items()}
        print(name, {s: r["all"] for s, r in results[name].items()})
    write_json(PREDICTIONS, predictions, indent=None)
    reference = load_reference()
    with atomic_output(REPORT) as fh:
        fh.write(markdown_tables(results, reference, "QuAIL heuristic baselines"))
        fh.write("\nOurs: the dev set (and the challenge set); the paper's rows: its test set. "
                 f"LongChoice answers 'not enough information' with p = {share:.4f}, the unanswerable share of the "
                 "training texts (dev texts, as no train set is available offline).\n")
    transcribed = any(row for rows in reference.get("tables", {}).values() for row in rows.values())
    metrics = {"unanswerable_share_used": round(share, 4), **results,
               "paper_figures": "transcribed" if transcribed else "missing (see references/rogers2020_quail.json)"}
    write_json(METRICS, metrics)
    return metrics


if __name__ == "__main__":
    sys.exit(stage_main(quail_baselines_flow))
