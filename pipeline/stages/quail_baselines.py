"""``quail_baselines``: the QuAIL paper's heuristic and word-vector baselines (random, LongChoice, AvgCos, LSTM,
PMI, IR) on dev and the challenge set, beside the paper's Table 3 figures; and the options-only logit, a control
fit on the training texts (``pipeline.quail.options_features``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.headline import write_headline
from pipeline.common.files import atomic_output, write_json
from pipeline.quail.baselines import BaselineInputs, baselines
from pipeline.quail.heuristics import unanswerable_share
from pipeline.quail.report import (
    accuracy_table,
    deviations,
    load_reference,
    markdown_tables,
    paper_rows,
)
from pipeline.quail import options_features
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.quail.systems import HEURISTIC_BASELINES
from pipeline.quail.vector_baselines import load_word_vectors
from pipeline.search.tantivy_backend import TantivyBackend

if TYPE_CHECKING:
    from pipeline.params import Params

SYSTEMS = HEURISTIC_BASELINES


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("quail", system) for system in SYSTEMS]


def _sentence_index(path: Path) -> TantivyBackend:
    # a throwaway index per passage: the embedded backend whatever search.backend says (same analysis, BM25)
    return TantivyBackend(path, heap_bytes=15_000_000)


def run(params: Params) -> dict:
    p = params.quail
    sets, train = quail_sets(p.train_share, p.seed, p.exclude_from_heldout)
    paper_tables = source_path("quail_paper_tables")
    reference = load_reference(paper_tables)
    share = unanswerable_share(train)
    vectors = load_word_vectors(p.word_vectors)
    weights = options_features.fit(train)
    inputs = BaselineInputs(p, share, vectors, weights, _sentence_index)
    runners = baselines()  # every declared baseline (pipeline.quail.systems), in its order
    results, predictions = {}, {}
    for name, questions in sets.items():
        preds = {system: run(questions, inputs) for system, run in runners.items()}
        predictions[name] = preds
        results[name] = {system: accuracy_table(questions, pr) for system, pr in preds.items()}
        print(name, {s: r["all"] for s, r in results[name].items()})
    write_json(PATHS.quail_baselines.predictions, predictions, indent=None)
    with atomic_output(PATHS.quail_baselines.tables) as fh:
        fh.write(markdown_tables(results, reference, "QuAIL heuristic baselines beside Rogers et al. (2020)"))
        fh.write(f"\nOurs: QuAIL dev ({len(sets['dev'])} questions) and the challenge set; the paper's Table 3 is its "
                 "test split (same size; its key is not public). LongChoice answers 'not enough information' with "
                 f"p = {share:.4f}, the unanswerable share of the training texts (dev texts: no train set offline). "
                 f"AvgCos and LSTM use {vectors.name} word vectors in place of FastText CommonCrawl 300-d.\n")
    metrics: dict = {"unanswerable_share_used": round(share, 4), "word_vectors": vectors.name,
                     "options_features_weights": weights}
    for name, systems in results.items():
        paper = paper_rows(reference, name)
        metrics[name] = {s: {**t, **({"paper": paper[s]} if s in paper else {})} for s, t in systems.items()}
        metrics[name].update({s: {"paper": row} for s, row in paper.items() if s not in systems})
    # the same systems on the held-out dev texts the multiple-choice models are scored on, for a like-for-like
    # comparison with intervals (the heuristics train on nothing, so the whole-dev figure estimates the same)
    heldout = heldout_dev(sets, train)
    metrics["dev_heldout"] = {s: accuracy_table(heldout, predictions["dev"][s]) for s in SYSTEMS}
    metrics["deviations_10pt"] = len(deviations(results, reference))
    metrics["paper_figures"] = paper_tables
    write_json(PATHS.quail_baselines.report, metrics)
    # acc: the held-out dev texts, as in the models' rows of `dvc metrics show` (like with like); the whole dev set
    # (the baselines train on nothing, so it is a fair figure too) is in the report and its tables, under "dev"
    for track, system in headlines():
        write_headline(track, system, {"acc": metrics["dev_heldout"][system]["all"],
                                         "acc_challenge": results.get("challenge", {}).get(system, {}).get("all")})
    return metrics

