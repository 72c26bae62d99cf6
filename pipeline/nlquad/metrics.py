"""NLQuAD evaluation: EM, F1, IoU, ROUGE, with breakdowns by answer and document length.

- EM and F1: SQuAD's answer normalisation (lowercase, no punctuation, no articles, single spaces) and
  token-bag F1.
- IoU (the paper's definition): intersection over union of the *positions* of the predicted and gold spans
  in the document, counted in whitespace tokens. Unlike F1 it cannot be earned by predicting words that
  also occur in the answer elsewhere in the document (F1 > 0 with IoU = 0 is possible, as in the paper's
  Figure 5).
- ``iou_script``: exactly the procedure of the authors' ``Evaluation_Metrics/evaluation_metrics.py``
  (ASoleimaniB/NLQuAD), which produced the paper's IoU figures: context, gold and prediction are each
  ``nltk.word_tokenize``d, joined by spaces and lower-cased (punctuation and clitics are tokens); a span is
  found by text search, from the start of its first occurrence to the end of its last; the intersection and
  the union (from the lowest to the highest character either span covers) are re-tokenised and counted;
  two empty spans score 1; a score of 0 is retried once with the prediction's last 5 characters cut off.
  It differs from ``iou`` where a text repeats in the document, where tokenisation differs from whitespace,
  and through the retry; both are reported so the difference is visible.
- ROUGE-1/2/L F-measure from ``rouge-score`` (no stemming, its default tokenizer).
"""

from __future__ import annotations

import collections
import re
import statistics
import string
from typing import Any

from nltk.tokenize import word_tokenize
from rouge_score import rouge_scorer

from pipeline.nlquad.squad_format import iter_examples
from pipeline.nlquad.punkt_data import ensure as ensure_punkt_data

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)
_TOKEN = re.compile(r"\S+")


def normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not p or not g:
        return float(p == g)
    common = collections.Counter(p) & collections.Counter(g)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(p), overlap / len(g)
    return 2 * precision * recall / (precision + recall)


def token_offsets(context: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(context)]


def token_positions(offsets: list[tuple[int, int]], start: int, end: int) -> set[int]:
    """Indices of the whitespace tokens that overlap the character span [start, end)."""
    if end <= start:
        return set()
    return {i for i, (s, e) in enumerate(offsets) if s < end and e > start}


def iou(pred: set[int], gold: set[int]) -> float:
    if not pred and not gold:
        return 1.0
    union = pred | gold
    return len(pred & gold) / len(union) if union else 0.0


def iou_positions(context: str, pred_span: tuple[int, int], gold_span: tuple[int, int],
                  offsets: list[tuple[int, int]] | None = None) -> float:
    offsets = offsets if offsets is not None else token_offsets(context)
    return iou(token_positions(offsets, *pred_span), token_positions(offsets, *gold_span))


def _script_tokens(text: str) -> str:
    return " ".join(word_tokenize(text)).lower()


def _script_interval(text: str, piece: str) -> tuple[int, int] | None:
    """The script's span: from the first occurrence's start to the last occurrence's end (characters)."""
    if piece == "":
        return None
    start = text.find(piece)
    if start == -1:
        return None
    return start, len(text) - text[::-1].find(piece[::-1])


def _script_jaccard(text: str, gold: str, prediction: str) -> float:
    pred_iv = _script_interval(text, _script_tokens(prediction))
    gold_iv = _script_interval(text, _script_tokens(gold))
    inter = ""
    if pred_iv and gold_iv and max(pred_iv[0], gold_iv[0]) < min(pred_iv[1], gold_iv[1]):
        inter = text[max(pred_iv[0], gold_iv[0]):min(pred_iv[1], gold_iv[1])]
    spans = [iv for iv in (pred_iv, gold_iv) if iv]
    union = text[min(a for a, _ in spans):max(b for _, b in spans)] if spans else ""
    n_inter, n_union = len(word_tokenize(inter)), len(word_tokenize(union))
    if n_inter == 0 and n_union == 0:
        return 1.0
    return n_inter / n_union


def iou_script(context: str, pred_text: str, gold_text: str, context_tokens: str | None = None) -> float:
    """The authors' IoU (see the module docstring). ``context_tokens`` is ``_script_tokens(context)``,
    passed in to tokenise each document once."""
    text = context_tokens if context_tokens is not None else _script_tokens(context)
    prediction = pred_text.strip()
    score = _script_jaccard(text, gold_text, prediction)
    if score == 0:
        score = _script_jaccard(text, gold_text, prediction[0:-5])
    return score


_ROUGE = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)


def rouge(prediction: str, gold: str) -> dict[str, float]:
    if not prediction.strip() or not gold.strip():
        return {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    return {k: v.fmeasure for k, v in _ROUGE.score(gold, prediction).items()}


def length_bin(n_words: int, edges: tuple[int, ...]) -> str:
    for lo, hi in zip(edges, edges[1:], strict=False):
        if lo <= n_words < hi:
            return f"{lo}-{hi - 1}"
    return f">={edges[-1]}"


def span_scores(predictions: dict[str, dict], dataset: dict) -> dict[str, dict[str, float]]:
    """``{id: {"em", "f1", "iou"}}``: the figures of :func:`evaluate`'s rows that a paired comparison reads
    (``compare``, the calibration), without the script IoU and ROUGE, which were three quarters of its time
    (ROUGE-L's LCS table and NLTK's tokenizer); the same values, in the same question order."""
    offsets_cache: dict[int, list[tuple[int, int]]] = {}
    out = {}
    for ex in iter_examples(dataset):
        pred = predictions.get(ex["id"], {"text": "", "start": 0, "end": 0})
        ctx = ex["context"]
        if id(ctx) not in offsets_cache:
            offsets_cache[id(ctx)] = token_offsets(ctx)
        out[ex["id"]] = {"em": exact_match(pred["text"], ex["gold"]), "f1": f1(pred["text"], ex["gold"]),
                         "iou": iou_positions(ctx, (pred["start"], pred["end"]), ex["gold_span"], offsets_cache[id(ctx)])}
    return out


def evaluate(predictions: dict[str, dict], dataset: dict, answer_edges=(0, 50, 100, 200),
             document_edges=(0, 300, 600, 1000, 2000)) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Aggregate scores and one row per example. ``predictions[id] = {"text", "start", "end"}``;
    a missing prediction counts as the empty answer."""
    rows = []
    offsets_cache: dict[int, list[tuple[int, int]]] = {}
    script_cache: dict[int, str] = {}
    ensure_punkt_data()
    for ex in iter_examples(dataset):
        pred = predictions.get(ex["id"], {"text": "", "start": 0, "end": 0})
        ctx = ex["context"]
        if id(ctx) not in offsets_cache:  # once per document (contexts are shared by their questions)
            offsets_cache[id(ctx)] = token_offsets(ctx)
            script_cache[id(ctx)] = _script_tokens(ctx)
        offsets = offsets_cache[id(ctx)]
        row = {
            "id": ex["id"],
            "em": exact_match(pred["text"], ex["gold"]),
            "f1": f1(pred["text"], ex["gold"]),
            "iou": iou_positions(ctx, (pred["start"], pred["end"]), ex["gold_span"], offsets),
            "iou_script": iou_script(ctx, pred["text"], ex["gold"], script_cache[id(ctx)]),
            **rouge(pred["text"], ex["gold"]),
            "answer_words": len(ex["gold"].split()),
            "document_words": len(offsets),
        }
        row["answer_bin"] = length_bin(row["answer_words"], answer_edges)
        row["document_bin"] = length_bin(row["document_words"], document_edges)
        rows.append(row)
    keys = ("em", "f1", "iou", "iou_script", "rouge1", "rouge2", "rougeL")

    def summary(subset: list[dict]) -> dict[str, float]:
        return {k: round(100 * statistics.fmean(r[k] for r in subset), 2) for k in keys} | {"n": len(subset)}

    result: dict[str, Any] = summary(rows) if rows else {k: 0.0 for k in keys} | {"n": 0}
    for key in ("answer_bin", "document_bin"):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r[key], []).append(r)
        result[f"by_{key.removesuffix('_bin')}_words"] = {b: summary(g) for b, g in sorted(groups.items())}
    return result, rows
