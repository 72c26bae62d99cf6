"""``strategyqa_contexts``: paragraphs for the IR-Q, IR-D, IR-ORA-D and ORA-P settings, for train and eval questions.

Training questions are retrieved with their question (IR-Q) and their gold decompositions (IR-D and IR-ORA-D, as
in the paper); eval questions with their question, the predicted decompositions (IR-D) and the gold ones
(IR-ORA-D). The corpus holds StrategyQA's evidence paragraphs among far fewer distractors than the paper's 36.6M,
so the report and every Recall@10 headline carry the corpus's gold share beside the paper's figure.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.headline import percent, write_headline
from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.files import write_json
from pipeline.search.factory import make_backend
from pipeline.strategyqa.answering import RETRIEVED, gold_ids, read_paragraphs
from pipeline.strategyqa.data import load_predicted_decompositions, load_questions
from pipeline.strategyqa.retrieval import mean_recall, retrieve

if TYPE_CHECKING:
    from pipeline.params import Params

# Geva et al. (2021): BM25 over 36.6M paragraphs of the 2020-05-11 English Wikipedia, dev Recall@10 by the question
# and by the gold decomposition steps (the figures this project carried; no IR-D recall is recorded here)
# recall in percent, as `dvc metrics show` shows every figure (the paper's Table 4: 0.174 and 0.195)
# Geva et al. 2021, Table 9: BM25 Recall@10 on the test set, over 36.6M Wikipedia paragraphs, for each way of
# querying (the question; the predicted decomposition; the gold decomposition)
PAPER = {"corpus_paragraphs": 36_600_000, "set": "test", "source": "Geva et al. 2021, Table 9",
         "recall@10": {"ir_q": 17.4, "ir_d": 19.5, "ir_ora_d": 28.2}}
NOTE = ("recall matches StrategyQA's paragraph ids ('{title}-{index}'). The corpus holds the official evidence texts "
        "(wiki.strategyqa_evidence) among the offline Wikipedia paragraphs as distractors: gold_share of the corpus is "
        "evidence, against about 0.03% in the paper's 36.6M paragraphs, so recall here is an upper bound on what the "
        "same retriever gets on the full corpus, not a reproduction of the paper's figure")
# which run of which retrieval gives each setting's paragraphs: (train questions, eval questions)
RUNS = {"ir_q": (("gold", "question"), ("gold", "question")),
        "ir_d": (("gold", "decomposition"), ("predicted", "decomposition")),
        "ir_ora_d": (("gold", "decomposition"), ("gold", "decomposition"))}


def _corpus_size() -> int:
    """Documents in the index (its manifest), or the paragraphs it is built from when it has none."""
    manifest = PATHS.index.dir / "manifest.json"
    if manifest.exists():
        return int(json.loads(manifest.read_text(encoding="utf-8"))["documents"])
    with PATHS.wiki_paragraphs.paragraphs.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


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
    return [*(("strategyqa", f"retrieval_{setting}") for setting in RETRIEVED),
            *(("strategyqa", f"paper_{setting}") for setting in PAPER["recall@10"])]


def _predicted(path: str, evaluation: list) -> dict[str, list[str]]:
    """IR-D's steps for every eval question; a question without one would silently get no context."""
    predicted = load_predicted_decompositions(path)
    missing = [q.qid for q in evaluation if not predicted.get(q.qid)]
    if missing:
        raise ValueError(f"{path}: no predicted decomposition for {len(missing)} of the {len(evaluation)} eval "
                         f"questions (e.g. {missing[:3]}); IR-D needs one per question (strategyqa_qa."
                         "predicted_decompositions)")
    return predicted


def gold_share(corpus_ids_gold: int, corpus_paragraphs: int) -> float | None:
    """The share of the indexed corpus that is StrategyQA evidence: what makes Recall@10 easy here."""
    return round(corpus_ids_gold / corpus_paragraphs, 4) if corpus_paragraphs else None


def run(params: Params) -> dict:
    p = params.strategyqa_qa
    train = load_questions(source_path("strategyqa_train"))
    evaluation = load_questions(source_path("strategyqa_eval"))
    backend = make_backend(params.search, PATHS.index.dir / "tantivy")
    runs = {"train": {"gold": retrieve(backend, train, p.k)},
            "eval": {"gold": retrieve(backend, evaluation, p.k),
                     "predicted": retrieve(backend, evaluation, p.k, _predicted(p.predicted_decompositions, evaluation))}}
    chosen = {setting: {part: runs[part][source][run] for part, (source, run) in zip(("train", "eval"), RUNS[setting])}
              for setting in RETRIEVED}
    ranked = {setting: {part: {qid: list(hits) for qid, hits in chosen[setting][part].items()} for part in ("train", "eval")}
              for setting in RETRIEVED}
    needed = {pid for setting in ranked.values() for part in setting.values() for ids in part.values() for pid in ids}
    gold, ora = _gold_paragraphs(p.gold_paragraphs or source_path("strategyqa_paragraphs"), train, evaluation)
    # one pass over the corpus for both: the retrieved paragraphs' texts, and which evidence ids it holds
    found = read_paragraphs(PATHS.wiki_paragraphs.paragraphs, needed | gold.keys())
    paragraphs = {pid: found[pid] for pid in needed & found.keys()}
    write_json(PATHS.strategyqa_contexts.contexts,
               {"ranked": ranked, "paragraphs": paragraphs, "gold_paragraphs": gold, "ora_p": ora}, indent=None)
    corpus = _corpus_size()
    in_corpus = len(gold.keys() & found.keys())
    recall = {s: mean_recall(evaluation, chosen[s]["eval"], p.k) for s in RETRIEVED}
    metrics = {
        "train_questions": len(train), "eval_questions": len(evaluation), "k": p.k,
        "eval_decompositions": {"ir_d": p.predicted_decompositions, "ir_ora_d": "gold"},
        "backend": params.search.backend,
        f"eval_recall@{p.k}": {s: percent(r) for s, r in recall.items()},  # percent, as in metrics/
        "eval_without_context": {s: sum(not ranked[s]["eval"].get(q.qid) for q in evaluation) for s in ranked},
        "ora_p": {k: v for k, v in ora.items() if k != "source"},
        "corpus_paragraphs": corpus,
        "corpus_gold_paragraphs": in_corpus,
        "gold_share": gold_share(in_corpus, corpus),
        "paper": PAPER,
        "note": NOTE,
    }
    write_json(PATHS.strategyqa_contexts.report, metrics)
    # `dvc metrics show` has no column to spare (160): the paper's Recall@10 goes beside ours as rows of its own,
    # the gold share in the report, the README and the model cards
    for setting in RETRIEVED:  # R@10 at any k >= 10
        write_headline("strategyqa", f"retrieval_{setting}",
                       {"R@10": percent(mean_recall(evaluation, chosen[setting]["eval"], 10)) if p.k >= 10 else None})
    for setting, figure in PAPER["recall@10"].items():
        write_headline("strategyqa", f"paper_{setting}", {"R@10": figure})
    return metrics
