"""``retrieve`` stage: StrategyQA question/decomposition BM25 retrieval -> runs and Recall@k."""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import write_json
from pipeline.search import make_backend
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.strategyqa.retrieval import mean_recall, retrieve


@flow(name="retrieve", log_prints=True)
def retrieve_flow(params_file: str = "params.yaml") -> dict:
    params = params_of(params_file)
    p = params.retrieve
    questions = load_questions(p.questions)
    decomps = load_predicted_decompositions(p.predictions) if p.decompositions == "predicted" else None
    runs = retrieve(make_backend(params.search, Path("data/index/tantivy")), questions, p.k, decomps)
    write_json("data/retrieval/runs.json", runs, indent=None)
    metrics = {
        "questions": len(questions),
        "generated_questions": sum(q.generated for q in questions),
        "backend": params.search.backend,
        "decompositions": p.decompositions,
        f"recall@{p.k}": {name: round(mean_recall(questions, run, p.k), 4) for name, run in runs.items()},
    }
    write_json("metrics/retrieval.json", metrics)
    return metrics


if __name__ == "__main__":
    sys.exit(stage_main(retrieve_flow))
