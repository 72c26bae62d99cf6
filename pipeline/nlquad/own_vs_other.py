"""Does a span system answer *its* question? IoU with its own answer minus IoU with the other answers of the
same article.

An article's sections tile its document, so a window placed by position alone overlaps some answer of the
article whatever it was asked. What tells a reader from a position prior is that its window overlaps the answer
to the question asked more than the answers to the article's other questions: this difference is 0 in
expectation for a system that ignores the question (its window is as likely to fall on any section) and
positive for one that reads it. Scored per question on the questions whose article has at least two.
"""

from __future__ import annotations

from typing import Any

from pipeline.nlquad.metrics import iou_positions, token_offsets
from pipeline.nlquad.squad_format import iter_article_qas


def own_and_other(predictions: dict[str, dict], dataset: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``{qid: (IoU with its own answer, mean IoU with its article's other answers)}`` for every question whose
    article has another question, in file order; a missing prediction is the empty answer."""
    articles: dict[int, tuple[str, list[dict]]] = {}
    for art, para, qa in iter_article_qas(dataset):
        articles.setdefault(id(art), (para["context"], []))[1].append(qa)
    out = {}
    for ctx, qas in articles.values():
        if len(qas) < 2:
            continue
        offsets = token_offsets(ctx)
        golds = {qa["id"]: (qa["answers"][0]["answer_start"], qa["answers"][0]["answer_end"]) for qa in qas}
        for qa in qas:
            pred = predictions.get(qa["id"], {"start": 0, "end": 0})
            span = (pred["start"], pred["end"])
            own = iou_positions(ctx, span, golds[qa["id"]], offsets)
            others = [iou_positions(ctx, span, g, offsets) for qid, g in golds.items() if qid != qa["id"]]
            out[qa["id"]] = (own, sum(others) / len(others))
    return out
