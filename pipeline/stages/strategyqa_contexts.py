"""``strategyqa_contexts``: paragraphs for the IR-Q, IR-D and ORA-P settings, for train and eval questions.

Training questions are retrieved with their gold decompositions (as in the paper); eval questions with gold or
predicted ones (``strategyqa_qa.decompositions``).
"""

from __future__ import annotations

import json

from pipeline.common.headline import percent, write_headline
from pipeline.common.layout import PATHS
from pipeline.common.manifest import read_manifest, skipped
from pipeline.common.runtime import get_logger, write_json
from pipeline.params import Params
from pipeline.search.factory import make_backend
from pipeline.strategyqa.answering import gold_ids, read_paragraphs
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.strategyqa.retrieval import mean_recall, retrieve

# Geva et al. (2021): BM25 over 36.6M paragraphs of the 2020-05-11 English Wikipedia, dev Recall@10.
PAPER = {"corpus_paragraphs": 36_600_000, "recall@10": {"ir_q": 0.174, "ir_d": 0.195}}
NOTE = ("recall matches StrategyQA's paragraph ids ('{title}-{index}'). The corpus holds the official evidence texts "
        "(wiki.strategyqa_evidence) among the offline Wikipedia paragraphs as distractors: far fewer distractors than "
        "the paper's 36.6M paragraphs, so recall here is an upper bound on what the same retriever gets on the full "
        "corpus")


def _corpus_size() -> int | None:
    manifest = PATHS.index.dir / "manifest.json"
    return json.loads(manifest.read_text(encoding="utf-8")).get("documents") if manifest.exists() else None


def _gold_paragraphs(source: str | None, manifest: dict, train: list, evaluation: list) -> tuple[dict, dict]:
    """ORA-P's texts for every evidence id, and what was found (or why ORA-P is skipped)."""
    if not source:
        return {}, {"skipped": "no paragraph texts for StrategyQA's evidence ids (its 2020-05-11 Wikipedia "
                               "paragraphs): " + skipped(manifest, "strategyqa_paragraphs")}
    wanted = {pid for q in train + evaluation for pid in gold_ids(q)}
    gold = read_paragraphs(source, wanted)
    with_gold = {part: sum(any(i in gold for i in gold_ids(q)) for q in qs)
                 for part, qs in (("train", train), ("eval", evaluation))}
    ora = {"source": source, "gold_ids": len(wanted), "found": len(gold), "questions_with_gold": with_gold}
    if not with_gold["train"] or not with_gold["eval"]:
        ora["skipped"] = f"none of the evidence paragraph ids were found in {source}"
    return gold, ora


def run(params: Params) -> dict:
    p = params.strategyqa_qa
    manifest = read_manifest()
    reason = skipped(manifest, "strategyqa_train", "strategyqa_eval")
    if reason:
        get_logger().warning("StrategyQA answering skipped: %s", reason)
        write_json(PATHS.strategyqa_contexts.contexts, {"skipped": reason})
        write_json(PATHS.strategyqa_contexts.report, {"skipped": reason})
        for setting in ("ir_q", "ir_d"):
            write_headline("strategyqa", f"retrieval_{setting}", {})
        return {"skipped": reason}
    train = load_questions(manifest["strategyqa_train"]["path"])
    evaluation = load_questions(manifest["strategyqa_eval"]["path"])
    backend = make_backend(params.search, PATHS.index.dir / "tantivy")
    eval_decomps = load_predicted_decompositions(p.predictions) if p.decompositions == "predicted" else None
    runs = {"train": retrieve(backend, train, p.k), "eval": retrieve(backend, evaluation, p.k, eval_decomps)}
    ranked = {setting: {part: {qid: list(hits) for qid, hits in runs[part][run].items()} for part in runs}
              for setting, run in (("ir_q", "question"), ("ir_d", "decomposition"))}
    needed = {pid for setting in ranked.values() for part in setting.values() for ids in part.values() for pid in ids}
    paragraphs = read_paragraphs(PATHS.wiki_paragraphs.paragraphs, needed)
    source = p.gold_paragraphs or (None if skipped(manifest, "strategyqa_paragraphs")
                                   else manifest["strategyqa_paragraphs"]["path"])
    gold, ora = _gold_paragraphs(source, manifest, train, evaluation)
    write_json(PATHS.strategyqa_contexts.contexts, {"ranked": ranked, "paragraphs": paragraphs, "gold_paragraphs": gold, "ora_p": ora},
               indent=None)
    metrics = {
        "train_questions": len(train), "eval_questions": len(evaluation), "k": p.k,
        "eval_decompositions": p.decompositions, "backend": params.search.backend,
        f"eval_recall@{p.k}": {s: round(mean_recall(evaluation, runs["eval"][r], p.k), 4)
                               for s, r in (("ir_q", "question"), ("ir_d", "decomposition"))},
        "eval_without_context": {s: sum(not ranked[s]["eval"].get(q.qid) for q in evaluation) for s in ranked},
        "ora_p": {k: v for k, v in ora.items() if k != "source"},
        "corpus_paragraphs": _corpus_size(),
        "paper": PAPER,
        "note": NOTE,
    }
    write_json(PATHS.strategyqa_contexts.report, metrics)
    for setting, run in (("ir_q", "question"), ("ir_d", "decomposition")):  # R@10 whatever k is (k >= 10)
        write_headline("strategyqa", f"retrieval_{setting}",
                       {"R@10": percent(mean_recall(evaluation, runs["eval"][run], 10)) if p.k >= 10 else None})
    return metrics
