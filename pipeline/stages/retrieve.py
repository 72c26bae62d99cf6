"""``retrieve``: StrategyQA BM25 top-k by question and by decomposition steps, and Recall@k."""

from __future__ import annotations

from typing import TYPE_CHECKING


from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.search.factory import make_backend
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.common.headline import percent, write_headline
from pipeline.strategyqa.retrieval import mean_recall, retrieve

RUNS = ("question", "decomposition")  # the runs pipeline.strategyqa.retrieval.retrieve makes, in its order

if TYPE_CHECKING:
    from pipeline.params import Params


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: Recall@10 of
    each run (by question, by decomposition), so a ``search`` or ``retrieve`` experiment shows its figure in
    ``dvc metrics diff`` and ``make exps``; dvc.yaml's outs come from it (``pipeline.experiments.stage_deps``)."""
    return [("strategyqa", f"retrieve_{name}") for name in RUNS]


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
    if tuple(runs) != RUNS:  # the names dvc.yaml declares these rows by
        raise RuntimeError(f"retrieve made runs {tuple(runs)}, its headlines name {RUNS}")
    for name, run in runs.items():  # Recall@10, the paper's figure, at any k >= 10 (under 10: not measured)
        write_headline("strategyqa", f"retrieve_{name}",
                       {"R@10": percent(mean_recall(questions, run, 10)) if p.k >= 10 else None})
    return metrics
