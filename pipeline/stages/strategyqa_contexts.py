"""``strategyqa_contexts``: paragraphs for the IR-Q, IR-D and ORA-P settings, for train and eval questions.

Training questions are retrieved with their gold decompositions (as in the paper); eval questions with gold or
predicted ones (``strategyqa_qa.decompositions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.headline import percent, write_headline
from pipeline.common.layout import PATHS
from pipeline.common.manifest import read_manifest, source_path
from pipeline.common.files import write_json
from pipeline.search.factory import make_backend
from pipeline.strategyqa.answering import gold_ids, read_paragraphs
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.strategyqa.retrieval import mean_recall, retrieve

if TYPE_CHECKING:
    from pipeline.params import Params

# Geva et al. (2021): BM25 over 36.6M paragraphs of the 2020-05-11 English Wikipedia, dev Recall@10.
PAPER = {"corpus_paragraphs": 36_600_000, "recall@10": {"ir_q": 0.174, "ir_d": 0.195}}
NOTE = ("recall matches StrategyQA's paragraph ids ('{title}-{index}'). The corpus holds the official evidence texts "
        "(wiki.strategyqa_evidence) among the offline Wikipedia paragraphs as distractors: far fewer distractors than "
        "the paper's 36.6M paragraphs, so recall here is an upper bound on what the same retriever gets on the full "
        "corpus")


def _corpus_size() -> int | None:
    manifest = PATHS.index.dir / "manifest.json"
    return json.loads(manifest.read_text(encoding="utf-8")).get("documents") if manifest.exists() else None


def _gold_paragraphs(source: str, train: list, evaluation: list) -> tuple[dict, dict]:
    """ORA-P's texts for every evidence id, and what was found. A source that holds none of a part's evidence
    ids is the wrong file (ORA-P would train or score on nothing): an error naming it."""
    wanted = {pid for q in train + evaluation for pid in gold_ids(q)}
    gold = read_paragraphs(source, wanted)
    with_gold = {part: sum(any(i in gold for i in gold_ids(q)) for q in qs)
                 for part, qs in (("train", train), ("eval", evaluation))}
    if not with_gold["train"] or not with_gold["eval"]:
        raise ValueError(f"{source}: none of the StrategyQA evidence paragraph ids of the "
                         f"{'train' if not with_gold['train'] else 'eval'} questions are in it (ORA-P needs the "
                         "texts of StrategyQA's 2020-05-11 paragraphs: strategyqa_qa.gold_paragraphs or "
                         "benchmark_sources.strategyqa_paragraphs)")
    ora = {"source": source, "gold_ids": len(wanted), "found": len(gold), "questions_with_gold": with_gold}
    return gold, ora


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("strategyqa", "retrieval_ir_q"), ("strategyqa", "retrieval_ir_d")]


def run(params: Params) -> dict:
    p = params.strategyqa_qa
    manifest = read_manifest()
    train = load_questions(source_path(manifest, "strategyqa_train"))
    evaluation = load_questions(source_path(manifest, "strategyqa_eval"))
    backend = make_backend(params.search, PATHS.index.dir / "tantivy")
    eval_decomps = load_predicted_decompositions(p.predictions) if p.decompositions == "predicted" else None
    runs = {"train": retrieve(backend, train, p.k), "eval": retrieve(backend, evaluation, p.k, eval_decomps)}
    ranked = {setting: {part: {qid: list(hits) for qid, hits in runs[part][run].items()} for part in runs}
              for setting, run in (("ir_q", "question"), ("ir_d", "decomposition"))}
    needed = {pid for setting in ranked.values() for part in setting.values() for ids in part.values() for pid in ids}
    paragraphs = read_paragraphs(PATHS.wiki_paragraphs.paragraphs, needed)
    gold, ora = _gold_paragraphs(p.gold_paragraphs or source_path(manifest, "strategyqa_paragraphs"), train, evaluation)
    write_json(PATHS.strategyqa_contexts.contexts,
               {"ranked": ranked, "paragraphs": paragraphs, "gold_paragraphs": gold, "ora_p": ora}, indent=None)
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
    for (track, system), run in zip(headlines(), ("question", "decomposition"), strict=True):  # R@10 at any k >= 10
        write_headline(track, system,
                       {"R@10": percent(mean_recall(evaluation, runs["eval"][run], 10)) if p.k >= 10 else None})
    return metrics
