"""Is there anything in a question for a model to learn from? A zero-shot check, with every build.

NLQuAD's questions are a journalist's sub-headings, written for the section under them: "How did we get here?"
heads the history, "Who is ...?" the biography. A build whose headings are not written for their sections
(one template for every section, or a fixed open question) leaves a model only the answer's position, and no
amount of training shows otherwise. This measures it without training anything: a sentence encoder that
reads meaning (the MiniLM the pipeline ships, as a bi-encoder: mean-pooled, normalised, cosine) ranks the answers
of a question's own article, and the check counts how often the question's own answer comes first, against
chance (one over the article's distinct answers), paired per question with articles resampled.

Only articles with two distinct answers or more count (with one, there is nothing to rank). Lexical cues are
measured apart (``pipeline.nlquad.question_cues``); this one is about meaning, the cue the paper's models learn.
"""

from __future__ import annotations

from typing import Any

from pipeline.common.paired import paired_difference
from pipeline.nlquad.clusters import article_clusters
from pipeline.nlquad.squad_format import iter_article_qas

MAX_TOKENS = 256  # MiniLM's training length: longer answers are read from their start
BATCH = 32


def _answer_text(context: str, qa: dict[str, Any]) -> str:
    answer = qa["answers"][0]
    return context[answer["answer_start"]:answer["answer_start"] + len(answer["text"])]


def ranking_items(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """Per question of an article with two distinct answers or more: the question, the article's distinct answer
    texts (in file order) and which of them is its own."""
    by_article: dict[str, list[tuple[str, str]]] = {}
    labels = article_clusters(dataset)  # one entry of ``data`` per article, as the paired intervals group them
    for _, para, qa in iter_article_qas(dataset):
        if qa.get("answers"):
            by_article.setdefault(labels[qa["id"]], []).append((qa["question"], _answer_text(para["context"], qa)))
    items = []
    for article, pairs in by_article.items():
        answers = list(dict.fromkeys(a for _, a in pairs))
        if len(answers) < 2:
            continue
        items += [{"article": article, "question": q, "answers": answers, "own": answers.index(a)} for q, a in pairs]
    return items


def encode(texts: list[str], model_path: str) -> Any:
    """Mean-pooled, L2-normalised sentence vectors (how all-MiniLM-L6-v2 was trained to be used)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModel.from_pretrained(model_path).eval()
    if not texts:
        return torch.empty(0)
    # batched by length (ties in text order), so a batch pads short questions to short questions rather than
    # to a 256-token answer; each text's vector is its own whatever it is batched with, up to float rounding
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=MAX_TOKENS)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
    vectors = torch.empty(len(texts), model.config.hidden_size)
    with torch.no_grad():
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=MAX_TOKENS,
                              return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors[rows] = torch.nn.functional.normalize(pooled, dim=-1)
    return vectors


def answer_ranking(dataset: dict[str, Any], model_name_or_path: str) -> dict[str, Any]:
    """How often each question's own answer ranks first among its article's answers, against chance, in
    points, with a 95% interval resampling articles; ``signal`` when the interval lies above zero."""
    from pipeline.training.model_names import resolve_model_path

    items = ranking_items(dataset)
    if len({i["article"] for i in items}) < 2:
        return {"questions": len(items), "articles": len({i["article"] for i in items}), "signal": None,
                "note": "fewer than two articles with two answers or more: nothing to measure"}
    texts = list(dict.fromkeys([i["question"] for i in items] + [a for i in items for a in i["answers"]]))
    vectors = encode(texts, resolve_model_path(model_name_or_path))
    row = {t: n for n, t in enumerate(texts)}
    hits, chance = [], []
    for item in items:
        scores = [float(vectors[row[item["question"]]] @ vectors[row[a]]) for a in item["answers"]]
        best = max(range(len(scores)), key=lambda k: (scores[k], -k))  # ties to the earlier answer
        hits.append(1.0 if best == item["own"] else 0.0)
        chance.append(1.0 / len(item["answers"]))
    pair = paired_difference(hits, chance, clusters=[i["article"] for i in items], unit="article")
    return {"model": model_name_or_path, "questions": len(items), "articles": len({i["article"] for i in items}),
            "top1_percent": pair["system_mean"], "chance_percent": pair["baseline_mean"], "difference": pair["difference"],
            "ci95": pair["ci95"], "signal": pair["ci95"][0] > 0}
