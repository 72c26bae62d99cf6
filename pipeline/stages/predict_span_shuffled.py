"""``predict_span_shuffled``: the sliding-window model's answers when each eval question is replaced by another
question of the same article, the control that tells reading the question from knowing where answers lie.

A model that ignores its question answers the same with any question, so its IoU against the original gold
comes out level with its IoU here; a model that reads it loses the answer it was asked for. The question asked
is the next one of its article (in file order, the last takes the first); an article with one question takes
the first question of the next article (a question about other text, the same document). Each trained run
(seed) predicts as ``predict_span`` does, the answers filed under the original question's id.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.seed_runs import seeded_predictions
from pipeline.launcher.parallel_seeds import predict_each_seed
from pipeline.nlquad.squad_format import iter_article_qas
from pipeline.span_qa.data import load_examples
from pipeline.stages.predict_span_qa import answer
from pipeline.stages.train_span_qa import kind_of
from pipeline.training.finetune import FINAL_DIR

if TYPE_CHECKING:
    from pipeline.params import Params


def shuffled_questions(dataset: dict[str, Any]) -> dict[str, str]:
    """Question id -> the text of the question asked in its place: the next question of its article, or for an
    article with one question the first question of the next article (wrapping round). Deterministic from the
    file's order; no question keeps its own text unless the whole set has a single question."""
    articles: dict[int, list[dict]] = {}
    for art, _, qa in iter_article_qas(dataset):
        articles.setdefault(id(art), []).append(qa)
    groups = list(articles.values())
    out = {}
    for i, qas in enumerate(groups):
        if len(qas) > 1:
            for j, qa in enumerate(qas):
                out[qa["id"]] = qas[(j + 1) % len(qas)]["question"]
        else:
            out[qas[0]["id"]] = groups[(i + 1) % len(groups)][0]["question"]
    return out


def predict(params: Params, name: str, seed: int) -> dict:
    """One run's answers with every question swapped (:func:`shuffled_questions`)."""
    kind = kind_of(params, name)
    ex, dataset = load_examples(PATHS.split.dir / f"{kind.p.eval_split}.json")
    swap = shuffled_questions(dataset)
    return answer(kind, kind.run_dir(seed) / FINAL_DIR, ex, [swap[i] for i in ex.ids])


def run(params: Params, name: str) -> dict:
    p = kind_of(params, name).p
    every = predict_each_seed(predict, params, name, p)
    runs = {seed: out["answers"] for seed, out in zip(p.seeds, every, strict=True)}
    write_json(PATHS.predict_span_shuffled.predictions, seeded_predictions(p.seeds, runs), indent=None)
    dataset = json.loads((PATHS.split.dir / f"{p.eval_split}.json").read_text(encoding="utf-8"))
    per_article = Counter(id(art) for art, _, _ in iter_article_qas(dataset))
    return {"questions": len(runs[p.seed]), "runs": len(runs),
            "asked_another_articles_question": sum(n == 1 for n in per_article.values())}
