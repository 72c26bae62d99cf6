"""``retrieve``: StrategyQA BM25 top-k by question and by decomposition steps, and Recall@k."""

from __future__ import annotations

from typing import TYPE_CHECKING


from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.search.factory import make_backend
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.common.headline import percent
from pipeline.strategyqa.retrieval import mean_recall, retrieve

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    p = params.retrieve
    questions = load_questions(p.questions)
    decomps = load_predicted_decompositions(p.predictions) if p.decompositions == "predicted" else None
    runs = retrieve(make_backend(params.search, PATHS.index.dir / "tantivy"), questions, p.k, decomps)
    write_json(PATHS.retrieve.runs, runs, indent=None)
    metrics = {
        "questions": len(questions),
        "generated_questions": sum(q.generated for q in questions),
        "backend": params.search.backend,
        "decompositions": p.decompositions,
        f"recall@{p.k}": {name: percent(mean_recall(questions, run, p.k)) for name, run in runs.items()},  # percent
    }
    write_json(PATHS.retrieve.report, metrics)
    return metrics
